package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- trends -------------------------------------------------------------------

func (b *builder) trends() doc.Section {
	sec := doc.Section{ID: SecTrends, Title: b.W("Trends")}
	tj := b.s.Trends
	switch tj.LatencySkip {
	case trend.LatencyRunTooShort:
		sec.Blocks = append(sec.Blocks, noData(sentence(b.T("No latency drift analysis: the run lasted %s; it takes at least %d minutes of per-minute values under one load",
			dur(b.d.Span()), trend.MinTrendMinutes))))
	case trend.LatencyNoLongPhase:
		sec.Blocks = append(sec.Blocks, noData(sentence(b.T("No latency drift analysis: the load changed between phases and no phase lasted %d minutes, so a level change cannot be told from a load step",
			trend.MinTrendMinutes))))
	case trend.LatencyFewMinutes:
		sec.Blocks = append(sec.Blocks, noData(sentence(b.T("No latency drift analysis: too few minutes with at least %d requests each (%d needed under one load)",
			trend.MinMinuteSamples, trend.MinTrendMinutes))))
	default:
		sec.Blocks = append(sec.Blocks, b.latencyDrift(tj.Latency)...)
	}
	// Memory after GC.
	if len(tj.Memory) > 0 {
		t := &doc.Table{Caption: b.W("Memory after garbage collection"), Columns: []doc.Column{{Name: b.W("Target")}, {Name: b.W("Memory")}, {Name: b.W("Slope"), Align: doc.Right},
			{Name: b.W("95 % interval"), Align: doc.Right}, {Name: b.W("Method")}, {Name: b.W("Verdict")}}}
		thin := false
		for _, m := range tj.Memory {
			v := doc.Cell{Text: m.Verdict, Level: doc.OK}
			switch trend.Verdict(m.Verdict) {
			case trend.Growing:
				v.Level = doc.Warn
				if m.Result.TimeToLimit != nil {
					v.Text += b.W("; limit in ") + dur(*m.Result.TimeToLimit)
				}
			case trend.Unknown:
				v = doc.Cell{Text: b.W("not enough data to judge"), Level: doc.NoData}
				thin = true
			}
			if trend.Verdict(m.Verdict) == trend.Unknown && m.Result.Baseline == nil {
				// No fit was made: no zeros; the note below says why.
				t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: m.Target}, {Text: b.memoryWhat(m.What)}, {Text: "–"}, {Text: "–"}, {Text: "–"}, v}})
				continue
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: m.Target}, {Text: b.memoryWhat(m.What)}, {Text: b.signedBytes(float64(m.SlopeBytesPerHour)) + "/h"},
				{Text: fmt.Sprintf("%s … %s", b.signedBytes(float64(m.CILow)), b.signedBytes(float64(m.CIHigh)))}, {Text: nonEmpty(m.Method, "–")}, v}})
		}
		sec.Blocks = append(sec.Blocks, t)
		if thin {
			sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: sentence(b.T("Not enough data to judge a memory trend for %s; a verdict needs at least %d after-GC points over %s, and a 95 %% interval that shows a growth of at least %s over the run (growing) or rules it out (stable)",
				b.memoryThinText(tj.Memory), trend.MinBaseline, dur(trend.MinMemorySpan), b.pct(memoryThreshold(tj.Memory))))})
		}
		if f := b.memoryChart(); f != nil {
			sec.Blocks = append(sec.Blocks, f)
		}
	} else {
		sec.Blocks = append(sec.Blocks, noData(b.W("No memory trend: no monitored target reported memory.")))
	}
	if blk := b.workloadPhases(); blk != nil {
		sec.Blocks = append(sec.Blocks, blk...)
	}
	return sec
}

