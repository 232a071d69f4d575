package cli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/plateau-perf/plateau/internal/k8s"
)

// `plateau k8s` prints the manifests for a plan with its data file, warns
// about environment variables the pods will need, and refuses without -g.
func TestK8sCommand(t *testing.T) {
	p := openPlan(t, "http://127.0.0.1:1", 10, 2)
	code, stdout, stderr := runCLI(t, "k8s", p, "-g", "3", "--image", "reg.example/plateau:1", "--start-at", "2027-01-15T08:00:00Z", "-n", "perf")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"kind: ConfigMap", "rows.csv: |", "kind: PersistentVolumeClaim", "completionMode: Indexed",
		"completions: 3", "parallelism: 3", "backoffLimitPerIndex: 0", "maxFailedIndexes: 0", "name: plateau-split-merge",
		"namespace: perf", "value: \"2027-01-15T08:00:00Z\""} {
		if !strings.Contains(stdout, want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if !strings.Contains(stderr, "/results/plateau-split-20270115-080000") {
		t.Errorf("stderr %q does not say where the results go", stderr)
	}
	code, _, stderr = runCLI(t, "k8s", p)
	if code != ExitError || !strings.Contains(stderr, "--generators N is required") {
		t.Errorf("without -g: exit %d, %q", code, stderr)
	}
}

// The pods' scripts run as processes with the environment Kubernetes gives
// them: N generator "pods" (JOB_COMPLETION_INDEX = i, the ConfigMaps'
// files at their item paths) and the merge "pod" started with them, which
// waits for the segments, merges and writes merged.exit. The target sees
// the whole load once; the merged run holds it.
func TestK8sPodsAsProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs generator processes")
	}
	// A pod that exits 3 (a generator, or the merge for the whole run)
	// found itself that the planned load was not applied on time (this
	// busy machine): measure again, up to 3 times; any other failure fails
	// at once.
	for attempt := 1; ; attempt++ {
		why := runK8sPods(t)
		if why == "" {
			return
		}
		if attempt == 3 {
			t.Fatal(why)
		}
		t.Logf("attempt %d: %s; measuring again", attempt, why)
	}
}

