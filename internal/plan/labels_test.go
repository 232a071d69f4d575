package plan

import (
	"os"
	"slices"
	"testing"
)

// TestLabelsNested checks Labels reaches every construct's nested steps,
// in plan order: the scenario's requests, transactions and until waits
// (not setup requests).
func TestLabelsNested(t *testing.T) {
	p, err := Parse("plan.yaml", mustRead(t, "../../examples/plan-constructs/plan.yaml"), "../../examples/plan-constructs", Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"patient view", "first read", "list allergies", "reread allergy", "health (no allergies)",
		"list allergies again", "health", "health in loop", "service healthy", "health poll", "unknown patient"}
	if got := p.Labels(); !slices.Equal(got, want) {
		t.Fatalf("Labels() = %q\nwant %q", got, want)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
