package report

import (
	"math"
	"testing"

	"github.com/plateau-perf/plateau/internal/report/chart"
)

// A scrape every second at a fixed phase, jittering by a millisecond (the
// demo's Prometheus endpoint: .388–.391 s past each second), bucketed by the
// second from a run start just inside that jitter: the bare grid puts two
// samples in some buckets and none in others, which draws as a broken line;
// the grid on the sampling clock has one sample per bucket.
func TestBucketsOnSamplingClock(t *testing.T) {
	start := 1000.3895
	var x, y []float64
	for i := range 60 {
		jitter := []float64{-0.0015, 0.0005, -0.0005, 0.0015}[i%4]
		x = append(x, 1000.389+float64(i+1)+jitter)
		y = append(y, float64(i))
	}
	end := start + 61
	gaps := func(from float64) int {
		r := chart.Reduce(x, y, nil, from, end, 1)
		n := 0
		for b, v := range r.Mean {
			// Inside the sampled stretch only: the grid's ends may be empty.
			if r.X[b] > x[0] && r.X[b] < x[len(x)-1] && math.IsNaN(v) {
				n++
			}
		}
		return n
	}
	if n := gaps(start); n == 0 {
		t.Fatalf("the bare grid shows no gap: the test does not reproduce the broken line")
	}
	from := onSamplingClock(start, 1, x[0])
	if n := gaps(from); n != 0 {
		t.Errorf("grid on the sampling clock (from %.4f): %d empty buckets, want 0", from, n)
	}
	if from > start || start-from > 1 {
		t.Errorf("grid moved from %.4f to %.4f: want at most one bucket earlier", start, from)
	}
	if got := onSamplingClock(start, 1, math.NaN()); got != start {
		t.Errorf("no sample: grid moved to %v", got)
	}
}
