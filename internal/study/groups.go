package study

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report"
)

// member is one run of the study with everything the questions read: its
// data, summary, capacity analysis, monitor data and resolved factors.
type member struct {
	i          int
	name, role string
	d          *analysis.Dataset
	sum        *analysis.Summary
	facts      compare.RunFacts
	cap        *analysis.CapacityRun
	series     []core.Series
	statuses   []mondata.TargetStatus
	targets    []resources.Target
	f          Factors // resolved: given, else read from the run and its role
	red        *report.Redactor
	// search is the run's capacity search (plateau capacity, or a load
	// with search:), nil for any other run.
	search *capacity.Search
	// wd words the study's answers in its language.
	wd *words
}

// stepped reports whether the run has load steps its capacity analysis
// could read.
func (m *member) stepped() bool {
	return m.cap != nil && m.cap.Skip == analysis.CapacityDone && m.cap.Err == nil
}

// soak reports whether the run is a soak (role soak).
func (m *member) soak() bool { return m.role == Soak }

// level is the run's load level in words ("8 users", "50/s", "steps of
// 1–24 users").
func (m *member) level() string {
	wd := m.words()
	if m.search != nil && len(m.search.Probes) > 0 {
		// A capacity search probes several loads: it is no run at the
		// load it started from, and is compared with none.
		lo, hi := m.search.Probes[0].Load, m.search.Probes[0].Load
		for _, p := range m.search.Probes {
			lo, hi = min(lo, p.Load), max(hi, p.Load)
		}
		return wd.T("capacity search over %s–%s", wd.num(lo), wd.loadWords(hi, m.search.Unit == "req/s"))
	}
	if m.stepped() {
		lo, hi := m.cap.Steps[0].Point.Load, m.cap.Steps[len(m.cap.Steps)-1].Point.Load
		return wd.T("steps of %s–%s", wd.num(lo), wd.loadWords(hi, m.cap.Kind == knee.Rate))
	}
	switch {
	case m.f.Users > 0:
		return wd.loadWords(float64(m.f.Users), false)
	case m.f.Rate > 0:
		return wd.loadWords(m.f.Rate, true)
	}
	return ""
}

// load is the run's load level as a number (users, else rate) and whether
// it is a rate.
func (m *member) load() (float64, bool) {
	if m.f.Users > 0 {
		return float64(m.f.Users), false
	}
	return m.f.Rate, m.f.Rate > 0
}

// group is the key of the runs a run may be compared with: the same
// workload at the same load level, soaks apart from fixed-load tests.
func (m *member) group() string {
	g := m.f.Workload + " | " + m.level()
	if m.soak() {
		g += " | soak"
	}
	return g
}

// groupWords names the group for a sentence: "circulation, 8 users".
func (m *member) groupWords() string {
	parts := []string{}
	if m.f.Workload != "" {
		parts = append(parts, m.f.Workload)
	}
	if l := m.level(); l != "" {
		parts = append(parts, l)
	}
	if m.soak() {
		parts = append(parts, "soak")
	}
	return strings.Join(parts, ", ")
}

// variant is what tells runs of one group apart: release and
// configuration.
func (m *member) variant() string { return m.f.Release + " | " + m.f.Config }

// series key: runs of one workload and variant at different levels make
// one load series.
func (m *member) seriesKey() string { return m.f.Workload + " | " + m.variant() }

// workloadNames are the run's workloads in plan order.
func workloadNames(d *analysis.Dataset) []string {
	var out []string
	for _, w := range d.Info.Workloads {
		if w.Name != "" && !slices.Contains(out, w.Name) {
			out = append(out, w.Name)
		}
	}
	if len(out) == 0 {
		for _, p := range d.Phases {
			if p.Workload != "" && !slices.Contains(out, p.Workload) {
				out = append(out, p.Workload)
			}
		}
	}
	return out
}

