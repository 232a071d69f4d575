package report

import (
	"fmt"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- results ----------------------------------------------------------------

// statCols are the columns of a label table in the document's language.
func (b numbers) statCols() []doc.Column {
	return []doc.Column{{Name: b.W("Label")}, {Name: b.W("Type")}, {Name: b.W("Samples"), Align: doc.Right}, {Name: b.W("Min (ms)"), Align: doc.Right}, {Name: b.W("Average (ms)"), Align: doc.Right},
		{Name: b.W("Median (ms)"), Align: doc.Right}, {Name: b.W("p90 (ms)"), Align: doc.Right}, {Name: b.W("p95 (ms)"), Align: doc.Right},
		{Name: b.W("p99 (ms)"), Align: doc.Right}, {Name: b.W("Max (ms)"), Align: doc.Right}, {Name: b.W("Error %"), Align: doc.Right},
		{Name: b.W("Throughput (req/s)"), Align: doc.Right}}
}

// statsTable renders label rows (transactions first, TOTAL last).
func (b *builder) statsTable(caption string, rows []core.LabelStats) *doc.Table {
	t := &doc.Table{Caption: caption, Columns: b.statCols()}
	var few []string
	for _, r := range rows {
		typ := b.W("request")
		if r.Transaction {
			typ = b.W("transaction")
		}
		if r.Derived {
			typ = b.W("derived (not in TOTAL)")
		}
		total := r.Label == core.TotalLabel
		if total {
			typ = b.W("all requests")
		}
		errCell := doc.Cell{Text: b.pct(r.ErrorPct)}
		if r.Errors > 0 {
			errCell.Level = doc.Warn
		}
		times := []doc.Cell{{Text: b.ms(r.MinMs)}, {Text: b.ms(r.MeanMs)}, {Text: b.ms(r.P50Ms)}, {Text: b.ms(r.P90Ms)}, {Text: b.ms(r.P95Ms)},
			{Text: b.ms(r.P99Ms)}, {Text: b.ms(r.MaxMs)}}
		if r.NoTimes { // an access log without a duration field
			for i := range times {
				times[i] = doc.Cell{Text: b.W("not in this log")}
			}
		} else if r.Samples > 0 && r.Samples < minPercentileSamples {
			for i := 2; i <= 5; i++ { // p50 … p99: a handful of samples decides them
				times[i].Level = doc.Warn
			}
			few = append(few, fmt.Sprintf("%s (n = %d)", b.red.String(r.Label), r.Samples))
		}
		cells := append([]doc.Cell{{Text: b.red.String(r.Label)}, {Text: typ}, {Text: b.count(r.Samples)}}, times...)
		t.Rows = append(t.Rows, doc.Row{Total: total, Cells: append(cells, errCell, doc.Cell{Text: b.rate(r.ThroughputRPS)})})
	}
	if len(few) > 0 {
		t.Note = sentence(b.T("Percentiles from fewer than %d samples are rough (one sample more or less moves them a whole rank): %s",
			minPercentileSamples, b.joinAnd(few)))
	}
	return t
}

// minPercentileSamples is the count below which a label's percentiles are
// marked as rough: at n = 12 the p90 is the 11th value, and the tools'
// definitions (nearest rank, interpolation) differ by a whole sample.
const minPercentileSamples = 100

func (b *builder) results() doc.Section {
	sec := doc.Section{ID: SecResults, Title: b.W("Results")}
	all := b.s.Labels[len(b.s.Labels)-1]
	if all.Samples == 0 {
		sec.Blocks = append(sec.Blocks, noData(b.W("No samples were recorded: there are no response times to report.")))
		b.finding(doc.FindNoSamples, doc.Fail, b.W("No samples were recorded"))
		b.conclude(doc.AspectResponseTime, doc.NoData, b.W("no samples"), b.W("the run recorded no requests"))
		b.conclude(doc.AspectThroughput, doc.NoData, b.W("no samples"), b.W("the run recorded no requests"))
		return sec
	}
	overall := b.T("%s over %s: min %s, average %s, median %s, p95 %s, p99 %s, max %s; %s overall",
		b.plural(all.Samples, "request"), dur(b.d.Span()), b.msU(all.MinMs), b.msU(all.MeanMs), b.msU(all.P50Ms), b.msU(all.P95Ms), b.msU(all.P99Ms), b.msU(all.MaxMs), b.rps(all.ThroughputRPS))
	if !b.holds().Durations || all.NoTimes {
		overall = b.T("%s over %s; %s overall", b.plural(all.Samples, "request"), dur(b.d.Span()), b.rps(all.ThroughputRPS))
	}
	sec.Blocks = append(sec.Blocks, &doc.Para{Text: sentences(overall,
		b.timingMethod(),
		b.W("throughput counts completed requests per second of the span; a phase counts the requests that completed while it ran"))})
	sec.Blocks = append(sec.Blocks, b.skippedBlocks()...)
	sec.Blocks = append(sec.Blocks, b.statsTable(b.W("Whole run, per label (transactions first, then requests)"), b.s.Labels))
	if n := b.percentilesOutside(); n != nil {
		sec.Blocks = append(sec.Blocks, n)
	}
	if bad := b.d.NonUTF8Labels(); len(bad) > 0 {
		names := make([]string, len(bad))
		for i, n := range bad {
			names[i] = b.red.String(n)
		}
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: sentence(b.T("%s %s bytes that are not UTF-8 (%s): they are shown escaped as \\xNN, as the data hold them",
			b.plural(int64(len(bad)), "request name"), map[bool]string{true: "holds", false: "hold"}[len(bad) == 1], strings.Join(names, ", ")))})
	}
	for _, f := range b.timeCharts() {
		sec.Blocks = append(sec.Blocks, f)
	}
	sec.Blocks = append(sec.Blocks, b.labelCharts()...)
	if f := b.distributionChart(); f != nil {
		sec.Blocks = append(sec.Blocks, f)
	}
	if len(b.s.Phases) > 1 {
		sec.Blocks = append(sec.Blocks, &doc.Heading{Text: b.W("Per phase")})
		for _, p := range b.s.Phases {
			if len(p.Labels) == 0 || p.Labels[len(p.Labels)-1].Samples == 0 {
				sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: p.Name + b.W(": no samples.")})
				continue
			}
			cap := p.Name
			if l := b.loadText(b.phaseByName(p.Name)); l != "–" {
				cap += " (" + l + ")"
			}
			sec.Blocks = append(sec.Blocks, b.statsTable(cap, p.Labels))
		}
	}
	sec.Blocks = append(sec.Blocks, b.resultsVerdict())
	return sec
}

