package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// The live half of the prose grid (internal/report's TestProse holds the
// synthetic and imported half): each kind of live run plateau makes —
// closed and open model, steps stopped by their rule, two concurrent
// workloads, interrupted, invalid from overload, could not run, merged —
// runs briefly against a loopback server, and its report (Markdown and
// HTML) is read sentence by sentence by reporttest.RunDefects through
// checkRunProse. Every run is bounded in requests and seconds.

// gridServer answers every request after d; with serial set, one at a
// time (a service whose capacity is 1/d). It counts what it answered.
func gridServer(t *testing.T, d time.Duration, serial bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var (
		n  atomic.Int64
		mu sync.Mutex
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if serial {
			mu.Lock()
			defer mu.Unlock()
		}
		time.Sleep(d)
		if n.Add(1)%40 == 0 && r.URL.Path == "/flaky" {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// gridRun runs plan and returns its run directory, requiring one of the
// exit codes want. A paced or open run on a machine too busy to keep its
// schedule is rightly invalid (ExitNotHeld): those kinds accept it, since
// its report is read all the same.
func gridRun(t *testing.T, plan string, want ...int) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", writePlan(t, plan), "-o", out, "-q")
	if !slices.Contains(want, code) {
		t.Fatalf("exit %d, want %v\nstdout:\n%s\nstderr:\n%s", code, want, stdout, stderr)
	}
	if code != want[0] {
		t.Logf("exit %d (the machine could not keep the schedule)", code)
	}
	return out
}

func TestProseGridLive(t *testing.T) {
	t.Parallel()
	t.Run("closed model", func(t *testing.T) {
		t.Parallel()
		srv, _ := gridServer(t, 2*time.Millisecond, false)
		dir := gridRun(t, fmt.Sprintf(`name: closed
target: %s
workloads:
  shop:
    scenario:
      - request: {name: items, url: /items}
      - request: {name: flaky, url: /flaky}
    load: {users: 3, duration: 3s, pace: 50ms}
sla:
  - p95(response_time) < 10s
  - error_rate < 10%%
`, srv.URL), ExitOK, ExitNotHeld)
		checkRunProse(t, dir)
	})
	t.Run("open model", func(t *testing.T) {
		t.Parallel()
		srv, _ := gridServer(t, 2*time.Millisecond, false)
		dir := gridRun(t, fmt.Sprintf(`name: open
target: %s
workloads:
  shop:
    scenario:
      - request: {name: items, url: /items}
    load: {rate: 40/s, duration: 3s, max_users: 20}
sla:
  - p99(response_time) < 10s
`, srv.URL), ExitOK, ExitNotHeld)
		checkRunProse(t, dir)
	})
	t.Run("steps with a stop rule", func(t *testing.T) {
		t.Parallel()
		// One request at a time, 25 ms each: 40 req/s whatever the
		// users. 1 user leaves the server idle between requests, 2 keep it
		// busy, and from then on more users add nothing (0 % gain, ±2 %
		// over 3 s): the rule stops the run before the fifth step.
		srv, _ := gridServer(t, 25*time.Millisecond, true)
		dir := gridRun(t, fmt.Sprintf(`name: steps
target: %s
workloads:
  shop:
    scenario:
      - request: {name: items, url: /items}
    load:
      steps:
        - {users: 1, duration: 3s}
        - {users: 2, duration: 3s}
        - {users: 4, duration: 3s}
        - {users: 8, duration: 3s}
        - {users: 16, duration: 3s}
      stop_when: "throughput_gain < 5%%"
`, srv.URL), ExitOK)
		info, err := rundir.ReadInfo(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(info.Phases) >= 5 {
			t.Errorf("%d phases: the stop rule did not stop the run", len(info.Phases))
		}
		checkRunProse(t, dir)
	})
	t.Run("two concurrent workloads", func(t *testing.T) {
		t.Parallel()
		srv, _ := gridServer(t, 2*time.Millisecond, false)
		dir := gridRun(t, fmt.Sprintf(`name: two
target: %s
workloads:
  browse:
    scenario:
      - request: {name: items, url: /items}
    load: {users: 2, duration: 3s, pace: 50ms}
  import:
    scenario:
      - request: {name: upload, url: /upload, method: POST, body: "x"}
    load: {rate: 10/s, duration: 2s, start_after: 1s, max_users: 5}
`, srv.URL), ExitOK, ExitNotHeld)
		checkRunProse(t, dir)
	})
	t.Run("invalid from overload", func(t *testing.T) {
		t.Parallel()
		// 100 arrivals a second, 2 users, 100 ms per request: 20/s served,
		// the rest dropped — far beyond the 1 % that makes a run invalid.
		srv, _ := gridServer(t, 100*time.Millisecond, false)
		dir := gridRun(t, fmt.Sprintf(`name: overload
target: %s
workloads:
  shop:
    scenario:
      - request: {name: items, url: /items}
    load: {rate: 100/s, duration: 2s, max_users: 2}
`, srv.URL), ExitNotHeld)
		checkRunProse(t, dir)
	})
	t.Run("could not run", func(t *testing.T) {
		t.Parallel()
		// A port nothing listens on: every request is refused.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		dir := gridRun(t, fmt.Sprintf(`name: refused
target: http://%s
workloads:
  shop:
    scenario:
      - request: {name: items, url: /items}
    load: {users: 2, iterations: 40}
sla:
  - error_rate < 1%%
`, addr), ExitError)
		checkRunProse(t, dir)
	})
	t.Run("interrupted", func(t *testing.T) {
		t.Parallel()
		srv, n := gridServer(t, 2*time.Millisecond, false)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { // Ctrl-C once the server has answered 100 requests
			for n.Load() < 100 && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
		}()
		out := filepath.Join(t.TempDir(), "run")
		plan := writePlan(t, fmt.Sprintf(`name: interrupted
target: %s
workloads:
  shop:
    scenario:
      - request: {name: items, url: /items}
    load: {users: 2, duration: 60s, pace: 20ms}
`, srv.URL))
		code, stdout, stderr := runCLICtx(ctx, "run", plan, "-o", out, "-q")
		if code != ExitNotHeld {
			t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitNotHeld, stdout, stderr)
		}
		checkRunProse(t, out)
	})
	t.Run("merged", func(t *testing.T) {
		t.Parallel()
		srv, _ := gridServer(t, 2*time.Millisecond, false)
		plan := writePlan(t, fmt.Sprintf(`name: split
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /x}
    load: {rate: 20/s, duration: 3s, max_users: 10}
sla:
  - error_rate < 1%%
`, srv.URL))
		start := startInstant(3 * time.Second) // room for a busy machine: a segment 1.5 s late fails the merge
		base := t.TempDir()
		dirs := []string{filepath.Join(base, "segment-0"), filepath.Join(base, "segment-1")}
		var wg sync.WaitGroup
		codes := make([]int, 2)
		errs := make([]string, 2)
		for i, d := range dirs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i], _, errs[i] = runCLIPlain("run", plan, "--segment", fmt.Sprintf("%d/2", i), "--start-at", start.Format(time.RFC3339Nano), "-o", d, "-q")
			}()
		}
		wg.Wait()
		for i := range codes {
			if codes[i] != ExitOK {
				t.Fatalf("segment %d: exit %d\n%s", i, codes[i], errs[i])
			}
		}
		out := filepath.Join(base, "merged")
		if code, stdout, stderr := runCLI(t, "merge", "--segments", "2", dirs[0], dirs[1], "-o", out); code != ExitOK {
			t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
		}
		checkRunProse(t, out)
	})
}
