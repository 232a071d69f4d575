package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// ---- resource verdicts --------------------------------------------------------

// spans are the run's phases as the resources analysis reads them (the
// whole run when it has none), names masked.
func (b *builder) spans() []resources.Span {
	var out []resources.Span
	for _, p := range b.d.Phases {
		out = append(out, resources.Span{Name: b.red.String(p.Name), From: p.Start, To: p.End})
	}
	if len(out) == 0 {
		out = append(out, resources.Span{Name: "the run", From: b.d.Start, To: b.d.End.Add(time.Nanosecond)})
	}
	return out
}

// cpuUnit is the unit of a CPU peak.
func cpuUnit(p *resources.CPUPeak) string {
	if p.Host {
		return "% busy"
	}
	return "% of one core"
}

// judgeResources words the CPU, network, memory and GC conclusions and
// findings (resources.JudgeMachines and the memory trends decide).
func (b *builder) judgeResources() {
	m := resources.JudgeMachines(b.resourceTargets(), resources.MachineOptions{Spans: b.spans(), From: b.d.Start, To: b.d.End, Loopback: b.loopbackTarget()})
	if c := m.CPU; c != nil {
		lvl, verdict := doc.OK, "never near the ceiling"
		switch c.Grade() {
		case resources.CPUSaturated:
			lvl, verdict = doc.Fail, "saturated"
		case resources.CPUHigh:
			lvl, verdict = doc.Warn, "high"
		case resources.CPUPerProcess:
			lvl, verdict = doc.Info, "measured per process"
		}
		name, unit := b.red.String(c.Target), cpuUnit(c)
		ev := fmt.Sprintf("busiest: %s at %s %s on average in %s (peak %s %s)", name, num3(c.Mean), unit, c.Span, num3(c.Max), unit)
		b.conclude(doc.AspectCPU, lvl, verdict, ev)
		b.finding(doc.FindResources, lvl, fmt.Sprintf("CPU %s: %s averaged %s %s in %s (peak %s %s)", verdict, name, num3(c.Mean), unit, c.Span, num3(c.Max), unit))
	} else if g := m.GeneratorCPU; g != nil {
		b.conclude(doc.AspectCPU, doc.NoData, "not measured for the system under test", "only the load generator's own host ("+b.red.String(g.Target)+") was monitored; its health is stated apart")
	}
	if g := m.GeneratorCPU; g != nil {
		unit := cpuUnit(g)
		lvl, verdict := doc.OK, "kept up"
		if gr := g.Grade(); gr == resources.CPUSaturated || gr == resources.CPUHigh {
			lvl, verdict = doc.Warn, "busy: it may have limited the load it could apply"
		}
		ev := fmt.Sprintf("%s at %s %s on average in %s (peak %s %s)", b.red.String(g.Target), num3(g.Mean), unit, g.Span, num3(g.Max), unit)
		b.conclude(doc.AspectGenerator, lvl, verdict, ev)
		b.finding(doc.FindResources, lvl, fmt.Sprintf("Load generator %s: %s", verdict, ev))
	}
	// Network: the highest phase means in and out per host of the system
	// under test.
	var netEv []string
	for _, n := range m.Net {
		var dirs []string
		if n.In > 0 {
			dirs = append(dirs, "in "+bytesU(n.In)+"/s")
		}
		if n.Out > 0 {
			dirs = append(dirs, "out "+bytesU(n.Out)+"/s")
		}
		netEv = append(netEv, fmt.Sprintf("%s %s in %s", b.red.String(n.Target), strings.Join(dirs, ", "), n.Span))
	}
	names := func(ts []string) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = b.red.String(t)
		}
		return out
	}
	switch {
	case len(netEv) > 0:
		if len(netEv) > 3 {
			netEv = append(netEv[:3], fmt.Sprintf("and %d more", len(netEv)-3))
		}
		b.conclude(doc.AspectNetwork, doc.Info, "measured", "highest phase means: "+strings.Join(netEv, "; "))
	case len(m.NetIdle) > 0:
		b.conclude(doc.AspectNetwork, doc.NoData, "no traffic recorded", "the monitored interfaces of "+joinAnd(names(m.NetIdle))+" read zero throughout: the load used another interface, or the counters were not updated")
	case len(m.NetLoopback) > 0:
		b.conclude(doc.AspectNetwork, doc.NoData, "not measured", "the test ran over loopback, which the monitored interfaces of "+joinAnd(names(m.NetLoopback))+" (the load generator's host) do not carry; their figures are other traffic")
	}
	if mts := b.s.Trends.Memory; len(mts) > 0 {
		var growing, stable []string
		for _, m := range mts {
			switch trend.Verdict(m.Verdict) {
			case trend.Growing:
				growing = append(growing, fmt.Sprintf("%s %s +%s/h", m.Target, m.What, bytesU(math.Abs(float64(m.SlopeBytesPerHour)))))
			case trend.Stable:
				stable = append(stable, fmt.Sprintf("%s %s", m.Target, m.What))
			}
		}
		switch {
		case len(growing) > 0:
			ev := "growing after GC: " + strings.Join(growing, "; ")
			b.conclude(doc.AspectMemory, doc.Warn, "grows over the run: possible leak", ev)
			b.finding(doc.FindMemory, doc.Warn, "Memory grows after garbage collection: "+strings.Join(growing, "; "))
		case len(stable) > 0:
			m := mts[0]
			ev := fmt.Sprintf("stable after GC: %s (%s %s/h, %s)", strings.Join(stable, ", "), m.Target, signedBytes(float64(m.SlopeBytesPerHour)), m.Method)
			b.conclude(doc.AspectMemory, doc.OK, "handled well: no leak signal", ev)
			b.finding(doc.FindMemory, doc.OK, fmt.Sprintf("Memory stable after garbage collection (%s): no leak signal", strings.Join(stable, ", ")))
		default:
			b.conclude(doc.AspectMemory, doc.NoData, "too short to judge a trend", mts[0].Reason)
		}
	}
	// GC: collections per JVM over the run.
	var gcEv []string
	gcLvl := doc.OK
	for _, g := range m.GC {
		var parts []string
		if finite(g.Young) {
			parts = append(parts, fmt.Sprintf("%s young (%s/min)", count(int64(g.Young)), num3(g.YoungPerMin)))
		}
		if finite(g.Full) {
			parts = append(parts, fmt.Sprintf("%s full", count(int64(g.Full))))
		}
		if finite(g.TimePct) {
			parts = append(parts, fmt.Sprintf("GC time %s %%", num3(g.TimePct)))
		}
		if g.Busy {
			gcLvl = doc.Warn
		}
		gcEv = append(gcEv, b.red.String(g.Target)+": "+strings.Join(parts, ", "))
	}
	if len(gcEv) > 0 {
		verdict := "collects regularly and keeps up"
		if gcLvl == doc.Warn {
			verdict = "busy: frequent full collections or a high GC time share"
		}
		b.conclude(doc.AspectGC, gcLvl, verdict, strings.Join(gcEv, "; "))
	}
}

