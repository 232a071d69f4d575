package analysis

import (
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// TestPeakUsersFollowThePhaseRule: the users counted at the end of the
// second in which step 2 began are step 2's, not step 1's peak.
func TestPeakUsersFollowThePhaseRule(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_700_000_000, 0)
	d := &Dataset{Phases: []core.Phase{
		{Name: "step 1", Workload: "w", Start: t0, End: t0.Add(20*time.Second + 300*time.Millisecond), Users: 14},
		{Name: "step 2", Workload: "w", Start: t0.Add(20*time.Second + 300*time.Millisecond), End: t0.Add(40 * time.Second), Users: 20},
	}}
	for s := 0; s < 40; s++ {
		n := 14
		if s >= 20 { // the tick of second 20 counts the users at 21 s
			n = 20
		}
		d.Users = append(d.Users, UsersTick{T: t0.Add(time.Duration(s) * time.Second), Users: map[string]int{"w": n}, Total: n})
	}
	if got := d.peakUsers(d.Phases[0]); got != 14 {
		t.Errorf("step 1 peak users %d, want 14", got)
	}
	if got := d.peakUsers(d.Phases[1]); got != 20 {
		t.Errorf("step 2 peak users %d, want 20", got)
	}
}
