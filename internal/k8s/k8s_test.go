package k8s

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/plateau-perf/plateau/internal/plan"
)

func baseOptions() Options {
	return Options{Name: "plateau-shop", Namespace: "perf", Image: "registry.example/plateau:1", Generators: 4,
		Plan: []byte("name: shop\n"), Files: []File{{Path: "data/users.csv", Data: []byte("id\n1\n")}},
		Set: []string{"users=20"}, StartAt: time.Date(2027, 1, 15, 8, 0, 0, 0, time.UTC), Deadline: 30 * time.Minute,
		CPU: "2", Memory: "1Gi", EnvFromSecrets: []string{"shop-token"}}
}

// splitDocs decodes a multi-document YAML stream into kind → documents.
func splitDocs(t *testing.T, b []byte) map[string][][]byte {
	t.Helper()
	out := map[string][][]byte{}
	for _, d := range bytes.Split(b, []byte("\n---\n")) {
		var tm struct{ Kind string }
		if err := yaml.Unmarshal(d, &tm); err != nil {
			t.Fatalf("document does not parse: %v\n%s", err, d)
		}
		out[tm.Kind] = append(out[tm.Kind], d)
	}
	return out
}

// The rendered YAML decodes back into the API types with the settings that
// make a segmented run correct.
func TestManifests(t *testing.T) {
	m, err := Build(baseOptions())
	if err != nil {
		t.Fatal(err)
	}
	y, err := m.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(y, []byte("creationTimestamp")) || bytes.Contains(y, []byte("status: {}")) {
		t.Errorf("manifest carries zero-value noise:\n%s", y)
	}
	docs := splitDocs(t, y)
	if len(docs["ConfigMap"]) != 1 || len(docs["PersistentVolumeClaim"]) != 1 || len(docs["Job"]) != 2 {
		t.Fatalf("kinds %v", keys(docs))
	}
	var job, mj batchv1.Job
	if err := yaml.UnmarshalStrict(docs["Job"][0], &job); err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(docs["Job"][1], &mj); err != nil {
		t.Fatal(err)
	}
	s := job.Spec
	switch {
	case job.Name != "plateau-shop" || job.Namespace != "perf":
		t.Errorf("job %s/%s", job.Namespace, job.Name)
	case s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion:
		t.Error("not an Indexed Job")
	case *s.Completions != 4 || *s.Parallelism != 4:
		t.Errorf("completions %d parallelism %d, want 4 and 4", *s.Completions, *s.Parallelism)
	case *s.BackoffLimitPerIndex != 0 || *s.MaxFailedIndexes != 0:
		t.Error("a segment may be retried")
	case *s.PodReplacementPolicy != batchv1.Failed:
		t.Error("pod replacement policy")
	case *s.ActiveDeadlineSeconds != 1800:
		t.Errorf("deadline %d", *s.ActiveDeadlineSeconds)
	case s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever:
		t.Error("restart policy")
	}
	c := s.Template.Spec.Containers[0]
	if c.Image != "registry.example/plateau:1" || c.Resources.Limits.Cpu().String() != "2" ||
		c.Resources.Requests.Memory().String() != "1Gi" || c.EnvFrom[0].SecretRef.Name != "shop-token" {
		t.Errorf("container %+v", c)
	}
	script := strings.Join(append(c.Command, c.Args...), " ")
	for _, want := range []string{"JOB_COMPLETION_INDEX", `--segment "$i/$PLATEAU_SEGMENTS"`, "/plan/plan.yaml --set users=20"} {
		if !strings.Contains(script, want) {
			t.Errorf("generator command lacks %q: %s", want, script)
		}
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	if env["PLATEAU_START_AT"] != "2027-01-15T08:00:00Z" || env["PLATEAU_SEGMENTS"] != "4" ||
		env["PLATEAU_RUN_DIR"] != "/results/plateau-shop-20270115-080000" {
		t.Errorf("env %v", env)
	}
	vol := s.Template.Spec.Volumes
	if vol[0].Projected == nil || vol[0].Projected.Sources[0].ConfigMap.Name != "plateau-shop-plan" ||
		vol[1].PersistentVolumeClaim.ClaimName != "plateau-shop-results" {
		t.Errorf("volumes %+v", vol)
	}
	paths := map[string]string{}
	for _, it := range vol[0].Projected.Sources[0].ConfigMap.Items {
		paths[it.Key] = it.Path
	}
	if paths["plan.yaml"] != "plan.yaml" || paths["data__users.csv"] != "data/users.csv" {
		t.Errorf("items %v", paths)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(docs["ConfigMap"][0], &cm); err != nil {
		t.Fatal(err)
	}
	if cm.Data["plan.yaml"] != "name: shop\n" || cm.Data["data__users.csv"] != "id\n1\n" {
		t.Errorf("configmap data %v", cm.Data)
	}
	if mj.Name != "plateau-shop-merge" || *mj.Spec.BackoffLimit != 0 || mj.Spec.CompletionMode != nil {
		t.Errorf("merge job %s", mj.Name)
	}
	mc := mj.Spec.Template.Spec.Containers[0]
	if !strings.Contains(mc.Command[2], "plateau merge --segments") || mc.ReadinessProbe == nil {
		t.Errorf("merge container %+v", mc)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Data beyond one ConfigMap's limit spreads over several, all projected
// into /plan; one file over the limit is refused.
func TestConfigMapSplit(t *testing.T) {
	o := baseOptions()
	big := bytes.Repeat([]byte("x"), 600<<10)
	o.Files = []File{{Path: "a.csv", Data: big}, {Path: "b.csv", Data: big}, {Path: "c.bin", Data: []byte{0xff, 0xfe}}}
	m, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.ConfigMaps) != 2 {
		t.Fatalf("%d ConfigMaps, want 2", len(m.ConfigMaps))
	}
	if m.ConfigMaps[0].BinaryData["c.bin"] == nil {
		t.Error("binary file not in BinaryData")
	}
	if n := len(m.Job.Spec.Template.Spec.Volumes[0].Projected.Sources); n != 2 {
		t.Errorf("%d projected sources", n)
	}
	o.Files = []File{{Path: "huge.csv", Data: bytes.Repeat([]byte("x"), 2<<20)}}
	if _, err := Build(o); err == nil || !strings.Contains(err.Error(), "huge.csv") {
		t.Errorf("error %v, want one naming huge.csv", err)
	}
}

func TestBuildRefuses(t *testing.T) {
	cases := []struct {
		name string
		mod  func(*Options)
		want string
	}{
		{"bad name", func(o *Options) { o.Name = "Shop_Test" }, "name \"Shop_Test\""},
		{"long name", func(o *Options) { o.Name = strings.Repeat("a", 41) }, "at most 40"},
		{"no generators", func(o *Options) { o.Generators = 0 }, "at least 1"},
		{"bad cpu", func(o *Options) { o.CPU = "two" }, "cpu \"two\""},
		{"escaping path", func(o *Options) { o.Files = []File{{Path: "../x.csv"}} }, "below the plan's directory"},
		{"no image", func(o *Options) { o.Image = "" }, "no image"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := baseOptions()
			c.mod(&o)
			_, err := Build(o)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// Feeder files below the plan keep their path; others move under data/ with
// an override; the plan's duration and env references are found.
func TestPlanHelpers(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "d", "in.csv"), "id\n1\n")
	write(filepath.Join(other, "out.csv"), "id\n2\n")
	src := `name: "Shop: checkout!"
target: http://127.0.0.1:1
data:
  inside: {csv: d/in.csv}
  outside: {csv: ` + filepath.Join(other, "out.csv") + `}
workloads:
  a:
    scenario: [{request: {url: "/?t=${env.TOKEN}&u=${env.USER_ID:-7}"}}]
    load: {users: 2, duration: 90s, start_after: 10s}
  b:
    scenario: [{request: {url: /}}]
    load: {stages: [{rate: 10/s, duration: 30s}, {rate: 20/s, duration: 45s}]}
`
	pf := filepath.Join(dir, "plan.yaml")
	write(pf, src)
	p, err := plan.LoadFile(pf, plan.Options{Env: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatal(err)
	}
	files, sets, err := DataFiles(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != "d/in.csv" || files[1].Path != "data/outside.csv" || string(files[1].Data) != "id\n2\n" {
		t.Errorf("files %+v", files)
	}
	if len(sets) != 1 || sets[0] != "data.outside.csv=data/outside.csv" {
		t.Errorf("sets %v", sets)
	}
	// The plan loads in the pods' layout: plan and files under one
	// directory, with the overrides.
	pod := t.TempDir()
	write(filepath.Join(pod, PlanKey), src)
	for _, f := range files {
		write(filepath.Join(pod, filepath.FromSlash(f.Path)), string(f.Data))
	}
	if err := os.RemoveAll(other); err != nil {
		t.Fatal(err)
	}
	pp, err := plan.LoadFile(filepath.Join(pod, PlanKey), plan.Options{Overrides: sets, Env: func(string) (string, bool) { return "x", true }})
	if err != nil {
		t.Fatalf("plan in the pod layout: %v", err)
	}
	if got := pp.Data["outside"].Rows[0][0]; got != "2" {
		t.Errorf("outside feeder row %q", got)
	}
	if d, ok := Duration(p); !ok || d != 100*time.Second {
		t.Errorf("duration %v %v, want 100s", d, ok)
	}
	if refs := EnvRefs([]byte(src)); strings.Join(refs, ",") != "TOKEN,USER_ID" {
		t.Errorf("env refs %v", refs)
	}
	if n := JobName(p.Name); n != "plateau-shop-checkout" {
		t.Errorf("job name %q", n)
	}
	if n := JobName(strings.Repeat("x", 80)); len(n) > 40 || !dns1123.MatchString(n) {
		t.Errorf("job name %q", n)
	}
}

// A foreign tool's script: kept under its own name, run from a writable
// copy (an emptyDir the generator copies the ConfigMaps' files to first),
// with its -J/-e arguments; the merge pod has no such volume.
func TestManifestsScript(t *testing.T) {
	o := baseOptions()
	o.Plan, o.PlanName, o.Writable = []byte("<jmeterTestPlan/>"), "shop.jmx", true
	o.Args = []string{"-J", "host=shop.perf"}
	m, err := Build(o)
	if err != nil {
		t.Fatal(err)
	}
	c := m.Job.Spec.Template.Spec.Containers[0]
	if got := strings.Join(c.Args, " "); !strings.HasPrefix(got, "plateau-generator "+WorkMount+"/shop.jmx -J host=shop.perf --set users=20") {
		t.Errorf("args %q", got)
	}
	if !strings.HasPrefix(c.Command[2], copyScript) || !strings.Contains(c.Command[2], "plateau run") {
		t.Errorf("the generator does not copy the files first:\n%s", c.Command[2])
	}
	var work bool
	for _, v := range m.Job.Spec.Template.Spec.Volumes {
		work = work || v.Name == "work" && v.EmptyDir != nil
	}
	var mounted bool
	for _, vm := range c.VolumeMounts {
		mounted = mounted || vm.Name == "work" && vm.MountPath == WorkMount && !vm.ReadOnly
	}
	if !work || !mounted {
		t.Errorf("no writable work volume: %v %v", work, mounted)
	}
	if m.ConfigMaps[0].Data["shop.jmx"] != "<jmeterTestPlan/>" {
		t.Errorf("config map keys %v", m.ConfigMaps[0].Data)
	}
	for _, v := range m.Merge.Spec.Template.Spec.Volumes {
		if v.Name == "work" {
			t.Error("the merge pod has the work volume")
		}
	}
}

// TestBuildLocust: a locustfile's manifests are Locust's own distributed
// mode — the master's Service on 5557, N worker pods without the results
// volume, the master pod writing the run where a merge would — and they
// render as YAML that kubectl reads.
func TestBuildLocust(t *testing.T) {
	m, err := Build(Options{Name: "shop", Image: "img", Generators: 3, Plan: []byte("from locust import HttpUser\n"), PlanName: "locustfile.py",
		Set: []string{"duration=1m"}, Args: []string{"-e", "A=1"}, ScriptEnv: []string{"A=1"}, Writable: true, Locust: true,
		StartAt: time.Unix(1_800_000_000, 0), Deadline: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if m.Service == nil || m.Service.Spec.Ports[0].Port != LocustPort || m.Service.Name != "shop-master" {
		t.Fatalf("service %+v", m.Service)
	}
	if m.Job.Spec.CompletionMode != nil || *m.Job.Spec.Parallelism != 3 {
		t.Errorf("workers: %+v", m.Job.Spec)
	}
	for _, v := range m.Job.Spec.Template.Spec.Volumes {
		if v.Name == "results" {
			t.Error("the workers mount the results volume")
		}
	}
	mc := m.Merge.Spec.Template.Spec.Containers[0]
	if !strings.Contains(mc.Command[2], "--locust-master") || !strings.Contains(strings.Join(mc.Args, " "), "/work/locustfile.py -e A=1 --set duration=1m") {
		t.Errorf("master: %q %q", mc.Command, mc.Args)
	}
	for k, v := range m.Service.Spec.Selector {
		if m.Merge.Spec.Template.Labels[k] != v {
			t.Errorf("the Service's selector %s=%s misses the master pod", k, v)
		}
	}
	y, err := m.YAML()
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(y), "\nkind: "); n != 5 { // ConfigMap, claim, Service, 2 Jobs
		t.Errorf("%d objects:\n%s", n, y)
	}
}
