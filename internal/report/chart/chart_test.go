package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"testing/quick"
	"time"
)

// wellFormed decodes every token of an SVG document.
func wellFormed(t *testing.T, b []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	for {
		_, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, b)
		}
	}
}

func TestSVGWellFormedAndEscaped(t *testing.T) {
	t.Parallel()
	t0 := float64(time.Date(2025, 5, 13, 11, 0, 0, 0, time.UTC).Unix())
	x := []float64{t0, t0 + 60, t0 + 120, t0 + 180, t0 + 240}
	c := &Chart{ID: "t<1>", Title: `Response "time" <script>alert(1)</script> & co`, XKind: Time,
		Y: Axis{Label: "ms", Unit: "ms"},
		Series: []Series{
			{Name: "avg <b>", X: x, Y: []float64{100, 120, math.NaN(), 130, 125}, Lo: []float64{90, 110, math.NaN(), 120, 115}, Hi: []float64{110, 130, math.NaN(), 140, 135}},
			{Name: "user", X: x, Y: []float64{10, 20, 30, 40, 50}, Stack: true},
			{Name: "sys", X: x, Y: []float64{5, 5, 5, 5, 5}, Stack: true},
		},
		Spans:   []Span{{From: t0, To: t0 + 120, Label: "step <1>"}, {From: t0 + 120, To: t0 + 240, Label: "step 2"}},
		Markers: []Marker{{X: t0}, {X: t0 + 120}, {X: t0 + 240}},
	}
	svg := c.SVG()
	wellFormed(t, svg)
	s := string(svg)
	if strings.Contains(s, "<script") || strings.Contains(s, "<b>") {
		t.Errorf("run text reached the SVG as markup")
	}
	if !strings.Contains(s, "&lt;script&gt;") {
		t.Errorf("title not escaped as text")
	}
	// The NaN splits the line into two polylines: a gap, not a zero.
	if n := strings.Count(s, "<polyline"); n != 2 {
		t.Errorf("%d polylines, want 2 (gap at NaN)", n)
	}
	// Three markers are three dark vertical lines.
	if n := strings.Count(s, `stroke="#333"`); n != 3 {
		t.Errorf("%d phase lines, want 3", n)
	}
	for _, tick := range []string{">11:00:00<", ">11:02:00<", ">11:04:00<"} {
		if !strings.Contains(s, tick) {
			t.Errorf("missing clock tick %s", tick)
		}
	}
}

func TestEmptyChartSaysNoData(t *testing.T) {
	t.Parallel()
	c := &Chart{Title: "Nothing", Empty: "no samples"}
	svg := c.SVG()
	wellFormed(t, svg)
	if !strings.Contains(string(svg), "no samples") {
		t.Errorf("empty chart does not say why")
	}
}

func TestReduceWeightedMeanIsExact(t *testing.T) {
	t.Parallel()
	// Three seconds with means 100, 200, 400 ms over 1, 3 and 0 samples
	// (the last second has no sample: NaN) fall in one 10 s bucket: the
	// exact average is (100·1 + 200·3) / 4 = 175.
	x := []float64{0, 1, 2, 15}
	y := []float64{100, 200, math.NaN(), 50}
	w := []float64{1, 3, 0, 2}
	r := Reduce(x, y, w, 0, 20, 10)
	if len(r.Mean) != 2 || r.Mean[0] != 175 || r.Lo[0] != 100 || r.Hi[0] != 200 || r.Mean[1] != 50 {
		t.Errorf("Reduce = %+v", r)
	}
	if !r.Reduced {
		t.Errorf("two points in a bucket should count as reduced")
	}
	empty := Reduce([]float64{0}, []float64{1}, nil, 0, 30, 10)
	if !math.IsNaN(empty.Mean[2]) {
		t.Errorf("an empty bucket must be a gap, got %v", empty.Mean[2])
	}
}

// TestReduceBounds checks with random series that every bucket's mean
// lies within its envelope and the number of buckets is bounded.
func TestReduceBounds(t *testing.T) {
	t.Parallel()
	f := func(vals []float64, span uint16) bool {
		n := len(vals)
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(i)
			if math.IsNaN(vals[i]) || math.IsInf(vals[i], 0) {
				vals[i] = 0
			}
		}
		w := BucketWidth(float64(n)+1, 1, 50)
		r := Reduce(x, vals, nil, 0, float64(n)+1, w)
		if len(r.Mean) > 51 {
			return false
		}
		for i := range r.Mean {
			if math.IsNaN(r.Mean[i]) {
				continue
			}
			if r.Mean[i] < r.Lo[i]-1e-6*math.Abs(r.Lo[i]) || r.Mean[i] > r.Hi[i]+1e-6*math.Abs(r.Hi[i]) {
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 200}); err != nil {
		t.Error(err)
	}
}

func TestTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi float64
		unit   string
		want   string
	}{
		{0, 1234, "ms", "0,250,500,750,1000,1250"},
		{0, 2.4e9, "bytes", "0 GiB,0.5 GiB,1 GiB,1.5 GiB,2 GiB,2.5 GiB"},
		{0, 100, "%", "0 %,20 %,40 %,60 %,80 %,100 %"},
	} {
		ts := axisTicks(tc.lo, tc.hi, 5, tc.unit)
		var got []string
		for _, v := range ts {
			got = append(got, tickLabel(v, tc.unit, ts))
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("ticks(%v, %v, %s) = %s, want %s", tc.lo, tc.hi, tc.unit, strings.Join(got, ","), tc.want)
		}
	}
}

// TestLegendNeverRunsPastTheChart: series with 80-character labels get a
// legend whose every entry ends inside the chart; shortened names keep
// their full text in a tooltip, and the plot moves down to make room.
func TestLegendNeverRunsPastTheChart(t *testing.T) {
	t.Parallel()
	long := "GET /api/v2/patients/{id}/allergies/intolerances?include=reactions&sort=-date&x="
	if len([]rune(long)) != 80 {
		t.Fatalf("label is %d characters", len([]rune(long)))
	}
	for _, n := range []int{1, 2, 5} {
		c := &Chart{Title: "Response time per label", XKind: Linear, Y: Axis{Unit: "ms"}}
		for i := range n {
			c.Series = append(c.Series, Series{Name: fmt.Sprintf("%s%d", long[:79], i), X: []float64{0, 1, 2}, Y: []float64{1, 2, float64(3 + i)}})
		}
		svg := string(c.SVG())
		wellFormed(t, []byte(svg))
		w := 880.0
		re := regexp.MustCompile(`<text x="([\d.]+)" y="([\d.]+)" fill="#333">([^<]*)</text>`)
		ms := re.FindAllStringSubmatch(svg, -1)
		if len(ms) != n {
			t.Fatalf("%d series: %d legend texts", n, len(ms))
		}
		for _, m := range ms {
			x, _ := strconv.ParseFloat(m[1], 64)
			name := strings.ReplaceAll(m[3], "&amp;", "&")
			if end := x + textWidth(name, 11); x < 0 || end > w {
				t.Errorf("%d series: legend entry %q spans %.0f–%.0f px of a %.0f px chart", n, name, x, end, w)
			}
		}
		if !strings.Contains(svg, "<title>"+esc(long[:79])) {
			t.Errorf("%d series: the full label is not in a tooltip", n)
		}
	}
}

// Phase labels sit in the plot's top 16 px. A series along its ceiling (a
// pool saturated at 12 connections) used to run through them; the axis now
// leaves that band free, except where a percent axis would pass 100 for it.
func TestPhaseLabelsAboveTheData(t *testing.T) {
	t.Parallel()
	frameRe := regexp.MustCompile(`<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="[\d.]+" fill="none" stroke="#999"`)
	lineRe := regexp.MustCompile(`<polyline points="([^"]+)"`)
	highest := func(t *testing.T, c *Chart) (top, line float64) {
		svg := string(c.SVG())
		wellFormed(t, []byte(svg))
		f, l := frameRe.FindStringSubmatch(svg), lineRe.FindStringSubmatch(svg)
		if f == nil || l == nil {
			t.Fatalf("no plot frame or line in %s", svg)
		}
		top, _ = strconv.ParseFloat(f[1], 64)
		line = math.Inf(1)
		for _, pt := range strings.Fields(l[1]) {
			y, _ := strconv.ParseFloat(pt[strings.IndexByte(pt, ',')+1:], 64)
			line = math.Min(line, y)
		}
		return top, line
	}
	spans := []Span{{From: 0, To: 5, Label: "1: 2 nodes x 7 threads"}, {From: 5, To: 10, Label: "2: 2 nodes x 10 threads"}}
	for _, tc := range []struct {
		name   string
		unit   string
		ceil   float64
		spans  []Span
		labels bool // the band must be kept free
	}{
		{"saturated pool", "", 12, spans, true},
		{"no phases", "", 12, nil, false},
		{"ms", "ms", 400, spans, true},
		{"CPU at 100 %", "%", 100, spans, false},
		{"CPU at 60 %", "%", 60, spans, true},
	} {
		c := &Chart{Title: tc.name, XKind: Linear, Y: Axis{Unit: tc.unit}, Spans: tc.spans}
		c.Series = []Series{{Name: "a", X: []float64{0, 2, 4, 6, 8, 10}, Y: []float64{tc.ceil / 4, tc.ceil, tc.ceil, tc.ceil, tc.ceil, tc.ceil}}}
		top, line := highest(t, c)
		if tc.labels && line < top+16 {
			t.Errorf("%s: the line reaches %.1f px, %.1f px under the plot's top: into the phase labels", tc.name, line, line-top)
		}
		if !tc.labels && line > top+16 {
			t.Errorf("%s: the line stays %.1f px under the plot's top: headroom where none was due", tc.name, line-top)
		}
	}
}
