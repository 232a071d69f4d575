package report

import "testing"

// An identifier at the start of a sentence keeps its spelling; a word is
// capitalised.
func TestUpperFirst(t *testing.T) {
	for in, want := range map[string]string{
		"lb_connections af balancer-pool": "lb_connections af balancer-pool",
		"hukommelse for lar-1":            "Hukommelse for lar-1",
		"økonomi":                         "Økonomi",
		"":                                "",
		"p95 rose":                        "P95 rose",
	} {
		if got := upperFirst(in); got != want {
			t.Errorf("upperFirst(%q) = %q, want %q", in, got, want)
		}
	}
}
