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
	if !strings.Contains(string(rep), "60 enabled elements") || !strings.Contains(string(rep), "## Not converted (5)") {
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

// plateau convert k6 writes into a directory that does not exist yet
// (made as named), with the data file the conversion made beside the
// plan, and the plan passes plateau check with the script's secret from
// the environment.
func TestConvertK6IntoNewDirectory(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "new", "deeper", "plan.yaml")
	src := filepath.Join("..", "convert", "wiretest", "testdata", "k6", "quickpizza", "09.data.js")
	code, stdout, stderr := runCLI(t, "convert", "k6", src, "-o", out)
	if code != 0 || !strings.Contains(stdout, "enabled elements converted") {
		t.Fatalf("convert: exit %d %q %q", code, stdout, stderr)
	}
	for _, f := range []string{"plan.yaml", "plan.convert.md", "tokens.tokens.csv"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(out), f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	csv, err := os.ReadFile(filepath.Join(filepath.Dir(out), "tokens.tokens.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Count(string(csv), "\n"); lines != 7 || !strings.HasPrefix(string(csv), "value\n") {
		t.Errorf("tokens CSV: %d lines, want a header and the file's 6 tokens:\n%s", lines, csv)
	}
	if code, stdout, stderr := runCLI(t, "check", out); code != 0 {
		t.Fatalf("check: exit %d %q %q", code, stdout, stderr)
	}
}

// plateau convert postman -e ENV -g GLOBALS: the RealWorld collection
// (v2.1) with an environment and a globals file — the environment's APIURL
// is the target's default, the globals' secret PASSWORD is read from the
// environment and never written, the login script's token is extracted;
// a file that is not an environment is an error naming it.
func TestConvertPostmanEnvironment(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "convert", "wiretest", "testdata", "postman", "conduit-v2.1")
	out := filepath.Join(t.TempDir(), "plan.yaml")
	code, stdout, stderr := runCLI(t, "convert", "postman", filepath.Join(dir, "Conduit.postman_collection.json"),
		"-e", filepath.Join(dir, "Conduit.postman_environment.json"), "--globals", filepath.Join(dir, "Conduit.postman_globals.json"), "-o", out)
	if code != 0 {
		t.Fatalf("convert: exit %d %q %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	plan := string(b)
	for _, want := range []string{`target: "${env.APIURL:-http://conduit.test/api}"`, "USERNAME: u1700000000", `PASSWORD: "${env.PASSWORD}"`, "token: {json: $.user.token}"} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	if strings.Contains(plan, "PASSWORD: password") {
		t.Errorf("the globals' password is in the plan:\n%s", plan)
	}
	bad := filepath.Join(t.TempDir(), "env.json")
	if err := os.WriteFile(bad, []byte(`{"name":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "convert", "postman", filepath.Join(dir, "Conduit.postman_collection.json"), "-e", bad, "-o", out)
	if code == 0 || !strings.Contains(stderr, bad) {
		t.Errorf("a bad environment file: exit %d %q", code, stderr)
	}
}

// TestConvertPostmanWorkingDir: a collection whose file parts name paths
// from newman's working directory (newman's own custom-http-method
// collection: test/integration/…/upload-file.csv, from its repository's
// root) converts with --working-dir as newman runs it: the plan reads the
// file there, typed text/csv as Postman types it. Without the flag the
// path is resolved from the collection's folder, where there is no such
// file, and the written plan's check says so.
func TestConvertPostmanWorkingDir(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", "convert", "wiretest", "testdata", "postman", "newman"))
	if err != nil {
		t.Fatal(err)
	}
	col := filepath.Join(root, "test", "integration", "custom-http-method", "custom-http-method.postman_collection.json")
	out := filepath.Join(t.TempDir(), "plan.yaml")
	code, stdout, stderr := runCLI(t, "convert", "postman", col, "--working-dir", root, "-o", out)
	if code != 0 {
		t.Fatalf("convert: exit %d %q %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(root, "test", "integration", "custom-http-method", "upload-file.csv")
	if !strings.Contains(string(b), "path: "+want) || !strings.Contains(string(b), "content_type: text/csv") {
		t.Errorf("plan lacks the file part at %s typed text/csv:\n%s", want, b)
	}
	code, _, stderr = runCLI(t, "convert", "postman", col, "-o", filepath.Join(t.TempDir(), "plan.yaml"))
	if code == 0 || !strings.Contains(stderr, "upload-file.csv") {
		t.Errorf("without --working-dir: exit %d %q, want the missing file named", code, stderr)
	}
}
