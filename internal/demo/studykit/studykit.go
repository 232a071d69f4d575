// Package studykit is what the reference-study demos (plateau demo
// 001…004) share: starting the bundled services as child processes,
// running a plan into a run directory, reading a run's figures, and
// writing one study document whose reference-shaped tables come first,
// followed by plateau's own study sections (internal/study).
package studykit

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/demo"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/study"
)

// Scale is how big a demo runs.
type Scale int

// Scales: Short is the CI setting (about a minute), Default the demo a
// user runs (a few minutes), Full the reference's own durations and sizes.
const (
	Short Scale = iota
	Default
	Full
)

// Pick returns the value for the scale.
func Pick[T any](s Scale, short, def, full T) T {
	switch s {
	case Short:
		return short
	case Full:
		return full
	}
	return def
}

// RunPlanFunc runs the plan into the run directory out with --set
// overrides and --monitor targets; an SLA that fails is not an error.
type RunPlanFunc func(ctx context.Context, plan, out string, sets, monitors []string) error

// Env is what a study demo gets from the command line.
type Env struct {
	Exe      string // the plateau binary (services are "plateau demo serve-study …")
	Dir      string // the demo's output directory
	Scale    Scale
	Postgres string // a PostgreSQL DSN the user pointed the demo at ("" = embedded store)
	// Progress gets one line per step (nil: none); Stderr the services'
	// own error output.
	Progress io.Writer
	Stderr   io.Writer
	RunPlan  RunPlanFunc
	Tool     string // "plateau v…", for the document
	// Lang is the study document's language (plateau demo --lang); ""
	// keeps the study's own (English for 001–004, as their references).
	Lang string
	// Study is the study Write built last (its status and answers, for
	// the console).
	Study *study.Study
}

// Logf prints one progress line.
func (e *Env) Logf(format string, a ...any) {
	if e.Progress != nil {
		fmt.Fprintf(e.Progress, "plateau demo: "+format+"\n", a...)
	}
}

// LogDir is the directory for the services' logs (created).
func (e *Env) LogDir() (string, error) {
	d := filepath.Join(e.Dir, "logs")
	return d, os.MkdirAll(d, 0o755)
}

// Services are the child processes of one demo.
type Services struct {
	env   *Env
	stack demo.Stack
}

// NewServices returns an empty set of services; Stop ends them all.
func (e *Env) NewServices() *Services { return &Services{env: e} }

// Start starts "plateau demo serve-study KIND ARGS…" as the service name
// and waits until it answers /health.
func (s *Services) Start(ctx context.Context, name, kind string, args ...string) (*demo.Proc, error) {
	full := append([]string{"demo", "serve-study", kind, "--name", name}, args...)
	p, err := s.stack.StartCommand(ctx, s.env.Exe, name, full, nil, s.env.Stderr)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return p, nil
}

// Stop ends every service (SIGTERM, then SIGKILL after 5 s).
func (s *Services) Stop() { s.stack.Stop(); s.stack.Procs = nil }

// Monitors are --monitor targets for the services by pid, and the
// generator's host (role generator: the machine the generator runs on,
// whose health is the generator's, not a service's).
func (s *Services) Monitors() []string {
	out := []string{"host:name=generator-host,role=generator"}
	for _, p := range s.stack.Procs {
		out = append(out, fmt.Sprintf("process:name=%s,pid=%d", p.Name, p.Cmd.Process.Pid))
	}
	return out
}

// URL is a service's base URL.
func URL(p *demo.Proc) string { return "http://" + p.Addr }

// WriteFile writes b to dir/name, creating dir.
func WriteFile(dir, name string, b []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	return p, os.WriteFile(p, b, 0o644)
}

// Run is one run of a study: its directory, role and name in the document.
type Run struct {
	Dir, Role, Name string
	// Factors are what the run varies (release, workload, config,
	// repeat, users, rate), written into study.yaml.
	Factors study.Factors
	Data    *analysis.Dataset
}

// Do runs plan into dir/runs/<slug> and loads the result.
func (e *Env) Do(ctx context.Context, plan, slug, role, name string, sets, monitors []string) (*Run, error) {
	out := filepath.Join(e.Dir, "runs", slug)
	e.Logf("run %s (%s)…", name, slug)
	start := time.Now()
	if err := e.RunPlan(ctx, plan, out, sets, monitors); err != nil {
		return nil, fmt.Errorf("run %s: %w", name, err)
	}
	d, err := analysis.Load(out)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", name, err)
	}
	e.Logf("run %s done in %.0f s: %d requests", name, time.Since(start).Seconds(), d.Total.Count)
	return &Run{Dir: out, Role: role, Name: name, Data: d}, nil
}