// ---- capacity -----------------------------------------------------------------

// capacityAnalysis is the run's capacity analysis (analysis.Capacity,
// computed once when the run was loaded): every section that speaks of
// scaling reads it, so they all name the same knee.
func (b *builder) capacityAnalysis() *analysis.CapacityRun { return b.in.capRun }

// capacityWhy is the sentence saying why a run has no capacity analysis;
// "" when it has one.
func (b *builder) capacityWhy() string {
	cr := b.capacityAnalysis()
	switch cr.Skip {
	case analysis.CapacityTooFewPhases:
		return "it needs phases at two or more different loads of one workload (a stepped run, or several runs at different loads); this run has " + plural(int64(cr.Phases), "phase")
	case analysis.CapacityConcurrentOnly:
		return fmt.Sprintf("it needs phases at two or more different loads of one workload; the %d phases here belong to %d workloads running side by side, each at one load, and concurrent workloads are not load steps", cr.Phases, cr.Workloads)
	case analysis.CapacitySameLoad:
		return fmt.Sprintf("it needs phases at two or more different loads of one workload; all %d phases here ran at the same load", cr.Phases)
	}
	return ""
}

// serverTimes reports whether the response times were measured at the
// servers (an imported access log) rather than by a load generator.
func (b *builder) serverTimes() bool {
	return b.source() == rundir.SourceAccessLog
}

