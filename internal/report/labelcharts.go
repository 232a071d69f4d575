package report

import (
	"math"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// maxLabelLines is how many labels the per-label charts draw as lines;
// the others are listed in a table under them.
const maxLabelLines = 6

// labelCharts draws the average response time and the throughput over time
// of the busiest labels, one line each (transactions and derived labels
// are left out: they restate their requests), and lists the labels it did
// not draw. A run with a single label has nothing to add to the
// all-requests charts.
func (b *builder) labelCharts() []doc.Block {
	var keys []analysis.LabelKey
	for _, k := range b.d.Labels() {
		if !k.Tx && !k.Derived && b.d.Run[k].Count > 0 {
			keys = append(keys, k)
		}
	}
	if len(keys) < 2 {
		return nil
	}
	sort.SliceStable(keys, func(i, j int) bool { return b.d.Run[keys[i]].Count > b.d.Run[keys[j]].Count })
	drawn, rest := keys, []analysis.LabelKey(nil)
	if len(keys) > maxLabelLines {
		drawn, rest = keys[:maxLabelLines], keys[maxLabelLines:]
	}
	from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
	w := chart.BucketWidth(to-from, 1, maxBuckets)
	rt := b.timeChart(b.W("Average response time per label"))
	rt.Y = chart.Axis{Label: b.W("Response time (ms)"), Unit: "ms"}
	tp := b.timeChart(b.W("Throughput per label"))
	tp.Y = chart.Axis{Label: b.W("Requests per second"), Unit: "req/s"}
	var bucket chart.Reduced
	for i, k := range drawn {
		ticks := b.d.Timeline[k]
		x, mean, cnt := make([]float64, len(ticks)), make([]float64, len(ticks)), make([]float64, len(ticks))
		for j, t := range ticks {
			x[j], mean[j], cnt[j] = float64(t.T.Unix()), t.MeanMs, float64(t.Count)
			if t.Count == 0 {
				mean[j] = math.NaN()
			}
		}
		name := b.red.String(b.d.LabelName(k))
		col := chart.Palette[i%len(chart.Palette)]
		r := chart.Reduce(x, mean, cnt, from, to, w)
		rt.Series = append(rt.Series, chart.Series{Name: name, Color: col, X: r.X, Y: r.Mean})
		tr := chart.ReduceCounts(x, cnt, from, to, w)
		tp.Series = append(tp.Series, chart.Series{Name: name, Color: col, X: tr.X, Y: tr.Mean})
		bucket = tr
	}
	which := b.T("the %d labels with the most samples", len(drawn))
	if rest == nil {
		which = b.W("every request label")
	}
	per := b.W("second")
	if bucket.Reduced {
		per = dur(time.Duration(bucket.Bucket) * time.Second)
	}
	blocks := []doc.Block{
		b.figure("response-time-per-label", rt, sentences(b.T("average response time of %s, per %s", which, per), b.W("transactions are left out"))),
		b.figure("throughput-per-label", tp, sentences(b.T("completed requests per second of %s, per %s", which, per))),
	}
	if len(rest) > 0 {
		t := &doc.Table{Caption: b.W("Labels not drawn in the per-label charts"), Columns: []doc.Column{{Name: b.W("Label")}, {Name: b.W("Samples"), Align: doc.Right},
			{Name: b.W("Average (ms)"), Align: doc.Right}, {Name: b.W("p95 (ms)"), Align: doc.Right}, {Name: b.W("Throughput (req/s)"), Align: doc.Right}}}
		for _, k := range rest {
			st := b.d.Run[k].Stats(b.d.LabelName(k), false, b.d.Span())
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.red.String(st.Label)}, {Text: b.count(st.Samples)}, {Text: b.ms(st.MeanMs)},
				{Text: b.ms(st.P95Ms)}, {Text: b.rate(st.ThroughputRPS)}}})
		}
		blocks = append(blocks, t)
	}
	return blocks
}
