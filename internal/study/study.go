package study

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Study is the result of a study: every number in the document, for
// study.json.
type Study struct {
	// wd words the document in the study's language (lang: or --lang).
	wd          *words
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	System      []KV   `json:"system,omitempty"`
	Environment []KV   `json:"environment,omitempty"`
	Method      string `json:"method,omitempty"`
	Hypothesis  string `json:"hypothesis,omitempty"`
	Baseline    string `json:"baseline"`
	Kind        string `json:"kind"` // series (load levels differ) or repeats
	// Status is the study's outcome from its answers (passed, failed,
	// inconclusive); StatusWhy says why in one sentence.
	Status    Outcome `json:"status"`
	StatusWhy string  `json:"status_why"`
	// Answers are the study's questions answered, in the file's order
	// (or the inferred questions').
	Answers []Answer `json:"answers"`
	// Validity names the runs whose numbers are to be read with care:
	// the generator short of CPU, the load not held, far off its group.
	Validity []RunIssue `json:"validity,omitempty"`
	// Causes are each run's bottleneck and top errors per call.
	Causes []RunCauses `json:"causes,omitempty"`
	// Series are the load series: runs of one workload and variant at
	// different levels.
	Series []Series `json:"series,omitempty"`
	// Limits are the configured limits the study file states.
	Limits    []Limit    `json:"limits,omitempty"`
	Runs      []Run      `json:"runs"`
	Labels    []Label    `json:"labels"`
	Resources []Resource `json:"resources,omitempty"`
	// Repeats is the spread of the baseline and its repeats: one row for
	// runs of one workload, else one per workload.
	Repeats []Spread `json:"repeat_spread,omitempty"`
	// Capacity is each stepped run's knee, USL peak and highest load
	// meeting the SLA, side by side (a load series' capacity is its
	// capacity answer's).
	Capacity []Capacity `json:"capacity,omitempty"`
	// Conclusions are computed; Findings and Recommendations come from
	// the --notes file.
	Conclusions     []string `json:"conclusions"`
	Findings        []string `json:"findings,omitempty"`
	Recommendations []string `json:"recommendations,omitempty"`

	// reds mask each run's secrets (its plan's secret values): every
	// sentence that quotes a run's data passes its redactor, and Write
	// sweeps the files written with all of them.
	reds []*report.Redactor
	// charts are each run's CPU and memory per service, for the
	// resources section.
	charts []runChart
}

// Run is one row of the runs table.
type Run struct {
	Name string `json:"name"`
	Role string `json:"role"`
	Dir  string `json:"dir"`
	Load string `json:"load,omitempty"`
	// Factors are the run's factors as resolved (given in the study file,
	// else read from the run); Group names its workload and load level.
	Factors Factors `json:"factors"`
	Group   string  `json:"group"`
	// ComparedWith is the run of the same group (baseline variant) the
	// labels table compares it with; "" when its group has none.
	ComparedWith  string  `json:"compared_with,omitempty"`
	DurationS     float64 `json:"duration_s"`
	Requests      int64   `json:"requests"`
	ThroughputRPS float64 `json:"throughput_rps"`
	ErrorPct      float64 `json:"error_pct"`
	// MeanMs and P95Ms are of all the run's requests; absent (zero) for
	// a run of several workloads, whose requests are different things:
	// Workloads has its figures, one workload at a time.
	MeanMs  float64 `json:"mean_ms,omitempty"`
	P95Ms   float64 `json:"p95_ms,omitempty"`
	Verdict string  `json:"verdict"`
	// Workloads are the run's figures per workload, each from its
	// requests' merged histogram; given for every run when a run of the
	// study holds several workloads.
	Workloads []RunWorkload `json:"workloads,omitempty"`
	users     int
	rate      float64
}

// RunWorkload is one workload's requests in one run.
type RunWorkload struct {
	Workload      string  `json:"workload"`
	Requests      int64   `json:"requests"`
	ThroughputRPS float64 `json:"throughput_rps"`
	ErrorPct      float64 `json:"error_pct"`
	MeanMs        float64 `json:"mean_ms"`
	P95Ms         float64 `json:"p95_ms"`
}

// mixedStudy reports whether a run of the study holds requests of several
// workloads: its runs are then described workload by workload.
func mixedStudy(ms []*member) bool {
	return slices.ContainsFunc(ms, func(m *member) bool { return m.d.Mixed() })
}

// workloadFigures are a run's figures per workload, each from the
// workload's merged histogram over the run.
func workloadFigures(d *analysis.Dataset) []RunWorkload {
	var out []RunWorkload
	for _, w := range d.RequestWorkloads() {
		a, _ := d.WorkloadTotal(w)
		st := a.Stats(core.TotalLabel, false, d.Span())
		out = append(out, RunWorkload{Workload: w, Requests: a.Count, ThroughputRPS: st.ThroughputRPS, ErrorPct: st.ErrorPct, MeanMs: st.MeanMs, P95Ms: st.P95Ms})
	}
	return out
}