// resolveFactors fills each run's factors the file left out: the workload
// and load from the run, the release and configuration from the roles
// (only when no run names one), and the repeat number.
func resolveFactors(ms []*member) {
	anyRelease, anyConfig, configs := false, false, false
	for _, m := range ms {
		anyRelease = anyRelease || m.f.Release != ""
		anyConfig = anyConfig || m.f.Config != ""
		configs = configs || m.role == Configuration
	}
	nrep := 0
	for _, m := range ms {
		if m.f.Workload == "" {
			m.f.Workload = strings.Join(workloadNames(m.d), " + ")
			if m.f.Workload == "" {
				m.f.Workload = m.d.Info.Name
			}
		}
		if m.f.Users == 0 && m.f.Rate == 0 {
			m.f.Users, m.f.Rate = m.facts.Users, m.facts.Rate
		}
		if !anyConfig && configs && (m.role == Configuration || m.role == Baseline) {
			m.f.Config = m.name
		}
		if m.f.Repeat == "" && m.role == Repeat {
			nrep++
			m.f.Repeat = strconv.Itoa(nrep)
		}
	}
	// Without release factors, a candidate is another release only when
	// it ran as the baseline did (same workload and load): a candidate at
	// another load is a point of the same release's series. A capacity
	// search chose its loads itself (its load is the shown probe's), so
	// it is never another release by meeting the baseline's load.
	if !anyRelease {
		var base *member
		for _, m := range ms {
			if m.role == Baseline {
				base = m
			}
		}
		for _, m := range ms {
			if base != nil && m.role == Candidate && m.search == nil && m.group() == base.group() {
				m.f.Release = "candidate"
			}
		}
	}
}

// reference is the run m is compared with in the labels table: another run
// of its group in the baseline's variant; nil when its group has none.
func reference(ms []*member, m, base *member) *member {
	// A capacity search's whole-run figures are of the probes it chose:
	// two searches over one range took different paths, so neither is
	// compared with the other (their answers are, side by side).
	if m.search != nil {
		return nil
	}
	for _, r := range ms {
		if r.search != nil {
			continue
		}
		if r != m && r.group() == m.group() && r.variant() == base.variant() {
			if m.variant() == base.variant() && r.i > m.i {
				continue // among runs of one variant, the first is the reference
			}
			return r
		}
	}
	return nil
}

// targetsOf groups monitor series by target for resources.Uses, leaving
// out the load generator's own targets (its health is validity's).
func targetsOf(series []core.Series, statuses []mondata.TargetStatus) []resources.Target {
	gen := map[string]bool{}
	for _, st := range statuses {
		if st.Role == mondata.RoleGenerator {
			gen[st.Name] = true
		}
	}
	var out []resources.Target
	idx := map[string]int{}
	for i := range series {
		s := &series[i]
		if gen[s.Target] {
			continue
		}
		j, ok := idx[s.Target]
		if !ok {
			j = len(out)
			idx[s.Target] = j
			out = append(out, resources.Target{Name: s.Target, Kind: s.Kind})
		}
		out[j].Series = append(out[j].Series, s)
	}
	return out
}

// roleOf is a monitored target's role in the run (unknown when not
// recorded).
func (m *member) roleOf(target string) mondata.Role {
	for _, st := range m.statuses {
		if st.Name == target {
			return st.Role
		}
	}
	return mondata.RoleUnknown
}

// words is the member's study's words (English when it has none: a
// member built by a test).
func (m *member) words() *words {
	if m.wd == nil {
		return wordsIn(nil)
	}
	return m.wd
}

// num writes a load without needless decimals, in the study's language.
func (wd *words) num(v float64) string { return wd.loc.Num(numEN(v)) }

// numEN is num in English.
func numEN(v float64) string {
	if v == math.Trunc(v) {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// loadWords is a load in words: "8 users", "1 user", "50/s".
func (wd *words) loadWords(v float64, rate bool) string {
	if rate {
		return wd.num(v) + "/s"
	}
	if v == 1 {
		return wd.T("1 user")
	}
	return wd.T("%s users", wd.num(v))
}

// workloadAgg is the run's aggregate of one workload's requests, as the
// run's totals count them (transactions and derived labels left out, the
// rule of an SLA's workload selector); nil when the workload recorded no
// response times (an imported source without them) or no requests.
func (m *member) workloadAgg(w string) *metrics.Agg {
	for _, wi := range m.d.Info.Workloads {
		if wi.Name == w && wi.NoTimes {
			return nil
		}
	}
	e := &sla.Expr{Workload: w}
	a := metrics.NewAgg()
	for k, ag := range m.d.Run {
		if analysis.Selects(e, k, m.d.LabelName(k)) {
			a.Merge(ag)
		}
	}
	if a.Count == 0 {
		return nil
	}
	return a
}

// timedWorkloads are the run's workloads with response times, in plan
// order.
func (m *member) timedWorkloads() []string {
	var out []string
	for _, w := range workloadNames(m.d) {
		if m.workloadAgg(w) != nil {
			out = append(out, w)
		}
	}
	return out
}
