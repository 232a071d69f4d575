package report

import (
	"fmt"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- runs -------------------------------------------------------------------

func (b *builder) runs() doc.Section {
	sec := doc.Section{ID: SecRuns, Title: "Test runs"}
	d := b.d
	if len(d.Phases) == 0 {
		sec.Blocks = append(sec.Blocks, noData("run.json records no phases: the run is reported as one span."))
		return sec
	}
	multiW := len(d.Info.Workloads) > 1
	cols := []doc.Column{{Name: "#", Align: doc.Right}, {Name: "Phase"}}
	if multiW {
		cols = append(cols, doc.Column{Name: "Workload"})
	}
	cols = append(cols, []doc.Column{{Name: "Users", Align: doc.Right}, {Name: "Rate (req/s)", Align: doc.Right},
		{Name: "Ramp-up", Align: doc.Right}, {Name: "Start"}, {Name: "End"}, {Name: "Duration", Align: doc.Right},
		{Name: "Samples", Align: doc.Right}, {Name: "Throughput (req/s)", Align: doc.Right}, {Name: "Error %", Align: doc.Right},
		{Name: "Note"}}...)
	t := &doc.Table{Caption: "One row per phase: load, time span, throughput and error rate of all requests", Columns: cols}
	for i, p := range d.Phases {
		tot := phaseTotal(b.s, i)
		row := []doc.Cell{{Text: fmt.Sprint(i + 1)}, {Text: b.red.String(p.Name)}}
		if multiW {
			row = append(row, doc.Cell{Text: b.red.String(nonEmpty(p.Workload, "–"))})
		}
		ramp := "–"
		if p.RampUp > 0 {
			ramp = dur(p.RampUp)
		}
		note := b.red.String(p.Stopped)
		if i < len(d.Info.Phases) && d.Info.Phases[i].End == nil {
			note = strings.TrimPrefix(note+"; still open (run killed?)", "; ")
		}
		if i < len(d.RecordedEnd) && !d.RecordedEnd[i].IsZero() {
			note = strings.TrimPrefix(note+"; run.json has it end at "+clock(d.RecordedEnd[i])+", after the run's end: clipped to the run", "; ")
		}
		errCell := doc.Cell{Text: pct(tot.ErrorPct)}
		if tot.Errors > 0 {
			errCell.Level = doc.Warn
		}
		row = append(row, doc.Cell{Text: intOrDash(p.Users)}, doc.Cell{Text: floatOrDash(p.Rate)}, doc.Cell{Text: ramp},
			doc.Cell{Text: clock(p.Start)}, doc.Cell{Text: clock(p.End)}, doc.Cell{Text: dur(p.Duration())},
			doc.Cell{Text: count(tot.Samples)}, doc.Cell{Text: rate(tot.ThroughputRPS)}, errCell, doc.Cell{Text: nonEmpty(note, "")})
		t.Rows = append(t.Rows, doc.Row{Cells: row})
	}
	all := b.s.Labels[len(b.s.Labels)-1]
	tr := []doc.Cell{{Text: ""}, {Text: "Whole run"}}
	if multiW {
		tr = append(tr, doc.Cell{})
	}
	tr = append(tr, doc.Cell{Text: intOrDash(b.peakUsers())}, doc.Cell{}, doc.Cell{}, doc.Cell{Text: clock(d.Start)}, doc.Cell{Text: clock(d.End)},
		doc.Cell{Text: dur(d.Span())}, doc.Cell{Text: count(all.Samples)}, doc.Cell{Text: rate(all.ThroughputRPS)}, doc.Cell{Text: pct(all.ErrorPct)}, doc.Cell{})
	t.Rows = append(t.Rows, doc.Row{Cells: tr, Total: true})
	sec.Blocks = append(sec.Blocks, t)
	if f := b.usersChart(); f != nil {
		sec.Blocks = append(sec.Blocks, f)
	}
	if n := len(d.Dropped); n > 0 {
		var parts []string
		for _, w := range sortedKeys(d.Dropped) {
			parts = append(parts, fmt.Sprintf("%s: %s", b.red.String(nonEmpty(w, "default")), count(d.Dropped[w])))
		}
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentences("The generator could not start every scheduled iteration (open model; max users reached or late): "+strings.Join(parts, ", ")+" dropped", "the offered load was lower than planned")})
		b.finding(doc.FindLoad, doc.Warn, fmt.Sprintf("The generator dropped %s scheduled iterations: the offered load was lower than planned", count(sumValues(d.Dropped))))
	}
	return sec
}

