package analysis

import (
	"testing"

	"github.com/plateau-perf/plateau/internal/rundir/rundirtest"
)

func TestSummarizeJudgesPerPhase(t *testing.T) {
	d, err := Load(rundirtest.WriteSteps(t))
	if err != nil {
		t.Fatal(err)
	}
	s := Summarize(d, []string{"avg(response_time) < 200ms", "error_rate < 1%", `p95(response_time) < 200ms during "step 2"`})
	tot := s.Labels[len(s.Labels)-1]
	if tot.Samples != 600 || tot.Errors != 10 || tot.ThroughputRPS != 20 {
		t.Errorf("TOTAL %+v, want 600 samples, 10 errors, 20 req/s", tot)
	}
	// Offsets −10…+9 ms around each step mean average −0.5 ms.
	if want := (100.0+150+300)/3 - 0.5; tot.MeanMs < want-0.01 || tot.MeanMs > want+0.01 {
		t.Errorf("mean %.3f ms, want %.3f (exact)", tot.MeanMs, want)
	}
	avg := s.SLA[0]
	if !avg.Passed || avg.HeldUpTo != "step 2" || avg.FirstBroken != "step 3" || len(avg.PerPhase) != 3 {
		t.Errorf("avg SLA %+v: want held over the run (183 ms), up to step 2, broken in step 3", avg)
	}
	if s.SLA[1].Passed || s.SLA[1].FirstBroken != "step 3" {
		t.Errorf("error rate SLA %+v: want failed (1.67 %%), first broken in step 3", s.SLA[1])
	}
	if p := s.SLA[2]; !p.Passed || p.Scope != "step 2" || p.Observed < 150 || p.Observed > 160 {
		t.Errorf("during SLA %+v: want p95 ≈ 159 ms in step 2, held", p)
	}
	if s.Passed {
		t.Error("summary passed although the error-rate SLA failed")
	}
	if len(s.Errors.Details) != 1 || s.Errors.Details[0].Count != 10 || s.Errors.Details[0].Phases[0] != "step 3" ||
		s.Errors.ByStatus["503"] != 10 {
		t.Errorf("errors %+v", s.Errors)
	}
	if len(d.TotalTicks) != 30 || d.TotalTicks[25].MeanMs < 299 || d.TotalTicks[25].MeanMs > 301 {
		t.Errorf("timeline: %d ticks, tick 25 %+v", len(d.TotalTicks), d.TotalTicks[25])
	}
}