// Context is the study's context for study.yaml, with its questions and
// the system's configured limits.
type Context struct {
	Title, Description, Method, Hypothesis string
	System, Environment                    []study.KV
	Questions                              []study.Question
	Limits                                 []study.Limit
}

// Write builds the study over runs with plateau's study package, puts the
// reference-shaped sections (ref of the built study) first (after the context) and plateau's own
// sections after them, and writes study.html/md/json/junit and study.yaml
// (rerunnable with `plateau study`) into dir/study. It returns the
// study's directory.
func (e *Env) Write(c Context, runs []*Run, ref func(*study.Study) []doc.Section) (string, *study.Study, error) {
	out := filepath.Join(e.Dir, "study")
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", nil, err
	}
	sf, err := studyYAML(c, runs, out)
	if err != nil {
		return "", nil, err
	}
	f, err := study.Load(sf)
	if err != nil {
		return "", nil, err
	}
	if e.Lang != "" {
		f.Lang = e.Lang
	}
	s, err := study.Build(f, nil)
	if err != nil {
		return "", nil, err
	}
	e.Study = s
	d := study.Document(s, time.Now(), e.Tool)
	// The reference's sections are built from the study, so a figure
	// they share with its answers is the answers' own.
	d.Sections = compose(d.Sections, ref(s))
	if _, err := study.Write(out, s, d, []string{"html", "md", "json", "junit"}); err != nil {
		return "", nil, err
	}
	return out, s, nil
}

// compose keeps the study's answers, validity banner and context first,
// puts ref after them and plateau's own sections last.
func compose(own, ref []doc.Section) []doc.Section {
	var out []doc.Section
	i := 0
	for i < len(own) && (own[i].ID == "answers" || own[i].ID == "validity" || own[i].ID == "context") {
		out, i = append(out, own[i]), i+1
	}
	out = append(out, ref...)
	for _, s := range own[i:] {
		s.Title = "plateau: " + s.Title
		out = append(out, s)
	}
	return out
}

func studyYAML(c Context, runs []*Run, dir string) (string, error) {
	type runRef struct {
		Dir     string         `yaml:"dir"`
		Role    string         `yaml:"role"`
		Name    string         `yaml:"name"`
		Factors map[string]any `yaml:"factors,omitempty"`
	}
	kv := func(l []study.KV) yaml.Node {
		n := yaml.Node{Kind: yaml.MappingNode}
		for _, x := range l {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: x.Name}, &yaml.Node{Kind: yaml.ScalarNode, Value: x.Value, Style: yaml.DoubleQuotedStyle})
		}
		return n
	}
	v := struct {
		Title       string           `yaml:"title"`
		Description string           `yaml:"description,omitempty"`
		System      yaml.Node        `yaml:"system,omitempty"`
		Environment yaml.Node        `yaml:"environment,omitempty"`
		Method      string           `yaml:"method,omitempty"`
		Hypothesis  string           `yaml:"hypothesis,omitempty"`
		Questions   []map[string]any `yaml:"questions,omitempty"`
		Limits      map[string]any   `yaml:"limits,omitempty"`
		Runs        []runRef         `yaml:"runs"`
	}{Title: c.Title, Description: c.Description, Method: c.Method, Hypothesis: c.Hypothesis, System: kv(c.System), Environment: kv(c.Environment)}
	for _, q := range c.Questions {
		v.Questions = append(v.Questions, questionMap(q))
	}
	if len(c.Limits) > 0 {
		v.Limits = map[string]any{}
		for _, l := range c.Limits {
			v.Limits[l.Name] = l.Value
		}
	}
	for _, r := range runs {
		rel, err := filepath.Rel(dir, r.Dir)
		if err != nil {
			return "", err
		}
		v.Runs = append(v.Runs, runRef{Dir: filepath.ToSlash(rel), Role: r.Role, Name: r.Name, Factors: factorsMap(r.Factors)})
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return "", err
	}
	return WriteFile(dir, "study.yaml", b)
}

