package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// A prepare command writes the CSV the plan's feeder reads (it does not
// exist when the plan is loaded); the run reads it after the command,
// every user sends its row, and the commands' durations, exit codes and
// masked output land in run.json, summary.json and the report, outside
// every load figure.
func TestPrepareWritesDataThenCleanup(t *testing.T) {
	srv, seen := stallServer(t, 0, 200)
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.yaml")
	plan := fmt.Sprintf(`name: prepared
target: %s
vars:
  api_token: "${env.PLATEAU_TEST_TOKEN}"
prepare:
  - name: make-data
    run: |
      mkdir -p data
      printf 'id\n1\n2\n3\n' > data/ids.csv
      echo "loaded 3 rows with token $API_TOKEN into $PLATEAU_TARGET"
      sleep 0.2
    env: {API_TOKEN: "${env.PLATEAU_TEST_TOKEN}"}
  - args: [sh, -c, "echo second; echo to-stderr >&2"]
cleanup:
  - name: remove-data
    run: rm -r data && echo removed
data:
  ids: {csv: data/ids.csv, order: unique}
workloads:
  w:
    scenario:
      - request: {name: get, url: "/item/${ids.id}", headers: {Authorization: "Bearer ${api_token}"}}
    load: {users: 1, iterations: 3}
`, srv.URL)
	if err := os.WriteFile(p, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if seen.Load() != 3 {
		t.Errorf("server saw %d requests, want 3 (one per generated row)", seen.Load())
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("cleanup did not remove the generated data: %v", err)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Prepare) != 2 || len(info.Cleanup) != 1 {
		t.Fatalf("run.json prepare %d, cleanup %d commands; want 2 and 1", len(info.Prepare), len(info.Cleanup))
	}
	mk := info.Prepare[0]
	if mk.Name != "make-data" || mk.Status != rundir.CommandOK || mk.ExitCode != 0 || mk.DurationS < 0.2 {
		t.Errorf("make-data recorded as %+v", mk)
	}
	if info.Prepare[1].Name != "prepare 2" {
		t.Errorf("unnamed command named %q, want \"prepare 2\"", info.Prepare[1].Name)
	}
	// Not measured: the run's span starts after the prepare commands
	// and ends before the cleanup.
	if !info.Start.After(mk.Start.Add(200*time.Millisecond)) || info.End.After(info.Cleanup[0].Start) {
		t.Errorf("run span %v–%v overlaps the commands (prepare started %v, cleanup %v)",
			info.Start, info.End, mk.Start, info.Cleanup[0].Start)
	}
	log, err := os.ReadFile(filepath.Join(out, mk.Log))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), "s3cr3t-token-value") || !strings.Contains(string(log), "loaded 3 rows with token *** into "+srv.URL) {
		t.Errorf("prepare log not masked or incomplete:\n%s", log)
	}
	log2, _ := os.ReadFile(filepath.Join(out, info.Prepare[1].Log))
	if !strings.Contains(string(log2), "second") || !strings.Contains(string(log2), "to-stderr") {
		t.Errorf("stdout and stderr not both saved:\n%s", log2)
	}
	s := readSummary(t, out)
	if len(s.Prepare) != 2 || len(s.Cleanup) != 1 || s.Cleanup[0].Status != rundir.CommandOK {
		t.Errorf("summary.json prepare/cleanup: %+v / %+v", s.Prepare, s.Cleanup)
	}
	if tot := s.Labels[len(s.Labels)-1]; tot.Samples != 3 {
		t.Errorf("TOTAL samples %d, want 3: commands must not be counted", tot.Samples)
	}
	for _, f := range []string{"report.md", "report.html", "summary.json", "run.json"} {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "s3cr3t-token-value") {
			t.Errorf("%s holds the secret token", f)
		}
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"Data preparation, not measured: 2 prepare commands ran for ",
		"s before the first request; 1 cleanup command ran for ", "Prepare and cleanup commands (not measured)",
		"| prepare | make-data |", "| cleanup | remove-data |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// A failing prepare command stops the run before any request: exit 2,
