package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/rundir"
)

func testServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		if r.URL.Path == "/slow" {
			time.Sleep(30 * time.Millisecond)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func writePlan(t *testing.T, body string) string {
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readSummary(t *testing.T, dir string) *analysis.Summary {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s analysis.Summary
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func TestRunExitCodes(t *testing.T) {
	srv, _ := testServer(t)
	plan := func(sla string) string {
		return writePlan(t, fmt.Sprintf(`name: codes
target: %s
workloads:
  w:
    scenario:
      - request: {name: slow, url: /slow}
    load: {users: 2, iterations: 5}
sla:
  - %s
`, srv.URL, sla))
	}
	cases := []struct {
		name, sla string
		want      int
	}{
		{"holds", "avg(response_time) < 5s", ExitOK},
		{"fails", "p95(response_time) < 1ms", ExitSLAFailed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			code, stdout, stderr := runCLI(t, "run", plan(c.sla), "-o", out, "-q")
			if code != c.want {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.want, stdout, stderr)
			}
			s := readSummary(t, out)
			if s.Passed != (c.want == ExitOK) || len(s.SLA) != 1 {
				t.Errorf("summary passed=%v sla=%+v", s.Passed, s.SLA)
			}
			if s.Labels[len(s.Labels)-1].Label != "TOTAL" || s.Labels[len(s.Labels)-1].Samples != 10 {
				t.Errorf("TOTAL row %+v, want 10 samples", s.Labels[len(s.Labels)-1])
			}
		})
	}
	t.Run("bad plan", func(t *testing.T) {
		p := writePlan(t, "name: bad\ntarget: http://127.0.0.1:1\nworkloads:\n  w:\n    scenario:\n      - request: {url: /x}\n    load: {usres: 2, duration: 5}\n")
		code, _, stderr := runCLI(t, "run", p, "-o", filepath.Join(t.TempDir(), "run"))
		if code != ExitError {
			t.Fatalf("exit %d, want %d", code, ExitError)
		}
		for _, want := range []string{"plan.yaml:7:", "usres"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
	})
}

// A run killed with SIGKILL leaves a directory from which the summary is
// rebuilt, losing only what came after the last flushed second. The test
// counts what the code wrote, not seconds of wall time: every request the
// server answered before the end of the last second in intervals.ndjson is
// recovered, but for those still in flight when that second was cut (at
// most one per user). (It once asserted the loss at most 1.2 × the mean
// rate, which a loaded machine's slower start and late flush broke.)
func TestSIGKILLRecovery(t *testing.T) {
	var (
		mu       sync.Mutex
		answered []time.Time
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
		mu.Lock()
		answered = append(answered, time.Now())
		mu.Unlock()
	}))
	defer srv.Close()
	const users = 4
	p := writePlan(t, fmt.Sprintf(`name: killed
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
      - think: 10ms
    load: {users: %d, duration: 60s}
`, srv.URL, users))
	out := filepath.Join(t.TempDir(), "run")
	cmd := plateauCmd("run", p, "-o", out, "-q")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill once two seconds are on disk (a condition polled, not a sleep).
	flushed := func() (last int64) {
		_ = rundir.ReadIntervals(out, func(r *rundir.IntervalRecord) error {
			if r.Users == nil && r.Dropped == nil {
				last = max(last, r.T)
			}
			return nil
		})
		return last
	}
	for first, deadline := int64(0), time.Now().Add(2*time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no second written in 2 minutes")
		}
		if l := flushed(); first == 0 {
			first = l
		} else if l > first {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if _, err := os.Stat(filepath.Join(out, "summary.json")); err == nil {
		t.Fatal("summary.json exists after SIGKILL: the run was not killed mid-way")
	}
	if _, err := writeReports(out, ""); err != nil {
		t.Fatalf("rebuilding from a killed run: %v", err)
	}
	s := readSummary(t, out)
	tot := s.Labels[len(s.Labels)-1]
	if s.Status != "running" || len(s.Phases) != 1 {
		t.Errorf("status %q, phases %d", s.Status, len(s.Phases))
	}
	end := time.Unix(flushed()+1, 0) // the end of the last second on disk
	mu.Lock()
	atKill, before := int64(len(answered)), int64(0)
	for _, a := range answered {
		if a.Before(end) {
			before++
		}
	}
	mu.Unlock()
	if tot.Samples == 0 || tot.Samples > atKill || tot.Samples < before-users {
		t.Errorf("recovered %d samples; the server answered %d, %d of them before the last second on disk ended (in flight then: at most %d)",
			tot.Samples, atKill, before, users)
	}
	t.Logf("recovered %d of %d answered (%d before the last flushed second ended)", tot.Samples, atKill, before)
}
