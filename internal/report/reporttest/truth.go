package reporttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
)

// The truth checks: a sentence states only what its data holds, and no
// verdict word contradicts the sign of its own number.

// timeFigureRe finds a stated response-time figure ("average 12 ms",
// "p95 2,206 ms", "median 3 ms").
var timeFigureRe = regexp.MustCompile(`\b(?:average|mean|median|min|max|p\d{2}(?:\.\d)?)\s+[\d,.]+\s*(?:ms|s)\b`)

// MeasuredWithoutData returns the offending text when a run whose data hold
// no response times (summary.json TOTAL row no_times) states a
// response-time figure, or calls response time measured.
func MeasuredWithoutData(line string, noTimes bool) string {
	if !noTimes {
		return ""
	}
	if m := timeFigureRe.FindString(line); m != "" {
		return m
	}
	if i := strings.Index(strings.ToLower(line), "response time measured"); i >= 0 {
		return line[i : i+len("response time measured")]
	}
	return ""
}

// signRes pair a verdict word with a number of the opposite sign.
var signRes = []*regexp.Regexp{
	regexp.MustCompile(`\b(?:rose|grew|increased|slower|above|higher|worse|regressed)\b(?: by)?\s+[-−]\d[\d,.]*`),
	regexp.MustCompile(`\b(?:fell|dropped|decreased|faster|below|lower|better|improved)\b(?: by)?\s+\+\d[\d,.]*`),
	regexp.MustCompile(`\boff by\s+[-−]\d[\d,.]*`),
	regexp.MustCompile(`\b(?:off|rose|fell|grew) by\s+[-−+]?0(?:\.0+)?\s*(?:ms|%|s\b)`),
}

// SignAgainstWord returns the offending text when a verdict word stands
// against the sign of its number ("rose by -3 ms", "off by -0.019 ms") or a
// problem is stated with a size of zero ("off by 0.000 ms").
func SignAgainstWord(line string) string {
	for _, re := range signRes {
		if m := re.FindString(line); m != "" {
			return m
		}
	}
	return ""
}

// labelRow is the part of a summary.json label row the checks read.
type labelRow struct {
	label              string
	noTimes            bool
	min, max           float64
	p50, p90, p95, p99 float64
}

func labelRows(sum any) []labelRow {
	m, _ := sum.(map[string]any)
	ls, _ := m["labels"].([]any)
	var out []labelRow
	for _, l := range ls {
		r, _ := l.(map[string]any)
		f := func(k string) float64 {
			if v, ok := r[k].(float64); ok {
				return v
			}
			return math.NaN() // not stated: nothing to judge
		}
		nt, _ := r["no_times"].(bool)
		name, _ := r["label"].(string)
		out = append(out, labelRow{label: name, noTimes: nt, min: f("min_ms"), max: f("max_ms"),
			p50: f("p50_ms"), p90: f("p90_ms"), p95: f("p95_ms"), p99: f("p99_ms")})
	}
	return out
}

// PercentileNote is the phrase a report uses when a quoted percentile lies
// outside the measured [min, max] (a source tool's rounded figure).
const PercentileNote = "outside the measured range"

// percentilesOutside lists the label rows whose quoted percentiles lie
// outside [min, max] without the report saying so.
func percentilesOutside(sum any, md string) []string {
	var out []string
	for _, r := range labelRows(sum) {
		if r.noTimes || r.max == 0 || math.IsNaN(r.max) || math.IsNaN(r.min) {
			continue
		}
		for _, p := range []struct {
			name string
			v    float64
		}{{"p50", r.p50}, {"p90", r.p90}, {"p95", r.p95}, {"p99", r.p99}} {
			if !math.IsNaN(p.v) && (p.v < r.min-1e-9 || p.v > r.max+1e-9) && !strings.Contains(md, PercentileNote) {
				out = append(out, fmt.Sprintf("label %s: %s %g ms outside [min %g, max %g] without a note", r.label, p.name, p.v, r.min, r.max))
			}
		}
	}
	return out
}

