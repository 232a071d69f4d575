package h2

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/nginxtest"
)

// goServer is a Go h2c (prior knowledge) server with handlers for the
// connection tests.
func goServer(t *testing.T, mux *http.ServeMux) string {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: mux, Protocols: &p}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// Request bodies larger than the server's flow-control windows (Go's
// server grants 1 MiB per stream) are sent as WINDOW_UPDATEs arrive, from
// a byte slice and from a Stream; a large response body is counted whole
// and kept up to MaxBody.
func TestFlowControlLargeBodies(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	})
	big := bytes.Repeat([]byte("0123456789abcdef"), 5<<20/16)
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(big) })
	base := goServer(t, mux)
	p := NewPool(Config{MaxBody: 100})
	defer p.Close()
	c := NewClient(p, nil)
	var res httpc.Result

	body := bytes.Repeat([]byte("plateau "), 3<<20/8)
	sum := sha256.Sum256(body)
	want := fmt.Sprintf("%d %s", len(body), hex.EncodeToString(sum[:]))
	if err := c.Do(context.Background(), &httpc.Request{Method: "POST", URL: base + "/echo", Body: body}, &res); err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != want {
		t.Fatalf("slice body: server got %q, want %q", res.Body, want)
	}
	file := filepath.Join(t.TempDir(), "body")
	if err := os.WriteFile(file, body, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(context.Background(), &httpc.Request{Method: "PUT", URL: base + "/echo", Stream: fileStream(file)}, &res); err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != want {
		t.Fatalf("stream body: server got %q, want %q", res.Body, want)
	}
	if err := c.Do(context.Background(), &httpc.Request{URL: base + "/big"}, &res); err != nil {
		t.Fatal(err)
	}
	if res.BodySize != int64(len(big)) || !bytes.Equal(res.Body, big[:100]) || res.BytesRecv < res.BodySize {
		t.Fatalf("download: size %d (want %d), kept %q, bytes received %d", res.BodySize, len(big), res.Body, res.BytesRecv)
	}
	if p.Conns() != 1 || !res.Reused {
		t.Fatalf("%d connections, reused %v; want one connection for all", p.Conns(), res.Reused)
	}
}

type fileStream string

func (f fileStream) Size() (int64, error) {
	st, err := os.Stat(string(f))
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

func (f fileStream) WriteTo(w io.Writer) (int64, error) {
	fh, err := os.Open(string(f))
	if err != nil {
		return 0, err
	}
	defer fh.Close()
	return io.Copy(w, fh)
}

// A request that times out is a timeout sample; its stream is reset (the
// server sees the request cancelled) and the connection carries on.
func TestTimeoutResetsStream(t *testing.T) {
	var cancelled atomic.Int64
	release := make(chan struct{})
	defer close(release)
	mux := http.NewServeMux()
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			cancelled.Add(1)
		case <-release:
		}
	})
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	base := goServer(t, mux)
	p := NewPool(Config{MaxBody: 64})
	defer p.Close()
	c := NewClient(p, nil)
	var res httpc.Result
	err := c.Do(context.Background(), &httpc.Request{URL: base + "/hold", Timeout: 100 * time.Millisecond}, &res)
	if err == nil || res.Class != core.ErrTimeout || res.Total < 100*time.Millisecond {
		t.Fatalf("got %v class %v after %v, want a timeout after 100ms", err, res.Class, res.Total)
	}
	if err := c.Do(context.Background(), &httpc.Request{URL: base + "/hello"}, &res); err != nil || string(res.Body) != "hello" || !res.Reused {
		t.Fatalf("after the timeout: %v %q reused=%v", err, res.Body, res.Reused)
	}
	for deadline := time.Now().Add(2 * time.Second); cancelled.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if cancelled.Load() != 1 {
		t.Fatal("the server never saw the timed-out stream reset")
	}
	// A cancelled context ends a waiting request too (class other: the
	// run stopped).
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	if err := c.Do(ctx, &httpc.Request{URL: base + "/hold"}, &res); err == nil || res.Class != core.ErrOther {
		t.Fatalf("cancelled: %v class %v", err, res.Class)
	}
}

