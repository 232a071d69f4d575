package analysis

import (
	"slices"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
)

// phasePair matches a phase of the new run with one of the baseline: by
// name, else by load level, else by position.
type phasePair struct {
	newIdx, baseIdx int // −1 for the whole run
}

func matchPhases(nd, bd *Dataset) []phasePair {
	pairs := []phasePair{{-1, -1}}
	used := map[int]bool{}
	for i, p := range nd.Phases {
		j := -1
		for k, q := range bd.Phases {
			if !used[k] && q.Name == p.Name && q.Workload == p.Workload {
				j = k
				break
			}
		}
		if j < 0 {
			for k, q := range bd.Phases {
				if !used[k] && q.Workload == p.Workload && ((p.Users > 0 && q.Users == p.Users) || (p.Rate > 0 && q.Rate == p.Rate)) {
					j = k
					break
				}
			}
		}
		if j >= 0 {
			used[j] = true
			pairs = append(pairs, phasePair{i, j})
		}
	}
	if len(nd.Phases) <= 1 && len(bd.Phases) <= 1 {
		return pairs[:1]
	}
	return pairs
}

// intervalsOf returns a label's per-second counts and means for the
// comparison's noise model, within [from, to).
func intervalsOf(ticks []Tick, from, to time.Time) []compare.Interval {
	var out []compare.Interval
	for _, t := range ticks {
		if t.Count > 0 && !t.T.Before(from) && t.T.Before(to) {
			out = append(out, compare.Interval{Count: t.Count, MeanMs: t.MeanMs})
		}
	}
	return out
}

// Compare compares a candidate run with a baseline, label by label and
// phase by phase (matched by name, else load level). Labels are matched by
// workload and name; TOTAL compares all requests — or, where either run
// holds several workloads, each workload's requests: one TOTAL row per
// workload (Workload set, CompareWorkloads) in place of an average of all
// requests, which would weigh the workloads by how many of each a run
// happened to send. A phase belongs to one workload, so its TOTAL is
// that workload's.
func Compare(base, cand *Dataset, red func(string) string) []compare.Row {
	out := compareAll(base, cand, red)
	if !base.Mixed() && !cand.Mixed() {
		return out
	}
	i := slices.IndexFunc(out, func(r compare.Row) bool { return r.Phase == "run" && r.Label == core.TotalLabel })
	if i < 0 {
		return out
	}
	return slices.Concat(out[:i], CompareWorkloads(base, cand), out[i+1:])
}

// compareAll is Compare with one TOTAL of all requests per phase.
func compareAll(base, cand *Dataset, red func(string) string) []compare.Row {
	if red == nil {
		red = func(s string) string { return s }
	}
	var out []compare.Row
	for _, pp := range matchPhases(cand, base) {
		nm, bm := cand.Run, base.Run
		nt, bt := cand.Total, base.Total
		nspan, bspan := cand.Span(), base.Span()
		nfrom, nto := cand.Start, cand.End.Add(time.Nanosecond)
		bfrom, bto := base.Start, base.End.Add(time.Nanosecond)
		phase, bphase := "run", ""
		if pp.newIdx >= 0 {
			nm, bm = cand.ByPhase[pp.newIdx], base.ByPhase[pp.baseIdx]
			nt, bt = cand.PhaseTotal[pp.newIdx], base.PhaseTotal[pp.baseIdx]
			np, bp := cand.Phases[pp.newIdx], base.Phases[pp.baseIdx]
			nspan, bspan = np.Duration(), bp.Duration()
			nfrom, nto, bfrom, bto = np.Start, np.End, bp.Start, bp.End
			phase = red(np.Name)
			if bp.Name != np.Name {
				bphase = red(bp.Name)
			}
		}
		type item struct {
			label  string
			na, ba *metrics.Agg
			nt, bt []Tick
		}
		var items []item
		for _, k := range cand.Labels() {
			if a, ok := nm[k]; ok {
				if b, ok := bm[k]; ok {
					items = append(items, item{red(cand.LabelName(k)), a, b, cand.Timeline[k], base.Timeline[k]})
				}
			}
		}
		items = append(items, item{core.TotalLabel, nt, bt, cand.TotalTicks, base.TotalTicks})
		for _, it := range items {
			if it.na.Count == 0 || it.ba.Count == 0 {
				continue
			}
			row := compareAggs(it.label, it.ba, it.na, bspan, nspan, intervalsOf(it.bt, bfrom, bto), intervalsOf(it.nt, nfrom, nto))
			row.Phase, row.BasePhase = phase, bphase
			out = append(out, row)
		}
	}
	return out
}

// compareAggs is one comparison row: a label's (or a total's) aggregate in
// the baseline against the candidate's, with the noise model's per-second
// intervals of each.
func compareAggs(label string, ba, na *metrics.Agg, bspan, nspan time.Duration, bi, ni []compare.Interval) compare.Row {
	ns, bs := na.Stats(label, false, nspan), ba.Stats(label, false, bspan)
	r, err := compare.Latency(compare.Run{Hist: ba.Hist, Intervals: bi}, compare.Run{Hist: na.Hist, Intervals: ni}, compare.Options{Seed: 1})
	row := compare.Row{Label: label, BaseMeanMs: bs.MeanMs, NewMeanMs: ns.MeanMs,
		DeltaMs: round3(ns.MeanMs - bs.MeanMs), BaseP95Ms: bs.P95Ms, NewP95Ms: ns.P95Ms,
		BaseTputRPS: bs.ThroughputRPS, NewTputRPS: ns.ThroughputRPS, BaseErrPct: bs.ErrorPct, NewErrPct: ns.ErrorPct,
		BaseSamples: ba.Count, NewSamples: na.Count, Verdict: compare.NoChange, Base: bs, Cand: ns}
	if bs.MeanMs > 0 {
		row.DeltaPct = round3(100 * (ns.MeanMs - bs.MeanMs) / bs.MeanMs)
	}
	if bs.P95Ms > 0 {
		row.P95DeltaPct = round3(100 * (ns.P95Ms - bs.P95Ms) / bs.P95Ms)
	}
	if err == nil {
		row.Significant, row.Verdict, row.CliffsDelta, row.Mixed = r.Significant, r.Verdict, round3(r.CliffsDelta), r.Mixed
		row.BaseSeconds, row.NewSeconds = r.BaseSeconds, r.NewSeconds
	} else {
		// Only an empty side fails, and both sides hold requests
		// here: no verdict rather than a wrong one.
		row.Verdict = compare.NotEnough
	}
	return row
}

// CompareWorkloads compares a candidate run with a baseline workload by
// workload over the whole run: one row per workload both runs hold
// requests of, Label TOTAL and Workload set, each from the workload's
// merged histogram. Where runs hold several workloads, their requests are
// different things and one total of all requests averages them in
// whatever proportion each run happened to send: a run sending more of
// the slow workload's requests reads slower with no request slower. These
// rows are the comparison such runs have instead.
func CompareWorkloads(base, cand *Dataset) []compare.Row {
	var out []compare.Row
	bws := base.RequestWorkloads()
	for _, w := range cand.RequestWorkloads() {
		if !slices.Contains(bws, w) {
			continue
		}
		na, nt := cand.WorkloadTotal(w)
		ba, bt := base.WorkloadTotal(w)
		row := compareAggs(core.TotalLabel, ba, na, base.Span(), cand.Span(),
			intervalsOf(bt, base.Start, base.End.Add(time.Nanosecond)), intervalsOf(nt, cand.Start, cand.End.Add(time.Nanosecond)))
		row.Phase, row.Workload = "run", w
		out = append(out, row)
	}
	return out
}