func (b *builder) capacity() doc.Section {
	sec := doc.Section{ID: SecCapacity, Title: "Capacity"}
	cr := b.capacityAnalysis()
	if why := b.capacityWhy(); why != "" {
		sec.Blocks = append(sec.Blocks, noData(sentence("no capacity analysis: "+why)))
		return sec
	}
	pts, kind, res, checkLittle := cr.Steps, cr.Kind, cr.Knee, cr.CheckLittle
	if cr.Err != nil {
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentence("capacity analysis failed: " + cr.Err.Error())})
		return sec
	}
	unit := "users"
	loadName := "Users"
	if kind == knee.Rate {
		unit, loadName = "req/s", "Offered rate (req/s)"
	}
	// Table: load against throughput and response time.
	t := &doc.Table{Caption: "Throughput and response time against offered load", Columns: []doc.Column{{Name: "Phase"}, {Name: loadName, Align: doc.Right},
		{Name: "Throughput (req/s)", Align: doc.Right}, {Name: "Average (ms)", Align: doc.Right}, {Name: "p95 (ms)", Align: doc.Right},
		{Name: "Every SLA met"}}}
	if checkLittle {
		t.Columns = append(t.Columns, doc.Column{Name: "Little's law"})
	}
	for _, x := range pts {
		lcell := doc.Cell{Text: "–"}
		for _, l := range res.Little {
			if checkLittle && l.Load == x.Point.Load {
				lcell = doc.Cell{Text: fmt.Sprintf("%s of the asked load", pct(100*l.Ratio))}
				if l.Short {
					lcell.Level = doc.Warn
					lcell.Text += ": " + l.Note
				}
			}
		}
		met := doc.Cell{Text: "yes", Level: doc.OK}
		if !x.Point.SLAMet {
			met = doc.Cell{Text: "no", Level: doc.Fail}
		}
		if len(b.s.SLA) == 0 {
			met = doc.Cell{Text: "–"}
		}
		row := doc.Row{Cells: []doc.Cell{{Text: b.red.String(x.Name)}, {Text: num3(x.Point.Load)}, {Text: rate(x.Point.ThroughputRPS)},
			{Text: ms(x.Point.MeanMs)}, {Text: ms(x.Point.P95Ms)}, met}}
		if checkLittle {
			row.Cells = append(row.Cells, lcell)
		}
		t.Rows = append(t.Rows, row)
	}
	sec.Blocks = append(sec.Blocks, t)
	// Chart: throughput (and the USL curve) and mean response time against load.
	c := &chart.Chart{Title: "Throughput and response time against load", XKind: chart.Linear, XLabel: loadName,
		Y: chart.Axis{Label: "Throughput (req/s)", Unit: "req/s"}, Y2: &chart.Axis{Label: "Average response time (ms)", Unit: "ms"}, Height: 320}
	var lx, ly, lm []float64
	for _, p := range res.Points {
		lx, ly, lm = append(lx, p.Load), append(ly, p.ThroughputRPS), append(lm, p.MeanMs)
	}
	c.Series = append(c.Series, chart.Series{Name: "throughput", Color: colTput, X: lx, Y: ly, Style: chart.LinePoints, Width: 2},
		chart.Series{Name: "average response time", Color: colAvg, X: lx, Y: lm, Style: chart.LinePoints, Right: true})
	if res.USL != nil {
		u := *res.USL
		hi := lx[len(lx)-1] * 1.3
		if finite(u.PeakLoad) && u.PeakLoad > hi && u.PeakLoad < 2*lx[len(lx)-1] {
			hi = u.PeakLoad * 1.1
		}
		var ux, uy []float64
		for i := 0; i <= 60; i++ {
			n := hi * float64(i) / 60
			if n <= 0 {
				continue
			}
			ux, uy = append(ux, n), append(uy, u.Throughput(n))
		}
		if kind == knee.Users {
			c.Series = append(c.Series, chart.Series{Name: "USL fit", Color: "#222", X: ux, Y: uy, Dash: true, Width: 1.4})
		}
	}
	if res.Knee != nil {
		k := res.Knee
		c.Markers = append(c.Markers, chart.Marker{X: k.Load, Label: "knee"})
	}
	var usl, kneeLine string
	if res.USL != nil && kind == knee.Users {
		usl = "the dashed curve is the fitted Universal Scalability Law"
	}
	if res.Knee != nil {
		kneeLine = "the vertical line marks the knee"
	}
	sec.Blocks = append(sec.Blocks, b.figure("capacity", c, sentences("each point is one phase", usl, kneeLine)))
	// Verdicts in words.
	if res.Knee != nil {
		s := upperFirst(res.Knee.Sentence())
		bn := bottleneckClause(cr.Bottleneck, kind, true)
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentence("Knee: "+s, bn)})
		b.dropFindings(doc.FindCapacity)
		b.finding(doc.FindCapacity, doc.Warn, s, bn)
	} else {
		if res.Outcome == knee.ThinData {
			sec.Blocks = append(sec.Blocks, noData(sentence("No verdict on scaling: "+thinKneeClause(res.Thin, kind))))
		} else {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Info, Text: sentence("No knee: " + res.KneeReason)})
		}
		if cr.Bottleneck != nil {
			sec.Blocks = append(sec.Blocks, &doc.Para{Text: sentence("Up to the highest tested load, " + bottleneckClause(cr.Bottleneck, kind, false))})
		}
	}
	if res.USL != nil {
		u := res.USL
		peak := "no peak within reach (coherency κ ≈ 0: throughput approaches λ/σ)"
		if finite(u.PeakLoad) {
			peak = fmt.Sprintf("predicted peak %s at %s", rps(u.PeakThroughputRPS), loadU(u.PeakLoad, kind))
		}
		sec.Blocks = append(sec.Blocks, &doc.Para{Text: fmt.Sprintf("Universal Scalability Law fit: contention σ = %s, coherency κ = %s, λ = %s per %s; %s; fit quality R² = %.3f.",
			coef(u.Sigma), coef(u.Kappa), rate(u.Lambda), strings.TrimSuffix(unit, "s"), peak, u.R2)})
	} else {
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: sentence("No USL fit: " + res.USLReason)})
	}
	if len(b.s.SLA) > 0 {
		if res.MaxLoadMeetingSLA != nil {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.OK, Text: sentence("highest tested load that met every requirement: " + loadU(*res.MaxLoadMeetingSLA, kind))})
		} else {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Fail, Text: "Even the lowest tested load broke a requirement."})
		}
	}
	switch {
	case !checkLittle && !b.holds().PlannedLoad && !b.serverTimes():
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: "Little's-law check of the generator skipped: the imported data do not say what load was asked or how long the users waited between requests."})
	case !checkLittle && b.serverTimes():
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: "Little's-law check of the generator skipped: the times are the servers' own, so they do not say how many of the generator's users were busy."})
	case !checkLittle:
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: "Little's-law check of the generator skipped: the users think or pace between requests, so the time per iteration, not per request, decides how many are busy."})
	}
	for _, l := range res.Little {
		if checkLittle && l.Short {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentence(fmt.Sprintf("Little's law at %s: %s", loadU(l.Load, kind), l.Note))})
		}
	}
	return sec
}

