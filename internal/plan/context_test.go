package plan

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// The context keys are read (system and environment as name → value) and
// strict: a list where a table belongs names its position.
func TestContextKeys(t *testing.T) {
	t.Parallel()
	base, err := os.ReadFile("../../examples/lar-cave/plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx := "description: checkout after the cache change\nsystem:\n  app: shop 1.5\nenvironment:\n  cpu: 4 vCPU\nmethod: 8 users\nhypothesis: faster\n"
	p, err := Parse("plan.yaml", []byte(ctx+string(base)), "../../examples/lar-cave", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Description != "checkout after the cache change" || p.System["app"] != "shop 1.5" || p.Environment["cpu"] != "4 vCPU" || p.Method != "8 users" || p.Hypothesis != "faster" {
		t.Fatalf("context: %q %v %v %q %q", p.Description, p.System, p.Environment, p.Method, p.Hypothesis)
	}
	_, err = Parse("plan.yaml", []byte("system: [a]\n"+string(base)), "../../examples/lar-cave", Options{})
	if err == nil || !strings.Contains(err.Error(), "plan.yaml:1:9: system: expected a mapping") {
		t.Fatalf("error %v", err)
	}
}

// lang: is read (the example plan, reference 000's, says da) and an
// unknown language is an error at its line naming the value and the
// languages available.
func TestLangKey(t *testing.T) {
	t.Parallel()
	base, err := os.ReadFile("../../examples/lar-cave/plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse("plan.yaml", base, "../../examples/lar-cave", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Lang != "da" {
		t.Fatalf("lang %q, want da (reference 000 is Danish)", p.Lang)
	}
	src := strings.Replace(string(base), "lang: da", "lang: klingon", 1)
	line := 1 + strings.Count(src[:strings.Index(src, "lang: klingon")], "\n")
	_, err = Parse("plan.yaml", []byte(src), "../../examples/lar-cave", Options{})
	want := fmt.Sprintf("plan.yaml:%d:7: lang: unknown language \"klingon\" (available: en, da)", line)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want %q", err, want)
	}
}
