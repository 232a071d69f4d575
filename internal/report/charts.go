package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// maxBuckets bounds the points per drawn series: about one per 2 px of a
// printed chart, so long runs stay readable and files stay small.
const maxBuckets = 400

// Colours used with meaning across charts.
const (
	colAvg   = "#4e79a7"
	colP95   = "#f28e2b"
	colTput  = "#59a14f"
	colErr   = "#e15759"
	colUsers = "#b07aa1"
)

// figure wraps a chart as a document figure with a unique file name.
func (b *builder) figure(name string, c *chart.Chart, caption string) *doc.Figure {
	b.figN++
	if c.XKind == chart.Time && len(c.Markers) > 0 {
		caption = sentences(caption, b.W(phaseNote))
	}
	stem := fmt.Sprintf("%02d-%s", b.figN, slug(name))
	c.ID = stem
	c.Loc = b.loc
	return &doc.Figure{Name: stem, Title: c.Title, Caption: caption, SVG: c.SVG()}
}

// slug makes a file-name-safe stem.
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
				dash = true
			}
		}
	}
	out := strings.TrimSuffix(b.String(), "-")
	if len(out) > 40 {
		out = out[:40]
	}
	if out == "" {
		out = "chart"
	}
	return out
}

// timeChart returns a chart over the run's span with the phases drawn: as
// shaded, labelled bands with dark boundary lines when they follow each
// other, as boundary lines alone when workloads overlap.
func (b *builder) timeChart(title string) *chart.Chart {
	d := b.d
	c := &chart.Chart{Title: title, XKind: chart.Time, XMin: unix(d.Start), XMax: unix(d.End),
		XLabel: b.W("Time (") + zoneName(d.Start) + ")", Zone: d.Start.Location()}
	if !(c.XMax > c.XMin) {
		c.XMax = c.XMin + 1
	}
	overlap := false
	for i := 1; i < len(d.Phases); i++ {
		if d.Phases[i].Start.Before(d.Phases[i-1].End.Add(-time.Second)) {
			overlap = true
		}
	}
	seen := map[int64]bool{}
	mark := func(t time.Time) {
		if !seen[t.Unix()] {
			seen[t.Unix()] = true
			c.Markers = append(c.Markers, chart.Marker{X: unix(t)})
		}
	}
	for _, p := range d.Phases {
		if !overlap {
			c.Spans = append(c.Spans, chart.Span{From: unix(p.Start), To: unix(p.End), Label: b.red.String(p.Name)})
		}
		mark(p.Start)
		mark(p.End)
	}
	return c
}

func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

// bucketNote explains downsampling in a caption.
func (b numbers) bucketNote(r chart.Reduced) string {
	if !r.Reduced {
		return ""
	}
	return b.T(" Each point is the mean over %s; the shaded band spans the lowest to the highest second in it.", dur(time.Duration(r.Bucket)*time.Second))
}

// phaseNote ends the caption of a time chart that draws phase boundaries
// (figure adds it; a run without phases draws none and says nothing).
const phaseNote = "vertical lines mark the phase boundaries"

