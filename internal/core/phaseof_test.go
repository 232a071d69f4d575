package core

import (
	"testing"
	"time"
)

func TestPhaseOf(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	phases := []Phase{
		{Name: "step 1", Workload: "w", Start: at(0), End: at(10)},
		{Name: "step 2", Workload: "w", Start: at(10), End: at(20)},
		{Name: "import", Workload: "batch", Start: at(5), End: at(25)},
	}
	for _, c := range []struct {
		name     string
		workload string
		t        float64
		want     int
	}{
		{"before the first phase", "w", -0.1, -1},
		{"start is inside", "w", 0, 0},
		{"end belongs to the next phase", "w", 10, 1},
		{"completed after the last step ended (graceful stop)", "w", 20.297, -1},
		{"other workload's phase is skipped", "batch", 12, 2},
		{"other workload outside its phase", "batch", 1, -1},
		{"any workload: the later-started phase wins", "", 12, 2},
		{"any workload, only one holds it", "", 3, 0},
	} {
		if got := PhaseOf(phases, c.workload, at(c.t)); got != c.want {
			t.Errorf("%s: PhaseOf(%s, %v) = %d, want %d", c.name, c.workload, c.t, got, c.want)
		}
	}
}