// status "could not run" naming the command, the later prepare commands
// skipped, and the cleanup still run.
func TestPrepareFailureCouldNotRun(t *testing.T) {
	srv, seen := stallServer(t, 0, 200)
	marker := filepath.Join(t.TempDir(), "cleaned")
	p := writePlan(t, fmt.Sprintf(`name: broken-prepare
target: %s
prepare:
  - name: load
    run: 'echo "loading"; echo "ERROR: table missing" >&2; exit 3'
  - name: never
    run: touch should-not-exist
cleanup:
  - touch %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {users: 1, iterations: 3}
`, srv.URL, marker))
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	if code != ExitError {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitError, stdout, stderr)
	}
	if seen.Load() != 0 {
		t.Errorf("server saw %d requests after a failed prepare", seen.Load())
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("cleanup did not run after the failed prepare: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(p), "should-not-exist")); err == nil {
		t.Error("a prepare command after the failure ran")
	}
	if !strings.Contains(stderr, `prepare "load" failed with exit status 3`) || !strings.Contains(stderr, "ERROR: table missing") {
		t.Errorf("stderr does not say which command failed and why:\n%s", stderr)
	}
	s := readSummary(t, out)
	if s.Verdict != analysis.VerdictNotRun || s.Status != rundir.StatusFailed {
		t.Errorf("verdict %q status %q, want could not run / failed", s.Verdict, s.Status)
	}
	if len(s.VerdictReasons) == 0 || !strings.Contains(s.VerdictReasons[0], `prepare command "load" failed with exit status 3`) {
		t.Errorf("verdict reasons do not name the prepare failure: %q", s.VerdictReasons)
	}
	if len(s.Prepare) != 2 || s.Prepare[0].ExitCode != 3 || s.Prepare[1].Status != rundir.CommandSkipped {
		t.Errorf("prepare results: %+v", s.Prepare)
	}
	if !strings.Contains(stdout, "test status: COULD NOT RUN") {
		t.Errorf("console does not state the status:\n%s", stdout)
	}
}

