package cli

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// stallServer answers every request after delay, counting what it saw.
func stallServer(t *testing.T, delay time.Duration, status int) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-time.After(delay):
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(status)
		w.Write([]byte("body"))
	}))
	t.Cleanup(func() {
		close(release)
		srv.Close()
	})
	return srv, &n
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("running plateau: %v", err)
	}
	return ee.ExitCode()
}

func countClass(s *analysis.Summary, class string) int64 {
	return s.Errors.ByClass[class]
}

// SIGINT while every request is stalled: the run writes its report but its
// status is interrupted, it exits 3, junit.xml fails, and the requests in
// flight are recorded as aborted, so the samples equal what the server saw.
func TestInterruptIsNotGreen(t *testing.T) {
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { interruptIsNotGreen(t, sig) })
	}
}

func interruptIsNotGreen(t *testing.T, sig os.Signal) {
	srv, seen := stallServer(t, time.Minute, 200)
	p := writePlan(t, fmt.Sprintf(`name: stalled
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {users: 10, duration: 60s}
sla:
  - error_rate < 100%%
`, srv.URL))
	out := filepath.Join(t.TempDir(), "run")
	cmd := plateauCmd("run", p, "-o", out, "-q")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for seen.Load() < 10 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond)
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	code := exitCode(t, cmd.Wait())
	if code != ExitNotHeld {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitNotHeld, stdout.String(), stderr.String())
	}
	if strings.Contains(stdout.String(), "PASSED") || !strings.Contains(stdout.String(), "test status: INTERRUPTED") {
		t.Errorf("console does not say INTERRUPTED (or says PASSED):\n%s", stdout.String())
	}
	s := readSummary(t, out)
	if s.Verdict != analysis.VerdictInterrupted {
		t.Errorf("verdict %q, want interrupted", s.Verdict)
	}
	tot := s.Labels[len(s.Labels)-1]
	if tot.Samples != seen.Load() || countClass(s, "aborted") != seen.Load() {
		t.Errorf("samples %d (aborted %d), server saw %d: requests in flight must be recorded",
			tot.Samples, countClass(s, "aborted"), seen.Load())
	}
	junit, err := os.ReadFile(filepath.Join(out, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(junit), `<failure message="interrupted`) {
		t.Errorf("junit.xml has no failing test case for the interrupt:\n%s", junit)
	}
}

// Without requirements the status is "no requirements", never PASSED, and
// the console states the error rate; when no request succeeded, exit 2.
func TestNoRequirementsStatus(t *testing.T) {
	plan := func(url string) string {
		return writePlan(t, fmt.Sprintf(`name: nosla
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {users: 2, iterations: 3}
`, url))
	}
	t.Run("all succeed", func(t *testing.T) {
		srv, _ := stallServer(t, 0, 200)
		out := filepath.Join(t.TempDir(), "run")
		code, stdout, stderr := runCLI(t, "run", plan(srv.URL), "-o", out, "-q")
		if code != ExitOK {
			t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
		}
		if strings.Contains(stdout, "PASSED") || !strings.Contains(stdout, "test status: NO REQUIREMENTS") ||
			!strings.Contains(stdout, "errors: 0.00% (0 of 6 requests)") {
			t.Errorf("console:\n%s", stdout)
		}
		if s := readSummary(t, out); s.Verdict != analysis.VerdictNoRequirements {
			t.Errorf("verdict %q", s.Verdict)
		}
	})
	t.Run("all fail", func(t *testing.T) {
		srv, _ := stallServer(t, 0, 500)
		out := filepath.Join(t.TempDir(), "run")
		code, stdout, stderr := runCLI(t, "run", plan(srv.URL), "-o", out, "-q")
		if code != ExitError {
			t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitError, stdout, stderr)
		}
		if strings.Contains(stdout, "PASSED") || !strings.Contains(stdout, "errors: 100.00% (6 of 6 requests)") {
			t.Errorf("console:\n%s", stdout)
		}
		if s := readSummary(t, out); s.Verdict != analysis.VerdictNotRun {
			t.Errorf("verdict %q, want %q", s.Verdict, analysis.VerdictNotRun)
		}
		if !strings.Contains(stderr, "no request succeeded") || !strings.Contains(stderr, "http_5xx") {
			t.Errorf("stderr does not say why:\n%s", stderr)
		}
		junit, _ := os.ReadFile(filepath.Join(out, "junit.xml"))
		if !strings.Contains(string(junit), `<failure message="could not run`) {
			t.Errorf("junit.xml passes a run in which no request succeeded:\n%s", junit)
		}
	})
}

// A target with nothing listening: exit 2, naming the refused address.
func TestUnreachableTarget(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := writePlan(t, fmt.Sprintf(`name: nothing
target: http://%s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {users: 1, duration: 1s}
sla:
  - error_rate < 1%%
`, addr))
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	if code != ExitError {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitError, stdout, stderr)
	}
	if !strings.Contains(stderr, "refused") || !strings.Contains(stderr, "(target http://"+addr+")") {
		t.Errorf("stderr does not name the refused address %s:\n%s", addr, stderr)
	}
}

