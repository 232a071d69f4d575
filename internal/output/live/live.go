// Package live is the live web view of a running test (plateau run --listen,
// path /): the report's charts (drawn by internal/report/chart on the server,
// as in the report) and tables, refreshed every second over server-sent
// events, with the phases, the SLA status so far and a stop button guarded by
// a confirmation. The page is one embedded HTML file with a small script: no
// CDN, no framework bundle, no request leaves the listener.
package live

import (
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/output"
	"github.com/plateau-perf/plateau/internal/report/chart"
)

//go:embed page.html
var pageSource string

var page = template.Must(template.New("live").Parse(pageSource))

// Options configure a view.
type Options struct {
	Name string   // plan name, shown in the title
	SLA  []string // the plan's requirement expressions
	// Stop, when set, is called once when the user confirms the stop
	// button; nil hides the button.
	Stop func()
	// MultiWorkload names labels "workload: label", as the report does.
	MultiWorkload bool
}

// View is the live output. Add runs on the hub's goroutine; the handlers run
// concurrently and read the last rendered state.
type View struct {
	opt   Options
	token string // guards /stop against cross-site posts
	exprs []*sla.Expr
	bad   []string // SLA expressions that did not parse

	// amu guards the aggregates below (Add, and rendering for a page
	// that connects).
	amu      sync.Mutex
	last     *output.Snapshot
	dirty    bool
	watchers atomic.Int32
	total    *metrics.Agg
	labels   map[string]*metrics.Agg
	byPhase  map[string]map[string]*metrics.Agg // phase → label → agg (SLA scoped to a phase)
	seconds  []second
	secAgg   *metrics.Agg // this second's, reused
	dropped  int64
	start    time.Time
	lastTime time.Time

	mu      sync.Mutex
	state   []byte // last JSON state
	version int
	changed chan struct{} // closed and replaced on every new state
	stopped bool
}

type second struct {
	t                     time.Time
	count, errors, users  int64
	p50, p95, p99, meanMs float64
}

var _ output.Output = (*View)(nil)

// New returns a view.
func New(o Options) *View {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	v := &View{opt: o, token: hex.EncodeToString(b), total: metrics.NewAgg(), labels: map[string]*metrics.Agg{},
		byPhase: map[string]map[string]*metrics.Agg{}, changed: make(chan struct{})}
	for _, s := range o.SLA {
		e, err := sla.Parse(s)
		if err != nil {
			v.bad = append(v.bad, s)
			continue
		}
		v.exprs = append(v.exprs, e)
	}
	v.state, _ = json.Marshal(State{Name: o.Name, Waiting: true})
	return v
}

// State is what the page receives each second (JSON). Times are ms.
type State struct {
	Name     string      `json:"name"`
	Waiting  bool        `json:"waiting,omitempty"` // no second finished yet
	Final    bool        `json:"final,omitempty"`   // the load has ended
	Elapsed  float64     `json:"elapsed_s"`
	Users    int64       `json:"users"`
	Dropped  int64       `json:"dropped"`
	Phase    string      `json:"phase"`
	Total    Row         `json:"total"`
	Labels   []Row       `json:"labels"`
	Phases   []Phase     `json:"phases"`
	SLA      []SLAStatus `json:"sla"`
	Charts   []string    `json:"charts"` // SVG
	Done     *Done       `json:"done,omitempty"`
	Stopping bool        `json:"stopping,omitempty"`
}

// Row is a table row.
type Row struct {
	Label    string  `json:"label"`
	Count    int64   `json:"count"`
	Errors   int64   `json:"errors"`
	ErrorPct float64 `json:"error_pct"`
	RPS      float64 `json:"rps"`
	MeanMs   float64 `json:"mean_ms"`
	P50Ms    float64 `json:"p50_ms"`
	P90Ms    float64 `json:"p90_ms"`
	P95Ms    float64 `json:"p95_ms"`
	P99Ms    float64 `json:"p99_ms"`
	MaxMs    float64 `json:"max_ms"`
}

// Phase is one phase as shown.
type Phase struct {
	Name    string  `json:"name"`
	Start   float64 `json:"start_s"` // seconds from the run start
	End     float64 `json:"end_s,omitempty"`
	Running bool    `json:"running"`
	Load    string  `json:"load"`
}

