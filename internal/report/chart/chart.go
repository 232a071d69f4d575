// Package chart draws the report's charts as static SVG: time series with
// phase boundaries as vertical lines and shaded phase bands, min/max
// envelopes for downsampled series, stacked areas (CPU), percentile
// distributions on a "nines" axis and load curves. The output needs no
// script and no font download, embeds inline in HTML and stands alone as a
// file beside Markdown.
//
// It is hand-written rather than built on a chart library because the
// report needs exactly these few forms, drawn the same way in every format:
// go-chart (in go.mod) has neither envelopes nor stacked areas nor labelled
// vertical markers, and its SVG text depends on a rasteriser's font metrics.
//
// All text is XML-escaped; a Chart is plain data and safe to build from run
// values.
package chart

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/locale"
)

// XKind is the kind of horizontal axis.
type XKind int

// Horizontal axis kinds.
const (
	// Time: X values are Unix seconds, ticks are clock times.
	Time XKind = iota
	// Linear: plain numbers (load, users).
	Linear
	// Nines: X values are percentiles in [0, 100), placed on a log scale of
	// 1/(1−p) so the tail (99, 99.9, 99.99) gets room.
	Nines
)

// Style is how a series is drawn.
type Style int

// Series styles.
const (
	Line       Style = iota
	Area             // filled to the axis (or to the series below when stacked)
	Points           // markers only
	LinePoints       // line with markers
)

// Series is one drawn quantity. X and Y have equal length; a NaN Y is a gap.
// Lo and Hi, when set (same length), are an envelope drawn as a band behind
// the line: the min and max of the points a downsampled value stands for.
type Series struct {
	Name   string
	Color  string // CSS colour; a palette colour when empty
	X, Y   []float64
	Lo, Hi []float64
	Style  Style
	Dash   bool
	Width  float64 // stroke width; 1.6 when 0
	Right  bool    // plotted against the right axis
	// Stack puts the series in the stacked group (areas stacked in order).
	Stack bool
}

// Marker is a vertical line at X (a phase boundary) with an optional label.
type Marker struct {
	X     float64
	Label string
}

// Span is a shaded horizontal range (a phase) labelled at the top.
type Span struct {
	From, To float64
	Label    string
}

// Axis describes a vertical axis.
type Axis struct {
	Label string // shown rotated beside the axis, e.g. "Response time (ms)"
	Unit  string // formats tick labels: "ms", "%", "bytes", "bytes/s", "req/s", ""
	// Min and Max fix the range when Fixed is set; otherwise the range is
	// fitted to the data and always includes zero.
	Min, Max float64
	Fixed    bool
}

// Chart is one chart.
type Chart struct {
	// ID must be unique within an HTML page (it names the clip path).
	ID      string
	Title   string
	XKind   XKind
	XLabel  string
	XMin    float64 // range of X; fitted to the data when both are 0
	XMax    float64
	Y       Axis
	Y2      *Axis // right axis, for series with Right set
	Series  []Series
	Markers []Marker
	Spans   []Span
	// Width and Height in px; 880×300 when 0.
	Width, Height int
	// Empty is shown instead of the plot when there is nothing to draw.
	Empty string
	// Zone is the time zone of clock-time ticks; UTC when nil.
	Zone *time.Location
	// Loc is the language of the tick labels: its decimal separator
	// ("2,5 %" in Danish) and how it writes a day ("2. jan 15:04"); nil is
	// English.
	Loc *locale.Locale
}

// Palette is the default series colours (Tableau 10: distinct in print and
// for the common colour-vision deficiencies).
var Palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

const fontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif"

// geometry of the plot area inside the canvas.
type frame struct {
	w, h                     float64
	left, right, top, bottom float64 // plot rectangle edges
}

func (f frame) pw() float64 { return f.right - f.left }
func (f frame) ph() float64 { return f.bottom - f.top }

