package plan

import (
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
