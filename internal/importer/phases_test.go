package importer

import (
	"testing"
	"time"
)

// TestDerivePhasesGaps: seconds without a completed sample never end a
// phase (issue 13 item 3: a steady 5-thread run became "5 threads (1)…(4)").
func TestDerivePhasesGaps(t *testing.T) {
	t.Parallel()
	const t0 = 1_700_000_000
	steady := map[int64]int32{}
	for s := int64(0); s < 120; s++ {
		if s == 119 || s%17 != 5 && s%29 != 3 { // seconds without a completion
			steady[t0+s] = 5
		}
	}
	ph := DerivePhases(steady, 30*time.Second)
	if len(ph) != 1 || ph[0].Name != "5 threads" || ph[0].Start.Unix() != t0 || ph[0].End.Unix() != t0+120 {
		t.Fatalf("steady run with gaps: %+v, want one phase 5 threads over all 120 s", ph)
	}
	// A change across a gap: the first stretch ends at its last reading,
	// the second starts at its first.
	step := map[int64]int32{}
	for s := int64(0); s < 40; s++ {
		step[t0+s] = 5
	}
	for s := int64(45); s < 90; s++ {
		if s != 60 {
			step[t0+s] = 10
		}
	}
	ph = DerivePhases(step, 30*time.Second)
	if len(ph) != 2 || ph[0].End.Unix() != t0+40 || ph[1].Start.Unix() != t0+45 || ph[1].End.Unix() != t0+90 || ph[1].Users != 10 {
		t.Fatalf("two steps: %+v", ph)
	}
	// Short stretches stay ramps.
	ph = DerivePhases(map[int64]int32{t0: 1, t0 + 1: 2, t0 + 2: 3}, 30*time.Second)
	if len(ph) != 0 {
		t.Fatalf("ramp: %+v", ph)
	}
}
