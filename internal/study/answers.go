package study

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report"
)

// Outcome is a question's or the study's outcome.
type Outcome string

// Outcomes.
const (
	Passed       Outcome = "passed"       // answered within its expectation
	Failed       Outcome = "failed"       // answered, and the expectation was not met
	Inconclusive Outcome = "inconclusive" // these runs cannot answer it
)

// Word is the outcome as the document's status writes it, in English.
func (o Outcome) Word() string { return wordsIn(nil).outcome(o) }

// outcome is the outcome as the document's status writes it.
func (wd *words) outcome(o Outcome) string {
	switch o {
	case Passed:
		return wd.text.StatusPassed
	case Failed:
		return wd.text.StatusFailed
	}
	return wd.text.StatusInconclusive
}

// Answer is one question answered: its outcome, the one line the document
// opens with, the evidence (sentences from the tables) and the confidence,
// with the typed rows it stands on.
type Answer struct {
	Question Question `json:"question"`
	Outcome  Outcome  `json:"outcome"`
	// Line is the answer in one line; Evidence the sentences behind it.
	Line     string   `json:"answer"`
	Evidence []string `json:"evidence,omitempty"`
	// Confidence is high, indicative or low; ConfidenceWhy says why when
	// not high.
	Confidence    string `json:"confidence"`
	ConfidenceWhy string `json:"confidence_why,omitempty"`
	// The rows of the kind asked.
	Release      []ReleaseRow      `json:"release,omitempty"`
	Capacity     []CapacityRow     `json:"capacity,omitempty"`
	Repeats      []RepeatGroup     `json:"repeats,omitempty"`
	Soak         []SoakRun         `json:"soak,omitempty"`
	Interference []InterferenceRun `json:"interference,omitempty"`
}

// ReleaseRow is one matching group (workload and level, or a matched
// phase of two stepped runs): the candidate's all-requests average
// against the baseline's, and each transaction's (or label's).
type ReleaseRow struct {
	Group   string          `json:"group"`
	Phase   string          `json:"phase,omitempty"`
	Base    string          `json:"baseline_run"`
	Cand    string          `json:"candidate_run"`
	Labels  []compare.Row   `json:"labels"`
	Total   compare.Row     `json:"total"`
	Verdict compare.Verdict `json:"verdict"`
	Exceeds bool            `json:"exceeds_bound"`
	// Suspect: a finding made one of the two runs invalid here (the load
	// not held, the generator's CPU at its ceiling); Starved: the
	// generator was starved of CPU (a warning).
	Suspect   bool     `json:"suspect,omitempty"`
	Starved   bool     `json:"generator_starved,omitempty"`
	SuspectOf []string `json:"suspect_runs,omitempty"`
}

// CapacityPoint is one load level of a capacity answer: a step of a
// stepped run or a run of a series.
type CapacityPoint struct {
	Load          float64 `json:"load"`
	Phase         string  `json:"phase,omitempty"`
	Run           string  `json:"run"`
	ThroughputRPS float64 `json:"throughput_rps"`
	MeanMs        float64 `json:"mean_ms"`
	P95Ms         float64 `json:"p95_ms"`
	ErrorPct      float64 `json:"error_pct"`
	SLAMet        *bool   `json:"sla_met,omitempty"`
	// Generator says the generator was starved of CPU here (a warning of
	// validity); Invalid that a finding made the step invalid (the load
	// not held, the generator's CPU at its ceiling).
	Generator bool `json:"generator_short,omitempty"`
	Invalid   bool `json:"invalid,omitempty"`
	// TopError is the most frequent failure of the run (or step), with
	// its count; "" without failures.
	TopError string `json:"top_error,omitempty"`
	// OffTrend marks a run of a series whose throughput dips below both
	// its neighbours' by more than OffTrendPct: far off its group's trend.
	OffTrend bool `json:"off_trend,omitempty"`
}

// OffTrendPct is how far below both neighbouring loads' throughput a
// series' point must fall to be called off its group's trend: throughput
// against load does not fall and rise again by chance by that much.
const OffTrendPct = 20.0

// markOffTrend flags the interior points of a series that dip below both
// neighbours.
func markOffTrend(ps []CapacityPoint) {
	for i := 1; i+1 < len(ps); i++ {
		lo := min(ps[i-1].ThroughputRPS, ps[i+1].ThroughputRPS)
		if ps[i].ThroughputRPS < (1-OffTrendPct/100)*lo {
			ps[i].OffTrend = true
		}
	}
}

// topError is the run's most frequent failure in the phase ("" for the
// whole run) in words, summed over the calls it hit: "HTTP 401:
// unauthorized ×40 in 5 calls".
func (m *member) topError(phase string) string {
	wd := m.words()
	type agg struct {
		n     int64
		calls []string
	}
	by := map[string]*agg{}
	var order []string
	for _, e := range m.d.Errors {
		if phase != "" && !slices.Contains(e.Phases, phase) {
			continue
		}
		what := e.Class
		if e.Status > 0 {
			what = fmt.Sprintf("HTTP %d", e.Status)
		}
		if e.Message != "" {
			what += ": " + e.Message
		}
		a := by[what]
		if a == nil {
			a = &agg{}
			by[what] = a
			order = append(order, what)
		}
		a.n += e.Count
		if !slices.Contains(a.calls, e.Label) {
			a.calls = append(a.calls, e.Label)
		}
	}
	best := ""
	for _, w := range order {
		if best == "" || by[w].n > by[best].n {
			best = w
		}
	}
	if best == "" {
		return ""
	}
	where := wd.W("in ") + by[best].calls[0]
	if n := len(by[best].calls); n > 1 {
		where = wd.T("in %d calls", n)
	}
	return m.red.String(fmt.Sprintf("%s ×%s %s", best, wd.thousands(float64(by[best].n)), where))
}

// CapacityRow is the capacity of one workload and variant.
type CapacityRow struct {
	Workload string          `json:"workload"`
	Variant  string          `json:"variant,omitempty"`
	Unit     string          `json:"load_unit"`
	Points   []CapacityPoint `json:"points"`
	HasSLA   bool            `json:"has_sla"`
	// MaxLoadMeetingSLA is the highest load that, with every lower one,
	// met the requirements; nil when none did.
	MaxLoadMeetingSLA *float64 `json:"max_load_meeting_sla,omitempty"`
	// WithinFrom and WithinTo are the span of loads that met them when
	// the lowest did not (a cold first step); nil otherwise.
	WithinFrom *float64 `json:"within_from,omitempty"`
	WithinTo   *float64 `json:"within_to,omitempty"`
	KneeLoad   float64  `json:"knee_load,omitzero"`
	// KneeFrom is where a capacity search brackets the knee from: it
	// lies above KneeFrom, at KneeLoad at most (0: at KneeLoad).
	KneeFrom float64 `json:"knee_from,omitzero"`
	KneeRPS  float64 `json:"knee_throughput_rps,omitzero"`
	PeakRPS  float64 `json:"peak_throughput_rps"`
	PeakLoad float64 `json:"peak_load"`
	// Limiter is what limits the knee: "generator", "component",
	// "configured limit" or "" (unknown).
	Limiter          string                `json:"limiter,omitempty"`
	Bottleneck       *resources.Bottleneck `json:"bottleneck,omitempty"`
	Limit            *Limit                `json:"limit,omitempty"`
	GeneratorLimited bool                  `json:"generator_limited,omitempty"`
	// Search says the row is a capacity search's answer (its points are
	// the search's probes); SearchAnswer is that search, as its run's
	// capacity.json holds it (the load, unit, interval, limited_by and
	// every probe).
	Search       bool             `json:"search,omitempty"`
	SearchAnswer *capacity.Search `json:"capacity_search,omitempty"`
	// red masks the search run's secrets in what the document quotes of it.
	red *report.Redactor
	// runs are the runs of the row's workload and variant, the row's own
	// and those beside it (a search's fixed-load runs).
	runs     []*member
	Sentence string `json:"sentence"`
}

// RepeatGroup is the spread of the runs of one group and variant.
type RepeatGroup struct {
	Group string `json:"group"`
	Spread
	// CVWithoutPct is the variation without the outliers (0 without any).
	CVWithoutPct float64 `json:"cv_without_outliers_pct,omitzero"`
	// GeneratorOutliers are the outliers whose generator was short of CPU.
	GeneratorOutliers []string `json:"generator_outliers,omitempty"`
	// InvalidRuns are the runs whose load was not held or whose
	// generator's CPU was at its ceiling; CVValidPct the variation of the
	// others (0 with fewer than two).
	InvalidRuns []string `json:"invalid_runs,omitempty"`
	CVValidPct  float64  `json:"cv_valid_runs_pct,omitzero"`
}

// SoakRun is one soak's drift and memory trend.
type SoakRun struct {
	Run       string      `json:"run"`
	DurationS float64     `json:"duration_s"`
	Labels    []SoakLabel `json:"labels"`
	Memory    []SoakMem   `json:"memory,omitempty"`
	Drifting  bool        `json:"drifting"`
}

// SoakLabel is a label's average in the first and the last fifth of a
// soak and whether its drift is significant.
type SoakLabel struct {
	Label       string  `json:"label"`
	FirstMs     float64 `json:"first_fifth_mean_ms"`
	LastMs      float64 `json:"last_fifth_mean_ms"`
	ChangePct   float64 `json:"change_pct"`
	Significant bool    `json:"significant"`
	Drifting    bool    `json:"drifting"`
}