func (b *builder) peakUsers() int {
	peak := 0
	for _, u := range b.d.Users {
		peak = max(peak, u.Total)
	}
	if peak == 0 {
		for _, p := range b.d.Phases {
			peak = max(peak, p.Users)
		}
	}
	return peak
}

// ---- results ----------------------------------------------------------------

var statCols = []doc.Column{{Name: "Label"}, {Name: "Type"}, {Name: "Samples", Align: doc.Right}, {Name: "Min (ms)", Align: doc.Right}, {Name: "Average (ms)", Align: doc.Right},
	{Name: "Median (ms)", Align: doc.Right}, {Name: "p90 (ms)", Align: doc.Right}, {Name: "p95 (ms)", Align: doc.Right},
	{Name: "p99 (ms)", Align: doc.Right}, {Name: "Max (ms)", Align: doc.Right}, {Name: "Error %", Align: doc.Right},
	{Name: "Throughput (req/s)", Align: doc.Right}}

// statsTable renders label rows (transactions first, TOTAL last).
func (b *builder) statsTable(caption string, rows []core.LabelStats) *doc.Table {
	t := &doc.Table{Caption: caption, Columns: statCols}
	var few []string
	for _, r := range rows {
		typ := "request"
		if r.Transaction {
			typ = "transaction"
		}
		if r.Derived {
			typ = "derived (not in TOTAL)"
		}
		total := r.Label == core.TotalLabel
		if total {
			typ = "all requests"
		}
		errCell := doc.Cell{Text: pct(r.ErrorPct)}
		if r.Errors > 0 {
			errCell.Level = doc.Warn
		}
		times := []doc.Cell{{Text: ms(r.MinMs)}, {Text: ms(r.MeanMs)}, {Text: ms(r.P50Ms)}, {Text: ms(r.P90Ms)}, {Text: ms(r.P95Ms)},
			{Text: ms(r.P99Ms)}, {Text: ms(r.MaxMs)}}
		if r.NoTimes { // an access log without a duration field
			for i := range times {
				times[i] = doc.Cell{Text: "not in this log"}
			}
		} else if r.Samples > 0 && r.Samples < minPercentileSamples {
			for i := 2; i <= 5; i++ { // p50 … p99: a handful of samples decides them
				times[i].Level = doc.Warn
			}
			few = append(few, fmt.Sprintf("%s (n = %d)", b.red.String(r.Label), r.Samples))
		}
		cells := append([]doc.Cell{{Text: b.red.String(r.Label)}, {Text: typ}, {Text: count(r.Samples)}}, times...)
		t.Rows = append(t.Rows, doc.Row{Total: total, Cells: append(cells, errCell, doc.Cell{Text: rate(r.ThroughputRPS)})})
	}
	if len(few) > 0 {
		t.Note = sentence(fmt.Sprintf("Percentiles from fewer than %d samples are rough (one sample more or less moves them a whole rank): %s",
			minPercentileSamples, joinAnd(few)))
	}
	return t
}

// minPercentileSamples is the count below which a label's percentiles are
// marked as rough: at n = 12 the p90 is the 11th value, and the tools'
// definitions (nearest rank, interpolation) differ by a whole sample.
const minPercentileSamples = 100