// percentilesOutside is the note, said once, when a percentile quoted from
// the source tool lies outside the measured [min, max] of its label (Locust
// rounds its percentiles to two significant figures): nil when none does.
func (b *builder) percentilesOutside() *doc.Para {
	var cases []string
	for _, r := range b.s.Labels {
		if r.NoTimes || r.Samples == 0 {
			continue
		}
		for _, p := range []struct {
			name string
			v    float64
		}{{"median", r.P50Ms}, {"p90", r.P90Ms}, {"p95", r.P95Ms}, {"p99", r.P99Ms}} {
			if p.v < r.MinMs || p.v > r.MaxMs {
				cases = append(cases, b.T("%s of %s, %s, against %s–%s", p.name, b.red.String(r.Label), b.msU(p.v), b.ms(r.MinMs), b.msU(r.MaxMs)))
			}
		}
	}
	if len(cases) == 0 {
		return nil
	}
	why := b.W("the source tool's percentiles are its own figures, not recomputed")
	if b.s.PercentileMethod == "locust-rounded" {
		why = b.W("Locust rounds the percentiles it writes (to two significant figures above 100 ms, to whole milliseconds below), while min and max are exact")
	}
	n := len(cases)
	if n > 3 {
		cases = append(cases[:3], b.T("%d more", n-3))
	}
	verb := "lie"
	if n == 1 {
		verb = "lies"
	}
	// "outside the measured range" is the phrase reporttest.PercentileNote
	// looks for.
	return &doc.Para{Note: true, Text: sentences(b.T("%s %s outside the measured range (%s)", b.plural(int64(n), b.W("quoted percentile")), verb, strings.Join(cases, "; ")), why)}
}

func (b *builder) phaseByName(name string) core.Phase {
	for _, p := range b.d.Phases {
		if b.red.String(p.Name) == name {
			return p
		}
	}
	return core.Phase{}
}

// measuredPhases are the phases with samples, with their TOTAL rows.
func (b *builder) measuredPhases() ([]core.Phase, []core.LabelStats) {
	var ps []core.Phase
	var ts []core.LabelStats
	for i, p := range b.d.Phases {
		t := phaseTotal(b.s, i)
		if t.Samples > 0 {
			ps = append(ps, p)
			ts = append(ts, t)
		}
	}
	return ps, ts
}

