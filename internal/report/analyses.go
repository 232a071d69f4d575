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

// memTrend is the memory-after-GC verdict of one target.
type memTrend struct {
	target, what string
	unitBytes    bool
	res          trend.MemoryResult
}

// cpuBusy is a target's busiest phase.
type cpuBusy struct {
	target, phase string
	mean, max     float64
	host          bool
}

// judgeResources states the CPU, network, memory and GC conclusions and
// findings from the monitor series.
func (b *builder) judgeResources(ts []*target) {
	phases := b.d.Phases
	spans := func() [][2]time.Time {
		var out [][2]time.Time
		for _, p := range phases {
			out = append(out, [2]time.Time{p.Start, p.End})
		}
		if len(out) == 0 {
			out = append(out, [2]time.Time{b.d.Start, b.d.End.Add(time.Nanosecond)})
		}
		return out
	}()
	phaseName := func(i int) string {
		if i < len(phases) {
			return b.red.String(phases[i].Name)
		}
		return "the run"
	}
	// CPU: the busiest phase of each host (busy %) or process (% of a core)
	// of the system under test; the load generator's own host is judged
	// apart, on its own line.
	var busiest, gen *cpuBusy
	for _, t := range ts {
		var s *core.Series
		host := t.kind == mondata.KindHost
		if host {
			s = busySeries(t)
		} else if t.kind == mondata.KindProcess || t.kind == mondata.KindCgroup {
			s = t.get("cpu_pct")
		}
		if s == nil {
			continue
		}
		for i, sp := range spans {
			st, ok := statsOver(s, sp[0], sp[1])
			if !ok {
				continue
			}
			// Hosts are compared on their own scale (0–100 %); a process's
			// per-core percentage only when no host was watched.
			into := &busiest
			if t.role() == mondata.RoleGenerator {
				into = &gen
			}
			if c := *into; c == nil || (host && !c.host) || (host == c.host && st.Mean > c.mean) {
				*into = &cpuBusy{target: b.red.String(t.name), phase: phaseName(i), mean: st.Mean, max: st.Max, host: host}
			}
		}
	}
	if busiest != nil {
		lvl, verdict := doc.OK, "never near the ceiling"
		switch resources.GradeCPU(busiest.mean, busiest.host) {
		case resources.CPUSaturated:
			lvl, verdict = doc.Fail, "saturated"
		case resources.CPUHigh:
			lvl, verdict = doc.Warn, "high"
		case resources.CPUPerProcess:
			lvl, verdict = doc.Info, "measured per process"
		}
		unit := "% busy"
		if !busiest.host {
			unit = "% of one core"
		}
		ev := fmt.Sprintf("busiest: %s at %s %s on average in %s (peak %s %s)", busiest.target, num3(busiest.mean), unit, busiest.phase, num3(busiest.max), unit)
		b.conclude(doc.AspectCPU, lvl, verdict, ev)
		b.finding(doc.FindResources, lvl, fmt.Sprintf("CPU %s: %s averaged %s %s in %s (peak %s %s)", verdict, busiest.target, num3(busiest.mean), unit, busiest.phase, num3(busiest.max), unit))
	} else if gen != nil {
		b.conclude(doc.AspectCPU, doc.NoData, "not measured for the system under test", "only the load generator's own host ("+gen.target+") was monitored; its health is stated apart")
	}
	if gen != nil {
		unit := "% busy"
		if !gen.host {
			unit = "% of one core"
		}
		lvl, verdict := doc.OK, "kept up"
		if g := resources.GradeCPU(gen.mean, gen.host); g == resources.CPUSaturated || g == resources.CPUHigh {
			lvl, verdict = doc.Warn, "busy: it may have limited the load it could apply"
		}
		ev := fmt.Sprintf("%s at %s %s on average in %s (peak %s %s)", gen.target, num3(gen.mean), unit, gen.phase, num3(gen.max), unit)
		b.conclude(doc.AspectGenerator, lvl, verdict, ev)
		b.finding(doc.FindResources, lvl, fmt.Sprintf("Load generator %s: %s", verdict, ev))
	}
	// Network: the highest phase means in and out per host of the system
	// under test. The generator's own interfaces do not carry a test run
	// over loopback, so their figures are not the test's traffic.
	var netEv, idle, genNet []string
	for _, t := range ts {
		rx, tx := t.get("net_rx_bytes_per_s"), t.get("net_tx_bytes_per_s")
		if rx == nil && tx == nil {
			continue
		}
		if t.role() == mondata.RoleGenerator && b.loopbackTarget() {
			genNet = append(genNet, b.red.String(t.name))
			continue
		}
		bestIn, bestOut, at := 0.0, 0.0, ""
		for i, sp := range spans {
			var in, out float64
			if rx != nil {
				if st, ok := statsOver(rx, sp[0], sp[1]); ok {
					in = st.Mean
				}
			}
			if tx != nil {
				if st, ok := statsOver(tx, sp[0], sp[1]); ok {
					out = st.Mean
				}
			}
			if in+out > bestIn+bestOut {
				bestIn, bestOut, at = in, out, phaseName(i)
			}
		}
		if bestIn+bestOut <= 0 {
			idle = append(idle, b.red.String(t.name))
			continue // no traffic recorded: nothing to claim
		}
		var dirs []string
		if bestIn > 0 {
			dirs = append(dirs, "in "+bytesU(bestIn)+"/s")
		}
		if bestOut > 0 {
			dirs = append(dirs, "out "+bytesU(bestOut)+"/s")
		}
		netEv = append(netEv, fmt.Sprintf("%s %s in %s", b.red.String(t.name), strings.Join(dirs, ", "), at))
	}
	if len(netEv) > 0 {
		if len(netEv) > 3 {
			netEv = append(netEv[:3], fmt.Sprintf("and %d more", len(netEv)-3))
		}
		b.conclude(doc.AspectNetwork, doc.Info, "measured", "highest phase means: "+strings.Join(netEv, "; "))
	} else if len(idle) > 0 {
		b.conclude(doc.AspectNetwork, doc.NoData, "no traffic recorded", "the monitored interfaces of "+joinAnd(idle)+" read zero throughout: the load used another interface, or the counters were not updated")
	} else if len(genNet) > 0 {
		b.conclude(doc.AspectNetwork, doc.NoData, "not measured", "the test ran over loopback, which the monitored interfaces of "+joinAnd(genNet)+" (the load generator's host) do not carry; their figures are other traffic")
	}
	b.memTrends = b.memoryTrends(ts)
	if len(b.memTrends) > 0 {
		var growing, stable []string
		for _, m := range b.memTrends {
			switch m.res.Verdict {
			case trend.Growing:
				growing = append(growing, fmt.Sprintf("%s %s +%s/h", m.target, m.what, b.memQty(m, m.res.SlopePerHour)))
			case trend.Stable:
				stable = append(stable, fmt.Sprintf("%s %s", m.target, m.what))
			}
		}
		switch {
		case len(growing) > 0:
			ev := "growing after GC: " + strings.Join(growing, "; ")
			b.conclude(doc.AspectMemory, doc.Warn, "grows over the run: possible leak", ev)
			b.finding(doc.FindMemory, doc.Warn, "Memory grows after garbage collection: "+strings.Join(growing, "; "))
		case len(stable) > 0:
			m := b.memTrends[0]
			ev := fmt.Sprintf("stable after GC: %s (%s %s/h, %s)", strings.Join(stable, ", "), m.target, b.signedMemQty(m, m.res.SlopePerHour), m.res.Method)
			b.conclude(doc.AspectMemory, doc.OK, "handled well: no leak signal", ev)
			b.finding(doc.FindMemory, doc.OK, fmt.Sprintf("Memory stable after garbage collection (%s): no leak signal", strings.Join(stable, ", ")))
		default:
			b.conclude(doc.AspectMemory, doc.NoData, "too short to judge a trend", b.memTrends[0].res.Reason)
		}
	}
	// GC: collections per JVM over the run.
	var gcEv []string
	gcLvl := doc.OK
	for _, t := range ts {
		if t.kind != mondata.KindJVM {
			continue
		}
		y, f := t.get("YGC"), t.get("FGC")
		if y == nil && f == nil {
			continue
		}
		span := b.d.Span().Minutes()
		var parts []string
		if y != nil {
			if st, ok := statsOver(y, b.d.Start, b.d.End.Add(time.Nanosecond)); ok {
				n := st.Last - st.First
				parts = append(parts, fmt.Sprintf("%s young (%s/min)", count(int64(n)), num3(n/math.Max(span, 1e-9))))
			}
		}
		if f != nil {
			if st, ok := statsOver(f, b.d.Start, b.d.End.Add(time.Nanosecond)); ok {
				n := st.Last - st.First
				parts = append(parts, fmt.Sprintf("%s full", count(int64(n))))
				if resources.GCBusy(n/math.Max(span, 1e-9), 0) {
					gcLvl = doc.Warn
				}
			}
		}
		if g := t.get("gc_time_pct"); g != nil {
			if st, ok := statsOver(g, b.d.Start, b.d.End.Add(time.Nanosecond)); ok {
				parts = append(parts, fmt.Sprintf("GC time %s %%", num3(st.Mean)))
				if resources.GCBusy(0, st.Mean) {
					gcLvl = doc.Warn
				}
			}
		}
		gcEv = append(gcEv, b.red.String(t.name)+": "+strings.Join(parts, ", "))
	}
	if len(gcEv) > 0 {
		verdict := "collects regularly and keeps up"
		if gcLvl == doc.Warn {
			verdict = "busy: frequent full collections or a high GC time share"
		}
		b.conclude(doc.AspectGC, gcLvl, verdict, strings.Join(gcEv, "; "))
	}
}