// SVG renders the chart.
func (c *Chart) SVG() []byte {
	w, h := c.Width, c.Height
	if w == 0 {
		w = 880
	}
	if h == 0 {
		h = 300
	}
	var b strings.Builder
	fr := frame{w: float64(w), h: float64(h), left: 70, right: float64(w) - 20, top: 48, bottom: float64(h) - 46}
	if c.Y2 != nil {
		fr.right = float64(w) - 70
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" width="%d" height="%d" role="img" font-family="%s" font-size="11">`,
		w, h, w, h, fontFamily)
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`, w, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14" font-weight="bold" fill="#222">%s</text>`, int(fr.left), esc(c.Title))

	xmin, xmax := c.xRange()
	ymin, ymax := c.yRange(false)
	if !c.hasData() || !(xmax > xmin) {
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#fafafa" stroke="#ddd"/>`, f1(fr.left), f1(fr.top), f1(fr.pw()), f1(fr.ph()))
		msg := c.Empty
		if msg == "" {
			msg = "no data"
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="#777" font-size="13">%s</text>`, f1(fr.left+fr.pw()/2), f1(fr.top+fr.ph()/2), esc(msg))
		b.WriteString(`</svg>`)
		return []byte(b.String())
	}
	// The legend goes beside the title when it fits, else in rows under
	// it, pushing the plot down.
	legend, rows := c.legendLayout(fr)
	fr.top += 18 * float64(rows)
	xs := newXScale(c.XKind, xmin, xmax, fr, c.Zone, c.Loc)
	yt := axisTicks(ymin, ymax, 5, c.Y.Unit)
	if !c.Y.Fixed {
		// Phase labels sit in the plot's top 16 px: keep the data under
		// them (a saturated series along its ceiling struck through every
		// label), except on a percent axis that would pass 100 for it.
		if room := 16 / fr.ph(); c.hasSpanLabels() && ymax > ymin && room < 0.5 {
			top := yt[len(yt)-1]
			if (top-ymax)/(top-yt[0]) < room {
				want := ymax + (ymax-ymin)*room/(1-room)
				if more := axisTicks(ymin, want, 5, c.Y.Unit); c.Y.Unit != "%" || ymax > 100 || more[len(more)-1] <= 100 {
					yt = more
				}
			}
		}
		ymin, ymax = yt[0], yt[len(yt)-1]
	}
	ys := linScale{d0: ymin, d1: ymax, r0: fr.bottom, r1: fr.top}
	var y2s linScale
	var y2t []float64
	if c.Y2 != nil {
		lo, hi := c.yRange(true)
		y2t = axisTicks(lo, hi, 5, c.Y2.Unit)
		if !c.Y2.Fixed {
			lo, hi = y2t[0], y2t[len(y2t)-1]
		}
		y2s = linScale{d0: lo, d1: hi, r0: fr.bottom, r1: fr.top}
	}

	// Phase bands first (behind everything), alternating shade; their labels
	// go over the data, haloed, so that a line along the top does not strike
	// through them.
	var spanLabels strings.Builder
	for i, s := range c.Spans {
		x0, x1 := xs.pos(math.Max(s.From, xmin)), xs.pos(math.Min(s.To, xmax))
		if x1 <= x0 {
			continue
		}
		if i%2 == 0 {
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="#f3f5f8"/>`, f1(x0), f1(fr.top), f1(x1-x0), f1(fr.ph()))
		}
		if lbl := fitLabel(s.Label, x1-x0-6); lbl != "" {
			fmt.Fprintf(&spanLabels, `<text x="%s" y="%s" text-anchor="middle" fill="#555" font-size="10.5" stroke="#fff" stroke-width="3" stroke-opacity="0.85" paint-order="stroke">%s</text>`, f1((x0+x1)/2), f1(fr.top+12), esc(lbl))
		}
	}
	// Grid and tick labels.
	b.WriteString(`<g stroke="#e3e3e3" stroke-width="1">`)
	for _, t := range yt {
		if t < ymin-1e-9 || t > ymax+1e-9 {
			continue
		}
		y := ys.pos(t)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s"/>`, f1(fr.left), f1(y), f1(fr.right), f1(y))
	}
	xt := xs.ticks()
	for _, t := range xt {
		x := xs.pos(t.v)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke-dasharray="2,3"/>`, f1(x), f1(fr.top), f1(x), f1(fr.bottom))
	}
	b.WriteString(`</g>`)
	b.WriteString(`<g fill="#444" font-size="11">`)
	for _, t := range yt {
		if t < ymin-1e-9 || t > ymax+1e-9 {
			continue
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end">%s</text>`, f1(fr.left-6), f1(ys.pos(t)+4), esc(c.Loc.Num(tickLabel(t, c.Y.Unit, yt))))
	}
	if c.Y2 != nil {
		for _, t := range y2t {
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="start">%s</text>`, f1(fr.right+6), f1(y2s.pos(t)+4), esc(c.Loc.Num(tickLabel(t, c.Y2.Unit, y2t))))
		}
	}
	for _, t := range xt {
		// Keep the outermost labels inside the canvas.
		x, anchor := xs.pos(t.v), "middle"
		if w := textWidth(t.label, 11) / 2; x+w > fr.w-2 {
			anchor = "end"
			x = math.Min(x+w, fr.w-2)
		} else if x-w < 2 {
			anchor = "start"
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="%s">%s</text>`, f1(x), f1(fr.bottom+16), anchor, esc(t.label))
	}
	b.WriteString(`</g>`)
	// Axis titles.
	if c.Y.Label != "" {
		fmt.Fprintf(&b, `<text transform="translate(16 %s) rotate(-90)" text-anchor="middle" fill="#333" font-size="11.5">%s</text>`, f1(fr.top+fr.ph()/2), esc(c.Y.Label))
	}
	if c.Y2 != nil && c.Y2.Label != "" {
		fmt.Fprintf(&b, `<text transform="translate(%s %s) rotate(90)" text-anchor="middle" fill="#333" font-size="11.5">%s</text>`, f1(fr.w-14), f1(fr.top+fr.ph()/2), esc(c.Y2.Label))
	}
	if xl := c.XLabel; xl != "" {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" fill="#333" font-size="11.5">%s</text>`, f1(fr.left+fr.pw()/2), f1(fr.h-8), esc(xl))
	}

	// Data, clipped to the plot area.
	fmt.Fprintf(&b, `<clipPath id="%s"><rect x="%s" y="%s" width="%s" height="%s"/></clipPath>`, esc(c.clipID()), f1(fr.left), f1(fr.top-1), f1(fr.pw()), f1(fr.ph()+2))
	fmt.Fprintf(&b, `<g clip-path="url(#%s)">`, esc(c.clipID()))
	c.drawStacked(&b, xs, ys)
	for i, s := range c.Series {
		if s.Stack {
			continue
		}
		sc := ys
		if s.Right && c.Y2 != nil {
			sc = y2s
		}
		drawSeries(&b, s, c.color(i), xs, sc)
	}
	b.WriteString(`</g>`)
	b.WriteString(spanLabels.String())
	// Markers on top of the data: dark vertical lines like reference 000.
	for _, m := range c.Markers {
		if m.X < xmin || m.X > xmax {
			continue
		}
		x := xs.pos(m.X)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#333" stroke-width="1.2" stroke-opacity="0.75"/>`, f1(x), f1(fr.top), f1(x), f1(fr.bottom))
	}
	// Plot frame.
	fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999" stroke-width="1"/>`, f1(fr.left), f1(fr.top), f1(fr.pw()), f1(fr.ph()))
	c.drawLegend(&b, fr, legend, rows)
	b.WriteString(`</svg>`)
	return []byte(b.String())
}