// thinKneeClause says, with its numbers, which load level had too little
// data for a verdict on scaling, and the rule it missed.
func thinKneeClause(p *knee.Point, kind knee.LoadKind) string {
	return fmt.Sprintf("not enough data to judge: the step at %s had %s over %s; a verdict needs at least %s and %s at every load",
		loadU(p.Load, kind), plural(p.Samples, "request"), dur(time.Duration(p.Seconds*float64(time.Second))), plural(knee.MinSamples, "request"), dur(time.Duration(knee.MinSeconds*float64(time.Second))))
}

// coef formats a fitted coefficient to 4 significant digits; a value
// below 1e-6 is a fit at its bound and reads 0, not "9.827e-16".
func coef(v float64) string {
	if math.Abs(v) < 1e-6 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// loadU formats a load in its unit: whole users ("~36 users" when a model
// predicts a fraction), or an arrival rate.
func loadU(v float64, kind knee.LoadKind) string {
	if kind == knee.Rate {
		return rps(v) + " offered"
	}
	n := math.Round(v)
	s := plural(int64(n), "user")
	if math.Abs(v-n) > 1e-9 {
		s = "~" + s
	}
	return s
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
func round3(v float64) float64 { return math.Round(v*1e3) / 1e3 }
func finite(v float64) bool    { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// ---- trends -------------------------------------------------------------------

func (b *builder) trends() doc.Section {
	sec := doc.Section{ID: SecTrends, Title: "Trends"}
	tj := b.s.Trends
	switch tj.LatencySkip {
	case trend.LatencyRunTooShort:
		sec.Blocks = append(sec.Blocks, noData(sentence(fmt.Sprintf("No latency drift analysis: the run lasted %s; it takes at least %d minutes of per-minute values under one load",
			dur(b.d.Span()), trend.MinTrendMinutes))))
	case trend.LatencyNoLongPhase:
		sec.Blocks = append(sec.Blocks, noData(sentence(fmt.Sprintf("No latency drift analysis: the load changed between phases and no phase lasted %d minutes, so a level change cannot be told from a load step",
			trend.MinTrendMinutes))))
	case trend.LatencyFewMinutes:
		sec.Blocks = append(sec.Blocks, noData(sentence(fmt.Sprintf("No latency drift analysis: too few minutes with at least %d requests each (%d needed under one load)",
			trend.MinMinuteSamples, trend.MinTrendMinutes))))
	default:
		sec.Blocks = append(sec.Blocks, b.latencyDrift(tj.Latency)...)
	}
	// Memory after GC.
	if len(tj.Memory) > 0 {
		t := &doc.Table{Caption: "Memory after garbage collection", Columns: []doc.Column{{Name: "Target"}, {Name: "Memory"}, {Name: "Slope", Align: doc.Right},
			{Name: "95 % interval", Align: doc.Right}, {Name: "Method"}, {Name: "Verdict"}}}
		for _, m := range tj.Memory {
			v := doc.Cell{Text: m.Verdict, Level: doc.OK}
			switch trend.Verdict(m.Verdict) {
			case trend.Growing:
				v.Level = doc.Warn
				if m.Result.TimeToLimit != nil {
					v.Text += "; limit in " + dur(*m.Result.TimeToLimit)
				}
			case trend.Unknown:
				v.Level = doc.NoData
			}
			if trend.Verdict(m.Verdict) == trend.Unknown && m.Result.Baseline == nil {
				// No fit was made: say why instead of printing zeros.
				v.Text += ": " + m.Reason
				t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: m.Target}, {Text: m.What}, {Text: "–"}, {Text: "–"}, {Text: "–"}, v}})
				continue
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: m.Target}, {Text: m.What}, {Text: signedBytes(float64(m.SlopeBytesPerHour)) + "/h"},
				{Text: fmt.Sprintf("%s … %s", signedBytes(float64(m.CILow)), signedBytes(float64(m.CIHigh)))}, {Text: nonEmpty(m.Method, "–")}, v}})
		}
		sec.Blocks = append(sec.Blocks, t)
		if f := b.memoryChart(); f != nil {
			sec.Blocks = append(sec.Blocks, f)
		}
	} else {
		sec.Blocks = append(sec.Blocks, noData("No memory trend: no monitored target reported memory."))
	}
	if blk := b.workloadPhases(); blk != nil {
		sec.Blocks = append(sec.Blocks, blk...)
	}
	return sec
}