// resultsVerdict judges response time and throughput across phases and
// records the findings and conclusions they lead to.
func (b *builder) resultsVerdict() *doc.Verdict {
	all := b.s.Labels[len(b.s.Labels)-1]
	ps, ts := b.measuredPhases()
	// Without durations (an access log with no request-time field) no
	// sentence states a response time; the conclusion says so once.
	noTimes := !b.holds().Durations || all.NoTimes
	// Every request failed: no load was sustained, whatever the rate.
	allFailed := b.d.Total != nil && b.d.Total.Count > 0 && b.d.Total.Errors == b.d.Total.Count
	// Volume and peak throughput.
	if len(ps) > 1 {
		peak := 0
		for i := range ts {
			if ts[i].ThroughputRPS > ts[peak].ThroughputRPS {
				peak = i
			}
		}
		b.finding(doc.FindVolume, doc.Info, b.T("%s in %s over %d phases", b.plural(all.Samples, "request"), dur(b.d.Span()), len(ps)),
			b.T("highest throughput %s in %s (%s)", b.rps(ts[peak].ThroughputRPS), b.red.String(ps[peak].Name), b.loadText(ps[peak])))
	} else {
		times := b.T("average %s, p95 %s", b.msU(all.MeanMs), b.msU(all.P95Ms))
		if noTimes {
			times = ""
		}
		b.finding(doc.FindVolume, doc.Info, b.T("%s in %s at %s", b.plural(all.Samples, "request"), dur(b.d.Span()), b.rps(all.ThroughputRPS)), times)
	}
	// Slowest label.
	var slow *core.LabelStats
	for i := range b.s.Labels {
		r := &b.s.Labels[i]
		if r.Label == core.TotalLabel || r.Samples == 0 {
			continue
		}
		if slow == nil || r.MeanMs > slow.MeanMs {
			slow = r
		}
	}
	if slow != nil && len(b.s.Labels) > 2 && !noTimes {
		kind := "request"
		if slow.Transaction {
			kind = "transaction"
		}
		b.finding(doc.FindVolume, doc.Info, b.T("Slowest %s: %s, average %s, p95 %s over %s", kind, b.red.String(slow.Label), b.msU(slow.MeanMs), b.msU(slow.P95Ms), b.plural(slow.Samples, "sample")))
	}

	rtEvidence := b.T("average %s, p95 %s, p99 %s over the run", b.msU(all.MeanMs), b.msU(all.P95Ms), b.msU(all.P99Ms))
	rtLevel, rtVerdict, rtReqs := b.responseTimeVerdict()
	rtEvidence = clauses(rtReqs, rtEvidence)
	if noTimes {
		rtLevel, rtVerdict, rtEvidence = doc.NoData, b.W("not measured"), b.W("the data hold no response times (an access log without a request-time field): only requests, statuses and sizes")
	}
	if allFailed {
		b.conclude(doc.AspectThroughput, doc.Fail, b.W("none sustained: every request failed"), b.T("%s over %s, %s failed", b.plural(all.Samples, "request"), dur(b.d.Span()), b.thousands(b.d.Total.Errors)))
	}
	if len(ps) < 2 {
		b.conclude(doc.AspectResponseTime, rtLevel, rtVerdict, rtEvidence)
		if !allFailed {
			b.conclude(doc.AspectThroughput, doc.Info, b.T("%s sustained", b.rps(all.ThroughputRPS)), b.T("%s over %s", b.plural(all.Samples, "request"), dur(b.d.Span())))
		}
		if noTimes {
			return &doc.Verdict{Level: doc.NoData, Text: b.T("Verdict: response time not measured (the data hold no response times); %s at %s.", b.plural(all.Samples, "request"), b.rps(all.ThroughputRPS))}
		}
		return &doc.Verdict{Level: rtLevel, Text: b.T("Verdict: response time %s — %s at %s.", rtVerdict, rtEvidence, b.rps(all.ThroughputRPS))}
	}
	// The movement of response time with throughput is stated over the
	// load steps of one workload; concurrent workloads are not steps.
	var rtMove string
	if cr := b.capacityAnalysis(); cr.Skip == analysis.CapacityDone && len(cr.Steps) > 1 && !noTimes {
		f, l := cr.Steps[0], cr.Steps[len(cr.Steps)-1]
		rtMove = b.T("average response time went from %s in %s to %s in %s while throughput went from %s to %s",
			b.msU(f.Point.MeanMs), b.red.String(f.Name), b.msU(l.Point.MeanMs), b.red.String(l.Name), b.rps(f.Point.ThroughputRPS), b.rps(l.Point.ThroughputRPS))
	}
	b.conclude(doc.AspectResponseTime, rtLevel, rtVerdict, rtEvidence, rtMove)
	tpLevel, tpVerdict, tpEvidence := b.throughputVerdict(ts)
	if allFailed {
		tpLevel, tpVerdict = doc.Fail, b.W("none sustained: every request failed")
	} else {
		b.conclude(doc.AspectThroughput, tpLevel, tpVerdict, tpEvidence)
	}
	return &doc.Verdict{Level: max(rtLevel, tpLevel), Text: sentences(b.W("verdict: ") + clauses(rtMove, b.W("throughput ")+tpVerdict))}
}