func (b *builder) results() doc.Section {
	sec := doc.Section{ID: SecResults, Title: "Results"}
	all := b.s.Labels[len(b.s.Labels)-1]
	if all.Samples == 0 {
		sec.Blocks = append(sec.Blocks, noData("No samples were recorded: there are no response times to report."))
		b.finding(doc.FindNoSamples, doc.Fail, "No samples were recorded")
		b.conclude(doc.AspectResponseTime, doc.NoData, "no samples", "the run recorded no requests")
		b.conclude(doc.AspectThroughput, doc.NoData, "no samples", "the run recorded no requests")
		return sec
	}
	overall := fmt.Sprintf("%s over %s: min %s, average %s, median %s, p95 %s, p99 %s, max %s; %s overall",
		plural(all.Samples, "request"), dur(b.d.Span()), msU(all.MinMs), msU(all.MeanMs), msU(all.P50Ms), msU(all.P95Ms), msU(all.P99Ms), msU(all.MaxMs), rps(all.ThroughputRPS))
	if !b.holds().Durations || all.NoTimes {
		overall = fmt.Sprintf("%s over %s; %s overall", plural(all.Samples, "request"), dur(b.d.Span()), rps(all.ThroughputRPS))
	}
	sec.Blocks = append(sec.Blocks, &doc.Para{Text: sentences(overall,
		b.timingMethod(),
		"throughput counts completed requests per second of the span; a phase counts the requests that completed while it ran")})
	sec.Blocks = append(sec.Blocks, b.skippedBlocks()...)
	sec.Blocks = append(sec.Blocks, b.statsTable("Whole run, per label (transactions first, then requests)", b.s.Labels))
	if n := b.percentilesOutside(); n != nil {
		sec.Blocks = append(sec.Blocks, n)
	}
	if bad := b.d.NonUTF8Labels(); len(bad) > 0 {
		names := make([]string, len(bad))
		for i, n := range bad {
			names[i] = b.red.String(n)
		}
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: sentence(fmt.Sprintf("%s %s bytes that are not UTF-8 (%s): they are shown escaped as \\xNN, as the data hold them",
			plural(int64(len(bad)), "request name"), map[bool]string{true: "holds", false: "hold"}[len(bad) == 1], strings.Join(names, ", ")))})
	}
	for _, f := range b.timeCharts() {
		sec.Blocks = append(sec.Blocks, f)
	}
	sec.Blocks = append(sec.Blocks, b.labelCharts()...)
	if f := b.distributionChart(); f != nil {
		sec.Blocks = append(sec.Blocks, f)
	}
	if len(b.s.Phases) > 1 {
		sec.Blocks = append(sec.Blocks, &doc.Heading{Text: "Per phase"})
		for _, p := range b.s.Phases {
			if len(p.Labels) == 0 || p.Labels[len(p.Labels)-1].Samples == 0 {
				sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: p.Name + ": no samples."})
				continue
			}
			cap := p.Name
			if l := loadText(b.phaseByName(p.Name)); l != "–" {
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
				cases = append(cases, fmt.Sprintf("%s of %s, %s, against %s–%s", p.name, b.red.String(r.Label), msU(p.v), ms(r.MinMs), msU(r.MaxMs)))
			}
		}
	}
	if len(cases) == 0 {
		return nil
	}
	why := "the source tool's percentiles are its own figures, not recomputed"
	if b.s.PercentileMethod == "locust-rounded" {
		why = "Locust rounds the percentiles it writes (to two significant figures above 100 ms, to whole milliseconds below), while min and max are exact"
	}
	n := len(cases)
	if n > 3 {
		cases = append(cases[:3], fmt.Sprintf("%d more", n-3))
	}
	verb := "lie"
	if n == 1 {
		verb = "lies"
	}
	// "outside the measured range" is the phrase reporttest.PercentileNote
	// looks for.
	return &doc.Para{Note: true, Text: sentences(fmt.Sprintf("%s %s outside the measured range (%s)", plural(int64(n), "quoted percentile"), verb, strings.Join(cases, "; ")), why)}
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
		b.finding(doc.FindVolume, doc.Info, fmt.Sprintf("%s in %s over %d phases", plural(all.Samples, "request"), dur(b.d.Span()), len(ps)),
			fmt.Sprintf("highest throughput %s in %s (%s)", rps(ts[peak].ThroughputRPS), b.red.String(ps[peak].Name), loadText(ps[peak])))
	} else {
		times := fmt.Sprintf("average %s, p95 %s", msU(all.MeanMs), msU(all.P95Ms))
		if noTimes {
			times = ""
		}
		b.finding(doc.FindVolume, doc.Info, fmt.Sprintf("%s in %s at %s", plural(all.Samples, "request"), dur(b.d.Span()), rps(all.ThroughputRPS)), times)
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
		b.finding(doc.FindVolume, doc.Info, fmt.Sprintf("Slowest %s: %s, average %s, p95 %s over %s", kind, b.red.String(slow.Label), msU(slow.MeanMs), msU(slow.P95Ms), plural(slow.Samples, "sample")))
	}

	rtEvidence := fmt.Sprintf("average %s, p95 %s, p99 %s over the run", msU(all.MeanMs), msU(all.P95Ms), msU(all.P99Ms))
	rtLevel, rtVerdict, rtReqs := b.responseTimeVerdict()
	rtEvidence = clauses(rtReqs, rtEvidence)
	if noTimes {
		rtLevel, rtVerdict, rtEvidence = doc.NoData, "not measured", "the data hold no response times (an access log without a request-time field): only requests, statuses and sizes"
	}
	if allFailed {
		b.conclude(doc.AspectThroughput, doc.Fail, "none sustained: every request failed", fmt.Sprintf("%s over %s, %s failed", plural(all.Samples, "request"), dur(b.d.Span()), thousands(b.d.Total.Errors)))
	}
	if len(ps) < 2 {
		b.conclude(doc.AspectResponseTime, rtLevel, rtVerdict, rtEvidence)
		if !allFailed {
			b.conclude(doc.AspectThroughput, doc.Info, fmt.Sprintf("%s sustained", rps(all.ThroughputRPS)), fmt.Sprintf("%s over %s", plural(all.Samples, "request"), dur(b.d.Span())))
		}
		if noTimes {
			return &doc.Verdict{Level: doc.NoData, Text: fmt.Sprintf("Verdict: response time not measured (the data hold no response times); %s at %s.", plural(all.Samples, "request"), rps(all.ThroughputRPS))}
		}
		return &doc.Verdict{Level: rtLevel, Text: fmt.Sprintf("Verdict: response time %s — %s at %s.", rtVerdict, rtEvidence, rps(all.ThroughputRPS))}
	}
	// The movement of response time with throughput is stated over the
	// load steps of one workload; concurrent workloads are not steps.
	var rtMove string
	if cr := b.capacityAnalysis(); cr.Skip == analysis.CapacityDone && len(cr.Steps) > 1 && !noTimes {
		f, l := cr.Steps[0], cr.Steps[len(cr.Steps)-1]
		rtMove = fmt.Sprintf("average response time went from %s in %s to %s in %s while throughput went from %s to %s",
			msU(f.Point.MeanMs), b.red.String(f.Name), msU(l.Point.MeanMs), b.red.String(l.Name), rps(f.Point.ThroughputRPS), rps(l.Point.ThroughputRPS))
	}
	b.conclude(doc.AspectResponseTime, rtLevel, rtVerdict, rtEvidence, rtMove)
	tpLevel, tpVerdict, tpEvidence := b.throughputVerdict(ts)
	if allFailed {
		tpLevel, tpVerdict = doc.Fail, "none sustained: every request failed"
	} else {
		b.conclude(doc.AspectThroughput, tpLevel, tpVerdict, tpEvidence)
	}
	return &doc.Verdict{Level: max(rtLevel, tpLevel), Text: sentences("verdict: " + clauses(rtMove, "throughput "+tpVerdict))}
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
		seen := obsU(r.Observed, r.Unit)
		switch {
		case r.Scope == "run":
			seen += " over the run"
		case !strings.Contains(r.Expr, r.Scope):
			seen += " in " + r.Scope
		}
		switch {
		case !r.Passed:
			broken = append(broken, fmt.Sprintf("%s (%s)", r.Expr, seen))
		case r.FirstBroken != "" && r.Scope == "run":
			partly = append(partly, fmt.Sprintf("%s (%s)", r.Expr, obsU(r.Observed, r.Unit)))
		default:
			held = append(held, fmt.Sprintf("%s: %s", r.Expr, seen))
		}
	}
	ev := strings.Join(held, "; ")
	others := func(n int) string {
		if n == 1 {
			return "the other requirement"
		}
		return fmt.Sprintf("the other %d", n)
	}
	switch {
	case len(held)+len(partly)+len(broken) == 0:
		return doc.Info, "measured; no response-time requirement", ""
	case len(broken) > 0:
		v := "breaks " + joinAnd(broken)
		switch {
		case len(partly) > 0:
			v += ", meets " + joinAnd(partly) + " over the run but not in every phase"
			if len(held) > 0 {
				v += ", and " + others(len(held))
			}
		case len(held) > 0:
			v += ", meets " + others(len(held))
		}
		return doc.Fail, v, ev
	case len(partly) > 0:
		v := "meets " + joinAnd(partly) + " over the run but not in every phase"
		if n := len(held); n > 0 {
			v += ", and " + others(n)
		}
		return doc.Warn, v, ev
	case len(held) == 1:
		return doc.OK, "meets its requirement", ev
	case len(held) == 2:
		return doc.OK, "meets both requirements", ev
	}
	return doc.OK, fmt.Sprintf("meets all %d requirements", len(held)), ev
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
		span := fmt.Sprintf("between %s and %s across %d phases", rps(lo), rps(hi), len(ts))
		if rate(lo) == rate(hi) {
			span = fmt.Sprintf("%s in each of %d phases", rps(lo), len(ts))
		}
		if why == "" {
			why = "the analysis failed: " + cr.Err.Error()
		}
		return doc.Info, span, "no scaling judged: " + why
	}
	res := cr.Knee
	first, last := cr.Steps[0], cr.Steps[len(cr.Steps)-1]
	switch res.Outcome {
	case knee.Stopped:
		k := res.Knee
		return doc.Warn, fmt.Sprintf("stopped scaling at %s (%s)", loadU(k.Load, cr.Kind), rps(k.ThroughputRPS)), clauses(k.Evidence(), bottleneckClause(cr.Bottleneck, cr.Kind, true))
	case knee.Scaling:
		thr := pct(100 * res.MinGain)
		return doc.OK, "kept growing up to the highest tested load", fmt.Sprintf("from %s at %s to %s at %s; beyond every tested load it still grew by more than the %s threshold",
			rps(first.Point.ThroughputRPS), loadU(first.Point.Load, cr.Kind), rps(last.Point.ThroughputRPS), loadU(last.Point.Load, cr.Kind), thr)
	case knee.ThinData:
		return doc.NoData, "not enough data to judge scaling", thinKneeClause(res.Thin, cr.Kind)
	}
	return doc.Warn, "stopped growing without a rise in response time", res.KneeReason
}