// A prepare command that outlives its timeout is killed with its whole
// process group, and the run does not start.
func TestPrepareTimeout(t *testing.T) {
	srv, _ := stallServer(t, 0, 200)
	p := writePlan(t, fmt.Sprintf(`name: slow-prepare
target: %s
prepare:
  - {name: slow, run: "sleep 30 & wait", timeout: 300ms}
workloads:
  w:
    scenario: [{request: {url: /}}]
    load: {users: 1, iterations: 1}
`, srv.URL))
	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	if code != ExitError {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	if el := time.Since(start); el > 15*time.Second {
		t.Errorf("took %v: the timeout did not stop the command", el)
	}
	s := readSummary(t, out)
	if len(s.Prepare) != 1 || s.Prepare[0].Status != rundir.CommandTimeout {
		t.Errorf("prepare results: %+v", s.Prepare)
	}
}

// Ctrl-C in the middle of the load: the cleanup commands still run, and
// are recorded, before plateau exits (3, interrupted).
func TestCleanupAfterInterrupt(t *testing.T) {
	srv, seen := stallServer(t, time.Minute, 200)
	marker := filepath.Join(t.TempDir(), "cleaned")
	p := writePlan(t, fmt.Sprintf(`name: interrupted
target: %s
prepare:
  - echo ready
cleanup:
  - name: mark
    run: echo bye > %s
workloads:
  w:
    scenario: [{request: {name: get, url: /}}]
    load: {users: 2, duration: 60s}
`, srv.URL, marker))
	out := filepath.Join(t.TempDir(), "run")
	cmd := plateauCmd("run", p, "-o", out, "-q")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for seen.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := exitCode(t, cmd.Wait())
	if code != ExitNotHeld {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitNotHeld, stdout.String(), stderr.String())
	}
	if b, err := os.ReadFile(marker); err != nil || strings.TrimSpace(string(b)) != "bye" {
		t.Fatalf("cleanup did not run after the interrupt: %v %q\n%s", err, b, stderr.String())
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusInterrupted || len(info.Cleanup) != 1 || info.Cleanup[0].Status != rundir.CommandOK {
		t.Errorf("run.json status %q cleanup %+v", info.Status, info.Cleanup)
	}
}

// With --generators the parent runs the prepare and cleanup commands once
// (the generators read the data they wrote), and the merged run.json
// records them.
func TestPrepareWithGenerators(t *testing.T) {
	if testing.Short() {
		t.Skip("runs local generator processes")
	}
	srv, seen := stallServer(t, 0, 200)
	dir := t.TempDir()
	p := filepath.Join(dir, "plan.yaml")
	plan := fmt.Sprintf(`name: gens
target: %s
prepare:
  - "printf 'id\n1\n2\n' > ids.csv; echo x >> count.txt"
cleanup:
  - "rm ids.csv; echo y >> count.txt"
data:
  ids: ids.csv
workloads:
  w:
    scenario: [{request: {name: get, url: "/i/${ids.id}"}}]
    load: {users: 2, iterations: 2}
`, srv.URL)
	if err := os.WriteFile(p, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	b, err := plateauCmd("run", p, "--generators", "2", "-o", out, "-q").CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if seen.Load() != 4 {
		t.Errorf("server saw %d requests, want 4", seen.Load())
	}
	if c, _ := os.ReadFile(filepath.Join(dir, "count.txt")); string(c) != "x\ny\n" {
		t.Errorf("commands ran %q, want prepare once then cleanup once", c)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Prepare) != 1 || len(info.Cleanup) != 1 || info.Prepare[0].Status != rundir.CommandOK {
		t.Errorf("merged run.json prepare %+v cleanup %+v", info.Prepare, info.Cleanup)
	}
}

// Secrets from plateau's own environment (names that look secret) and
// URL passwords in a command line are masked in the saved output, the
// recorded command and the console.
func TestPrepareMasksEnvironmentSecrets(t *testing.T) {
	t.Setenv("SCHOOL_DB_PASSWORD", "pg-pass-0123456789")
	srv, _ := stallServer(t, 0, 200)
	p := writePlan(t, fmt.Sprintf(`name: masked
target: %s
prepare:
  - name: show
    run: 'echo "pw=$SCHOOL_DB_PASSWORD url=postgres://app:hunter2secret@127.0.0.1/db"'
workloads:
  w:
    scenario: [{request: {url: /}}]
    load: {users: 1, iterations: 1}
`, srv.URL))
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(out, info.Prepare[0].Log))
	if !strings.Contains(string(log), "pw=*** url=postgres://app:***@127.0.0.1/db") {
		t.Errorf("log not masked:\n%s", log)
	}
	for what, text := range map[string]string{"log": string(log), "command": info.Prepare[0].Command, "stderr": stderr,
		"run.json tail": strings.Join(info.Prepare[0].Tail, "\n")} {
		if strings.Contains(text, "pg-pass-0123456789") || strings.Contains(text, "hunter2secret") {
			t.Errorf("%s holds a secret: %s", what, text)
		}
	}
	for _, f := range []string{"report.md", "report.html", "summary.json", "plan.yaml"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		if strings.Contains(string(b), "hunter2secret") || strings.Contains(string(b), "pg-pass-0123456789") {
			t.Errorf("%s holds a secret", f)
		}
	}
}

// Ctrl-C while a prepare command runs stops it (its process group), skips
// the run, still runs the cleanup, and ends interrupted (exit 3).
func TestInterruptDuringPrepare(t *testing.T) {
	srv, seen := stallServer(t, 0, 200)
	tmp := t.TempDir()
	started, marker := filepath.Join(tmp, "started"), filepath.Join(tmp, "cleaned")
	p := writePlan(t, fmt.Sprintf(`name: interrupted-prepare
target: %s
prepare:
  - name: slow-load
    run: touch %s; sleep 30
cleanup:
  - touch %s
workloads:
  w:
    scenario: [{request: {url: /}}]
    load: {users: 1, iterations: 1}
`, srv.URL, started, marker))
	out := filepath.Join(t.TempDir(), "run")
	cmd := plateauCmd("run", p, "-o", out, "-q")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(started); err == nil {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code := exitCode(t, cmd.Wait())
	if code != ExitNotHeld {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitNotHeld, stdout.String(), stderr.String())
	}
	if el := time.Since(begin); el > 20*time.Second {
		t.Errorf("took %v: the prepare command was not stopped", el)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("cleanup did not run: %v", err)
	}
	if seen.Load() != 0 {
		t.Errorf("%d requests sent after an interrupted prepare", seen.Load())
	}
	s := readSummary(t, out)
	if s.Verdict != analysis.VerdictInterrupted || len(s.Prepare) != 1 || s.Prepare[0].Status != rundir.CommandInterrupted {
		t.Errorf("verdict %q prepare %+v", s.Verdict, s.Prepare)
	}
}