// memoryThin gives the numbers a memory trend could not be judged on.
func (b *builder) memoryThin(m trend.MemoryTrend) (who, numbers string) {
	r := m.Result
	who = m.Target + " " + b.memoryWhat(m.What)
	span := dur(time.Duration(float64(m.SpanS) * float64(time.Second)))
	switch {
	case m.Readings < 2 || r.Baseline == nil:
		return who, b.T("%s over %s", b.plural(int64(m.Readings), "reading"), span)
	case m.AfterGCPoints < trend.MinBaseline:
		return who, b.T("%s (%s) over %s", b.plural(int64(m.AfterGCPoints), "after-GC point"), b.plural(int64(m.Readings), "reading"), span)
	}
	lo := 0.0
	if r.Mean != 0 {
		lo = 100 * r.CILow * r.Span.Hours() / math.Abs(r.Mean)
	}
	return who, b.T("a growth of %s … %s of its level over %s (%s)", b.minusPct(lo), b.minusPct(r.GrowthHighPct), span, b.plural(int64(m.AfterGCPoints), "after-GC point"))
}

// minusPct is pct with a minus sign, as the table's signed figures.
func (b *builder) minusPct(v float64) string {
	if p := b.pct(v); strings.HasPrefix(p, "-") {
		return "−" + p[1:]
	}
	return b.pct(v)
}

// memoryThinText says the numbers of the trends too thin to judge, the
// targets with the same numbers together.
func (b *builder) memoryThinText(ms []trend.MemoryTrend) string {
	var order []string
	whos := map[string][]string{}
	for _, m := range ms {
		if trend.Verdict(m.Verdict) != trend.Unknown {
			continue
		}
		who, n := b.memoryThin(m)
		if whos[n] == nil {
			order = append(order, n)
		}
		whos[n] = append(whos[n], who)
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = b.joinAnd(whos[n]) + ": " + n
		if len(whos[n]) > 1 {
			parts[i] += b.W(" each")
		}
	}
	return strings.Join(parts, "; ")
}

// memoryThreshold is the growth a memory verdict was judged against, from
// the results themselves.
func memoryThreshold(ms []trend.MemoryTrend) float64 {
	for _, m := range ms {
		if m.Result.MinGrowthPct > 0 {
			return m.Result.MinGrowthPct
		}
	}
	return 2
}

// latencyDrift renders the judged latency drifts: the table, the rows with
// too little data said once with their numbers, and the verdict.
func (b *builder) latencyDrift(rows []trend.LatencyTrend) []doc.Block {
	var blocks []doc.Block
	t := &doc.Table{Caption: b.W("Latency drift (per-minute values)"), Columns: []doc.Column{{Name: b.W("Label")}, {Name: b.W("Over")}, {Name: b.W("Statistic")},
		{Name: b.W("Slope (ms/h)"), Align: doc.Right}, {Name: b.W("95 % interval"), Align: doc.Right}, {Name: b.W("Level shift")}, {Name: b.W("Verdict")}}}
	var drifts, thin []string
	for _, r := range rows {
		shift := "none"
		if r.ChangeAt != nil {
			shift = b.T("from %s (+%s) on: %s", b.hms(r.ChangeAt.In(b.d.Start.Location())), offset(*r.ChangeAt, b.d.Start), b.signedMs(float64(r.ChangeMs)))
		}
		verdict := doc.Cell{Text: b.W("flat"), Level: doc.OK}
		switch r.Verdict {
		case trend.DriftThin:
			verdict = doc.Cell{Text: b.W("not enough data to judge"), Level: doc.NoData}
			if r.Stat == "mean" {
				thin = append(thin, b.T("%s over %s: %s in %d minutes", r.Label, r.Phase, b.plural(r.Requests, "request"), r.MinutesAnalyzed))
			}
		case trend.DriftUp:
			// A rise is worth a warning; a fall is stated without one.
			verdict = doc.Cell{Text: b.W("drifts up"), Level: doc.Warn}
			if r.ChangeAt != nil {
				drifts = append(drifts, b.T("from %s on, %s %s rose by %s", offset(*r.ChangeAt, b.d.Start), r.Label, r.Stat, strings.TrimPrefix(b.signedMs(float64(r.ChangeMs)), "+")))
			} else {
				drifts = append(drifts, fmt.Sprintf("%s %s %s/h", r.Label, r.Stat, b.signedMs(float64(r.SlopeMsPerHour))))
			}
		case trend.DriftDown:
			verdict = doc.Cell{Text: b.W("drifts down"), Level: doc.Info}
		}
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: r.Label}, {Text: r.Phase}, {Text: r.Stat}, {Text: b.signed1(float64(r.SlopeMsPerHour))},
			{Text: b.signed1(float64(r.CILow)) + " … " + b.signed1(float64(r.CIHigh))}, {Text: shift}, verdict}})
	}
	blocks = append(blocks, t)
	if len(thin) > 0 {
		blocks = append(blocks, &doc.Para{Note: true, Text: sentence(b.T("Not enough data to judge a drift for %s: a verdict needs at least %s under one load and %d requests in each minute counted",
			strings.Join(thin, "; "), b.plural(trend.MinDriftSamples, "request"), trend.MinMinuteSamples))})
	}
	switch {
	case len(drifts) > 0:
		if len(drifts) > 3 {
			drifts = append(drifts[:3], b.T("and %d more", len(drifts)-3))
		}
		text := b.W("Latency drift: ") + strings.Join(drifts, "; ")
		blocks = append(blocks, &doc.Verdict{Level: doc.Warn, Text: sentence(text)})
		b.finding(doc.FindDrift, doc.Warn, text)
	case len(thin) > 0:
		// said once above, with the numbers: no "level" claim either
	default:
		blocks = append(blocks, &doc.Verdict{Level: doc.OK, Text: b.W("No latency drift: per-minute mean and p95 stay level under constant load (no significant slope, no level shift).")})
	}
	return blocks
}

