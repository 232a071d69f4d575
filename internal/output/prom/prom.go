// Package prom serves a running test's numbers on a Prometheus /metrics
// endpoint (plateau run --listen), built with prometheus/client_golang from the
// per-second snapshots of internal/output.
//
// Metrics (all prefixed plateau_; a distributed generator adds the constant
// label generator="i"):
//
//	requests_total{workload,phase,label}              counter, requests completed
//	errors_total{workload,phase,label,class}          counter, failed requests by error class
//	transactions_total{workload,phase,label}          counter, transactions (parent samples) completed
//	transaction_errors_total{workload,phase,label}    counter
//	request_duration_seconds{workload,label}          histogram, classic buckets and native (sparse) buckets
//	received_bytes_total, sent_bytes_total{workload,label}
//	active_users{workload}                            gauge at the end of the last second
//	target_rate{workload}                             gauge, iterations/s the running open-model phase asks for (0 closed)
//	achieved_rate{workload}                           gauge, requests completed in the last second
//	dropped_iterations_total{workload}                counter, open-model iterations not started
//	phase_active{workload,phase}                      gauge, 1 while the phase runs, 0 after
//	generator_cpu_seconds_total                       counter, this process's CPU time
//
// The counters equal summary.json's numbers once the last snapshot is
// applied: they are added from the same per-second aggregates.
package prom

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/output"
)

// DurationBuckets are the classic histogram bounds in seconds.
var DurationBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Exporter is the /metrics output. Add runs on the hub's goroutine; the
// handler may be called concurrently (the registry is safe for that).
type Exporter struct {
	reg                                   *prometheus.Registry
	requests, errors, txs, txErrors       *prometheus.CounterVec
	duration                              *durations
	recv, sent                            *prometheus.CounterVec
	users, target, achieved, phase        *prometheus.GaugeVec
	dropped                               *prometheus.CounterVec
	cpu                                   prometheus.Counter
	lastCPU                               float64
	mu                                    sync.Mutex
	scraped, finalApplied, scrapedAtFinal bool
	finalScraped                          chan struct{}
}

var _ output.Output = (*Exporter)(nil)

// New returns an exporter for the /metrics endpoint: the plateau_ metrics
// plus the Go and process collectors. generator, when not empty, becomes a
// constant `generator` label on every plateau_ metric.
func New(generator string) *Exporter {
	e := NewBare(generator)
	e.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return e
}

// NewBare returns an exporter with the plateau_ metrics only (for push
// outputs, which send nothing else).
func NewBare(generator string) *Exporter {
	e := &Exporter{reg: prometheus.NewRegistry(), finalScraped: make(chan struct{})}
	var r prometheus.Registerer = e.reg
	if generator != "" {
		r = prometheus.WrapRegistererWith(prometheus.Labels{"generator": generator}, r)
	}
	f := func(name, help string, labels ...string) *prometheus.CounterVec {
		c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "plateau", Name: name, Help: help}, labels)
		r.MustRegister(c)
		return c
	}
	g := func(name, help string, labels ...string) *prometheus.GaugeVec {
		c := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "plateau", Name: name, Help: help}, labels)
		r.MustRegister(c)
		return c
	}
	e.requests = f("requests_total", "Requests completed.", "workload", "phase", "label")
	e.errors = f("errors_total", "Failed requests by error class.", "workload", "phase", "label", "class")
	e.txs = f("transactions_total", "Transactions (parent samples) completed.", "workload", "phase", "label")
	e.txErrors = f("transaction_errors_total", "Failed transactions.", "workload", "phase", "label")
	e.recv = f("received_bytes_total", "Response bytes received.", "workload", "label")
	e.sent = f("sent_bytes_total", "Request bytes sent.", "workload", "label")
	e.dropped = f("dropped_iterations_total", "Open-model iterations not started (max_users reached or late).", "workload")
	e.duration = newDurations(prometheus.NewDesc("plateau_request_duration_seconds",
		"Response time from the intended start (coordinated-omission corrected).", []string{"workload", "label"}, nil))
	r.MustRegister(e.duration)
	e.users = g("active_users", "Active virtual users at the end of the last second.", "workload")
	e.target = g("target_rate", "Iterations per second the running open-model phase asks for (0 for closed models).", "workload")
	e.achieved = g("achieved_rate", "Requests completed in the last second.", "workload")
	e.phase = g("phase_active", "1 while the phase runs, 0 after it ended.", "workload", "phase")
	e.cpu = prometheus.NewCounter(prometheus.CounterOpts{Namespace: "plateau", Name: "generator_cpu_seconds_total",
		Help: "CPU time (user + system) of the generator process."})
	r.MustRegister(e.cpu)
	return e
}