// totalNoTimes reports whether summary.json's TOTAL row has no times.
func totalNoTimes(sum any) bool {
	rs := labelRows(sum)
	return len(rs) > 0 && rs[len(rs)-1].noTimes
}

// A quantity a report states both in a sentence and in a table.
type quantity string

const (
	qThroughput quantity = "throughput"
	qErrorPct   quantity = "error %"
	qP90        quantity = "p90"
	qP95        quantity = "p95"
	qP99        quantity = "p99"
	qAverage    quantity = "average"
	qMedian     quantity = "median"
	qMin        quantity = "min"
	qMax        quantity = "max"
	qRequests   quantity = "requests"
)

// figure is one stated number with the half-width of its rounding: "0.22"
// stands for [0.215, 0.225].
type figure struct {
	v, tol float64
}

// parseFigure reads a number as printed ("1,413", "0.22", "~200"), with
// the tolerance its printed digits give it.
func parseFigure(s string) (figure, bool) {
	approx := strings.HasPrefix(s, "~")
	s = strings.ReplaceAll(strings.TrimPrefix(s, "~"), ",", "")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return figure{}, false
	}
	tol := 0.5
	if i := strings.IndexByte(s, '.'); i >= 0 {
		tol = 0.5 * math.Pow(10, -float64(len(s)-i-1))
	}
	if approx { // two significant digits
		tol = math.Max(tol, 0.5*math.Pow(10, math.Floor(math.Log10(math.Max(v, 1e-9)))-1))
	}
	return figure{v, tol}, true
}

// columnQuantity names the quantity a table column holds, "" for one the
// truth checks do not compare ("Per-phase requirement" columns name their
// quantity by the requirement's expression: "p95(response_time) < 400ms").
func columnQuantity(h string) quantity {
	h = strings.ToLower(strings.TrimSpace(h))
	switch {
	case strings.HasPrefix(h, "p90"):
		return qP90
	case strings.HasPrefix(h, "p95"):
		return qP95
	case strings.HasPrefix(h, "p99") && !strings.HasPrefix(h, "p99."):
		return qP99
	// Each quantity also by its Danish column name (internal/locale/da.go),
	// so a Danish report's tables are read as well.
	case strings.HasPrefix(h, "average") || strings.HasPrefix(h, "avg(") || strings.HasPrefix(h, "mean") || strings.HasPrefix(h, "gennemsnit"):
		return qAverage
	case strings.HasPrefix(h, "median"):
		return qMedian
	case strings.HasPrefix(h, "min "):
		return qMin
	case strings.HasPrefix(h, "max ") || strings.HasPrefix(h, "maks "):
		return qMax
	case strings.HasPrefix(h, "error %") || strings.HasPrefix(h, "error_rate") || h == "errors %" || strings.HasPrefix(h, "% of requests") ||
		strings.HasPrefix(h, "fejl %") || strings.HasPrefix(h, "% af kald"):
		return qErrorPct
	case strings.Contains(h, "req/s") || strings.HasPrefix(h, "throughput") || h == "achieved /s" || h == "planned /s" ||
		strings.Contains(h, "kald/s") || h == "opnået /s" || h == "planlagt /s":
		return qThroughput
	case h == "samples" || h == "requests" || h == "antal kald":
		return qRequests
	}
	return ""
}

// Tables holds, per quantity, every figure the report's tables state.
type Tables map[quantity][]figure

// Rows holds, per row name (a table's first cell: a label, a phase),
// per quantity, the figures of every row with that name.
type Rows map[string]Tables

var cellNumRe = regexp.MustCompile(`~?\d[\d,]*(?:\.\d+)?`)

// ParseTables reads every Markdown table of a report and files the
// figures of its columns by quantity.
func ParseTables(md string) Tables {
	t, _ := parseTables(md)
	return t
}