// Label is one label across all runs.
type Label struct {
	Label string `json:"label"`
	// Workload is set on a total (Label TOTAL) of one workload's
	// requests: a study whose runs hold several workloads has one such
	// row per workload and no total of all requests.
	Workload string      `json:"workload,omitempty"`
	Cells    []LabelCell `json:"runs"` // one per run, in run order
}

// LabelCell is one label in one run, against the baseline.
type LabelCell struct {
	Run     string  `json:"run"`
	Present bool    `json:"present"`
	MeanMs  float64 `json:"mean_ms"`
	P95Ms   float64 `json:"p95_ms"`
	// Against is the run it is compared with (its group's reference);
	// "" when not compared.
	Against  string          `json:"against,omitempty"`
	DeltaPct float64         `json:"delta_pct"` // mean, against Against
	Verdict  compare.Verdict `json:"verdict,omitempty"`
}

// Resource is one monitored target's CPU and memory in each run.
type Resource struct {
	Target string        `json:"target"`
	Role   string        `json:"role,omitempty"`
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
// repeat) in average response time: of all requests, or of one workload's
// when the runs have several.
type Spread struct {
	// Workload is the workload whose requests' average the runs are
	// compared by; "" for all requests (runs of one workload).
	Workload string   `json:"workload,omitempty"`
	Runs     []string `json:"runs"`
	MeanMs   float64  `json:"mean_ms"`
	SDMs     float64  `json:"sd_ms"`
	CVPct    float64  `json:"cv_pct"`
	Outliers []string `json:"outliers,omitempty"`
}

// Build loads the study's runs and computes everything the document shows:
// each run's factors and group, the answers to the study's questions (or
// to those inferred from the runs), the study's status, the validity
// banner, the causes, and the tables.
func Build(f *File, notes *Notes) (*Study, error) {
	loc, err := locale.Parse(f.Lang)
	if err != nil {
		return nil, fmt.Errorf("%s: lang: %w", f.Path, err)
	}
	wd := wordsIn(loc)
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
	s := &Study{wd: wd, Title: f.Title, Description: f.Description, System: f.System, Environment: f.Environment, Method: f.Method,
		Hypothesis: f.Hypothesis, Baseline: names[bi], Kind: string(compare.Classify(facts)), Limits: f.Limits}
	if s.Title == "" {
		s.Title = "Study: " + strings.Join(names, ", ")
	}
	ms := make([]*member, len(sets))
	for i, d := range sets {
		series, statuses, err := mondata.Read(d.Dir)
		if err != nil {
			return nil, fmt.Errorf("run %s: reading monitor data: %w", f.Runs[i].Dir, err)
		}
		m := &member{i: i, name: names[i], role: f.Runs[i].Role, d: d, facts: facts[i], series: series, statuses: statuses, f: f.Runs[i].Factors, wd: wd}
		m.red = redactorOf(d)
		s.reds = append(s.reds, m.red)
		m.sum = analysis.Summarize(d, d.Info.SLA)
		report.WordsIn(m.sum, loc) // the findings' and reasons' words, as the run's own report has them, in the study's language
		m.targets = targetsOf(series, statuses)
		m.cap = analysis.Capacity(d, m.sum, m.targets)
		if m.search, err = analysis.LoadSearch(d.Dir); err != nil {
			return nil, fmt.Errorf("run %s: %w", f.Runs[i].Dir, err)
		}
		ms[i] = m
	}
	resolveFactors(ms)
	base := ms[bi]
	mixed := mixedStudy(ms)
	for i, m := range ms {
		d := m.d
		st := d.Total.Stats(core.TotalLabel, false, d.Span())
		if d.Mixed() {
			// No average or percentile of all requests: they would mix
			// requests that are different things (Workloads has them).
			st.MeanMs, st.P95Ms = 0, 0
		}
		if c, ok := runCapacity(names[i], m); ok {
			s.Capacity = append(s.Capacity, c)
		}
		r := Run{Name: names[i], Role: f.Runs[i].Role, Dir: f.Runs[i].Dir, Load: facts[i].Load(), Factors: m.f, Group: m.groupWords(),
			DurationS: math.Round(d.Span().Seconds()*10) / 10, Requests: d.Total.Count, ThroughputRPS: st.ThroughputRPS,
			ErrorPct: st.ErrorPct, MeanMs: st.MeanMs, P95Ms: st.P95Ms, Verdict: m.sum.Verdict, users: facts[i].Users, rate: facts[i].Rate}
		if mixed {
			r.Workloads = workloadFigures(d)
		}
		if ref := reference(ms, m, base); ref != nil {
			r.ComparedWith = ref.name
		}
		s.Runs = append(s.Runs, r)
	}
	// Load series: the runs of one workload and variant at different
	// levels, one series each; soaks and stepped runs apart.
	s.Series = seriesOf(ms)
	// Per label: each run against the reference run of its group.
	s.Labels = labelTable(ms, base)
	// Resources per monitored target.
	tidx := map[string]int{}
	for i, m := range ms {
		for _, r := range resourcesOf(m.series, m.d.Start, m.d.End) {
			ti, ok := tidx[r.target]
			if !ok {
				ti = len(s.Resources)
				tidx[r.target] = ti
				s.Resources = append(s.Resources, Resource{Target: r.target, Role: string(m.roleOf(r.target)), Runs: make([]ResourceRun, len(ms))})
				for j := range ms {
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
		g := make([]*member, len(rep))
		for j, i := range rep {
			g[j] = ms[i]
		}
		for _, set := range repeatSets(g, "") {
			idx := make([]int, len(set.runs))
			for j := range idx {
				idx[j] = j
			}
			sp := repeatSpread(set.runs, idx)
			sp.Workload = set.workload
			s.Repeats = append(s.Repeats, *sp)
		}
	}
	for _, m := range ms {
		s.charts = append(s.charts, runCharts(m)...)
	}
	// The questions, answered; the study's status from the answers.
	qs := f.Questions
	if len(qs) == 0 {
		qs = InferQuestions(ms, base)
	}
	s.Answers = wd.answerAll(qs, ms, base, f.Limits)
	s.Status, s.StatusWhy = wd.statusOf(s.Answers)
	s.Validity = wd.validityOf(ms, s.Answers)
	s.Causes = wd.causesOf(ms)
	s.Conclusions = conclusions(s)
	if notes != nil {
		s.Findings, s.Recommendations = notes.Findings, notes.Recommendations
	}
	return s, nil
}

// InferQuestions are the questions the runs can answer when the study
// file names none: a release comparison when a candidate has a baseline
// run of the same workload and load, capacity when a workload ran at two
// or more loads, configurations when a workload ran in two or more
// configurations, repeatability when runs share workload, load and
// variant, soak stability for soaks, interference when a workload ran in
// a window of another.
func InferQuestions(ms []*member, base *member) []Question {
	wd := wordsIn(nil) // which questions, not their words
	var out []Question
	add := func(k Kind) { out = append(out, Question{Kind: k, Inferred: true}) }
	for _, c := range ms {
		if c.f.Release != base.f.Release && slices.ContainsFunc(ms, func(b *member) bool {
			return b != c && b.f.Release == base.f.Release && b.group() == c.group() && sameConfig(b, c)
		}) {
			add(Release)
			break
		}
	}
	if rows, _ := wd.capacityRows(Question{Kind: CapacityQ}, ms, nil); len(rows) > 0 {
		add(CapacityQ)
		wl := map[string]map[string]bool{}
		for _, m := range ms {
			if wl[m.f.Workload] == nil {
				wl[m.f.Workload] = map[string]bool{}
			}
			wl[m.f.Workload][m.f.Config] = true
		}
		for _, cs := range wl {
			if len(cs) >= 2 {
				add(Configurations)
				break
			}
		}
	}
	groups := map[string]int{}
	for _, m := range ms {
		if !m.soak() {
			groups[m.group()+" | "+m.variant()]++
		}
	}
	for _, n := range groups {
		if n >= 2 {
			add(Repeatability)
			break
		}
	}
	if slices.ContainsFunc(ms, (*member).soak) {
		add(SoakQ)
	}
	for _, m := range ms {
		if _, ok := wd.interference(Question{Kind: Interference}.withDefaults(), m); ok {
			add(Interference)
			break
		}
	}
	return out
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

// words is the study's words (English for a Study built by hand).
func (s *Study) words() *words {
	if s.wd == nil {
		return wordsIn(nil)
	}
	return s.wd
}

// conclusions states what the study found: the status and one sentence
// per answer.
func conclusions(s *Study) []string {
	wd := s.words()
	out := []string{report.Sentence(wd.outcome(s.Status) + ": " + s.StatusWhy)}
	for _, a := range s.Answers {
		out = append(out, report.Sentence(wd.kind(a.Question.Kind)+": "+a.Line))
	}
	return out
}

func (wd *words) outlierClause(o []string) string {
	switch len(o) {
	case 0:
		return wd.W("no run is an outlier")
	case 1:
		return wd.T("%s is an outlier", o[0])
	}
	return wd.T("%s are outliers", strings.Join(o, ", "))
}

func sortedKV(m map[string]string) []KV {
	var out []KV
	for k, v := range m {
		out = append(out, KV{k, v})
	}
	slices.SortFunc(out, func(a, b KV) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// redactorOf is a run's secret mask, built as its report builds it: the
// plan's secret names and the literal values its copy of the plan held.
func redactorOf(d *analysis.Dataset) *report.Redactor {
	var values []string
	if src, err := os.ReadFile(filepath.Join(d.Dir, rundir.PlanFile)); err == nil {
		_, values = report.RedactPlan(src, d.Info.Secrets)
	}
	return report.NewRedactor(d.Info.Secrets, values)
}
