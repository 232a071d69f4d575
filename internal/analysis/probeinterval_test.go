package analysis

import (
	"path/filepath"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// A phase's requirements get a batch-means interval around the phase's
// own statistic: ten batches of its seconds, the value inside, a width
// that reflects the noise (not zero for response times), and none for a
// phase too short to cut into batches or a statistic without one.
func TestPhaseIntervals(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, reporttest.Options{Seed: 3, Steps: []reporttest.Step{{Users: 7, Seconds: 40}, {Users: 14, Seconds: 40}, {Users: 7, Seconds: 4}}}); err != nil {
		t.Fatal(err)
	}
	d, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var exprs []*sla.Expr
	for _, s := range []string{"avg(response_time) < 200ms", "p95(response_time) < 400ms", "error_rate < 1%", "throughput > 5/s", "max(response_time) < 2s"} {
		e, err := sla.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		exprs = append(exprs, e)
	}
	if len(d.Phases) != 3 {
		t.Fatalf("%d phases", len(d.Phases))
	}
	for pi, p := range d.Phases {
		ivs, err := PhaseIntervals(d, p.Name, exprs)
		if err != nil {
			t.Fatal(err)
		}
		for i, iv := range ivs {
			e := exprs[i]
			want := pi < 2 && e.Stat != "max" // a 4-second phase and a max have none
			if iv.OK != want {
				t.Errorf("%s, %s: interval %v, want %v", p.Name, e.Text, iv.OK, want)
				continue
			}
			if !iv.OK {
				continue
			}
			obs := d.JudgeSLA(e.Text)
			var phaseValue float64
			for _, pc := range obs.PerPhase {
				if pc.Phase == p.Name {
					phaseValue = pc.Observed
				}
			}
			if iv.Value != phaseValue || !(iv.Low <= iv.Value && iv.Value <= iv.High) {
				t.Errorf("%s, %s: %v in [%v, %v], the phase's own value %v", p.Name, e.Text, iv.Value, iv.Low, iv.High, phaseValue)
			}
			if iv.Batches != IntervalBatches {
				t.Errorf("%s, %s: %d batches", p.Name, e.Text, iv.Batches)
			}
			if e.Metric == sla.ResponseTime && !(iv.High > iv.Low) {
				t.Errorf("%s, %s: a noisy response time with a zero-width interval [%v, %v]", p.Name, e.Text, iv.Low, iv.High)
			}
		}
	}
	if _, err := PhaseIntervals(d, "no such phase", exprs); err == nil {
		t.Error("an unknown phase gave no error")
	}
}