// ParseRows is ParseTables by row name.
func ParseRows(md string) Rows {
	_, r := parseTables(md)
	return r
}

func parseTables(md string) (Tables, Rows) {
	out, rows := Tables{}, Rows{}
	unescape := strings.NewReplacer(`\_`, "_", `\~`, "~", `\*`, "*", `\#`, "#", "&lt;", "<", "&gt;", ">", "&amp;", "&", "**", "")
	var cols []quantity
	prevHeader := ""
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			cols, prevHeader = nil, ""
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "|:--") {
			// The row above was the header.
			hs := strings.Split(strings.Trim(prevHeader, "|"), "|")
			cols = make([]quantity, len(hs))
			for i, h := range hs {
				cols[i] = columnQuantity(unescape.Replace(h))
			}
			continue
		}
		if cols == nil {
			prevHeader = line
			continue
		}
		name := strings.TrimSpace(unescape.Replace(cells[0]))
		for i, c := range cells {
			if i >= len(cols) || cols[i] == "" {
				continue
			}
			c = unescape.Replace(c)
			if n := cellNumRe.FindString(c); n != "" {
				if f, ok := parseFigure(n); ok {
					out[cols[i]] = append(out[cols[i]], f)
					if name != "" {
						if rows[name] == nil {
							rows[name] = Tables{}
						}
						rows[name][cols[i]] = append(rows[name][cols[i]], f)
					}
				}
			}
		}
	}
	return out, rows
}

// sentenceFigures find a quantity named in a sentence with its number, in
// an English report's words or a Danish one's (internal/locale/da.go; its
// numbers read the English way through Delocalize).
var sentenceFigures = []struct {
	q  quantity
	re *regexp.Regexp
}{
	{qP90, regexp.MustCompile(`\b(?:p90|90th percentile(?: response time)?)\s+(~?\d[\d,]*(?:\.\d+)?) ms\b`)},
	{qP95, regexp.MustCompile(`\b(?:p95|95th percentile(?: response time)?|95-percentil(?: svartid)?)\s+(~?\d[\d,]*(?:\.\d+)?) ms\b`)},
	{qP99, regexp.MustCompile(`\b(?:p99|99th percentile(?: response time)?)\s+(~?\d[\d,]*(?:\.\d+)?) ms\b`)},
	{qAverage, regexp.MustCompile(`\b(?:[Aa]verage|[Mm]ean|[Gg]ennemsnit(?:lig svartid)?)(?: response time)?\s+(~?\d[\d,]*(?:\.\d+)?) ms\b`)},
	{qMedian, regexp.MustCompile(`\b[Mm]edian\s+(~?\d[\d,]*(?:\.\d+)?) ms\b`)},
	{qMin, regexp.MustCompile(`\bmin\s+(~?\d[\d,]*(?:\.\d+)?) ms\b`)},
	{qMax, regexp.MustCompile(`\b(?:max|maks)\s+(~?\d[\d,]*(?:\.\d+)?) ms\b`)},
	{qErrorPct, regexp.MustCompile(`\b(?:[Ee]rror rate|[Ff]ejlprocent)\s+(\d[\d,]*(?:\.\d+)?) %`)},
	{qErrorPct, regexp.MustCompile(`\berrors? in [\d,]+ requests \((\d[\d,]*(?:\.\d+)?) %\)`)},
	{qErrorPct, regexp.MustCompile(`\bfejl i [\d,]+ kald \((\d[\d,]*(?:\.\d+)?) %\)`)},
	{qThroughput, regexp.MustCompile(`(?:^|[^\d,.~])(~?\d[\d,]*(?:\.\d+)?) req/s\b`)},
	{qRequests, regexp.MustCompile(`(?:^|[^\d.,])(\d[\d,]*) requests (?:in|over) [^f]`)},
	{qRequests, regexp.MustCompile(`\bof (\d[\d,]*) requests\b`)},
	{qRequests, regexp.MustCompile(`(?:^|[^\d.,])(\d[\d,]*) kald (?:i|over|på) [^f]`)},
}

