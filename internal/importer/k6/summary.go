package k6

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/importer"
)

// A --summary-export file holds, per metric, k6's whole-run figures: count,
// avg, min, med, max and the summaryTrendStats percentiles for trends;
// count and rate for counters; passes, fails and value for rates; value,
// min and max for gauges. It has no times and no per-request values, so it
// cannot make a run by itself (no timeline, no phases, no per-label rows
// unless thresholds named submetrics). The import quotes it next to the
// figures it computed from the stream of the same run, which checks both.

// Summary is a decoded --summary-export file.
type Summary struct {
	// Metrics maps a metric name ("http_req_duration",
	// "http_req_duration{expected_response:true}") to its figures
	// ("count", "avg", "p(95)", "passes" …). Times are milliseconds.
	Metrics map[string]map[string]float64
}

// ReadSummary reads a --summary-export file.
func ReadSummary(path string) (*Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading k6 summary: %w", err)
	}
	return ParseSummary(b, path)
}

// ParseSummary decodes a --summary-export document; name is used in errors.
func ParseSummary(b []byte, name string) (*Summary, error) {
	if k := importer.Sniff(b); k != kindSummary {
		return nil, importer.Refuse(name, "a k6 --summary-export file", b)
	}
	var doc struct {
		Metrics map[string]map[string]json.RawMessage `json:"metrics"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s := &Summary{Metrics: map[string]map[string]float64{}}
	for m, fields := range doc.Metrics {
		out := map[string]float64{}
		for k, raw := range fields {
			raw = bytes.TrimSpace(raw)
			if len(raw) == 0 || raw[0] == '{' || raw[0] == '[' {
				continue // thresholds
			}
			v, err := strconv.ParseFloat(string(raw), 64)
			if err != nil {
				continue
			}
			out[k] = v
		}
		s.Metrics[m] = out
	}
	if _, ok := s.Metrics["http_req_duration"]; !ok {
		return nil, fmt.Errorf("%s: no http_req_duration metric", name)
	}
	return s, nil
}

// trendStats is the order k6 prints a trend's figures in.
var trendStats = []string{"count", "avg", "min", "med", "max", "p(90)", "p(95)", "p(99)", "p(99.9)"}

// Describe renders one metric's figures as k6 would summarise them.
func (s *Summary) Describe(metric string) string {
	f := s.Metrics[metric]
	if f == nil {
		return ""
	}
	var parts []string
	seen := map[string]bool{}
	for _, k := range trendStats {
		if v, ok := f[k]; ok {
			parts = append(parts, k+"="+fmtFig(k, v))
			seen[k] = true
		}
	}
	var rest []string
	for k := range f {
		if !seen[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, k+"="+fmtFig(k, f[k]))
	}
	return metric + " " + strings.Join(parts, " ")
}

func fmtFig(k string, v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func (s *Source) sideSummary(run *importer.Run, tot *tally) error {
	sum, err := ReadSummary(s.cfg.Summary)
	if err != nil {
		return err
	}
	run.AddSourcef("k6 summary export %s (whole-run figures, quoted in the notes)", s.cfg.Summary)
	var lines []string
	names := make([]string, 0, len(sum.Metrics))
	for m := range sum.Metrics {
		if strings.HasPrefix(m, "http_req_duration") || strings.HasPrefix(m, "http_req_failed") || m == "http_reqs" ||
			m == "iterations" || m == "iteration_duration" || m == "group_duration" || m == "vus" || m == "checks" {
			names = append(names, m)
		}
	}
	sort.Strings(names)
	for _, m := range names {
		lines = append(lines, sum.Describe(m))
	}
	run.Note("%s: k6's own whole-run figures (ms): %s", s.cfg.Summary, strings.Join(lines, "; "))
	// k6's rates are over the test's whole duration (setup, ramps and
	// graceful stop included), which only the summary knows: count over
	// http_reqs' rate.
	if r := sum.Metrics["http_reqs"]; r["rate"] > 0 && r["count"] > 0 {
		run.SetFigureSpans(s.cfg.Workload, r["count"]/r["rate"],
			"k6's: count over the test's duration (from the summary export: http_reqs count over its rate)")
	}

	d := sum.Metrics["http_req_duration"]
	mean := 0.0
	if tot.requests > 0 {
		mean = float64(tot.sumUs) / float64(tot.requests) / 1000
	}
	ours := fmt.Sprintf("%d requests, %d failed, mean %.4f ms, min %.3f ms, max %.3f ms", tot.requests, tot.failed, mean,
		float64(tot.minUs)/1000, float64(tot.maxUs)/1000)
	var diffs []string
	if c, ok := d["count"]; ok && int64(c) != tot.requests {
		diffs = append(diffs, fmt.Sprintf("count %d vs %d", int64(c), tot.requests))
	}
	if f, ok := sum.Metrics["http_req_failed"]["passes"]; ok && int64(f) != tot.failed {
		diffs = append(diffs, fmt.Sprintf("failed %d vs %d", int64(f), tot.failed))
	}
	// The import keeps times in whole µs: the mean moves by less than
	// 0.5 µs, min and max by at most 0.5 µs.
	for _, c := range []struct {
		k    string
		ours float64
	}{{"avg", mean}, {"min", float64(tot.minUs) / 1000}, {"max", float64(tot.maxUs) / 1000}} {
		if v, ok := d[c.k]; ok && math.Abs(v-c.ours) > 0.0005+1e-9 {
			diffs = append(diffs, fmt.Sprintf("%s %.4f vs %.4f ms", c.k, v, c.ours))
		}
	}
	if len(diffs) == 0 {
		run.Note("%s: the import (%s) agrees with k6's summary (times to the µs)", s.cfg.Path, ours)
	} else {
		run.Note("%s: the import (%s) DIFFERS from k6's summary %s: %s — the summary is of another run, or the stream is incomplete",
			s.cfg.Path, ours, s.cfg.Summary, strings.Join(diffs, ", "))
	}
	return nil
}