// questionMap is a question as study.yaml writes it: its kind, its text
// and the expectations it sets.
func questionMap(q study.Question) map[string]any {
	m := map[string]any{"kind": string(q.Kind)}
	put := func(k string, v any, set bool) {
		if set {
			m[k] = v
		}
	}
	put("question", q.Text, q.Text != "")
	put("baseline", q.Baseline, q.Baseline != "")
	put("candidate", q.Candidate, q.Candidate != "")
	put("workload", q.Workload, q.Workload != "")
	put("other", q.Other, q.Other != "")
	put("max_slower_pct", q.MaxSlowerPct, q.MaxSlowerPct != 0)
	put("max_cv_pct", q.MaxCVPct, q.MaxCVPct != 0)
	put("max_drift_pct", q.MaxDriftPct, q.MaxDriftPct != 0)
	put("max_error_pct", q.MaxErrorPct, q.MaxErrorPct != 0)
	put("min_load", q.MinLoad, q.MinLoad != 0)
	put("sla", q.SLA, len(q.SLA) > 0)
	return m
}

// factorsMap is a run's factors as study.yaml writes them (nil: none).
func factorsMap(f study.Factors) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"release": f.Release, "workload": f.Workload, "config": f.Config, "repeat": f.Repeat} {
		if v != "" {
			m[k] = v
		}
	}
	if f.Users > 0 {
		m["users"] = f.Users
	}
	if f.Rate > 0 {
		m["rate"] = f.Rate
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// Stats are one label's figures in a run (or a part of it).
type Stats = core.LabelStats

// Label returns a label's whole-run figures (transactions included); ok
// is false when the run has no such label.
func (r *Run) Label(name string) (Stats, bool) {
	d := r.Data
	for _, k := range d.Labels() {
		if (d.LabelName(k) == name || k.Label == name) && !k.Derived {
			a := d.Run[k]
			return a.Stats(name, k.Tx, d.Span()), a.Count > 0
		}
	}
	return Stats{}, false
}

// Total is the run's all-requests figures.
func (r *Run) Total() Stats { return r.Data.Total.Stats(core.TotalLabel, false, r.Data.Span()) }

// LabelNames lists the run's labels in flow order (the order the flow
// calls them, transactions first), as the references list them.
func (r *Run) LabelNames() []string {
	var out []string
	for _, k := range study.FlowOrder(r.Data) {
		out = append(out, r.Data.LabelName(k))
	}
	return out
}

// Window is a span of a run.
type Window struct{ From, To time.Time }

// LabelWindow is a label's first and last second with samples.
func (r *Run) LabelWindow(name string) (Window, bool) {
	for k, ticks := range r.Data.Timeline {
		if (r.Data.LabelName(k) == name || k.Label == name) && len(ticks) > 0 {
			w := Window{From: ticks[0].T, To: ticks[len(ticks)-1].T.Add(time.Second)}
			for _, t := range ticks {
				if t.T.Before(w.From) {
					w.From = t.T
				}
				if t.T.Add(time.Second).After(w.To) {
					w.To = t.T.Add(time.Second)
				}
			}
			return w, true
		}
	}
	return Window{}, false
}

// Resource is a service's CPU (%) and memory (MB) over a window.
type Resource struct {
	CPUMean, CPUMax, MemMean, MemMax float64
	HasCPU, HasMem                   bool
}

// Resources reads the run's monitor data: per target, CPU and memory in w
// (the whole run when w is zero).
func (r *Run) Resources(w Window) (map[string]Resource, []string, error) {
	series, _, err := monitor.Read(r.Dir)
	if err != nil {
		return nil, nil, err
	}
	if w.From.IsZero() {
		w = Window{From: r.Data.Start, To: r.Data.End}
	}
	out := map[string]Resource{}
	var order []string
	for i := range series {
		s := &series[i]
		var cpu, mem bool
		switch s.Metric {
		case "cpu_pct", "cpu_busy_pct":
			cpu = true
		case "rss_bytes", "mem_used_bytes":
			mem = true
		default:
			continue
		}
		res, seen := out[s.Target]
		if !seen {
			order = append(order, s.Target)
		}
		scale := 1.0 // CPU in %
		if mem {
			scale = 1e-6 // bytes → MB
		}
		mean, mx, ok := meanMax(s.Points, w, scale)
		if ok && cpu && !res.HasCPU {
			res.CPUMean, res.CPUMax, res.HasCPU = mean, mx, true
		}
		if ok && mem && !res.HasMem {
			res.MemMean, res.MemMax, res.HasMem = mean, mx, true
		}
		out[s.Target] = res
	}
	return out, order, nil
}

func meanMax(pts []core.Point, w Window, scale float64) (mean, mx float64, ok bool) {
	var sum float64
	n := 0
	mx = math.Inf(-1)
	for _, p := range pts {
		if p.T.Before(w.From) || p.T.After(w.To) || math.IsNaN(p.V) || math.IsInf(p.V, 0) {
			continue
		}
		v := p.V * scale
		sum += v
		mx = max(mx, v)
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	return sum / float64(n), mx, true
}

// ErrorsByStatus counts a run's failed samples per HTTP status (0: no
// response) over all labels.
func (r *Run) ErrorsByStatus() map[int]int64 {
	out := map[int]int64{}
	for _, e := range r.Data.Errors {
		out[e.Status] += e.Count
	}
	return out
}

// Ms is a time in milliseconds: whole from 100 ms, as the references
// print their 2,000 ms times ("1868", no separator), and below that at
// the report's precision, about three significant figures ("42.7",
// "2.38", "0.42"), where whole milliseconds would print a 2.4 ms average
// and a 2.6 ms one both as "2".
func Ms(v float64) string {
	if math.Abs(v) >= 100 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return report.Ms(v)
}

// Number formats: one decimal, two decimals.
func F1(v float64) string  { return strconv.FormatFloat(v, 'f', 1, 64) }
func F2(v float64) string  { return strconv.FormatFloat(v, 'f', 2, 64) }
func Int(v int64) string   { return strconv.FormatInt(v, 10) }
func Pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) + "%" }

