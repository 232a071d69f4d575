package sut

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// LatencyKind names a latency distribution.
type LatencyKind string

// Latency distributions.
const (
	// LatencyLogNormal is log-normal with the given Median and P99: the
	// long-tailed shape of real service calls.
	LatencyLogNormal LatencyKind = "lognormal"
	// LatencyUniform is uniform between Min and Max.
	LatencyUniform LatencyKind = "uniform"
	// LatencyFixed is always Median.
	LatencyFixed LatencyKind = "fixed"
)

// z99 is the standard normal's 99th percentile: a log-normal with median m
// and sigma s has p99 = m·exp(s·z99).
const z99 = 2.3263478740408408

// Latency is a response-time distribution for an external service. Which
// fields matter depends on Kind; see the LatencyKind constants. A Latency is
// a plain value, safe to copy and share.
type Latency struct {
	Kind        LatencyKind
	Median, P99 time.Duration // lognormal (both); fixed (Median)
	Min, Max    time.Duration // uniform
}

// ParseLatency parses the String form: "lognormal:MEDIAN:P99",
// "uniform:MIN:MAX" or "fixed:D", with Go durations such as 30ms.
func ParseLatency(s string) (Latency, error) {
	parts := strings.Split(s, ":")
	kind := LatencyKind(parts[0])
	want := map[LatencyKind]int{LatencyLogNormal: 3, LatencyUniform: 3, LatencyFixed: 2}[kind]
	if want == 0 {
		return Latency{}, fmt.Errorf("latency %q: kind must be lognormal, uniform or fixed", s)
	}
	if len(parts) != want {
		return Latency{}, fmt.Errorf("latency %q: want %d colon-separated fields", s, want)
	}
	ds := make([]time.Duration, len(parts)-1)
	for i, p := range parts[1:] {
		d, err := time.ParseDuration(p)
		if err != nil {
			return Latency{}, fmt.Errorf("latency %q: %w", s, err)
		}
		ds[i] = d
	}
	var l Latency
	switch kind {
	case LatencyLogNormal:
		l = Latency{Kind: kind, Median: ds[0], P99: ds[1]}
	case LatencyUniform:
		l = Latency{Kind: kind, Min: ds[0], Max: ds[1]}
	case LatencyFixed:
		l = Latency{Kind: kind, Median: ds[0]}
	}
	if err := l.Validate(); err != nil {
		return Latency{}, err
	}
	return l, nil
}

// String returns the form ParseLatency reads.
func (l Latency) String() string {
	switch l.Kind {
	case LatencyLogNormal:
		return fmt.Sprintf("lognormal:%s:%s", l.Median, l.P99)
	case LatencyUniform:
		return fmt.Sprintf("uniform:%s:%s", l.Min, l.Max)
	case LatencyFixed:
		return fmt.Sprintf("fixed:%s", l.Median)
	}
	return fmt.Sprintf("%s:?", l.Kind)
}

// Validate reports an unknown kind or inconsistent bounds.
func (l Latency) Validate() error {
	switch l.Kind {
	case LatencyLogNormal:
		if l.Median <= 0 || l.P99 < l.Median {
			return fmt.Errorf("latency %s: need 0 < median ≤ p99", l)
		}
	case LatencyUniform:
		if l.Min < 0 || l.Max < l.Min {
			return fmt.Errorf("latency %s: need 0 ≤ min ≤ max", l)
		}
	case LatencyFixed:
		if l.Median < 0 {
			return fmt.Errorf("latency %s: need a non-negative duration", l)
		}
	default:
		return fmt.Errorf("latency kind %q: must be lognormal, uniform or fixed", l.Kind)
	}
	return nil
}

// Sample draws one latency using r.
func (l Latency) Sample(r *rand.Rand) time.Duration {
	switch l.Kind {
	case LatencyLogNormal:
		sigma := math.Log(float64(l.P99)/float64(l.Median)) / z99
		return time.Duration(float64(l.Median) * math.Exp(sigma*r.NormFloat64()))
	case LatencyUniform:
		return l.Min + time.Duration(r.Int64N(int64(l.Max-l.Min)+1))
	default:
		return l.Median
	}
}

// ServiceConfig is one external service.
type ServiceConfig struct {
	// Name is the URL path segment: the service answers /Name.
	Name string
	// Latency is how long each call takes, failed or not.
	Latency Latency
	// FailurePercent is the share of calls, in percent [0, 100], answered
	// 503 Service Unavailable.
	FailurePercent float64
}

