package analysis

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
)

// uslProbes are closed-model probes whose throughput follows a known USL
// curve exactly.
func uslProbes(u knee.USL, loads ...float64) []capacity.SearchProbe {
	var ps []capacity.SearchProbe
	for i, n := range loads {
		x := u.Throughput(n)
		ps = append(ps, capacity.SearchProbe{N: i + 1, Dir: fmt.Sprintf("probe-%02d", i+1), Load: n, ThroughputRPS: x,
			MeanMs: 1000 * n / x, P95Ms: 2000 * n / x, Held: true, Verdict: capacity.Good})
	}
	return ps
}

func TestFinishSearchUSL(t *testing.T) {
	truth := knee.USL{Lambda: 10, Sigma: 0.05, Kappa: 0.002}
	t.Run("enough probes: the fit finds the curve", func(t *testing.T) {
		cs := &capacity.Search{Unit: "users", Probes: uslProbes(truth, 2, 4, 8, 16, 24, 32)}
		FinishSearch(cs, nil)
		if cs.USL == nil {
			t.Fatalf("no fit: %s", cs.USLReason)
		}
		if math.Abs(cs.USL.Sigma-truth.Sigma) > 0.01 || math.Abs(cs.USL.Kappa-truth.Kappa) > 0.0005 {
			t.Errorf("σ %g κ %g, want %g %g", cs.USL.Sigma, cs.USL.Kappa, truth.Sigma, truth.Kappa)
		}
	})
	t.Run("four loads: no fit, however good it looks", func(t *testing.T) {
		cs := &capacity.Search{Unit: "users", Probes: uslProbes(truth, 2, 4, 8, 16)}
		FinishSearch(cs, nil)
		if cs.USL != nil || !strings.Contains(cs.USLReason, "at least 5 distinct loads") {
			t.Errorf("usl %+v reason %q", cs.USL, cs.USLReason)
		}
	})
	t.Run("repeats of one load count once", func(t *testing.T) {
		cs := &capacity.Search{Unit: "users", Probes: uslProbes(truth, 2, 4, 8, 16, 16, 16)}
		FinishSearch(cs, nil)
		if cs.USL != nil {
			t.Errorf("a fit over 4 distinct loads: %+v", cs.USL)
		}
	})
	t.Run("generator-limited and unjudged probes are left out", func(t *testing.T) {
		cs := &capacity.Search{Unit: "users", Probes: uslProbes(truth, 2, 4, 8, 16, 24, 32)}
		cs.Probes[4].Verdict = capacity.GeneratorLimited
		cs.Probes[5].Verdict = capacity.NotJudged
		FinishSearch(cs, nil)
		if cs.USL != nil {
			t.Errorf("a fit over probes that did not measure the system: %+v", cs.USL)
		}
	})
	t.Run("open model: overloaded probes are not a steady state", func(t *testing.T) {
		// 5 distinct loads, two of them served well short of the rate.
		var ps []capacity.SearchProbe
		for i, c := range []struct{ load, tput, mean float64 }{{10, 10, 20}, {20, 20, 21}, {40, 40, 25}, {80, 60, 600}, {60, 52, 400}} {
			ps = append(ps, capacity.SearchProbe{N: i + 1, Dir: fmt.Sprintf("probe-%02d", i+1), Load: c.load, ThroughputRPS: c.tput,
				MeanMs: c.mean, P95Ms: 2 * c.mean, Held: true, Verdict: capacity.Good})
		}
		cs := &capacity.Search{Unit: "req/s", Probes: ps}
		FinishSearch(cs, nil)
		if cs.USL != nil || !strings.Contains(cs.USLReason, "have 3") {
			t.Errorf("usl %+v reason %q", cs.USL, cs.USLReason)
		}
	})
}

