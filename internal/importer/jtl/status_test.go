package jtl

import (
	"strconv"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
)

// The importer classes a failed status by core.StatusClass, the one rule
// the engine and every importer share (STYLE.md "one home per shared rule").
func TestStatusClassShared(t *testing.T) {
	t.Parallel()
	for st := 100; st <= 999; st++ {
		want := core.StatusClass(st)
		if got := func() core.ErrorClass { c, _ := classify([]byte(strconv.Itoa(st)), nil); return c }(); got != want {
			t.Errorf("status %d: class %v, core says %v", st, got, want)
		}
	}
}