// notMeasured reports whether the text before a figure makes it a limit
// or a prediction rather than a measurement ("within the requirement >
// 5.0 req/s", "predicted peak 41.5 req/s").
func notMeasured(before string) bool {
	b := strings.TrimRight(before, " ~")
	if strings.HasSuffix(b, ">") || strings.HasSuffix(b, "<") || strings.HasSuffix(b, "=") || strings.HasSuffix(b, "≥") || strings.HasSuffix(b, "≤") {
		return true
	}
	words := strings.Fields(b)
	for i := len(words) - 1; i >= 0 && i >= len(words)-2; i-- {
		switch strings.Trim(words[i], ",;:(") {
		case "predicted", "predicts", "limit", "target", "planned", "asked", "approach", // a fit's asymptote: "would approach ~460 req/s"
			"forudsagt", "grænse", "mål", "planlagt", "ønskede", "nærme": // the same in a Danish report ("ville nærme sig ~460 kald/s")
			return true
		}
	}
	return false
}

// AgreesWithTables returns the first figure of the sentence that names a
// quantity the report's tables also state, yet matches none of their
// figures of that quantity at the precision either prints ("p95 441 ms"
// where the table says 440, "error rate 0.3 %" where it says 0.22 %). A
// quantity no table states is not judged here.
func AgreesWithTables(line string, t Tables) string {
	for _, sf := range sentenceFigures {
		cells := t[sf.q]
		if len(cells) == 0 {
			continue
		}
		for _, ix := range sf.re.FindAllStringSubmatchIndex(line, -1) {
			m := []string{line[ix[0]:ix[1]], line[ix[2]:ix[3]]}
			if notMeasured(line[:ix[2]]) {
				continue
			}
			f, ok := parseFigure(m[1])
			if !ok {
				continue
			}
			agree := false
			for _, c := range cells {
				// The same value prints the same under one formatting
				// rule; a figure printed coarser is the finer one rounded.
				if math.Abs(c.v-f.v) <= math.Max(c.tol, f.tol)*1.0001 {
					agree = true
					break
				}
			}
			if !agree {
				return string(sf.q) + ": " + strings.TrimSpace(m[0])
			}
		}
	}
	return ""
}

// holdsClaim is a statement a report may make only when run.json's holds
// say its data has the quantity.
type holdsClaim struct {
	field string // the holds field that must be true
	re    *regexp.Regexp
}

var holdsClaims = []holdsClaim{
	{"planned_load", regexp.MustCompile(`(?i)planned against achieved`)},
	{"co_correction", regexp.MustCompile(`(?i)coordinated omission corrected|from intended start|from the intended send time`)},
	{"generator_environment", regexp.MustCompile(`Environment \(load generator\)`)},
	{"think_time", regexp.MustCompile(`Little's law at |did not deliver the load`)},
}

// HoldsDefects checks a report (its Markdown) against run.json's record of
// what the data holds: no response time stated or called measured without
// durations, no planned load judged without one, no coordinated-omission
// correction claimed where none was made, no generator environment for
// data that did not record it, no Little's-law verdict on the generator
// without the think time. A run.json without holds (written before the
// field) is judged by its source kind's defaults.
func HoldsDefects(md, runJSON []byte) ([]string, error) {
	var run struct {
		SourceKind string          `json:"source_kind"`
		Holds      map[string]bool `json:"holds"`
	}
	if err := json.Unmarshal(runJSON, &run); err != nil {
		return nil, fmt.Errorf("run.json: %w", err)
	}
	if run.Holds == nil {
		return nil, nil // judged by the source kind's defaults in the report itself
	}
	var out []string
	for _, c := range holdsClaims {
		if run.Holds[c.field] {
			continue
		}
		if m := c.re.FindString(string(md)); m != "" {
			out = append(out, fmt.Sprintf("%q stated although run.json holds %s: false", m, c.field))
		}
	}
	if !run.Holds["durations"] {
		for _, line := range Sentences(string(md)) {
			if m := MeasuredWithoutData(line, true); m != "" {
				out = append(out, fmt.Sprintf("a response time (%q) stated although run.json holds durations: false, in: %s", m, line))
			}
		}
	}
	return out, nil
}

