// Package historydoc writes the history report: one document over the
// stored runs of `plateau history report` — per series a chart over the
// runs with the releases marked and the change points drawn, the table of
// change points with their before and after means and significance, and
// the latest run against the last stable segment — as HTML and Markdown
// through the run report's own document model, charts and writers
// (internal/report/doc, chart, html, markdown), and history.json beside
// them (the history.Analysis).
package historydoc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/html"
	"github.com/plateau-perf/plateau/internal/report/markdown"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// File names written by Write.
const (
	HTMLFile     = "history.html"
	MarkdownFile = "history.md"
	ChartDir     = "history-charts"
	JSONFile     = "history.json"
)

// ReleaseTag is the tag whose values mark releases on the charts.
const ReleaseTag = "release"

// Build returns the document for an analysis of runs (oldest first, as
// history.Analyze was given them), in English.
func Build(a *history.Analysis, runs []*history.Run, tool string, now time.Time) *doc.Document {
	return BuildIn(a, runs, tool, now, nil)
}

// BuildIn is Build in the language loc (nil is English): its fixed words
// from the catalogue, its numbers and chart ticks as the language writes
// them.
func BuildIn(a *history.Analysis, runs []*history.Run, tool string, now time.Time, loc *locale.Locale) *doc.Document {
	l := loc
	d := &doc.Document{Title: l.Word("Results history"), Generated: now, Tool: tool,
		Origin: l.T("from the results history (%s stored runs)", strconv.Itoa(len(runs))), Lang: loc}
	if len(runs) == 0 {
		d.Subtitle = l.Word("No runs stored")
		d.Status = doc.Verdict{Level: doc.NoData, Text: l.Word("No runs in the history match.")}
		d.Sections = append(d.Sections, doc.Section{ID: "summary", Title: l.Word("Summary"),
			Blocks: []doc.Block{&doc.Para{Text: l.Word("The history holds no run for this selection: add runs with plateau history add.")}}})
		return d
	}
	plans := map[string]bool{}
	var planList []string
	for _, r := range runs {
		if !plans[r.Plan] {
			plans[r.Plan] = true
			planList = append(planList, r.Plan)
		}
	}
	d.Title = l.T("Results history: %s", strings.Join(planList, ", "))
	from, to := runs[0].Start.Format("2006-01-02 15:04"), runs[len(runs)-1].Start.Format("2006-01-02 15:04 MST")
	if len(runs) == 1 {
		d.Subtitle = l.T("1 run at %s", to)
	} else {
		d.Subtitle = l.T("%d runs from %s to %s", len(runs), from, to)
	}
	worse := a.Worse()
	nCP := 0
	for _, s := range a.Series {
		nCP += len(s.ChangePoints)
	}
	latest, comparable := -1, 0
	for i, r := range runs {
		if history.Comparable(r) {
			latest = i
			comparable++
		}
	}
	switch {
	case comparable < 2:
		d.Status = doc.Verdict{Level: doc.NoData, Text: l.T("%d comparable runs stored (not interrupted, a request succeeded): nothing to compare the latest with yet.", comparable)}
	case len(worse) > 0:
		d.Status = doc.Verdict{Level: doc.Fail, Text: l.T("The latest run (%s) is significantly worse than the last stable segment in %d of %d series.", runName(l, runs, latest), len(worse), len(a.Series))}
	default:
		d.Status = doc.Verdict{Level: doc.OK, Text: l.T("The latest run (%s) is not significantly worse than the last stable segment in any of %d series.", runName(l, runs, latest), len(a.Series))}
	}
	summary := []doc.Block{&doc.Para{Text: l.T("%d change points found in %d series over %d runs (E-Divisive means, permutation test at α = %s, minimum effect %s %%). A run is judged worse when it lies outside the last stable segment's spread at α and differs by more than %s %%.",
		nCP, len(a.Series), len(runs), l.Num(fmtNum(a.Options.Alpha)), l.Num(fmtNum(math.Max(a.Options.MinChangePct, 0))), l.Num(fmtNum(a.Options.ThresholdPct)))}}
	if rel := releases(runs); len(rel) > 0 {
		var names []string
		for _, r := range rel {
			names = append(names, l.T("%s (runs %d–%d)", r.Label, int(r.From+0.5), int(r.To-0.5)))
		}
		summary = append(summary, &doc.Para{Text: l.T("Releases: %s.", strings.Join(names, ", "))})
	}
	if left := len(runs) - comparable; left > 0 {
		summary = append(summary, &doc.Para{Text: l.T("%d of the runs are in no series: interrupted, or no request of them succeeded (listed under Runs).", left)})
	}
	d.Sections = append(d.Sections, doc.Section{ID: "summary", Title: l.Word("Summary"), Blocks: summary})
	d.Sections = append(d.Sections, latestSection(l, a, runs))
	d.Sections = append(d.Sections, changeSection(l, a, runs))
	d.Sections = append(d.Sections, chartSection(l, a, runs))
	d.Sections = append(d.Sections, runsSection(l, runs))
	return d
}

