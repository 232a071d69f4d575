package report

import (
	"math"
	"strconv"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

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
		return b.W("it needs phases at two or more different loads of one workload (a stepped run, or several runs at different loads); this run has ") + b.plural(int64(cr.Phases), "phase")
	case analysis.CapacityConcurrentOnly:
		return b.T("it needs phases at two or more different loads of one workload; the %d phases here belong to %d workloads running side by side, each at one load, and concurrent workloads are not load steps", cr.Phases, cr.Workloads)
	case analysis.CapacitySameLoad:
		return b.T("it needs phases at two or more different loads of one workload; all %d phases here ran at the same load", cr.Phases)
	}
	return ""
}

// serverTimes reports whether the response times were measured at the
// servers (an imported access log) rather than by a load generator.
func (b *builder) serverTimes() bool {
	return b.source() == rundir.SourceAccessLog
}

func (b *builder) capacity() doc.Section {
	sec := doc.Section{ID: SecCapacity, Title: b.W("Capacity")}
	cr := b.capacityAnalysis()
	if why := b.capacityWhy(); why != "" {
		sec.Blocks = append(sec.Blocks, noData(sentence(b.W("no capacity analysis: ")+why)))
		return sec
	}
	pts, kind, res, checkLittle := cr.Steps, cr.Kind, cr.Knee, cr.CheckLittle
	if cr.Err != nil {
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentence(b.W("capacity analysis failed: ") + cr.Err.Error())})
		return sec
	}
	// per is what λ, the USL's throughput at load one, is per.
	per := b.W("user")
	loadName := b.W("Users")
	if kind == knee.Rate {
		per, loadName = b.W("req/s offered"), b.W("Offered rate (req/s)")
	}
	// Table: load against throughput and response time.
	t := &doc.Table{Caption: b.W("Throughput and response time against offered load"), Columns: []doc.Column{{Name: b.W("Phase")}, {Name: loadName, Align: doc.Right},
		{Name: b.W("Throughput (req/s)"), Align: doc.Right}, {Name: b.W("Average (ms)"), Align: doc.Right}, {Name: b.W("p95 (ms)"), Align: doc.Right},
		{Name: b.W("Every SLA met")}}}
	if checkLittle {
		t.Columns = append(t.Columns, doc.Column{Name: b.W("Little's law")})
	}
	for _, x := range pts {
		lcell := doc.Cell{Text: "–"}
		for _, l := range res.Little {
			if checkLittle && l.Load == x.Point.Load {
				lcell = doc.Cell{Text: b.T("%s of the asked load", b.pct(100*l.Ratio))}
				if l.Short {
					lcell.Level = doc.Warn
					lcell.Text += ": " + littleText(b.numbers, l.Flag, l.Load, l.Ratio)
				}
			}
		}
		met := doc.Cell{Text: b.W("yes"), Level: doc.OK}
		if !x.Point.SLAMet {
			met = doc.Cell{Text: b.W("no"), Level: doc.Fail}
		}
		if len(b.s.SLA) == 0 {
			met = doc.Cell{Text: "–"}
		}
		row := doc.Row{Cells: []doc.Cell{{Text: b.red.String(x.Name)}, {Text: b.num3(x.Point.Load)}, {Text: b.rate(x.Point.ThroughputRPS)},
			{Text: b.ms(x.Point.MeanMs)}, {Text: b.ms(x.Point.P95Ms)}, met}}
		if checkLittle {
			row.Cells = append(row.Cells, lcell)
		}
		t.Rows = append(t.Rows, row)
	}
	sec.Blocks = append(sec.Blocks, t)
	// Chart: throughput (and the USL curve) and mean response time against load.
	c := &chart.Chart{Title: b.W("Throughput and response time against load"), XKind: chart.Linear, XLabel: loadName,
		Y: chart.Axis{Label: b.W("Throughput (req/s)"), Unit: "req/s"}, Y2: &chart.Axis{Label: b.W("Average response time (ms)"), Unit: "ms"}, Height: 320}
	var lx, ly, lm []float64
	for _, p := range res.Points {
		lx, ly, lm = append(lx, p.Load), append(ly, p.ThroughputRPS), append(lm, p.MeanMs)
	}
	c.Series = append(c.Series, chart.Series{Name: b.W("throughput"), Color: colTput, X: lx, Y: ly, Style: chart.LinePoints, Width: 2},
		chart.Series{Name: b.W("average response time"), Color: colAvg, X: lx, Y: lm, Style: chart.LinePoints, Right: true})
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
			c.Series = append(c.Series, chart.Series{Name: b.W("USL fit"), Color: "#222", X: ux, Y: uy, Dash: true, Width: 1.4})
		}
	}
	if res.Knee != nil {
		k := res.Knee
		c.Markers = append(c.Markers, chart.Marker{X: k.Load, Label: "knee"})
	}
	var usl, kneeLine string
	if res.USL != nil && kind == knee.Users {
		usl = b.W("the dashed curve is the fitted Universal Scalability Law")
	}
	if res.Knee != nil {
		kneeLine = b.W("the vertical line marks the knee")
	}
	sec.Blocks = append(sec.Blocks, b.figure("capacity", c, sentences(b.W("each point is one phase"), usl, kneeLine)))
	// Verdicts in words.
	if res.Knee != nil {
		s := upperFirst(kneeSentence(b.numbers, *res.Knee))
		bn := b.bottleneckClause(cr.Bottleneck, kind, true)
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentence(b.W("Knee: ")+s, bn)})
		b.dropFindings(doc.FindCapacity)
		b.finding(doc.FindCapacity, doc.Warn, s, bn)
	} else {
		if res.Outcome == knee.ThinData {
			sec.Blocks = append(sec.Blocks, noData(sentence(b.W("No verdict on scaling: ")+b.thinKneeClause(res.Thin, kind))))
		} else {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Info, Text: sentence(b.W("No knee: ") + noKneeText(b.numbers, *res.NoKnee, kind))})
		}
		if cr.Bottleneck != nil {
			sec.Blocks = append(sec.Blocks, &doc.Para{Text: sentence(b.W("Up to the highest tested load, ") + b.bottleneckClause(cr.Bottleneck, kind, false))})
		}
	}
	if res.USL != nil {
		u := res.USL
		peak := b.W("no peak within reach (coherency κ ≈ 0: throughput approaches λ/σ)")
		if finite(u.PeakLoad) {
			peak = b.T("predicted peak %s at %s", b.rps(u.PeakThroughputRPS), b.loadU(u.PeakLoad, kind))
		}
		sec.Blocks = append(sec.Blocks, &doc.Para{Text: b.T("Universal Scalability Law fit: contention σ = %s, coherency κ = %s, λ = %s per %s; %s; fit quality R² = %.3f.",
			b.loc.Num(coef(u.Sigma)), b.loc.Num(coef(u.Kappa)), b.rate(u.Lambda), per, peak, u.R2)})
	} else {
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: sentence(b.W("No USL fit: ") + uslSkipText(b.numbers, *res.USLSkip))})
	}
	if len(b.s.SLA) > 0 {
		if res.MaxLoadMeetingSLA != nil {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.OK, Text: sentence(b.W("highest tested load that met every requirement: ") + b.loadU(*res.MaxLoadMeetingSLA, kind))})
		} else {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Fail, Text: b.W("Even the lowest tested load broke a requirement.")})
		}
	}
	switch {
	case !checkLittle && !b.holds().PlannedLoad && !b.serverTimes():
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: b.W("Little's-law check of the generator skipped: the imported data do not say what load was asked or how long the users waited between requests.")})
	case !checkLittle && b.serverTimes():
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: b.W("Little's-law check of the generator skipped: the times are the servers' own, so they do not say how many of the generator's users were busy.")})
	case !checkLittle:
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: b.W("Little's-law check of the generator skipped: the users think or pace between requests, so the time per iteration, not per request, decides how many are busy.")})
	}
	for _, l := range res.Little {
		if checkLittle && l.Short {
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentence(b.T("Little's law at %s: %s", b.loadU(l.Load, kind), littleText(b.numbers, l.Flag, l.Load, l.Ratio)))})
		}
	}
	return sec
}

// thinKneeClause says, with its numbers, which load level had too little
// data for a verdict on scaling, and the rule it missed.
func (b numbers) thinKneeClause(p *knee.Point, kind knee.LoadKind) string {
	return b.T("not enough data to judge: the step at %s had %s over %s; a verdict needs every load step to last %s or more and hold %d or more",
		b.loadU(p.Load, kind), b.plural(p.Samples, "request"), dur(time.Duration(p.Seconds*float64(time.Second))), dur(time.Duration(knee.MinSeconds*float64(time.Second))), knee.MinSamples)
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
func (b numbers) loadU(v float64, kind knee.LoadKind) string {
	if kind == knee.Rate {
		return b.rps(v) + b.W(" offered")
	}
	n := math.Round(v)
	s := b.plural(int64(n), "user")
	if math.Abs(v-n) > 1e-9 {
		s = "~" + s
	}
	return s
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }
func round3(v float64) float64 { return math.Round(v*1e3) / 1e3 }
func finite(v float64) bool    { return !math.IsNaN(v) && !math.IsInf(v, 0) }
