package plan

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: Parse never panics, every error carries a position, and a plan
// that loads can be redacted and loads again from its own Source.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range []string{
		"", "a", "- 1", "name: x\ntarget: http://h\nworkloads: {w: {scenario: [{think: 1s}], load: {users: 1, iterations: 1}}}\n",
		"x-a: &a {b: *a}", "<<: [*a]", "name: ${", "a: !!binary aGk=", "? [a]\n: b\n", "workloads: {w: {scenario: [{request: {url: /, json: !!float .inf}}]}}",
		"name: x\ntarget: http://h\nworkloads: {w: {scenario: [{think: 1s}], load: {users: 1, iterations: 1}}}\nserver_side: {settle: 1s, tz: UTC, sources: [{accesslog: {name: a, path: a.log, format: plateau, external: b.log}}, {vmstat: {path: c}}]}\n",
	} {
		f.Add([]byte(s))
	}
	env := func(k string) (string, bool) { return "v-" + k, len(k)%2 == 0 }
	f.Fuzz(func(t *testing.T, src []byte) {
		p, err := Parse("fuzz.yaml", src, "testdata", Options{Env: env, CheckSLA: fakeCheckSLA})
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is not a non-empty Errors: %#v", err)
			}
			for _, e := range es {
				if e.Pos.Line < 1 || e.Pos.Col < 1 || e.File == "" || e.Msg == "" {
					t.Fatalf("error without file, position or message: %#v", e)
				}
			}
			if p != nil {
				t.Fatal("plan returned with errors")
			}
			return
		}
		_ = p.RedactedSource()
		if _, err := Parse("again.yaml", p.Source, "testdata", Options{Env: env, CheckSLA: fakeCheckSLA}); err != nil {
			t.Fatalf("Source of a good plan does not load: %v", err)
		}
	})
}
