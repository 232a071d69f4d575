package plan

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/plan/expr"
)

// TestDocExamples loads every YAML example of docs/plan.md, wrapped into a
// minimal plan when it is a fragment, so the reference cannot drift from
// the loader. Fragments may use variables they do not define; every other
// error fails the test.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/plan.md")
	if err != nil {
		t.Skipf("docs/plan.md not found: %v", err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(doc), -1)
	if len(blocks) < 20 {
		t.Fatalf("found %d yaml examples", len(blocks))
	}
	const (
		name     = "name: doc\n"
		target   = "target: http://127.0.0.1:9\n"
		workload = "workloads:\n  w:\n    scenario:\n      - think: 1s\n    load: {users: 1, iterations: 1}\n"
	)
	indent := func(s string, n int) string {
		pad := strings.Repeat(" ", n)
		return pad + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n"+pad) + "\n"
	}
	env := func(string) (string, bool) { return "", false }
	for i, m := range blocks {
		block := m[1]
		// Dedent (the x- example sits inside a list item).
		if lines := strings.Split(block, "\n"); len(lines) > 0 {
			pad := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
			for j := range lines {
				if len(lines[j]) >= pad {
					lines[j] = lines[j][pad:]
				}
			}
			block = strings.Join(lines, "\n")
		}
		var src string
		has := func(key string) bool { return regexp.MustCompile(`(?m)^` + key + `:`).MatchString(block) }
		switch {
		case has("name"):
			src = block
		case strings.HasPrefix(block, "load:"):
			src = name + target + "workloads:\n  w:\n    scenario: [{think: 1s}]\n" + indent(block, 4)
		case strings.HasPrefix(block, "- "):
			src = name + target + "workloads:\n  w:\n    scenario:\n" + indent(block, 6) + "    load: {users: 1, iterations: 1}\n"
		case strings.HasPrefix(block, "extract:"), strings.HasPrefix(block, "check:"):
			src = name + target + "workloads:\n  w:\n    scenario:\n      - request:\n          url: /x\n" + indent(block, 10) + "    load: {users: 1, iterations: 1}\n"
		case strings.HasPrefix(block, "body:"):
			// Three alternatives in one example: load each on its own.
			parts := regexp.MustCompile(`(?m)^(?:json|form):`).Split(block, -1)
			if len(parts) != 3 {
				t.Fatalf("example %d: expected body, json and form", i)
			}
			src = name + target + "workloads:\n  w:\n    scenario:\n      - request:\n          url: /x\n" + indent(parts[0], 10) + "    load: {users: 1, iterations: 1}\n"
			jsonPart := block[strings.Index(block, "json:"):strings.Index(block, "form:")]
			formPart := block[strings.Index(block, "form:"):]
			for _, alt := range []string{jsonPart, formPart} {
				checkDocExample(t, i, name+target+"data: {users: items.csv}\nworkloads:\n  w:\n    scenario:\n      - request:\n          url: /x\n"+indent(alt, 10)+"    load: {users: 1, iterations: 1}\n", env)
			}
		default:
			src = block
			if !has("target") {
				src = target + src
			}
			src = name + src
			if !has("workloads") {
				src += workload
			}
		}
		checkDocExample(t, i, src, env)
	}
}

func checkDocExample(t *testing.T, i int, src string, env func(string) (string, bool)) {
	t.Helper()
	// generate: feeders get a stand-in of datagen (which imports this
	// package): one row with the column ENTITY_id.
	gen := func(path, entity string, _ float64, _ *uint64) ([]string, [][]string, error) {
		return []string{strings.TrimSuffix(entity, "s") + "_id"}, [][]string{{"1"}}, nil
	}
	_, err := Parse("doc.yaml", []byte(src), "testdata", Options{Env: env, CheckSLA: fakeCheckSLA, Generate: gen})
	var es Errors
	if err == nil {
		return
	}
	if !asErrors(err, &es) {
		t.Fatalf("example %d: %v", i, err)
	}
	for _, e := range es {
		if strings.Contains(e.Msg, "undefined variable") || strings.Contains(e.Msg, "environment variable") {
			continue
		}
		t.Errorf("docs/plan.md example %d: %v\n%s", i, e, src)
	}
}

func asErrors(err error, es *Errors) bool {
	v, ok := err.(Errors)
	*es = v
	return ok
}

// TestDocFunctions: every template function has a row in docs/plan.md's
// table, and every row names a function that exists.
func TestDocFunctions(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/plan.md")
	if err != nil {
		t.Skipf("docs/plan.md not found: %v", err)
	}
	sec := string(doc)
	i := strings.Index(sec, "### Functions")
	if i < 0 {
		t.Fatal("docs/plan.md has no Functions section")
	}
	sec = sec[i:]
	sec = sec[:strings.Index(sec, "```")]
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)`([a-zA-Z0-9]+)\\(").FindAllStringSubmatch(sec, -1) {
		documented[m[1]] = true
	}
	known := map[string]bool{}
	for _, f := range expr.FuncNames() {
		known[f] = true
		if !documented[f] {
			t.Errorf("function %s is not in docs/plan.md's table", f)
		}
	}
	for f := range documented {
		if !known[f] {
			t.Errorf("docs/plan.md documents %s(), which does not exist", f)
		}
	}
}
