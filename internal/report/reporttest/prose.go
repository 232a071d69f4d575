package reporttest

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The prose checks of a rendered report: every sentence of report.md is
// free of empty slots, broken punctuation, NaN, claims of no traffic,
// signed zeros, fractional users and computer notation, and every count
// and throughput it states is one summary.json holds. TestProse in
// internal/report runs them over its grid of synthetic and imported runs;
// the example plans' end-to-end tests (internal/cli) over their runs.

// ProseRule is one defect no sentence may have.
type ProseRule struct {
	name string
	re   *regexp.Regexp
}

// Name says what the rule rejects.
func (r ProseRule) Name() string { return r.name }

// Match returns the offending text in line, "" when there is none.
func (r ProseRule) Match(line string) string { return r.re.FindString(line) }

// ProseRules are the defects no sentence of a report may have.
var ProseRules = []ProseRule{
	{"NaN or infinity", regexp.MustCompile(`\bNaN\b|[+-]?Inf\b`)},
	{"doubled or dangling punctuation", regexp.MustCompile(`[;,]\s*[.;,:]|:\s*[.;,]|[^.]\.\.(?:[^./]|$)|\s[.;,:](?:\s|$)|—\s*[.;,]|\(\s*\)|“\s*”|""|%\s*%`)},
	{"empty slot", regexp.MustCompile(`\S {2,}\S|\b(?:in|at|of|from|to|on|for) [.;,)]|\bin $`)},
	{"sentence starting lower-case after a full stop", regexp.MustCompile(`[a-z0-9)]\. [a-z]`)},
	{"a claim of no traffic", regexp.MustCompile(`(?:^|[^.\d])0 B/s`)},
	{"signed zero", regexp.MustCompile(`[-−+]0(?:\.0+)? (?:ms|%|req/s)`)},
	{"a number in computer notation", regexp.MustCompile(`\d\.?\d*e[-+]\d+`)},
	{"fractional users", regexp.MustCompile(`\d\.\d+ (?:concurrent )?users?\b`)},
	{"unfinished sentence", regexp.MustCompile(`[;,:]$`)},
	{"a count or rate over a span of no time", regexp.MustCompile(`\b(?:in|over) 0s\b`)},
}

// RepeatedRate finds a throughput quoted as its own context ("Throughput
// 117 req/s over the run at 117 req/s").
func RepeatedRate(line string) string {
	for _, sent := range strings.Split(line, "; ") {
		ms := rpsRe.FindAllStringIndex(sent, -1)
		for i := 1; i < len(ms); i++ {
			a, b := sent[ms[i-1][0]:ms[i-1][1]], sent[ms[i][0]:ms[i][1]]
			if a == b && strings.Contains(sent[ms[i-1][1]:ms[i][0]], " at ") {
				return b
			}
		}
	}
	return ""
}

// Sentences returns the report's sentences: every Markdown line that is not a
// table, a code block, a chart or a heading, with Markdown marks removed.
func Sentences(md string) []string {
	var out []string
	inCode := false
	unescape := strings.NewReplacer(`\_`, "_", `\~`, "~", `\*`, "*", "&lt;", "<", "&gt;", ">", "&amp;", "&", "**", "", "*", "")
	for _, line := range strings.Split(md, "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			inCode = !inCode
			continue
		case inCode, strings.HasPrefix(line, "|"), strings.HasPrefix(line, "!["), strings.HasPrefix(line, "<a id"),
			strings.HasPrefix(line, "#"), strings.HasPrefix(line, "[Summary]"), strings.TrimSpace(line) == "":
			continue
		}
		line = strings.TrimLeft(line, "-> ")
		for _, mark := range []string{"✅ ", "⚠️ ", "❌ ", "— ", "ℹ️ "} {
			line = strings.TrimPrefix(line, mark)
		}
		out = append(out, unescape.Replace(strings.TrimSpace(line)))
	}
	return out
}

// throughputs collects every throughput summary.json states.
func throughputs(v any, key string, out *[]float64) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			throughputs(x, k, out)
		}
	case []any:
		for _, x := range v {
			throughputs(x, key, out)
		}
	case float64:
		if strings.Contains(key, "throughput") || strings.Contains(key, "rps") || key == "observed" || key == "load" || key == "rate_per_s" {
			*out = append(*out, v)
		}
	}
}

var rpsRe = regexp.MustCompile(`(~?)([\d,]+(?:\.\d+)?) req/s`)

// countRe finds stated request and error counts ("3,200 requests", "7 errors").
// A decimal ("1.9 requests in flight") is a mean, not a count.
var countRe = regexp.MustCompile(`(?:^|[^\d.,])(\d[\d,]*) (requests|errors)\b`)

// counts collects the sample and error counts summary.json holds.
func counts(v any, key string, out map[int64]bool) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			counts(x, k, out)
		}
	case []any:
		for _, x := range v {
			counts(x, key, out)
		}
	case float64:
		switch key {
		case "samples", "errors", "total", "count":
			out[int64(v)] = true
		}
	}
}

