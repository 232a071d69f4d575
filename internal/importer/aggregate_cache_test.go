package importer

import (
	"math"
	"path/filepath"
	"testing"
	"time"
)

// The aggregator keeps its last aggregate, label name and user count
// (Add's caches): whatever order samples, user readings and flushes come
// in, each second's user count is its highest reading, every sample is
// counted in its own second's aggregate, and the live collector sees the
// latest user count.
func TestAggregatorCachesAcrossFlushes(t *testing.T) {
	live := NewLive()
	run, err := NewRun(Options{Dir: filepath.Join(t.TempDir(), "run"), Live: live})
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	agg := run.Requests("w")
	a, b := agg.Labels().ID([]byte("GET /a")), agg.Labels().ID([]byte("GET /b"))
	base := time.Now().Add(-time.Hour).Truncate(time.Second).UnixNano()
	at := func(sec int64) int64 { return base + sec*1e9 + 5e8 }
	add := func(sec int64, label, threads int32) {
		t.Helper()
		if err := agg.Add(&Rec{End: at(sec), Elapsed: 100, Label: label, Threads: threads}); err != nil {
			t.Fatal(err)
		}
	}
	s0 := base / 1e9
	add(0, a, 3)
	agg.AddUsers(at(0), 5) // raises second 0 above the kept 3
	add(0, a, 4)           // below 5: second 0 stays 5
	if got := agg.users[s0]; got != 5 {
		t.Fatalf("second 0: %d users, want 5", got)
	}
	add(0, b, 7)
	if got := agg.users[s0]; got != 7 {
		t.Fatalf("second 0: %d users, want 7", got)
	}
	// Far enough ahead that seconds 0 and 1 are flushed; then a late
	// sample of second 0 reopens it as a new aggregate.
	add(1, a, 2)
	add(20, a, 1)
	if _, open := agg.users[s0]; open {
		t.Fatal("second 0's users were not flushed")
	}
	add(0, a, 2)
	if got := agg.users[s0]; got != 2 {
		t.Fatalf("second 0 reopened: %d users, want 2", got)
	}
	if k := (aggKey{sec: s0, label: a, phase: -1}); agg.open[k] == nil || agg.open[k].count != 1 {
		t.Fatalf("second 0 reopened: aggregate %+v", agg.open[k])
	}
	if agg.Count() != 6 {
		t.Fatalf("%d samples, want 6", agg.Count())
	}
	iv, users := live.Rotate(nil)
	var n int64
	for _, g := range iv.Aggs {
		n += g.Count
	}
	if n != 6 || users["w"] != 2 {
		t.Fatalf("live: %d samples, %d users; want 6 and 2", n, users["w"])
	}
	// A flush of every open second (Close's, AddPartial's) releases the
	// kept aggregate and user count: the same key again is a new one.
	if err := agg.flush(math.MaxInt64); err != nil {
		t.Fatal(err)
	}
	add(0, a, 1)
	if k := (aggKey{sec: s0, label: a, phase: -1}); agg.open[k] == nil || agg.open[k].count != 1 || agg.users[s0] != 1 {
		t.Fatalf("second 0 after a flush: aggregate %+v, %d users", agg.open[k], agg.users[s0])
	}
	live.Rotate(nil)
	live.setUsers("w", 9)
	add(21, a, 2) // the same count as the live collector kept before setUsers
	if _, users := live.Rotate(nil); users["w"] != 2 {
		t.Fatalf("live users %d, want 2", users["w"])
	}
}