// seriesName names a series in the document's language: history's own
// name in English ("checkout p95 (ms)"), else from its metric, label,
// phase and target.
func seriesName(l *locale.Locale, s *history.Series) string {
	if l.English() {
		return s.Name
	}
	where := s.Label
	if s.Phase != history.WholeRun && s.Phase != "" {
		where += " · " + s.Phase
	}
	var n string
	switch s.Metric {
	case history.MetricP95:
		n = where + " p95"
	case history.MetricMean:
		n = l.T("%s mean", where)
	case history.MetricErrorPct:
		n = l.T("%s errors", where)
	case history.MetricThroughput:
		n = l.T("%s throughput", where)
	case history.MetricKneeThroughput:
		n = l.Word("capacity knee throughput")
	case history.MetricCPU:
		n = s.Target + " CPU"
	case history.MetricCPUPerRequest:
		n = l.T("%s CPU per request", s.Target)
	default:
		return s.Name
	}
	if s.Unit != "" {
		n += " (" + l.Word(s.Unit) + ")"
	}
	return n
}

// runName is a run as the document names it: its number (1 = oldest),
// and its release and build tags when it has them.
func runName(l *locale.Locale, runs []*history.Run, i int) string {
	s := l.T("run %d", i+1)
	var tags []string
	for _, k := range []string{ReleaseTag, "build"} {
		if v := runs[i].Tags[k]; v != "" {
			tags = append(tags, k+" "+v)
		}
	}
	if len(tags) > 0 {
		s += " (" + strings.Join(tags, ", ") + ")"
	}
	return s
}

func latestSection(l *locale.Locale, a *history.Analysis, runs []*history.Run) doc.Section {
	t := &doc.Table{Caption: l.Word("The latest run against the last stable segment before it"),
		Columns: []doc.Column{{Name: l.Word("Series")}, {Name: l.Word("Latest"), Align: doc.Right}, {Name: l.Word("Segment median ± spread"), Align: doc.Right}, {Name: l.Word("Mean ± sd"), Align: doc.Right},
			{Name: l.Word("Runs"), Align: doc.Right}, {Name: l.Word("Change"), Align: doc.Right}, {Name: "p-value", Align: doc.Right}, {Name: l.Word("Verdict")}},
		Note: l.Word("Stable segment: the runs since the last change point before the latest run, their median ± spread (1.4826 × the median absolute deviation, so one noisy run does not widen it); the change is against the median. p-value: how likely a run this far from the segment's median is, were it one more run of the segment (Student's t prediction interval).")}
	for _, s := range a.Series {
		j := s.Latest
		if j == nil {
			continue
		}
		verdict, lvl := l.Word("same level"), doc.OK
		switch {
		case j.Worse:
			verdict, lvl = l.Word("worse"), doc.Fail
		case j.PValue <= a.Options.Alpha && math.Abs(j.ChangePct) > a.Options.ThresholdPct && !j.Worse:
			verdict, lvl = l.Word("better"), doc.OK
		case j.PValue <= a.Options.Alpha:
			verdict, lvl = l.Word("within the threshold"), doc.Info
		}
		first, last := s.Points[j.SegmentFrom].Run, s.Points[j.SegmentTo-1].Run
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: seriesName(l, s)}, {Text: l.Num(fmtVal(j.Value))},
			{Text: l.Num(fmtVal(j.SegmentMedian)) + " ± " + l.Num(fmtVal(j.SegmentSpread))}, {Text: l.Num(fmtVal(j.SegmentMean)) + " ± " + l.Num(fmtVal(j.SegmentSD))},
			{Text: fmt.Sprintf("%d–%d", first+1, last+1)},
			{Text: l.Num(fmtPct(j.ChangePct)), Level: lvl}, {Text: l.Num(fmtP(j.PValue))}, {Text: verdict, Level: lvl}}})
	}
	blocks := []doc.Block{}
	if len(t.Rows) == 0 {
		blocks = append(blocks, &doc.Para{Text: l.Word("No series has two runs yet.")})
	} else {
		blocks = append(blocks, t)
	}
	return doc.Section{ID: "latest", Title: l.Word("Latest run"), Blocks: blocks}
}