// latencyDrift renders the judged latency drifts: the table, the rows with
// too little data said once with their numbers, and the verdict.
func (b *builder) latencyDrift(rows []trend.LatencyTrend) []doc.Block {
	var blocks []doc.Block
	t := &doc.Table{Caption: "Latency drift (per-minute values)", Columns: []doc.Column{{Name: "Label"}, {Name: "Over"}, {Name: "Statistic"},
		{Name: "Slope (ms/h)", Align: doc.Right}, {Name: "95 % interval", Align: doc.Right}, {Name: "Level shift"}, {Name: "Verdict"}}}
	var drifts, thin []string
	for _, r := range rows {
		shift := "none"
		if r.ChangeAt != nil {
			shift = fmt.Sprintf("from %s (+%s) on: %s", hms(r.ChangeAt.In(b.d.Start.Location())), offset(*r.ChangeAt, b.d.Start), signedMs(float64(r.ChangeMs)))
		}
		verdict := doc.Cell{Text: "flat", Level: doc.OK}
		switch r.Verdict {
		case trend.DriftThin:
			verdict = doc.Cell{Text: "not enough data to judge", Level: doc.NoData}
			if r.Stat == "mean" {
				thin = append(thin, fmt.Sprintf("%s over %s: %s in %d minutes", r.Label, r.Phase, plural(r.Requests, "request"), r.MinutesAnalyzed))
			}
		case trend.DriftUp:
			// A rise is worth a warning; a fall is stated without one.
			verdict = doc.Cell{Text: "drifts up", Level: doc.Warn}
			if r.ChangeAt != nil {
				drifts = append(drifts, fmt.Sprintf("from %s on, %s %s rose by %s", offset(*r.ChangeAt, b.d.Start), r.Label, r.Stat, strings.TrimPrefix(signedMs(float64(r.ChangeMs)), "+")))
			} else {
				drifts = append(drifts, fmt.Sprintf("%s %s %s/h", r.Label, r.Stat, signedMs(float64(r.SlopeMsPerHour))))
			}
		case trend.DriftDown:
			verdict = doc.Cell{Text: "drifts down", Level: doc.Info}
		}
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: r.Label}, {Text: r.Phase}, {Text: r.Stat}, {Text: signed1(float64(r.SlopeMsPerHour))},
			{Text: signed1(float64(r.CILow)) + " … " + signed1(float64(r.CIHigh))}, {Text: shift}, verdict}})
	}
	blocks = append(blocks, t)
	if len(thin) > 0 {
		blocks = append(blocks, &doc.Para{Note: true, Text: sentence(fmt.Sprintf("Not enough data to judge a drift for %s: a verdict needs at least %s under one load and %d requests in each minute counted",
			strings.Join(thin, "; "), plural(trend.MinDriftSamples, "request"), trend.MinMinuteSamples))})
	}
	switch {
	case len(drifts) > 0:
		if len(drifts) > 3 {
			drifts = append(drifts[:3], fmt.Sprintf("and %d more", len(drifts)-3))
		}
		text := "Latency drift: " + strings.Join(drifts, "; ")
		blocks = append(blocks, &doc.Verdict{Level: doc.Warn, Text: sentence(text)})
		b.finding(doc.FindDrift, doc.Warn, text)
	case len(thin) > 0:
		// said once above, with the numbers: no "level" claim either
	default:
		blocks = append(blocks, &doc.Verdict{Level: doc.OK, Text: "No latency drift: per-minute mean and p95 stay level under constant load (no significant slope, no level shift)."})
	}
	return blocks
}

