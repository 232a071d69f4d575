package study

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report"
)

// Study is the result of a study: every number in the document, for
// study.json.
type Study struct {
	Title       string     `json:"title"`
	Description string     `json:"description,omitempty"`
	System      []KV       `json:"system,omitempty"`
	Environment []KV       `json:"environment,omitempty"`
	Method      string     `json:"method,omitempty"`
	Hypothesis  string     `json:"hypothesis,omitempty"`
	Baseline    string     `json:"baseline"`
	Kind        string     `json:"kind"` // series (load levels differ) or repeats
	Runs        []Run      `json:"runs"`
	Labels      []Label    `json:"labels"`
	Resources   []Resource `json:"resources,omitempty"`
	Repeats     *Spread    `json:"repeat_spread,omitempty"`
	// Capacity is each stepped run's knee, USL peak and highest load
	// meeting the SLA, side by side; for a load series, one more row
	// analyses the runs as the steps of one sweep ("all runs").
	Capacity []Capacity `json:"capacity,omitempty"`
	// Conclusions are computed; Findings and Recommendations come from
	// the --notes file.
	Conclusions     []string `json:"conclusions"`
	Findings        []string `json:"findings,omitempty"`
	Recommendations []string `json:"recommendations,omitempty"`
}

// Run is one row of the runs table.
type Run struct {
	Name          string  `json:"name"`
	Role          string  `json:"role"`
	Dir           string  `json:"dir"`
	Load          string  `json:"load,omitempty"`
	DurationS     float64 `json:"duration_s"`
	Requests      int64   `json:"requests"`
	ThroughputRPS float64 `json:"throughput_rps"`
	ErrorPct      float64 `json:"error_pct"`
	MeanMs        float64 `json:"mean_ms"`
	P95Ms         float64 `json:"p95_ms"`
	Verdict       string  `json:"verdict"`
	users         int
	rate          float64
}

// Label is one label across all runs.
type Label struct {
	Label string      `json:"label"`
	Cells []LabelCell `json:"runs"` // one per run, in run order
}

// LabelCell is one label in one run, against the baseline.
type LabelCell struct {
	Run      string          `json:"run"`
	Present  bool            `json:"present"`
	MeanMs   float64         `json:"mean_ms"`
	P95Ms    float64         `json:"p95_ms"`
	DeltaPct float64         `json:"delta_pct"` // mean, against the baseline
	Verdict  compare.Verdict `json:"verdict,omitempty"`
}

// Resource is one monitored target's CPU and memory in each run.
type Resource struct {
	Target string        `json:"target"`
	Runs   []ResourceRun `json:"runs"`
}

// ResourceRun is a target's CPU % and memory in one run (NaN-free: Has*
// say whether the run measured them).
type ResourceRun struct {
	Run        string  `json:"run"`
	HasCPU     bool    `json:"has_cpu"`
	CPUMeanPct float64 `json:"cpu_mean_pct,omitzero"`
	CPUMaxPct  float64 `json:"cpu_max_pct,omitzero"`
	HasMem     bool    `json:"has_memory"`
	MemMeanMB  float64 `json:"memory_mean_mb,omitzero"`
	MemMaxMB   float64 `json:"memory_max_mb,omitzero"`
}

// Spread is the spread of repeats (the baseline and the runs with role
// repeat) in average response time of all requests.
type Spread struct {
	Runs     []string `json:"runs"`
	MeanMs   float64  `json:"mean_ms"`
	SDMs     float64  `json:"sd_ms"`
	CVPct    float64  `json:"cv_pct"`
	Outliers []string `json:"outliers,omitempty"`
}