// ---- errors -----------------------------------------------------------------

func (b *builder) errors() doc.Section {
	sec := doc.Section{ID: SecErrors, Title: "Errors"}
	es := b.s.Errors
	all := b.s.Labels[len(b.s.Labels)-1]
	if es.Total == 0 {
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.OK, Text: fmt.Sprintf("No errors in %s.", plural(all.Samples, "request"))})
		if all.Samples > 0 {
			b.finding(doc.FindNoErrors, doc.OK, "No errors in "+plural(all.Samples, "request"))
			b.conclude(doc.AspectErrors, doc.OK, "none", fmt.Sprintf("0 of %s failed", plural(all.Samples, "request")))
		}
		return sec
	}
	share := func(n int64) string {
		if all.Samples == 0 {
			return "–"
		}
		return pct(100 * float64(n) / float64(all.Samples))
	}
	ofErr := func(n int64) string { return pct(100 * float64(n) / float64(es.Total)) }

	t := &doc.Table{Caption: "By class", Columns: []doc.Column{{Name: "Class"}, {Name: "Errors", Align: doc.Right},
		{Name: "% of requests", Align: doc.Right}, {Name: "% of errors", Align: doc.Right}}}
	for _, k := range sortedByValue(es.ByClass) {
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: k}, {Text: count(es.ByClass[k])}, {Text: share(es.ByClass[k])}, {Text: ofErr(es.ByClass[k])}}})
	}
	t.Rows = append(t.Rows, doc.Row{Total: true, Cells: []doc.Cell{{Text: "all"}, {Text: count(es.Total)}, {Text: share(es.Total)}, {Text: "100 %"}}})
	sec.Blocks = append(sec.Blocks, t)
	if len(es.ByStatus) > 0 {
		t := &doc.Table{Caption: "By HTTP status", Columns: []doc.Column{{Name: "Status"}, {Name: "Errors", Align: doc.Right},
			{Name: "% of requests", Align: doc.Right}, {Name: "% of errors", Align: doc.Right}}}
		for _, k := range sortedByValue(es.ByStatus) {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: k + " " + statusText(k)}, {Text: count(es.ByStatus[k])}, {Text: share(es.ByStatus[k])}, {Text: ofErr(es.ByStatus[k])}}})
		}
		sec.Blocks = append(sec.Blocks, t)
	}
	const maxRows = 50
	dt := &doc.Table{Caption: "By message, with when and where they were seen", Columns: []doc.Column{{Name: "Class"}, {Name: "Status", Align: doc.Right},
		{Name: "Message"}, {Name: "Label"}, {Name: "Count", Align: doc.Right}, {Name: "% of requests", Align: doc.Right},
		{Name: "First seen"}, {Name: "Last seen"}, {Name: "Phases"}}}
	// A failed request also fails its transaction; the table lists the
	// requests' errors and shows a transaction's only when none of its
	// requests carries it (an imported log of transactions alone).
	details := b.requestErrors()
	for i, e := range details {
		if i == maxRows {
			dt.Note = fmt.Sprintf("%d more kinds of error not shown; summary.json lists them all.", len(details)-maxRows)
			break
		}
		st := "–"
		if e.Status > 0 {
			st = fmt.Sprint(e.Status)
		}
		label := e.Label
		if len(b.d.Info.Workloads) > 1 && e.Workload != "" {
			label = b.red.String(e.Workload) + ": " + label
		}
		dt.Rows = append(dt.Rows, doc.Row{Cells: []doc.Cell{{Text: e.Class}, {Text: st}, {Text: nonEmpty(e.Message, "–")},
			{Text: label}, {Text: count(e.Count)}, {Text: share(e.Count)},
			{Text: hms(e.First) + " (+" + offset(e.First, b.d.Start) + ")"}, {Text: hms(e.Last) + " (+" + offset(e.Last, b.d.Start) + ")"},
			{Text: nonEmpty(strings.Join(e.Phases, ", "), "–")}}})
	}
	if len(dt.Rows) > 0 {
		sec.Blocks = append(sec.Blocks, dt)
	}
	if f := b.errorChart(); f != nil {
		sec.Blocks = append(sec.Blocks, f)
	}
	where := b.errorPlacement()
	lvl := doc.Warn
	for _, r := range b.s.SLA {
		if e, err := sla.Parse(r.Expr); err == nil && e.Metric == sla.ErrorRate && !r.Passed {
			lvl = doc.Fail
		}
	}
	top := ""
	if len(details) > 0 {
		e := details[0]
		top = "most frequent: " + describeErr(e.Class, e.Status, e.Message)
	}
	head := fmt.Sprintf("%s in %s (%s)", plural(es.Total, "error"), plural(all.Samples, "request"), share(es.Total))
	sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: lvl, Text: sentence("Verdict: "+head, top, where)})
	b.finding(doc.FindErrors, lvl, head, top, where)
	b.conclude(doc.AspectErrors, lvl, fmt.Sprintf("%s (%s)", plural(es.Total, "error"), share(es.Total)), top, where)
	return sec
}

