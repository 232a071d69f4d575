package core

import (
	"testing"
	"time"
)

// TestPhaseOfCoarse: a time known to the second belongs to a phase that
// starts within that second (issue 13 item 7b: the first, partial second
// of each iteration landed in no iteration).
func TestPhaseOfCoarse(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2019, 5, 13, 11, 10, 14, 0, time.UTC)
	ph := []Phase{
		{Name: "1", Start: t0.Add(620 * time.Millisecond), End: t0.Add(15 * time.Minute)},
		{Name: "2", Start: t0.Add(15*time.Minute + 300*time.Millisecond), End: t0.Add(30 * time.Minute)},
	}
	for _, c := range []struct {
		at   time.Time
		res  time.Duration
		want int
	}{
		{t0, time.Second, 0},                                   // second 14 holds phase 1's start
		{t0, 0, -1},                                            // exact time before the start
		{t0, time.Millisecond, -1},                             // $msec: 14.000 is before 14.620
		{t0.Add(-time.Second), time.Second, -1},                // second 13: before
		{t0.Add(15 * time.Minute), time.Second, 1},             // phase 1 ended at the second's start; phase 2 starts in it
		{t0.Add(15*time.Minute - time.Second), time.Second, 0}, // last whole second of phase 1
		{t0.Add(30 * time.Minute), time.Second, -1},            // after the end
	} {
		if got := PhaseOfCoarse(ph, "", c.at, c.res); got != c.want {
			t.Errorf("%s ±%s: phase %d, want %d", c.at.Format("15:04:05.000"), c.res, got, c.want)
		}
	}
}