// Build loads the study's runs and computes everything the document shows.
func Build(f *File, notes *Notes) (*Study, error) {
	sets := make([]*analysis.Dataset, len(f.Runs))
	facts := make([]compare.RunFacts, len(f.Runs))
	for i, r := range f.Runs {
		d, err := analysis.Load(f.DirOf(r))
		if err != nil {
			return nil, fmt.Errorf("%s:%d: run %s: %w", f.Path, r.Line, r.Dir, err)
		}
		sets[i] = d
		facts[i] = report.Facts(d, r.Dir, r.Name)
	}
	names := compare.Names(facts)
	bi := slices.IndexFunc(f.Runs, func(r RunRef) bool { return r.Role == Baseline })
	if bi < 0 {
		bi = 0
	}
	nrep := 0
	for i, r := range f.Runs {
		if r.Name == "" && r.Role == Repeat {
			nrep++
			names[i] = fmt.Sprintf("repeat %d", nrep)
		}
	}
	// Context the study file does not give comes from the baseline's plan.
	if c := sets[bi].Info.Context; c != nil {
		fill := func(dst *string, v string) {
			if *dst == "" {
				*dst = v
			}
		}
		fill(&f.Description, c.Description)
		fill(&f.Method, c.Method)
		fill(&f.Hypothesis, c.Hypothesis)
		if len(f.System) == 0 {
			f.System = sortedKV(c.System)
		}
		if len(f.Environment) == 0 {
			f.Environment = sortedKV(c.Environment)
		}
	}
	s := &Study{Title: f.Title, Description: f.Description, System: f.System, Environment: f.Environment, Method: f.Method,
		Hypothesis: f.Hypothesis, Baseline: names[bi], Kind: string(compare.Classify(facts))}
	if s.Title == "" {
		s.Title = "Study: " + strings.Join(names, ", ")
	}
	for i, d := range sets {
		st := d.Total.Stats(core.TotalLabel, false, d.Span())
		sum := analysis.Summarize(d, d.Info.SLA)
		if c, ok := runCapacity(names[i], d, sum); ok {
			s.Capacity = append(s.Capacity, c)
		}
		s.Runs = append(s.Runs, Run{Name: names[i], Role: f.Runs[i].Role, Dir: f.Runs[i].Dir, Load: facts[i].Load(),
			DurationS: math.Round(d.Span().Seconds()*10) / 10, Requests: d.Total.Count, ThroughputRPS: st.ThroughputRPS,
			ErrorPct: st.ErrorPct, MeanMs: st.MeanMs, P95Ms: st.P95Ms, Verdict: sum.Verdict, users: facts[i].Users, rate: facts[i].Rate})
	}
	if s.Kind == string(compare.Series) {
		var pts []knee.Point
		k := knee.Users
		for i, r := range s.Runs {
			load := float64(facts[i].Users)
			if facts[i].Users == 0 {
				load, k = facts[i].Rate, knee.Rate
			}
			pts = append(pts, knee.Point{Load: load, ThroughputRPS: r.ThroughputRPS, MeanMs: r.MeanMs, P95Ms: r.P95Ms, SLAMet: r.Verdict == "passed"})
		}
		if c, ok := capacityOf("all runs (as one sweep)", pts, k); ok {
			s.Capacity = append(s.Capacity, c)
		}
	}
	// Per label: each run against the baseline, whole run.
	base := sets[bi]
	idx := map[string]int{}
	for _, k := range base.Labels() {
		idx[base.LabelName(k)] = len(s.Labels)
		s.Labels = append(s.Labels, Label{Label: base.LabelName(k), Cells: make([]LabelCell, len(sets))})
	}
	idx[core.TotalLabel] = len(s.Labels)
	s.Labels = append(s.Labels, Label{Label: core.TotalLabel, Cells: make([]LabelCell, len(sets))})
	for i, d := range sets {
		for li := range s.Labels {
			s.Labels[li].Cells[i].Run = names[i]
		}
		if i == bi {
			for _, k := range d.Labels() {
				if li, ok := idx[d.LabelName(k)]; ok {
					st := d.Run[k].Stats(d.LabelName(k), false, d.Span())
					s.Labels[li].Cells[i] = LabelCell{Run: names[i], Present: d.Run[k].Count > 0, MeanMs: st.MeanMs, P95Ms: st.P95Ms}
				}
			}
			st := d.Total.Stats(core.TotalLabel, false, d.Span())
			s.Labels[idx[core.TotalLabel]].Cells[i] = LabelCell{Run: names[i], Present: d.Total.Count > 0, MeanMs: st.MeanMs, P95Ms: st.P95Ms}
			continue
		}
		for _, row := range analysis.Compare(base, d, nil) {
			if row.Phase != "run" {
				continue
			}
			if li, ok := idx[row.Label]; ok {
				s.Labels[li].Cells[i] = LabelCell{Run: names[i], Present: true, MeanMs: row.NewMeanMs, P95Ms: row.NewP95Ms,
					DeltaPct: row.DeltaPct, Verdict: row.Verdict}
			}
		}
	}
	// Resources per monitored target.
	tidx := map[string]int{}
	for i, d := range sets {
		series, _, err := mondata.Read(d.Dir)
		if err != nil {
			return nil, fmt.Errorf("run %s: reading monitor data: %w", f.Runs[i].Dir, err)
		}
		for _, r := range resourcesOf(series, d.Start, d.End) {
			ti, ok := tidx[r.target]
			if !ok {
				ti = len(s.Resources)
				tidx[r.target] = ti
				s.Resources = append(s.Resources, Resource{Target: r.target, Runs: make([]ResourceRun, len(sets))})
				for j := range sets {
					s.Resources[ti].Runs[j].Run = names[j]
				}
			}
			r.rr.Run = names[i]
			s.Resources[ti].Runs[i] = r.rr
		}
	}
	// Repeat spread: the baseline and its repeats.
	var rep []int
	for i, r := range f.Runs {
		if r.Role == Repeat || (i == bi && slices.ContainsFunc(f.Runs, func(r RunRef) bool { return r.Role == Repeat })) {
			rep = append(rep, i)
		}
	}
	if len(rep) >= 2 {
		s.Repeats = repeatSpread(s.Runs, rep)
	}
	s.Conclusions = conclusions(s, bi)
	if notes != nil {
		s.Findings, s.Recommendations = notes.Findings, notes.Recommendations
	}
	return s, nil
}