// timeCharts are the results section's response-time and throughput charts.
func (b *builder) timeCharts() []*doc.Figure {
	ticks := b.d.TotalTicks
	if len(ticks) == 0 {
		return nil
	}
	from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
	w := chart.BucketWidth(to-from, 1, maxBuckets)
	n := len(ticks)
	x, mean, p95, cnt, errs := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, t := range ticks {
		x[i], mean[i], p95[i], cnt[i], errs[i] = float64(t.T.Unix()), t.MeanMs, t.P95Ms, float64(t.Count), float64(t.Errors)
		if t.Count == 0 {
			mean[i], p95[i] = math.NaN(), math.NaN()
		}
	}
	avgR := chart.Reduce(x, mean, cnt, from, to, w)
	p95R := chart.Reduce(x, p95, cnt, from, to, w)
	rt := b.timeChart(b.W("Response time of all requests"))
	rt.Y = chart.Axis{Label: b.W("Response time (ms)"), Unit: "ms"}
	rt.Series = []chart.Series{
		{Name: b.W("p95 per second"), Color: colP95, X: p95R.X, Y: p95R.Mean, Lo: band(p95R, true), Hi: band(p95R, false)},
		{Name: b.W("average"), Color: colAvg, X: avgR.X, Y: avgR.Mean, Lo: band(avgR, true), Hi: band(avgR, false), Width: 2},
	}
	figs := []*doc.Figure{b.figure("response-time", rt, b.W("Average and 95th percentile response time of all requests per second (transactions excluded).")+b.bucketNote(avgR))}

	// Throughput: a second without records had no completions, so it
	// counts as zero rather than as a gap (counted per bucket, so the
	// memory is the buckets', not one value per second of the span).
	tpR := chart.ReduceCounts(x, cnt, from, to, w)
	erR := chart.ReduceCounts(x, errs, from, to, w)
	tp := b.timeChart("Throughput")
	tp.Y = chart.Axis{Label: b.W("Requests per second"), Unit: "req/s"}
	// The errors' area is drawn first so the completed line stays visible
	// on top of it, even when every request failed.
	if b.s.Errors.Total > 0 {
		tp.Series = append(tp.Series, chart.Series{Name: b.W("errors/s"), Color: colErr, X: erR.X, Y: erR.Mean, Style: chart.Area})
	}
	tp.Series = append(tp.Series, chart.Series{Name: b.W("completed req/s"), Color: colTput, X: tpR.X, Y: tpR.Mean, Lo: band(tpR, true), Hi: band(tpR, false), Width: 2})
	failed := ""
	if b.s.Errors.Total > 0 {
		failed = b.W(" and failed requests per second")
	}
	figs = append(figs, b.figure("throughput", tp, sentences(b.W("Completed requests per second (transactions excluded)")+failed, b.bucketNote(tpR))))
	return figs
}

// band returns the envelope's low (lo=true) or high edge when the series was
// downsampled, nil otherwise.
func band(r chart.Reduced, lo bool) []float64 {
	if !r.Reduced {
		return nil
	}
	if lo {
		return r.Lo
	}
	return r.Hi
}

// usersChart shows active users per workload over time.
func (b *builder) usersChart() *doc.Figure {
	us := b.d.Users
	if len(us) == 0 {
		return nil
	}
	names := map[string]bool{}
	for _, u := range us {
		for w := range u.Users {
			names[w] = true
		}
	}
	ws := sortedKeys(names)
	from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
	w := chart.BucketWidth(to-from, 1, maxBuckets)
	c := b.timeChart(b.W("Active users"))
	c.Y = chart.Axis{Label: b.W("Users"), Unit: ""}
	var note string
	for i, name := range ws {
		x, y := make([]float64, len(us)), make([]float64, len(us))
		for j, u := range us {
			x[j], y[j] = float64(u.T.Unix()), float64(u.Users[name])
		}
		r := chart.Reduce(x, y, nil, from, to, w)
		label := b.red.String(nonEmpty(name, "users"))
		if len(ws) == 1 {
			label = b.W("active users")
		}
		col := colUsers
		if i > 0 {
			col = chart.Palette[(i+5)%len(chart.Palette)]
		}
		c.Series = append(c.Series, chart.Series{Name: label, Color: col, X: r.X, Y: r.Mean, Width: 2})
		if r.Reduced {
			note = b.T(" Each point is the mean over %s.", dur(time.Duration(r.Bucket)*time.Second))
		}
	}
	return b.figure("users", c, b.W("Virtual users running at the end of each second, per workload.")+note)
}

