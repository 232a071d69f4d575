package analysis

import (
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// TestPhaseAfterItsRunIsClipped: a phase run.json has end more than a
// second after the run (and its last recorded second) ends there, and the
// recorded end is kept for the report to say so; a phase within the run,
// or within a second of its last recorded second, is left alone.
func TestPhaseAfterItsRunIsClipped(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	end := t0.Add(60 * time.Second)
	d := &Dataset{End: end, LastInterval: end.Add(time.Second), Phases: []core.Phase{
		{Name: "a", Start: t0, End: t0.Add(30 * time.Second)},
		{Name: "b", Start: t0.Add(30 * time.Second), End: end.Add(2 * time.Second)},
		{Name: "c", Start: end.Add(5 * time.Second), End: end.Add(90 * time.Second)},
	}}
	d.clipPhases()
	want := []struct {
		start, end time.Time
		recorded   time.Time
	}{
		{t0, t0.Add(30 * time.Second), time.Time{}},
		{t0.Add(30 * time.Second), end.Add(2 * time.Second), time.Time{}},
		{end.Add(time.Second), end.Add(time.Second), end.Add(90 * time.Second)},
	}
	for i, w := range want {
		p := d.Phases[i]
		if !p.Start.Equal(w.start) || !p.End.Equal(w.end) || !d.RecordedEnd[i].Equal(w.recorded) {
			t.Errorf("phase %s: %s – %s (recorded end %s), want %s – %s (%s)", p.Name, p.Start, p.End, d.RecordedEnd[i], w.start, w.end, w.recorded)
		}
	}
}
