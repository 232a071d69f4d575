package engine_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// Rates no machine can send (the plan checker refuses them with the
// machine's limits; the engine is given them here directly) end on the
// wall clock: the iterations the generator could not hand out are dropped
// and counted arithmetically, Planned is the schedule's exact count,
// Started is what was sent, and nothing is sent after the plan's end.
func TestOpenRateBeyondTheMachineEndsOnTime(t *testing.T) {
	t.Parallel()
	for _, rate := range []float64{1e7, 1e9, 1e12} {
		t.Run(fmt.Sprintf("%g/s", rate), func(t *testing.T) {
			t.Parallel()
			srv := newAllergyServer(t)
			start := time.Now()
			d, res, _ := runPlan(t, context.Background(), simplePlan, srv.URL,
				fmt.Sprintf("workloads.w.load={rate: %.0f/s, duration: 1s, max_users: 4, graceful_stop: 1s}", rate))
			el := time.Since(start)
			ph := d.Info.Phases[0]
			sent := srv.requests.Load()
			t.Logf("%v: planned %d started %d dropped %d (late %d) sent %d in %v", rate, ph.Planned, ph.Started, d.Dropped["w"], ph.DroppedLate, sent, el)
			if want := int64(rate); ph.Planned != want {
				t.Errorf("planned %d, want the schedule's %d", ph.Planned, want)
			}
			if ph.Started+d.Dropped["w"] != ph.Planned {
				t.Errorf("started %d + dropped %d ≠ planned %d", ph.Started, d.Dropped["w"], ph.Planned)
			}
			// Achieved counts what was sent: every started iteration sent
			// its one request, recorded.
			if ph.Started != sent || d.Total.Count != sent || sent == 0 {
				t.Errorf("started %d, recorded %d, server saw %d: want them equal and > 0", ph.Started, d.Total.Count, sent)
			}
			if res.Stopped != "" {
				t.Errorf("stopped %q: the run should end at its planned end", res.Stopped)
			}
			// 1 s planned + 1 s graceful_stop; generous for a loaded machine,
			// far below the minutes walking 10¹² iterations would take.
			if el > 15*time.Second {
				t.Errorf("run took %v", el)
			}
			// Nothing was sent after the plan's end: the last sample
			// started before the phase's end.
			if end := d.Info.Phases[0].End; end == nil || d.End.After(end.Add(time.Second+500*time.Millisecond)) {
				t.Errorf("samples until %v, phase ended %v", d.End, end)
			}
		})
	}
}

// An interrupt while the loop is far behind its schedule stops it at once:
// the due iterations it had not reached are dropped and counted, and the run
// returns within a bounded time with its results.
func TestOpenRateInterruptWhileBehind(t *testing.T) {
	t.Parallel()
	srv := newAllergyServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for srv.requests.Load() < 20 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	d, res, _ := runPlan(t, ctx, simplePlan, srv.URL, "workloads.w.load={rate: 1000000000000/s, duration: 60s, max_users: 4}")
	el := time.Since(start)
	ph := d.Info.Phases[0]
	t.Logf("planned %d started %d dropped %d in %v", ph.Planned, ph.Started, d.Dropped["w"], el)
	if res.Stopped != "interrupted" {
		t.Errorf("stopped %q, want interrupted", res.Stopped)
	}
	if ph.Started+d.Dropped["w"] != ph.Planned || ph.Planned >= 60e12 || ph.Planned < ph.Started {
		t.Errorf("planned %d, started %d, dropped %d: want planned = started + dropped, below the whole schedule",
			ph.Planned, ph.Started, d.Dropped["w"])
	}
	if el > 20*time.Second {
		t.Errorf("the interrupted run took %v to return", el)
	}
}

// A billion users (the plan checker refuses them with the machine's
// limits; the engine is given them here) are made only as they start: the
// run ends at its planned end, having allocated for the users it started,
// not for a billion (it took 3 GB and ran past its duration when every
// user was made up front). Not parallel: it reads the process's
// allocation counter.
func TestBillionUsersMadeLazily(t *testing.T) {
	for _, load := range []string{"{users: 1000000000, duration: 1s, graceful_stop: 1s}",
		"{users: 1000000000, ramp_up: 1s, duration: 1s, graceful_stop: 1s}"} {
		srv := newAllergyServer(t)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		d, _, _ := runPlan(t, context.Background(), simplePlan, srv.URL, "workloads.w.load="+load,
			"workloads.w.scenario=[{request: {name: get, url: /}}, {think: 10s}]",
			// Shared connections: 10,000 users' own would exhaust the
			// process's open files (the checker refuses that many).
			"http.connections=shared")
		el := time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc := m1.TotalAlloc - m0.TotalAlloc
		sent := srv.requests.Load()
		t.Logf("%s: %d requests (%d failed), server saw %d, %d MiB allocated, %v", load, d.Total.Count, d.Total.Errors, sent, alloc>>20, el)
		// Every request the server saw is recorded; so are the ones that
		// could not connect (thousands of users, each with its own
		// connection, can run out of ports or files: counted errors).
		started := d.Total.Count
		if started < sent || sent == 0 {
			t.Errorf("%s: samples %d, server saw %d", load, started, sent)
		}
		// Each started user allocates its state and a connection: bound
		// the allocation by what the started users can account for
		// (64 KiB each, generously), far below a billion users' 3 GB.
		if limit := uint64(started)*64<<10 + 256<<20; alloc > limit {
			t.Errorf("%s: %d MiB allocated for %d started users (limit %d MiB)", load, alloc>>20, started, limit>>20)
		}
		if el > 20*time.Second {
			t.Errorf("%s: run took %v", load, el)
		}
	}
}