// SoakMem is a service's memory in the first and last fifth of a soak
// with its trend's verdict.
type SoakMem struct {
	Target  string  `json:"target"`
	FirstMB float64 `json:"first_fifth_mb"`
	LastMB  float64 `json:"last_fifth_mb"`
	Verdict string  `json:"verdict"`
}

// InterferenceRun is one run's disturbed workload before, during and after
// the other.
type InterferenceRun struct {
	Run      string    `json:"run"`
	Workload string    `json:"workload"`
	Other    string    `json:"other"`
	Windows  [3]Window `json:"windows"` // before, during, after
	CPU      []CPUWin  `json:"cpu,omitempty"`
	// Work is the other workload's iterations: planned (paced or open
	// model), started and succeeded.
	Planned   int64 `json:"planned_iterations,omitempty"`
	Started   int64 `json:"started_iterations,omitempty"`
	Succeeded int64 `json:"succeeded_iterations"`
	Disturbed bool  `json:"disturbed"`
	// Invalid: a finding made the run invalid (the load not held, the
	// generator's CPU at its ceiling), so it is no evidence either way.
	Invalid bool `json:"invalid,omitempty"`
}

// Window is a workload's figures in a span of a run.
type Window struct {
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Requests int64     `json:"count"`
	Errors   int64     `json:"errors"`
	MeanMs   float64   `json:"mean_ms"`
	ErrorPct float64   `json:"error_pct"`
}

// CPUWin is a service's mean CPU (%) before, during and after.
type CPUWin struct {
	Target string     `json:"target"`
	Pct    [3]float64 `json:"cpu_pct"`
	Has    [3]bool    `json:"has"`
}

// generatorShort reports whether the run's generator was short of CPU or
// starved in the phase ("" for any phase), and the finding's sentence.
func (m *member) generatorShort(phase string) (bool, string) {
	if m.sum.Validity == nil {
		return false, ""
	}
	for _, f := range m.sum.Validity.Findings {
		if (f.Kind == analysis.ReasonGeneratorCPU || f.Kind == analysis.ReasonStarved) && (phase == "" || f.Phase == phase || f.Phase == "") {
			return true, f.Text
		}
	}
	return false, ""
}

// invalid reports whether a finding that makes the run invalid (the load
// not held, the generator's CPU at its ceiling) fell in the phase ("" for
// any).
func (m *member) invalid(phase string) bool {
	if m.sum.Validity == nil {
		return false
	}
	for _, f := range m.sum.Validity.Findings {
		if f.Invalidates && (phase == "" || f.Phase == phase || f.Phase == "") {
			return true
		}
	}
	return false
}

// starved reports whether the generator was starved of CPU (a warning)
// in the phase ("" for any).
func (m *member) starved(phase string) bool {
	if m.sum.Validity == nil {
		return false
	}
	for _, f := range m.sum.Validity.Findings {
		if f.Kind == analysis.ReasonStarved && (phase == "" || f.Phase == phase || f.Phase == "") {
			return true
		}
	}
	return false
}

// answerAll answers each question.
func (wd *words) answerAll(qs []Question, ms []*member, base *member, limits []Limit) []Answer {
	var out []Answer
	for _, q := range qs {
		q = q.withDefaults()
		if q.Text == "" {
			q.Text = wd.questionText(q)
		}
		var a Answer
		switch q.Kind {
		case Release:
			a = wd.answerRelease(q, ms, base)
		case CapacityQ:
			a = wd.answerCapacity(q, ms, limits)
		case Configurations:
			a = wd.answerConfigurations(q, ms, limits)
		case Repeatability:
			a = wd.answerRepeatability(q, ms)
		case SoakQ:
			a = wd.answerSoak(q, ms)
		case Interference:
			a = wd.answerInterference(q, ms)
		}
		a.Question = q
		if a.Confidence == "" {
			a.Confidence = wd.text.ConfHigh
		}
		out = append(out, a)
	}
	return out
}

// StatusOf is the study's status from its answers: failed when one
// failed, inconclusive when one could not be answered, else passed; with
// why.
func StatusOf(as []Answer) (Outcome, string) { return wordsIn(nil).statusOf(as) }

// statusOf is StatusOf in the study's language.
func (wd *words) statusOf(as []Answer) (Outcome, string) {
	var failed, inc []string
	for _, a := range as {
		// Two questions of a kind are told apart by their workload:
		// "capacity (upload) and capacity (browse)", not "capacity and
		// capacity".
		name := wd.kind(a.Question.Kind)
		if a.Question.Workload != "" {
			name = wd.T("%s (%s)", name, a.Question.Workload)
		}
		switch a.Outcome {
		case Failed:
			failed = append(failed, name)
		case Inconclusive:
			inc = append(inc, name)
		}
	}
	switch {
	case len(as) == 0:
		return Inconclusive, wd.text.NoQuestions
	case len(failed) > 0:
		return Failed, fmt.Sprintf(wd.text.WhyFailed, len(failed), len(as), wd.list(failed))
	case len(inc) > 0:
		return Inconclusive, fmt.Sprintf(wd.text.WhyInconclusive, len(inc), len(as), wd.list(inc))
	}
	return Passed, fmt.Sprintf(wd.text.WhyPassed, len(as))
}

// kind names a kind in a sentence.
func (wd *words) kind(k Kind) string {
	switch k {
	case Release:
		return wd.text.KindRelease
	case CapacityQ:
		return wd.W("capacity")
	case Configurations:
		return wd.W("configurations")
	case Repeatability:
		return wd.W("repeatability")
	case SoakQ:
		return wd.text.KindSoak
	case Interference:
		return wd.W("interference")
	}
	return string(k)
}

// joinSentences joins one-line parts into sentences, each after the
// first starting upper-case (report.Sentence does the first).
func joinSentences(parts []string) string {
	out := make([]string, len(parts))
	for i, p := range parts {
		if i > 0 && p != "" {
			p = strings.ToUpper(p[:1]) + p[1:]
		}
		out[i] = p
	}
	return strings.Join(out, ". ")
}

// ---- release comparison ----

func (wd *words) answerRelease(q Question, ms []*member, base *member) Answer {
	a := Answer{}
	bRel := q.Baseline
	if bRel == "" {
		bRel = base.f.Release
	}
	var cands []string
	if q.Candidate != "" {
		cands = []string{q.Candidate}
	} else {
		for _, m := range ms {
			if m.f.Release != bRel && !slices.Contains(cands, m.f.Release) {
				cands = append(cands, m.f.Release)
			}
		}
	}
	relName := func(r string, fallback *member) string {
		switch r {
		case "":
			return fallback.name
		case "candidate":
			return wd.text.TheCandidate
		}
		return r
	}
	var suspect, starved []string
	for _, c := range ms {
		if !slices.Contains(cands, c.f.Release) {
			continue
		}
		var b *member
		for _, x := range ms {
			if x != c && x.f.Release == bRel && x.group() == c.group() && sameConfig(x, c) && x.f.Repeat == "" {
				b = x
				break
			}
		}
		if b == nil {
			continue
		}
		rows := analysis.Compare(b.d, c.d, nil)
		phased := b.stepped() && c.stepped() && compare.SamePhases(b.facts, c.facts)
		// Runs of several workloads are compared workload by workload: an
		// average of all their requests would call a candidate slower
		// for sending more of the slow workload's requests.
		mixed := !phased && (b.d.Mixed() || c.d.Mixed())
		workloadOf := map[string]string{}
		if mixed { // Compare's whole-run totals are then per workload
			for _, k := range c.d.Labels() {
				workloadOf[c.d.LabelName(k)] = k.Workload
			}
		}
		tx := txLabels(b.d)
		byPhase := map[string]*ReleaseRow{}
		var order []string
		for _, r := range rows {
			if phased == (r.Phase == "run") {
				continue
			}
			key, w := r.Phase, ""
			if mixed {
				w = r.Workload
				if r.Label != core.TotalLabel {
					w = workloadOf[r.Label]
				}
				key += " | " + w
			}
			rr := byPhase[key]
			if rr == nil {
				g := c.groupWords()
				if phased {
					g = c.f.Workload + ", " + r.Phase
				}
				if mixed {
					g = wd.T("%s, workload %s", g, w)
				}
				rr = &ReleaseRow{Group: g, Base: b.name, Cand: c.name}
				if phased {
					rr.Phase = r.Phase
				}
				byPhase[key] = rr
				order = append(order, key)
			}
			if r.Label == core.TotalLabel {
				rr.Total = r
				continue
			}
			if len(tx) == 0 || tx[r.Label] {
				rr.Labels = append(rr.Labels, r)
			}
		}
		for _, p := range order {
			rr := byPhase[p]
			rr.Verdict = rr.Total.Verdict
			judged := append([]compare.Row{rr.Total}, rr.Labels...)
			for _, r := range judged {
				if r.Verdict == compare.Slower && r.DeltaPct > q.MaxSlowerPct {
					rr.Exceeds = true
					rr.Verdict = compare.Slower
				}
			}
			phase := ""
			if phased {
				phase = p
			}
			for _, m := range []*member{b, c} {
				switch {
				case m.invalid(phase):
					rr.Suspect = true
					rr.SuspectOf = append(rr.SuspectOf, m.name)
				case m.starved(phase):
					rr.Starved = true
				}
			}
			if rr.Suspect {
				suspect = append(suspect, rr.Group)
			}
			if rr.Starved {
				starved = append(starved, rr.Group)
			}
			a.Release = append(a.Release, *rr)
		}
	}
	bName := relName(bRel, base)
	cName := wd.text.TheCandidate
	if len(cands) == 1 {
		cName = relName(cands[0], base)
	} else if len(cands) > 1 {
		cName = wd.list(cands)
	}
	if len(cands) == 1 && cands[0] == "candidate" {
		// Releases inferred from roles: the candidate runs by name.
		var names []string
		for _, r := range a.Release {
			if !slices.Contains(names, r.Cand) {
				names = append(names, r.Cand)
			}
		}
		if len(names) <= 3 {
			cName = wd.list(names)
		}
	}
	if len(a.Release) == 0 {
		a.Outcome = Inconclusive
		a.Line = fmt.Sprintf(wd.text.RelNoPairs, cName, bName)
		return a
	}
	wd.releaseLine(q, &a, cName, bName)
	switch {
	case len(suspect) > 0:
		a.Confidence, a.ConfidenceWhy = wd.text.ConfLow, fmt.Sprintf(wd.text.RelSuspect, wd.list(wd.firstN(suspect, 3)))
		if len(suspect) == len(a.Release) && a.Outcome == Passed {
			a.Outcome = Inconclusive
		}
	case len(starved) > 0:
		a.Confidence, a.ConfidenceWhy = wd.text.ConfLow, fmt.Sprintf(wd.text.RelStarved, len(starved), len(a.Release))
	}
	return a
}

