package cli

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/plateau-perf/plateau/internal/k8s"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// k8sObjects decodes `plateau k8s`'s output into its ConfigMaps and Jobs.
func k8sObjects(t *testing.T, y string) ([]corev1.ConfigMap, []batchv1.Job) {
	t.Helper()
	var cms []corev1.ConfigMap
	var jobs []batchv1.Job
	for _, d := range strings.Split(y, "\n---\n") {
		var tm struct{ Kind string }
		if err := yaml.Unmarshal([]byte(d), &tm); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, d)
		}
		switch tm.Kind {
		case "ConfigMap":
			var cm corev1.ConfigMap
			if err := yaml.UnmarshalStrict([]byte(d), &cm); err != nil {
				t.Fatal(err)
			}
			cms = append(cms, cm)
		case "Job":
			var j batchv1.Job
			if err := yaml.UnmarshalStrict([]byte(d), &j); err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
	}
	return cms, jobs
}

// `plateau k8s script.js`: the manifests carry the script and the files
// beside it, each generator pod copies them to a writable directory and
// runs `plateau run SCRIPT --segment i/N` in the image given (which holds
// the tool), and the merge pod joins the segments' raw results. Run as
// processes with the environment Kubernetes gives the pods (as
// TestK8sPodsAsProcesses), two k6 "pods" and the merge "pod": the merged
// run holds every request the stand-in answered, read from the union of
// both k6 instances' results.
func TestK8sForeignScriptPods(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	var served atomic.Int64
	srv := countingShop(&served)
	defer srv.Close()
	src := t.TempDir()
	b, err := os.ReadFile("../importer/k6/testdata/script.js")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(src, "shop.js")
	for name, data := range map[string][]byte{"shop.js": b, "users.csv": []byte("id\n1\n")} {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Without an image holding the tool: refused.
	if code, _, errOut := runCLI(t, "k8s", script, "-g", "2"); code == ExitOK || !strings.Contains(errOut, "--image") {
		t.Errorf("no --image: exit %d, %q", code, errOut)
	}
	start := time.Now().Add(3 * time.Second).Truncate(time.Second).Add(time.Second)
	code, y, errOut := runCLI(t, "k8s", script, "-g", "2", "--image", "reg.example/plateau-k6:1", "--start-at", start.Format(time.RFC3339),
		"-e", "BASE="+srv.URL, "-e", "SECONDS=3", "--linger", "1s", "--deadline", "2m")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	cms, jobs := k8sObjects(t, y)
	if len(jobs) != 2 || len(cms) != 1 {
		t.Fatalf("%d jobs, %d config maps", len(jobs), len(cms))
	}
	gen, mergeJob := jobs[0], jobs[1]
	c := gen.Spec.Template.Spec.Containers[0]
	if c.Image != "reg.example/plateau-k6:1" || !strings.Contains(strings.Join(c.Args, " "), k8s.WorkMount+"/shop.js -e BASE="+srv.URL+" -e SECONDS=3") {
		t.Errorf("generator: image %s, args %q", c.Image, c.Args)
	}
	if cms[0].Data["shop.js"] != string(b) || cms[0].Data["users.csv"] != "id\n1\n" {
		t.Errorf("the ConfigMap lacks the script or the file beside it: %v", keysOf(cms[0].Data))
	}

	// The pods, as processes.
	root := t.TempDir()
	planDir := filepath.Join(root, "plan")
	for _, it := range gen.Spec.Template.Spec.Volumes[0].Projected.Sources[0].ConfigMap.Items {
		dst := filepath.Join(planDir, filepath.FromSlash(it.Path))
		if err := os.WriteFile(dst, []byte(cms[0].Data[it.Key]), 0o644); err != nil {
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, []byte(cms[0].Data[it.Key]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	shims := filepath.Join(root, "bin")
	exe, _ := os.Executable()
	if err := os.MkdirAll(shims, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shims, "plateau"), []byte("#!/bin/sh\nPLATEAU_TEST_MAIN=1 exec "+exe+" \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(root, "results")
	pod := func(c corev1.Container, work string, extra ...string) *exec.Cmd {
		repl := strings.NewReplacer(k8s.PlanMount, planDir, k8s.WorkMount, work, k8s.ResultsMount, results)
		var args []string
		for _, a := range c.Args {
			args = append(args, repl.Replace(a))
		}
		cmd := exec.Command(c.Command[0], append(c.Command[1:], args...)...)
		cmd.Env = append(os.Environ(), "PATH="+shims+":"+os.Getenv("PATH"))
		for _, e := range c.Env {
			cmd.Env = append(cmd.Env, e.Name+"="+repl.Replace(e.Value))
		}
		cmd.Env = append(cmd.Env, extra...)
		return cmd
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	run := func(cmd *exec.Cmd) {
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds, outs = append(cmds, cmd), append(outs, &b)
	}
	run(pod(mergeJob.Spec.Template.Spec.Containers[0], ""))
	for i := 0; i < 2; i++ {
		work := filepath.Join(root, fmt.Sprint("work", i)) // each pod's emptyDir
		if err := os.MkdirAll(work, 0o755); err != nil {
			t.Fatal(err)
		}
		run(pod(c, work, fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i)))
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("pod %d: %v\n%s", i, err, outs[i])
		}
	}
	runDir := ""
	for _, e := range c.Env {
		if e.Name == "PLATEAU_RUN_DIR" {
			runDir = strings.Replace(e.Value, k8s.ResultsMount, results, 1)
		}
	}
	if b, err := os.ReadFile(filepath.Join(runDir, "merged.exit")); err != nil || strings.TrimSpace(string(b)) != "0" {
		t.Fatalf("merged.exit %q, %v\n%s", b, err, outs[0])
	}
	merged := filepath.Join(runDir, "merged")
	info, err := rundir.ReadInfo(merged)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusCompleted || info.SourceKind != rundir.SourceK6 {
		t.Errorf("merged run: status %q, source %q (%q)", info.Status, info.SourceKind, info.Notes)
	}
	var segTotal int64
	for i := 0; i < 2; i++ {
		s := readSummary(t, filepath.Join(runDir, fmt.Sprint("segment-", i)))
		segTotal += s.Labels[len(s.Labels)-1].Samples
		// The pod ran from its writable copy of the ConfigMap's files.
		if b, err := os.ReadFile(filepath.Join(root, fmt.Sprint("work", i), "users.csv")); err != nil || string(b) != "id\n1\n" {
			t.Errorf("pod %d's writable copy: %q, %v", i, b, err)
		}
	}
	s := readSummary(t, merged)
	var total, down int64
	for _, l := range s.Labels {
		switch {
		case l.Label == "TOTAL":
			total = l.Samples
		case strings.HasSuffix(l.Label, "/down"):
			down = l.Samples
		}
	}
	if total == 0 || total != segTotal || total-down != served.Load() {
		t.Errorf("merged TOTAL %d (refused %d), the segments' %d, the stand-in answered %d", total, down, segTotal, served.Load())
	}
}

func keysOf[V any](m map[string]V) []string { return sortedKeys(m) }
