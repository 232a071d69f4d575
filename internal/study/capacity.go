package study

import (
	"fmt"
	"math"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
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
	// Steps are the run's load steps with their figures (all requests),
	// in load order: what the knee rests on — also when a capacity
	// search, not this run, answers the study's capacity question.
	Steps []CapacityStep `json:"steps,omitempty"`
}

// CapacityStep is one load step of a stepped run.
type CapacityStep struct {
	Name          string  `json:"name"`
	Load          float64 `json:"load"`
	ThroughputRPS float64 `json:"throughput_rps"`
	MeanMs        float64 `json:"mean_ms"`
	P95Ms         float64 `json:"p95_ms"`
	ErrorPct      float64 `json:"error_pct"`
}

// runCapacity is the run report's own capacity analysis of one run
// (analysis.Capacity, the same knee the run's report names); ok is false
// when the run has no load steps.
func runCapacity(name string, m *member) (Capacity, bool) {
	cr := m.cap
	if cr.Skip != analysis.CapacityDone {
		return Capacity{}, false
	}
	if cr.Err != nil {
		return Capacity{Run: name, Knee: fmt.Sprintf("no analysis: %v", cr.Err)}, true
	}
	c := capacityFrom(name, cr.Knee, len(m.sum.SLA) > 0)
	for _, st := range cr.Steps {
		if st.Phase < 0 || st.Phase >= len(m.sum.Phases) || len(m.sum.Phases[st.Phase].Labels) == 0 {
			continue
		}
		ls := m.sum.Phases[st.Phase].Labels
		tot := ls[len(ls)-1]
		c.Steps = append(c.Steps, CapacityStep{Name: st.Name, Load: st.Point.Load, ThroughputRPS: tot.ThroughputRPS, MeanMs: tot.MeanMs,
			P95Ms: tot.P95Ms, ErrorPct: tot.ErrorPct})
	}
	return c, true
}

// capacityFrom is a knee analysis's result as the study states it; without
// requirements no load met them.
func capacityFrom(name string, res knee.Result, hasSLA bool) Capacity {
	c := Capacity{Run: name, Knee: res.Sentence()}
	if res.Knee != nil {
		c.KneeLoad = res.Knee.Load
	}
	if u := res.USL; u != nil && !math.IsInf(u.PeakLoad, 0) && !math.IsInf(u.PeakThroughputRPS, 0) {
		c.USLPeakLoad, c.USLPeakRPS = round2(u.PeakLoad), round2(u.PeakThroughputRPS)
	}
	if res.MaxLoadMeetingSLA != nil && hasSLA {
		c.MaxLoadMeetingSLA = *res.MaxLoadMeetingSLA
	}
	return c
}