// DefaultServices reproduces the reference's shape at small scale: each call
// costs far more than the front and back's own work (medians 25–40 ms, the
// treatment-relation check slowest, as in the reference), and about one call
// in 5,000 fails with 503.
func DefaultServices() []ServiceConfig {
	return []ServiceConfig{
		{Name: "audit", Latency: Latency{Kind: LatencyLogNormal, Median: 25 * time.Millisecond, P99: 90 * time.Millisecond}, FailurePercent: 0.02},
		{Name: "consent", Latency: Latency{Kind: LatencyLogNormal, Median: 35 * time.Millisecond, P99: 120 * time.Millisecond}, FailurePercent: 0.02},
		{Name: "relation", Latency: Latency{Kind: LatencyLogNormal, Median: 40 * time.Millisecond, P99: 150 * time.Millisecond}, FailurePercent: 0.02},
	}
}

// ExternalConfig configures the external-services process. Zero fields take
// the defaults documented on each field.
type ExternalConfig struct {
	// Services to serve (default DefaultServices()).
	Services []ServiceConfig
	// Seed seeds latency and failure draws, so a rerun sees the same
	// sequence of draws (their assignment to requests still depends on
	// arrival order).
	Seed int64
	// AccessLog is an optional access log path (AccessLogFormat).
	AccessLog string
	// FlushInterval bounds how long a log line stays buffered (default 1 s).
	FlushInterval time.Duration
}

// External serves the external services, each at /NAME (any method):
// after the drawn latency it answers 200 {"service":NAME,"ok":true}, or 503
// with {"error":"Service Unavailable"} for the configured share of calls.
// GET /health answers at once. Create it with NewExternal and run it with
// Serve.
type External struct {
	cfg ExternalConfig
	log *logFile

	mu  sync.Mutex // guards rng
	rng *rand.Rand
}

// NewExternal validates cfg and opens the access log.
func NewExternal(cfg ExternalConfig) (*External, error) {
	if len(cfg.Services) == 0 {
		cfg.Services = DefaultServices()
	}
	seen := map[string]bool{}
	for _, s := range cfg.Services {
		if !validServiceName(s.Name) {
			return nil, fmt.Errorf("external: service name %q: want lower-case letters, digits and '-'", s.Name)
		}
		if seen[s.Name] || s.Name == "health" {
			return nil, fmt.Errorf("external: service name %q used twice or reserved", s.Name)
		}
		seen[s.Name] = true
		if err := s.Latency.Validate(); err != nil {
			return nil, fmt.Errorf("external: service %s: %w", s.Name, err)
		}
		if s.FailurePercent < 0 || s.FailurePercent > 100 || math.IsNaN(s.FailurePercent) {
			return nil, fmt.Errorf("external: service %s: failure percent %v outside [0, 100]", s.Name, s.FailurePercent)
		}
	}
	log, err := openLog(cfg.AccessLog, cfg.FlushInterval)
	if err != nil {
		return nil, fmt.Errorf("external: %w", err)
	}
	return &External{cfg: cfg, log: log, rng: rand.New(rand.NewPCG(uint64(cfg.Seed), 0xE87))}, nil
}

// Serve answers requests on ln until ctx is cancelled, then stops gracefully
// (in-flight calls finish their latency) and flushes the log. It returns nil
// after a graceful stop. Call it once.
func (e *External) Serve(ctx context.Context, ln net.Listener) error {
	return serve(ctx, ln, e.handler(), e.Close)
}

// Close flushes and closes the access log; Serve calls it on the way out.
// Idempotent.
func (e *External) Close() error { return e.log.close() }

func (e *External) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintln(w, `{"status":"ok"}`)
	})
	for _, s := range e.cfg.Services {
		body := []byte(`{"service":"` + s.Name + `","ok":true}` + "\n")
		mux.HandleFunc("/"+s.Name, func(w http.ResponseWriter, r *http.Request) {
			delay, fail := e.draw(s)
			t := time.NewTimer(delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return // caller gave up; nobody reads the answer
			}
			if fail {
				writeJSONError(w, http.StatusServiceUnavailable, http.StatusText(http.StatusServiceUnavailable))
				return
			}
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		})
	}
	return withAccessLog(e.log, mux)
}

// draw picks one call's latency and whether it fails.
func (e *External) draw(s ServiceConfig) (time.Duration, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := s.Latency.Sample(e.rng)
	fail := s.FailurePercent > 0 && e.rng.Float64()*100 < s.FailurePercent
	return d, fail
}

// validServiceName reports whether name is a non-empty path segment of
// lower-case letters, digits and '-'.
func validServiceName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}
