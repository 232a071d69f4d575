package analysis

import (
	"math"
	"strconv"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Summary is summary.json: the machine-readable result of a run. Field names
// are documented in docs/summary.md and are a stable interface.
type Summary struct {
	Name   string `json:"name"`
	Status string `json:"status"` // run status from run.json
	// Verdict is the test status: passed, failed, no requirements,
	// invalid, interrupted or could not run (see the Verdict* constants);
	// VerdictReasons says why, most important first.
	Verdict string `json:"verdict"`
	// VerdictReasons are the reasons worded (by the report, from Why).
	VerdictReasons []string `json:"verdict_reasons"`
	// Why are the reasons as kinds and facts, in the same order.
	Why    []Why `json:"why"`
	Passed bool  `json:"passed"` // every SLA held (Verdict is the test status)
	// Validity compares the planned load with the load applied.
	Validity  *Validity         `json:"validity"`
	Start     time.Time         `json:"start"`
	End       time.Time         `json:"end"`
	DurationS float64           `json:"duration_s"`
	Labels    []core.LabelStats `json:"labels"`
	// WorkloadTotals are, for a run of several workloads (Dataset.Mixed),
	// each workload's requests over the whole run (WorkloadTotal, the
	// merged histogram of its request labels; label TOTAL), in workload
	// order: the figures to follow such a run by, as Labels' TOTAL of all
	// requests moves with the mix of workloads. Omitted for a run of one
	// workload.
	WorkloadTotals []WorkloadStats `json:"workload_totals,omitempty"`
	// PercentileMethod names how the whole-run percentiles in Labels were
	// computed: "hdr" (plateau's HDR histograms, nearest rank) for live
	// runs, or the source tool's definition for an imported run
	// (run.json source_figures: "jmeter-legacy-window", "k6-linear",
	// "locust-rounded"). Per-phase rows always use "hdr".
	PercentileMethod string           `json:"percentile_method"`
	Phases           []PhaseSummary   `json:"phases"`
	SLA              []SLAResult      `json:"sla"`
	Errors           ErrorSummary     `json:"errors"`
	Dropped          map[string]int64 `json:"dropped_iterations,omitempty"`
	// Skipped are the iterations on_fail ended early, per workload.
	Skipped map[string]int64 `json:"skipped_iterations,omitempty"`
	// Prepare and Cleanup are the plan's prepare and cleanup commands as
	// they ran (from run.json): not measured, in no load figure. Omitted
	// when the plan has none.
	Prepare []rundir.CommandResult `json:"prepare,omitempty"`
	Cleanup []rundir.CommandResult `json:"cleanup,omitempty"`
	// ServerSide is the servers' view from the access logs attached to the
	// run (per server, phase and HTTP status); null when none was.
	ServerSide *ServerSide `json:"server_side"`
	// Resources are the monitored series' statistics per target, metric
	// and phase; null when the run has no monitor data.
	Resources []resources.Entry `json:"resources"`
	// Capacity is the capacity analysis over the load steps; null when
	// the run has no steps at two or more loads of one workload.
	Capacity *capacity.Result `json:"capacity"`
	// Trends are the latency drifts and memory growths.
	Trends *trend.Trends `json:"trends"`
	// Comparison is the run against a baseline, label by label and phase
	// by phase; null without a baseline.
	Comparison []compare.Row `json:"comparison"`
	// Monitors are the monitored targets with their state; omitted when
	// the run watched none.
	Monitors []mondata.TargetStatus `json:"monitors,omitempty"`
}

// WorkloadStats is one workload's requests over the whole run.
type WorkloadStats struct {
	Workload string `json:"workload"`
	core.LabelStats
}

// PhaseSummary is one phase with its own label table.
type PhaseSummary struct {
	Name     string    `json:"name"`
	Workload string    `json:"workload,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Users    int       `json:"users,omitempty"`
	Rate     float64   `json:"rate_per_s,omitempty"`
	Stopped  string    `json:"stopped,omitempty"`
	// StopRule is the stop rule's figures when it ended the phase.
	StopRule *core.StopRule `json:"stop_rule,omitempty"`
	// RecordedEnd is the end run.json recorded when it was after the
	// run's end; End is then clipped to the run's end.
	RecordedEnd *time.Time        `json:"recorded_end,omitempty"`
	Labels      []core.LabelStats `json:"labels"`
}

// SLAResult is one requirement judged over the run (or its `during` phase),
// and per phase.
type SLAResult struct {
	Expr     string       `json:"expr"`
	Passed   bool         `json:"passed"`
	Observed float64      `json:"observed"`
	Unit     string       `json:"unit"`
	Scope    string       `json:"scope"` // "run" or the phase name
	Error    string       `json:"error,omitempty"`
	PerPhase []PhaseCheck `json:"per_phase,omitempty"`
	// HeldUpTo is the last phase, in order, before the first phase that
	// broke it; FirstBroken that phase. Empty when not applicable.
	HeldUpTo    string `json:"held_up_to,omitempty"`
	FirstBroken string `json:"first_broken,omitempty"`
	NoData      bool   `json:"no_data,omitempty"`
	// Skip says why the requirement could not be judged (Error words it,
	// from the report); SkipNote is the attachment's note or the read
	// error behind it, SkipCheck the check named (SkipNoChecks).
	Skip      SLASkip `json:"skip,omitempty"`
	SkipNote  string  `json:"-"`
	SkipCheck string  `json:"-"`
}

// SLASkip is why a requirement could not be judged.
type SLASkip string

// Reasons a requirement could not be judged.
const (
	SkipNoServerData     SLASkip = "no_server_data"         // no access log attached (SkipNote: the attachment's note)
	SkipServerUnreadable SLASkip = "server_data_unreadable" // SkipNote: the read error
	SkipNoPhase          SLASkip = "no_phase"               // its `during` phase does not exist (Scope)
	SkipNoSamples        SLASkip = "no_samples"             // nothing measured in its scope
	SkipNoChecks         SLASkip = "no_checks"              // no check outcomes (SkipCheck: the check named, Scope)
)

// PhaseCheck is an SLA judged within one phase.
type PhaseCheck struct {
	Phase    string  `json:"phase"`
	Passed   bool    `json:"passed"`
	Observed float64 `json:"observed"`
}

// ErrorSummary counts failures by class and HTTP status.
type ErrorSummary struct {
	Total    int64            `json:"total"`
	ByClass  map[string]int64 `json:"by_class"`
	ByStatus map[string]int64 `json:"by_status"`
	Details  []ErrorDetail    `json:"details"`
}

// Summarize computes the summary of a dataset, judging the given SLA
// expressions.
func Summarize(d *Dataset, slas []string) *Summary {
	s := &Summary{Name: d.Info.Name, Status: d.Info.Status, Start: d.Start, End: d.End,
		DurationS: math.Round(d.Span().Seconds()*1000) / 1000, Passed: true, Dropped: d.Dropped}
	if d.Info != nil && len(d.Info.Skipped) > 0 {
		s.Skipped = d.Info.Skipped
	}
	if d.Info != nil {
		s.Prepare, s.Cleanup = d.Info.Prepare, d.Info.Cleanup
	}
	if len(s.Dropped) == 0 {
		s.Dropped = nil
	}
	s.Labels = d.labelRows(d.Run, d.Total, d.Span())
	s.WorkloadTotals = d.workloadTotals()
	s.ServerSide = d.ServerTable()
	s.PercentileMethod = d.applySourceFigures(s.Labels)
	for i, p := range d.Phases {
		ps := PhaseSummary{Name: p.Name, Workload: p.Workload, Start: p.Start, End: p.End, Users: p.Users,
			Rate: p.Rate, Stopped: p.Stopped, StopRule: p.StopRule}
		ps.Labels = d.labelRows(d.ByPhase[i], d.PhaseTotal[i], p.Duration())
		if i < len(d.RecordedEnd) && !d.RecordedEnd[i].IsZero() {
			e := d.RecordedEnd[i]
			ps.RecordedEnd = &e
		}
		s.Phases = append(s.Phases, ps)
	}
	if s.Phases == nil {
		s.Phases = []PhaseSummary{} // docs/summary.md: a list is [] when empty
	}
	s.Errors = ErrorSummary{ByClass: map[string]int64{}, ByStatus: map[string]int64{}, Details: d.Errors}
	if s.Errors.Details == nil {
		s.Errors.Details = []ErrorDetail{}
	}
	for _, e := range d.Total.SortedErrors() {
		s.Errors.Total += e.Count
		s.Errors.ByClass[e.Class.String()] += e.Count
		if e.Status > 0 {
			s.Errors.ByStatus[strconv.Itoa(e.Status)] += e.Count
		}
	}
	if d.Total.Errors > s.Errors.Total { // imported failures without detail
		s.Errors.ByClass["unknown"] += d.Total.Errors - s.Errors.Total
		s.Errors.Total = d.Total.Errors
	}
	for _, text := range slas {
		r := d.JudgeSLA(text)
		if !r.Passed {
			s.Passed = false
		}
		s.SLA = append(s.SLA, r)
	}
	if s.SLA == nil {
		s.SLA = []SLAResult{}
	}
	s.Validity = d.JudgeValidity()
	aborted, target := "", ""
	if d.Info != nil {
		aborted, target = d.Info.AbortedBy, d.Info.Target
	}
	s.judgeVerdict(d.Total.Count, d.Total.Errors, aborted, target)
	return s
}

// labelRows renders per-label rows (transactions first) and a TOTAL row.
func (d *Dataset) labelRows(m map[LabelKey]*metrics.Agg, total *metrics.Agg, span time.Duration) []core.LabelStats {
	rows := []core.LabelStats{}
	noTimes, anyNoTimes := map[string]bool{}, false
	for _, w := range d.Info.Workloads {
		noTimes[w.Name] = w.NoTimes
		anyNoTimes = anyNoTimes || w.NoTimes
	}
	for _, k := range d.Labels() {
		if a := m[k]; a != nil {
			row := a.Stats(d.LabelName(k), k.Tx, span)
			row.Derived = k.Derived
			if noTimes[k.Workload] {
				clearTimes(&row)
			}
			rows = append(rows, row)
		}
	}
	tot := total.Stats(core.TotalLabel, false, span)
	if anyNoTimes {
		clearTimes(&tot) // some requests have no times: no total time figure is true
	}
	return append(rows, tot)
}

// workloadTotals are Summary.WorkloadTotals: nil unless the run is mixed.
func (d *Dataset) workloadTotals() []WorkloadStats {
	if !d.Mixed() {
		return nil
	}
	noTimes := map[string]bool{}
	if d.Info != nil {
		for _, w := range d.Info.Workloads {
			noTimes[w.Name] = w.NoTimes
		}
	}
	var out []WorkloadStats
	for _, w := range d.RequestWorkloads() {
		a, _ := d.WorkloadTotal(w)
		st := a.Stats(core.TotalLabel, false, d.Span())
		if noTimes[w] {
			clearTimes(&st)
		}
		out = append(out, WorkloadStats{Workload: core.EscapeBytes(w), LabelStats: st})
	}
	return out
}

// clearTimes marks a row as having no response times.
func clearTimes(r *core.LabelStats) {
	r.NoTimes = true
	r.MinMs, r.MeanMs, r.P50Ms, r.P90Ms, r.P95Ms, r.P99Ms, r.MaxMs = 0, 0, 0, 0, 0, 0, 0
}

// applySourceFigures replaces the whole-run percentiles and throughput of
// rows (labelRows of d.Run, in d.Labels order, TOTAL last) by those the
// source tool of an imported run defines (run.json source_figures), so the
// run agrees with the tool that made it. It returns the percentile method
// of the rows.
func (d *Dataset) applySourceFigures(rows []core.LabelStats) string {
	f := d.Info.Figures
	if f == nil || len(f.Labels) == 0 {
		return "hdr"
	}
	type key struct {
		workload, label string
		tx              bool
	}
	byKey := map[key]*rundir.SourceLabel{}
	var totals []*rundir.SourceLabel
	for i := range f.Labels {
		l := &f.Labels[i]
		if l.Total {
			totals = append(totals, l)
			continue
		}
		byKey[key{l.Workload, l.Label, l.Tx}] = l
	}
	apply := func(row *core.LabelStats, l *rundir.SourceLabel) {
		if l == nil || l.Count != row.Samples {
			return // not the same samples: keep plateau's figures
		}
		for _, p := range []struct {
			dst *float64
			src *float64
		}{{&row.P50Ms, l.P50Ms}, {&row.P90Ms, l.P90Ms}, {&row.P95Ms, l.P95Ms}, {&row.P99Ms, l.P99Ms}} {
			if p.src != nil {
				*p.dst = round3(*p.src)
			}
		}
		if l.SpanS > 0 {
			row.ThroughputRPS = round3(float64(l.Count) / l.SpanS)
		}
	}
	keys := d.Labels()
	for i, k := range keys {
		if i < len(rows)-1 {
			apply(&rows[i], byKey[key{k.Workload, k.Label, k.Tx}])
		}
	}
	if len(totals) == 1 && len(rows) > 0 {
		apply(&rows[len(rows)-1], totals[0])
	}
	return f.PercentileMethod
}

// JudgeSLA evaluates one expression over the run and per phase.
func (d *Dataset) JudgeSLA(text string) SLAResult {
	r := SLAResult{Expr: text, Scope: "run"}
	e, err := sla.Parse(text)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	r.Unit = e.Unit()
	if e.Metric == sla.Checks {
		return d.judgeChecks(e, r)
	}
	src, observe := d, func(m map[LabelKey]*metrics.Agg, total *metrics.Agg, span time.Duration) (float64, bool) {
		return d.observe(e, m, total, span)
	}
	if e.IsServer() {
		if d.Server == nil {
			r.NoData, r.Skip = true, SkipNoServerData
			if ns := d.Info.AttachNotes(); len(ns) > 0 { // the attachment's own note says why
				r.SkipNote = ns[0]
			}
			if d.ServerErr != nil {
				r.Skip, r.SkipNote = SkipServerUnreadable, d.ServerErr.Error()
			}
			return r
		}
		src = d.Server
		observe = func(m map[LabelKey]*metrics.Agg, _ *metrics.Agg, span time.Duration) (float64, bool) {
			return observeServer(e, m, span)
		}
	}
	if e.Phase != "" {
		r.Scope = e.Phase
		idx := src.phaseIndex(e.Phase)
		if idx < 0 {
			r.Skip, r.NoData = SkipNoPhase, true
			return r
		}
		obs, ok := observe(src.ByPhase[idx], src.PhaseTotal[idx], src.Phases[idx].Duration())
		r.Observed, r.Passed, r.NoData = obs, ok && e.Holds(obs), !ok
	} else {
		obs, ok := observe(src.Run, src.Total, src.Span())
		r.Observed, r.Passed, r.NoData = obs, ok && e.Holds(obs), !ok
	}
	if r.NoData {
		r.Skip = SkipNoSamples
	}
	// Judge every phase too (for a `during` requirement as information):
	// the report says up to which step it held and where it first broke.
	// That chain follows the load steps of one workload (the one with the
	// most phases): a concurrent workload's phase is not a step.
	brokenSeen := false
	steps := src.steppedWorkload()
	for i, p := range src.Phases {
		o, ok := observe(src.ByPhase[i], src.PhaseTotal[i], p.Duration())
		if !ok {
			continue
		}
		pc := PhaseCheck{Phase: p.Name, Observed: o, Passed: e.Holds(o)}
		r.PerPhase = append(r.PerPhase, pc)
		if p.Workload == steps && !brokenSeen {
			if pc.Passed {
				r.HeldUpTo = p.Name
			} else {
				r.FirstBroken = p.Name
				brokenSeen = true
			}
		}
	}
	return r
}

// steppedWorkload is the workload whose phases are the run's load steps:
// the one with the most phases (the first such in run order).
func (d *Dataset) steppedWorkload() string {
	n := map[string]int{}
	best := ""
	for _, p := range d.Phases {
		n[p.Workload]++
		if n[p.Workload] > n[best] || best == "" {
			best = p.Workload
		}
	}
	return best
}

func (d *Dataset) phaseIndex(name string) int {
	for i, p := range d.Phases {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// observe returns the value of e's metric over the aggregates; false when
// there are no samples to judge.
func (d *Dataset) observe(e *sla.Expr, m map[LabelKey]*metrics.Agg, total *metrics.Agg, span time.Duration) (float64, bool) {
	return Observe(e, m, total, span, d.LabelName)
}

// Observe returns the value of e's metric over the aggregates m (per label)
// and total (all requests); false when there are no samples to judge. name
// is how the report prints a label ("read: GET /x" when the run has several
// workloads), which a label selector may use instead of the plain label.
func Observe(e *sla.Expr, m map[LabelKey]*metrics.Agg, total *metrics.Agg, span time.Duration, name func(LabelKey) string) (float64, bool) {
	a := total
	if e.Label != "" || e.Workload != "" {
		a = metrics.NewAgg()
		for k, v := range m {
			if Selects(e, k, name(k)) {
				a.Merge(v)
			}
		}
	}
	return statOf(e, a, span)
}

// statOf is e's metric over one aggregate; false when it holds no samples.
func statOf(e *sla.Expr, a *metrics.Agg, span time.Duration) (float64, bool) {
	if a.Count == 0 {
		return 0, false
	}
	var v float64
	switch e.Metric {
	case sla.ErrorRate:
		v = 100 * float64(a.Errors) / float64(a.Count)
	case sla.Throughput:
		if span <= 0 {
			return 0, false
		}
		v = float64(a.Count) / span.Seconds()
	default:
		switch e.Stat {
		case "avg":
			v = a.MeanMs()
		case "min":
			v = float64(a.MinUs) / 1000
		case "max":
			v = float64(a.MaxUs) / 1000
		default:
			v = a.QuantileMs(e.Percentile)
		}
	}
	return math.Round(v*1000) / 1000, true
}

// Selects reports whether e's selector takes label k (printed as the report
// prints it). Without a label selector, transactions and derived labels are
// left out, as from the totals, so nothing is counted twice.
func Selects(e *sla.Expr, k LabelKey, printed string) bool {
	if e.Workload != "" && k.Workload != e.Workload {
		return false
	}
	if e.Label == "" {
		return !k.Tx && !k.Derived
	}
	return k.Label == e.Label || printed == e.Label
}

// judgeChecks judges a requirement on the checks' pass rate, over the run
// (run.json checks) and per phase (each phase's checks, counted by the
// phase rule); `during` a phase judges that phase's outcomes. Runs written
// before phases counted their checks are judged over the run only.
func (d *Dataset) judgeChecks(e *sla.Expr, r SLAResult) SLAResult {
	var whole map[string]rundir.CheckCount
	if d.Info != nil {
		whole = d.Info.Checks
	}
	phaseChecks := func(i int) map[string]rundir.CheckCount {
		if d.Info == nil || i >= len(d.Info.Phases) {
			return nil
		}
		return d.Info.Phases[i].Checks
	}
	if e.Phase != "" {
		r.Scope = e.Phase
		idx := d.phaseIndex(e.Phase)
		if idx < 0 {
			r.Skip, r.NoData = SkipNoPhase, true
			return r
		}
		whole = phaseChecks(idx)
	}
	share, ok := checkShare(e, whole)
	if !ok {
		r.NoData, r.Skip, r.SkipCheck = true, SkipNoChecks, e.Label
		return r
	}
	r.Observed = share
	r.Passed = e.Holds(share)
	brokenSeen := false
	steps := d.steppedWorkload()
	for i, p := range d.Phases {
		o, ok := checkShare(e, phaseChecks(i))
		if !ok {
			continue
		}
		pc := PhaseCheck{Phase: p.Name, Observed: o, Passed: e.Holds(o)}
		r.PerPhase = append(r.PerPhase, pc)
		if p.Workload == steps && !brokenSeen {
			if pc.Passed {
				r.HeldUpTo = p.Name
			} else {
				r.FirstBroken = p.Name
				brokenSeen = true
			}
		}
	}
	return r
}

// checkShare is the percentage of the outcomes in counts of the checks e
// selects (all, or the one named) that passed; false without any.
func checkShare(e *sla.Expr, counts map[string]rundir.CheckCount) (float64, bool) {
	var passed, total int64
	for name, n := range counts {
		if e.Label == "" || name == e.Label {
			passed += n.Passed
			total += n.Passed + n.Failed
		}
	}
	if total == 0 {
		return 0, false
	}
	return math.Round(100*float64(passed)/float64(total)*1000) / 1000, true
}