// RunDefects reads a rendered run directory — report.md, summary.json,
// run.json and, when written, report.html — and returns every defect of
// ProseDefects, HoldsDefects, TableSignDefects and SummaryDefects, and of
// the HTML's sentences against the same rules.
func RunDefects(dir string) ([]string, error) {
	read := func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, name)) }
	md, err := read("report.md")
	if err != nil {
		return nil, err
	}
	sj, err := read("summary.json")
	if err != nil {
		return nil, err
	}
	rj, err := read("run.json")
	if err != nil {
		return nil, err
	}
	// A report in another language is read with its numbers the English
	// way (a Danish "1.104,5 ms" is 1,104.5 ms); the checks still run.
	html, htmlErr := read("report.html")
	lang := runLang(rj)
	if m := htmlLang.FindSubmatch(html); m != nil {
		lang = string(m[1]) // the language it was written in (plateau report --lang)
	}
	md = Delocalize(md, lang)
	out, err := ProseDefects(md, sj)
	if err != nil {
		return nil, err
	}
	hd, err := HoldsDefects(md, rj)
	if err != nil {
		return nil, err
	}
	out = append(out, hd...)
	out = append(out, TableSignDefects(string(md))...)
	sd, err := SummaryDefects(sj)
	if err != nil {
		return nil, err
	}
	out = append(out, sd...)
	if errors.Is(htmlErr, fs.ErrNotExist) {
		return out, nil
	} else if htmlErr != nil {
		return nil, htmlErr
	}
	hs, err := HTMLSentences(Delocalize(html, lang))
	if err != nil {
		return nil, fmt.Errorf("report.html: %w", err)
	}
	if n := len(Sentences(string(md))); len(hs) < n*3/4 {
		out = append(out, fmt.Sprintf("report.html has %d sentences, report.md %d", len(hs), n))
	}
	tables, rows := parseTables(string(md))
	for _, line := range hs {
		for _, r := range ProseRules {
			if m := r.Match(line); m != "" {
				out = append(out, fmt.Sprintf("html: %s (%q) in: %s", r.name, m, line))
			}
		}
		if m := AgreesWithTables(line, tables); m != "" {
			out = append(out, fmt.Sprintf("html: a figure its table does not hold (%s) in: %s", m, line))
		} else if m := AgreesWithRow(line, rows); m != "" {
			out = append(out, fmt.Sprintf("html: a figure its row does not hold (%s) in: %s", m, line))
		}
		if m := SignAgainstWord(line); m != "" {
			out = append(out, fmt.Sprintf("html: a verdict word against the sign or size of its number (%q) in: %s", m, line))
		}
	}
	return out, nil
}

