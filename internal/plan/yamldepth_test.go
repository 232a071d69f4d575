package plan

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// A plan nested 20,000 deep — flow sequences, flow mappings, compact block
// sequences, block mappings — is refused at the first level past the limit,
// with its line and column, before any parser builds anything: the whole
// check allocates a few MB where goccy/go-yaml spent 640 MB.
//
// Not parallel: TotalAlloc counts the whole process, so the test runs
// alone.
func TestYAMLDepthBombRefused(t *testing.T) {
	const n = 20000
	var block strings.Builder
	block.WriteString("target: http://127.0.0.1:1\n")
	for i := range 1500 { // 1500 levels of block mappings: 1.1 MB
		block.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	for _, c := range []struct {
		name, src string
		pos       Pos
	}{
		{"flow sequences", "target: http://127.0.0.1:1\nx: " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n", Pos{2, 4 + MaxYAMLDepth - 1}},
		{"flow mappings", "target: http://127.0.0.1:1\nx: " + strings.Repeat("{a: ", n) + "1" + strings.Repeat("}", n) + "\n", Pos{2, 2 + 4*(MaxYAMLDepth-1)}},
		{"compact sequences", "target: http://127.0.0.1:1\nx:\n" + strings.Repeat("- ", n) + "1\n", Pos{3, 2*MaxYAMLDepth - 1}},
		{"block mappings", block.String(), Pos{MaxYAMLDepth + 2, MaxYAMLDepth + 1}},
	} {
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		_, err := Parse("bomb.yaml", []byte(c.src), t.TempDir(), Options{})
		runtime.ReadMemStats(&m1)
		var es Errors
		if !errors.As(err, &es) || len(es) != 1 {
			t.Fatalf("%s: %v, want one error", c.name, err)
		}
		if e := es[0]; e.File != "bomb.yaml" || e.Pos != c.pos || !strings.Contains(e.Msg, "nested deeper than 1000 levels") {
			t.Errorf("%s: %s:%d:%d: %s, want bomb.yaml:%d:%d", c.name, e.File, e.Pos.Line, e.Pos.Col, e.Msg, c.pos.Line, c.pos.Col)
		}
		if got := m1.TotalAlloc - m0.TotalAlloc; got > 8<<20 {
			t.Errorf("%s: refusing it allocated %d MB", c.name, got>>20)
		}
	}
}

// Brackets, dashes and indentation inside text do not count: quoted
// scalars over several lines, comments and block scalars.
func TestYAMLDepthIgnoresText(t *testing.T) {
	t.Parallel()
	deep := strings.Repeat("[", 3000)
	src := "a: '" + deep + "\n  it''s'\nb: \"" + deep + "\\\"\"\nc: x" + deep + " # " + deep + "\nd: |\n  " + deep + "\n  - - - - -\ne: 1\n"
	if pos, deep := yamlTooDeep([]byte(src), 10); deep {
		t.Fatalf("text counted as nesting at %d:%d", pos.Line, pos.Col)
	}
}

// nodeDepth is the nesting of collections in a yaml.v3 tree.
func nodeDepth(n *yaml.Node) int {
	d := 0
	for _, c := range n.Content {
		d = max(d, nodeDepth(c))
	}
	if n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode {
		d++
	}
	return d
}

// The scan never counts fewer levels than yaml.v3 builds, so no document
// deeper than the limit reaches a parser; the test plans pass.
func FuzzYAMLDepth(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.yaml")
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range []string{"- - [a, {b: [c]}]", "a:\n- b:\n  - c\n", "--- [[1]]", "? [a]\n: {b: c}\n", "a: !!seq [[1]]", "a: &x {b: [1]}", "'a': [\"b\", [c]]", "x: |\n  [[[\ny: [[2]]\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > 1<<16 {
			return
		}
		var doc yaml.Node
		err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&doc)
		if err != nil {
			yamlTooDeep(src, 3) // never panics
			return
		}
		d := nodeDepth(&doc)
		if d == 0 {
			return
		}
		if _, deep := yamlTooDeep(src, d-1); !deep {
			t.Fatalf("yaml.v3 builds %d levels, the scan sees fewer:\n%q", d, src)
		}
	})
}

// YAMLSyntaxError (the data-spec and study readers' error positions) does
// not hand a depth bomb to goccy/go-yaml either.
// Not parallel, as TestYAMLDepthBombRefused.
func TestYAMLSyntaxErrorOfDepthBomb(t *testing.T) {
	src := []byte("entities:\n  x: " + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + "\n")
	var doc yaml.Node
	yerr := yaml.Unmarshal(src, &doc)
	if yerr == nil {
		t.Fatal("yaml.v3 took 20,000 levels")
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	e := YAMLSyntaxError("spec.yaml", src, yerr)
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 8<<20 {
		t.Errorf("placing the error allocated %d MB", got>>20)
	}
	if e.Pos.Line != 2 || e.Pos.Col < 2 {
		t.Errorf("error at %d:%d: %s", e.Pos.Line, e.Pos.Col, e.Msg)
	}
	t.Logf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}
