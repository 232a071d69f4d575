package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plateau convert writes the plan and its report, and the plan passes
// plateau check; a file that is not a plan is an error naming it.
func TestConvertCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join("..", "convert", "jmeter", "testdata", "plans", "features.jmx")
	for _, f := range []string{"accounts.csv", "fragment.jmx"} {
		b, err := os.ReadFile(filepath.Join(filepath.Dir(src), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "plan.yaml")
	code, stdout, stderr := runCLI(t, "convert", "jmeter", src, "-o", out)
	if code != 0 || !strings.Contains(stdout, "enabled elements converted") {
		t.Fatalf("convert: exit %d %q %q", code, stdout, stderr)
	}
	rep, err := os.ReadFile(filepath.Join(dir, "plan.convert.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rep), "60 enabled elements") || !strings.Contains(string(rep), "## Not converted (6)") {
		t.Errorf("report:\n%s", rep)
	}
	// The Authorization Manager's credentials are read from the
	// environment, never written: check says which variable to set.
	code, _, stderr = runCLI(t, "check", out)
	if code != ExitError || !strings.Contains(stderr, "BASIC_AUTH is not set") {
		t.Fatalf("check without BASIC_AUTH: exit %d %q", code, stderr)
	}
	plan, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	withDefault := strings.ReplaceAll(string(plan), "${env.BASIC_AUTH}", "${env.BASIC_AUTH:-YWRtaW46eA==}")
	if err := os.WriteFile(out, []byte(withDefault), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := runCLI(t, "check", out); code != 0 {
		t.Fatalf("check: exit %d %q %q", code, stdout, stderr)
	}

	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte("{\n  \"log\": [1,,]\n}"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "convert", "har", bad, "-o", filepath.Join(dir, "x.yaml"))
	if code != ExitError || !strings.Contains(stderr, bad) || !strings.Contains(stderr, "line 2") {
		t.Errorf("bad HAR: exit %d %q", code, stderr)
	}
}
