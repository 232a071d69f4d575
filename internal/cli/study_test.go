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
	code, stdout, stderr := runCLI(t, "study", sf, "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "New build: all requests slower than") {
		t.Fatalf("stdout lacks the conclusion:\n%s", stdout)
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