func describeErr(class string, status int, msg string) string {
	s := class
	if status > 0 {
		s = fmt.Sprintf("HTTP %d", status)
		if t := statusText(fmt.Sprint(status)); t != "" {
			s += " " + t
		}
		switch class {
		case "http_4xx", "http_5xx", "check", "":
		default:
			// The status line arrived, then the exchange failed (a reset
			// mid-body): the class says what happened.
			s = class + " after " + s
		}
	}
	if msg != "" {
		if len(msg) > 80 {
			msg = msg[:77] + "…"
		}
		s += " “" + msg + "”"
	}
	return s
}

// requestErrors are the error details without transaction rows that
// repeat a request's error.
func (b *builder) requestErrors() []analysis.ErrorDetail {
	type kind struct {
		class, msg string
		status     int
	}
	onRequest := map[kind]bool{}
	is := func(e analysis.ErrorDetail, want func(analysis.LabelKey) bool) bool {
		for k := range b.d.Run {
			if want(k) && k.Workload == e.Workload && b.red.String(k.Label) == e.Label {
				return true
			}
		}
		return false
	}
	isTx := func(e analysis.ErrorDetail) bool { return is(e, func(k analysis.LabelKey) bool { return k.Tx }) }
	isDerived := func(e analysis.ErrorDetail) bool { return is(e, func(k analysis.LabelKey) bool { return k.Derived }) }
	var out []analysis.ErrorDetail
	var txs []analysis.ErrorDetail
	for _, e := range b.s.Errors.Details {
		if isDerived(e) {
			continue // the same failures as the request it was derived from
		}
		if isTx(e) {
			txs = append(txs, e)
			continue
		}
		onRequest[kind{e.Class, e.Message, e.Status}] = true
		out = append(out, e)
	}
	for _, e := range txs {
		if !onRequest[kind{e.Class, e.Message, e.Status}] {
			out = append(out, e)
		}
	}
	return out
}

