package prom

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/output"
)

// TestHistogramClassicAndNative feeds one second through the exporter and
// reads the registry: the histogram carries both classic buckets (counted by
// upper bound) and native buckets, with the exact count.
func TestHistogramClassicAndNative(t *testing.T) {
	e := New("2")
	s := &output.Snapshot{Time: time.Unix(100, 0), Series: []output.Series{{
		Workload: "w", Phase: "p", Label: "get", Count: 6, Errors: 1, SumUs: 1500 + 2*3000 + 3*200000,
		MinUs: 1500, MaxUs: 200000,
		Hist: metrics.Sparse{Values: []int64{1500, 3000, 200000}, High: []int64{1500, 3001, 200191}, Counts: []int64{1, 2, 3}, Total: 6},
	}}, Workloads: []output.Workload{{Name: "w", Users: 3, TargetRate: 10, Dropped: 4}}, CPUSeconds: 0.5}
	s.Series[0].ErrorsByClass[core.ErrHTTP5xx] = 1
	if err := e.Add(s); err != nil {
		t.Fatal(err)
	}
	mfs, err := e.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, mf := range mfs {
		seen[mf.GetName()] = true
		for _, m := range mf.GetMetric() {
			gen := ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "generator" {
					gen = lp.GetValue()
				}
			}
			if strings.HasPrefix(mf.GetName(), "plateau_") && gen != "2" {
				t.Errorf("%s without generator label", mf.GetName())
			}
		}
		switch mf.GetName() {
		case "plateau_request_duration_seconds":
			h := mf.GetMetric()[0].GetHistogram()
			if h.GetSampleCount() != 6 {
				t.Errorf("count %d", h.GetSampleCount())
			}
			want := map[float64]uint64{.001: 0, .0025: 1, .005: 3, .1: 3, .25: 6}
			for _, b := range h.GetBucket() {
				if w, ok := want[b.GetUpperBound()]; ok && b.GetCumulativeCount() != w {
					t.Errorf("classic bucket le=%g: %d, want %d", b.GetUpperBound(), b.GetCumulativeCount(), w)
				}
			}
			if len(h.GetPositiveSpan()) == 0 || len(h.GetPositiveDelta()) == 0 {
				t.Fatalf("no native buckets: %v", h)
			}
			// Decode the native buckets: their counts add up to the total
			// and each value lies in its bucket.
			var total, cur int64
			for _, d := range h.GetPositiveDelta() {
				cur += d
				total += cur
			}
			if total != 6 || h.GetZeroCount() != 0 {
				t.Errorf("native buckets hold %d, zero bucket %d", total, h.GetZeroCount())
			}
			if k := nativeKey(0.0015); !(math.Pow(2, float64(k-1)/8) < 0.0015 && 0.0015 <= math.Pow(2, float64(k)/8)) {
				t.Errorf("native key %d does not hold 1.5 ms", k)
			}
		case "plateau_errors_total":
			m := mf.GetMetric()[0]
			if m.GetCounter().GetValue() != 1 {
				t.Errorf("errors %v", m.GetCounter().GetValue())
			}
		case "plateau_dropped_iterations_total":
			if v := mf.GetMetric()[0].GetCounter().GetValue(); v != 4 {
				t.Errorf("dropped %v", v)
			}
		}
	}
	for _, n := range []string{"plateau_requests_total", "plateau_errors_total", "plateau_request_duration_seconds",
		"plateau_active_users", "plateau_target_rate", "plateau_achieved_rate", "plateau_dropped_iterations_total",
		"plateau_generator_cpu_seconds_total", "process_cpu_seconds_total"} {
		if !seen[n] {
			t.Errorf("metric %s missing", n)
		}
	}
}
