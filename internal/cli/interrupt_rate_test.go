package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Ctrl-C during an open-model run far beyond what the generator can send
// (1,000,000/s, the most a 1-CPU machine is allowed): the arrival loop,
// far behind, stops at once, the run writes its results and report and
// exits interrupted; the phase's counts add up (planned = started +
// dropped) and stop at the interrupt instead of the 60 s schedule.
func TestInterruptHighRateExitsWithReport(t *testing.T) {
	t.Parallel()
	srv, seen := stallServer(t, 0, 200)
	p := writePlan(t, fmt.Sprintf(`name: flood
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {rate: 1000000/s, duration: 60s, max_users: 4}
`, srv.URL))
	out := filepath.Join(t.TempDir(), "run")
	cmd := plateauCmd("run", p, "-o", out, "-q")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for seen.Load() < 50 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	sent := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := exitCode(t, cmd.Wait())
	took := time.Since(sent)
	t.Logf("exit %d %v after SIGINT", code, took)
	if code != ExitNotHeld {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitNotHeld, stdout.String(), stderr.String())
	}
	// Generous for a loaded machine (it takes well under a second on an
	// idle one); the schedule itself had 59 s left.
	if took > 15*time.Second {
		t.Errorf("exited %v after SIGINT", took)
	}
	s := readSummary(t, out)
	if s.Verdict != analysis.VerdictInterrupted {
		t.Errorf("verdict %q, want interrupted", s.Verdict)
	}
	for _, f := range []string{"report.html", "report.md", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s: %v", f, err)
		}
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	ph := info.Phases[0]
	dropped := s.Validity.Dropped
	if ph.Planned != ph.Started+dropped || ph.Planned >= 60_000_000 || ph.Started == 0 {
		t.Errorf("planned %d, started %d, dropped %d: want planned = started + dropped, short of the 60 s schedule", ph.Planned, ph.Started, dropped)
	}
	if info.Status != rundir.StatusInterrupted {
		t.Errorf("run.json status %q", info.Status)
	}
}
