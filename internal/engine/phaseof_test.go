package engine_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestSamplesFollowThePhaseRule checks that the engine tags samples by
// core.PhaseOf: a request in flight when the last step ends completes
// during the graceful stop and belongs to no phase, so the step's table,
// its stop-rule note and its SLA count the same samples.
func TestSamplesFollowThePhaseRule(t *testing.T) {
	t.Parallel()
	srv := newAllergyServer(t)
	// Requests outlast a second, so the ones in flight at the end of the
	// last step complete in a later second than the step's end.
	srv.stallFn = func() time.Duration { return 1200 * time.Millisecond }
	d, _, dir := runPlan(t, context.Background(), simplePlan, srv.URL,
		`workloads.w.load={steps: [{users: 3, duration: 1500ms}, {users: 3, duration: 1500ms}], stop_when: "throughput_gain < 99%"}`)
	if len(d.Phases) != 2 {
		t.Fatalf("phases %d, want 2", len(d.Phases))
	}
	var tail int64
	err := rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
		if r.Users != nil || r.Dropped != nil || r.Count == 0 {
			return nil
		}
		// A record holds completions of second T; all of them after a
		// phase's end second cannot belong to it.
		if r.Phase >= 0 && r.T > d.Phases[r.Phase].End.Unix() {
			t.Errorf("record of second %d tagged %s, which ended at %s", r.T, d.Phases[r.Phase].Name, d.Phases[r.Phase].End.Format(time.StampMilli))
		}
		if r.Phase < 0 {
			tail += r.Count
		}
		if want := core.PhaseOf(d.Phases, r.Workload, time.Unix(r.T, 0)); r.T > d.Phases[1].End.Unix() && want != -1 {
			t.Errorf("PhaseOf(second %d) = %d, want -1", r.T, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if tail == 0 {
		t.Errorf("no samples completed after the last step: the in-flight requests were counted in a phase")
	}
	// The stop rule's note quotes the same windows as the phase table.
	var prev, cur float64
	if _, err := fmt.Sscanf(d.Phases[1].Stopped[strings.Index(d.Phases[1].Stopped, "(")+1:], "%f → %f", &prev, &cur); err != nil {
		t.Fatalf("stop note %q: %v", d.Phases[1].Stopped, err)
	}
	for i, v := range []float64{prev, cur} {
		table := float64(d.PhaseTotal[i].Count) / d.Phases[i].Duration().Seconds()
		if math.Abs(v-table) > 0.01*table {
			t.Errorf("stop rule quotes %.2f req/s for %s, its table %.2f", v, d.Phases[i].Name, table)
		}
	}
	if run, ph := d.Total.Count, d.PhaseTotal[0].Count+d.PhaseTotal[1].Count; run != ph+tail {
		t.Errorf("run total %d != phases %d + after the last phase %d", run, ph, tail)
	}
}
