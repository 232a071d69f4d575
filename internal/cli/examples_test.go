package cli

import (
	"path/filepath"
	"testing"
)

// Every example plan loads: the reference studies are expressible as plans.
func TestExamplePlansLoad(t *testing.T) {
	plans, err := filepath.Glob("../../examples/*/plan.yaml")
	if err != nil || len(plans) < 4 {
		t.Fatalf("found %d example plans (%v)", len(plans), err)
	}
	st := &State{Getenv: func(string) (string, bool) { return "", false }}
	for _, p := range plans {
		if _, err := loadPlan(st, p, nil); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
