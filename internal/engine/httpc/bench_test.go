package httpc

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// fixedResponse is what nginx answers for `return 200 'ok'`, give or take
// the Date header.
const fixedResponse = "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Sun, 22 Nov 2026 00:00:00 GMT\r\n" +
	"Content-Type: application/octet-stream\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"

const chunkedResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n" +
	"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"

// TestSteadyStateZeroAllocs is the hot-path contract: a GET on a kept-alive
// connection allocates nothing, whether or not the body is kept, with a
// long-lived cancellable context, with request headers, and for chunked
// responses.
func TestSteadyStateZeroAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("measures allocations")
	}
	fixed := minimalServer(t, fixedResponse)
	chunked := minimalServer(t, chunkedResponse)
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tests := []struct {
		name string
		cfg  Config
		ctx  context.Context
		req  Request
	}{
		{"discard body", Config{}, context.Background(), Request{URL: fixed.URL + "/"}},
		{"keep body", Config{MaxBody: 1024}, context.Background(), Request{URL: fixed.URL + "/x?y=1"}},
		{"cancellable context and headers", Config{MaxBody: 16}, runCtx,
			Request{URL: fixed.URL + "/", Header: []Header{{"Accept", "*/*"}, {"Authorization", "Bearer t"}}}},
		{"chunked", Config{MaxBody: 64}, context.Background(), Request{URL: chunked.URL + "/"}},
		{"post", Config{}, context.Background(), Request{Method: "POST", URL: fixed.URL + "/", Body: []byte(`{"k":"v"}`)}},
	}
	for _, tt := range tests {
		c := New(tt.cfg)
		var res Result
		for range 3 { // warm up: connection, buffers, caches
			if err := c.Do(tt.ctx, &tt.req, &res); err != nil {
				t.Fatal(err)
			}
		}
		var failed error
		allocs := testing.AllocsPerRun(500, func() {
			if err := c.Do(tt.ctx, &tt.req, &res); err != nil {
				failed = err
			}
		})
		c.Close()
		if failed != nil {
			t.Fatalf("%s: %v", tt.name, failed)
		}
		if allocs != 0 {
			t.Errorf("%s: %.2f allocs per request, want 0", tt.name, allocs)
		}
		if res.Status != 200 || !res.Reused {
			t.Errorf("%s: status %d reused %v", tt.name, res.Status, res.Reused)
		}
	}
}

// BenchmarkDo measures one sequential user against a raw fixed-response
// server and an httptest (net/http) server.
func BenchmarkDo(b *testing.B) {
	b.Run("raw", func(b *testing.B) { benchDo(b, minimalServer(b, fixedResponse).URL+"/") })
	b.Run("httptest", func(b *testing.B) { benchDo(b, okServer(b).URL+"/") })
}

// BenchmarkNetHTTP is BenchmarkDo with net/http's Client, for comparison.
func BenchmarkNetHTTP(b *testing.B) {
	b.Run("raw", func(b *testing.B) { benchNetHTTP(b, minimalServer(b, fixedResponse).URL+"/") })
	b.Run("httptest", func(b *testing.B) { benchNetHTTP(b, okServer(b).URL+"/") })
}

// BenchmarkClosedLoop50 runs 50 users in a closed loop (one connection
// each), the harness's max-throughput shape, against the raw server.
func BenchmarkClosedLoop50(b *testing.B) {
	url := minimalServer(b, fixedResponse).URL + "/"
	b.Run("httpc", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(50)
		b.RunParallel(func(pb *testing.PB) {
			c := New(Config{})
			defer c.Close()
			req := &Request{URL: url}
			var res Result
			for pb.Next() {
				if err := c.Do(context.Background(), req, &res); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("nethttp", func(b *testing.B) {
		b.ReportAllocs()
		tr := &http.Transport{MaxIdleConnsPerHost: 64}
		defer tr.CloseIdleConnections()
		cl := &http.Client{Transport: tr}
		b.SetParallelism(50)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, err := cl.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	})
}

func okServer(b *testing.B) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	b.Cleanup(s.Close)
	return s
}

func benchDo(b *testing.B, url string) {
	c := New(Config{MaxBody: 64})
	defer c.Close()
	req := &Request{URL: url}
	var res Result
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Do(ctx, req, &res); err != nil {
			b.Fatal(err)
		}
	}
}

func benchNetHTTP(b *testing.B, url string) {
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	var once sync.Once
	b.ReportAllocs()
	for b.Loop() {
		resp, err := cl.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		once.Do(func() {
			if resp.StatusCode != 200 {
				b.Fatal(resp.Status)
			}
		})
	}
}