// The fault server stalls every request 300 ms and one user is allowed: the
// planned 50/s cannot be held. The run ends on time, drops what could not
// start, says so first on the console's last lines, in summary.json and in
// junit.xml, and exits 3 — even though its requirement held.
func TestOverloadInvalid(t *testing.T) {
	srv, seen := stallServer(t, 300*time.Millisecond, 200)
	p := writePlan(t, fmt.Sprintf(`name: overload
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {rate: 50/s, duration: 2s, max_users: 1}
sla:
  - error_rate < 1%%
`, srv.URL))
	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("run took %v for a 2 s plan", el)
	}
	if code != ExitNotHeld {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitNotHeld, stdout, stderr)
	}
	s := readSummary(t, out)
	v := s.Validity
	if s.Verdict != analysis.VerdictInvalid || v == nil || v.Verdict != "invalid" || len(v.Phases) != 1 {
		t.Fatalf("verdict %q, validity %+v", s.Verdict, v)
	}
	ph := v.Phases[0]
	tot := s.Labels[len(s.Labels)-1]
	if ph.Planned != 100 || ph.Started != tot.Samples || ph.Dropped != 100-tot.Samples || tot.Samples != seen.Load() {
		t.Errorf("phase %+v; samples %d, server saw %d", ph, tot.Samples, seen.Load())
	}
	if ph.PlannedRate != 50 || ph.AchievedRate > 5 || ph.PeakUsers != 1 || ph.MaxUsers != 1 {
		t.Errorf("phase %+v: want planned 50/s, achieved ≤ 5/s, 1 of 1 users", ph)
	}
	if ph.ServiceMs < 250 || ph.InFlight < 0.8 {
		t.Errorf("service %.1f ms, in flight %.2f: want ≥ 250 ms and ~1 (Little's law)", ph.ServiceMs, ph.InFlight)
	}
	reason := strings.Join(v.Reasons, "; ")
	for _, want := range []string{"planned 50/s", "achieved", "the one user allowed (max_users) was busy", "iterations dropped"} {
		if !strings.Contains(reason, want) {
			t.Errorf("reason %q lacks %q", reason, want)
		}
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	tail := strings.Join(lines[max(0, len(lines)-5):], "\n")
	if !strings.Contains(tail, "load: NOT HELD") || !strings.Contains(tail, "test status: INVALID") {
		t.Errorf("the console's last lines do not state the invalid load:\n%s", tail)
	}
	junit, _ := os.ReadFile(filepath.Join(out, "junit.xml"))
	if !strings.Contains(string(junit), `<failure message="invalid`) {
		t.Errorf("junit.xml passes an invalid run:\n%s", junit)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if i, j := strings.Index(string(md), "Load not held"), strings.Index(string(md), "## Scope"); i < 0 || j < 0 || i > j {
		t.Errorf("the report's summary does not state the load was not held")
	}
}

// SIGKILL of `plateau run --generators 2`'s parent: the generators die
// with it instead of sending their whole load to a target nobody watches.
func TestGeneratorsDieWithParent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs generator processes")
	}
	srv, seen := stallServer(t, 0, 200)
	p := writePlan(t, fmt.Sprintf(`name: orphans
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {rate: 40/s, duration: 60s}
`, srv.URL))
	dir := filepath.Join(t.TempDir(), "run")
	cmd := plateauCmd("run", p, "--generators", "2", "-o", dir, "-q")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for seen.Load() < 40 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if seen.Load() < 40 {
		t.Fatal("the generators never sent their load")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	time.Sleep(1500 * time.Millisecond) // graceful stop of the children
	after := seen.Load()
	time.Sleep(2 * time.Second)
	if more := seen.Load() - after; more > 0 {
		t.Errorf("%d requests sent after the parent was killed: the generators were orphaned", more)
	}
	// They stopped gracefully: each segment is a complete, interrupted run
	// directory that `plateau merge` can still join.
	for _, seg := range []string{"0", "1"} {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			if _, err := os.Stat(filepath.Join(dir, SegmentsDir, seg, "summary.json")); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if b, err := os.ReadFile(filepath.Join(dir, SegmentsDir, seg, "generator.log")); err == nil {
			t.Logf("segment %s log:\n%s", seg, b)
		}
		info, err := rundir.ReadInfo(filepath.Join(dir, SegmentsDir, seg))
		if err != nil {
			t.Fatal(err)
		}
		if info.Status != rundir.StatusInterrupted {
			t.Errorf("segment %s: status %q, want interrupted", seg, info.Status)
		}
		if _, err := os.Stat(filepath.Join(dir, SegmentsDir, seg, "summary.json")); err != nil {
			t.Errorf("segment %s wrote no summary: %v", seg, err)
		}
	}
}
