package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// A run that cannot open its trace file ends before the load with run.json
// saying failed and why — not "running", as it once did — and sends nothing.
func TestRunTraceFailureFinalisesRunJSON(t *testing.T) {
	t.Parallel()
	srv, hits := testServer(t)
	p := writePlan(t, "name: tr\ntarget: "+srv.URL+"\nworkloads:\n  w:\n    scenario: [{request: {url: /x}}]\n    load: {users: 1, iterations: 1}\n")
	out := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(filepath.Join(out, "trace.txt"), 0o755); err != nil { // a directory where the file goes
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", p, "-o", out, "-q", "--trace", "1")
	if code == ExitOK || !strings.Contains(stderr, "trace") {
		t.Fatalf("exit %d, stderr %q: want a failure naming the trace", code, stderr)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusFailed || info.End == nil || len(info.Notes) == 0 || !strings.Contains(strings.Join(info.Notes, " "), "trace") {
		t.Errorf("run.json status %q, end %v, notes %q: want failed, ended, the trace named", info.Status, info.End, info.Notes)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}