// Redirects are followed over HTTP/2 (303 turns a POST into a GET), and
// cookies set by a response go into the user's jar and back to the server.
func TestRedirectsAndCookies(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cr3t", Path: "/"})
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("/home", func(w http.ResponseWriter, r *http.Request) {
		ck, _ := r.Cookie("session")
		v := ""
		if ck != nil {
			v = ck.Value
		}
		fmt.Fprintf(w, "%s %s session=%s", r.Method, r.Proto, v)
	})
	base := goServer(t, mux)
	jar, _ := cookiejar.New(nil)
	p := NewPool(Config{MaxBody: 256, FollowRedirects: 3})
	defer p.Close()
	c := NewClient(p, jar)
	var res httpc.Result
	if err := c.Do(context.Background(), &httpc.Request{Method: "POST", URL: base + "/login", Body: []byte("u=a")}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Status != 200 || res.Redirects != 1 || res.URL != base+"/home" || string(res.Body) != "GET HTTP/2.0 session=s3cr3t" {
		t.Fatalf("got %d after %d redirects at %s: %q", res.Status, res.Redirects, res.URL, res.Body)
	}
	// Without redirects the 303 itself is the result.
	if err := c.Do(context.Background(), &httpc.Request{URL: base + "/login", Redirects: -1}, &res); err != nil || res.Status != 303 || res.Header("location") != "/home" {
		t.Fatalf("not followed: %v %d location %q", err, res.Status, res.Header("location"))
	}
}

// nginx ends an HTTP/2 connection with GOAWAY after keepalive_requests
// requests; streams it did not take are sent again on a new connection, so
// every request succeeds, and no connection carries more than the limit.
func TestGoAwayFromNginx(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "access.log")
	s := nginxtest.Start(t, nginxtest.Config{H2C: true,
		HTTP:   "log_format c '$connection $server_protocol';\n  keepalive_requests 25;",
		Server: fmt.Sprintf("access_log %s c;\n    location / { return 200 'ok'; }", logPath)})
	p := NewPool(Config{MaxConcurrentStreams: 20, MaxBody: 16})
	const users, each = 20, 15
	var wg sync.WaitGroup
	var failed, retried atomic.Int64
	for range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := NewClient(p, nil)
			var res httpc.Result
			for range each {
				if err := c.Do(context.Background(), &httpc.Request{URL: "http://" + s.Addr + "/"}, &res); err != nil || res.Status != 200 {
					failed.Add(1)
					t.Errorf("request failed: %v (class %v)", err, res.Class)
				}
				if res.Retried {
					retried.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	p.Close()
	s.Stop()
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	perConn := map[string]int{}
	lines := strings.Fields(string(log))
	for i := 0; i+1 < len(lines); i += 2 {
		if lines[i+1] != "HTTP/2.0" {
			t.Fatalf("nginx logged %s", lines[i+1])
		}
		perConn[lines[i]]++
	}
	total := 0
	for conn, n := range perConn {
		if n > 25 {
			t.Errorf("connection %s carried %d requests, over keepalive_requests 25", conn, n)
		}
		total += n
	}
	if total != users*each || failed.Load() != 0 || len(perConn) < users*each/25 {
		t.Fatalf("nginx served %d requests on %d connections (%d failed, %d retried); want %d on at least %d",
			total, len(perConn), failed.Load(), retried.Load(), users*each, users*each/25)
	}
	t.Logf("%d requests on %d connections, %d sent again after GOAWAY or REFUSED_STREAM", total, len(perConn), retried.Load())
}

// The HTTP/2 request path allocates only inside golang.org/x/net: its
// HPACK decoder makes a string of each literal response field it decodes
// (nginx sends server, date and content-type as literals) and its Framer a
// HEADERS frame (and an RST_STREAM frame for the POST, which nginx
// answers without reading its body and then resets with NO_ERROR).
// Nothing of plateau's own: no request, header map, context, timer or
// response object per request.
func TestSteadyStateAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("measures allocations (not under -short or -race)")
	}
	url := startNginx(t, false)
	p := NewPool(Config{MaxBody: 64})
	defer p.Close()
	c := NewClient(p, nil)
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tt := range []struct {
		req  httpc.Request
		xnet float64 // 3 HPACK strings + 1 HEADERS frame (+ 1 RST_STREAM), see above
	}{
		{httpc.Request{URL: url}, 4},
		{httpc.Request{URL: url + "x?y=1", Header: []httpc.Header{{Name: "Accept", Value: "*/*"}, {Name: "Authorization", Value: "Bearer t"}}}, 4},
		{httpc.Request{Method: "POST", URL: url, Body: []byte(`{"k":"v"}`)}, 5},
	} {
		req := tt.req
		var res httpc.Result
		for range 3 {
			if err := c.Do(runCtx, &req, &res); err != nil {
				t.Fatal(err)
			}
		}
		var failed error
		allocs := testing.AllocsPerRun(500, func() {
			if err := c.Do(runCtx, &req, &res); err != nil {
				failed = err
			}
		})
		if failed != nil {
			t.Fatal(failed)
		}
		if allocs > tt.xnet {
			t.Errorf("%s %s: %.1f allocations per request, want at most %.0f (x/net's)", req.Method, req.URL, allocs, tt.xnet)
		}
		if res.Status != 200 || !res.Reused || res.Header("content-length") != "2" {
			t.Errorf("%s: status %d reused %v content-length %q", req.URL, res.Status, res.Reused, res.Header("content-length"))
		}
	}
}

// A server that stops reading cannot hold a connection forever: when a
// write does not finish within Config.Timeout the connection is closed
// (the server sees it end) and its requests fail as timeouts. The upload
// is also never queued whole in memory (the writer paces the body).
func TestStalledServerClosesConnection(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	closed := make(chan error, 1)
	drain := make(chan struct{})
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fr := http2.NewFramer(c, nil)
		// Windows large enough for the client to fill the socket buffers.
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
		fr.WriteWindowUpdate(0, 1<<31-1-65535)
		// Read nothing until the client has given up (not for a fixed
		// time: on a loaded machine the client may not even have filled
		// the buffers by then, and a drain would unstall it).
		select {
		case <-drain:
		case <-time.After(8 * time.Second):
		}
		_, err = io.Copy(io.Discard, c) // then drain: ends when the client closed
		closed <- err
	}()
	p := NewPool(Config{Timeout: 300 * time.Millisecond})
	defer p.Close()
	var res httpc.Result
	body := make([]byte, 64<<20)
	// The request may take longer than a write: the stalled write ends it.
	err = NewClient(p, nil).Do(context.Background(), &httpc.Request{Method: "POST", URL: "http://" + ln.Addr().String() + "/",
		Body: body, Timeout: 10 * time.Second}, &res)
	close(drain)
	if err == nil || res.Class != core.ErrTimeout || res.Total > 5*time.Second {
		t.Fatalf("got %v class %v after %v, want a timeout from the stalled write", err, res.Class, res.Total)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the client kept the connection to a server that stopped reading")
	}
}