func (c *Chart) clipID() string {
	id := c.ID
	if id == "" {
		id = "chart"
	}
	return "clip-" + id
}

func (c *Chart) color(i int) string {
	if c.Series[i].Color != "" {
		return c.Series[i].Color
	}
	return Palette[i%len(Palette)]
}

func (c *Chart) hasData() bool {
	for _, s := range c.Series {
		for _, v := range s.Y {
			if finite(v) {
				return true
			}
		}
	}
	return false
}

func (c *Chart) xRange() (float64, float64) {
	if c.XMin != 0 || c.XMax != 0 {
		return c.XMin, c.XMax
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range c.Series {
		for _, x := range s.X {
			if finite(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if c.XKind == Linear && lo > 0 {
		lo = 0
	}
	if lo == hi {
		lo, hi = lo-1, hi+1
	}
	return lo, hi
}

// yRange fits the vertical range to the data (stacked sums, envelopes) of
// the left (right=false) or right axis; it always includes zero.
// hasSpanLabels reports whether any phase band is labelled.
func (c *Chart) hasSpanLabels() bool {
	for _, s := range c.Spans {
		if s.Label != "" {
			return true
		}
	}
	return false
}

func (c *Chart) yRange(right bool) (float64, float64) {
	ax := c.Y
	if right && c.Y2 != nil {
		ax = *c.Y2
	}
	if ax.Fixed {
		return ax.Min, ax.Max
	}
	lo, hi := 0.0, math.Inf(-1)
	see := func(v float64) {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	var stack []float64
	for _, s := range c.Series {
		if s.Right != right || (right && c.Y2 == nil) {
			continue
		}
		if s.Stack && !right {
			if stack == nil {
				stack = make([]float64, len(s.Y))
			}
			for i := range s.Y {
				if i < len(stack) && finite(s.Y[i]) {
					stack[i] += s.Y[i]
					see(stack[i])
				}
			}
			continue
		}
		for i, v := range s.Y {
			see(v)
			if s.Hi != nil {
				see(s.Hi[i])
			}
			if s.Lo != nil {
				see(s.Lo[i])
			}
		}
	}
	if math.IsInf(hi, -1) || hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// drawStacked draws the stacked series as areas, each on top of the sum of
// those before it.
func (c *Chart) drawStacked(b *strings.Builder, xs xScale, ys linScale) {
	var base []float64
	for i, s := range c.Series {
		if !s.Stack {
			continue
		}
		if base == nil {
			base = make([]float64, len(s.Y))
		}
		top := make([]float64, len(s.Y))
		for j := range s.Y {
			v := s.Y[j]
			if !finite(v) {
				top[j] = math.NaN()
				continue
			}
			if j < len(base) {
				top[j] = base[j] + v
			}
		}
		col := c.color(i)
		for _, run := range runs(s.X, top) {
			var p strings.Builder
			for k, j := range run {
				cmd := "L"
				if k == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&p, "%s%s %s", cmd, f1(xs.pos(s.X[j])), f1(ys.pos(top[j])))
			}
			for k := len(run) - 1; k >= 0; k-- {
				j := run[k]
				fmt.Fprintf(&p, "L%s %s", f1(xs.pos(s.X[j])), f1(ys.pos(base[j])))
			}
			fmt.Fprintf(b, `<path d="%sZ" fill="%s" fill-opacity="0.8" stroke="%s" stroke-width="0.6"/>`, p.String(), esc(col), esc(col))
		}
		for j := range base {
			if j < len(top) && finite(top[j]) {
				base[j] = top[j]
			}
		}
	}
}

func drawSeries(b *strings.Builder, s Series, col string, xs xScale, ys linScale) {
	width := s.Width
	if width == 0 {
		width = 1.6
	}
	// Envelope band.
	if s.Lo != nil && s.Hi != nil {
		for _, run := range runs(s.X, s.Hi) {
			var p strings.Builder
			for k, j := range run {
				cmd := "L"
				if k == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&p, "%s%s %s", cmd, f1(xs.pos(s.X[j])), f1(ys.pos(s.Hi[j])))
			}
			for k := len(run) - 1; k >= 0; k-- {
				j := run[k]
				lo := s.Lo[j]
				if !finite(lo) {
					lo = s.Hi[j]
				}
				fmt.Fprintf(&p, "L%s %s", f1(xs.pos(s.X[j])), f1(ys.pos(lo)))
			}
			fmt.Fprintf(b, `<path d="%sZ" fill="%s" fill-opacity="0.18" stroke="none"/>`, p.String(), esc(col))
		}
	}
	if s.Style == Area {
		for _, run := range runs(s.X, s.Y) {
			var p strings.Builder
			for k, j := range run {
				cmd := "L"
				if k == 0 {
					cmd = "M"
				}
				fmt.Fprintf(&p, "%s%s %s", cmd, f1(xs.pos(s.X[j])), f1(ys.pos(s.Y[j])))
			}
			fmt.Fprintf(&p, "L%s %s L%s %s", f1(xs.pos(s.X[run[len(run)-1]])), f1(ys.pos(math.Max(0, ys.d0))), f1(xs.pos(s.X[run[0]])), f1(ys.pos(math.Max(0, ys.d0))))
			fmt.Fprintf(b, `<path d="%sZ" fill="%s" fill-opacity="0.25" stroke="none"/>`, p.String(), esc(col))
		}
	}
	if s.Style != Points {
		dash := ""
		if s.Dash {
			dash = ` stroke-dasharray="6,4"`
		}
		for _, run := range runs(s.X, s.Y) {
			if len(run) == 1 && s.Style != LinePoints {
				j := run[0]
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="%s" fill="%s"/>`, f1(xs.pos(s.X[j])), f1(ys.pos(s.Y[j])), f1(width), esc(col))
				continue
			}
			var p strings.Builder
			for k, j := range run {
				if k > 0 {
					p.WriteByte(' ')
				}
				fmt.Fprintf(&p, "%s,%s", f1(xs.pos(s.X[j])), f1(ys.pos(s.Y[j])))
			}
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round"%s/>`, p.String(), esc(col), f1(width), dash)
		}
	}
	if s.Style == Points || s.Style == LinePoints {
		for j := range s.Y {
			if finite(s.Y[j]) && finite(s.X[j]) {
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.6" fill="#fff" stroke="%s" stroke-width="1.8"/>`, f1(xs.pos(s.X[j])), f1(ys.pos(s.Y[j])), esc(col))
			}
		}
	}
}

// runs splits the indices of finite points into maximal gap-free runs.
func runs(x, y []float64) [][]int {
	var out [][]int
	var cur []int
	for i := range y {
		if i < len(x) && finite(y[i]) && finite(x[i]) {
			cur = append(cur, i)
			continue
		}
		if len(cur) > 0 {
			out = append(out, cur)
			cur = nil
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// legendEntry is one placed legend item.
type legendEntry struct {
	name, full, col string
	style           Style
	dash, stack     bool
	x               float64
	row             int
}

// legendLayout places the series names. When they fit beside the title
// they go there, right-aligned (rows = 0); otherwise they fill rows under
// the title, left to right, wrapping at the chart's right edge, and rows
// says how many. A name wider than 45 % of the plot is shortened in the
// middle; the full name stays in a tooltip. No entry runs past the chart.
func (c *Chart) legendLayout(fr frame) ([]legendEntry, int) {
	var es []legendEntry
	maxName := 0.45 * (fr.right - fr.left)
	total := 0.0
	widths := []float64{}
	for i, s := range c.Series {
		if s.Name == "" {
			continue
		}
		name := shortenMiddle(s.Name, maxName, 11)
		es = append(es, legendEntry{name: name, full: s.Name, col: c.color(i), style: s.Style, dash: s.Dash, stack: s.Stack})
		w := 22 + textWidth(name, 11) + 14
		widths = append(widths, w)
		total += w
	}
	if len(es) == 0 {
		return nil, 0
	}
	if total <= fr.right-(fr.left+textWidth(c.Title, 14)+24) {
		x := fr.right - total
		for i := range es {
			es[i].x = x
			x += widths[i]
		}
		return es, 0
	}
	row, x := 0, fr.left
	for i := range es {
		if x > fr.left && x+widths[i]-14 > fr.right {
			row++
			x = fr.left
		}
		es[i].x, es[i].row = x, row
		x += widths[i]
	}
	return es, row + 1
}

// drawLegend draws the placed entries: rows 0 … rows−1 sit above the plot,
// the last one just over its frame; rows = 0 means the title line.
func (c *Chart) drawLegend(b *strings.Builder, fr frame, es []legendEntry, rows int) {
	for _, e := range es {
		y := fr.top - 12
		if rows > 0 {
			y -= 18 * float64(rows-1-e.row)
		}
		x := e.x
		b.WriteString(`<g>`)
		if e.name != e.full {
			fmt.Fprintf(b, `<title>%s</title>`, esc(e.full))
		}
		switch {
		case e.stack || e.style == Area:
			fmt.Fprintf(b, `<rect x="%s" y="%s" width="16" height="9" fill="%s" fill-opacity="0.8"/>`, f1(x), f1(y-8), esc(e.col))
		default:
			dash := ""
			if e.dash {
				dash = ` stroke-dasharray="4,3"`
			}
			fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2.4"%s/>`, f1(x), f1(y-4), f1(x+16), f1(y-4), esc(e.col), dash)
			if e.style == Points || e.style == LinePoints {
				fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3" fill="#fff" stroke="%s" stroke-width="1.6"/>`, f1(x+8), f1(y-4), esc(e.col))
			}
		}
		fmt.Fprintf(b, `<text x="%s" y="%s" fill="#333">%s</text></g>`, f1(x+21), f1(y), esc(e.name))
	}
}

// shortenMiddle shortens s to at most width px at the font size by
// replacing its middle with "…", keeping both ends (a label's method and
// its last path segment are what tell labels apart).
func shortenMiddle(s string, width, size float64) string {
	if textWidth(s, size) <= width {
		return s
	}
	r := []rune(s)
	keep := len(r)
	for keep > 2 {
		keep--
		head := (keep + 1) / 2
		t := string(r[:head]) + "…" + string(r[len(r)-(keep-head):])
		if textWidth(t, size) <= width {
			return t
		}
	}
	return string(r[:1]) + "…"
}

// byteScale picks the binary unit for an axis whose largest value is top.
func byteScale(top float64) (float64, string) {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	div := 1.0
	i := 0
	for top/div >= 1024 && i < len(units)-1 {
		div *= 1024
		i++
	}
	return div, units[i]
}

// axisTicks are round ticks in the axis's unit: for bytes, round numbers
// of KiB, MiB or GiB rather than of bytes.
func axisTicks(lo, hi float64, n int, unit string) []float64 {
	if unit != "bytes" && unit != "bytes/s" {
		return niceTicks(lo, hi, n)
	}
	div, _ := byteScale(math.Max(math.Abs(lo), math.Abs(hi)))
	t := niceTicks(lo/div, hi/div, n)
	for i := range t {
		t[i] *= div
	}
	return t
}

// ---- scales ---------------------------------------------------------------------

type linScale struct{ d0, d1, r0, r1 float64 }

func (s linScale) pos(v float64) float64 {
	if s.d1 == s.d0 {
		return (s.r0 + s.r1) / 2
	}
	return s.r0 + (v-s.d0)/(s.d1-s.d0)*(s.r1-s.r0)
}

type tick struct {
	v     float64
	label string
}

type xScale struct {
	kind     XKind
	min, max float64
	lin      linScale
	zone     *time.Location
	loc      *locale.Locale
}

func newXScale(kind XKind, min, max float64, fr frame, zone *time.Location, loc *locale.Locale) xScale {
	if zone == nil {
		zone = time.UTC
	}
	s := xScale{kind: kind, min: min, max: max, zone: zone, loc: loc}
	if kind == Nines {
		s.lin = linScale{d0: nines(min), d1: nines(max), r0: fr.left, r1: fr.right}
	} else {
		s.lin = linScale{d0: min, d1: max, r0: fr.left, r1: fr.right}
	}
	return s
}

// nines maps a percentile to log10(1/(1−p/100)): 0 → 0, 90 → 1, 99 → 2.
func nines(p float64) float64 {
	p = math.Min(p, 99.9999)
	return -math.Log10(1 - p/100)
}

func (s xScale) pos(v float64) float64 {
	if s.kind == Nines {
		return s.lin.pos(nines(v))
	}
	return s.lin.pos(v)
}

func (s xScale) ticks() []tick {
	switch s.kind {
	case Nines:
		var out []tick
		for _, p := range []float64{0, 50, 90, 99, 99.9, 99.99, 99.999} {
			if p >= s.min-1e-9 && p <= s.max+1e-9 {
				out = append(out, tick{p, s.loc.Num(trimNum(strconv.FormatFloat(p, 'f', -1, 64))) + " %"})
			}
		}
		return out
	case Time:
		return timeTicks(s.min, s.max, 8, s.zone, s.loc)
	}
	var out []tick
	vals := niceTicks(s.min, s.max, 8)
	for _, v := range vals {
		if v >= s.min-1e-9 && v <= s.max+1e-9 {
			out = append(out, tick{v, s.loc.Num(tickLabel(v, "", vals))})
		}
	}
	return out
}

// timeTicks places clock-time ticks on round intervals.
func timeTicks(min, max float64, want int, zone *time.Location, loc *locale.Locale) []tick {
	steps := []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400}
	span := max - min
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= float64(want) {
			step = s
			break
		}
	}
	layout := "15:04"
	if step < 60 {
		layout = "15:04:05"
	}
	days := span > 2*86400
	var out []tick
	// Round in the zone of the labels, so ticks fall on whole local
	// minutes and hours.
	_, off := time.Unix(int64(min), 0).In(zone).Zone()
	o := float64(off)
	first := math.Ceil((min+o)/step)*step - o
	for v := first; v <= max+1e-9; v += step {
		t := time.Unix(int64(v), 0).In(zone)
		if days {
			out = append(out, tick{v, loc.DayClock(t)})
			continue
		}
		out = append(out, tick{v, t.Format(layout)})
	}
	return out
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step+1e-9) * step
	var out []float64
	for v := start; v <= hi+step*0.999; v += step {
		out = append(out, math.Round(v/step)*step)
		if len(out) > 4*n {
			break
		}
	}
	if len(out) < 2 {
		out = append(out, start+step)
	}
	return out
}

// tickLabel formats a tick value in its unit; all ticks of an axis share
// the magnitude chosen for the largest.
func tickLabel(v float64, unit string, all []float64) string {
	top := 0.0
	for _, t := range all {
		top = math.Max(top, math.Abs(t))
	}
	switch unit {
	case "bytes", "bytes/s":
		div, name := byteScale(top)
		suffix := " " + name
		if unit == "bytes/s" {
			suffix += "/s"
		}
		return plainNum(v/div) + suffix
	case "%":
		return plainNum(v) + " %"
	}
	switch {
	case top >= 1e9:
		return plainNum(v/1e9) + "G"
	case top >= 1e6:
		return plainNum(v/1e6) + "M"
	case top >= 1e4:
		return plainNum(v/1e3) + "k"
	}
	return plainNum(v)
}

func plainNum(v float64) string {
	if math.Abs(v) < 1e-9 {
		return "0"
	}
	return trimNum(strconv.FormatFloat(v, 'f', 3, 64))
}

func trimNum(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// ---- text -----------------------------------------------------------------------

// textWidth is the rendered width of s at size px in DejaVu Sans.
func textWidth(s string, size float64) float64 {
	n := 0.0
	for _, r := range s {
		if r >= ' ' && r <= '~' {
			n += dejaVuAdvance[r-' ']
		} else {
			n += 0.7 // letters beyond ASCII: a little over an average one
		}
	}
	return n * size
}

// dejaVuAdvance is DejaVu Sans's advance width of each printable ASCII
// character (space to '~') in ems, read from DejaVuSans.ttf (Debian's
// fonts-dejavu-core) with PIL's ImageFont.getlength at 1,000 px. It is the
// first and widest font of fontFamily, so the other fallbacks fit in what it
// measures. A rule of thumb undercounted digits ('1' as narrow as 'i') and
// '=': a Prometheus series name, "backend=127.0.0.1:38155", measured 10 %
// short and legend entries ran into each other.
var dejaVuAdvance = [95]float64{
	0.318, 0.401, 0.46, 0.838, 0.636, 0.95, 0.78, 0.275, 0.39, 0.39, 0.5, 0.838, 0.318, 0.361, 0.318, 0.337, // space … /
	0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.337, 0.337, 0.838, 0.838, 0.838, 0.531, // 0 … ?
	1.0, 0.684, 0.686, 0.698, 0.77, 0.632, 0.575, 0.775, 0.752, 0.295, 0.295, 0.656, 0.557, 0.863, 0.748, 0.787, // @ … O
	0.603, 0.787, 0.695, 0.635, 0.611, 0.732, 0.684, 0.989, 0.685, 0.611, 0.685, 0.39, 0.337, 0.39, 0.838, 0.5, // P … _
	0.5, 0.613, 0.635, 0.55, 0.635, 0.615, 0.352, 0.635, 0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612, // ` … o
	0.635, 0.635, 0.411, 0.521, 0.392, 0.634, 0.592, 0.818, 0.592, 0.592, 0.525, 0.636, 0.337, 0.636, 0.838, // p … ~
}

// fitLabel shortens a label to fit width px at 10.5 px, or drops it.
func fitLabel(s string, width float64) string {
	if textWidth(s, 10.5) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 1 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; textWidth(t, 10.5) <= width {
			if len(r) < 2 {
				return ""
			}
			return t
		}
	}
	return ""
}

func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '"':
			b.WriteString("&quot;")
		case '\'':
			b.WriteString("&#39;")
		default:
			if r < 0x20 && r != '\t' && r != '\n' {
				continue // not allowed in XML 1.0
			}
			b.WriteRune(r)
		}
	}
	return b.String()
}

func f1(v float64) string {
	if !finite(v) {
		v = 0
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
