package search_test

import (
	"fmt"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
)

// The loop a caller runs: ask for the next decision, run the probe it
// names, append the result, until the search stops. Here the "system"
// keeps its p95 at 120 ms up to 640 req/s and breaks above.
func ExampleNext() {
	s := search.Settings{Model: search.Open, Start: 50, Max: 10000, ResolutionPct: 5,
		Warmup: 10 * time.Second, Duration: 60 * time.Second, Cooldown: 10 * time.Second}
	var probes []search.Probe
	for {
		d, err := search.Next(s, probes)
		if err != nil {
			fmt.Println(err)
			return
		}
		if d.Action == search.Stop {
			a := d.Answer
			fmt.Printf("%v: capacity %.0f %s, in [%.0f, %.0f), limited by %v %q after %d probes (%v)\n",
				a.Outcome, a.Capacity, a.Unit, a.Capacity, a.UpperBound, a.LimitedBy, a.Requirement, a.Probes, a.Elapsed)
			return
		}
		p95 := 120.0
		if d.Load > 640 {
			p95 = 900
		}
		probes = append(probes, search.Probe{Load: d.Load, Throughput: float64(d.Load), Held: true,
			Duration: d.Duration, Elapsed: d.Warmup + d.Duration + d.Cooldown,
			Requirements: []search.Requirement{{Name: "p95 < 500ms", Limit: 500, Value: p95, Low: p95 * 0.95, High: p95 * 1.05, Better: search.Lower}}})
	}
	// Output:
	// found: capacity 617 req/s, in [617, 644), limited by requirement "p95 < 500ms" after 9 probes (12m0s)
}
