package engine_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/nginxtest"
)

// startNginxH2 runs Debian's nginx on loopback serving HTTP/2 over TLS
// (and HTTP/1.1 to clients that do not offer h2), logging the protocol of
// each request. It returns the https base URL and the access log's path;
// stop ends nginx (which flushes the log).
func startNginxH2(t *testing.T) (base, logPath string, stop func()) {
	t.Helper()
	logPath = filepath.Join(t.TempDir(), "access.log")
	s := nginxtest.Start(t, nginxtest.Config{TLS: true,
		HTTP:   `log_format proto '$server_protocol $request_method $request_uri $status $connection';`,
		Server: fmt.Sprintf("access_log %s proto;\n    location / { return 200 'hello from nginx'; }", logPath)})
	return "https://" + s.Addr, logPath, s.Stop
}

const h2Plan = `name: h2
target: https://127.0.0.1:1
http:
  version: "2"
  insecure: true
  connections: shared
  max_concurrent_streams: 3
workloads:
  w:
    scenario:
      - request:
          name: over h2
          url: /h2?u=${__user}
          check: {body: hello from nginx}
      - request:
          name: over h1
          url: /h1
          http_version: "1.1"
    load: {users: 6, iterations: 5}
`

// The engine's HTTP/2 requests reach nginx as HTTP/2.0 — nginx's own log
// says so, and counts them — while a request with http_version 1.1 in the
// same plan still goes as HTTP/1.1; the 6 users share connections of at
// most 3 streams.
func TestHTTP2AgainstNginx(t *testing.T) {
	base, logPath, stop := startNginxH2(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, h2Plan, base)
	stop()
	h2n, h2err := labelAgg(d, "over h2")
	h1n, h1err := labelAgg(d, "over h1")
	if h2n != 30 || h1n != 30 || h2err != 0 || h1err != 0 {
		t.Fatalf("samples: h2 %d (%d errors), h1 %d (%d errors); want 30 and 30 without errors", h2n, h2err, h1n, h1err)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	byProto := map[string]int{}
	h2conns := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || f[3] != "200" {
			t.Fatalf("unexpected log line %q", line)
		}
		path := f[2][:3]
		byProto[f[0]+" "+path]++
		if f[0] == "HTTP/2.0" {
			h2conns[f[4]] = true
		}
	}
	if byProto["HTTP/2.0 /h2"] != 30 || byProto["HTTP/1.1 /h1"] != 30 || len(byProto) != 2 {
		t.Fatalf("nginx logged %v; want 30 HTTP/2.0 /h2 and 30 HTTP/1.1 /h1", byProto)
	}
	// 6 users, at most 3 streams a connection: at least 2 connections,
	// and far fewer than one per request.
	if len(h2conns) < 2 || len(h2conns) > 12 {
		t.Fatalf("HTTP/2 requests used %d connections; want 2..12", len(h2conns))
	}
}

// A plan with version 2 against a Go h2c server (cleartext, prior
// knowledge): every request arrives as HTTP/2.0, and a stream the server
// resets is a sample of class h2_stream_reset.
func TestH2CPlan(t *testing.T) {
	srv := newH2CTestServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, `name: h2c
target: http://127.0.0.1:1
http: {version: "2"}
workloads:
  w:
    scenario:
      - request: {name: ok, url: /ok}
      - request: {name: reset, url: /reset}
    load: {users: 2, iterations: 4}
`, srv.url)
	okN, okErr := labelAgg(d, "ok")
	rN, rErr := labelAgg(d, "reset")
	if okN != 8 || okErr != 0 || rN != 8 || rErr != 8 {
		t.Fatalf("ok %d/%d errors, reset %d/%d errors; want 8/0 and 8/8", okN, okErr, rN, rErr)
	}
	resets := int64(0)
	for k, a := range d.Run {
		if k.Label != "reset" {
			continue
		}
		for ek, n := range a.Errs {
			if ek.Class == core.ErrH2StreamReset {
				resets += n
			}
		}
	}
	if resets != 8 {
		t.Fatalf("h2_stream_reset samples: %d, want 8", resets)
	}
	if got := srv.h2.Load(); got != 16 || srv.other.Load() != 0 {
		t.Fatalf("server saw %d HTTP/2 and %d other requests; want 16 and 0", got, srv.other.Load())
	}
}

type h2cTestServer struct {
	url       string
	h2, other atomic.Int64
}

func newH2CTestServer(t *testing.T) *h2cTestServer {
	s := &h2cTestServer{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ok", func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		io.WriteString(w, "ok")
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: mux, Protocols: &p, ErrorLog: log.New(io.Discard, "", 0)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.url = "http://" + ln.Addr().String()
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return s
}

func (s *h2cTestServer) count(r *http.Request) {
	if r.ProtoMajor == 2 {
		s.h2.Add(1)
	} else {
		s.other.Add(1)
	}
}
