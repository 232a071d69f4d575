package cli

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/plateau-perf/plateau/internal/k8s"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// `plateau k8s locustfile.py -g 2`: Locust's own distributed mode — a
// Service for the master's port 5557, a master pod running `plateau run
// locustfile.py --locust-master` (its run written where a merge would
// write one), two worker pods running `locust --worker` against the
// Service, the locustfile and the files beside it in the ConfigMap, -e in
// both. Run as processes with the environment Kubernetes gives the pods
// (the Service's name and port resolved to a loopback port, as cluster
// DNS would resolve them): the run's figures are Locust's own stats CSV
// (the master's, from its two workers' reports), and its requests are
// those the stand-in answered.
func TestK8sLocustPods(t *testing.T) {
	foreignTool(t, "Locust", locustInstalled())
	t.Parallel()
	var served atomic.Int64
	srv := countingShop(&served)
	defer srv.Close()
	src := t.TempDir()
	b, err := os.ReadFile("../executor/testdata/locust-quickstart/locustfile.py")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(src, "locustfile.py")
	for name, data := range map[string][]byte{"locustfile.py": b, "items.csv": []byte("id\n1\n")} {
		if err := os.WriteFile(filepath.Join(src, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Without an image holding Locust, or without a duration: refused.
	if code, _, errOut := runCLI(t, "k8s", script, "-g", "2", "--set", "duration=5s"); code == ExitOK || !strings.Contains(errOut, "--image") {
		t.Errorf("no --image: exit %d, %q", code, errOut)
	}
	if code, _, errOut := runCLI(t, "k8s", script, "-g", "2", "--image", "x"); code == ExitOK || !strings.Contains(errOut, "duration") {
		t.Errorf("no duration: exit %d, %q", code, errOut)
	}
	code, y, errOut := runCLI(t, "k8s", script, "-g", "2", "--image", "reg.example/plateau-locust:1",
		"--set", "target="+srv.URL, "--set", "users=4", "--set", "ramp_up=1s", "--set", "duration=6s",
		"-e", "SHOP_MODE=test", "--linger", "1s", "--deadline", "2m")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	cms, jobs := k8sObjects(t, y)
	var svc corev1.Service
	for _, d := range strings.Split(y, "\n---\n") {
		if strings.Contains(d, "\nkind: Service\n") {
			if err := yaml.UnmarshalStrict([]byte(d), &svc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(jobs) != 2 || len(cms) != 1 {
		t.Fatalf("%d jobs, %d config maps", len(jobs), len(cms))
	}
	workers, master := jobs[0], jobs[1]
	wc, mc := workers.Spec.Template.Spec.Containers[0], master.Spec.Template.Spec.Containers[0]
	envOf := func(c corev1.Container) map[string]string {
		m := map[string]string{}
		for _, e := range c.Env {
			m[e.Name] = e.Value
		}
		return m
	}
	we, me := envOf(wc), envOf(mc)
	// The Service selects the master pod and carries Locust's port; the
	// workers find the master by the Service's name.
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != 5557 || svc.Spec.Ports[0].TargetPort.IntValue() != 5557 {
		t.Errorf("Service ports %+v", svc.Spec.Ports)
	}
	for k, v := range svc.Spec.Selector {
		if master.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s; the master pod has %v", k, v, master.Spec.Template.Labels)
		}
		if workers.Spec.Template.Labels[k] == v && k == "app.kubernetes.io/component" {
			t.Errorf("the Service selects the workers too: %v", workers.Spec.Template.Labels)
		}
	}
	if we["PLATEAU_LOCUST_MASTER"] != svc.Name || we["PLATEAU_LOCUST_PORT"] != "5557" || we["SHOP_MODE"] != "test" {
		t.Errorf("worker env %v; Service %s", we, svc.Name)
	}
	if *workers.Spec.Parallelism != 2 || *workers.Spec.Completions != 2 || wc.Image != "reg.example/plateau-locust:1" || mc.Image != wc.Image {
		t.Errorf("workers: %d of %d, images %s, %s", *workers.Spec.Parallelism, *workers.Spec.Completions, wc.Image, mc.Image)
	}
	if args := strings.Join(mc.Args, " "); !strings.Contains(args, k8s.WorkMount+"/locustfile.py -e SHOP_MODE=test --set target="+srv.URL) || me["PLATEAU_LOCUST_BIND"] != "*:5557" {
		t.Errorf("master: args %q, bind %q", mc.Args, me["PLATEAU_LOCUST_BIND"])
	}
	if cms[0].Data["locustfile.py"] != string(b) || cms[0].Data["items.csv"] != "id\n1\n" {
		t.Errorf("the ConfigMap lacks the locustfile or the file beside it: %v", keysOf(cms[0].Data))
	}

	// The pods, as processes.
	root := t.TempDir()
	planDir := filepath.Join(root, "plan")
	if err := os.MkdirAll(planDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, it := range workers.Spec.Template.Spec.Volumes[0].Projected.Sources[0].ConfigMap.Items {
		if err := os.WriteFile(filepath.Join(planDir, filepath.FromSlash(it.Path)), []byte(cms[0].Data[it.Key]), 0o644); err != nil {
			t.Fatal(err)
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
	path := shims + ":" + os.Getenv("PATH")
	if _, err := exec.LookPath("locust"); err != nil {
		path += ":/opt/plateau-locust/bin"
	}
	// The Service's name and port, as cluster DNS and kube-proxy would
	// resolve them, on loopback.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	results := filepath.Join(root, "results")
	pod := func(c corev1.Container, work string, extra ...string) *exec.Cmd {
		repl := strings.NewReplacer(k8s.PlanMount, planDir, k8s.WorkMount, work, k8s.ResultsMount, results)
		var args []string
		for _, a := range c.Args {
			args = append(args, repl.Replace(a))
		}
		cmd := exec.Command(c.Command[0], append(c.Command[1:], args...)...)
		cmd.Env = append(os.Environ(), "PATH="+path)
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
	work := func(name string) string {
		w := filepath.Join(root, name) // each pod's emptyDir
		if err := os.MkdirAll(w, 0o755); err != nil {
			t.Fatal(err)
		}
		return w
	}
	run(pod(mc, work("master"), "PLATEAU_LOCUST_BIND=127.0.0.1:"+port))
	for i := 0; i < 2; i++ {
		run(pod(wc, work(fmt.Sprint("worker", i)), "PLATEAU_LOCUST_MASTER=127.0.0.1", "PLATEAU_LOCUST_PORT="+port))
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("pod %d: %v\n%s", i, err, outs[i])
		}
	}
	runDir := strings.Replace(me["PLATEAU_RUN_DIR"], k8s.ResultsMount, results, 1)
	if b, err := os.ReadFile(filepath.Join(runDir, "merged.exit")); err != nil || strings.TrimSpace(string(b)) != "0" {
		t.Fatalf("merged.exit %q, %v\n%s", b, err, outs[0])
	}
	dir := filepath.Join(runDir, "merged")
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusCompleted || info.SourceKind != rundir.SourceLocust {
		t.Errorf("run: status %q, source %q (%q)", info.Status, info.SourceKind, info.Notes)
	}
	// The report's figures are Locust's own (its master's stats CSV).
	checkLocustStats(t, dir)
	if b, err := os.ReadFile(filepath.Join(dir, "tool", "locust.out.log")); err != nil || !bytes.Contains(b, []byte("2 workers connected")) {
		t.Errorf("Locust's master did not report 2 workers: %v\n%s", err, b)
	}
	for i := 1; i <= 2; i++ {
		if !strings.Contains(outs[i].String(), "Starting Locust") {
			t.Errorf("worker %d's output: %s", i-1, outs[i])
		}
		// Each worker ran from its own writable copy of the ConfigMap's files.
		if b, err := os.ReadFile(filepath.Join(root, fmt.Sprint("worker", i-1), "items.csv")); err != nil || string(b) != "id\n1\n" {
			t.Errorf("worker %d's copy: %q, %v", i-1, b, err)
		}
	}
	var total int64
	for _, l := range readSummary(t, dir).Labels {
		if l.Label == "TOTAL" {
			total = l.Samples
		}
	}
	// Under a master the users stop at once: a request in flight then may
	// reach the stand-in uncounted (at most one a user, docs/run-foreign.md).
	if d := served.Load() - total; total == 0 || d < 0 || d > 4 {
		t.Errorf("the report counts %d requests, the stand-in answered %d", total, served.Load())
	}
}

// TestRunLocustMasterFlags: --locust-master is for a locustfile, with the
// number of workers that will connect, and without local generators.
func TestRunLocustMasterFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	py := filepath.Join(dir, "locustfile.py")
	jmx := filepath.Join(dir, "plan.jmx")
	for _, p := range []string{py, jmx} {
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{py, "--locust-master", "*:5557", "--set", "duration=5s"}, "give --locust-workers N"},
		{[]string{py, "--locust-master", "*:5557", "--locust-workers", "2", "-g", "2", "--set", "duration=5s"}, "excludes --generators"},
		{[]string{jmx, "--locust-master", "*:5557", "--locust-workers", "2"}, "is for a locustfile"},
		{[]string{py, "--locust-workers", "2", "--set", "duration=5s"}, "goes with --locust-master"},
	} {
		code, _, errOut := runCLI(t, append([]string{"run", "-o", filepath.Join(dir, "run"), "-q"}, c.args...)...)
		if code == ExitOK || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errOut, c.want)
		}
	}
}

// TestK8sLocustPlan: a plan whose workload runs a locustfile gives the
// same pods: the master runs the plan (its monitors and SLA with it), the
// workers the locustfile beside it with the workload's env; without a
// duration it is refused.
func TestK8sLocustPlan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "load"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "load", "shop.py"), []byte("from locust import HttpUser\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := func(load string) string {
		p := filepath.Join(dir, "plan.yaml")
		if err := os.WriteFile(p, []byte(`name: shop
target: http://127.0.0.1:1
workloads:
  shop:
    engine: locust
    script: load/shop.py
    env: {MODE: fast}
    load: `+load+`
`), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if code, _, errOut := runCLI(t, "k8s", plan("{users: 4}"), "-g", "2", "--image", "x"); code == ExitOK || !strings.Contains(errOut, "duration") {
		t.Errorf("no duration: exit %d, %q", code, errOut)
	}
	code, y, errOut := runCLI(t, "k8s", plan("{users: 4, duration: 1m}"), "-g", "2", "--image", "x")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	cms, jobs := k8sObjects(t, y)
	if len(jobs) != 2 || len(cms) != 1 || !strings.Contains(y, "\nkind: Service\n") {
		t.Fatalf("%d jobs, %d config maps\n%s", len(jobs), len(cms), y)
	}
	wc, mc := jobs[0].Spec.Template.Spec.Containers[0], jobs[1].Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range wc.Env {
		env[e.Name] = e.Value
	}
	if env["PLATEAU_LOCUSTFILE"] != k8s.WorkMount+"/load/shop.py" || env["MODE"] != "fast" {
		t.Errorf("worker env %v", env)
	}
	if len(mc.Args) < 2 || mc.Args[1] != k8s.WorkMount+"/plan.yaml" || !strings.Contains(mc.Command[2], "--locust-master") {
		t.Errorf("master: %q %q", mc.Command, mc.Args)
	}
	if cms[0].Data["load__shop.py"] == "" {
		t.Errorf("the ConfigMap lacks the locustfile: %v", keysOf(cms[0].Data))
	}
}