type targetRes struct {
	target string
	rr     ResourceRun
}

// resourcesOf gives each target's CPU % and memory over [from, to].
func resourcesOf(series []core.Series, from, to time.Time) []targetRes {
	byTarget := map[string]map[string]*core.Series{}
	var order []string
	for i := range series {
		sr := &series[i]
		if byTarget[sr.Target] == nil {
			byTarget[sr.Target] = map[string]*core.Series{}
			order = append(order, sr.Target)
		}
		byTarget[sr.Target][sr.Metric] = sr
	}
	var out []targetRes
	for _, t := range order {
		m := byTarget[t]
		var r ResourceRun
		if sr := first(m, "cpu_busy_pct", "cpu_pct"); sr != nil {
			r.CPUMeanPct, r.CPUMaxPct, r.HasCPU = meanMax(sr, from, to, 1, 0)
		} else if sr := m["cpu_idle_pct"]; sr != nil {
			mean, mx, ok := meanMax(sr, from, to, -1, 100) // busy = 100 − idle
			r.CPUMeanPct, r.CPUMaxPct, r.HasCPU = mean, mx, ok
		}
		if sr := first(m, "mem_used_bytes", "rss_bytes", "memory_bytes", "heap_used_bytes"); sr != nil {
			mean, mx, ok := meanMax(sr, from, to, 1.0/1e6, 0)
			r.MemMeanMB, r.MemMaxMB, r.HasMem = mean, mx, ok
		}
		if r.HasCPU || r.HasMem {
			out = append(out, targetRes{t, r})
		}
	}
	return out
}

func first(m map[string]*core.Series, names ...string) *core.Series {
	for _, n := range names {
		if s := m[n]; s != nil && len(s.Points) > 0 {
			return s
		}
	}
	return nil
}

// meanMax is the mean and max of a·v+b over the finite points in [from, to].
func meanMax(s *core.Series, from, to time.Time, a, b float64) (mean, mx float64, ok bool) {
	var sum float64
	n := 0
	mx = math.Inf(-1)
	for _, p := range s.Points {
		if p.T.Before(from) || p.T.After(to) || math.IsNaN(p.V) || math.IsInf(p.V, 0) {
			continue
		}
		v := a*p.V + b
		sum += v
		mx = max(mx, v)
		n++
	}
	if n == 0 {
		return 0, 0, false
	}
	return round2(sum / float64(n)), round2(mx), true
}

