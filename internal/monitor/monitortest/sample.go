package monitortest

import (
	"context"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// Sample collects once from c and returns its readings by metric name and
// the batch's monotonic time.
func Sample(t testing.TB, c monitor.Collector) (map[string]float64, time.Time) {
	t.Helper()
	var b monitor.Batch
	b.Reset(time.Now(), time.Now())
	if err := c.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	m := map[string]float64{}
	for _, r := range b.Readings() {
		m[r.Metric] = r.Value
	}
	return m, b.Mono
}
