package engine_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// childServer starts the test binary as an HTTP server in a child process
// (TestMain, PLATEAU_TEST_SERVE) and returns its URL: its goroutines and
// memory are not the generator's.
func childServer(t testing.TB, env ...string) string {
	url, _ := startChild(t, env...)
	return url
}

// startChild is childServer that also returns the child's process id.
func startChild(t testing.TB, env ...string) (string, int) {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(append(os.Environ(), "PLATEAU_TEST_SERVE=1"), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return "http://" + strings.TrimSpace(addr), cmd.Process.Pid
}

// Users that think between requests hold no goroutine: 500 users, a
// request, then 10 s of think time. While they think, the process has far
// fewer goroutines than users; at the planned end (2 s) their think is cut
// short, so the run ends long before the think time is over, with exactly
// one request per user. Not parallel: it counts the process's goroutines.
func TestThinkingUsersHoldNoGoroutine(t *testing.T) {
	const users = 500
	url := childServer(t)
	runtime.GC()
	before := runtime.NumGoroutine()
	var during int
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(1500 * time.Millisecond) // all started, sent, thinking
		during = runtime.NumGoroutine()
	}()
	start := time.Now()
	d, _, _ := runPlan(t, context.Background(), simplePlan, url,
		"workloads.w.load={users: "+itoa(users)+", duration: 2s}",
		"workloads.w.scenario=[{request: {name: get, url: /}}, {think: 10s}]")
	el := time.Since(start)
	<-done
	t.Logf("goroutines: %d before the run, %d while %d users think; run took %v", before, during, users, el.Round(time.Millisecond))
	if during-before > users/10 {
		t.Errorf("%d goroutines more while %d users think, want fewer than %d (a thinking user holds none)", during-before, users, users/10)
	}
	if el > 9500*time.Millisecond { // a think not cut short ends at 10 s or later, however idle the machine
		t.Errorf("run took %v: the 10 s think was not cut short at the 2 s end", el)
	}
	if n, errs := labelAgg(d, "get"); n != users || errs != 0 {
		t.Errorf("%d requests (%d failed), want %d: one per user, none failed", n, errs, users)
	}
}

// Users without ramp-up start through a window: 2,000 users "at once"
// against a fast server never have all 2,000 goroutines alive together (each
// would hold the 8 KiB stack of its first connection): at most 64 are in
// their start at a time, a new one starting when one reaches its think time.
// Every user still starts and sends its request. The engine counts the users
// in their start and the extra windows it opened: the assertions read those
// counts, not the process's goroutines, which a loaded machine's timing moves.
func TestStartWindowBoundsGoroutines(t *testing.T) {
	t.Parallel()
	const users, window = 2000, 64
	url := childServer(t)
	// One iteration each, not a duration: every user starts however
	// slowly a loaded machine starts them.
	d, res, _ := runPlan(t, context.Background(), simplePlan, url,
		"workloads.w.load={users: "+itoa(users)+", iterations: 1}",
		"workloads.w.scenario=[{request: {name: get, url: /}}, {think: 3s}]")
	t.Logf("at most %d users in their start at once, %d extra windows opened, of %d users", res.StartPeak, res.StartWindows, users)
	if res.StartPeak > window*(1+res.StartWindows) {
		t.Errorf("%d users in their start at once with %d extra windows: the window of %d does not hold", res.StartPeak, res.StartWindows, window)
	}
	if res.StartPeak < 1 || res.StartPeak >= users {
		t.Errorf("%d users in their start at once, want between 1 and fewer than all %d", res.StartPeak, users)
	}
	if n, errs := labelAgg(d, "get"); n != users || errs != 0 {
		t.Errorf("%d requests (%d failed), want %d: one per user, none failed", n, errs, users)
	}
}

// The start window waits for the CPU, not for a slow server: with a server
// that holds every request until all 320 users' first requests have arrived
// (or 20 s, a bound), 320 users without ramp-up — five windows — all send
// their first request before any answer comes back, instead of one window
// per answer. The server counts the arrivals before its first answer.
func TestStartWindowSlowServer(t *testing.T) {
	t.Parallel()
	const users = 320
	var arrived atomic.Int64
	all := make(chan struct{})
	var before atomic.Int64 // arrivals when the first answer was released
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if arrived.Add(1) == users {
			close(all)
		}
		select {
		case <-all:
		case <-time.After(20 * time.Second):
		}
		before.CompareAndSwap(0, arrived.Load())
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	d, res, _ := runPlan(t, context.Background(), simplePlan, srv.URL,
		"workloads.w.load={users: "+itoa(users)+", iterations: 1}",
		"workloads.w.scenario=[{request: {name: get, url: /}}]",
		"http.timeout=30s")
	t.Logf("%d of %d users' first requests arrived before the first answer; %d extra windows", before.Load(), users, res.StartWindows)
	if before.Load() != users {
		t.Errorf("%d first requests arrived before the first answer, want all %d (a window per answer is not waiting for the CPU)", before.Load(), users)
	}
	if n, errs := labelAgg(d, "get"); n != users || errs != 0 {
		t.Errorf("%d requests (%d failed), want %d", n, errs, users)
	}
}

// A think cut short by the end of the load ends the iteration, as the
// sleeping think did: the user, resumed from its timer, does not go on to the
// steps after the think — not even a transaction's request, which a stopped
// user would otherwise still send. The teardown still runs once per user.
func TestStoppedThinkEndsIteration(t *testing.T) {
	t.Parallel()
	var a, b, down atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			a.Add(1)
		case "/b":
			b.Add(1)
		case "/down":
			down.Add(1)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	start := time.Now()
	runPlan(t, context.Background(), simplePlan, srv.URL,
		"workloads.w.load={users: 20, duration: 1s}",
		"workloads.w.scenario=[{request: {name: a, url: /a}}, {think: 30s}, {transaction: {name: t, steps: [{request: {name: b, url: /b}}]}}]",
		"workloads.w.teardown=[{request: {name: down, url: /down}}]")
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("run took %v: the 30 s think was not cut short", el)
	}
	if a.Load() != 20 || b.Load() != 0 || down.Load() != 20 {
		t.Errorf("requests a %d, b %d, teardown %d; want 20, 0 (the cut think ends the iteration), 20", a.Load(), b.Load(), down.Load())
	}
}
