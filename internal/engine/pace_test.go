package engine_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A paced user that stalls does not skip its missed slots: it runs them
// after the stall, one after the other, each timed from its own slot
// (wrk2's rule), so the stall shows in the percentiles. With one 1 s stall
// at a 10 ms pace the stalled user's ~100 slots in the stall each wait up
// to a second; skipping them (as before) left p90 at the server's fraction
// of a millisecond. Every slot due is started or counted as missed.
func TestPacingStallKeepsMissedSlots(t *testing.T) {
	t.Parallel()
	srv := newAllergyServer(t)
	var n atomic.Int64
	srv.stallFn = func() time.Duration {
		if n.Add(1) == 20 {
			return time.Second
		}
		return 0
	}
	d, res, _ := runPlan(t, context.Background(), simplePlan, srv.URL,
		"workloads.w.load={users: 2, pace: 10ms, duration: 3s}")
	ph := d.Info.Phases[0]
	dropped := d.Dropped["w"]
	p90 := d.Total.QuantileMs(90)
	t.Logf("planned %d started %d missed %d, samples %d, p90 %.1f ms, stopped %q", ph.Planned, ph.Started, dropped, d.Total.Count, p90, res.Stopped)
	if !ph.Paced || ph.Planned == 0 || ph.Planned != ph.Started+dropped {
		t.Errorf("phase paced %v, planned %d, started %d, missed %d: want planned = started + missed", ph.Paced, ph.Planned, ph.Started, dropped)
	}
	// Each started slot sent its one request (those in flight at the end
	// are recorded too, as aborted).
	if got, saw := d.Total.Count, srv.requests.Load(); got != saw || got != ph.Started {
		t.Errorf("samples %d, server saw %d, started %d: want them equal", got, saw, ph.Started)
	}
	// 2 users × 3 s / 10 ms = 600 slots; at least the stalled user's
	// ~100 slots in the stall ran late: > 10 % of them wait ≥ 250 ms, so
	// p90 is at least that (a busier machine only makes it later).
	if p90 < 200 {
		t.Errorf("p90 %.1f ms: the slots missed in the 1 s stall were not timed from their slots", p90)
	}
}