// ticksIn returns the ticks in [from, to).
func ticksIn(ts []analysis.Tick, from, to time.Time) []analysis.Tick {
	i := sort.Search(len(ts), func(i int) bool { return !ts[i].T.Before(from) })
	j := sort.Search(len(ts), func(i int) bool { return !ts[i].T.Before(to) })
	return ts[i:j]
}

func signed1(v float64) string {
	if !finite(v) {
		return "–"
	}
	return fmt.Sprintf("%+.1f", v)
}

func signedBytes(v float64) string {
	if !finite(v) {
		return "–"
	}
	if v < 0 {
		return "−" + bytesU(-v)
	}
	return "+" + bytesU(v)
}

// memoryChart draws the after-GC points of each memory trend.
func (b *builder) memoryChart() *doc.Figure {
	c := b.timeChart("Memory after garbage collection")
	c.Y = chart.Axis{Label: "Memory", Unit: "bytes"}
	for i, m := range b.s.Trends.Memory {
		if len(m.Result.Baseline) == 0 || i >= 6 {
			continue
		}
		x, y := make([]float64, len(m.Result.Baseline)), make([]float64, len(m.Result.Baseline))
		for j, p := range m.Result.Baseline {
			x[j], y[j] = unix(p.T), p.V
		}
		if len(x) > maxBuckets {
			from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
			r := chart.Reduce(x, y, nil, from, to, chart.BucketWidth(to-from, 1, maxBuckets))
			x, y = r.X, r.Mean
		}
		c.Series = append(c.Series, chart.Series{Name: m.Target + " " + m.What, Color: chart.Palette[i%len(chart.Palette)], X: x, Y: y, Style: chart.LinePoints})
	}
	if len(c.Series) == 0 {
		return nil
	}
	return b.figure("memory-after-gc", c, "The points each trend line was fitted to: memory right after a collection (or the lowest reading of each window when no collection was seen).")
}

