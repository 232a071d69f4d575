package plan

import (
	"strings"
	"testing"
)

// TestEncodeKey: a request's encode is true, false or postman (values as
// they are, the URL then encoded as Postman's runtime does); anything else
// is an error at its line.
func TestEncodeKey(t *testing.T) {
	doc := func(v string) []byte {
		return []byte("name: p\ntarget: http://127.0.0.1:1\nworkloads:\n  w:\n    load: {users: 1, iterations: 1}\n    scenario:\n      - request: {url: \"/a?q=x\", encode: " + v + "}\n")
	}
	for v, want := range map[string][2]bool{"true": {true, false}, "false": {false, false}, "postman": {false, true}, "Postman": {false, true}} {
		p, err := Parse("p.yaml", doc(v), ".", Options{})
		if err != nil {
			t.Fatalf("encode: %s: %v", v, err)
		}
		r := p.Workloads[0].Scenario[0].Request
		if r.Encode == nil || *r.Encode != want[0] || r.Postman != want[1] {
			t.Errorf("encode: %s: Encode %v Postman %v, want %v %v", v, r.Encode, r.Postman, want[0], want[1])
		}
	}
	_, err := Parse("p.yaml", doc("sometimes"), ".", Options{})
	if err == nil || !strings.Contains(err.Error(), "p.yaml:7") || !strings.Contains(err.Error(), "true, false or postman") {
		t.Errorf("encode: sometimes: %v", err)
	}
}
