package reporttest

import (
	"fmt"
	"regexp"
	"strings"
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
	regexp.MustCompile(`\b(?:rose|grew|increased|slower|above|higher)\b(?: by)?\s+[-−]\d[\d,.]*`),
	regexp.MustCompile(`\b(?:fell|dropped|decreased|faster|below|lower)\b(?: by)?\s+\+\d[\d,.]*`),
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
		f := func(k string) float64 { v, _ := r[k].(float64); return v }
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
		if r.noTimes || r.max == 0 {
			continue
		}
		for _, p := range []struct {
			name string
			v    float64
		}{{"p50", r.p50}, {"p90", r.p90}, {"p95", r.p95}, {"p99", r.p99}} {
			if (p.v < r.min-1e-9 || p.v > r.max+1e-9) && !strings.Contains(md, PercentileNote) {
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