// workloadPhases reports each target's CPU before, during and after a
// workload that ran for only part of the run (reference 004).
func (b *builder) workloadPhases() []doc.Block {
	if len(b.d.Info.Workloads) < 2 {
		return nil
	}
	// The span of each workload's phases.
	spans := map[string][2]time.Time{}
	for _, p := range b.d.Phases {
		s, ok := spans[p.Workload]
		if !ok {
			s = [2]time.Time{p.Start, p.End}
		}
		if p.Start.Before(s[0]) {
			s[0] = p.Start
		}
		if p.End.After(s[1]) {
			s[1] = p.End
		}
		spans[p.Workload] = s
	}
	var blocks []doc.Block
	ts := b.monTargets()
	for _, w := range sortedKeys(spans) {
		sp := spans[w]
		if !sp[0].After(b.d.Start.Add(30*time.Second)) && !sp[1].Before(b.d.End.Add(-30*time.Second)) {
			// Ran the whole time: there is no before or after to compare.
			blocks = append(blocks, &doc.Para{Note: true, Text: sentence(fmt.Sprintf("no before/during/after comparison for workload %s: it started within 30 s of the run's start and ended within 30 s of its end (%s – %s), so there is no time without it to compare with",
				b.red.String(w), hms(sp[0]), hms(sp[1])))})
			continue
		}
		t := &doc.Table{Caption: fmt.Sprintf("CPU before, during and after workload %s (%s – %s)", b.red.String(w), hms(sp[0]), hms(sp[1])),
			Columns: []doc.Column{{Name: "Target"}, {Name: "Before", Align: doc.Right}, {Name: "During", Align: doc.Right}, {Name: "After", Align: doc.Right}}}
		for _, tg := range ts {
			s := busySeries(tg)
			if tg.kind != mondata.KindHost {
				s = tg.get("cpu_pct")
			}
			if s == nil {
				continue
			}
			lv := trend.Phases(s.Points, sp[0], sp[1], 10*time.Second)
			f := func(l trend.Level) string {
				if l.N == 0 {
					return "–"
				}
				return num3(l.Mean) + " %"
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.red.String(tg.name)}, {Text: f(lv.Before)}, {Text: f(lv.During)}, {Text: f(lv.After)}}})
		}
		if len(t.Rows) > 0 {
			blocks = append(blocks, t)
		} else {
			blocks = append(blocks, &doc.Para{Note: true, Text: sentence(fmt.Sprintf("no before/during/after comparison for workload %s: no monitored target recorded CPU", b.red.String(w)))})
		}
	}
	return blocks
}

// ---- comparison -----------------------------------------------------------------