// SignedMs and SignedPct are deltas with their sign.
func SignedMs(v float64) string {
	s := Ms(v)
	if strings.Trim(s, "-0.") == "" {
		return "0"
	}
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}
func SignedPct(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64) + "%"
	if v > 0 {
		s = "+" + s
	}
	return s
}

// Table starts a table with the caption and column names; the first
// column is left-aligned, the others right-aligned.
func Table(caption string, cols ...string) *doc.Table {
	t := &doc.Table{Caption: caption}
	for i, c := range cols {
		a := doc.Right
		if i == 0 {
			a = doc.Left
		}
		t.Columns = append(t.Columns, doc.Column{Name: c, Align: a})
	}
	return t
}

// AddRow appends a row of texts.
func AddRow(t *doc.Table, cells ...string) {
	r := doc.Row{}
	for _, c := range cells {
		r.Cells = append(r.Cells, doc.Cell{Text: c})
	}
	t.Rows = append(t.Rows, r)
}

// Note is a secondary paragraph.
func Note(text string) *doc.Para { return &doc.Para{Note: true, Text: text} }

// Para is a paragraph.
func Para(text string) *doc.Para { return &doc.Para{Text: text} }

// Phases are the run's phases (load steps) in order.
func (r *Run) Phases() []core.Phase { return r.Data.Phases }

// PhaseLabel returns a label's figures in phase i.
func (r *Run) PhaseLabel(i int, name string) (Stats, bool) {
	d := r.Data
	if i < 0 || i >= len(d.ByPhase) {
		return Stats{}, false
	}
	for k, a := range d.ByPhase[i] {
		if (d.LabelName(k) == name || k.Label == name) && !k.Derived {
			return a.Stats(name, k.Tx, d.Phases[i].Duration()), a.Count > 0
		}
	}
	return Stats{}, false
}

// PhaseTotal is phase i's all-requests figures.
func (r *Run) PhaseTotal(i int) (Stats, bool) {
	d := r.Data
	if i < 0 || i >= len(d.PhaseTotal) || d.PhaseTotal[i] == nil {
		return Stats{}, false
	}
	return d.PhaseTotal[i].Stats(core.TotalLabel, false, d.Phases[i].Duration()), d.PhaseTotal[i].Count > 0
}

// SeriesMax is the largest value of target/metric in the run (ok false
// when the run has no such series).
func (r *Run) SeriesMax(target, metric string) (float64, bool, error) {
	series, _, err := monitor.Read(r.Dir)
	if err != nil {
		return 0, false, err
	}
	for i := range series {
		if s := &series[i]; s.Target == target && s.Metric == metric {
			_, mx, ok := meanMax(s.Points, Window{From: r.Data.Start, To: r.Data.End}, 1)
			return mx, ok, nil
		}
	}
	return 0, false, nil
}