// HTMLSentences returns the text of every paragraph, list item, caption
// and sub-heading of an HTML report (table cells, charts, scripts, the
// title and the contents left out), whitespace collapsed: the HTML
// counterpart of Sentences.
func HTMLSentences(b []byte) ([]string, error) {
	root, err := html.Parse(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	var out []string
	var text func(n *html.Node, sb *strings.Builder)
	text = func(n *html.Node, sb *strings.Builder) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		if n.Type == html.ElementNode && (n.Data == "script" || n.Data == "style" || n.Data == "svg" || n.Data == "table") {
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			text(c, sb)
		}
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "style", "svg", "h1", "h2", "nav":
				return
			case "table":
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode && c.Data == "caption" {
						walk(c)
					}
				}
				return
			case "p", "li", "caption", "figcaption", "h3", "h4":
				var sb strings.Builder
				text(n, &sb)
				s := strings.Join(strings.Fields(sb.String()), " ")
				for _, mark := range []string{"✅ ", "⚠️ ", "❌ ", "— ", "ℹ️ "} {
					s = strings.TrimPrefix(s, mark)
				}
				if s != "" {
					out = append(out, s)
				}
				if n.Data == "p" {
					return
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out, nil
}

// TableSignDefects checks the tables with a verdict column: a comparison
// row whose verdict is "slower" (or "worse", "regressed") must not have a
// negative change of its average or p95, nor one called "faster"
// ("better", "improved") a positive one; a latency-drift row that "drifts"
// without a level shift must have a slope interval that excludes zero, on
// the side its verdict names.
func TableSignDefects(md string) []string {
	var out []string
	var hdr []string
	prev := ""
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			hdr, prev = nil, ""
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(strings.ReplaceAll(cells[i], "**", ""))
		}
		if strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "|:--") {
			hdr = strings.Split(strings.Trim(prev, "|"), "|")
			for i := range hdr {
				hdr[i] = strings.ToLower(strings.TrimSpace(hdr[i]))
			}
			continue
		}
		if hdr == nil {
			prev = line
			continue
		}
		verdict := -1
		for i, h := range hdr {
			if h == "verdict" {
				verdict = i
			}
		}
		if verdict < 0 || verdict >= len(cells) {
			continue
		}
		v := strings.ToLower(cells[verdict])
		out = append(out, driftRowDefects(hdr, cells, v)...)
		up := strings.Contains(v, "slower") || strings.Contains(v, "worse") || strings.Contains(v, "regressed")
		down := strings.Contains(v, "faster") || strings.Contains(v, "better") || strings.Contains(v, "improved")
		if !up && !down {
			continue
		}
		for i, h := range hdr {
			if i >= len(cells) || !strings.Contains(h, "delta") || strings.Contains(h, "throughput") {
				continue
			}
			c := strings.TrimSpace(cells[i])
			neg := strings.HasPrefix(c, "-") || strings.HasPrefix(c, "−")
			pos := strings.HasPrefix(c, "+")
			if (up && neg) || (down && pos) {
				out = append(out, fmt.Sprintf("comparison row %q is %q with %s %s", cells[0], cells[verdict], hdr[i], c))
			}
		}
	}
	return out
}

// listKeys are summary.json fields docs/summary.md documents as lists:
// `[]` when empty, never null.
var listKeys = map[string]bool{"phases": true, "labels": true, "sla": true, "errors": true, "verdict_reasons": true,
	"points": true, "also_saturated": true, "probes": true, "notes": true, "segments": true, "by_message": true, "by_class": true}

// SummaryDefects checks summary.json against its documented contract: a
// list is `[]` when empty, never null; no phase ends after its run (by
// more than the second the records are rounded to); a run without
// requirements has no highest load meeting them.
func SummaryDefects(summaryJSON []byte) ([]string, error) {
	var sum any
	if err := json.Unmarshal(summaryJSON, &sum); err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	var out []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if x == nil && listKeys[k] {
					out = append(out, fmt.Sprintf("summary.json %s.%s is null; a list is [] when empty", path, k))
				}
				walk(x, path+"."+k)
			}
		case []any:
			for i, x := range v {
				walk(x, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(sum, "")
	m, _ := sum.(map[string]any)
	if end, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["end"])); err == nil {
		ps, _ := m["phases"].([]any)
		for _, p := range ps {
			p, _ := p.(map[string]any)
			if pe, err := time.Parse(time.RFC3339Nano, fmt.Sprint(p["end"])); err == nil && pe.After(end.Add(time.Second)) {
				out = append(out, fmt.Sprintf("summary.json phase %v ends at %s, after its run (%s)", p["name"], pe.Format(time.RFC3339), end.Format(time.RFC3339)))
			}
		}
	}
	if sla, _ := m["sla"].([]any); len(sla) == 0 {
		if c, _ := m["capacity"].(map[string]any); c != nil && c["max_load_meeting_sla"] != nil {
			out = append(out, fmt.Sprintf("summary.json capacity.max_load_meeting_sla is %v for a run without requirements", c["max_load_meeting_sla"]))
		}
	}
	return out, nil
}