// errorPlacement says when errors happened: only during ramp-up, only in
// some phases, or throughout.
func (b *builder) errorPlacement() string {
	var inRamp, total int64
	type span struct{ s, e int64 }
	var ramps []span
	for _, p := range b.d.Phases {
		if p.RampUp > 0 {
			ramps = append(ramps, span{p.Start.Unix(), p.Start.Add(p.RampUp).Unix()})
		}
	}
	for _, t := range b.d.TotalTicks {
		if t.Errors == 0 {
			continue
		}
		total += t.Errors
		for _, r := range ramps {
			if sec := t.T.Unix(); sec >= r.s && sec <= r.e {
				inRamp += t.Errors
				break
			}
		}
	}
	if total > 0 && len(ramps) > 0 {
		switch {
		case inRamp == total:
			return "errors only during ramp-up"
		case inRamp > 0:
			return fmt.Sprintf("%s of them during ramp-up", pct(100*float64(inRamp)/float64(total)))
		}
	}
	phases := map[string]bool{}
	for _, e := range b.s.Errors.Details {
		for _, p := range e.Phases {
			phases[p] = true
		}
	}
	if len(phases) > 0 && len(phases) < len(b.d.Phases) {
		return "only in " + joinAnd(sortedKeys(phases))
	}
	return ""
}

var statusTexts = map[string]string{"400": "Bad Request", "401": "Unauthorized", "403": "Forbidden", "404": "Not Found",
	"408": "Request Timeout", "409": "Conflict", "422": "Unprocessable Entity", "429": "Too Many Requests",
	"500": "Internal Server Error", "502": "Bad Gateway", "503": "Service Unavailable", "504": "Gateway Timeout"}

func statusText(code string) string { return statusTexts[code] }
