package study

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/core"
)

// Series is a load series: the runs of one workload and variant at
// different load levels, lowest load first.
type Series struct {
	Name string   `json:"name"`
	Runs []string `json:"runs"`
	idx  []int
}

// seriesOf groups the fixed-load runs (not soaks, not stepped, not
// capacity searches, each of one workload) by workload and variant; a group with two or more load levels
// is a series.
func seriesOf(ms []*member) []Series {
	var out []Series
	byKey := map[string][]*member{}
	var keys []string
	for _, m := range ms {
		// A run of several workloads has no one response time to draw
		// against load (Run.MeanMs is absent): its workloads are the
		// capacity answer's, one at a time.
		if m.soak() || m.stepped() || m.search != nil || m.d.Mixed() {
			continue
		}
		if l, _ := m.load(); l <= 0 {
			continue
		}
		k := m.seriesKey()
		if _, ok := byKey[k]; !ok {
			keys = append(keys, k)
		}
		byKey[k] = append(byKey[k], m)
	}
	for _, k := range keys {
		g := slices.Clone(byKey[k])
		loads := map[float64]bool{}
		for _, m := range g {
			l, _ := m.load()
			loads[l] = true
		}
		if len(loads) < 2 {
			continue
		}
		slices.SortStableFunc(g, func(a, b *member) int {
			la, _ := a.load()
			lb, _ := b.load()
			return cmpF(la, lb)
		})
		s := Series{Name: variantWords(g[0])}
		for _, m := range g {
			s.Runs = append(s.Runs, m.name)
			s.idx = append(s.idx, m.i)
		}
		out = append(out, s)
	}
	return out
}

// FlowOrder is a run's labels in the order a flow calls them: transactions
// first, then each label by the second it first appeared, a label with
// more samples in that second first (the users reach the earlier calls of
// a flow first), then by name. The references list calls in flow order,
// not alphabetically.
func FlowOrder(d *analysis.Dataset) []analysis.LabelKey {
	ks := d.Labels()
	type first struct {
		ok bool
		t  int64
		n  int64
	}
	at := map[analysis.LabelKey]first{}
	for _, k := range ks {
		if ticks := d.Timeline[k]; len(ticks) > 0 {
			t0 := ticks[0]
			for _, t := range ticks {
				if t.T.Before(t0.T) {
					t0 = t
				}
			}
			at[k] = first{true, t0.T.UnixNano(), t0.Count}
		}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := ks[i], ks[j]
		if a.Tx != b.Tx {
			return a.Tx
		}
		if a.Workload != b.Workload {
			return a.Workload < b.Workload
		}
		fa, fb := at[a], at[b]
		if fa.ok != fb.ok {
			return fa.ok
		}
		if fa.t != fb.t {
			return fa.t < fb.t
		}
		if fa.n != fb.n {
			return fa.n > fb.n
		}
		return a.Label < b.Label
	})
	return ks
}