// releaseLine words a release answer from its rows: the levels by
// verdict, whether the bound held, the levels too short to judge; it sets
// the outcome, the line and the evidence.
func (wd *words) releaseLine(q Question, a *Answer, cName, bName string) {
	// One line: the levels by verdict, then whether the bound held.
	byVerdict := map[compare.Verdict][]string{}
	var exceeded, unjudged []string
	for _, r := range a.Release {
		item := wd.T("%s (%s against %s ms, %s", levelOf(r), wd.fms(r.Total.NewMeanMs), wd.fms(r.Total.BaseMeanMs), wd.signed(r.Total.DeltaPct))
		if l := slowestLabel(r); l != nil {
			// Slower through a label, not its total: quote the label, or
			// the total's "no significant change" figures stand as the
			// evidence of "slower".
			item = wd.T("%s (%s %s against %s ms, %s", levelOf(r), l.Label, wd.fms(l.NewMeanMs), wd.fms(l.BaseMeanMs), wd.signed(l.DeltaPct))
		}
		if r.Verdict == compare.NoChange && math.Abs(r.Total.DeltaPct) >= compare.DefaultMinEffectPct {
			item += wd.text.RelNoise
		}
		byVerdict[r.Verdict] = append(byVerdict[r.Verdict], item+")")
		if r.Verdict == compare.NotEnough {
			unjudged = append(unjudged, levelOf(r))
		}
		if r.Exceeds {
			exceeded = append(exceeded, fmt.Sprintf("%s (%s)", levelOf(r), wd.signed(worstDelta(r))))
		}
		vw := wd.verdictWords(r.Total.Verdict)
		if r.Total.Verdict == compare.NoChange && math.Abs(r.Total.DeltaPct) >= compare.DefaultMinEffectPct {
			vw += wd.text.RelNoise
		}
		ev := fmt.Sprintf(wd.text.RelRow, r.Group, wd.fms(r.Total.NewMeanMs), wd.fms(r.Total.BaseMeanMs), wd.signed(r.Total.DeltaPct), vw)
		for _, l := range r.Labels {
			if l.Verdict == compare.Slower && r.Total.Verdict != compare.Slower {
				ev += "; " + fmt.Sprintf(wd.text.RelLabelRow, l.Label, wd.fms(l.NewMeanMs), wd.fms(l.BaseMeanMs), wd.signed(l.DeltaPct), wd.verdictWords(l.Verdict))
			}
		}
		a.Evidence = append(a.Evidence, ev)
	}
	var parts []string
	for _, v := range []compare.Verdict{compare.Faster, compare.NoChange, compare.NotEnough, compare.Slower} {
		if len(byVerdict[v]) == 0 {
			continue
		}
		parts = append(parts, wd.verdictWords(v)+wd.W(" at ")+wd.list(byVerdict[v]))
	}
	line := strings.Join(parts, "; ")
	if len(exceeded) > 0 {
		a.Outcome = Failed
		line += "; " + fmt.Sprintf(wd.text.RelFailed, wd.pctWords(q.MaxSlowerPct), wd.list(exceeded))
	} else if len(unjudged) > 0 {
		// Levels too short to judge are not levels where the candidate
		// was not slower.
		a.Outcome = Inconclusive
		if len(unjudged) < len(a.Release) {
			line += "; " + fmt.Sprintf(wd.text.RelHeldJudged, wd.pctWords(q.MaxSlowerPct), len(a.Release)-len(unjudged), len(a.Release))
		}
	} else {
		a.Outcome = Passed
		line += "; " + fmt.Sprintf(wd.text.RelHeld, wd.pctWords(q.MaxSlowerPct))
	}
	if len(unjudged) > 0 {
		line += "; " + fmt.Sprintf(wd.text.RelTooFew, len(unjudged), len(a.Release), compare.MinSamples, compare.MinSeconds)
	}
	a.Line = fmt.Sprintf(wd.text.RelAnswer, cName, bName, line)
}

// sameConfig: two runs of one configuration, or a run that names none
// (a configuration inferred from roles is the baseline's own).
func sameConfig(a, b *member) bool {
	return a.f.Config == b.f.Config || a.f.Config == "" || b.f.Config == ""
}

// levelOf is a release row's level for the one-line answer.
func levelOf(r ReleaseRow) string {
	if r.Phase != "" {
		return r.Phase
	}
	return r.Group
}

func worstDelta(r ReleaseRow) float64 {
	w := r.Total.DeltaPct
	for _, l := range r.Labels {
		if l.Verdict == compare.Slower {
			w = max(w, l.DeltaPct)
		}
	}
	return w
}

func (wd *words) verdictWords(v compare.Verdict) string {
	switch v {
	case compare.Faster:
		return wd.W("faster")
	case compare.Slower:
		return wd.W("slower")
	case compare.NotEnough:
		// Too few requests or seconds show neither a change nor its
		// absence: not "no significant change".
		return wd.W("not enough data to judge")
	}
	return wd.text.NoChange
}

// slowestLabel is the row's label slower by the most, when the row is
// slower through a label while its total is not; nil otherwise.
func slowestLabel(r ReleaseRow) *compare.Row {
	if r.Verdict != compare.Slower || r.Total.Verdict == compare.Slower {
		return nil
	}
	var w *compare.Row
	for i, l := range r.Labels {
		if l.Verdict == compare.Slower && (w == nil || l.DeltaPct > w.DeltaPct) {
			w = &r.Labels[i]
		}
	}
	return w
}

// txLabels are the run's transaction labels by printed name; empty when
// it has none.
func txLabels(d *analysis.Dataset) map[string]bool {
	out := map[string]bool{}
	for _, k := range d.Labels() {
		if k.Tx && !k.Derived {
			out[d.LabelName(k)] = true
		}
	}
	return out
}

// ---- capacity ----

// capacityRows computes one row per workload and variant: a stepped run's
// own capacity analysis, or the runs of a series as its points.
func (wd *words) capacityRows(q Question, ms []*member, limits []Limit) ([]CapacityRow, []string) {
	var rows []CapacityRow
	var few []string
	var keys []string
	byKey := map[string][]*member{}
	for _, m := range ms {
		if m.soak() || (q.Workload != "" && m.f.Workload != q.Workload) {
			continue
		}
		k := m.seriesKey()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], m)
	}
	for _, k := range keys {
		group := byKey[k]
		// A capacity search answers its workload and variant's capacity
		// question by itself: the stepped runs and levels beside it are
		// the reference's tables, not a second answer.
		// Several runs of one variant (a run and its repeats) answer each
		// for itself: each row names its run, so the answer's lines and
		// the side-by-side table's rows are told apart and none is lost.
		searches := slices.DeleteFunc(slices.Clone(group), func(m *member) bool { return m.search == nil })
		stepped := slices.DeleteFunc(slices.Clone(group), func(m *member) bool { return !m.stepped() })
		name := func(m *member, of []*member) string {
			if len(of) > 1 {
				return variantWords(m) + " (" + m.name + ")"
			}
			return variantWords(m)
		}
		if len(searches) > 0 {
			for _, m := range searches {
				r := wd.searchCapacity(m, name(m, searches), limits)
				r.runs = group
				rows = append(rows, r)
			}
			continue
		}
		if len(stepped) > 0 {
			for _, m := range stepped {
				r := wd.steppedCapacity(q, m, name(m, stepped), limits)
				r.runs = group
				rows = append(rows, r)
			}
			continue
		}
		loads := map[float64]bool{}
		for _, m := range group {
			if l, _ := m.load(); l > 0 {
				loads[l] = true
			}
		}
		if len(loads) < 2 {
			few = append(few, variantWords(group[0]))
			continue
		}
		// Runs of several workloads are a series per workload: each
		// workload's requests against the run's load, as an average of
		// all requests moves with the mix the runs sent.
		for _, w := range seriesWorkloads(group) {
			r := wd.seriesCapacity(q, group, limits, w)
			r.runs = group
			rows = append(rows, r)
		}
	}
	return rows, few
}

