package analysis

import (
	"testing"

	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/rundir/rundirtest"
)

// TestCapacityOrderAndNothingUnheld: steps are in order of load whatever
// order the phases ran in; without requirements no point claims to meet
// one and no load is "the highest meeting the SLA"; an import (no planned
// load, think time unknown) gets no Little's-law check of its generator.
func TestCapacityOrderAndNothingUnheld(t *testing.T) {
	d, err := Load(rundirtest.WriteSteps(t))
	if err != nil {
		t.Fatal(err)
	}
	// Run the steps downwards: 30, 20, 10 users.
	for i, j := 0, len(d.Phases)-1; i < j; i, j = i+1, j-1 {
		d.Phases[i].Users, d.Phases[j].Users = d.Phases[j].Users, d.Phases[i].Users
	}
	s := Summarize(d, nil)
	cr := Capacity(d, s, nil)
	if cr.Skip != CapacityDone || cr.Err != nil || len(cr.Steps) != 3 {
		t.Fatalf("capacity: skip %v err %v steps %d", cr.Skip, cr.Err, len(cr.Steps))
	}
	for i := 1; i < len(cr.Steps); i++ {
		if cr.Steps[i].Point.Load < cr.Steps[i-1].Point.Load {
			t.Errorf("steps out of load order: %v before %v", cr.Steps[i-1].Point.Load, cr.Steps[i].Point.Load)
		}
	}
	if cr.Result == nil || cr.Result.MaxLoadMeetingSLA != nil {
		t.Fatalf("no SLA, yet max_load_meeting_sla = %v", cr.Result.MaxLoadMeetingSLA)
	}
	for _, p := range cr.Result.Points {
		if p.SLAMet != nil {
			t.Errorf("point %s claims sla_met %v without an SLA", p.Phase, *p.SLAMet)
		}
	}
	if !cr.CheckLittle {
		t.Error("a live closed run without think time gets the Little's-law check")
	}
	d.Info.Status, d.Info.SourceKind = rundir.StatusImported, rundir.SourceLocust
	if cr := Capacity(d, s, nil); cr.CheckLittle {
		t.Error("an imported Locust run (think time unknown) gets a Little's-law check of its generator")
	}
	s = Summarize(d, []string{"avg(response_time) < 400ms"})
	cr = Capacity(d, s, nil)
	if m := cr.Result.MaxLoadMeetingSLA; m == nil || *m != 30 || cr.Result.Points[0].SLAMet == nil || !*cr.Result.Points[0].SLAMet {
		t.Errorf("with an SLA: max load %v, first point %+v", cr.Result.MaxLoadMeetingSLA, cr.Result.Points[0])
	}
	// Phases at one load: skipped, and says why.
	for i := range d.Phases {
		d.Phases[i].Users = 5
	}
	if cr := Capacity(d, Summarize(d, nil), nil); cr.Skip != CapacitySameLoad || cr.Result != nil {
		t.Errorf("one load: skip %v result %v", cr.Skip, cr.Result)
	}
}