// labelTable is one row per label (the baseline's labels in flow order,
// then all requests), with each run's figures and, for a run whose group
// has a reference run, its Δ and verdict against it.
func labelTable(ms []*member, base *member) []Label {
	var out []Label
	idx := map[string]int{}
	add := func(name string) {
		if _, ok := idx[name]; ok {
			return
		}
		idx[name] = len(out)
		out = append(out, Label{Label: name, Cells: make([]LabelCell, len(ms))})
	}
	for _, k := range FlowOrder(base.d) {
		if !k.Derived {
			add(base.d.LabelName(k))
		}
	}
	for _, m := range ms {
		for _, k := range FlowOrder(m.d) {
			if !k.Derived {
				add(m.d.LabelName(k))
			}
		}
	}
	// The totals go last: all requests, or, where a run holds several
	// workloads, each workload's requests (an average of all requests
	// would mix requests that are different things, weighted by how many
	// of each the run happened to send).
	first := len(out)
	var workloads []string
	if mixedStudy(ms) {
		for _, m := range ms {
			for _, w := range m.d.RequestWorkloads() {
				if !slices.Contains(workloads, w) {
					workloads = append(workloads, w)
				}
			}
		}
		for _, w := range workloads {
			out = append(out, Label{Label: core.TotalLabel, Workload: w, Cells: make([]LabelCell, len(ms))})
		}
	} else {
		out = append(out, Label{Label: core.TotalLabel, Cells: make([]LabelCell, len(ms))})
	}
	totalOf := func(w string) int {
		if workloads == nil {
			return first
		}
		if j := slices.Index(workloads, w); j >= 0 {
			return first + j
		}
		return -1
	}
	for i, m := range ms {
		d := m.d
		for li := range out {
			out[li].Cells[i].Run = m.name
		}
		for _, k := range d.Labels() {
			li, ok := idx[d.LabelName(k)]
			if !ok || k.Derived {
				continue
			}
			st := d.Run[k].Stats(d.LabelName(k), k.Tx, d.Span())
			out[li].Cells[i] = LabelCell{Run: m.name, Present: d.Run[k].Count > 0, MeanMs: st.MeanMs, P95Ms: st.P95Ms}
		}
		if workloads == nil {
			st := d.Total.Stats(core.TotalLabel, false, d.Span())
			out[first].Cells[i] = LabelCell{Run: m.name, Present: d.Total.Count > 0, MeanMs: st.MeanMs, P95Ms: st.P95Ms}
		} else {
			for _, w := range d.RequestWorkloads() {
				a, _ := d.WorkloadTotal(w)
				st := a.Stats(core.TotalLabel, false, d.Span())
				out[totalOf(w)].Cells[i] = LabelCell{Run: m.name, Present: a.Count > 0, MeanMs: st.MeanMs, P95Ms: st.P95Ms}
			}
		}
		ref := reference(ms, m, base)
		if ref == nil {
			continue
		}
		for _, row := range analysis.Compare(ref.d, m.d, nil) {
			if row.Phase != "run" {
				continue
			}
			li, ok := idx[row.Label]
			if row.Label == core.TotalLabel {
				li = totalOf(row.Workload)
				ok = li >= 0 && (workloads == nil) == (row.Workload == "")
			}
			if ok {
				c := &out[li].Cells[i]
				c.Against, c.DeltaPct, c.Verdict = ref.name, row.DeltaPct, row.Verdict
			}
		}
	}
	return out
}

// RunIssue is one run whose numbers are to be read with care, and why.
type RunIssue struct {
	Run string `json:"run"`
	// Kind is generator (short of CPU or starved), load (not held) or
	// outlier (far off its group).
	Kind  string `json:"kind"`
	Phase string `json:"phase,omitempty"`
	Text  string `json:"text"`
	// More counts the run's further findings of the kind (in other steps).
	More int `json:"more,omitempty"`
}

// Issue kinds.
const (
	IssueGenerator = "generator"
	IssueLoad      = "load"
	IssueOutlier   = "outlier"
)

// validityOf names the runs whose generator was short of CPU, whose load
// was not held, or that sit far off their group (an outlier among
// repeats), one issue per run and kind (its first finding).
func (wd *words) validityOf(ms []*member, as []Answer) []RunIssue {
	var out []RunIssue
	for _, m := range ms {
		if m.sum.Validity == nil {
			continue
		}
		seen := map[string]int{}
		for _, f := range m.sum.Validity.Findings {
			kind := ""
			switch f.Kind {
			case analysis.ReasonGeneratorCPU, analysis.ReasonStarved:
				kind = IssueGenerator
			case analysis.ReasonDropped, analysis.ReasonMissedSlots:
				kind = IssueLoad
			}
			if kind == "" {
				continue
			}
			if j, ok := seen[kind]; ok {
				out[j].More++
				continue
			}
			seen[kind] = len(out)
			out = append(out, RunIssue{Run: m.name, Kind: kind, Phase: f.Phase, Text: f.Text})
		}
	}
	seen := map[string]bool{}
	for _, a := range as {
		for _, r := range a.Capacity {
			for _, p := range r.Points {
				if p.OffTrend && !seen[p.Run] {
					seen[p.Run] = true
					out = append(out, RunIssue{Run: p.Run, Kind: IssueOutlier, Text: fmt.Sprintf(wd.text.BannerOffTrend, wd.rps(p.ThroughputRPS), wd.pctWords(OffTrendPct), r.Workload)})
				}
			}
		}
		// A run off its group in several workloads is one issue naming
		// them all.
		type off struct {
			group     string
			workloads []string
		}
		offs := map[string]*off{}
		var order []string
		for _, g := range a.Repeats {
			for _, o := range g.Outliers {
				if offs[o] == nil {
					offs[o] = &off{group: g.Group}
					order = append(order, o)
				}
				if g.Workload != "" {
					offs[o].workloads = append(offs[o].workloads, g.Workload)
				}
			}
		}
		for _, o := range order {
			text := wd.T("average response time outside the spread of %s", offs[o].group)
			if ws := offs[o].workloads; len(ws) > 0 {
				text = wd.T("average response time of %s outside the spread of %s", wd.list(ws), offs[o].group)
			}
			out = append(out, RunIssue{Run: o, Kind: IssueOutlier, Text: text})
		}
	}
	return out
}