// metAtLeast is the run of the row's workload and variant at one fixed
// load of at least load (the row's unit) that met the requirements with
// its load held, the highest such; nil without one. A search's or
// stepped run's answer below load is contradicted by it.
func metAtLeast(q Question, r CapacityRow, load float64) *member {
	var best *member
	var bestLoad float64
	for _, m := range r.runs {
		if m.search != nil || m.stepped() || m.invalid("") {
			continue
		}
		l, rate := m.load()
		if rate != (r.Unit == "req/s") || l < load {
			continue
		}
		if met := slaMet(q, m, -1); met != nil && *met && l > bestLoad {
			best, bestLoad = m, l
		}
	}
	return best
}

// variantWords names a workload and variant: "upload", "manager, A:
// synchronous log", "circulation, previous release".
func variantWords(m *member) string { return variantWordsOf(m, m.f.Workload) }

// variantWordsOf is variantWords with workload w in place of the run's:
// one workload's row of a run of several.
func variantWordsOf(m *member, w string) string {
	parts := []string{w}
	if m.f.Release != "" && m.f.Release != "candidate" {
		parts = append(parts, m.f.Release)
	}
	if m.f.Config != "" {
		parts = append(parts, m.f.Config)
	}
	return strings.Join(parts, ", ")
}

// slaMet judges the question's requirements (else the run's own) over a
// phase (-1: the whole run); nil without requirements.
func slaMet(q Question, m *member, phase int) *bool {
	exprs := q.SLA
	if len(exprs) == 0 {
		exprs = m.d.Info.SLA
	}
	if len(exprs) == 0 {
		return nil
	}
	met := true
	for _, e := range exprs {
		r := m.d.JudgeSLA(e)
		if phase < 0 {
			met = met && r.Passed
			continue
		}
		for _, pc := range r.PerPhase {
			if pc.Phase == m.d.Phases[phase].Name && !pc.Passed {
				met = false
			}
		}
	}
	return &met
}

func (wd *words) steppedCapacity(q Question, m *member, name string, limits []Limit) CapacityRow {
	cr := m.cap
	row := CapacityRow{Workload: name, Unit: "users", Bottleneck: cr.Bottleneck}
	rate := cr.Kind == knee.Rate
	if rate {
		row.Unit = "req/s"
	}
	var pts []knee.Point
	for _, s := range cr.Steps {
		st := m.sum.Phases[s.Phase].Labels
		tot := st[len(st)-1]
		p := CapacityPoint{Load: s.Point.Load, Phase: s.Name, Run: m.name, ThroughputRPS: tot.ThroughputRPS, MeanMs: tot.MeanMs, P95Ms: tot.P95Ms,
			ErrorPct: tot.ErrorPct, SLAMet: slaMet(q, m, s.Phase), Generator: m.starved(s.Name), Invalid: m.invalid(s.Name)}
		if tot.Errors > 0 {
			p.TopError = m.topError(s.Name)
		}
		row.Points = append(row.Points, p)
		kp := s.Point
		kp.SLAMet = p.SLAMet == nil || *p.SLAMet
		pts = append(pts, kp)
	}
	res, err := knee.Analyze(pts, knee.Options{Kind: cr.Kind, MinGain: cr.Knee.MinGain, ServerTimes: cr.ServerTimes})
	if err != nil {
		res = cr.Knee
	}
	wd.finishCapacity(&row, res, rate, limits)
	return row
}

// searchCapacity is the answer of a run's capacity search (plateau
// capacity): its capacity is the highest load probed good, its probes the
// points, its sentence the search's own answer (the load, its interval
// and what limited it). A search limited by the throughput plateau names
// the configured limit its knee matches, as a stepped run's knee does.
func (wd *words) searchCapacity(m *member, name string, limits []Limit) CapacityRow {
	cs := m.search
	row := CapacityRow{Workload: name, Unit: cs.Unit, HasSLA: true, Bottleneck: cs.Bottleneck, Search: true, SearchAnswer: cs, red: m.red}
	for _, p := range cs.Probes {
		if p.Verdict == capacity.NotJudged || p.Repeat {
			continue
		}
		met := p.Verdict == capacity.Good
		row.Points = append(row.Points, CapacityPoint{Load: p.Load, Run: m.name, Phase: p.Dir, ThroughputRPS: p.ThroughputRPS, MeanMs: p.MeanMs,
			P95Ms: p.P95Ms, ErrorPct: p.ErrorPct, SLAMet: &met, Invalid: !p.Held || p.GeneratorSaturated, Generator: p.GeneratorStarved})
		if p.ThroughputRPS > row.PeakRPS {
			row.PeakRPS, row.PeakLoad = p.ThroughputRPS, p.Load
		}
	}
	slices.SortStableFunc(row.Points, func(a, b CapacityPoint) int { return cmpF(a.Load, b.Load) })
	if cs.Load > 0 {
		l := cs.Load
		row.MaxLoadMeetingSLA = &l
	}
	_, lead := report.SearchAnswer(cs, wd.loc)
	sentence := m.red.String(lowerFirst(lead))
	if cs.LimitedBy == search.ThroughputFlat && cs.Load > 0 {
		// The knee lies in (Below, Load], whatever limits it: the
		// answer's "the knee lies between" and the table's knee agree.
		row.KneeLoad = cs.Load
		if cs.Below > 0 && cs.Below < cs.Load {
			row.KneeFrom = cs.Below
		}
		for _, p := range row.Points {
			if p.Load == cs.Load {
				row.KneeRPS = p.ThroughputRPS
			}
		}
	}
	switch {
	case cs.Outcome == search.GeneratorLimited,
		cs.Bottleneck != nil && cs.Bottleneck.Saturated && cs.Bottleneck.Component == resources.Generator:
		// The generator's own CPU at its ceiling first: the plateau the
		// probes show may be its own, as with a stepped run's knee.
		row.GeneratorLimited, row.Limiter = true, "generator"
	case cs.Bottleneck != nil && cs.Bottleneck.Saturated:
		row.Limiter = "component"
		// A count the server filled to a configured limit is that limit
		// (as for a stepped run's knee).
		if bn := cs.Bottleneck; bn.Resource == resources.Connections {
			for _, l := range limits {
				if bn.Capacity == l.Value {
					lim := l
					row.Limit, row.Limiter = &lim, "configured limit"
					sentence += "; " + fmt.Sprintf(wd.text.CapLimitCounted, wd.component(bn.Component), wd.resourceWords(bn.Resource), wd.pctWords(100*bn.Utilisation),
						wd.loadWords(bn.Load, cs.Unit == "req/s"), l.Name, wd.num(l.Value))
					break
				}
			}
		}
	case cs.LimitedBy == search.ThroughputFlat && cs.Load > 0:
		// The knee lies in (Below, Load]: a configured limit in it
		// explains the plateau.
		for _, l := range limits {
			if matchesLimit(cs.Load, cs.Below, l.Value, cs.Unit == "req/s") {
				lim := l
				row.Limit, row.Limiter = &lim, "configured limit"
				if l.Value == cs.Load || cs.Unit == "req/s" {
					sentence += "; " + fmt.Sprintf(wd.text.CapLimit, l.Name, wd.num(l.Value))
				} else {
					sentence += "; " + fmt.Sprintf(wd.text.CapLimitNear, l.Name, wd.num(l.Value))
				}
				break
			}
		}
	}
	row.Sentence = fmt.Sprintf(wd.text.CapSearch, row.Workload, sentence)
	return row
}

// seriesWorkloads are the workloads a series of runs is answered for:
// [""] (all requests) unless a run of it holds several workloads, else
// every workload its runs sent requests of, in order.
func seriesWorkloads(group []*member) []string {
	if !slices.ContainsFunc(group, func(m *member) bool { return m.d.Mixed() }) {
		return []string{""}
	}
	var ws []string
	for _, m := range group {
		for _, w := range m.d.RequestWorkloads() {
			if !slices.Contains(ws, w) {
				ws = append(ws, w)
			}
		}
	}
	return ws
}