// responseTimeVerdict judges every response-time requirement together and
// names each one once, with its own observed value: the verdict names those
// that broke ("breaks <expr> (440 ms over the run)") or held only over the
// run, and counts the others, whose values the evidence gives
// ("<expr>: 94.6 ms over the run").
func (b *builder) responseTimeVerdict() (doc.Level, string, string) {
	var held, partly, broken []string
	for _, r := range b.s.SLA {
		e, err := sla.Parse(r.Expr)
		if err != nil || r.Error != "" || e.Metric == sla.ErrorRate || e.Metric == sla.Throughput || e.Metric == sla.Checks {
			continue
		}
		seen := b.obsU(r.Observed, r.Unit)
		switch {
		case r.Scope == "run":
			seen += b.W(" over the run")
		case !strings.Contains(r.Expr, r.Scope):
			seen += b.W(" in ") + r.Scope
		}
		switch {
		case !r.Passed:
			broken = append(broken, fmt.Sprintf("%s (%s)", r.Expr, seen))
		case r.FirstBroken != "" && r.Scope == "run":
			partly = append(partly, fmt.Sprintf("%s (%s)", r.Expr, b.obsU(r.Observed, r.Unit)))
		default:
			held = append(held, fmt.Sprintf("%s: %s", r.Expr, seen))
		}
	}
	ev := strings.Join(held, "; ")
	others := func(n int) string {
		if n == 1 {
			return b.W("the other requirement")
		}
		return b.T("the other %d", n)
	}
	switch {
	case len(held)+len(partly)+len(broken) == 0:
		return doc.Info, b.W("measured; no response-time requirement"), ""
	case len(broken) > 0:
		v := b.W("breaks ") + b.joinAnd(broken)
		switch {
		case len(partly) > 0:
			v += b.W(", meets ") + b.joinAnd(partly) + b.W(" over the run but not in every phase")
			if len(held) > 0 {
				v += b.W(", and ") + others(len(held))
			}
		case len(held) > 0:
			v += b.W(", meets ") + others(len(held))
		}
		return doc.Fail, v, ev
	case len(partly) > 0:
		v := b.W("meets ") + b.joinAnd(partly) + b.W(" over the run but not in every phase")
		if n := len(held); n > 0 {
			v += b.W(", and ") + others(n)
		}
		return doc.Warn, v, ev
	case len(held) == 1:
		return doc.OK, b.W("meets its requirement"), ev
	case len(held) == 2:
		return doc.OK, b.W("meets both requirements"), ev
	}
	return doc.OK, b.T("meets all %d requirements", len(held)), ev
}

// throughputVerdict states what the capacity analysis found about scaling,
// so the results verdict, the conclusions and the capacity section name the
// same knee (analysis/knee holds the one definition). Without load steps it
// states the range of throughput and claims no growth.
func (b *builder) throughputVerdict(ts []core.LabelStats) (doc.Level, string, string) {
	cr := b.capacityAnalysis()
	if why := b.capacityWhy(); why != "" || cr.Err != nil {
		lo, hi := ts[0].ThroughputRPS, ts[0].ThroughputRPS
		for _, t := range ts {
			lo, hi = min(lo, t.ThroughputRPS), max(hi, t.ThroughputRPS)
		}
		span := b.T("between %s and %s across %d phases", b.rps(lo), b.rps(hi), len(ts))
		if b.rate(lo) == b.rate(hi) {
			span = b.T("%s in each of %d phases", b.rps(lo), len(ts))
		}
		if why == "" {
			why = b.W("the analysis failed: ") + cr.Err.Error()
		}
		return doc.Info, span, b.W("no scaling judged: ") + why
	}
	res := cr.Knee
	first, last := cr.Steps[0], cr.Steps[len(cr.Steps)-1]
	switch res.Outcome {
	case knee.Stopped:
		k := res.Knee
		return doc.Warn, b.T("stopped scaling at %s (%s)", b.loadU(k.Load, cr.Kind), b.rps(k.ThroughputRPS)), clauses(kneeEvidence(b.numbers, *k), b.bottleneckClause(cr.Bottleneck, cr.Kind, true))
	case knee.Scaling:
		thr := b.pct(100 * res.MinGain)
		return doc.OK, b.W("kept growing up to the highest tested load"), b.T("from %s at %s to %s at %s; beyond every tested load it still grew by more than the %s threshold",
			b.rps(first.Point.ThroughputRPS), b.loadU(first.Point.Load, cr.Kind), b.rps(last.Point.ThroughputRPS), b.loadU(last.Point.Load, cr.Kind), thr)
	case knee.ThinData:
		return doc.NoData, b.W("not judged (not enough data)"), b.thinKneeClause(res.Thin, cr.Kind)
	}
	return doc.Warn, b.W("stopped growing without a rise in response time"), noKneeText(b.numbers, *res.NoKnee, cr.Kind)
}