// repeatSpread is the spread of the runs' average response time; an
// outlier is a run further from the median than 3 scaled median absolute
// deviations and 5 % of the median (robust to the outlier itself, which
// a mean ± k·sd rule with four runs is not).
func repeatSpread(runs []Run, idx []int) *Spread {
	v := make([]float64, len(idx))
	sp := &Spread{}
	for j, i := range idx {
		v[j] = runs[i].MeanMs
		sp.Runs = append(sp.Runs, runs[i].Name)
	}
	var sum float64
	for _, x := range v {
		sum += x
	}
	mean := sum / float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(len(v)-1))
	sp.MeanMs, sp.SDMs = round2(mean), round2(sd)
	if mean > 0 {
		sp.CVPct = round2(100 * sd / mean)
	}
	med := median(v)
	dev := make([]float64, len(v))
	for j, x := range v {
		dev[j] = math.Abs(x - med)
	}
	mad := 1.4826 * median(dev)
	for j, x := range v {
		if d := math.Abs(x - med); d > 3*mad && d > 0.05*med && len(v) >= 3 {
			sp.Outliers = append(sp.Outliers, sp.Runs[j])
		}
	}
	return sp
}

func median(v []float64) float64 {
	c := slices.Clone(v)
	sort.Float64s(c)
	n := len(c)
	if n%2 == 1 {
		return c[n/2]
	}
	return (c[n/2-1] + c[n/2]) / 2
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// conclusions states what the study found, one sentence each.
func conclusions(s *Study, bi int) []string {
	var out []string
	total := s.Labels[len(s.Labels)-1]
	for i, r := range s.Runs {
		if i == bi || r.Role == Repeat {
			continue
		}
		c := total.Cells[i]
		if !c.Present || c.Verdict == "" {
			continue
		}
		out = append(out, report.Sentence(fmt.Sprintf("%s: all requests %s %s", r.Name, compare.VerdictPhrase(compare.Verdict(c.Verdict)), s.Baseline),
			fmt.Sprintf("average %.1f ms → %.1f ms (%s), throughput %.2f → %.2f req/s", total.Cells[bi].MeanMs, c.MeanMs, signedPct(c.DeltaPct), s.Runs[bi].ThroughputRPS, r.ThroughputRPS)))
		var worse []string
		for _, l := range s.Labels[:len(s.Labels)-1] {
			if l.Cells[i].Verdict == compare.Slower {
				worse = append(worse, fmt.Sprintf("%s (%s)", l.Label, signedPct(l.Cells[i].DeltaPct)))
			}
		}
		if len(worse) > 0 {
			out = append(out, report.Sentence(fmt.Sprintf("%s is slower than %s on %s", r.Name, s.Baseline, strings.Join(worse, ", "))))
		}
	}
	if sp := s.Repeats; sp != nil {
		out = append(out, report.Sentence(fmt.Sprintf("the %d repeats vary by %.1f %% (coefficient of variation of the average, %.1f ± %.1f ms)", len(sp.Runs), sp.CVPct, sp.MeanMs, sp.SDMs),
			outlierClause(sp.Outliers)))
	}
	if s.Kind == string(compare.Series) {
		out = append(out, report.Sentence("the runs are at different load levels: read them as a curve against load (runs table), not as repeats"))
	}
	return out
}

func outlierClause(o []string) string {
	switch len(o) {
	case 0:
		return "no run is an outlier"
	case 1:
		return o[0] + " is an outlier"
	}
	return strings.Join(o, ", ") + " are outliers"
}

func sortedKV(m map[string]string) []KV {
	var out []KV
	for k, v := range m {
		out = append(out, KV{k, v})
	}
	slices.SortFunc(out, func(a, b KV) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// signedPct writes a change in per cent with its sign, and an unsigned
// "0.0 %" when it rounds to zero (never "+0.0 %" or "-0.0 %").
func signedPct(v float64) string {
	if math.Abs(v) < 0.05 {
		return "0.0 %"
	}
	return fmt.Sprintf("%+.1f %%", v)
}