// seriesCapacity is a series of runs at different loads as a capacity
// row: of all their requests (w ""), or of workload w's requests in each
// run (runs without any left out), named after w.
func (wd *words) seriesCapacity(q Question, group []*member, limits []Limit, w string) CapacityRow {
	row := CapacityRow{Workload: variantWords(group[0]), Unit: "users"}
	if w != "" {
		row.Workload = variantWordsOf(group[0], w)
	}
	sorted := slices.Clone(group)
	slices.SortStableFunc(sorted, func(a, b *member) int {
		la, _ := a.load()
		lb, _ := b.load()
		return cmpF(la, lb)
	})
	_, rate := sorted[0].load()
	if rate {
		row.Unit = "req/s"
	}
	var pts []knee.Point
	var steps []resources.PhaseReadings
	for _, m := range sorted {
		l, _ := m.load()
		if l <= 0 {
			continue
		}
		st := m.d.Total.Stats(core.TotalLabel, false, m.d.Span())
		if w != "" {
			a, _ := m.d.WorkloadTotal(w)
			if a.Count == 0 {
				continue
			}
			st = a.Stats(core.TotalLabel, false, m.d.Span())
		}
		p := CapacityPoint{Load: l, Run: m.name, ThroughputRPS: st.ThroughputRPS, MeanMs: st.MeanMs, P95Ms: st.P95Ms, ErrorPct: st.ErrorPct,
			SLAMet: slaMet(q, m, -1), Generator: m.starved(""), Invalid: m.invalid("")}
		if st.Errors > 0 {
			p.TopError = m.topError("")
		}
		row.Points = append(row.Points, p)
		pts = append(pts, knee.Point{Load: l, ThroughputRPS: st.ThroughputRPS, MeanMs: st.MeanMs, P95Ms: st.P95Ms, SLAMet: p.SLAMet == nil || *p.SLAMet})
		whole := core.Phase{Name: m.name, Start: m.d.Start, End: m.d.End}
		gen := 0.0
		if m.sum.Validity != nil {
			for _, pv := range m.sum.Validity.Phases {
				gen = max(gen, pv.CPUPct)
			}
		}
		steps = append(steps, resources.PhaseReadings{Phase: m.name, Load: l, Readings: resources.Readings(resources.Uses(m.targets, m.d.Info.Host.CPUs), whole, gen)})
	}
	markOffTrend(row.Points)
	k := knee.Users
	if rate {
		k = knee.Rate
	}
	res, err := knee.Analyze(pts, knee.Options{Kind: k})
	if err != nil {
		row.Sentence = err.Error()
		return row
	}
	kneeIdx := -1
	if res.Knee != nil {
		for i, s := range steps {
			if s.Load >= res.Knee.Load {
				kneeIdx = i
				break
			}
		}
	}
	row.Bottleneck = resources.FirstSaturated(steps, kneeIdx)
	wd.finishCapacity(&row, res, rate, limits)
	return row
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// finishCapacity states the row's knee, capacity and limiter.
func (wd *words) finishCapacity(row *CapacityRow, res knee.Result, rate bool, limits []Limit) {
	hasSLA := false
	for _, p := range row.Points {
		hasSLA = hasSLA || p.SLAMet != nil
		if p.ThroughputRPS > row.PeakRPS {
			row.PeakRPS, row.PeakLoad = p.ThroughputRPS, p.Load
		}
	}
	row.HasSLA = hasSLA
	if hasSLA {
		row.MaxLoadMeetingSLA = res.MaxLoadMeetingSLA
	}
	var parts []string
	switch {
	case !hasSLA:
		parts = append(parts, fmt.Sprintf(wd.text.CapNoSLA, row.Workload))
	case row.MaxLoadMeetingSLA != nil:
		parts = append(parts, fmt.Sprintf(wd.text.CapWithin, row.Workload, wd.loadWords(*row.MaxLoadMeetingSLA, rate)))
	case spanMet(row.Points) >= 0:
		// The lowest load broke them but higher ones met them (a cold
		// start, a warm-up step): said so, never "none".
		f := spanMet(row.Points)
		k := f
		for k+1 < len(row.Points) && row.Points[k+1].SLAMet != nil && *row.Points[k+1].SLAMet {
			k++
		}
		from, to := row.Points[f].Load, row.Points[k].Load
		row.WithinFrom, row.WithinTo = &from, &to
		var not []string
		for _, p := range row.Points[:f] {
			not = append(not, wd.loadWords(p.Load, rate))
		}
		p0 := row.Points[0]
		if from == to {
			parts = append(parts, fmt.Sprintf(wd.text.CapWithinAt, row.Workload, wd.loadWords(to, rate), wd.list(not)))
		} else {
			parts = append(parts, fmt.Sprintf(wd.text.CapWithinFrom, row.Workload, wd.num(from), wd.loadWords(to, rate), wd.list(not)))
		}
		s := fmt.Sprintf(wd.text.CapAtLowest, wd.loadWords(p0.Load, rate), wd.fms(p0.MeanMs), wd.pctWords(p0.ErrorPct))
		if p0.TopError != "" {
			s += fmt.Sprintf(wd.text.CapMostFrequent, p0.TopError)
		}
		parts = append(parts, s)
	default:
		p0 := row.Points[0]
		parts = append(parts, fmt.Sprintf(wd.text.CapNoneWithin, row.Workload, wd.loadWords(p0.Load, rate)))
		s := fmt.Sprintf(wd.text.CapAtLowest, wd.loadWords(p0.Load, rate), wd.fms(p0.MeanMs), wd.pctWords(p0.ErrorPct))
		if p0.TopError != "" {
			s += fmt.Sprintf(wd.text.CapMostFrequent, p0.TopError)
		}
		parts = append(parts, s)
	}
	if res.Knee == nil {
		parts = append(parts, fmt.Sprintf(wd.text.CapNoKnee, wd.loadWords(row.Points[len(row.Points)-1].Load, rate)))
		var starvedAt []string
		for _, p := range row.Points {
			if p.Generator && !p.Invalid {
				starvedAt = append(starvedAt, wd.num(p.Load))
			}
		}
		if len(starvedAt) > 0 {
			parts = append(parts, fmt.Sprintf(wd.text.CapNoKneeStarved, wd.list(wd.firstN(starvedAt, 4)), wd.W(row.Unit)))
		}
		row.Sentence = strings.Join(parts, "; ")
		return
	}
	row.KneeLoad, row.KneeRPS = res.Knee.Load, res.Knee.ThroughputRPS
	parts = append(parts, fmt.Sprintf(wd.text.CapKnee, wd.loadWords(res.Knee.Load, rate), wd.rps(res.Knee.ThroughputRPS)))
	// The generator: short of CPU (invalidating) at a step up to the one
	// after the knee, or named the bottleneck.
	// Starved (a warning): its response times include its own waiting,
	// so the curve may bend where the generator, not the service, fell
	// behind.
	var genAt, starvedAt []string
	for i, p := range row.Points {
		if p.Load > res.Knee.Load && (i == 0 || row.Points[i-1].Load > res.Knee.Load) {
			break
		}
		if p.Invalid {
			genAt = append(genAt, wd.loadWords(p.Load, rate))
		} else if p.Generator {
			starvedAt = append(starvedAt, wd.num(p.Load))
		}
	}
	counted := false
	bn := row.Bottleneck
	switch {
	case bn != nil && bn.Saturated && bn.Component == resources.Generator:
		row.GeneratorLimited, row.Limiter = true, "generator"
		parts = append(parts, fmt.Sprintf(wd.text.CapGenerator, wd.T("its CPU %s %% at %s", wd.num(math.Round(bn.Used)), wd.loadWords(bn.Load, rate))))
	case len(genAt) > 0:
		row.GeneratorLimited, row.Limiter = true, "generator"
		parts = append(parts, fmt.Sprintf(wd.text.CapGenerator, fmt.Sprintf(wd.text.CapNotHeldAt, wd.list(genAt))))
	case bn != nil && bn.Saturated:
		row.Limiter = "component"
		// A count that filled its capacity (calls in slots, connections
		// of a pool) equal to a configured limit is that limit, counted
		// by the server itself.
		var lim *Limit
		for _, l := range limits {
			if bn.Resource == resources.Connections && bn.Capacity == l.Value {
				lim = &l
				break
			}
		}
		if lim != nil {
			row.Limit, row.Limiter, counted = lim, "configured limit", true
			parts = append(parts, fmt.Sprintf(wd.text.CapLimitCounted, wd.component(bn.Component), wd.resourceWords(bn.Resource), wd.pctWords(100*bn.Utilisation), wd.loadWords(bn.Load, rate),
				lim.Name, wd.num(lim.Value)))
		} else {
			parts = append(parts, fmt.Sprintf(wd.text.CapComponent, wd.component(bn.Component), wd.resourceWords(bn.Resource), wd.pctWords(100*bn.Utilisation), wd.loadWords(bn.Load, rate)))
		}
	default:
		prev := 0.0
		for _, p := range row.Points {
			if p.Load < res.Knee.Load {
				prev = p.Load
			}
		}
		for _, l := range limits {
			if matchesLimit(res.Knee.Load, prev, l.Value, rate) {
				lim := l
				row.Limit, row.Limiter = &lim, "configured limit"
				if l.Value == res.Knee.Load || rate {
					parts = append(parts, fmt.Sprintf(wd.text.CapLimit, l.Name, wd.num(l.Value)))
				} else {
					parts = append(parts, fmt.Sprintf(wd.text.CapLimitNear, l.Name, wd.num(l.Value)))
				}
				break
			}
		}
		if row.Limit == nil {
			if bn != nil {
				parts = append(parts, fmt.Sprintf(wd.text.CapBusiest, wd.component(bn.Component), wd.resourceWords(bn.Resource), wd.pctWords(100*bn.Utilisation)))
			} else {
				parts = append(parts, wd.text.CapNothing)
			}
		}
	}
	// A limit the server counted full is evidence of its own; any other
	// reading of a knee the starved generator's times shaped is not sure.
	if len(starvedAt) > 0 && !row.GeneratorLimited && !counted {
		parts = append(parts, fmt.Sprintf(wd.text.CapKneeStarved, wd.list(wd.firstN(starvedAt, 4)), wd.W(row.Unit)))
	}
	row.Sentence = strings.Join(parts, "; ")
}

// spanMet is the index of the first point that met the requirements
// after the lowest broke them; −1 when none did.
func spanMet(ps []CapacityPoint) int {
	for i, p := range ps {
		if p.SLAMet != nil && *p.SLAMet {
			return i
		}
	}
	return -1
}

// resourceWords is a resource in a sentence: "CPU", "memory",
// "connections".
// resourceWords names a resource inside a sentence: "CPU", "memory" in
// English as before, the report's word in another language.
func (wd *words) resourceWords(r string) string {
	if !wd.loc.English() {
		return report.ResourceWord(wd.loc, r)
	}
	if r == resources.CPU {
		return r
	}
	return strings.ToLower(r)
}

// component names a capacity reading's component: the load generator
// worded, any other by its own name.
func (wd *words) component(c string) string {
	if wd.loc.English() {
		return c
	}
	return report.ComponentName(wd.loc, c)
}

// matchesLimit: a configured limit explains a knee at a number of users
// when it lies between the step before the knee and the knee, both
// included (the steps are discrete, and a generator that cannot keep all
// its users in flight reaches the limit a step late); a knee at a rate
// when it is within 5 % of it.
func matchesLimit(knee, prev, limit float64, rate bool) bool {
	if rate {
		return math.Abs(knee-limit) <= 0.05*limit
	}
	return limit >= prev && limit <= knee
}

func (wd *words) answerCapacity(q Question, ms []*member, limits []Limit) Answer {
	a := Answer{}
	rows, few := wd.capacityRows(q, ms, limits)
	a.Capacity = rows
	if len(rows) == 0 {
		a.Outcome = Inconclusive
		a.Line = fmt.Sprintf(wd.text.CapFewLevels, wd.list(few))
		return a
	}
	a.Outcome = Passed
	var lines []string
	allGen := true
	var starved []string
	failed, disputed := false, false
	for _, r := range rows {
		s := r.Sentence
		if q.MinLoad > 0 && r.HasSLA {
			if r.MaxLoadMeetingSLA == nil || *r.MaxLoadMeetingSLA < q.MinLoad {
				s += " (" + fmt.Sprintf(wd.text.CapMinLoadFailed, wd.loadWords(q.MinLoad, r.Unit == "req/s"))
				if m := metAtLeast(q, r, q.MinLoad); m != nil {
					// A run of the same workload held the requirements
					// at the load expected: the study's own runs
					// disagree, and the question is not answered.
					l, rate := m.load()
					s += "; " + fmt.Sprintf(wd.text.CapMinLoadDisputed, m.name, wd.loadWords(l, rate))
					disputed = true
				} else {
					failed = true
				}
				s += ")"
			} else {
				s += " (" + fmt.Sprintf(wd.text.CapMinLoadHeld, wd.loadWords(q.MinLoad, r.Unit == "req/s")) + ")"
			}
		}
		lines = append(lines, s)
		allGen = allGen && r.GeneratorLimited
		var at []string
		for _, p := range r.Points {
			if p.Generator && !p.Invalid {
				at = append(at, wd.num(p.Load))
			}
		}
		if len(at) > 0 {
			starved = append(starved, wd.T("%s at %s %s", r.Workload, wd.list(wd.firstN(at, 4)), wd.W(r.Unit)))
		}
	}
	a.Line = joinSentences(lines)
	a.Evidence = lines
	switch {
	case failed:
		a.Outcome = Failed
	case disputed:
		a.Outcome = Inconclusive
	}
	if allGen && a.Outcome == Passed {
		a.Outcome = Inconclusive
	}
	if len(starved) > 0 {
		a.Confidence, a.ConfidenceWhy = wd.text.ConfLow, fmt.Sprintf(wd.text.CapStarved, strings.Join(starved, "; "))
	}
	if len(few) > 0 {
		a.Evidence = append(a.Evidence, fmt.Sprintf(wd.text.CapFewLevels, wd.list(few)))
	}
	return a
}

// firstN is v's first n items and "k more", in the study's language.
func (wd *words) firstN(v []string, n int) []string {
	if len(v) <= n {
		return v
	}
	return append(slices.Clone(v[:n]), wd.T("%d more", len(v)-n))
}

// ---- configurations ----

func (wd *words) answerConfigurations(q Question, ms []*member, limits []Limit) Answer {
	a := Answer{}
	rows, _ := wd.capacityRows(q, ms, limits)
	byWorkload := map[string][]CapacityRow{}
	var order []string
	wl := map[string]string{}
	for _, m := range ms {
		wl[variantWords(m)] = m.f.Workload
		wl[variantWords(m)+" ("+m.name+")"] = m.f.Workload // one of several runs of a variant
		if m.d.Mixed() {
			for _, w := range m.d.RequestWorkloads() {
				wl[variantWordsOf(m, w)] = w // a series' row per workload (seriesCapacity)
			}
		}
	}
	for _, r := range rows {
		w := wl[r.Workload]
		if _, ok := byWorkload[w]; !ok {
			order = append(order, w)
		}
		byWorkload[w] = append(byWorkload[w], r)
	}
	var lines []string
	for _, w := range order {
		rs := byWorkload[w]
		if len(rs) < 2 {
			continue
		}
		a.Capacity = append(a.Capacity, rs...)
		best := 0
		for i, r := range rs {
			if r.PeakRPS > rs[best].PeakRPS {
				best = i
			}
		}
		// The question compares by knee, peak throughput and load within
		// the requirements: each configuration with all three.
		var others []string
		for i, r := range rs {
			if i != best {
				others = append(others, fmt.Sprintf(wd.text.CfgRow, strings.TrimPrefix(r.Workload, w+", "), wd.cfgFigures(r)))
			}
		}
		lines = append(lines, fmt.Sprintf(wd.text.CfgAnswer, w, strings.TrimPrefix(rs[best].Workload, w+", "), wd.cfgFigures(rs[best]), wd.list(others)))
		for _, r := range rs {
			a.Evidence = append(a.Evidence, r.Sentence)
		}
	}
	if len(lines) == 0 {
		a.Outcome, a.Line = Inconclusive, wd.text.CfgNone
		return a
	}
	a.Outcome = Passed
	a.Line = joinSentences(lines)
	gen := 0
	for _, r := range a.Capacity {
		if r.GeneratorLimited {
			gen++
		}
	}
	if gen == len(a.Capacity) {
		a.Outcome = Inconclusive
	}
	if gen > 0 {
		a.Confidence, a.ConfidenceWhy = wd.text.ConfLow, fmt.Sprintf(wd.text.CfgGenerator, gen, len(a.Capacity))
	}
	return a
}

// cfgFigures are a configuration's figures the configurations question
// compares: its peak throughput, its knee and the highest load within the
// requirements, from its capacity search when it is one.
func (wd *words) cfgFigures(r CapacityRow) string {
	rate := r.Unit == "req/s"
	parts := []string{fmt.Sprintf(wd.text.CfgPeak, wd.rps(r.PeakRPS))}
	switch {
	case r.KneeFrom > 0:
		parts = append(parts, fmt.Sprintf(wd.text.CfgKneeBetween, wd.num(r.KneeFrom), wd.loadWords(r.KneeLoad, rate)))
	case r.KneeLoad > 0:
		parts = append(parts, fmt.Sprintf(wd.text.CfgKnee, wd.loadWords(r.KneeLoad, rate)))
	default:
		parts = append(parts, wd.text.CfgNoKnee)
	}
	switch {
	case r.MaxLoadMeetingSLA != nil:
		parts = append(parts, fmt.Sprintf(wd.text.CfgWithin, wd.loadWords(*r.MaxLoadMeetingSLA, rate)))
	case r.HasSLA:
		parts = append(parts, wd.text.CfgNoneWithin)
	}
	s := strings.Join(parts, ", ")
	if r.Search {
		s += wd.text.CfgFromSearch
	}
	return s
}

// ---- repeatability ----

func (wd *words) answerRepeatability(q Question, ms []*member) Answer {
	a := Answer{}
	byKey := map[string][]*member{}
	var keys []string
	for _, m := range ms {
		if m.soak() {
			continue
		}
		k := m.group() + " | " + m.variant()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], m)
	}
	var lines []string
	for _, k := range keys {
		g := byKey[k]
		if len(g) < 2 {
			continue
		}
		// Runs of several workloads agree or not per workload: an
		// average over all their requests is a figure of no workload.
		for _, set := range repeatSets(g, q.Workload) {
			s, rg := wd.repeatLine(q, g[0].groupWords(), set, &a)
			a.Repeats = append(a.Repeats, rg)
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		a.Outcome, a.Line = Inconclusive, wd.text.RepNoGroup
		if q.Workload != "" {
			a.Line = fmt.Sprintf(wd.text.RepNoWorkload, q.Workload)
		}
		return a
	}
	if a.Outcome == "" {
		a.Outcome = Passed
	}
	a.Line = joinSentences(lines)
	a.Evidence = lines
	for _, m := range ms {
		if short, why := m.generatorShort(""); short {
			a.Confidence, a.ConfidenceWhy = wd.text.ConfLow, m.name+": "+why
			break
		}
	}
	return a
}