// TopSQL returns the run's top statements of a database target by total
// time (at most n).
func (r *Run) TopSQL(target string, n int) ([]monitor.Statement, error) {
	all, err := monitor.ReadStatements(r.Dir)
	if err != nil {
		return nil, err
	}
	for _, st := range all {
		if st.Target == target {
			return st.Statements[:min(n, len(st.Statements))], nil
		}
	}
	return nil, nil
}

// Drift compares a label's average response time in the first and the
// last fifth of the run's seconds (the soak's drift) and the process's
// memory at its start and end.
func (r *Run) Drift(label string) (first, last float64, ok bool) {
	for k, ticks := range r.Data.Timeline {
		if (r.Data.LabelName(k) != label && k.Label != label) || k.Derived || len(ticks) < 5 {
			continue
		}
		n := len(ticks) / 5
		avg := func(ts []analysis.Tick) float64 {
			var sum float64
			var c int64
			for _, t := range ts {
				sum += t.MeanMs * float64(t.Count)
				c += t.Count
			}
			if c == 0 {
				return 0
			}
			return sum / float64(c)
		}
		return avg(ticks[:n]), avg(ticks[len(ticks)-n:]), true
	}
	return 0, 0, false
}

// Assess is a section's one-line assessment from its own table, as the
// references close each section ("Vurdering", "Here we can see …").
func Assess(text string) *doc.Verdict {
	return &doc.Verdict{Level: doc.Info, Text: "Assessment: " + text}
}

// Line is one named series of a chart.
type Line struct {
	Name  string
	Y     []float64
	Right bool
}

// LoadChart draws series against load (users, concurrency): response time
// and throughput per step, CPU per service per step.
func LoadChart(name, title, xLabel, yLabel, yUnit string, x []float64, lines []Line, y2Label, y2Unit string) *doc.Figure {
	c := &chart.Chart{ID: name, Title: title, XKind: chart.Linear, XLabel: xLabel, Y: chart.Axis{Label: yLabel, Unit: yUnit}}
	if y2Label != "" {
		c.Y2 = &chart.Axis{Label: y2Label, Unit: y2Unit}
	}
	for _, l := range lines {
		c.Series = append(c.Series, chart.Series{Name: l.Name, X: x, Y: l.Y, Style: chart.LinePoints, Right: l.Right})
	}
	return &doc.Figure{Name: name, Title: title, SVG: c.SVG()}
}

// ResourceChart draws each service's CPU (%) or memory (MB) over a run,
// the references' per-test charts; markers name the phases. Nil when the
// run has no such series.
func (r *Run) ResourceChart(name, title string, memory bool, services []string) *doc.Figure {
	series, _, err := monitor.Read(r.Dir)
	if err != nil {
		return nil
	}
	c := &chart.Chart{ID: name, Title: title, XKind: chart.Time, Y: chart.Axis{Label: "CPU (%)", Unit: "%"}}
	if memory {
		c.Y = chart.Axis{Label: "Memory (MB)", Unit: ""}
	}
	for _, svc := range services {
		for i := range series {
			s := &series[i]
			if s.Target != svc {
				continue
			}
			want := s.Metric == "cpu_pct" || s.Metric == "cpu_busy_pct"
			scale := 1.0
			if memory {
				want, scale = s.Metric == "rss_bytes" || s.Metric == "mem_used_bytes", 1e-6
			}
			if !want {
				continue
			}
			var xs, ys []float64
			for _, p := range s.Points {
				if p.T.Before(r.Data.Start) || p.T.After(r.Data.End) {
					continue
				}
				xs = append(xs, float64(p.T.UnixNano())/1e9)
				ys = append(ys, p.V*scale)
			}
			if len(xs) > 0 {
				c.Series = append(c.Series, chart.Series{Name: svc, X: xs, Y: ys})
			}
			break
		}
	}
	if len(c.Series) == 0 {
		return nil
	}
	for _, p := range r.Data.Phases {
		c.Spans = append(c.Spans, chart.Span{From: float64(p.Start.UnixNano()) / 1e9, To: float64(p.End.UnixNano()) / 1e9, Label: p.Name})
	}
	return &doc.Figure{Name: name, Title: title, SVG: c.SVG()}
}

// Planned is a workload's planned and started iterations (paced or open
// model; 0 when the run planned none), from the run's validity.
func (r *Run) Planned(workload string) (planned, started int64) {
	v := r.Data.JudgeValidity()
	for _, p := range v.Phases {
		if p.Workload == workload {
			planned += p.Planned
			started += p.Started
		}
	}
	return planned, started
}