// memQty formats a memory quantity of a trend in its unit.
func (b *builder) memQty(m memTrend, v float64) string {
	if m.unitBytes {
		return bytesU(math.Abs(v))
	}
	return num3(math.Abs(v))
}

// signedMemQty is memQty with its sign ("−32.3 MiB", "+1.2 MiB").
func (b *builder) signedMemQty(m memTrend, v float64) string {
	if v < 0 {
		return "−" + b.memQty(m, v)
	}
	return "+" + b.memQty(m, v)
}

// memoryTrends fits memory after GC for each JVM (old generation against
// full collections, as reference 000 argues it), each process or cgroup
// (RSS) and each host (memory used).
func (b *builder) memoryTrends(ts []*target) []memTrend {
	var out []memTrend
	pts := func(s *core.Series) []core.Point {
		k := kbToBytes(s)
		if k == 1 {
			return s.Points
		}
		p := make([]core.Point, len(s.Points))
		for i, x := range s.Points {
			p[i] = core.Point{T: x.T, V: x.V * k}
		}
		return p
	}
	last := func(s *core.Series) float64 {
		if s == nil || len(s.Points) == 0 {
			return 0
		}
		return s.Points[len(s.Points)-1].V * kbToBytes(s)
	}
	for _, t := range ts {
		var mem, gc *core.Series
		var what string
		var limit float64
		switch t.kind {
		case mondata.KindJVM:
			if mem = t.get("OU"); mem != nil {
				what, gc, limit = "old generation", t.get("FGC"), last(t.get("OC"))
			} else if mem = t.get("heap_used_bytes"); mem != nil {
				what, limit = "heap", last(t.get("heap_committed_bytes"))
			}
		case mondata.KindProcess:
			mem, what = t.get("rss_bytes"), "RSS"
		case mondata.KindCgroup:
			mem, what, limit = t.get("memory_bytes"), "memory", last(t.get("memory_limit_bytes"))
		case mondata.KindHost:
			mem, what, limit = t.get("mem_used_bytes"), "memory used", last(t.get("mem_total_bytes"))
		}
		if mem == nil {
			continue
		}
		var gp []core.Point
		if gc != nil {
			gp = gc.Points
		}
		r, err := trend.Memory(pts(mem), gp, trend.MemoryOptions{Limit: limit})
		if err != nil {
			r.Verdict, r.Reason = trend.Unknown, err.Error()
		}
		out = append(out, memTrend{target: b.red.String(t.name), what: what, unitBytes: true, res: r})
	}
	return out
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
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Info, Text: sentence("No knee: " + res.KneeReason)})
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