// repeatLine is one repeat set's spread against the bound, in a sentence;
// it makes a's outcome worse where the set fails it.
func (wd *words) repeatLine(q Question, group string, set repeatSet, a *Answer) (string, RepeatGroup) {
	idx := make([]int, len(set.runs))
	for i := range idx {
		idx[i] = i
	}
	sp := repeatSpread(set.runs, idx)
	sp.Workload = set.workload
	rg := RepeatGroup{Group: group, Spread: *sp}
	var s string
	if set.workload != "" {
		s = fmt.Sprintf(wd.text.RepAnswerOf, len(set.runs), group, set.workload, wd.fms(sp.MeanMs), wd.fms(sp.SDMs), wd.pctWords(sp.CVPct))
	} else {
		s = fmt.Sprintf(wd.text.RepAnswer, len(set.runs), group, wd.fms(sp.MeanMs), wd.fms(sp.SDMs), wd.pctWords(sp.CVPct))
	}
	bound := ", " + fmt.Sprintf(wd.text.RepHolds, wd.pctWords(q.MaxCVPct))
	if sp.CVPct > q.MaxCVPct {
		bound = ", " + fmt.Sprintf(wd.text.RepExceeds, wd.pctWords(q.MaxCVPct))
	}
	s += bound
	var outs []string
	var keep []int
	for i, m := range set.ms {
		if slices.Contains(sp.Outliers, m.name) {
			if short, _ := m.generatorShort(""); short {
				rg.GeneratorOutliers = append(rg.GeneratorOutliers, m.name)
				outs = append(outs, fmt.Sprintf(wd.text.RepOutlierGen, m.name, wd.fms(set.runs[i].MeanMs)))
			} else {
				outs = append(outs, fmt.Sprintf(wd.text.RepOutlier, m.name, wd.fms(set.runs[i].MeanMs)))
			}
			continue
		}
		keep = append(keep, i)
	}
	if len(outs) == 0 {
		s += "; " + wd.text.RepNone
	} else {
		s += "; " + wd.list(outs)
		if len(keep) >= 2 {
			rg.CVWithoutPct = repeatSpread(set.runs, keep).CVPct
			s += "; " + fmt.Sprintf(wd.text.RepWithout, wd.pctWords(rg.CVWithoutPct))
		}
	}
	// Runs whose load was not held (or whose generator's CPU was at its
	// ceiling) are named, with the variation of the others.
	var invalid []string
	var valid []int
	for i, m := range set.ms {
		if m.invalid("") {
			invalid = append(invalid, m.name)
		} else {
			valid = append(valid, i)
		}
	}
	rg.InvalidRuns = invalid
	if len(invalid) > 0 {
		s += "; " + fmt.Sprintf(wd.text.RepInvalid, wd.list(invalid))
		if len(valid) >= 2 {
			rg.CVValidPct = repeatSpread(set.runs, valid).CVPct
			s += "; " + fmt.Sprintf(wd.text.RepWithoutInvalid, wd.pctWords(rg.CVValidPct))
		}
	}
	switch {
	case sp.CVPct <= q.MaxCVPct:
	case len(rg.GeneratorOutliers) > 0 && len(keep) >= 2 && rg.CVWithoutPct <= q.MaxCVPct:
		s += "; " + wd.text.RepThroughGen
		if a.Outcome != Failed {
			a.Outcome = Inconclusive
		}
	case len(invalid) > 0 && (len(valid) < 2 || rg.CVValidPct <= q.MaxCVPct):
		// The bound is exceeded through runs that are no evidence: the
		// question is open, not failed.
		s += "; " + wd.text.RepThroughInvalid
		if a.Outcome != Failed {
			a.Outcome = Inconclusive
		}
	default:
		a.Outcome = Failed
	}
	return s, rg
}

