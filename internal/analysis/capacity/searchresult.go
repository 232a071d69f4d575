package capacity

import (
	"fmt"

	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
)

// Search is summary.json's capacity.search (and capacity.json's): the
// answer of a capacity search (`plateau capacity`, or a workload whose
// load has search:) with the probes it rests on. Loads are in Unit: req/s
// for the open model, users for the closed one. docs/summary.md and
// docs/capacity.md document every field.
type Search struct {
	Workload string `json:"workload"`
	// Unit is the searched unit: "req/s" (open model) or "users" (closed).
	Unit    string         `json:"unit"`
	Outcome search.Outcome `json:"outcome"`
	// Load is the capacity: the highest load probed good (0 when none).
	// UpperBound is the lowest load probed bad above it (0: none); the
	// capacity lies in [Load, UpperBound).
	Load       float64 `json:"load"`
	UpperBound float64 `json:"upper_bound"`
	// LimitedBy is why UpperBound was bad; Requirement names the
	// requirement when it is "requirement", Marginal says it stayed
	// marginal after its repeats rather than breaking clearly.
	LimitedBy   search.Limit `json:"limited_by"`
	Requirement string       `json:"requirement,omitempty"`
	Marginal    bool         `json:"marginal,omitempty"`
	// At is the load of the probe that ended the search when the outcome
	// is "generator limited" or "collapsing"; 0 otherwise.
	At float64 `json:"at,omitempty"`
	// Below is, when LimitedBy is "throughput flat", the highest load
	// probed below the knee: the knee lies in (Below, Load].
	Below float64 `json:"below,omitempty"`
	// Interrupted: the search was stopped (Ctrl-C); the answer rests on
	// the probes before it.
	Interrupted bool `json:"interrupted,omitempty"`
	// Sentence is the console's answer line: the fields above in the
	// report's words (report.SearchAnswer).
	Sentence string `json:"sentence"`
	// FailBelow is the capacity required (--fail-below, or fail_below in
	// the plan's search:), in Unit; 0 when none was. A Load below it fails
	// the search's command (exit 1), whatever the shown run's verdict.
	FailBelow float64 `json:"fail_below,omitempty"`
	// Resolution is the resolution asked ("5%", "10users", "20/s").
	Resolution string  `json:"resolution"`
	ElapsedS   float64 `json:"elapsed_s"`
	// Shown is the probe (its directory, "probe-07") whose measurements
	// the rest of the search's report and summary.json show: the latest
	// probe at the capacity, or the last probe when no load was good.
	Shown  string        `json:"shown,omitempty"`
	Probes []SearchProbe `json:"probes"`
	// Bottleneck is the monitored component that saturated first as the
	// probes' load rose up to the lowest bad load above the capacity (the
	// busiest when none did); null when nothing with a known capacity was
	// monitored.
	Bottleneck *resources.Bottleneck `json:"bottleneck"`
	// USL is the Universal Scalability Law fit over the probes that
	// measured the system; null when the probes do not support one
	// (USLSkip says why, USLReason in the report's words).
	USL       *USL         `json:"usl"`
	USLSkip   *knee.USLWhy `json:"usl_skip"`
	USLReason string       `json:"usl_reason,omitempty"`
}

// ProbeVerdict is the search's verdict on one probe.
type ProbeVerdict int

// Probe verdicts.
const (
	// NotJudged: the probe was interrupted or cut short by the engine and
	// is no evidence either way.
	NotJudged ProbeVerdict = iota
	// Good: every requirement held, the load was held and the throughput
	// kept up.
	Good
	// Bad: a requirement broke, the load was not held, the throughput fell
	// short or flat, or the error guard tripped (SearchProbe.LimitedBy).
	Bad
	// Marginal: a requirement's interval straddled its limit.
	Marginal
	// GeneratorLimited: the load generator saturated, so the probe says
	// nothing about the system.
	GeneratorLimited
)