// SLAStatus is one requirement judged on the data so far.
type SLAStatus struct {
	Expr     string  `json:"expr"`
	Observed float64 `json:"observed"`
	Unit     string  `json:"unit"`
	Status   string  `json:"status"` // holding, broken, no data, invalid
}

// Done is sent once the report is written.
type Done struct {
	Verdict string `json:"verdict"` // summary.json's verdict
	Passed  bool   `json:"passed"`
	Report  string `json:"report"`
}

// Add takes one second. The aggregates are always updated; the page state
// (tables, SLA, SVG charts, JSON) is rendered only while a page watches, or
// when one connects — nobody watching costs almost nothing.
func (v *View) Add(s *output.Snapshot) error {
	v.amu.Lock()
	defer v.amu.Unlock()
	v.update(s)
	v.last, v.dirty = s, true
	if v.watchers.Load() > 0 {
		return v.renderLocked()
	}
	return nil
}

// renderLocked renders the last snapshot's state and publishes it; v.amu
// is held.
func (v *View) renderLocked() error {
	if !v.dirty || v.last == nil {
		return nil
	}
	v.dirty = false
	b, err := json.Marshal(v.render(v.last))
	if err != nil {
		return fmt.Errorf("live view state: %w", err)
	}
	v.publish(b)
	return nil
}

// current brings the published state up to date (a page connected).
func (v *View) current() {
	v.amu.Lock()
	_ = v.renderLocked()
	v.amu.Unlock()
}

func (v *View) update(s *output.Snapshot) {
	if v.start.IsZero() && !s.Start.IsZero() {
		v.start = s.Start
	}
	sec := second{t: s.Time}
	if v.secAgg == nil {
		v.secAgg = metrics.NewAgg()
	}
	secAgg := v.secAgg
	secAgg.Reset()
	for i := range s.Series {
		x := &s.Series[i]
		if x.Tx {
			continue
		}
		name := x.Label
		if v.opt.MultiWorkload && x.Workload != "" {
			name = x.Workload + ": " + x.Label
		}
		addSeries(v.agg(v.labels, name), x)
		if x.Phase != "" {
			if v.byPhase[x.Phase] == nil {
				v.byPhase[x.Phase] = map[string]*metrics.Agg{}
			}
			addSeries(v.agg(v.byPhase[x.Phase], name), x)
			addSeries(v.agg(v.byPhase[x.Phase], core.TotalLabel), x)
		}
		addSeries(v.total, x)
		addSeries(secAgg, x)
	}
	for _, w := range s.Workloads {
		sec.users += int64(w.Users)
		v.dropped += w.Dropped
	}
	if !s.Final || len(s.Series) > 0 {
		sec.count, sec.errors = secAgg.Count, secAgg.Errors
		sec.p50, sec.p95, sec.p99, sec.meanMs = secAgg.QuantileMs(50), secAgg.QuantileMs(95), secAgg.QuantileMs(99), secAgg.MeanMs()
		v.seconds = append(v.seconds, sec)
		v.lastTime = s.Time.Add(time.Second)
	}
}

func (v *View) agg(m map[string]*metrics.Agg, k string) *metrics.Agg {
	a := m[k]
	if a == nil {
		a = metrics.NewAgg()
		m[k] = a
	}
	return a
}

// addSeries adds a snapshot series into an aggregate (work proportional to
// its populated buckets, no allocation).
func addSeries(a *metrics.Agg, x *output.Series) {
	if x.Count > 0 {
		a.MinUs = min(a.MinUs, x.MinUs)
		a.MaxUs = max(a.MaxUs, x.MaxUs)
	}
	a.Count += x.Count
	a.SumUs += x.SumUs
	a.Sent += x.Sent
	a.Recv += x.Recv
	a.Errors += x.Errors
	x.Hist.AddTo(a.Hist)
}

func (v *View) publish(b []byte) {
	v.mu.Lock()
	v.state = b
	v.version++
	close(v.changed)
	v.changed = make(chan struct{})
	v.mu.Unlock()
}

func (v *View) elapsed() float64 {
	if v.start.IsZero() || v.lastTime.IsZero() {
		return 0
	}
	return math.Max(v.lastTime.Sub(v.start).Seconds(), 0)
}