// repeatSet is the runs a repeat spread reads, with the average each
// stands for: of all its requests, or of one workload's.
type repeatSet struct {
	workload string // "" for all requests
	runs     []Run
	ms       []*member
}

// repeatSets are the figures the spread of the runs g reads: each run's
// average of all requests when the runs have one workload; else one set
// per workload with response times, in plan order, of the runs that ran
// it. only restricts them to that workload. A set needs two runs.
func repeatSets(g []*member, only string) []repeatSet {
	var ws []string
	several := false
	for _, m := range g {
		several = several || len(workloadNames(m.d)) > 1
		for _, w := range m.timedWorkloads() {
			if !slices.Contains(ws, w) {
				ws = append(ws, w)
			}
		}
	}
	switch {
	case only != "":
		ws = []string{only}
	case !several:
		ws = []string{""}
	}
	var out []repeatSet
	for _, w := range ws {
		set := repeatSet{workload: w}
		for _, m := range g {
			mean := m.d.Total.MeanMs()
			if w != "" {
				ag := m.workloadAgg(w)
				if ag == nil {
					continue
				}
				mean = ag.MeanMs()
			}
			set.runs = append(set.runs, Run{Name: m.name, MeanMs: mean})
			set.ms = append(set.ms, m)
		}
		if len(set.runs) >= 2 {
			out = append(out, set)
		}
	}
	return out
}

// ---- soak ----

// memMetrics are the memory series a soak's trend reads, in preference
// order.
var memMetrics = []string{"rss_bytes", "memory_working_set_bytes", "heap_used_bytes", "mem_used_bytes", "memory_bytes"}

func (wd *words) answerSoak(q Question, ms []*member) Answer {
	a := Answer{}
	var lines []string
	indicative := ""
	for _, m := range ms {
		if !m.soak() {
			continue
		}
		span := m.d.Span()
		sr := SoakRun{Run: m.name, DurationS: math.Round(span.Seconds()*10) / 10}
		labels := txLabels(m.d)
		var parts []string
		for _, k := range m.d.Labels() {
			name := m.d.LabelName(k)
			if k.Derived || (len(labels) > 0 && !labels[name]) {
				continue
			}
			ticks := m.d.Timeline[k]
			if len(ticks) < 10 {
				continue
			}
			n := len(ticks) / 5
			first, last := tickMean(ticks[:n]), tickMean(ticks[len(ticks)-n:])
			if first <= 0 {
				continue
			}
			var pts []core.Point
			for _, t := range ticks {
				if t.Count > 0 {
					pts = append(pts, core.Point{T: t.T, V: t.MeanMs})
				}
			}
			sig, moved := false, false
			if r, err := trend.Drift(pts, trend.DriftOptions{}); err == nil {
				sig = r.Significant && (r.SlopePerHour > 0 || r.ChangeDelta > 0)
				moved = r.Significant
			}
			sl := SoakLabel{Label: name, FirstMs: round2(first), LastMs: round2(last), ChangePct: round2(100 * (last - first) / first), Significant: sig}
			sl.Drifting = sig && sl.ChangePct > q.MaxDriftPct
			sr.Drifting = sr.Drifting || sl.Drifting
			sr.Labels = append(sr.Labels, sl)
			if sl.Drifting || len(labels) > 0 {
				ch := wd.signed(sl.ChangePct)
				if !moved && math.Abs(sl.ChangePct) > q.MaxDriftPct {
					ch += wd.text.SoakNoise
				}
				parts = append(parts, fmt.Sprintf(wd.text.SoakLabel, name, wd.fms(first), wd.fms(last), ch))
			}
		}
		for _, t := range targetsOf(m.series, m.statuses) {
			if t.Kind == mondata.KindHost && !m.roleOf(t.Name).UnderTest() {
				continue
			}
			if t.Kind == mondata.KindHost && m.roleOf(t.Name) == mondata.RoleUnknown {
				continue // a host holds every process, the generator's too
			}
			var s *core.Series
			for _, want := range memMetrics {
				for _, x := range t.Series {
					if x.Metric == want && len(x.Points) > 0 && s == nil {
						s = x
					}
				}
			}
			if s == nil {
				continue
			}
			pts := within(s.Points, m.d.Start, m.d.End)
			if len(pts) < 10 {
				continue
			}
			n := len(pts) / 5
			first, last := pointMean(pts[:n])/1e6, pointMean(pts[len(pts)-n:])/1e6
			mr, err := trend.Memory(pts, nil, trend.MemoryOptions{MinSpan: -1})
			v := string(trend.Unknown)
			if err == nil {
				v = string(mr.Verdict)
			}
			sm := SoakMem{Target: t.Name, FirstMB: round2(first), LastMB: round2(last), Verdict: v}
			sr.Memory = append(sr.Memory, sm)
			if v == string(trend.Growing) && first > 0 && 100*(last-first)/first > q.MaxDriftPct {
				sr.Drifting = true
				parts = append(parts, fmt.Sprintf(wd.text.SoakMemoryGrew, t.Name, wd.f1(first), wd.f1(last), wd.signed(100*(last-first)/first)))
			} else {
				parts = append(parts, fmt.Sprintf(wd.text.SoakMemory, t.Name, wd.f1(first), wd.f1(last)))
			}
		}
		dur := wd.durWords(span)
		line := fmt.Sprintf(wd.text.SoakStable, m.name, dur)
		if sr.Drifting {
			line = fmt.Sprintf(wd.text.SoakDrifting, m.name, dur)
			a.Outcome = Failed
		}
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, "; ") + ")"
		}
		if span < time.Hour {
			indicative = dur
		}
		a.Soak = append(a.Soak, sr)
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		a.Outcome, a.Line = Inconclusive, wd.text.SoakNone
		return a
	}
	if a.Outcome == "" {
		a.Outcome = Passed
	}
	a.Line = joinSentences(lines)
	a.Evidence = lines
	if indicative != "" {
		a.Confidence, a.ConfidenceWhy = wd.text.ConfIndicative, fmt.Sprintf(wd.text.SoakIndicative, indicative)
	}
	return a
}