// distributionChart plots the latency percentile distribution of the
// busiest labels and of all requests, on a "nines" axis.
func (b *builder) distributionChart() *doc.Figure {
	d := b.d
	keys := d.Labels()
	sort.SliceStable(keys, func(i, j int) bool { return d.Run[keys[i]].Count > d.Run[keys[j]].Count })
	if len(keys) > 6 {
		keys = keys[:6]
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if keys[i].Tx != keys[j].Tx {
			return keys[i].Tx
		}
		return d.Run[keys[i]].MeanMs() > d.Run[keys[j]].MeanMs()
	})
	total := d.Total
	if total.Count == 0 {
		return nil
	}
	top := maxPercentile(total.Count)
	ps := percentileGrid(top)
	c := &chart.Chart{Title: b.W("Response time distribution"), XKind: chart.Nines, XMin: 0, XMax: top,
		XLabel: b.W("Percentile (log scale of the tail)"), Y: chart.Axis{Label: b.W("Response time (ms)"), Unit: "ms"}, Height: 320}
	for _, k := range keys {
		a := d.Run[k]
		if a.Count == 0 {
			continue
		}
		y := make([]float64, len(ps))
		for i, p := range ps {
			y[i] = a.QuantileMs(p)
			if p > maxPercentile(a.Count) {
				y[i] = math.NaN()
			}
		}
		c.Series = append(c.Series, chart.Series{Name: truncate(b.red.String(d.LabelName(k)), 32), X: ps, Y: y})
	}
	if len(keys) > 1 {
		y := make([]float64, len(ps))
		for i, p := range ps {
			y[i] = total.QuantileMs(p)
		}
		c.Series = append(c.Series, chart.Series{Name: b.W("all requests"), Color: "#222", X: ps, Y: y, Dash: true, Width: 2})
	}
	for i := range c.Series {
		if c.Series[i].Color == "" {
			c.Series[i].Color = chart.Palette[i%len(chart.Palette)]
		}
	}
	return b.figure("latency-distribution", c, b.T("Response time at each percentile over the whole run, up to the %s percentile that %s support. The horizontal axis stretches the tail: each step right is ten times rarer.", b.loc.Num(trimZeros(fmt.Sprintf("%.4f", top))), b.plural(total.Count, "sample")))
}

// maxPercentile is the highest percentile worth plotting for n samples:
// beyond it a single sample decides the value.
func maxPercentile(n int64) float64 {
	for _, p := range []float64{99.999, 99.99, 99.9, 99} {
		if float64(n)*(1-p/100) >= 1 {
			return p
		}
	}
	return 90
}

func percentileGrid(top float64) []float64 {
	var ps []float64
	for p := 0.0; p < 90; p += 5 {
		ps = append(ps, p)
	}
	for _, p := range []float64{90, 92, 94, 95, 96, 97, 98, 99, 99.2, 99.4, 99.5, 99.6, 99.7, 99.8, 99.9, 99.92, 99.94, 99.95, 99.96, 99.97, 99.98, 99.99, 99.995, 99.999} {
		if p <= top+1e-9 {
			ps = append(ps, p)
		}
	}
	return ps
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// errorChart shows failed requests over time.
func (b *builder) errorChart() *doc.Figure {
	if b.s.Errors.Total == 0 {
		return nil
	}
	from, to := unix(b.d.Start), math.Max(unix(b.d.End), unix(b.d.Start)+1)
	w := chart.BucketWidth(to-from, 5, 150)
	nb := int(math.Ceil((to - from) / w))
	x, y := make([]float64, nb), make([]float64, nb)
	for i := range x {
		x[i] = from + (float64(i)+0.5)*w
	}
	for _, t := range b.d.TotalTicks {
		if i := int((unix(t.T) - from) / w); i >= 0 && i < nb {
			y[i] += float64(t.Errors)
		}
	}
	c := b.timeChart(b.W("Failed requests over time"))
	c.Height = 220
	c.Y = chart.Axis{Label: b.W("Errors per ") + dur(time.Duration(w)*time.Second), Unit: ""}
	c.Series = []chart.Series{{Name: b.W("errors"), Color: colErr, X: x, Y: y, Style: chart.Area}}
	return b.figure("errors", c, b.T("Failed requests counted per %s.", dur(time.Duration(w)*time.Second)))
}

// phaseIndexAt returns the index of the phase containing t, or -1.
func phaseIndexAt(d *analysis.Dataset, t time.Time) int {
	for i, p := range d.Phases {
		if p.Contains(t) {
			return i
		}
	}
	return -1
}
