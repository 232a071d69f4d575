// Package capacity is the typed result of a run's capacity analysis:
// throughput and response time against the offered load per step, the knee,
// the Universal Scalability Law fit, the highest load that met every
// requirement and the component that saturated first. The numbers come from
// package knee and package resources; package analysis assembles them from
// a run (analysis.Summary.Capacity) and the report only says them.
package capacity

import (
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
)

// Result is summary.json's capacity member.
type Result struct {
	Knee *Knee `json:"knee"`
	// NoKnee says why Knee is null: the sweep's outcome and the numbers
	// its sentence quotes; null when there is a knee.
	NoKnee *knee.NoKnee `json:"no_knee"`
	// KneeReason is NoKnee in words, the report's (report.Words).
	KneeReason string `json:"knee_reason,omitempty"`
	USL        *USL   `json:"usl"`
	// USLSkip says why USL is null, with the rejected fit's numbers;
	// null when there is a fit. USLReason is it in words (report.Words).
	USLSkip   *knee.USLWhy `json:"usl_skip"`
	USLReason string       `json:"usl_reason,omitempty"`
	// MaxLoadMeetingSLA is the highest tested load at which it and every
	// lower load met every requirement; null when none did or the run has
	// no requirement.
	MaxLoadMeetingSLA *float64 `json:"max_load_meeting_sla"`
	LoadUnit          string   `json:"load_unit"` // users | req/s
	Points            []Point  `json:"points"`
	// Bottleneck is the monitored component that saturated first up to
	// the step after the knee, or the busiest when none did; null when
	// nothing with a known capacity was monitored.
	Bottleneck *resources.Bottleneck `json:"bottleneck"`
	// Search is the answer of a capacity search whose report this is;
	// omitted for any other run.
	Search *Search `json:"search,omitempty"`
}

// Knee is the capacity knee.
type Knee struct {
	Load          float64 `json:"load"`
	ThroughputRPS float64 `json:"throughput_rps"`
	MeanMs        float64 `json:"mean_ms"`
	// Gain is the most any higher tested load added to the knee's
	// throughput (a fraction; negative when all gave less), MinGain the
	// threshold it stayed below; MaxLoad is the highest tested load and
	// MaxMeanMs its mean response time.
	Gain      float64 `json:"gain"`
	MinGain   float64 `json:"min_gain"`
	MaxLoad   float64 `json:"max_load"`
	MaxMeanMs float64 `json:"max_mean_ms"`
	// Sentence is the knee in words, the report's (report.Words).
	Sentence string `json:"sentence"`
}

// USL is the Universal Scalability Law fit.
type USL struct {
	Sigma             float64  `json:"sigma"`
	Kappa             float64  `json:"kappa"`
	Lambda            float64  `json:"lambda"`
	PeakLoad          *float64 `json:"peak_load"`
	PeakThroughputRPS *float64 `json:"peak_throughput_rps"`
	R2                float64  `json:"r2"`
}

// Point is one tested load level with its Little's-law check.
type Point struct {
	Phase         string  `json:"phase"`
	Load          float64 `json:"load"`
	ThroughputRPS float64 `json:"throughput_rps"`
	MeanMs        float64 `json:"mean_ms"`
	P95Ms         float64 `json:"p95_ms"`
	// SLAMet is whether every requirement held in the step; omitted when
	// the run has no requirement (there is nothing to meet).
	SLAMet      *bool   `json:"sla_met,omitempty"`
	LittleRatio float64 `json:"little_ratio,omitempty"`
	// LittleFlag is what the Little's-law check shows at this load when
	// it flags it; omitted otherwise. LittleNote is it in words, the
	// report's (report.Words).
	LittleFlag knee.LittleFlag `json:"little_flag,omitempty"`
	LittleNote string          `json:"little_note,omitempty"`
}