// durWords is a duration as a sentence states it: "13 s", "12 min",
// "10 h 5 min".
func (wd *words) durWords(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Round(time.Second).Seconds()))
	case d < time.Hour:
		return wd.T("%d min", int(d.Round(time.Minute).Minutes()))
	}
	h := int(d / time.Hour)
	m := int((d - time.Duration(h)*time.Hour).Round(time.Minute).Minutes())
	if m == 0 {
		return fmt.Sprintf("%d h", h)
	}
	return wd.T("%d h %d min", h, m)
}

func tickMean(ts []analysis.Tick) float64 {
	var sum float64
	var n int64
	for _, t := range ts {
		sum += t.MeanMs * float64(t.Count)
		n += t.Count
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

func within(ps []core.Point, from, to time.Time) []core.Point {
	var out []core.Point
	for _, p := range ps {
		if !p.T.Before(from) && !p.T.After(to) && !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
			out = append(out, p)
		}
	}
	return out
}

func pointMean(ps []core.Point) float64 {
	if len(ps) == 0 {
		return 0
	}
	var s float64
	for _, p := range ps {
		s += p.V
	}
	return s / float64(len(ps))
}

// ---- interference ----

func (wd *words) answerInterference(q Question, ms []*member) Answer {
	a := Answer{}
	var lines []string
	for _, m := range ms {
		ir, ok := wd.interference(q, m)
		if !ok {
			continue
		}
		ir.Invalid = m.invalid("")
		a.Interference = append(a.Interference, ir)
		b, d, af := ir.Windows[0], ir.Windows[1], ir.Windows[2]
		s := fmt.Sprintf(wd.text.IntRun, m.name, ir.Workload, wd.fms(d.MeanMs), ir.Other, wd.fms(b.MeanMs), wd.fms(af.MeanMs), wd.pctWords(d.ErrorPct), wd.pctWords(b.ErrorPct))
		for _, c := range ir.CPU {
			if c.Has[0] && c.Has[1] && c.Has[2] {
				s += "; " + fmt.Sprintf(wd.text.IntCPU, c.Target, wd.f1(c.Pct[0]), wd.f1(c.Pct[1]), wd.f1(c.Pct[2]))
			}
		}
		if ir.Planned > 0 {
			s += "; " + fmt.Sprintf(wd.text.IntWork, ir.Other, wd.thousands(float64(ir.Started)), wd.thousands(float64(ir.Planned)), wd.thousands(float64(ir.Succeeded)))
		}
		lines = append(lines, s)
	}
	if len(lines) == 0 {
		a.Outcome, a.Line = Inconclusive, wd.text.IntNone
		return a
	}
	dist := 0
	var invalid []string
	validDisturbed := false
	for _, ir := range a.Interference {
		if ir.Disturbed {
			dist++
			validDisturbed = validDisturbed || !ir.Invalid
		}
		if ir.Invalid {
			invalid = append(invalid, ir.Run)
		}
	}
	w, o := a.Interference[0].Workload, a.Interference[0].Other
	if dist > 0 {
		// The run where it rose most, with its figures: a valid run's
		// when one shows it — a run whose load was not held is no
		// headline.
		worst := -1
		for i, ir := range a.Interference {
			if ir.Disturbed && (!validDisturbed || !ir.Invalid) && (worst < 0 || ir.rise() > a.Interference[worst].rise()) {
				worst = i
			}
		}
		ir := a.Interference[worst]
		a.Line = fmt.Sprintf(wd.text.IntStarved, fmt.Sprintf(wd.text.IntWorst, o, w, dist, len(a.Interference), ir.Run,
			wd.fms(ir.Windows[1].MeanMs), o, wd.fms(ir.Windows[0].MeanMs), wd.pctWords(ir.Windows[1].ErrorPct), wd.pctWords(ir.Windows[0].ErrorPct)))
		a.Outcome = Failed
		if !validDisturbed {
			a.Outcome = Inconclusive
		}
	} else {
		a.Outcome = Passed
		a.Line = fmt.Sprintf(wd.text.IntNotStarved, fmt.Sprintf(wd.text.IntNoneRaised, len(a.Interference), o, w, wd.pctWords(q.MaxSlowerPct), wd.pointsWords(q.MaxErrorPct)))
		if len(invalid) == len(a.Interference) {
			a.Outcome = Inconclusive
		}
	}
	if len(invalid) > 0 {
		a.Line += "; " + fmt.Sprintf(wd.text.IntInvalid, wd.list(invalid))
		if a.Outcome == Inconclusive {
			a.Line += wd.text.IntInvalidAll
		}
	}
	a.Evidence = lines
	var gen []string
	for _, m := range ms {
		if short, _ := m.generatorShort(""); short {
			gen = append(gen, m.name)
		}
	}
	if len(gen) > 0 {
		a.Confidence, a.ConfidenceWhy = wd.text.ConfLow, fmt.Sprintf(wd.text.IntGenerator, wd.list(gen))
	}
	return a
}

// rise is how much the disturbed workload's average rose during the
// other, as a fraction of before.
func (ir InterferenceRun) rise() float64 {
	if ir.Windows[0].MeanMs <= 0 {
		return 0
	}
	return ir.Windows[1].MeanMs/ir.Windows[0].MeanMs - 1
}

// InterferenceCuts are the windows before, during and after workload
// other ran within workload's span (each workload's span from its phases):
// the windows the interference answer measures, for any table that
// states the same quantities. Empty names are chosen as the answer
// chooses them: workload the longest-running, other the first besides
// it. False when the run has no such pair, or other did not start after
// workload.
func InterferenceCuts(d *analysis.Dataset, workload, other string) (cuts [3]Window, w, o string, ok bool) {
	type span struct{ from, to time.Time }
	spans := map[string]span{}
	var names []string
	for _, p := range d.Phases {
		if p.Workload == "" {
			continue
		}
		s, ok := spans[p.Workload]
		if !ok {
			names = append(names, p.Workload)
			s = span{p.Start, p.End}
		}
		if p.Start.Before(s.from) {
			s.from = p.Start
		}
		if p.End.After(s.to) {
			s.to = p.End
		}
		spans[p.Workload] = s
	}
	if len(names) < 2 {
		return cuts, "", "", false
	}
	w, o = workload, other
	if w == "" {
		for _, n := range names {
			if w == "" || spans[n].to.Sub(spans[n].from) > spans[w].to.Sub(spans[w].from) {
				w = n
			}
		}
	}
	if o == "" {
		for _, n := range names {
			if n != w {
				o = n
				break
			}
		}
	}
	ws, wok := spans[w]
	os, ook := spans[o]
	if !wok || !ook || !os.from.After(ws.from) {
		return cuts, "", "", false
	}
	cuts = [3]Window{{From: ws.from, To: os.from}, {From: os.from, To: os.to}, {From: os.to, To: ws.to}}
	return cuts, w, o, true
}

// interference measures the run's disturbed workload before, during and
// after the other one; false when the run has no such pair.
func (wd *words) interference(q Question, m *member) (InterferenceRun, bool) {
	cuts, w, o, found := InterferenceCuts(m.d, q.Workload, q.Other)
	if !found {
		return InterferenceRun{}, false
	}
	ir := InterferenceRun{Run: m.name, Workload: w, Other: o}
	for i, c := range cuts {
		win := Window{From: c.From, To: c.To}
		var sum float64
		for k, ticks := range m.d.Timeline {
			if k.Workload != w || k.Tx || k.Derived {
				continue
			}
			for _, t := range ticks {
				if !t.T.Before(c.From) && t.T.Before(c.To) {
					win.Requests += t.Count
					win.Errors += t.Errors
					sum += t.MeanMs * float64(t.Count)
				}
			}
		}
		if win.Requests > 0 {
			win.MeanMs = round2(sum / float64(win.Requests))
			win.ErrorPct = round2(100 * float64(win.Errors) / float64(win.Requests))
		}
		ir.Windows[i] = win
	}
	for _, t := range targetsOf(m.series, m.statuses) {
		if t.Kind == mondata.KindHost {
			continue
		}
		var s *core.Series
		for _, x := range t.Series {
			if (x.Metric == "cpu_pct" || x.Metric == "cpu_busy_pct") && s == nil {
				s = x
			}
		}
		if s == nil {
			continue
		}
		cw := CPUWin{Target: t.Name}
		for i, c := range cuts {
			if ps := within(s.Points, c.From, c.To); len(ps) > 0 {
				cw.Pct[i], cw.Has[i] = round2(pointMean(ps)), true
			}
		}
		ir.CPU = append(ir.CPU, cw)
	}
	if m.sum.Validity != nil {
		for _, pv := range m.sum.Validity.Phases {
			if pv.Workload == o && pv.Planned > 0 {
				ir.Planned += pv.Planned
				ir.Started += pv.Started
			}
		}
	}
	ok := metrics.NewAgg()
	for k, ag := range m.d.Run {
		if k.Workload == o && !k.Tx && !k.Derived {
			ok.Merge(ag)
		}
	}
	ir.Succeeded = ok.Count - ok.Errors
	b, d := ir.Windows[0], ir.Windows[1]
	if b.Requests > 0 && d.Requests > 0 {
		ir.Disturbed = d.MeanMs > b.MeanMs*(1+q.MaxSlowerPct/100) || d.ErrorPct > b.ErrorPct+q.MaxErrorPct
	}
	return ir, true
}
