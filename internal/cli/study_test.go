package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

func TestStudyCommand(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i, slower := range []float64{0, 40} {
		d := filepath.Join(root, []string{"base", "new"}[i])
		if err := reporttest.Write(d, reporttest.Options{Seed: 3, SlowerPct: slower, Steps: []reporttest.Step{{Users: 8, Seconds: 30, RampUpS: 2}}}); err != nil {
			t.Fatal(err)
		}
	}
	sf := filepath.Join(root, "study.yaml")
	os.WriteFile(sf, []byte("title: t\nruns:\n  - {dir: base, role: baseline}\n  - {dir: new, role: candidate, name: new build}\n"), 0o644)
	out := filepath.Join(root, "out")
	// The new build is 40 % slower: the inferred release question fails,
	// the study is FAILED and exits 1, as a run whose SLA failed.
	code, stdout, stderr := runCLI(t, "study", sf, "-o", out)
	if code != ExitSLAFailed {
		t.Fatalf("exit %d, want %d: %s", code, ExitSLAFailed, stderr)
	}
	if !strings.Contains(stdout, "study status: FAILED") || !strings.Contains(stdout, "FAILED       release: new build against lar-cave read allergies (base): slower at read, 8 users (") {
		t.Fatalf("stdout lacks the status and the answer:\n%s", stdout)
	}
	// The same runs the other way round: the candidate is faster, which is
	// a pass, not a failure.
	os.WriteFile(sf, []byte("title: t\nruns:\n  - {dir: new, role: baseline}\n  - {dir: base, role: candidate, name: fixed build}\n"), 0o644)
	code, stdout, stderr = runCLI(t, "study", sf, "-o", out)
	if code != 0 || !strings.Contains(stdout, "study status: PASSED") {
		t.Fatalf("exit %d: %s\n%s", code, stdout, stderr)
	}
	for _, f := range []string{"study.html", "study.md", "study.json", "study-junit.xml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	os.WriteFile(sf, []byte("runs:\n  - {dir: base, role: baseline}\n  - {dir: new, rol: candidate}\n"), 0o644)
	code, _, stderr = runCLI(t, "study", sf, "-o", out)
	if code == 0 || !strings.Contains(stderr, "study.yaml:3:16: unknown run key \"rol\"") {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
}