// minTrendMinutes is the shortest run whose latency drift is judged.
const minTrendMinutes = 10

// A drift verdict also needs enough requests behind its points: a minute
// with fewer than minMinuteSamples requests gives no per-minute value, and a
// segment with fewer than minDriftSamples requests in all is "not enough
// data to judge", whatever its slope or shift (a mean that "rose by 35 s"
// on 4 requests says nothing).
const (
	minMinuteSamples = 5
	minDriftSamples  = 200
)

// perMinute returns a label's per-minute means and p95s within [from, to),
// each from the minute's merged histogram (analysis.Dataset.Minutes). A
// minute belongs to the span when its middle does.
func perMinute(minutes []analysis.Tick, from, to time.Time) (mean, p95 []core.Point) {
	for _, m := range minutes {
		if mid := m.T.Add(30 * time.Second); m.Count < minMinuteSamples || mid.Before(from) || !mid.Before(to) {
			continue
		}
		mean = append(mean, core.Point{T: m.T, V: m.MeanMs})
		p95 = append(p95, core.Point{T: m.T, V: m.P95Ms})
	}
	return mean, p95
}

func (b *builder) trends() doc.Section {
	sec := doc.Section{ID: SecTrends, Title: "Trends"}
	tj := &trend.Trends{Latency: []trend.LatencyTrend{}, Memory: []trend.MemoryTrend{}}
	// Drift is judged within a constant load: over the whole run when the
	// load never changed, else within each phase long enough to have a
	// trend (a step up in load is not a drift).
	type segment struct {
		name     string
		from, to time.Time
	}
	var segs []segment
	if b.constantLoad() {
		segs = append(segs, segment{"run", b.d.Start, b.d.End.Add(time.Nanosecond)})
	} else {
		for _, p := range b.d.Phases {
			if p.Duration() >= minTrendMinutes*time.Minute {
				segs = append(segs, segment{b.red.String(p.Name), p.Start, p.End})
			}
		}
	}
	if len(segs) > 0 {
		t := &doc.Table{Caption: "Latency drift (per-minute values)", Columns: []doc.Column{{Name: "Label"}, {Name: "Over"}, {Name: "Statistic"},
			{Name: "Slope (ms/h)", Align: doc.Right}, {Name: "95 % interval", Align: doc.Right}, {Name: "Level shift"}, {Name: "Verdict"}}}
		type lk struct {
			name  string
			ticks []analysis.Tick
		}
		var ls []lk
		for _, k := range b.d.Labels() {
			ls = append(ls, lk{b.red.String(b.d.LabelName(k)), b.d.Minutes[k]})
		}
		if len(ls) > 1 {
			ls = append(ls, lk{"all requests", b.d.TotalMinutes})
		}
		var drifts, thin []string
		for _, sg := range segs {
			for _, l := range ls {
				mean, p95 := perMinute(l.ticks, sg.from, sg.to)
				var samples int64
				for _, m := range l.ticks {
					if mid := m.T.Add(30 * time.Second); m.Count >= minMinuteSamples && !mid.Before(sg.from) && mid.Before(sg.to) {
						samples += m.Count
					}
				}
				for _, st := range []struct {
					name string
					pts  []core.Point
				}{{"mean", mean}, {"p95", p95}} {
					if len(st.pts) < minTrendMinutes {
						continue
					}
					r, err := trend.Drift(st.pts, trend.DriftOptions{})
					if err != nil {
						continue
					}
					lt := trend.LatencyTrend{Label: l.name, Phase: sg.name, Stat: st.name, SlopeMsPerHour: trend.Num(r.SlopePerHour), CILow: trend.Num(r.CILow), CIHigh: trend.Num(r.CIHigh),
						Significant: r.Significant, MinutesAnalyzed: r.N}
					shift := "none"
					if r.ChangeAt != nil {
						at := r.ChangeAt.UTC()
						lt.ChangeAt, lt.ChangeMs = &at, trend.Num(r.ChangeDelta)
						shift = fmt.Sprintf("from %s (+%s) on: %s", hms(r.ChangeAt.In(b.d.Start.Location())), offset(*r.ChangeAt, b.d.Start), signedMs(r.ChangeDelta))
					}
					verdict := doc.Cell{Text: "flat", Level: doc.OK}
					// A drift is worth a warning when latency rose; a
					// fall is stated without one.
					up := r.SlopePerHour > 0
					if r.ChangeAt != nil {
						up = r.ChangeDelta > 0
					}
					enough := samples >= minDriftSamples
					switch {
					case r.Significant && !enough:
						verdict = doc.Cell{Text: "not enough data to judge", Level: doc.NoData}
						lt.Significant = false
						if st.name == "mean" {
							thin = append(thin, fmt.Sprintf("%s over %s: %s in %d minutes", l.name, sg.name, plural(samples, "request"), r.N))
						}
					case r.Significant && up:
						verdict = doc.Cell{Text: "drifts up", Level: doc.Warn}
						if r.ChangeAt != nil {
							drifts = append(drifts, fmt.Sprintf("from %s on, %s %s rose by %s", offset(*r.ChangeAt, b.d.Start), l.name, st.name, strings.TrimPrefix(signedMs(r.ChangeDelta), "+")))
						} else {
							drifts = append(drifts, fmt.Sprintf("%s %s %s/h", l.name, st.name, signedMs(r.SlopePerHour)))
						}
					case r.Significant:
						verdict = doc.Cell{Text: "drifts down", Level: doc.Info}
					}
					tj.Latency = append(tj.Latency, lt)
					t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: l.name}, {Text: sg.name}, {Text: st.name}, {Text: signed1(r.SlopePerHour)},
						{Text: signed1(r.CILow) + " … " + signed1(r.CIHigh)}, {Text: shift}, verdict}})
				}
			}
		}
		if len(t.Rows) > 0 {
			sec.Blocks = append(sec.Blocks, t)
		}
		if len(thin) > 0 {
			sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: sentence(fmt.Sprintf("Not enough data to judge a drift for %s: a verdict needs at least %s under one load and %d requests in each minute counted",
				strings.Join(thin, "; "), plural(minDriftSamples, "request"), minMinuteSamples))})
		}
		switch {
		case len(t.Rows) == 0:
			sec.Blocks = append(sec.Blocks, noData("No latency drift analysis: too few minutes with samples."))
		case len(drifts) > 0:
			if len(drifts) > 3 {
				drifts = append(drifts[:3], fmt.Sprintf("and %d more", len(drifts)-3))
			}
			text := "Latency drift: " + strings.Join(drifts, "; ")
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentence(text)})
			b.finding(doc.FindDrift, doc.Warn, text)
		case len(thin) > 0:
			// said once above, with the numbers: no "level" claim either
		default:
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.OK, Text: "No latency drift: per-minute mean and p95 stay level under constant load (no significant slope, no level shift)."})
		}
	} else {
		why := fmt.Sprintf("the run lasted %s; it takes at least %d minutes of per-minute values under one load", dur(b.d.Span()), minTrendMinutes)
		if !b.constantLoad() {
			why = fmt.Sprintf("the load changed between phases and no phase lasted %d minutes, so a level change cannot be told from a load step", minTrendMinutes)
		}
		sec.Blocks = append(sec.Blocks, noData(sentence("No latency drift analysis: "+why)))
	}
	// Memory after GC.
	if len(b.memTrends) > 0 {
		t := &doc.Table{Caption: "Memory after garbage collection", Columns: []doc.Column{{Name: "Target"}, {Name: "Memory"}, {Name: "Slope", Align: doc.Right},
			{Name: "95 % interval", Align: doc.Right}, {Name: "Method"}, {Name: "Verdict"}}}
		for _, m := range b.memTrends {
			mt := trend.MemoryTrend{Target: m.target, What: m.what, SlopeBytesPerHour: trend.Num(m.res.SlopePerHour), CILow: trend.Num(m.res.CILow), CIHigh: trend.Num(m.res.CIHigh),
				Verdict: string(m.res.Verdict), Method: m.res.Method, Reason: m.res.Reason}
			if m.res.TimeToLimit != nil {
				h := round3(m.res.TimeToLimit.Hours())
				mt.HoursToLimit = &h
			}
			tj.Memory = append(tj.Memory, mt)
			v := doc.Cell{Text: string(m.res.Verdict), Level: doc.OK}
			switch m.res.Verdict {
			case trend.Growing:
				v.Level = doc.Warn
				if m.res.TimeToLimit != nil {
					v.Text += "; limit in " + dur(*m.res.TimeToLimit)
				}
			case trend.Unknown:
				v.Level = doc.NoData
			}
			sign := "+"
			if m.res.SlopePerHour < 0 {
				sign = "−"
			}
			if m.res.Verdict == trend.Unknown && m.res.Baseline == nil {
				// No fit was made: say why instead of printing zeros.
				v.Text += ": " + m.res.Reason
				t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: m.target}, {Text: m.what}, {Text: "–"}, {Text: "–"}, {Text: "–"}, v}})
				continue
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: m.target}, {Text: m.what}, {Text: sign + b.memQty(m, m.res.SlopePerHour) + "/h"},
				{Text: fmt.Sprintf("%s … %s", signedBytes(m.res.CILow), signedBytes(m.res.CIHigh))}, {Text: nonEmpty(m.res.Method, "–")}, v}})
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
	b.s.Trends = tj
	return sec
}

// constantLoad reports whether every phase ran at the same load.
func (b *builder) constantLoad() bool {
	for _, p := range b.d.Phases {
		q := b.d.Phases[0]
		if p.Users != q.Users || p.Rate != q.Rate || p.Workload != q.Workload {
			return false
		}
	}
	return true
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
	for i, m := range b.memTrends {
		if len(m.res.Baseline) == 0 || i >= 6 {
			continue
		}
		x, y := make([]float64, len(m.res.Baseline)), make([]float64, len(m.res.Baseline))
		for j, p := range m.res.Baseline {
			x[j], y[j] = unix(p.T), p.V
		}
		if len(x) > maxBuckets {
			from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
			r := chart.Reduce(x, y, nil, from, to, chart.BucketWidth(to-from, 1, maxBuckets))
			x, y = r.X, r.Mean
		}
		c.Series = append(c.Series, chart.Series{Name: m.target + " " + m.what, Color: chart.Palette[i%len(chart.Palette)], X: x, Y: y, Style: chart.LinePoints})
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
		if b.in.baseDir == "" && len(b.in.notes) > 0 {
			for _, n := range b.in.notes {
				if strings.HasPrefix(n, "baseline") {
					msg = "No comparison: " + n
				}
			}
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
