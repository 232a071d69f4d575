package plan

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// prepare: and cleanup: items are a command line or a mapping; every
// mistake is reported at its line and column.
func TestCommandsBad(t *testing.T) {
	t.Parallel()
	src := `name: c
target: http://127.0.0.1:9
prepare:
  - ""
  - {run: "echo a", args: [echo, b]}
  - {name: x, runn: "echo"}
  - {name: a/b, run: "true", timeout: -1s}
  - {args: [], env: {"1BAD": x}}
  - {name: dup, run: "true"}
  - {name: dup, run: "true", timeout: 0s}
  - run: "echo ${HOME}"
cleanup: "rm -rf x"
workloads:
  w:
    scenario: [{think: 1s}]
    load: {users: 1, iterations: 1}
`
	_, err := Parse("p.yaml", []byte(src), t.TempDir(), Options{})
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("got %v, want plan errors", err)
	}
	got := err.Error()
	for _, want := range []string{
		`p.yaml:4:5: prepare: item 1 is an empty command`,
		`p.yaml:5:21: prepare command: give run (a shell command line) or args (a program and its arguments), not both`,
		`p.yaml:6:15: unknown key "runn" in prepare command (did you mean "run"?)`,
		`p.yaml:7:12: prepare command: name "a/b" must be non-empty text`,
		`p.yaml:7:39: timeout: "-1s" is negative`,
		`p.yaml:8:12: prepare command: args is empty; the first item is the program`,
		`p.yaml:8:22: env: bad variable name "1BAD"`,
		`p.yaml:10:12: prepare: duplicate command name "dup" (first at 9:5)`,
		`p.yaml:10:39: prepare command: timeout must be positive`,
		`p.yaml:11:16: run: ${HOME} cannot be used here; only ${env.NAME} is substituted in run (write $${ for a literal ${)`,
		`p.yaml:12:10: cleanup: expected a list of commands`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing error %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, `missing run`) {
		t.Errorf("an unknown key is reported again as a missing run:\n%s", got)
	}
}

// Both forms decode with their defaults: name "prepare N", the plan's
// directory, DefaultCommandTimeout; dir resolves against the plan file.
func TestCommandsGood(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `name: c
target: http://127.0.0.1:9
prepare:
  - ./load.sh data/ 'two words'
  - name: gen
    args: [plateau, datagen, "spec.yaml", -o, "out dir"]
    dir: sub
    env: {ROWS: "1000", PGPASSWORD: "${env.PW:-hunter2hunter2}"}
    timeout: 1m
cleanup:
  - rm -r data
workloads:
  w:
    scenario: [{think: 1s}]
    load: {users: 1, iterations: 1}
`
	p, err := Parse("p.yaml", []byte(src), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Prepare) != 2 || len(p.Cleanup) != 1 {
		t.Fatalf("prepare %d cleanup %d", len(p.Prepare), len(p.Cleanup))
	}
	a, b := p.Prepare[0], p.Prepare[1]
	if a.Name != "prepare 1" || a.Shell != "./load.sh data/ 'two words'" || a.Dir != dir || a.Timeout != DefaultCommandTimeout {
		t.Errorf("shell form: %+v", a)
	}
	if b.Name != "gen" || b.Dir != filepath.Join(dir, "sub") || b.Timeout != time.Minute || b.Env["ROWS"] != "1000" ||
		b.Env["PGPASSWORD"] != "hunter2hunter2" || len(b.Args) != 5 {
		t.Errorf("mapping form: %+v", b)
	}
	if got := b.String(); got != "plateau datagen spec.yaml -o 'out dir'" {
		t.Errorf("String() = %q", got)
	}
	if p.Cleanup[0].Name != "cleanup 1" {
		t.Errorf("cleanup name %q", p.Cleanup[0].Name)
	}
	// The plan copy in the run directory masks the secret env value.
	if red := string(p.RedactedSource()); strings.Contains(red, "hunter2hunter2") && !strings.Contains(src, "hunter2hunter2") {
		t.Errorf("secret env value in the plan copy:\n%s", red)
	}
}

