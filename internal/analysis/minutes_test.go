package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestMinutePercentilesFromMergedHistograms: a minute of 59 quiet seconds
// (one 10 ms request each) and one busy second (100 requests of 1 s) has
// a p95 of 1 s: more than 5 % of its samples took 1 s. An average of the
// per-second p95s (the old way) would say ~632 ms.
func TestMinutePercentilesFromMergedHistograms(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := time.Unix(1_700_000_040, 0).UTC() // on a minute boundary
	end := start.Add(3 * time.Minute)
	info := &rundir.Info{Name: "minutes", Start: start, End: &end, Status: rundir.StatusCompleted}
	w, err := rundir.Create(dir, info, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for sec := 0; sec < 180; sec++ {
		a := metrics.NewAgg()
		n, el := 1, 10*time.Millisecond
		if sec%60 == 30 {
			n, el = 100, time.Second
		}
		for range n {
			a.Add(&core.Sample{Elapsed: el})
		}
		iv := &metrics.Interval{Aggs: map[metrics.Key]*metrics.Agg{{Workload: "w", Phase: -1, Label: "read"}: a}}
		if err := w.WriteInterval(start.Add(time.Duration(sec)*time.Second), iv, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	k := LabelKey{Workload: "w", Label: "read"}
	for name, ms := range map[string][]Tick{"label": d.Minutes[k], "total": d.TotalMinutes} {
		if len(ms) != 3 {
			t.Fatalf("%s: %d minutes, want 3", name, len(ms))
		}
		for _, m := range ms {
			if m.Count != 159 || math.Abs(m.P95Ms-1000) > 5 || m.T.Unix()%60 != 0 {
				t.Errorf("%s minute %v: count %d p95 %.1f ms, want 159 and 1000 ms", name, m.T, m.Count, m.P95Ms)
			}
		}
	}
}
