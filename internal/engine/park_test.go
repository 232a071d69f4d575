package engine_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"
)

// childServer starts the test binary as an HTTP server in a child process
// (TestMain, PLATEAU_TEST_SERVE) and returns its URL: its goroutines and
// memory are not the generator's.
func childServer(t *testing.T) string {
	t.Helper()
	exe, _ := os.Executable()
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "PLATEAU_TEST_SERVE=1")
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
	return "http://" + strings.TrimSpace(addr)
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
	if el > 6*time.Second {
		t.Errorf("run took %v: the 10 s think was not cut short at the 2 s end", el)
	}
	if n, errs := labelAgg(d, "get"); n != users || errs != 0 {
		t.Errorf("%d requests (%d failed), want %d: one per user, none failed", n, errs, users)
	}
}
