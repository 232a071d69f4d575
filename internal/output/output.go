// Package output hands a running test's per-second snapshots to live
// consumers: the Prometheus endpoint, push outputs (remote write, OTLP,
// InfluxDB line protocol) and the live web view.
//
// The engine calls Hub.Publish once per second from its collector, never on
// the request path. Publish copies the second into an immutable Snapshot and
// offers it to each output through that output's own bounded queue; a full
// queue drops the snapshot for that output only and counts it, so a slow
// receiver can never slow the load. The counts reach run.json (Stats) and the
// report's notes.
package output

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Output consumes snapshots. Add is called from the output's own goroutine,
// one snapshot at a time and in order, so an implementation needs no lock for
// state only Add touches; it may block (a slow network) without affecting the
// run. Close is called once after the last Add.
type Output interface {
	Add(s *Snapshot) error
	Close() error
}

// Snapshot is one second of a run. It is shared by all outputs and must not
// be modified.
type Snapshot struct {
	// Time is the start of the second the snapshot covers.
	Time time.Time
	// Start is when the run's load started.
	Start time.Time
	// Generator names the generator process in a distributed run ("" for a
	// single process); outputs add it as a `generator` label.
	Generator string
	// Series holds one entry per workload, phase and label with samples in
	// this second, sorted by workload, phase, label.
	Series []Series
	// Workloads holds, per workload in plan order, the active users at the
	// end of the second, the dropped iterations in the second and the target
	// rate of the phase running (iterations per second; 0 for closed models).
	Workloads []Workload
	// Phases is run.json's phase list as it was at the end of the second.
	Phases []rundir.PhaseInfo
	// CPUSeconds is the generator process's CPU time (user + system) since
	// it started.
	CPUSeconds float64
	// Final marks the last snapshot of the run (the partial second at its
	// end).
	Final bool
}

// Series is the aggregate of one label of one workload in one phase over
// one second. Times are microseconds.
type Series struct {
	Workload string
	Phase    string // phase name; "" when the phase is unknown
	Label    string
	Tx       bool // transaction (parent) label: not counted as a request
	Count    int64
	Errors   int64
	// ErrorsByClass counts failures per core.ErrorClass (index ErrNone
	// unused).
	ErrorsByClass [16]int64
	SumUs         int64
	MinUs, MaxUs  int64
	Sent, Recv    int64
	// Hist is the second's response-time histogram: its populated buckets.
	Hist metrics.Sparse
}

// Quantile returns the response time in ms at pct (0–100), clamped to the
// exact extremes as the report does.
func (s *Series) Quantile(pct float64) float64 {
	if s.Count == 0 {
		return 0
	}
	v := min(max(s.Hist.ValueAtPercentile(pct), s.MinUs), s.MaxUs)
	return float64(v) / 1000
}

// MeanMs is the exact mean response time in ms.
func (s *Series) MeanMs() float64 {
	if s.Count == 0 {
		return 0
	}
	return float64(s.SumUs) / float64(s.Count) / 1000
}

// Workload is one workload's load state at the end of a second.
type Workload struct {
	Name       string
	Users      int
	Dropped    int64   // iterations not started in this second
	TargetRate float64 // iterations/s of the running open-model phase; 0 otherwise
}

// Stat is what one output did over the run, for run.json.
type Stat = rundir.OutputInfo

// queueLen bounds each output's queue: a minute of snapshots.
const queueLen = 60

// Hub fans snapshots out to outputs. Publish and SetPhases are safe for
// concurrent use with each other; Add outputs before the run starts.
type Hub struct {
	generator string
	workloads []string

	mu     sync.Mutex
	start  time.Time
	phases []rundir.PhaseInfo
	outs   []*queue
	closed bool
}

type queue struct {
	name, target string
	out          Output
	ch           chan *Snapshot
	done         chan struct{}
	mu           sync.Mutex
	sent         int64
	dropped      int64
	failed       int64
	lastErr      string
}

// NewHub returns a hub for a run of the given workloads (plan order).
// generator is the generator's name in a distributed run, "" otherwise.
func NewHub(generator string, workloads []string) *Hub {
	return &Hub{generator: generator, workloads: workloads}
}

// Add starts out behind its own queue. name is its kind (e.g. "otlp") and
// target where it sends to (shown in run.json; never holds credentials).
func (h *Hub) Add(name, target string, out Output) {
	q := &queue{name: name, target: target, out: out, ch: make(chan *Snapshot, queueLen), done: make(chan struct{})}
	h.mu.Lock()
	h.outs = append(h.outs, q)
	h.mu.Unlock()
	go q.run()
}

func (q *queue) run() {
	defer close(q.done)
	for s := range q.ch {
		err := q.out.Add(s)
		q.mu.Lock()
		if err != nil {
			q.failed++
			q.lastErr = err.Error()
		} else {
			q.sent++
		}
		q.mu.Unlock()
	}
}

// SetStart records when the load started.
func (h *Hub) SetStart(t time.Time) {
	h.mu.Lock()
	h.start = t
	h.mu.Unlock()
}