// A data file a prepare command will write is Pending, not an error, and
// its columns are not checked; loaded again as Prepared, it must exist.
func TestPendingData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `name: c
target: http://127.0.0.1:9
data:
  students: {csv: gen/students.csv}
prepare:
  - mkdir -p gen && echo id > gen/students.csv
workloads:
  w:
    scenario: [{request: {url: "/s/${students.id}"}}]
    load: {users: 1, iterations: 1}
`
	p, err := Parse("p.yaml", []byte(src), dir, Options{})
	if err != nil {
		t.Fatalf("pending data file reported: %v", err)
	}
	if !p.Data["students"].Pending {
		t.Error("students not marked pending")
	}
	_, err = Parse("p.yaml", []byte(src), dir, Options{Prepared: true})
	if err == nil || !strings.Contains(err.Error(), `p.yaml:4:19: data "students": cannot read`) {
		t.Errorf("prepared load without the file: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "gen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gen", "students.csv"), []byte("name\nx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Parse("p.yaml", []byte(src), dir, Options{Prepared: true})
	if err == nil || !strings.Contains(err.Error(), `data "students" has no column "id"`) {
		t.Errorf("the column is not checked once the file exists: %v", err)
	}
	// Without prepare: a missing file stays an error.
	noPrep := strings.Replace(src, "prepare:\n  - mkdir -p gen && echo id > gen/students.csv\n", "", 1)
	if _, err := Parse("p.yaml", []byte(noPrep), t.TempDir(), Options{}); err == nil {
		t.Error("a missing data file without prepare: is not an error")
	}
}

// generate: feeders are checked and made through Options.Generate, whose
// error becomes a plan error at the generate: line.
func TestGenerateFeederPlan(t *testing.T) {
	t.Parallel()
	src := `name: g
target: http://127.0.0.1:9
data:
  a: {generate: {spec: s.yaml}}
  b: {generate: {spec: s.yaml, entity: x, scale: -1}}
  c: {generate: {spec: s.yaml, entity: y, sed: 1}}
  d: {generate: {spec: s.yaml, entity: students}, delimiter: ";"}
  e: {generate: {spec: s.yaml, entity: students}, csv: x.csv}
workloads:
  w:
    scenario: [{request: {url: "/${d.student_id}"}}]
    load: {users: 1, iterations: 1}
`
	var asked []string
	gen := func(path, entity string, scale float64, seed *uint64) ([]string, [][]string, error) {
		asked = append(asked, filepath.Base(path)+":"+entity)
		if entity == "y" {
			return nil, nil, errors.New("s.yaml:3:4: bad")
		}
		return []string{"student_id"}, [][]string{{"1"}, {"2"}}, nil
	}
	_, err := Parse("p.yaml", []byte(src), t.TempDir(), Options{Generate: gen})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`p.yaml:4:17: data "a": generate: missing entity`,
		`p.yaml:5:17: data "b": generate: scale must be positive`,
		`p.yaml:6:43: unknown key "sed" in generate (did you mean "seed"?)`,
		`p.yaml:7:51: data "d": delimiter applies to csv`,
		`p.yaml:8:17: data "e": has both csv and generate; use one`,
		`p.yaml:6:17: data "c": generate: s.yaml:3:4: bad`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%s", want, err)
		}
	}
	p, err := Parse("p.yaml", []byte(strings.Join(strings.Split(src, "\n")[:3], "\n")+"\n  d: {generate: {spec: s.yaml, entity: students, seed: 3}}\n"+
		"workloads:\n  w:\n    scenario: [{request: {url: \"/${d.student_id}\"}}]\n    load: {users: 1, iterations: 1}\n"), t.TempDir(), Options{Generate: gen})
	if err != nil {
		t.Fatal(err)
	}
	if d := p.Data["d"]; len(d.Rows) != 2 || d.Columns[0] != "student_id" || *d.Generate.Seed != 3 {
		t.Errorf("feeder %+v", d)
	}
	if _, err := Parse("p.yaml", []byte(src), t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "data generation is not available here") {
		t.Errorf("without Options.Generate: %v", err)
	}
}