func row(name string, a *metrics.Agg, span float64) Row {
	r := Row{Label: name, Count: a.Count, Errors: a.Errors}
	if a.Count == 0 {
		return r
	}
	st := a.Stats(name, false, 0)
	r.ErrorPct, r.MeanMs, r.P50Ms, r.P90Ms, r.P95Ms, r.P99Ms, r.MaxMs = st.ErrorPct, st.MeanMs, st.P50Ms, st.P90Ms, st.P95Ms, st.P99Ms, st.MaxMs
	if span > 0 {
		r.RPS = math.Round(float64(a.Count)/span*100) / 100
	}
	return r
}

func (v *View) render(s *output.Snapshot) *State {
	el := v.elapsed()
	st := &State{Name: v.opt.Name, Final: s.Final, Elapsed: math.Round(el*10) / 10, Dropped: v.dropped}
	if n := len(v.seconds); n > 0 && !s.Final {
		st.Users = v.seconds[n-1].users
	}
	st.Total = row(core.TotalLabel, v.total, el)
	names := make([]string, 0, len(v.labels))
	for n := range v.labels {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		st.Labels = append(st.Labels, row(n, v.labels[n], el))
	}
	for _, p := range s.Phases {
		ph := Phase{Name: p.Name, Start: p.Start.Sub(v.start).Seconds(), Running: p.End == nil && !s.Final}
		if p.End != nil {
			ph.End = p.End.Sub(v.start).Seconds()
		}
		switch {
		case p.Rate > 0:
			ph.Load = fmt.Sprintf("%g/s", p.Rate)
		case p.Users > 0:
			ph.Load = fmt.Sprintf("%d users", p.Users)
		}
		if ph.Running {
			st.Phase = p.Name
		}
		st.Phases = append(st.Phases, ph)
	}
	st.SLA = v.judge(el)
	st.Charts = v.charts(s)
	return st
}

// judge checks each requirement on the data so far, over the run or, for a
// requirement scoped to a phase, over that phase.
func (v *View) judge(el float64) []SLAStatus {
	var out []SLAStatus
	for _, e := range v.exprs {
		a := v.total
		span := el
		if e.Label != "" {
			a = v.labels[e.Label]
		}
		if e.Phase != "" {
			m := v.byPhase[e.Phase]
			a = nil
			if m != nil {
				k := e.Label
				if k == "" {
					k = core.TotalLabel
				}
				a = m[k]
			}
		}
		st := SLAStatus{Expr: e.Text, Unit: e.Unit(), Status: "no data"}
		if e.Metric == sla.Checks || e.IsServer() {
			// Check outcomes are counted, and server logs read, at the
			// end of the run.
			a = nil
		}
		if a != nil && a.Count > 0 {
			switch e.Metric {
			case sla.ErrorRate:
				st.Observed = 100 * float64(a.Errors) / float64(a.Count)
			case sla.Throughput:
				if span > 0 {
					st.Observed = float64(a.Count) / span
				}
			default:
				switch e.Stat {
				case "avg":
					st.Observed = a.MeanMs()
				case "min":
					st.Observed = float64(a.MinUs) / 1000
				case "max":
					st.Observed = float64(a.MaxUs) / 1000
				default:
					var p float64
					fmt.Sscanf(e.Stat, "p%g", &p)
					st.Observed = a.QuantileMs(p)
				}
			}
			st.Observed = math.Round(st.Observed*1000) / 1000
			st.Status = "holding"
			if !e.Holds(st.Observed) {
				st.Status = "broken"
			}
		}
		out = append(out, st)
	}
	for _, b := range v.bad {
		out = append(out, SLAStatus{Expr: b, Status: "invalid"})
	}
	return out
}

