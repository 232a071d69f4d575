package engine

import (
	"testing"
	"time"
)

// A pacing schedule's slots, by rows, no clock: user v's slot k is at
// at + v·pace/total + k·pace, and due(t) counts the slots before t.
func TestPaceEpochDue(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ep := &paceEpoch{pace: 100 * time.Millisecond, at: at, total: 4}
	for _, c := range []struct {
		idx  int
		t    time.Duration // after at
		want int64
	}{
		{0, 0, 0},                        // slot 0 is at 0: not before it
		{0, time.Nanosecond, 1},          // slot 0 due
		{0, 100 * time.Millisecond, 1},   // slot 1 at 100 ms: not yet
		{0, 250 * time.Millisecond, 3},   // slots 0, 1, 2
		{2, 50 * time.Millisecond, 0},    // user 2 starts at 50 ms
		{2, 51 * time.Millisecond, 1},    //
		{3, 1075 * time.Millisecond, 10}, // 75, 175, …, 975 ms
		{3, -time.Second, 0},             // before the schedule
	} {
		if got := ep.due(c.idx, at.Add(c.t)); got != c.want {
			t.Errorf("user %d at %v: due %d, want %d", c.idx, c.t, got, c.want)
		}
	}
}

// Leaving the schedule counts the slots due more than a pace before the end
// that the user had not started; a slot due within the last pace is late,
// not missed.
func TestPaceEpochMissed(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		slotNext int64         // the user's next slot
		end      time.Duration // when the schedule closes, after at
		missed   int64
	}{
		{"caught up", 10, 1000 * time.Millisecond, 0},
		{"in its last slot's pace", 9, 950 * time.Millisecond, 0},  // slot 9 at 900 ms, due within the last 100 ms
		{"more than a pace behind", 9, 1001 * time.Millisecond, 1}, // slot 9 due 101 ms before the end
		{"a second behind", 0, 1001 * time.Millisecond, 10},        // slots 0…9 due, 0…9 more than a pace before
		{"stalled 2 s", 5, 2500 * time.Millisecond, 19},            // slots 5…23 (at ≤ 2.4 s)
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			wl := &workload{}
			g := &group{wl: wl}
			ep := &paceEpoch{pace: 100 * time.Millisecond, at: at, total: 1}
			g.ep = ep
			u := &userRun{g: g, slotEp: ep, slotNext: c.slotNext}
			g.users = []*userRun{u}
			g.closeEpochLocked(at.Add(c.end))
			if got := ep.missed.Load(); got != c.missed || wl.dropped.Load() != c.missed {
				t.Errorf("missed %d (dropped %d), want %d", got, wl.dropped.Load(), c.missed)
			}
		})
	}
}