func changeSection(l *locale.Locale, a *history.Analysis, runs []*history.Run) doc.Section {
	t := &doc.Table{Caption: l.Word("Change points: where a series moved to a new level and stayed"),
		Columns: []doc.Column{{Name: l.Word("Series")}, {Name: l.Word("From run")}, {Name: l.Word("Before"), Align: doc.Right}, {Name: l.Word("After"), Align: doc.Right},
			{Name: l.Word("Change"), Align: doc.Right}, {Name: "p-value", Align: doc.Right}, {Name: l.Word("Direction")}},
		Note: l.Word("Before and After are the means of the segments on either side, bounded by the neighbouring change points; the count of runs in each is in brackets. p-value: the permutation test's.")}
	for _, s := range a.Series {
		for _, cp := range s.ChangePoints {
			dir, lvl := l.Word("better"), doc.OK
			if cp.Worse {
				dir, lvl = l.Word("worse"), doc.Fail
			}
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: seriesName(l, s)}, {Text: runName(l, runs, cp.Run)},
				{Text: fmt.Sprintf("%s (%d)", l.Num(fmtVal(cp.BeforeMean)), cp.BeforeRuns)}, {Text: fmt.Sprintf("%s (%d)", l.Num(fmtVal(cp.AfterMean)), cp.AfterRuns)},
				{Text: l.Num(fmtPct(cp.ChangePct)), Level: lvl}, {Text: l.Num(fmtP(cp.PValue))}, {Text: dir, Level: lvl}}})
		}
	}
	if len(t.Rows) == 0 {
		return doc.Section{ID: "change-points", Title: l.Word("Change points"), Blocks: []doc.Block{
			&doc.Verdict{Level: doc.OK, Text: l.T("No series changed level over these %d runs.", len(runs))}}}
	}
	return doc.Section{ID: "change-points", Title: l.Word("Change points"), Blocks: []doc.Block{t}}
}

func chartSection(l *locale.Locale, a *history.Analysis, runs []*history.Run) doc.Section {
	rel := releases(runs)
	var blocks []doc.Block
	for i, s := range a.Series {
		name := seriesName(l, s)
		c := &chart.Chart{ID: "h" + strconv.Itoa(i), Title: name, XKind: chart.Linear, XLabel: l.Word("run (oldest first)"),
			XMin: 0.5, XMax: float64(len(runs)) + 0.5, Y: chart.Axis{Label: name, Unit: chartUnit(s.Unit)}, Spans: rel, Height: 240, Loc: l}
		pts := chart.Series{Name: l.Word("value"), Style: chart.LinePoints}
		for _, p := range s.Points {
			pts.X = append(pts.X, float64(p.Run+1))
			pts.Y = append(pts.Y, p.Value)
		}
		// The segments' means as dashed steps, broken between segments.
		seg := chart.Series{Name: l.Word("segment mean"), Dash: true, Color: "#888"}
		from := 0
		var cps []string
		for k := 0; k <= len(s.ChangePoints); k++ {
			to := len(s.Points)
			if k < len(s.ChangePoints) {
				to = s.ChangePoints[k].Point
				cp := s.ChangePoints[k]
				c.Markers = append(c.Markers, chart.Marker{X: float64(cp.Run+1) - 0.5})
				cps = append(cps, l.T("run %d (%s)", cp.Run+1, l.Num(fmtPct(cp.ChangePct))))
			}
			var sum float64
			for _, p := range s.Points[from:to] {
				sum += p.Value
			}
			m := sum / float64(to-from)
			seg.X = append(seg.X, float64(s.Points[from].Run+1)-0.4, float64(s.Points[to-1].Run+1)+0.4, math.NaN())
			seg.Y = append(seg.Y, m, m, math.NaN())
			from = to
		}
		c.Series = []chart.Series{pts, seg}
		caption := l.Word("No change point.")
		if len(cps) > 0 {
			caption = l.T("Vertical lines: change points before %s.", strings.Join(cps, ", "))
		}
		if len(rel) > 0 {
			caption += l.Word(" Shaded bands: releases.")
		}
		blocks = append(blocks, &doc.Figure{Name: fmt.Sprintf("series-%03d", i), Title: name, Caption: caption, SVG: c.SVG()})
	}
	if len(blocks) == 0 {
		blocks = append(blocks, &doc.Para{Text: l.Word("No series: the runs hold no label figures.")})
	}
	return doc.Section{ID: "series", Title: l.Word("Series"), Blocks: blocks}
}

