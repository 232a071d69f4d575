package demo

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// MetricsPath is where the balancer exposes its worker pools in the
// Prometheus text format, so a run can monitor the pools (a prometheus
// target) and the capacity analysis can judge them against their size:
// lb_connections{backend} (requests a front is serving), lb_max_connections
// {backend} (its workers) and lb_queued{backend} (requests waiting for one).
const MetricsPath = "/-/lb-metrics"

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
	host string
	// name is how the pool metrics label the backend: its own name when
	// given (NAME=URL), so a report names the saturated pool by the
	// front it serves, not by an address; else host.
	name    string
	proxy   *httputil.ReverseProxy
	workers chan struct{}
	queued  atomic.Int64
}

// NewBalancer returns a balancer over the given base URLs, each optionally
// named as NAME=URL (the name labels the backend's pool metrics).
func NewBalancer(urls []string, workers int) (*Balancer, error) {
	if len(urls) == 0 {
		return nil, errors.New("balancer: no backends")
	}
	b := &Balancer{}
	tr := &http.Transport{MaxIdleConnsPerHost: 256, IdleConnTimeout: 90 * time.Second}
	for _, u := range urls {
		name := ""
		if i := strings.IndexByte(u, '='); i > 0 && !strings.Contains(u[:i], "/") {
			name, u = u[:i], u[i+1:]
		}
		pu, err := url.Parse(u)
		if err != nil {
			return nil, err
		}
		p := httputil.NewSingleHostReverseProxy(pu)
		p.Transport = tr
		p.ErrorHandler = proxyError
		if name == "" {
			name = pu.Host
		}
		be := &backend{host: pu.Host, name: name, proxy: p}
		if workers > 0 {
			be.workers = make(chan struct{}, workers)
		}
		b.backends = append(b.backends, be)
	}
	return b, nil
}

func (b *Balancer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == MetricsPath {
		b.metrics(w)
		return
	}
	be := b.backends[(b.next.Add(1)-1)%uint64(len(b.backends))]
	if be.workers != nil {
		be.queued.Add(1)
		select {
		case be.workers <- struct{}{}:
			be.queued.Add(-1)
			defer func() { <-be.workers }()
		case <-r.Context().Done():
			be.queued.Add(-1)
			return
		}
	}
	be.proxy.ServeHTTP(w, r)
}

// metrics writes the worker pools' state in the Prometheus text format.
func (b *Balancer) metrics(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	for _, m := range []struct {
		name, help string
		value      func(*backend) int
	}{
		{"lb_connections", "requests the backend is serving (workers in use)", func(be *backend) int { return len(be.workers) }},
		{"lb_max_connections", "the backend's workers", func(be *backend) int { return cap(be.workers) }},
		{"lb_queued", "requests waiting for a worker of the backend", func(be *backend) int { return int(be.queued.Load()) }},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s gauge\n", m.name, m.help, m.name)
		for _, be := range b.backends {
			if be.workers == nil {
				continue // no pool: nothing to fill
			}
			fmt.Fprintf(w, "%s{backend=%s} %d\n", m.name, strconv.Quote(be.name), m.value(be))
		}
	}
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