// directionRe finds a change stated from one figure to another ("grew
// from 2.0 req/s at 10 users to 0.211 req/s at 1 user").
var directionRe = regexp.MustCompile(`\b(grew|growing|grow|rose|rising|increased|fell|falling|dropped|decreased)\b[^;.]*?\bfrom (\d[\d,]*(?:\.\d+)?) (req/s|ms|%|users)\b[^;]*?\bto (\d[\d,]*(?:\.\d+)?) (req/s|ms|%|users)\b`)

// DirectionAgainstWord returns the offending text when a sentence says a
// quantity grew (or fell) from one figure to another that is smaller (or
// larger) — a conclusion that reads backwards.
func DirectionAgainstWord(line string) string {
	for _, m := range directionRe.FindAllStringSubmatch(line, -1) {
		if m[3] != m[5] {
			continue
		}
		a, errA := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
		b, errB := strconv.ParseFloat(strings.ReplaceAll(m[4], ",", ""), 64)
		if errA != nil || errB != nil {
			continue
		}
		up := strings.HasPrefix(m[1], "gr") || strings.HasPrefix(m[1], "ri") || strings.HasPrefix(m[1], "ro") || m[1] == "increased"
		if (up && b < a) || (!up && b > a) {
			return m[0]
		}
	}
	return ""
}

// intervalRe reads a table's 95 % interval ("-38.3 … +6.1").
var intervalRe = regexp.MustCompile(`^([-−+]?\d[\d,]*(?:\.\d+)?)\s*…\s*([-−+]?\d[\d,]*(?:\.\d+)?)$`)

func signedFloat(s string) (float64, bool) {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "−", "-"), ",", "")
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// driftRowDefects judges one latency-drift row: "drifts up" or "drifts
// down" stands on its slope when no level shift was found, so the slope's
// 95 % interval must lie wholly on that side of zero.
func driftRowDefects(hdr, cells []string, verdict string) []string {
	if !strings.HasPrefix(verdict, "drifts") {
		return nil
	}
	ci, shift := -1, -1
	for i, h := range hdr {
		switch {
		case strings.Contains(h, "95 % interval"):
			ci = i
		case h == "level shift":
			shift = i
		}
	}
	if ci < 0 || ci >= len(cells) || (shift >= 0 && shift < len(cells) && cells[shift] != "none") {
		return nil
	}
	m := intervalRe.FindStringSubmatch(strings.TrimSpace(cells[ci]))
	if m == nil {
		return nil
	}
	lo, ok1 := signedFloat(m[1])
	hi, ok2 := signedFloat(m[2])
	if !ok1 || !ok2 {
		return nil
	}
	up := strings.Contains(verdict, "up")
	if (up && lo <= 0) || (!up && hi >= 0) {
		return []string{fmt.Sprintf("drift row %q says %q with a slope interval of %s and no level shift", cells[0], verdict, cells[ci])}
	}
	return nil
}

// wholeData reports whether every time summary.json states per label is a
// whole number of milliseconds (an access log's, Locust's or JMeter's
// integer data with nearest-rank percentiles): then no sentence may print
// a minimum, maximum or percentile with decimals ("median 3.00 ms").
func wholeData(sum any) bool {
	rs := labelRows(sum)
	if len(rs) == 0 {
		return false
	}
	for _, r := range rs {
		if r.noTimes {
			continue
		}
		for _, v := range []float64{r.min, r.max, r.p50, r.p90, r.p95, r.p99} {
			if !math.IsNaN(v) && v != math.Trunc(v) {
				return false
			}
		}
	}
	return true
}