// chartUnit maps a series unit to the chart's tick unit.
func chartUnit(u string) string {
	switch u {
	case "ms", "%", "req/s":
		return u
	}
	return ""
}

// releases are the spans of consecutive runs with one release tag, in run
// numbers (1 = oldest), for the charts' bands.
func releases(runs []*history.Run) []chart.Span {
	var out []chart.Span
	for i, r := range runs {
		v := r.Tags[ReleaseTag]
		if v == "" {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Label == v && int(out[n-1].To-0.5) == i {
			out[n-1].To = float64(i+1) + 0.5
			continue
		}
		out = append(out, chart.Span{From: float64(i+1) - 0.5, To: float64(i+1) + 0.5, Label: v})
	}
	return out
}

func runsSection(l *locale.Locale, runs []*history.Run) doc.Section {
	t := &doc.Table{Caption: l.Word("The runs, oldest first"),
		Columns: []doc.Column{{Name: l.Word("Run"), Align: doc.Right}, {Name: l.Word("Start")}, {Name: "Id"}, {Name: l.Word("Plan")}, {Name: l.Word("Tags")}, {Name: l.Word("Verdict")}}}
	for i, r := range runs {
		var tags []string
		for _, k := range sortedKeys(r.Tags) {
			tags = append(tags, k+"="+r.Tags[k])
		}
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: strconv.Itoa(i + 1)}, {Text: r.Start.Format("2006-01-02 15:04:05Z")},
			{Text: r.ID}, {Text: r.Plan}, {Text: strings.Join(tags, " ")}, {Text: verdictWord(l, r.Verdict)}}})
	}
	return doc.Section{ID: "runs", Title: l.Word("Runs"), Blocks: []doc.Block{t}}
}

// verdictWord is a stored run's verdict (passed, failed, could not run …)
// in the document's language; one this version does not know as stored.
func verdictWord(l *locale.Locale, v string) string {
	switch v {
	case analysis.VerdictPassed:
		return l.Word("passed")
	case analysis.VerdictFailed:
		return l.Word("failed")
	case analysis.VerdictNoRequirements:
		return l.Word("no requirements")
	case analysis.VerdictInvalid:
		return l.Word("invalid")
	case analysis.VerdictInterrupted:
		return l.Word("interrupted")
	case analysis.VerdictNotRun:
		return l.Word("could not run")
	}
	return v
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func fmtVal(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func fmtPct(v float64) string {
	return fmt.Sprintf("%+.1f %%", v)
}

func fmtP(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

// Write writes history.html, history.md (charts under history-charts/) and
// history.json into dir, and returns their paths.
func Write(dir string, d *doc.Document, a *history.Analysis) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	b, err := html.Render(d)
	if err != nil {
		return nil, err
	}
	hp := filepath.Join(dir, HTMLFile)
	if err := rundir.WriteFileAtomic(hp, b); err != nil {
		return nil, fmt.Errorf("writing %s: %w", hp, err)
	}
	files, err := markdown.WriteAs(dir, MarkdownFile, ChartDir, d)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(a); err != nil {
		return nil, fmt.Errorf("encoding history.json: %w", err)
	}
	jp := filepath.Join(dir, JSONFile)
	if err := rundir.WriteFileAtomic(jp, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("writing %s: %w", jp, err)
	}
	return append(append([]string{hp}, files...), jp), nil
}
