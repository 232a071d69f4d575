package study

import (
	"fmt"
	"math"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/core"
)

// Capacity is one run's scalability as the knee analysis (the report's,
// analysis/knee) finds it over the run's load steps, or, for the study
// as a whole, over its runs at different loads.
type Capacity struct {
	Run string `json:"run"`
	// Knee is the knee's sentence, or why there is none.
	Knee string `json:"knee"`
	// KneeLoad is the load at the knee (users or req/s); 0 without one.
	KneeLoad float64 `json:"knee_load,omitzero"`
	// USLPeakLoad and USLPeakRPS are the fitted Universal Scalability
	// Law's peak; 0 when the data do not support a fit (or the peak is
	// unbounded).
	USLPeakLoad float64 `json:"usl_peak_load,omitzero"`
	USLPeakRPS  float64 `json:"usl_peak_rps,omitzero"`
	// MaxLoadMeetingSLA is the highest load at which it and every lower
	// load met every SLA; 0 when none did or none was stated.
	MaxLoadMeetingSLA float64 `json:"max_load_meeting_sla,omitzero"`
}

// runCapacity analyses one run's phases of its first workload with two or
// more load levels; ok is false when the run has no such steps.
func runCapacity(name string, d *analysis.Dataset, sum *analysis.Summary) (Capacity, bool) {
	byW := map[string][]knee.Point{}
	kind := map[string]knee.LoadKind{}
	var order []string
	for i, p := range d.Phases {
		load, k := float64(p.Users), knee.Users
		if p.Rate > 0 {
			load, k = p.Rate, knee.Rate
		}
		if i >= len(d.PhaseTotal) || d.PhaseTotal[i].Count == 0 || load <= 0 {
			continue
		}
		st := d.PhaseTotal[i].Stats(core.TotalLabel, false, p.Duration())
		met := true
		for _, r := range sum.SLA {
			for _, pc := range r.PerPhase {
				if pc.Phase == p.Name && !pc.Passed {
					met = false
				}
			}
		}
		if _, ok := byW[p.Workload]; !ok {
			order = append(order, p.Workload)
		}
		kind[p.Workload] = k
		byW[p.Workload] = append(byW[p.Workload], knee.Point{Load: load, ThroughputRPS: st.ThroughputRPS, MeanMs: st.MeanMs, P95Ms: st.P95Ms, SLAMet: met})
	}
	for _, w := range order {
		loads := map[float64]bool{}
		for _, p := range byW[w] {
			loads[p.Load] = true
		}
		if len(loads) >= 2 {
			return capacityOf(name, byW[w], kind[w])
		}
	}
	return Capacity{}, false
}

// capacityOf runs the knee analysis over points.
func capacityOf(name string, pts []knee.Point, k knee.LoadKind) (Capacity, bool) {
	res, err := knee.Analyze(pts, knee.Options{Kind: k})
	if err != nil {
		return Capacity{Run: name, Knee: fmt.Sprintf("no analysis: %v", err)}, true
	}
	c := Capacity{Run: name, Knee: res.Sentence()}
	if res.Knee != nil {
		c.KneeLoad = res.Knee.Load
	}
	if u := res.USL; u != nil && !math.IsInf(u.PeakLoad, 0) && !math.IsInf(u.PeakThroughputRPS, 0) {
		c.USLPeakLoad, c.USLPeakRPS = round2(u.PeakLoad), round2(u.PeakThroughputRPS)
	}
	if res.MaxLoadMeetingSLA != nil {
		c.MaxLoadMeetingSLA = *res.MaxLoadMeetingSLA
	}
	return c, true
}