func TestFinishSearchBottleneck(t *testing.T) {
	read := func(comp string, util float64) resources.Reading {
		return resources.Reading{Component: comp, Resource: "CPU", Unit: "cores", Used: 2 * util, Capacity: 2, Utilisation: util}
	}
	ps := []capacity.SearchProbe{
		{N: 1, Dir: "probe-01", Load: 10, ThroughputRPS: 100, MeanMs: 10, Held: true, Verdict: capacity.Good},
		{N: 2, Dir: "probe-02", Load: 80, ThroughputRPS: 400, MeanMs: 200, Held: true, Verdict: capacity.Bad, LimitedBy: search.RequirementBroke},
		{N: 3, Dir: "probe-03", Load: 40, ThroughputRPS: 390, MeanMs: 100, Held: true, Verdict: capacity.Good},
		{N: 4, Dir: "probe-04", Load: 60, ThroughputRPS: 395, MeanMs: 150, Held: true, Verdict: capacity.Bad, LimitedBy: search.RequirementBroke},
	}
	readings := [][]resources.Reading{
		{read("db", 0.3), read("app", 0.1)},
		{read("app", 0.99), read("db", 0.97)}, // above the upper bound: not looked at
		{read("db", 0.7), read("app", 0.4)},
		{read("db", 0.9), read("app", 0.5)},
	}
	cs := &capacity.Search{Unit: "users", Load: 40, UpperBound: 60, Probes: ps}
	FinishSearch(cs, readings)
	bn := cs.Bottleneck
	if bn == nil || !bn.Saturated || bn.Component != "db" || bn.Phase != "probe-04" || bn.Load != 60 {
		t.Fatalf("bottleneck %+v, want db saturated in probe-04 at 60 users", bn)
	}
	// Nothing saturated up to the upper bound: the busiest, not saturated.
	readings[3] = []resources.Reading{read("db", 0.5)}
	FinishSearch(cs, readings)
	if bn := cs.Bottleneck; bn == nil || bn.Saturated || bn.Component != "db" || bn.Phase != "probe-03" {
		t.Fatalf("bottleneck %+v, want db busiest in probe-03, not saturated", bn)
	}
	// Nothing monitored: no bottleneck.
	FinishSearch(cs, nil)
	if cs.Bottleneck != nil {
		t.Errorf("bottleneck %+v from no readings", cs.Bottleneck)
	}
}

// A fitted peak inside the probed range that promises far more than any
// probe measured is contradicted by the probes; one beyond the range, or
// near what was measured, is not.
func TestUSLContradicted(t *testing.T) {
	pts := []knee.Point{{Load: 5, ThroughputRPS: 50, MeanMs: 100}, {Load: 10, ThroughputRPS: 90, MeanMs: 110}, {Load: 20, ThroughputRPS: 100, MeanMs: 200}}
	for _, c := range []struct {
		peakLoad, peakX float64
		kind            knee.LoadKind
		want            bool
	}{
		{12, 300, knee.Users, true},           // inside, three times the best measured
		{12, 110, knee.Users, false},          // inside, near the best measured
		{30, 300, knee.Users, false},          // beyond the probed range: an extrapolation, judged elsewhere
		{math.Inf(1), 300, knee.Users, false}, // no peak
		{3, 300, knee.Rate, true},             // open model: concurrency 5, 9.9, 20 in flight
	} {
		got := contradicted(knee.USL{PeakLoad: c.peakLoad, PeakThroughputRPS: c.peakX}, pts, c.kind)
		if got != c.want {
			t.Errorf("peak %v req/s at %v: contradicted %v, want %v", c.peakX, c.peakLoad, got, c.want)
		}
	}
}

// The generator's own host (role generator) is not a component of the
// system: a probe's readings leave it out, so a machine whose CPU the
// generator and its neighbours fill is never named the bottleneck.
func TestMonitorTargetsLeaveOutTheGenerator(t *testing.T) {
	targets := []mondata.TargetStatus{{Name: "generator-host", Kind: "host", Role: mondata.RoleGenerator, Started: true},
		{Name: "manager", Kind: "process", Role: mondata.RoleSUT, Started: true}, {Name: "db", Kind: "process", Started: true}}
	series := []core.Series{{Target: "generator-host", Kind: "host", Metric: "cpu_busy_pct"}, {Target: "manager", Kind: "process", Metric: "cpu_pct"},
		{Target: "db", Kind: "process", Metric: "cpu_pct"}}
	var names []string
	for _, rt := range MonitorTargets(targets, series) {
		names = append(names, rt.Name)
		if len(rt.Series) != 1 || rt.Series[0].Target != rt.Name {
			t.Errorf("%s: series %v", rt.Name, rt.Series)
		}
	}
	if strings.Join(names, ",") != "manager,db" {
		t.Errorf("targets %v, want manager and db (not the generator's host)", names)
	}
}
