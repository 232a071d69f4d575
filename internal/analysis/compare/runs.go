package compare

import (
	"fmt"
	"math"

	"github.com/plateau-perf/plateau/internal/core"
)

// RunStats is one run's row for one label and phase, named for the table
// header (a release, a configuration, "repeat 3").
type RunStats struct {
	Name  string
	Stats core.LabelStats
	// Load is the run's load level ("20 users"); Users and Rate its
	// largest concurrent users and arrival rate (0 when none).
	Load  string
	Users int
	Rate  float64
}

// Spread describes how much one statistic varies across runs.
type Spread struct {
	Min, Max, Mean float64
	// SD is the sample standard deviation (n−1); 0 for a single run.
	SD float64
	// CV is SD / Mean, the coefficient of variation (0 when Mean is 0).
	// For repeats of one build it is the run-to-run noise to set
	// Options.MinEffectPct from (as a percentage, 100·CV).
	CV float64
}

// Summary is several runs side by side with the spread of each statistic.
type Summary struct {
	// Workload names the workload whose requests the figures are, for
	// runs of several workloads (one Summary each); "" is all requests.
	Workload                               string `json:"workload,omitempty"`
	Runs                                   []RunStats
	MeanMs, P95Ms, ThroughputRPS, ErrorPct Spread
}

// Summarize lines up runs (configurations A/B/C, or repeats as in reference
// 004) and computes the spread of mean, p95, throughput and error rate.
func Summarize(runs []RunStats) (Summary, error) {
	if len(runs) == 0 {
		return Summary{}, fmt.Errorf("summarize: no runs")
	}
	for _, r := range runs {
		s := r.Stats
		for _, v := range []float64{s.MeanMs, s.P95Ms, s.ThroughputRPS, s.ErrorPct} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Summary{}, fmt.Errorf("summarize: run %q: non-finite statistic %v", r.Name, v)
			}
		}
	}
	col := func(f func(core.LabelStats) float64) Spread {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r.Stats)
		}
		return spread(v)
	}
	return Summary{
		Runs:          append([]RunStats(nil), runs...),
		MeanMs:        col(func(s core.LabelStats) float64 { return s.MeanMs }),
		P95Ms:         col(func(s core.LabelStats) float64 { return s.P95Ms }),
		ThroughputRPS: col(func(s core.LabelStats) float64 { return s.ThroughputRPS }),
		ErrorPct:      col(func(s core.LabelStats) float64 { return s.ErrorPct }),
	}, nil
}

func spread(v []float64) Spread {
	s := Spread{Min: math.Inf(1), Max: math.Inf(-1)}
	var sum float64
	for _, x := range v {
		s.Min, s.Max = math.Min(s.Min, x), math.Max(s.Max, x)
		sum += x
	}
	s.Mean = sum / float64(len(v))
	if len(v) > 1 {
		var ss float64
		for _, x := range v {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(len(v)-1))
	}
	if s.Mean != 0 {
		s.CV = s.SD / math.Abs(s.Mean)
	}
	return s
}