// SetPhases records run.json's phase list (it is copied).
func (h *Hub) SetPhases(ps []rundir.PhaseInfo) {
	cp := make([]rundir.PhaseInfo, len(ps))
	for i, p := range ps {
		cp[i] = p
		if p.End != nil {
			e := *p.End
			cp[i].End = &e
		}
	}
	h.mu.Lock()
	h.phases = cp
	h.mu.Unlock()
}

// Publish builds the snapshot of one second from the engine's interval and
// offers it to every output. It matches engine.Config.Interval.
func (h *Hub) Publish(sec time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64) {
	h.publish(sec, iv, users, dropped, false)
}

// Build makes the snapshot of one second without a hub (benchmarks, tests).
func Build(sec time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64) *Snapshot {
	names := make([]string, 0, len(users))
	for w := range users {
		names = append(names, w)
	}
	slices.Sort(names)
	return NewHub("", names).build(sec, iv, users, dropped, false)
}

func (h *Hub) publish(sec time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64, final bool) {
	h.offer(h.build(sec, iv, users, dropped, final))
}

func (h *Hub) build(sec time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64, final bool) *Snapshot {
	h.mu.Lock()
	phases, start := h.phases, h.start
	h.mu.Unlock()
	s := &Snapshot{Time: sec, Start: start, Generator: h.generator, Phases: phases, CPUSeconds: cpuSeconds(), Final: final}
	if iv != nil {
		s.Series = make([]Series, 0, len(iv.Aggs))
		for k, a := range iv.Aggs {
			if a.Count == 0 && a.Errors == 0 {
				continue
			}
			s.Series = append(s.Series, seriesOf(k, a, phases))
		}
	}
	slices.SortFunc(s.Series, func(a, b Series) int {
		return cmpJoin(a.Workload, b.Workload, a.Phase, b.Phase, a.Label, b.Label)
	})
	for _, w := range h.workloads {
		wl := Workload{Name: w, Users: users[w], Dropped: dropped[w]}
		for i := len(phases) - 1; i >= 0; i-- {
			if phases[i].Workload == w && phases[i].End == nil {
				wl.TargetRate = phases[i].Rate
				break
			}
		}
		s.Workloads = append(s.Workloads, wl)
	}
	return s
}

func cmpJoin(xs ...string) int {
	for i := 0; i+1 < len(xs); i += 2 {
		if c := strings.Compare(xs[i], xs[i+1]); c != 0 {
			return c
		}
	}
	return 0
}

func (h *Hub) offer(s *Snapshot) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	for _, q := range h.outs {
		select {
		case q.ch <- s:
		default:
			q.mu.Lock()
			q.dropped++
			q.mu.Unlock()
		}
	}
}

// seriesOf copies one aggregate; the histogram becomes its populated buckets.
func seriesOf(k metrics.Key, a *metrics.Agg, phases []rundir.PhaseInfo) Series {
	s := Series{Workload: k.Workload, Label: k.Label, Tx: k.Tx || k.Derived, Count: a.Count, Errors: a.Errors,
		SumUs: a.SumUs, Sent: a.Sent, Recv: a.Recv}
	if k.Phase >= 0 && k.Phase < len(phases) {
		s.Phase = phases[k.Phase].Name
	}
	if a.Count > 0 {
		s.MinUs, s.MaxUs = a.MinUs, a.MaxUs
		metrics.SparseOf(a.Hist, &s.Hist)
	}
	for ek, n := range a.Errs {
		if int(ek.Class) < len(s.ErrorsByClass) {
			s.ErrorsByClass[ek.Class] += n
		}
	}
	// Failures without detail (none from the engine) count as "other".
	var detailed int64
	for _, n := range s.ErrorsByClass {
		detailed += n
	}
	if d := s.Errors - detailed; d > 0 {
		s.ErrorsByClass[core.ErrOther] += d
	}
	return s
}

// Close sends a final, empty snapshot marking the end (so outputs can flush
// and show the run as over), closes every queue, waits for the outputs to
// drain and closes them. It returns what each output did.
func (h *Hub) Close() ([]Stat, error) {
	h.publish(time.Now().Truncate(time.Second), nil, nil, nil, true)
	h.mu.Lock()
	h.closed = true
	outs := h.outs
	h.mu.Unlock()
	var stats []Stat
	var errs []string
	for _, q := range outs {
		close(q.ch)
		<-q.done
		if err := q.out.Close(); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", q.name, err))
		}
		q.mu.Lock()
		stats = append(stats, Stat{Name: q.name, Target: q.target, Sent: q.sent, Dropped: q.dropped, Failed: q.failed, LastError: q.lastErr})
		q.mu.Unlock()
	}
	if len(errs) > 0 {
		return stats, fmt.Errorf("closing outputs: %s", strings.Join(errs, "; "))
	}
	return stats, nil
}

// Note is the run.json note (shown in the report) for one output's
// statistics: what it delivered and what it lost.
func Note(s Stat) string {
	n := fmt.Sprintf("output %s (%s): %d of %d per-second snapshots delivered, %d dropped (queue full), %d failed",
		s.Name, s.Target, s.Sent, s.Sent+s.Dropped+s.Failed, s.Dropped, s.Failed)
	if s.LastError != "" {
		n += "; last error: " + s.LastError
	}
	return n
}
