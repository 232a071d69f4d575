package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
)

// abortedCount is the number of samples of class aborted.
func abortedCount(d *analysis.Dataset) int64 {
	var n int64
	for _, e := range d.Total.SortedErrors() {
		if e.Class == core.ErrAborted {
			n += e.Count
		}
	}
	return n
}

// A stalling endpoint with one user allowed: the run ends at its planned
// duration plus graceful_stop, the request stuck in the stall is recorded as
// aborted (the server saw it), and every other iteration is dropped and
// counted — nothing queues up to run after the planned end.
func TestGracefulStopOpen(t *testing.T) {
	t.Parallel()
	srv := newAllergyServer(t)
	srv.stallFn = func() time.Duration { return 4 * time.Second }
	// The stall was cut, not waited out: the request is aborted (below)
	// and the phase says graceful_stop ran out. (The run's wall time,
	// once asserted under 3.5 s, is the machine's.)
	d, _, _ := runPlan(t, context.Background(), simplePlan, srv.URL,
		"workloads.w.load={rate: 10/s, duration: 2s, max_users: 1, graceful_stop: 500ms}")
	if got, saw := d.Total.Count, srv.requests.Load(); got != saw || got != 1 {
		t.Errorf("samples %d, server saw %d; want 1 = 1", got, saw)
	}
	if n := abortedCount(d); n != 1 {
		t.Errorf("aborted samples %d, want 1", n)
	}
	if d.Total.MaxUs < 2_000_000 {
		t.Errorf("aborted sample's time %d µs, want the ≥ 2 s it had run", d.Total.MaxUs)
	}
	if dr := d.Dropped["w"]; dr != 19 {
		t.Errorf("dropped %d, want 19 (20 scheduled, 1 started)", dr)
	}
	if p := d.Info.Phases[0]; p.Stopped == "" || p.Planned != 20 || p.Started != 1 {
		t.Errorf("phase %+v: want a graceful_stop note, planned 20, started 1", p)
	}
}

// The closed model: users stuck in a stall at the end of the duration are cut
// off after graceful_stop and their requests recorded as aborted.
func TestGracefulStopClosed(t *testing.T) {
	t.Parallel()
	srv := newAllergyServer(t)
	srv.stallFn = func() time.Duration { return 4 * time.Second }
	d, _, _ := runPlan(t, context.Background(), simplePlan, srv.URL,
		"workloads.w.load={users: 2, duration: 1s, graceful_stop: 500ms}")
	// Cut off, not waited for: both requests were stopped in their 4 s
	// stall (aborted, below), and the phase says graceful_stop ran out.
	// (The run's wall time, once asserted under 2.5 s, is the machine's.)
	if p := d.Info.Phases; len(p) != 1 || !strings.Contains(p[0].Stopped, "graceful_stop (500ms) ran out") {
		t.Errorf("phases %+v: want the graceful_stop note", p)
	}
	if got, saw := d.Total.Count, srv.requests.Load(); got != saw || got != 2 {
		t.Errorf("samples %d, server saw %d; want 2 = 2", got, saw)
	}
	if n := abortedCount(d); n != 2 {
		t.Errorf("aborted samples %d, want 2", n)
	}
}

// An interrupt while requests are stalled: the requests in flight are
// recorded (class aborted, with the time they had run), so the sample count
// equals what the server saw.
func TestInterruptRecordsInFlight(t *testing.T) {
	t.Parallel()
	srv := newAllergyServer(t)
	srv.stallFn = func() time.Duration { return 3 * time.Second }
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.requests.Load() < 10 {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(300 * time.Millisecond)
		cancel()
	}()
	d, res, _ := runPlan(t, ctx, simplePlan, srv.URL, "workloads.w.load={users: 10, duration: 30s}")
	if res.Stopped != "interrupted" {
		t.Errorf("stopped %q, want interrupted", res.Stopped)
	}
	if got, saw := d.Total.Count, srv.requests.Load(); got != saw || got != 10 {
		t.Errorf("samples %d, server saw %d; want 10 = 10", got, saw)
	}
	if n := abortedCount(d); n != 10 {
		t.Errorf("aborted samples %d, want 10", n)
	}
	if d.Total.MinUs < 250_000 {
		t.Errorf("shortest aborted sample %d µs, want the ≥ 300 ms it had run", d.Total.MinUs)
	}
}