func (v ProbeVerdict) String() string {
	return [...]string{"not judged", "good", "bad", "marginal", "generator-limited"}[max(0, min(int(v), 4))]
}

// MarshalText writes the verdict as its name.
func (v ProbeVerdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// UnmarshalText reads a verdict's name.
func (v *ProbeVerdict) UnmarshalText(b []byte) error {
	for i := NotJudged; i <= GeneratorLimited; i++ {
		if i.String() == string(b) {
			*v = i
			return nil
		}
	}
	return fmt.Errorf("unknown probe verdict %q", b)
}

// VerdictOf is the probe verdict of a search judgement.
func VerdictOf(j search.Judgement) ProbeVerdict {
	switch {
	case j.Limit == search.Generator:
		return GeneratorLimited
	case j.Verdict == search.Holds:
		return Good
	case j.Verdict == search.Marginal:
		return Marginal
	}
	return Bad
}

// SearchProbe is one probe of a capacity search: a run of the plan at one
// load, judged over its measured phase (warm-up excluded).
type SearchProbe struct {
	N int `json:"n"`
	// Dir is the probe's run directory, relative to the search's.
	Dir    string       `json:"dir"`
	Phase  search.Phase `json:"phase"`
	Repeat bool         `json:"repeat,omitempty"`
	Load   float64      `json:"load"`
	// WarmupS and DurationS are the warm-up and the measured part, s.
	WarmupS       float64 `json:"warmup_s"`
	DurationS     float64 `json:"duration_s"`
	ThroughputRPS float64 `json:"throughput_rps"`
	// MeanMs and P95Ms are the measured part's response times, ms.
	MeanMs             float64 `json:"mean_ms"`
	P95Ms              float64 `json:"p95_ms"`
	ErrorPct           float64 `json:"error_pct"`
	Held               bool    `json:"held"`
	GeneratorSaturated bool    `json:"generator_saturated"`
	// GeneratorStarved: the generator's threads waited for a CPU for at
	// least analysis.MaxRunQueuePct of their runnable time during the
	// measured phase (RunQueuePct): the probe's times include that wait.
	// The search still judges the probe; the answer says it is uncertain.
	GeneratorStarved bool    `json:"generator_starved,omitempty"`
	RunQueuePct      float64 `json:"generator_run_queue_wait_pct,omitempty"`
	// Verdict is the search's: good, bad, marginal, generator-limited or
	// not judged; LimitedBy what made a bad probe bad.
	Verdict   ProbeVerdict `json:"verdict"`
	LimitedBy search.Limit `json:"limited_by"`
	// TestStatus is the probe run's own summary.json verdict.
	TestStatus   string     `json:"test_status"`
	Requirements []ProbeReq `json:"requirements"`
	Interrupted  bool       `json:"interrupted,omitempty"`
	// CutShort: the engine stopped the probe's run before its end (a
	// generator late by more than graceful_stop); not judged, run again.
	CutShort bool `json:"cut_short,omitempty"`
}

// ProbeReq is one requirement as a probe measured it.
type ProbeReq struct {
	Expr string `json:"expr"`
	// Observed is the statistic over the measured part; [Low, High] its
	// confidence interval (equal to Observed when none is known). Limit
	// is the requirement's limit, in the same unit as Observed.
	Observed float64        `json:"observed"`
	Low      float64        `json:"low"`
	High     float64        `json:"high"`
	Limit    float64        `json:"limit"`
	Verdict  search.Verdict `json:"verdict"`
}

// Starved counts the judged probes whose generator was starved of CPU,
// of all judged probes, and the largest run-queue wait share among them.
func (cs *Search) Starved() (starved, judged int, worstPct float64) {
	for _, p := range cs.Probes {
		if p.Verdict == NotJudged {
			continue
		}
		judged++
		if p.GeneratorStarved {
			starved++
			worstPct = max(worstPct, p.RunQueuePct)
		}
	}
	return starved, judged, worstPct
}
