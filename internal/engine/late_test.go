package engine_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// The open model tells its own lateness apart from busy users: drops that
// come while the loop handing out iterations is behind its schedule by more
// than the queue holds are the generator's (dropped_late), drops while it
// is on time are the server's.
func TestDropsTellGeneratorLatenessApart(t *testing.T) {
	// Not parallel: it sets GOMAXPROCS for the whole process.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	fast := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	t.Cleanup(fast.Close)
	// 2,000/s with two users: the queue holds 2 iterations, 1 ms.
	src := "name: late\ntarget: http://127.0.0.1:1\nworkloads:\n  w:\n    scenario:\n      - request: {name: get, url: /}\n" +
		"    load: {rate: 2000/s, duration: 1500ms, max_users: 2}\n"
	// A goroutine that runs for 15 ms without blocking keeps the only P
	// from the scheduling loop until the runtime preempts it (10 ms):
	// the generator falls behind its schedule, as on a CPU it shares.
	stop := make(chan struct{})
	go func() {
		time.Sleep(200 * time.Millisecond)
		for range 8 {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			for t0 := time.Now(); time.Since(t0) < 15*time.Millisecond; {
			}
		}
	}()
	_, _, out := runPlan(t, context.Background(), src, fast.URL)
	close(stop)
	ph := phaseInfo(t, out)
	dropped := ph.Planned - ph.Started
	t.Logf("planned %d started %d dropped_late %d late_max %.1f ms", ph.Planned, ph.Started, ph.DroppedLate, ph.LateMaxMs)
	if ph.DroppedLate == 0 || ph.DroppedLate > dropped || ph.LateMaxMs < 1 {
		t.Errorf("a stalled generator: %d of %d drops counted as its own lateness (at most %.1f ms late)", ph.DroppedLate, dropped, ph.LateMaxMs)
	}

	// A slow server with the generator on time: the drops are the users'.
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(50 * time.Millisecond)
	}))
	t.Cleanup(slow.Close)
	src = "name: busy\ntarget: http://127.0.0.1:1\nworkloads:\n  w:\n    scenario:\n      - request: {name: get, url: /}\n" +
		"    load: {rate: 200/s, duration: 1s, max_users: 2}\n"
	_, _, out = runPlan(t, context.Background(), src, slow.URL)
	ph = phaseInfo(t, out)
	dropped = ph.Planned - ph.Started
	t.Logf("planned %d started %d dropped_late %d late_max %.1f ms", ph.Planned, ph.Started, ph.DroppedLate, ph.LateMaxMs)
	if dropped < ph.Planned/2 || ph.DroppedLate > dropped {
		t.Errorf("a slow server: %d of %d planned dropped, %d of them counted as the generator's lateness", dropped, ph.Planned, ph.DroppedLate)
	}
	// Which drops are whose holds only for a generator that got its CPU:
	// on a loaded machine the loop is late too, and says so.
	if ph.RunQueuePct < analysis.MaxRunQueuePct && 2*ph.DroppedLate >= dropped {
		t.Errorf("a slow server, the generator on its CPU (run-queue wait %.1f%%): %d dropped, %d of them counted as the generator's lateness", ph.RunQueuePct, dropped, ph.DroppedLate)
	}
}

func phaseInfo(t *testing.T, out string) rundir.PhaseInfo {
	t.Helper()
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Phases) != 1 {
		t.Fatalf("%d phases", len(info.Phases))
	}
	return info.Phases[0]
}
