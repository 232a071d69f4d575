package demo

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"time"
)

// Balancer spreads requests round-robin over backends, like the reference's
// load balancer in front of two LAR columns. Each backend serves at most
// Workers requests at a time (an application server's worker pool); further
// requests wait for a worker. This is what makes the demo's throughput
// plateau: past Workers × backends concurrent calls, added users only queue.
type Balancer struct {
	backends []*backend
	next     atomic.Uint64
}

type backend struct {
	proxy   *httputil.ReverseProxy
	workers chan struct{}
}

// NewBalancer returns a balancer over the given base URLs.
func NewBalancer(urls []string, workers int) (*Balancer, error) {
	if len(urls) == 0 {
		return nil, errors.New("balancer: no backends")
	}
	b := &Balancer{}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			return nil, err
		}
		p := httputil.NewSingleHostReverseProxy(pu)
		p.Transport = tr
		p.ErrorHandler = proxyError
		be := &backend{proxy: p}
		if workers > 0 {
			be.workers = make(chan struct{}, workers)
		}
		b.backends = append(b.backends, be)
	}
	return b, nil
}

func (b *Balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	be := b.backends[(b.next.Add(1)-1)%uint64(len(b.backends))]
	if be.workers != nil {
		select {
		case be.workers <- struct{}{}:
			defer func() { <-be.workers }()
		case <-r.Context().Done():
			return
		}
	}
	be.proxy.ServeHTTP(w, r)
}

// Serve serves until ctx ends.
func (b *Balancer) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// proxyError answers 502 when a backend fails. A request its client gave up
// on (a load generator stopping, Ctrl-C) is no error of the balancer's: it
// is neither answered nor logged, where httputil's default handler would
// print "http: proxy error: context canceled" once per request in flight.
func proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil || errors.Is(err, context.Canceled) {
		return
	}
	log.Printf("balancer: %s %s: %v", r.Method, r.URL.Path, err)
	w.WriteHeader(http.StatusBadGateway)
}