// countsAgree checks every stated request or error count against
// summary.json.
func countsAgree(line string, known map[int64]bool) string {
	for _, ix := range countRe.FindAllStringSubmatchIndex(line, -1) {
		m := []string{line[ix[0]:ix[1]], line[ix[2]:ix[3]], line[ix[4]:ix[5]]}
		if strings.HasPrefix(line[ix[1]:], " of the ") {
			continue // a part of something ("164 requests of the stats file are later …"), not a total
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
		if err == nil && !known[n] {
			return strings.TrimSpace(m[1] + " " + m[2])
		}
	}
	return ""
}

// AgreesWithSummary checks that every throughput a sentence states is one
// summary.json holds, at the precision printed.
func AgreesWithSummary(line string, tps []float64) string {
	for _, ix := range rpsRe.FindAllStringSubmatchIndex(line, -1) {
		m := []string{line[ix[0]:ix[1]], line[ix[2]:ix[3]], line[ix[4]:ix[5]]}
		if notMeasured(line[:ix[0]]) {
			continue // a requirement's limit or a prediction, not a measurement
		}
		txt := strings.ReplaceAll(m[2], ",", "")
		v, err := strconv.ParseFloat(txt, 64)
		if err != nil {
			continue
		}
		tol := 0.5
		if i := strings.IndexByte(txt, '.'); i >= 0 {
			tol = 0.5 * math.Pow(10, -float64(len(txt)-i-1))
		}
		if m[1] == "~" { // two significant digits
			tol = 0.5 * math.Pow(10, math.Floor(math.Log10(math.Max(v, 1e-9)))-1)
		}
		ok := false
		for _, x := range tps {
			if math.Abs(x-v) <= tol*1.0001 {
				ok = true
				break
			}
		}
		if !ok {
			return m[0]
		}
	}
	return ""
}

// ProseDefects checks every sentence of a report (its Markdown) against
// ProseRules and the figures of its summary.json; it returns one message
// per defect.
func ProseDefects(md, summaryJSON []byte) ([]string, error) {
	var sum any
	if err := json.Unmarshal(summaryJSON, &sum); err != nil {
		return nil, fmt.Errorf("summary.json: %w", err)
	}
	var tps []float64
	throughputs(sum, "", &tps)
	known := map[int64]bool{}
	counts(sum, "", known)
	var out []string
	if ph, _ := sum.(map[string]any)["phases"].([]any); len(ph) == 0 && strings.Contains(string(md), "phase boundaries") {
		out = append(out, "a run without phases speaks of phase boundaries")
	}
	noTimes := totalNoTimes(sum)
	tables := ParseTables(string(md))
	rows := ParseRows(string(md))
	whole := wholeData(sum)
	out = append(out, percentilesOutside(sum, string(md))...)
	for _, line := range Sentences(string(md)) {
		if m := MeasuredWithoutData(line, noTimes); m != "" {
			out = append(out, fmt.Sprintf("a response time (%q) stated for data that hold none, in: %s", m, line))
		}
		if m := AgreesWithTables(line, tables); m != "" {
			out = append(out, fmt.Sprintf("a figure its table does not hold (%s) in: %s", m, line))
		} else if m := AgreesWithRow(line, rows); m != "" {
			out = append(out, fmt.Sprintf("a figure its row does not hold (%s) in: %s", m, line))
		}
		if m := SignAgainstWord(line); m != "" {
			out = append(out, fmt.Sprintf("a verdict word against the sign or size of its number (%q) in: %s", m, line))
		}
		if m := DigitsBeyondData(line, whole); m != "" {
			out = append(out, fmt.Sprintf("digits the data do not have (%q: every time is whole milliseconds) in: %s", m, line))
		}
		if m := BoundAgainstDelta(line); m != "" {
			out = append(out, fmt.Sprintf("a bound said to hold beside a change beyond it (%q) in: %s", m, line))
		}
		if m := DirectionAgainstWord(line); m != "" {
			out = append(out, fmt.Sprintf("a change that reads backwards (%q) in: %s", m, line))
		}
		for _, r := range ProseRules {
			if m := r.Match(line); m != "" {
				out = append(out, fmt.Sprintf("%s (%q) in: %s", r.name, m, line))
			}
		}
		if bad := countsAgree(line, known); bad != "" {
			out = append(out, fmt.Sprintf("%q is not a count of summary.json, in: %s", bad, line))
		}
		if rep := RepeatedRate(line); rep != "" {
			out = append(out, fmt.Sprintf("%s quoted as its own context in: %s", rep, line))
		}
		if bad := AgreesWithSummary(line, tps); bad != "" {
			out = append(out, fmt.Sprintf("%q is not a throughput of summary.json, in: %s", bad, line))
		}
	}
	return out, nil
}