// RunCauses are what a run's own analysis found behind its figures: the
// component that saturated first (or the busiest), by role, and the most
// frequent errors per call.
type RunCauses struct {
	Run        string                `json:"run"`
	Bottleneck *resources.Bottleneck `json:"bottleneck,omitempty"`
	Role       string                `json:"bottleneck_role,omitempty"`
	Errors     []CallErrors          `json:"errors,omitempty"`
}

// CallErrors are one call's most frequent failures.
type CallErrors struct {
	Label  string       `json:"label"`
	Total  int64        `json:"total"`
	Top    []ErrorCount `json:"top"`
	Others int64        `json:"others,omitempty"`
}

// ErrorCount is one failure and how often it occurred.
type ErrorCount struct {
	What  string `json:"what"`
	Count int64  `json:"count"`
}

// topErrors is how many failures per call are named.
const topErrors = 3

func (wd *words) causesOf(ms []*member) []RunCauses {
	var out []RunCauses
	for _, m := range ms {
		rc := RunCauses{Run: m.name}
		if m.cap != nil && m.cap.Bottleneck != nil {
			rc.Bottleneck = m.cap.Bottleneck
			if rc.Bottleneck.Component != resources.Generator {
				rc.Role = string(m.roleOf(rc.Bottleneck.Target))
				if rc.Role == "" {
					rc.Role = "system_under_test"
				}
			} else {
				rc.Role = "generator"
			}
		}
		byLabel := map[string]*CallErrors{}
		var order []string
		for _, e := range m.d.Errors {
			ce := byLabel[e.Label]
			if ce == nil {
				ce = &CallErrors{Label: m.red.String(e.Label)}
				byLabel[e.Label] = ce
				order = append(order, e.Label)
			}
			ce.Total += e.Count
			what := e.Class
			if e.Status > 0 {
				what = fmt.Sprintf("HTTP %d", e.Status)
			}
			if e.Message != "" {
				what += ": " + e.Message
			}
			ce.Top = append(ce.Top, ErrorCount{What: m.red.String(what), Count: e.Count})
		}
		for _, l := range order {
			ce := byLabel[l]
			sort.SliceStable(ce.Top, func(i, j int) bool { return ce.Top[i].Count > ce.Top[j].Count })
			if len(ce.Top) > topErrors {
				for _, x := range ce.Top[topErrors:] {
					ce.Others += x.Count
				}
				ce.Top = ce.Top[:topErrors]
			}
			rc.Errors = append(rc.Errors, *ce)
		}
		sort.SliceStable(rc.Errors, func(i, j int) bool { return rc.Errors[i].Total > rc.Errors[j].Total })
		if rc.Bottleneck != nil || len(rc.Errors) > 0 {
			out = append(out, rc)
		}
	}
	return out
}

// errorsWords is a call's failures in words: "HTTP 504: upstream timed
// out ×120, timeout ×14".
func (wd *words) errorsWords(ce CallErrors) string {
	var parts []string
	for _, e := range ce.Top {
		parts = append(parts, fmt.Sprintf("%s ×%s", e.What, wd.thousands(float64(e.Count))))
	}
	if ce.Others > 0 {
		parts = append(parts, wd.T("others ×%s", wd.thousands(float64(ce.Others))))
	}
	return strings.Join(parts, ", ")
}
