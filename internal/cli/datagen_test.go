package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/datagen"
)

// plateau datagen writes the example spec's files and datagen.json;
// --dry-run writes nothing; a bad spec exits 2 naming file and line.
func TestDatagenCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := runCLI(t, "datagen", "../../examples/school-data/school.yaml", "-o", out, "--scale", "0.005")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var res datagen.Result
	b, err := os.ReadFile(filepath.Join(out, datagen.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Entities) != 5 || res.Scale != 0.005 || res.Seed != 2013 {
		t.Fatalf("manifest %+v", res)
	}
	for _, e := range res.Entities {
		fi, err := os.Stat(filepath.Join(out, e.File))
		if err != nil || fi.Size() != e.Bytes {
			t.Errorf("%s: %v, size vs manifest %d", e.File, err, e.Bytes)
		}
		if !strings.Contains(stdout, e.Name) {
			t.Errorf("stdout does not list %s:\n%s", e.Name, stdout)
		}
	}

	dry := filepath.Join(t.TempDir(), "none")
	code, stdout, _ = runCLI(t, "datagen", "../../examples/school-data/school.yaml", "-o", dry, "--dry-run")
	if code != ExitOK || !strings.Contains(stdout, "8748000") {
		t.Errorf("dry run: exit %d, want 8,748,000 expected responses at scale 1:\n%s", code, stdout)
	}
	if _, err := os.Stat(dry); err == nil {
		t.Error("--dry-run wrote the output directory")
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("entities:\n  a:\n    count: 3\n    fields: {id: sequence}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "datagen", bad, "-o", t.TempDir())
	if code != ExitError || !strings.Contains(stderr, bad+":4:18: field id:") {
		t.Errorf("bad spec: exit %d\n%s", code, stderr)
	}
}

// A generate: feeder feeds the plan the rows plateau datagen would write
// for that entity: every generated student is requested once (unique
// order), and a bad spec is a plan error naming the spec's line.
func TestGenerateFeeder(t *testing.T) {
	srv, seen := stallServer(t, 0, 200)
	dir := t.TempDir()
	spec := "seed: 5\nentities:\n  classes:\n    count: 3\n    fields: {class_id: seq}\n" +
		"  students:\n    parent: classes\n    per_parent: {dist: poisson, mean: 4, min: 1}\n" +
		"    fields: {student_id: seq, class_id: parent.class_id, name: name}\n"
	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := `name: gen-feeder
target: ` + srv.URL + `
data:
  students:
    generate: {spec: spec.yaml, entity: students}
    order: unique
    on_end: stop_user
workloads:
  w:
    scenario: [{request: {name: get, url: "/classes/${students.class_id}/students/${students.student_id}"}}]
    load: {users: 1, iterations: 1000}
`
	p := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(p, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data := filepath.Join(t.TempDir(), "data")
	if code, _, stderr := runCLI(t, "datagen", filepath.Join(dir, "spec.yaml"), "-o", data); code != ExitOK {
		t.Fatal(stderr)
	}
	b, err := os.ReadFile(filepath.Join(data, "students.csv"))
	if err != nil {
		t.Fatal(err)
	}
	want := int64(strings.Count(string(b), "\n") - 1)
	if want < 3 || seen.Load() != want {
		t.Errorf("server saw %d requests, the generated file has %d students", seen.Load(), want)
	}

	if err := os.WriteFile(filepath.Join(dir, "spec.yaml"), []byte("entities:\n  students:\n    count: 2\n    fields: {id: sequ}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "check", p)
	if code != ExitError || !strings.Contains(stderr, `plan.yaml:5:15: data "students": generate: `) ||
		!strings.Contains(stderr, "spec.yaml:4:18: field id:") {
		t.Errorf("bad spec: exit %d\n%s", code, stderr)
	}
}
