package h2

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
)

// h2cServer is a Go server speaking only HTTP/2 with prior knowledge. It
// counts requests by protocol, connections, and the most streams it saw in
// flight on one connection.
type h2cServer struct {
	addr             string
	h2, other, conns atomic.Int64
	mu               sync.Mutex
	inflight         map[string]int
	maxInflight      int
	hold             chan struct{} // /hold waits on it
	srv              *http.Server
}

func newH2CServer(t *testing.T) *h2cServer {
	s := &h2cServer{inflight: map[string]int{}, hold: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		w.Header().Set("X-Proto", r.Proto)
		io.WriteString(w, "hello "+r.Proto)
	})
	mux.HandleFunc("/hold", func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		s.mu.Lock()
		s.inflight[r.RemoteAddr]++
		s.maxInflight = max(s.maxInflight, s.inflight[r.RemoteAddr])
		s.mu.Unlock()
		<-s.hold
		s.mu.Lock()
		s.inflight[r.RemoteAddr]--
		s.mu.Unlock()
		io.WriteString(w, "done")
	})
	mux.HandleFunc("/reset", func(w http.ResponseWriter, r *http.Request) {
		s.count(r)
		panic(http.ErrAbortHandler) // HTTP/2: RST_STREAM, the connection stays
	})
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	s.srv = &http.Server{Handler: mux, Protocols: &p,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.addr = ln.Addr().String()
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

func (s *h2cServer) count(r *http.Request) {
	if r.ProtoMajor == 2 {
		s.h2.Add(1)
	} else {
		s.other.Add(1)
	}
}

func TestH2CPriorKnowledge(t *testing.T) {
	s := newH2CServer(t)
	p := NewPool(Config{MaxBody: 1024})
	defer p.Close()
	c := NewClient(p, nil)
	var res httpc.Result
	req := httpc.Request{URL: "http://" + s.addr + "/hello", Header: []httpc.Header{{Name: "X-A", Value: "1"}}}
	for i := range 5 {
		if err := c.Do(context.Background(), &req, &res); err != nil {
			t.Fatal(err)
		}
		if res.Status != 200 || string(res.Body) != "hello HTTP/2.0" || res.Proto != "HTTP/2.0" {
			t.Fatalf("got %d %q %q", res.Status, res.Proto, res.Body)
		}
		if got := res.Header("x-proto"); got != "HTTP/2.0" {
			t.Fatalf("header X-Proto = %q", got)
		}
		if res.Reused != (i > 0) || (i == 0) != (res.Connect > 0) {
			t.Fatalf("request %d: reused %v connect %v", i, res.Reused, res.Connect)
		}
		if res.TTFB <= 0 || res.Total < res.TTFB || res.BodySize != int64(len(res.Body)) {
			t.Fatalf("timing/size: ttfb %v total %v size %d", res.TTFB, res.Total, res.BodySize)
		}
	}
	if s.h2.Load() != 5 || s.other.Load() != 0 || s.conns.Load() != 1 {
		t.Fatalf("server saw h2=%d other=%d conns=%d, want 5 0 1", s.h2.Load(), s.other.Load(), s.conns.Load())
	}
}

// Twelve requests in flight with max_concurrent_streams 4 need three
// connections, and no connection ever carries more than four streams.
func TestMaxConcurrentStreams(t *testing.T) {
	s := newH2CServer(t)
	p := NewPool(Config{MaxConcurrentStreams: 4, MaxBody: 64})
	defer p.Close()
	const n = 12
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := NewClient(p, nil)
			var res httpc.Result
			if err := c.Do(context.Background(), &httpc.Request{URL: "http://" + s.addr + "/hold"}, &res); err != nil || res.Status != 200 {
				errs <- err
			}
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for s.h2.Load() < n && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(s.hold)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("request failed: %v", err)
	}
	if s.conns.Load() != 3 || s.maxInflight != 4 {
		t.Fatalf("server saw %d connections, at most %d streams on one; want 3 and 4", s.conns.Load(), s.maxInflight)
	}
}

func TestStreamResetClass(t *testing.T) {
	s := newH2CServer(t)
	p := NewPool(Config{})
	defer p.Close()
	c := NewClient(p, nil)
	var res httpc.Result
	err := c.Do(context.Background(), &httpc.Request{URL: "http://" + s.addr + "/reset"}, &res)
	if err == nil || res.Class != core.ErrH2StreamReset || res.Class.String() != "h2_stream_reset" {
		t.Fatalf("got err %v class %v, want h2_stream_reset", err, res.Class)
	}
	if strings.Contains(err.Error(), s.addr) {
		t.Fatalf("message keeps the address: %v", err)
	}
	// The connection survives a stream reset.
	if err := c.Do(context.Background(), &httpc.Request{URL: "http://" + s.addr + "/hello"}, &res); err != nil || !res.Reused {
		t.Fatalf("after a reset: %v reused=%v", err, res.Reused)
	}
}

// A TLS server that does not offer h2 fails version 2 (class protocol).
func TestTLSWithoutH2IsProtocolError(t *testing.T) {
	srv := newTLS11Server(t)
	p := NewPool(Config{InsecureSkipVerify: true})
	defer p.Close()
	var res httpc.Result
	err := NewClient(p, nil).Do(context.Background(), &httpc.Request{URL: srv + "/"}, &res)
	if err == nil || res.Class != core.ErrProtocol {
		t.Fatalf("got %v class %v, want protocol", err, res.Class)
	}
	// auto falls back to HTTP/1.1.
	pa := NewPool(Config{InsecureSkipVerify: true, Auto: true})
	defer pa.Close()
	if err := NewClient(pa, nil).Do(context.Background(), &httpc.Request{URL: srv + "/"}, &res); err != nil || res.Proto != "HTTP/1.1" || res.Status != 200 {
		t.Fatalf("auto: %v %q %d", err, res.Proto, res.Status)
	}
}

// newTLS11Server is an HTTPS server offering only http/1.1 by ALPN.
func newTLS11Server(t *testing.T) string {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