// DigitsBeyondData returns the offending figure when a sentence prints a
// minimum, maximum or percentile with more digits than the data have.
func DigitsBeyondData(line string, whole bool) string {
	if !whole {
		return ""
	}
	for _, sf := range sentenceFigures {
		switch sf.q {
		case qMin, qMax, qMedian, qP90, qP95, qP99:
		default:
			continue
		}
		for _, m := range sf.re.FindAllStringSubmatch(line, -1) {
			if strings.Contains(m[1], ".") {
				return strings.TrimSpace(m[0])
			}
		}
	}
	return ""
}

// AgreesWithRow checks a sentence that names one table row ("Slowest
// transaction: Read allergies, average 339 ms, p95 658 ms"): the figures
// in the clause after the name (to the next ";", "over the run" or the
// end) must be that row's, not merely some row's. Names of fewer than four characters, and
// sentences naming several rows, are not judged.
func AgreesWithRow(line string, rows Rows) string {
	// Every whole-name mention of a row, then those not inside a longer
	// one ("concurrency 1" inside "concurrency 16" is not a mention).
	type span struct {
		name   string
		at, to int
	}
	var spans []span
	for name := range rows {
		if len(name) < 4 || name == "TOTAL" {
			continue
		}
		for off := 0; ; {
			i := strings.Index(line[off:], name)
			if i < 0 {
				break
			}
			i += off
			j := i + len(name)
			off = i + 1
			if j < len(line) && (line[j] == '/' || line[j] == '-' || line[j] == '_' || isAlnum(line[j])) {
				continue // "GET /a" is not named by "GET /ab"
			}
			if i > 0 && isAlnum(line[i-1]) {
				continue
			}
			spans = append(spans, span{name, i, j})
		}
	}
	best, at := "", -1
	for _, a := range spans {
		inside := false
		for _, b := range spans {
			if b.name != a.name && b.at <= a.at && a.to <= b.to {
				inside = true
				break
			}
		}
		switch {
		case inside:
		case best == "":
			best, at = a.name, a.at
		case best != a.name:
			return "" // several rows named: not judged
		case a.at < at:
			at = a.at
		}
	}
	if best == "" {
		return ""
	}
	clause := line[at+len(best):]
	// The clause ends at the next ";", or where the run's context begins
	// ("p95 of X 4.04 ms over the run at 20.3 req/s": the rate is the run's).
	for _, end := range []string{";", " over the run", " of all requests"} {
		if k := strings.Index(clause, end); k >= 0 {
			clause = clause[:k]
		}
	}
	if m := AgreesWithTables(clause, rows[best]); m != "" {
		return best + ": " + m
	}
	return ""
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// boundRe reads a bound stated as held ("not slower than 5 %"), and
// deltaRe a signed change in per cent ("+13.1 %").
var (
	boundRe = regexp.MustCompile(`\bnot (slower|faster|more|higher) than (\d+(?:\.\d+)?) %`)
	deltaRe = regexp.MustCompile(`([+−-])(\d[\d,]*(?:\.\d+)?) %`)
)

// BoundAgainstDelta returns the offending text when a sentence says a
// bound held outright ("not slower than 5 % at any matching level") while
// quoting a change beyond it in the same direction ("+13.1 %"): what held
// is a verdict beyond the noise, and the sentence must say so, or a reader
// takes the bound for broken by the sentence's own figure. A bound
// qualified by the noise ("by more than 5 % beyond run-to-run noise") is
// not matched.
func BoundAgainstDelta(line string) string {
	b := boundRe.FindStringSubmatch(line)
	if b == nil {
		return ""
	}
	bound, err := strconv.ParseFloat(b[2], 64)
	if err != nil {
		return ""
	}
	up := b[1] != "faster"
	for _, m := range deltaRe.FindAllStringSubmatch(line, -1) {
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
		if err != nil {
			continue
		}
		if (up && m[1] == "+" && v > bound) || (!up && m[1] != "+" && v > bound) {
			return b[0] + " beside " + m[0]
		}
	}
	return ""
}
