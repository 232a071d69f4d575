package jtl

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
)

// dashboardRow is a statistics.json entry with the figures JMeter defines
// its own way.
type dashboardRow struct {
	SampleCount int64   `json:"sampleCount"`
	Median      float64 `json:"medianResTime"`
	P90         float64 `json:"pct1ResTime"`
	P95         float64 `json:"pct2ResTime"`
	P99         float64 `json:"pct3ResTime"`
	Throughput  float64 `json:"throughput"`
}

// TestFiguresAsJMeterDefinesThem: summary.json's whole-run percentiles and
// throughput of an imported JTL equal JMeter's statistics.json for the same
// file, figure by figure (issue 13 items 5 and 6: plateau used HDR nearest
// rank and the run's span; JMeter interpolates over a 20,000-sample window
// and divides by each label's own span, the total's including transaction
// samples).
func TestFiguresAsJMeterDefinesThem(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{"jmeter-5.6.3/results.jtl", "jmeter-5.6.3-xml/results.xml", "jmeter-5.6.3-xml/results.csv"} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			d, err := importFile(t, Config{Path: filepath.Join("testdata", dir)}, importer.Options{})
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join("testdata", filepath.Dir(dir), "statistics.json"))
			if err != nil {
				t.Fatal(err)
			}
			var js map[string]dashboardRow
			if err := json.Unmarshal(b, &js); err != nil {
				t.Fatal(err)
			}
			s := analysis.Summarize(d, nil)
			if s.PercentileMethod != "jmeter-legacy-window" {
				t.Errorf("percentile_method %q", s.PercentileMethod)
			}
			checked := 0
			for _, row := range s.Labels {
				name := row.Label
				if name == "TOTAL" {
					name = "Total"
				}
				j, ok := js[name]
				if !ok {
					t.Errorf("%s not in statistics.json", name)
					continue
				}
				checked++
				for _, c := range []struct {
					what      string
					ours, jm  float64
					tolerance float64
				}{{"p50", row.P50Ms, j.Median, 0.0005}, {"p90", row.P90Ms, j.P90, 0.0005}, {"p95", row.P95Ms, j.P95, 0.0005},
					{"p99", row.P99Ms, j.P99, 0.0005}, {"throughput", row.ThroughputRPS, j.Throughput, 0.0005}} {
					if math.Abs(c.ours-c.jm) > c.tolerance+1e-9 {
						t.Errorf("%s %s: %v, JMeter %v", name, c.what, c.ours, c.jm)
					}
				}
			}
			if checked != len(js) {
				t.Errorf("%d rows checked, statistics.json has %d", checked, len(js))
			}
		})
	}
}

// TestSmallLabelsAsJMeter: on small labels JMeter's interpolation and a
// nearest-rank histogram differ most (n = 12: p90 between the two largest
// values); a one-sample label's throughput is one over its own elapsed
// time, as JMeter's dashboard has it.
func TestSmallLabelsAsJMeter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("timeStamp,elapsed,label,responseCode,success\n")
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	small := []float64{120, 130, 150, 160, 170, 180, 190, 200, 210, 220, 2462, 19791}
	for i, v := range small {
		fmt.Fprintf(&b, "%d,%d,small,200,true\n", t0+int64(i)*1000, int64(v))
	}
	fmt.Fprintf(&b, "%d,364,once,200,true\n", t0+600000)
	path := filepath.Join(t.TempDir(), "r.jtl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := importFile(t, Config{Path: path}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := analysis.Summarize(d, nil)
	for _, row := range s.Labels {
		switch row.Label {
		case "small":
			// LEGACY: position 0.9·13 = 11.7 → 2462 + 0.7·(19791−2462); HDR nearest rank gives 19791.
			if want := importer.LegacyPercentile(small, 90); math.Abs(row.P90Ms-want) > 0.001 || math.Abs(want-14592.3) > 0.001 {
				t.Errorf("small p90 %v, JMeter %v", row.P90Ms, want)
			}
		case "once":
			if math.Abs(row.ThroughputRPS-1/0.364) > 0.001 {
				t.Errorf("one-sample label: %v/s, JMeter 2.747/s", row.ThroughputRPS)
			}
		}
	}
}

// TestPublicJTL imports a real user's JTL (testdata/public-baykar, MIT) and
// compares every figure of JMeter's own statistics.json for it: count,
// errors, min, max, mean, the percentiles and throughput, per label and in
// total.
func TestPublicJTL(t *testing.T) {
	t.Parallel()
	d, err := importFile(t, Config{Path: "testdata/public-baykar/results.jtl"}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("testdata/public-baykar/statistics.json")
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]struct {
		dashboardRow
		ErrorCount int64   `json:"errorCount"`
		Mean       float64 `json:"meanResTime"`
		Min        float64 `json:"minResTime"`
		Max        float64 `json:"maxResTime"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	s := analysis.Summarize(d, nil)
	n := 0
	for _, row := range s.Labels {
		name := row.Label
		if name == "TOTAL" {
			name = "Total"
		}
		j, ok := js[name]
		if !ok {
			t.Errorf("%s not in statistics.json", name)
			continue
		}
		for _, c := range []struct {
			what     string
			ours, jm float64
		}{{"count", float64(row.Samples), float64(j.SampleCount)}, {"errors", float64(row.Errors), float64(j.ErrorCount)},
			{"min", row.MinMs, j.Min}, {"max", row.MaxMs, j.Max}, {"mean", row.MeanMs, j.Mean},
			{"p50", row.P50Ms, j.Median}, {"p90", row.P90Ms, j.P90}, {"p95", row.P95Ms, j.P95}, {"p99", row.P99Ms, j.P99},
			{"throughput", row.ThroughputRPS, j.Throughput}} {
			n++
			if math.Abs(c.ours-c.jm) > 0.0005+1e-9 {
				t.Errorf("%s %s: %v, JMeter %v", name, c.what, c.ours, c.jm)
			}
		}
	}
	if n != 10*len(js) {
		t.Errorf("%d figures compared, statistics.json has %d", n, 10*len(js))
	}
}