// charts draws the report's time-series charts over the seconds so far.
func (v *View) charts(s *output.Snapshot) []string {
	n := len(v.seconds)
	x := make([]float64, n)
	rps, errs, users, p50, p95, p99 := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, sc := range v.seconds {
		x[i] = float64(sc.t.Unix())
		rps[i], errs[i], users[i] = float64(sc.count), float64(sc.errors), float64(sc.users)
		p50[i], p95[i], p99[i] = sc.p50, sc.p95, sc.p99
		if sc.count == 0 {
			p50[i], p95[i], p99[i] = math.NaN(), math.NaN(), math.NaN()
		}
	}
	var xmin, xmax float64
	if n > 0 {
		xmin, xmax = x[0], x[n-1]+1
	}
	var spans []chart.Span
	for _, p := range s.Phases {
		end := xmax
		if p.End != nil {
			end = float64(p.End.Unix())
		}
		spans = append(spans, chart.Span{From: float64(p.Start.Unix()), To: end, Label: p.Name})
	}
	mk := func(id, title string, y chart.Axis, series ...chart.Series) string {
		c := &chart.Chart{ID: id, Title: title, XKind: chart.Time, XMin: xmin, XMax: xmax, XLabel: "Time (UTC)",
			Y: y, Series: series, Spans: spans, Height: 260, Empty: "waiting for the first second"}
		return string(c.SVG())
	}
	// Long runs are cut into at most 600 buckets per chart, with min/max
	// envelopes, as the report does; counts weight the latency means.
	w := chart.BucketWidth(xmax-xmin, 1, 600)
	weights := rps
	ser := func(name, color string, y, wt []float64, style chart.Style) chart.Series {
		if w <= 1 {
			return chart.Series{Name: name, Color: color, X: x, Y: y, Style: style}
		}
		r := chart.Reduce(x, y, wt, xmin, xmax, w)
		cs := chart.Series{Name: name, Color: color, X: r.X, Y: r.Mean, Style: style}
		if r.Reduced {
			cs.Lo, cs.Hi = r.Lo, r.Hi
		}
		return cs
	}
	return []string{
		mk("live-throughput", "Throughput and errors", chart.Axis{Label: "Requests per second", Unit: "req/s"},
			ser("requests/s", "", rps, nil, chart.Line), ser("errors/s", "#e15759", errs, nil, chart.Line)),
		mk("live-latency", "Response time per second", chart.Axis{Label: "Response time (ms)", Unit: "ms"},
			ser("p50", "", p50, weights, chart.Line), ser("p95", "", p95, weights, chart.Line), ser("p99", "", p99, weights, chart.Line)),
		mk("live-users", "Active users", chart.Axis{Label: "Users", Unit: ""}, ser("users", "", users, nil, chart.Area)),
	}
}

// Finish marks the report as written; the page shows the verdict.
func (v *View) Finish(verdict string, passed bool, report string) {
	v.current()
	v.mu.Lock()
	var st map[string]any
	_ = json.Unmarshal(v.state, &st)
	v.mu.Unlock()
	if st == nil {
		st = map[string]any{}
	}
	st["done"] = Done{Verdict: verdict, Passed: passed, Report: report}
	st["final"] = true
	b, _ := json.Marshal(st)
	v.publish(b)
}

// Close does nothing: the page keeps showing the last state.
func (v *View) Close() error { return nil }

// Handler serves the page (/), the event stream (/events) and the stop
// button (/stop, POST with the page's token).
func (v *View) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'")
		_ = page.Execute(w, map[string]any{"Name": v.opt.Name, "Token": v.token, "CanStop": v.opt.Stop != nil})
	})
	mux.HandleFunc("/events", v.events)
	mux.HandleFunc("/state", func(w http.ResponseWriter, r *http.Request) {
		v.current()
		v.mu.Lock()
		b := v.state
		v.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
	mux.HandleFunc("/stop", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("X-Plateau-Stop") != v.token || v.opt.Stop == nil {
			http.Error(w, "stop needs POST from the live page", http.StatusForbidden)
			return
		}
		v.mu.Lock()
		first := !v.stopped
		v.stopped = true
		v.mu.Unlock()
		if first {
			v.opt.Stop()
		}
		w.WriteHeader(http.StatusAccepted)
	})
	return mux
}

// events streams the state: the current one at once, then each new one.
func (v *View) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	v.watchers.Add(1)
	defer v.watchers.Add(-1)
	v.current()
	seen := -1
	for {
		v.mu.Lock()
		b, ver, ch := v.state, v.version, v.changed
		v.mu.Unlock()
		if ver != seen {
			seen = ver
			if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
				return
			}
			fl.Flush()
		}
		select {
		case <-ch:
		case <-r.Context().Done():
			return
		case <-time.After(15 * time.Second):
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		}
	}
}
