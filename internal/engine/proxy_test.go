package engine_test

import (
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// connectProxy is a small forward proxy: CONNECT opens a tunnel, an
// absolute-form request is forwarded. It requires Basic credentials
// ("plateau:secret") and counts tunnels and forwarded requests.
type connectProxy struct {
	url                        string
	tunnels, forwarded, denied atomic.Int64
}

func newConnectProxy(t *testing.T) *connectProxy {
	p := &connectProxy{}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("plateau:secret"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect {
			if r.Header.Get("Proxy-Authorization") != want {
				p.denied.Add(1)
				w.WriteHeader(http.StatusProxyAuthRequired)
				return
			}
			up, err := net.Dial("tcp", r.Host)
			if err != nil {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			p.tunnels.Add(1)
			w.WriteHeader(http.StatusOK)
			nc, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				up.Close()
				return
			}
			if n := brw.Reader.Buffered(); n > 0 {
				b, _ := brw.Reader.Peek(n)
				up.Write(b)
			}
			go func() { io.Copy(up, nc); up.Close() }()
			io.Copy(nc, up)
			nc.Close()
			return
		}
		if !r.URL.IsAbs() {
			http.Error(w, "not a proxy request", http.StatusBadRequest)
			return
		}
		p.forwarded.Add(1)
		r.RequestURI = ""
		resp, err := http.DefaultTransport.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// Through http.proxy: HTTPS requests (HTTP/1.1 and HTTP/2) go through
// CONNECT tunnels with the proxy's credentials, plain HTTP requests are
// forwarded in absolute form; the servers see every request.
func TestHTTPProxyConnect(t *testing.T) {
	proxy := newConnectProxy(t)
	var tlsSeen, plainSeen atomic.Int64
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tlsSeen.Add(1)
		io.WriteString(w, r.Proto)
	}))
	tlsSrv.EnableHTTP2 = true
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainSeen.Add(1)
		io.WriteString(w, "plain")
	}))
	defer plain.Close()

	plan := `name: proxy
target: https://127.0.0.1:1
http:
  insecure: true
  proxy: ` + strings.Replace(proxy.url, "http://", "http://plateau:secret@", 1) + `
workloads:
  w:
    scenario:
      - request: {name: tls h1, url: /a, check: {body: HTTP/1.1}}
      - request: {name: tls h2, url: /b, http_version: "2", check: {body: HTTP/2.0}}
      - request: {name: plain, url: "` + plain.URL + `/c", check: {body: plain}}
    load: {users: 2, iterations: 3}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, tlsSrv.URL)
	for _, label := range []string{"tls h1", "tls h2", "plain"} {
		if n, errs := labelAgg(d, label); n != 6 || errs != 0 {
			t.Fatalf("%s: %d samples, %d errors; want 6 and 0", label, n, errs)
		}
	}
	if tlsSeen.Load() != 12 || plainSeen.Load() != 6 || proxy.forwarded.Load() != 6 {
		t.Fatalf("TLS server saw %d, plain server %d, proxy forwarded %d; want 12, 6, 6",
			tlsSeen.Load(), plainSeen.Load(), proxy.forwarded.Load())
	}
	// Kept-alive connections: one tunnel per user and protocol at most.
	if n := proxy.tunnels.Load(); n < 2 || n > 4 {
		t.Fatalf("proxy opened %d tunnels; want 2..4 (kept alive per user and protocol)", n)
	}

	// Wrong credentials: the proxy refuses the tunnel, the request fails.
	bad := strings.Replace(plan, "plateau:secret@", "plateau:wrong@", 1)
	d, _, _ = runPlan(t, ctx, bad, tlsSrv.URL)
	if n, errs := labelAgg(d, "tls h1"); n != 6 || errs != 6 {
		t.Fatalf("wrong proxy password: %d samples, %d errors; want 6 and 6", n, errs)
	}
	if proxy.denied.Load() < 6 {
		t.Fatalf("proxy denied %d CONNECTs; want at least 6", proxy.denied.Load())
	}
}
