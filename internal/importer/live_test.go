package importer

import (
	"testing"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// TestLiveKeys: samples added in runs of one label, across a phase change
// and a rotation, land in their own workload, label and phase's aggregate
// (the last aggregate is kept for the next sample of the same key, never
// for another key or another interval).
func TestLiveKeys(t *testing.T) {
	t.Parallel()
	l := NewLive()
	add := func(label string, n int) {
		for range n {
			l.add("w", label, &Rec{Threads: -1}, 1000, "")
		}
	}
	add("a", 3)
	add("b", 2)
	add("a", 1)
	l.SetPhase(0)
	add("a", 4)
	iv, _ := l.Rotate(nil)
	add("a", 5)
	l.SetPhase(-1)
	add("b", 6)
	iv2, _ := l.Rotate(nil)
	want := []struct {
		iv    *metrics.Interval
		label string
		phase int
		n     int64
	}{{iv, "a", -1, 4}, {iv, "b", -1, 2}, {iv, "a", 0, 4}, {iv2, "a", 0, 5}, {iv2, "b", -1, 6}}
	for _, w := range want {
		a := w.iv.Aggs[metrics.Key{Workload: "w", Label: w.label, Phase: w.phase}]
		if a == nil || a.Count != w.n {
			t.Errorf("%s phase %d: %+v, want %d samples", w.label, w.phase, a, w.n)
		}
	}
	if len(iv.Aggs) != 3 || len(iv2.Aggs) != 2 {
		t.Errorf("%d and %d keys, want 3 and 2", len(iv.Aggs), len(iv2.Aggs))
	}
}