func (b *builder) comparison() doc.Section {
	sec := doc.Section{ID: SecComparison, Title: "Comparison"}
	if b.in.base == nil {
		msg := "No comparison: no baseline run was given (plateau report RUN --baseline OTHER_RUN, or plateau compare BASE NEW)."
		if b.in.baseErr != nil {
			msg = "No comparison: " + b.red.String(fmt.Sprintf("baseline %s unreadable: %v", b.in.baseDir, b.in.baseErr))
		}
		sec.Blocks = append(sec.Blocks, noData(msg))
		return sec
	}
	rows := analysis.Compare(b.in.base, b.d, b.red.String)
	b.s.Comparison = rows
	baseName := b.red.String(nonEmpty(b.in.base.Info.Name, b.in.baseDir))
	sec.Blocks = append(sec.Blocks, &doc.Para{Text: fmt.Sprintf("Baseline: %s (%s, %s). Deltas are this run minus the baseline; a difference is called faster or slower only when it is beyond run-to-run noise (rank test and confidence intervals over the latency histograms, widened by the variation between seconds) and at least %s of the baseline.",
		baseName, clock(b.in.base.Start), b.red.String(b.in.baseDir), pct(compare.DefaultMinEffectPct))})
	sec.Blocks = append(sec.Blocks, ComparisonTables(rows, "baseline", "this run")...)
	// Headline: the all-requests row of the whole run.
	for _, r := range rows {
		if r.Label == core.TotalLabel && r.Phase == "run" {
			lvl := verdictLevel(r.Verdict)
			text := fmt.Sprintf("Compared with %s: %s — average %s → %s (%+.1f %%), p95 %s → %s (%+.1f %%)", baseName, r.Verdict,
				msU(r.BaseMeanMs), msU(r.NewMeanMs), r.DeltaPct, msU(r.BaseP95Ms), msU(r.NewP95Ms), r.P95DeltaPct)
			if r.Verdict == compare.NotEnough {
				text = fmt.Sprintf("Compared with %s: %s", baseName, notEnoughClause(r))
			}
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: lvl, Text: sentence(text)})
			b.finding(doc.FindComparison, lvl, text)
		}
	}
	return sec
}

// ComparisonTables renders comparison rows, one table per phase.
func ComparisonTables(rows []compare.Row, baseName, newName string) []doc.Block {
	var blocks []doc.Block
	var phases []string
	byPhase := map[string][]compare.Row{}
	for _, r := range rows {
		if _, ok := byPhase[r.Phase]; !ok {
			phases = append(phases, r.Phase)
		}
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	for _, p := range phases {
		cap := "Whole run"
		if p != "run" {
			cap = "Phase " + p
			if bp := byPhase[p][0].BasePhase; bp != "" {
				cap += " (baseline: " + bp + ")"
			}
		}
		t := &doc.Table{Caption: cap, Columns: []doc.Column{{Name: "Label"},
			{Name: "Average " + baseName + " (ms)", Align: doc.Right}, {Name: "Average " + newName + " (ms)", Align: doc.Right},
			{Name: "Delta (ms)", Align: doc.Right}, {Name: "Delta %", Align: doc.Right},
			{Name: "p95 " + baseName, Align: doc.Right}, {Name: "p95 " + newName, Align: doc.Right}, {Name: "p95 delta %", Align: doc.Right},
			{Name: "Throughput (req/s)", Align: doc.Right}, {Name: "Error %", Align: doc.Right}, {Name: "Verdict"}}}
		for _, r := range byPhase[p] {
			v := doc.Cell{Text: string(r.Verdict), Level: verdictLevel(r.Verdict)}
			t.Rows = append(t.Rows, doc.Row{Total: r.Label == core.TotalLabel, Cells: []doc.Cell{{Text: r.Label},
				{Text: ms(r.BaseMeanMs)}, {Text: ms(r.NewMeanMs)}, {Text: fmt.Sprintf("%+.1f", r.DeltaMs)}, {Text: fmt.Sprintf("%+.1f %%", r.DeltaPct)},
				{Text: ms(r.BaseP95Ms)}, {Text: ms(r.NewP95Ms)}, {Text: fmt.Sprintf("%+.1f %%", r.P95DeltaPct)},
				{Text: rate(r.BaseTputRPS) + " → " + rate(r.NewTputRPS)}, {Text: pct(r.BaseErrPct) + " → " + pct(r.NewErrPct)}, v}})
		}
		blocks = append(blocks, t)
	}
	return blocks
}
