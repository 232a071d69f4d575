// Package rundirtest writes small run directories for the tests of the
// packages that read them.
package rundirtest

import (
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// WriteSteps writes a run directory of three 10-second steps at 10, 20 and
// 30 users whose mean response time is 100, 150 and 300 ms, with one HTTP
// 503 in each second of step 3: the analysis and the report judge the same
// small stepped run.
func WriteSteps(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Unix(1_700_000_000, 0).UTC()
	info := &rundir.Info{Name: "steps", Start: start, Status: rundir.StatusCompleted}
	means := []time.Duration{100 * time.Millisecond, 150 * time.Millisecond, 300 * time.Millisecond}
	for i := range means {
		s, e := start.Add(time.Duration(i)*10*time.Second), start.Add(time.Duration(i+1)*10*time.Second)
		info.Phases = append(info.Phases, rundir.PhaseInfo{Name: "step " + string(rune('1'+i)), Start: s, End: &e, Users: 10 * (i + 1)})
	}
	end := start.Add(30 * time.Second)
	info.End = &end
	w, err := rundir.Create(dir, info, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for sec := 0; sec < 30; sec++ {
		ph := sec / 10
		a := metrics.NewAgg()
		for i := 0; i < 20; i++ {
			s := core.Sample{Elapsed: means[ph] + time.Duration(i-10)*time.Millisecond}
			if ph == 2 && i == 0 {
				s.Class, s.Status, s.Message = core.ErrHTTP5xx, 503, "HTTP 503"
			}
			a.Add(&s)
		}
		iv := &metrics.Interval{Aggs: map[metrics.Key]*metrics.Agg{{Workload: "w", Phase: ph, Label: "read"}: a}}
		if err := w.WriteInterval(start.Add(time.Duration(sec)*time.Second), iv, map[string]int{"w": 10 * (ph + 1)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}
