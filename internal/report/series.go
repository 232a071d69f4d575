package report

import (
	"cmp"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// This file draws the targets whose series carry labels — PromQL queries,
// Prometheus scrapes, CloudWatch, MySQL — one chart per metric with one
// line per labelled series (the top ones by mean), and a table per metric
// giving every series' mean and maximum before, during (per phase) and
// after the load.

// labelledKind reports whether a target kind is drawn per labelled series.
func labelledKind(kind string) bool { return resources.Labelled(kind) }

// seriesTop is how many series of one metric a chart draws.
const seriesTop = 8

// seriesMaxFamilies bounds the metrics drawn per target.
const seriesMaxFamilies = 24

// seriesMaxRows bounds a metric table's rows.
const seriesMaxRows = 40

// family is one metric of a target with all its labelled series.
type family struct {
	name   string
	unit   string
	series []*core.Series
}

// metaMetrics are the scrape's own bookkeeping, kept in the data but not
// drawn.
var metaMetrics = map[string]bool{"scrape_duration_s": true, "scrape_series": true, "scrape_series_dropped": true}

// baseName is a metric name without its {labels}.
func baseName(metric string) string { return resources.BaseName(metric) }

// labelsOf is a metric's label part ("pod=a,container=b"), "" without.
func labelsOf(metric string) string { return resources.LabelsOf(metric) }

// families groups a target's metrics by base name, in file order.
func families(t *target) []*family {
	var out []*family
	idx := map[string]*family{}
	for _, m := range t.metrics {
		base := baseName(m)
		if metaMetrics[base] {
			continue
		}
		s := t.byMetric[m]
		f := idx[base]
		if f == nil {
			f = &family{name: base, unit: s.Unit}
			idx[base] = f
			out = append(out, f)
		}
		f.series = append(f.series, s)
	}
	return out
}

// spanMean is a series' mean over a span (NaN without points).
func spanMean(s *core.Series, from, to time.Time) float64 {
	st, ok := statsOver(s, from, to)
	if !ok {
		return math.NaN()
	}
	return st.Mean
}

// rankSeries orders a family's series by mean during the run, largest
// first; series without data during the run go last.
func (b *builder) rankSeries(f *family) []*core.Series {
	from, to := b.d.Start, b.d.End.Add(time.Nanosecond)
	out := slices.Clone(f.series)
	means := map[*core.Series]float64{}
	for _, s := range out {
		means[s] = spanMean(s, from, to)
	}
	slices.SortStableFunc(out, func(x, y *core.Series) int {
		mx, my := means[x], means[y]
		switch {
		case math.IsNaN(mx) && math.IsNaN(my):
			return 0
		case math.IsNaN(mx):
			return 1
		case math.IsNaN(my):
			return -1
		}
		return cmp.Compare(my, mx)
	})
	return out
}

// seriesLabel is the legend text of a series: its labels, or the metric.
func seriesLabel(s *core.Series) string {
	if l := labelsOf(s.Metric); l != "" {
		return strings.ReplaceAll(l, ",", ", ")
	}
	return s.Metric
}

// labelledBlocks are the charts, tables and notes of a group of targets
// drawn per labelled series.
func (b *builder) labelledBlocks(group []*target) []doc.Block {
	var out []doc.Block
	notes := b.monitorNotes()
	hints, err := b.in.run.Hints, b.in.run.HintsErr
	if err != nil {
		out = append(out, &doc.Verdict{Level: doc.Warn, Text: sentence(b.W("monitor hints unreadable: ") + b.red.String(err.Error()))})
	}
	for _, t := range group {
		for _, n := range notes {
			if n.Target == t.name {
				out = append(out, b.noteBlock(n))
			}
		}
		fams := families(t)
		for i, f := range fams {
			if i == seriesMaxFamilies {
				out = append(out, &doc.Para{Note: true, Text: b.T("%d more metrics of %s are in the monitor files, not drawn here.", len(fams)-i, b.red.String(t.name))})
				break
			}
			ranked := b.rankSeries(f)
			top := seriesTop
			if h := hints[t.name]; h.Top > 0 {
				top = h.Top
			}
			if fig := b.familyChart(t, f, ranked, top); fig != nil {
				out = append(out, fig)
			}
			if tb := b.familyTable(t, f, ranked); tb != nil {
				out = append(out, tb)
			}
		}
	}
	return out
}

// monitorNotes reads the monitors' notes (a few small files).
func (b *builder) monitorNotes() []mondata.Note {
	ns, err := b.in.run.MonNotes, b.in.run.MonNotesErr
	if err != nil {
		return []mondata.Note{{Level: mondata.NoteError, Text: b.W("monitor notes unreadable: ") + err.Error()}}
	}
	return ns
}

// noteBlock renders one monitor note.
func (b *builder) noteBlock(n mondata.Note) doc.Block {
	lvl := doc.Warn
	if n.Level == mondata.NoteInfo {
		lvl = doc.Info
	}
	lead := b.W("monitor ") + b.red.String(n.Target)
	if n.Subject != "" {
		lead = b.W("query ") + b.red.String(n.Subject) + " (" + b.red.String(n.Target) + ")"
	}
	return &doc.Verdict{Level: lvl, Text: sentence(lead + ": " + b.red.String(n.Text))}
}

// notesWithoutData are the notes of targets that recorded nothing (a
// server that never answered), which have no place among the charts.
func (b *builder) notesWithoutData(ts []*target) []doc.Block {
	with := map[string]bool{}
	for _, t := range ts {
		if len(t.metrics) > 0 {
			with[t.name] = true
		}
	}
	var out []doc.Block
	for _, n := range b.monitorNotes() {
		if !with[n.Target] {
			out = append(out, b.noteBlock(n))
		}
	}
	return out
}

// familyChart draws the top series of one metric, one line each.
func (b *builder) familyChart(t *target, f *family, ranked []*core.Series, top int) *doc.Figure {
	c := b.timeChart(b.red.String(t.name) + " — " + f.name)
	c.Y = chart.Axis{Label: unitLabel(f.name, f.unit), Unit: f.unit}
	if f.unit == "%" {
		c.Y.Min = 0
	}
	from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
	w := chart.BucketWidth(to-from, 1, maxBuckets)
	first := math.NaN()
	for _, s := range ranked[:min(top, len(ranked))] {
		if len(s.Points) > 0 && (math.IsNaN(first) || unix(s.Points[0].T) < first) {
			first = unix(s.Points[0].T)
		}
	}
	from = onSamplingClock(from, w, first)
	reduced := chart.Reduced{}
	drawn := 0
	for _, s := range ranked {
		if drawn == top {
			break
		}
		x, y := make([]float64, 0, len(s.Points)), make([]float64, 0, len(s.Points))
		k := kbToBytes(s)
		for _, pt := range s.Points {
			x, y = append(x, unix(pt.T)), append(y, pt.V*k)
		}
		r := chart.Reduce(x, y, nil, from, to, w)
		if len(r.X) == 0 {
			continue
		}
		ser := chart.Series{Name: b.red.String(seriesLabel(s)), X: r.X, Y: r.Mean}
		if len(ranked) == 1 {
			ser.Lo, ser.Hi, ser.Width = band(r, true), band(r, false), 2
		}
		c.Series = append(c.Series, ser)
		drawn++
		if r.Reduced {
			reduced = r
		}
	}
	if drawn == 0 {
		return nil
	}
	what := b.T("%s of %s", f.name, b.red.String(t.name))
	if len(ranked) > drawn {
		what += b.T(", the %d series with the highest mean during the run of %d (all are in the table)", drawn, len(ranked))
	} else if drawn > 1 {
		what += b.T(", one line per series (%d)", drawn)
	}
	return b.figure(t.name+"-"+f.name, c, what+"."+b.bucketNote(reduced))
}

// span is a named stretch of time of a metric table.
type span struct {
	name     string
	from, to time.Time
	meanOnly bool
}

// tableSpans are the columns of a metric table: before the load, each
// phase (or the whole load when there are many), after the load. Before
// and after appear only when some series has data there.
func (b *builder) tableSpans(f *family) []span {
	return b.spansOf(f, len(b.d.Phases) > 0 && len(b.d.Phases) <= maxPhaseColumns)
}

// maxPhaseColumns is how many phases a metric table gives a column each;
// a run of more phases gets a row per phase when its series are few
// (maxSeriesColumns), else one column of the whole load.
const (
	maxPhaseColumns  = 4
	maxSeriesColumns = 3
)

// spansOf is tableSpans with each phase its own span (perPhase) or one
// span of the whole load.
func (b *builder) spansOf(f *family, perPhase bool) []span {
	start, end := b.d.Start, b.d.End.Add(time.Nanosecond)
	has := func(from, to time.Time) bool {
		for _, s := range f.series {
			if _, ok := statsOver(s, from, to); ok {
				return true
			}
		}
		return false
	}
	var out []span
	early, late := time.Unix(0, 0), time.Unix(1<<40, 0)
	if has(early, start) {
		out = append(out, span{name: "Before", from: early, to: start, meanOnly: true})
	}
	if perPhase {
		for _, p := range b.d.Phases {
			out = append(out, span{name: b.red.String(p.Name), from: p.Start, to: p.End})
		}
	} else {
		out = append(out, span{name: b.W("During the load"), from: start, to: end})
	}
	if has(end, late) {
		out = append(out, span{name: "After", from: end, to: late, meanOnly: true})
	}
	return out
}

// familyTable gives every series' mean and maximum per span.
func (b *builder) familyTable(t *target, f *family, ranked []*core.Series) *doc.Table {
	if len(b.d.Phases) > maxPhaseColumns && len(ranked) <= maxSeriesColumns {
		return b.familyTableByPhase(t, f, ranked)
	}
	spans := b.tableSpans(f)
	caption := b.W(" per phase")
	if len(b.d.Phases) == 0 || len(b.d.Phases) > maxPhaseColumns {
		// One column of the whole load: no phase is in the table.
		caption = b.W(" during the load")
	}
	tb := &doc.Table{Caption: b.red.String(t.name) + " — " + f.name + caption, Columns: []doc.Column{{Name: b.W("Series")}}}
	for _, sp := range spans {
		if sp.meanOnly {
			tb.Columns = append(tb.Columns, doc.Column{Name: sp.name + b.W(" mean"), Align: doc.Right})
			continue
		}
		tb.Columns = append(tb.Columns, doc.Column{Name: sp.name + b.W(" mean"), Align: doc.Right}, doc.Column{Name: b.W("max"), Align: doc.Right})
	}
	for i, s := range ranked {
		if i == seriesMaxRows {
			tb.Note = b.T("%d more series with lower means are in the monitor files.", len(ranked)-i)
			break
		}
		k := kbToBytes(s)
		unit := s.Unit
		if k != 1 {
			unit = "bytes"
		}
		r := doc.Row{Cells: []doc.Cell{{Text: b.red.String(seriesLabel(s))}}}
		any := false
		for _, sp := range spans {
			st, ok := statsOver(s, sp.from, sp.to)
			switch {
			case !ok && sp.meanOnly:
				r.Cells = append(r.Cells, doc.Cell{Text: "–"})
			case !ok:
				r.Cells = append(r.Cells, doc.Cell{Text: "–"}, doc.Cell{Text: "–"})
			case sp.meanOnly:
				r.Cells = append(r.Cells, doc.Cell{Text: b.valueU(st.Mean*k, unit)})
				any = true
			default:
				r.Cells = append(r.Cells, doc.Cell{Text: b.valueU(st.Mean*k, unit)}, doc.Cell{Text: b.valueU(st.Max*k, unit)})
				any = true
			}
		}
		if any {
			tb.Rows = append(tb.Rows, r)
		}
	}
	if len(tb.Rows) == 0 {
		return nil
	}
	return tb
}

// familyTableByPhase gives a run of many phases one row per phase (and
// before and after the load), each series' mean and maximum in columns:
// a finding that names a phase ("12 of 12 connections on average in
// step 3") has its figure in the table.
func (b *builder) familyTableByPhase(t *target, f *family, ranked []*core.Series) *doc.Table {
	tb := &doc.Table{Caption: b.red.String(t.name) + " — " + f.name + b.W(" per phase"), Columns: []doc.Column{{Name: b.W("Phase")}}}
	units := make([]string, len(ranked))
	scale := make([]float64, len(ranked))
	for i, s := range ranked {
		scale[i], units[i] = kbToBytes(s), s.Unit
		if scale[i] != 1 {
			units[i] = "bytes"
		}
		name := b.red.String(seriesLabel(s))
		tb.Columns = append(tb.Columns, doc.Column{Name: name + b.W(" mean"), Align: doc.Right}, doc.Column{Name: b.W("max"), Align: doc.Right})
	}
	for _, sp := range b.spansOf(f, true) {
		r := doc.Row{Cells: []doc.Cell{{Text: sp.name}}}
		any := false
		for i, s := range ranked {
			st, ok := statsOver(s, sp.from, sp.to)
			switch {
			case !ok:
				r.Cells = append(r.Cells, doc.Cell{Text: "–"}, doc.Cell{Text: "–"})
			case sp.meanOnly:
				r.Cells = append(r.Cells, doc.Cell{Text: b.valueU(st.Mean*scale[i], units[i])}, doc.Cell{Text: "–"})
				any = true
			default:
				r.Cells = append(r.Cells, doc.Cell{Text: b.valueU(st.Mean*scale[i], units[i])}, doc.Cell{Text: b.valueU(st.Max*scale[i], units[i])})
				any = true
			}
		}
		if any {
			tb.Rows = append(tb.Rows, r)
		}
	}
	if len(tb.Rows) == 0 {
		return nil
	}
	return tb
}