// Registry is the exporter's registry (for tests and embedding).
func (e *Exporter) Registry() *prometheus.Registry { return e.reg }

// Handler serves /metrics (text and protobuf formats; native histograms need
// the protobuf format, which Prometheus asks for when they are enabled).
func (e *Exporter) Handler() http.Handler {
	h := promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{Registry: e.reg})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		final := e.finalApplied
		e.scraped = true
		e.mu.Unlock()
		h.ServeHTTP(w, r)
		if final {
			e.mu.Lock()
			if !e.scrapedAtFinal {
				e.scrapedAtFinal = true
				close(e.finalScraped)
			}
			e.mu.Unlock()
		}
	})
}

// Add applies one second.
func (e *Exporter) Add(s *output.Snapshot) error {
	perWorkload := map[string]int64{}
	for i := range s.Series {
		x := &s.Series[i]
		if x.Tx {
			e.txs.WithLabelValues(x.Workload, x.Phase, x.Label).Add(float64(x.Count))
			if x.Errors > 0 {
				e.txErrors.WithLabelValues(x.Workload, x.Phase, x.Label).Add(float64(x.Errors))
			}
			continue
		}
		perWorkload[x.Workload] += x.Count
		e.requests.WithLabelValues(x.Workload, x.Phase, x.Label).Add(float64(x.Count))
		for c, n := range x.ErrorsByClass {
			if n > 0 {
				e.errors.WithLabelValues(x.Workload, x.Phase, x.Label, core.ErrorClass(c).String()).Add(float64(n))
			}
		}
		e.recv.WithLabelValues(x.Workload, x.Label).Add(float64(x.Recv))
		e.sent.WithLabelValues(x.Workload, x.Label).Add(float64(x.Sent))
		// Each populated HDR bucket counts at its lowest equivalent value
		// (0.1 % resolution), so _count is exact.
		e.duration.add(x.Workload, x.Label, &x.Hist)
	}
	for _, w := range s.Workloads {
		if s.Final {
			e.users.WithLabelValues(w.Name).Set(0)
			e.target.WithLabelValues(w.Name).Set(0)
			e.achieved.WithLabelValues(w.Name).Set(0)
			continue
		}
		e.users.WithLabelValues(w.Name).Set(float64(w.Users))
		e.target.WithLabelValues(w.Name).Set(w.TargetRate)
		e.achieved.WithLabelValues(w.Name).Set(float64(perWorkload[w.Name]))
		e.dropped.WithLabelValues(w.Name).Add(float64(w.Dropped))
	}
	for _, p := range s.Phases {
		v := 0.0
		if p.End == nil && !s.Final {
			v = 1
		}
		e.phase.WithLabelValues(p.Workload, p.Name).Set(v)
	}
	if d := s.CPUSeconds - e.lastCPU; d > 0 {
		e.cpu.Add(d)
		e.lastCPU = s.CPUSeconds
	}
	if s.Final {
		e.mu.Lock()
		e.finalApplied = true
		e.mu.Unlock()
	}
	return nil
}

// Scraped reports whether /metrics was scraped at all.
func (e *Exporter) Scraped() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.scraped
}

// WaitFinalScrape waits until /metrics has been scraped once after the final
// snapshot was applied, so a scraping Prometheus holds the run's exact
// totals; it returns at once when nothing ever scraped, and after at most
// timeout. It reports whether the final scrape happened.
func (e *Exporter) WaitFinalScrape(timeout time.Duration) bool {
	e.mu.Lock()
	scraped := e.scraped
	e.mu.Unlock()
	if !scraped {
		return false
	}
	select {
	case <-e.finalScraped:
		return true
	case <-time.After(timeout):
		return false
	}
}

// Close does nothing: the registry lives as long as the listener.
func (e *Exporter) Close() error { return nil }
