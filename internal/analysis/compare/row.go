package compare

import "github.com/plateau-perf/plateau/internal/core"

// Row is one element of summary.json's comparison: one label in one
// phase (or the whole run) of a candidate run against its baseline.
type Row struct {
	Label string `json:"label"`
	// Workload is set on a total of one workload's requests (Label
	// TOTAL), which runs of several workloads are compared by.
	Workload    string  `json:"workload,omitempty"`
	Phase       string  `json:"phase"`
	BasePhase   string  `json:"base_phase,omitempty"`
	BaseMeanMs  float64 `json:"base_mean_ms"`
	NewMeanMs   float64 `json:"new_mean_ms"`
	DeltaMs     float64 `json:"delta_ms"`
	DeltaPct    float64 `json:"delta_pct"`
	BaseP95Ms   float64 `json:"base_p95_ms"`
	NewP95Ms    float64 `json:"new_p95_ms"`
	P95DeltaPct float64 `json:"p95_delta_pct"`
	BaseTputRPS float64 `json:"base_throughput_rps"`
	NewTputRPS  float64 `json:"new_throughput_rps"`
	BaseErrPct  float64 `json:"base_error_pct"`
	NewErrPct   float64 `json:"new_error_pct"`
	// BaseSamples and NewSamples are the requests compared on each side,
	// BaseSeconds and NewSeconds the seconds with requests: a verdict
	// needs MinSamples and MinSeconds on both (else NotEnough).
	BaseSamples int64   `json:"base_samples"`
	NewSamples  int64   `json:"new_samples"`
	BaseSeconds int     `json:"base_seconds"`
	NewSeconds  int     `json:"new_seconds"`
	Significant bool    `json:"significant"`
	Verdict     Verdict `json:"verdict"`
	CliffsDelta float64 `json:"cliffs_delta"`
	// Mixed: the mean and the p95 moved apart, one significantly slower,
	// the other significantly faster (Verdict is then slower). Note is it
	// in words, the report's (report.Words).
	Mixed bool   `json:"mixed,omitempty"`
	Note  string `json:"note,omitempty"`
	// Base and Cand are the full rows, for --fail-on rules.
	Base core.LabelStats `json:"-"`
	Cand core.LabelStats `json:"-"`
}