// ticksIn returns the ticks in [from, to).
func ticksIn(ts []analysis.Tick, from, to time.Time) []analysis.Tick {
	i := sort.Search(len(ts), func(i int) bool { return !ts[i].T.Before(from) })
	j := sort.Search(len(ts), func(i int) bool { return !ts[i].T.Before(to) })
	return ts[i:j]
}

// signed1 is signed1EN in the document's number format.
func (b numbers) signed1(v float64) string { return b.loc.Num(signed1EN(v)) }

func signed1EN(v float64) string {
	if !finite(v) {
		return "–"
	}
	return fmt.Sprintf("%+.1f", v)
}

func (b numbers) signedBytes(v float64) string {
	if !finite(v) {
		return "–"
	}
	if v < 0 {
		return "−" + b.bytesU(-v)
	}
	return "+" + b.bytesU(v)
}

// memoryChart draws the after-GC points of each memory trend.
func (b *builder) memoryChart() *doc.Figure {
	c := b.timeChart(b.W("Memory after garbage collection"))
	c.Y = chart.Axis{Label: b.W("Memory"), Unit: "bytes"}
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
		c.Series = append(c.Series, chart.Series{Name: m.Target + " " + b.memoryWhat(m.What), Color: chart.Palette[i%len(chart.Palette)], X: x, Y: y, Style: chart.LinePoints})
	}
	if len(c.Series) == 0 {
		return nil
	}
	return b.figure("memory-after-gc", c, b.W("The points each trend line was fitted to: memory right after a collection (or the lowest reading of each window when no collection was seen)."))
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
			blocks = append(blocks, &doc.Para{Note: true, Text: sentence(b.T("no before/during/after comparison for workload %s: it started within 30 s of the run's start and ended within 30 s of its end (%s – %s), so there is no time without it to compare with",
				b.red.String(w), b.hms(sp[0]), b.hms(sp[1])))})
			continue
		}
		t := &doc.Table{Caption: b.T("CPU before, during and after workload %s (%s – %s)", b.red.String(w), b.hms(sp[0]), b.hms(sp[1])),
			Columns: []doc.Column{{Name: b.W("Target")}, {Name: b.W("Before"), Align: doc.Right}, {Name: b.W("During"), Align: doc.Right}, {Name: b.W("After"), Align: doc.Right}}}
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
				return b.num3(l.Mean) + " %"
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.red.String(tg.name)}, {Text: f(lv.Before)}, {Text: f(lv.During)}, {Text: f(lv.After)}}})
		}
		if len(t.Rows) > 0 {
			blocks = append(blocks, t)
		} else {
			blocks = append(blocks, &doc.Para{Note: true, Text: sentence(b.T("no before/during/after comparison for workload %s: no monitored target recorded CPU", b.red.String(w)))})
		}
	}
	return blocks
}
