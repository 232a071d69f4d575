package analysis_test

import (
	"path/filepath"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestSLAChainFollowsOneWorkloadsSteps: with two concurrent workloads, the
// "held up to … broke at …" chain follows the steps of the stepped
// workload; the other workload's phase is judged, but is not a step.
func TestSLAChainFollowsOneWorkloadsSteps(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, reporttest.Options{Concurrent: true}); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := d.JudgeSLA("avg(response_time) < 200ms")
	if r.HeldUpTo != "step 2" || r.FirstBroken != "step 3" {
		t.Errorf("held up to %q, first broken %q; want step 2 and step 3 (data-import is another workload)", r.HeldUpTo, r.FirstBroken)
	}
	judged := false
	for _, pc := range r.PerPhase {
		judged = judged || pc.Phase == "data-import"
	}
	if !judged {
		t.Error("the concurrent workload's phase was not judged")
	}
}