// runK8sPods runs the pods once; it returns why when the load was not
// held (a pod exited 3), and fails t for anything else.
func runK8sPods(t *testing.T) string {
	t.Helper()
	srv := startRowServer(t, "127.0.0.1:0")
	const n, rate, secs = 3, 30, 3
	planPath := openPlan(t, srv.URL, rate, secs)
	st := &State{Getenv: func(string) (string, bool) { return "", false }}
	p, err := loadPlan(st, planPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := os.ReadFile(planPath)
	files, sets, err := k8s.DataFiles(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := k8s.Build(k8s.Options{Name: "plateau-split", Image: "plateau:test", Generators: n, Plan: src, Files: files,
		Set: sets, StartAt: startInstant(1500 * time.Millisecond), Deadline: time.Minute, Linger: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	planDir := filepath.Join(root, "plan")
	for i, cm := range m.ConfigMaps {
		for _, it := range m.Job.Spec.Template.Spec.Volumes[0].Projected.Sources[i].ConfigMap.Items {
			dst := filepath.Join(planDir, filepath.FromSlash(it.Path))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, []byte(cm.Data[it.Key]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	shims := filepath.Join(root, "bin")
	exe, _ := os.Executable()
	if err := os.MkdirAll(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	shim := "#!/bin/sh\nPLATEAU_TEST_MAIN=1 exec " + exe + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(shims, "plateau"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(root, "results")
	pod := func(c corev1.Container, extra ...string) *exec.Cmd {
		var args []string
		for _, a := range c.Args {
			args = append(args, strings.Replace(a, k8s.PlanMount, planDir, 1))
		}
		cmd := exec.Command(c.Command[0], append(c.Command[1:], args...)...)
		cmd.Env = append(os.Environ(), "PATH="+shims+":"+os.Getenv("PATH"))
		for _, e := range c.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+strings.Replace(e.Value, k8s.ResultsMount, results, 1))
		}
		cmd.Env = append(cmd.Env, extra...)
		return cmd
	}
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	start := func(cmd *exec.Cmd) {
		var b strings.Builder
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		outs = append(outs, &b)
	}
	start(pod(m.Merge.Spec.Template.Spec.Containers[0]))
	for i := 0; i < n; i++ {
		start(pod(m.Job.Spec.Template.Spec.Containers[0], fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i)))
	}
	notHeld := ""
	for i, c := range cmds {
		err := c.Wait()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee) && ee.ExitCode() == ExitNotHeld:
			notHeld = fmt.Sprintf("pod %d: %v\n%s", i, err, outs[i])
		default:
			t.Fatalf("pod %d: %v\n%s", i, err, outs[i])
		}
	}
	if notHeld != "" {
		return notHeld
	}
	runDir := strings.Replace(m.RunDir, k8s.ResultsMount, results, 1)
	if b, err := os.ReadFile(filepath.Join(runDir, "merged.exit")); err != nil || strings.TrimSpace(string(b)) != "0" {
		t.Fatalf("merged.exit %q, %v\n%s", b, err, outs[0])
	}
	sum := readSummary(t, filepath.Join(runDir, "merged"))
	if got := sum.Labels[len(sum.Labels)-1].Samples; got != rate*secs {
		t.Errorf("merged %d samples, want %d", got, rate*secs)
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.total != rate*secs || len(srv.rows) != rate*secs {
		t.Errorf("server saw %d requests, %d rows; want %d each", srv.total, len(srv.rows), rate*secs)
	}
	return ""
}

// TestK8sJMeterPluginGroups: plateau k8s takes a plan of the JMeter
// Plugins' split groups, checked with -J as the pods will run it (a
// Concurrency target of 6 from -J on 2 pods; of 1, refused naming the
// group), and still refuses the Stepping Thread Group with the way on.
func TestK8sJMeterPluginGroups(t *testing.T) {
	t.Parallel()
	threads := copyScript(t, "testdata/declared/jpgc-threads.jmx")
	b, err := os.ReadFile(threads)
	if err != nil {
		t.Fatal(err)
	}
	noStep := filepath.Join(filepath.Dir(threads), "nostep.jmx")
	if err := os.WriteFile(noStep, []byte(strings.Replace(string(b), `testname="step" enabled="true"`, `testname="step" enabled="false"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	img := []string{"-g", "2", "--image", "reg.example/plateau-jmeter:1"}
	code, stdout, stderr := runCLI(t, append([]string{"k8s", noStep, "-J", "conc=6"}, img...)...)
	if code != ExitOK || !strings.Contains(stdout, "completions: 2") {
		t.Errorf("conc=6 on 2 pods: exit %d\n%s", code, stderr)
	}
	code, _, stderr = runCLI(t, append([]string{"k8s", noStep, "-J", "conc=1"}, img...)...)
	if code != ExitError || !strings.Contains(stderr, `Concurrency Thread Group "conc": TargetLevel 1 on 2 generators`) {
		t.Errorf("conc=1 on 2 pods: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCLI(t, append([]string{"k8s", threads, "-J", "conc=6"}, img...)...)
	if code != ExitError || !strings.Contains(stderr, "SteppingThreadGroup") || !strings.Contains(stderr, "one generator") {
		t.Errorf("a Stepping group on 2 pods: exit %d, %q", code, stderr)
	}
	code, _, stderr = runCLI(t, append([]string{"k8s", copyScript(t, "testdata/declared/jpgc-arrivals.jmx"), "-J", "rate=8"}, img...)...)
	if code != ExitOK {
		t.Errorf("arrivals on 2 pods: exit %d, %q", code, stderr)
	}
}
