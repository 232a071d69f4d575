package trend

import (
	"math"
	"strconv"
	"time"
)

// Trends is summary.json's trends member: the latency drift of every label
// judged within a constant load and the memory-after-GC growth of every
// monitored target that has one.
type Trends struct {
	Latency []LatencyTrend `json:"latency"`
	// LatencySkip says why Latency is empty; "" when drift was judged.
	LatencySkip LatencySkip   `json:"latency_skip,omitempty"`
	Memory      []MemoryTrend `json:"memory"`
}

// Num is a number that encodes as null when it is not finite (an interval
// bound the data cannot support), else rounded to 3 decimals.
type Num float64

// MarshalJSON implements json.Marshaler.
func (v Num) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return []byte(strconv.FormatFloat(math.Round(f*1000)/1000, 'f', -1, 64)), nil
}

// LatencyTrend is the drift of one label's per-minute statistic.
type LatencyTrend struct {
	Label           string     `json:"label"`
	Phase           string     `json:"phase"` // "run" or the phase judged on its own
	Stat            string     `json:"stat"`  // mean | p95
	SlopeMsPerHour  Num        `json:"slope_ms_per_hour"`
	CILow           Num        `json:"ci_low"`
	CIHigh          Num        `json:"ci_high"`
	ChangeAt        *time.Time `json:"change_at"`
	ChangeMs        Num        `json:"change_ms"`
	Significant     bool       `json:"significant"`
	MinutesAnalyzed int        `json:"minutes"`
	// Requests are the requests in the minutes counted; Verdict is
	// DriftThin when a significant slope or shift rests on fewer than
	// MinDriftSamples of them (Significant is then false).
	Requests int64        `json:"requests"`
	Verdict  DriftVerdict `json:"verdict"`
}

// The memory a trend reads (MemoryTrend.What): names from a closed list,
// worded by the report (a Danish report says "hukommelse brugt").
const (
	WhatOldGeneration = "old generation" // a JVM's old generation (jstat OU)
	WhatHeap          = "heap"           // a JVM's heap used
	WhatRSS           = "RSS"            // a process's resident set
	WhatMemory        = "memory"         // a container's memory
	WhatMemoryUsed    = "memory used"    // a host's memory used
)

// MemoryTrend is one target's memory after GC.
type MemoryTrend struct {
	Target            string `json:"target"`
	What              string `json:"what"`
	SlopeBytesPerHour Num    `json:"slope_bytes_per_hour"`
	CILow             Num    `json:"ci_low"`
	CIHigh            Num    `json:"ci_high"`
	Verdict           string `json:"verdict"`
	// Basis is how the after-GC points were chosen; null when none were
	// (a span too short to judge). Method is it in words, the report's.
	Basis        *MemoryBasis `json:"basis"`
	Method       string       `json:"method"`
	HoursToLimit *float64     `json:"hours_to_limit,omitempty"`
	// Why is why the verdict is what it is, with its numbers; Reason is
	// it in words, the report's (report.Words).
	Why    MemoryWhy `json:"why"`
	Reason string    `json:"reason,omitempty"`
	// Readings, SpanS and AfterGCPoints are what the verdict rests on:
	// the memory readings, the seconds they cover and the after-GC points
	// the line was fitted to.
	Readings      int `json:"readings"`
	SpanS         Num `json:"span_s"`
	AfterGCPoints int `json:"after_gc_points"`
	// Result is the whole fit (after-GC points, time to the limit) for
	// the report's table and chart.
	Result MemoryResult `json:"-"`
}
