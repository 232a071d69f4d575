package knee_test

import (
	"fmt"

	"github.com/plateau-perf/plateau/internal/analysis/knee"
)

func ExampleAnalyze() {
	// A concurrency sweep like reference 003's.
	points := []knee.Point{
		{Load: 1, ThroughputRPS: 71, MeanMs: 14, SLAMet: true},
		{Load: 5, ThroughputRPS: 357, MeanMs: 14, SLAMet: true},
		{Load: 10, ThroughputRPS: 714, MeanMs: 14, SLAMet: true},
		{Load: 15, ThroughputRPS: 1003, MeanMs: 14, SLAMet: true},
		{Load: 20, ThroughputRPS: 1010, MeanMs: 19.8, SLAMet: true},
		{Load: 50, ThroughputRPS: 1020, MeanMs: 49, SLAMet: true},
		{Load: 100, ThroughputRPS: 1030, MeanMs: 97, SLAMet: false},
		{Load: 200, ThroughputRPS: 1050, MeanMs: 190, SLAMet: false},
	}
	r, err := knee.Analyze(points, knee.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	k := r.Knee
	fmt.Printf("knee at %g users, %g req/s; higher loads added at most %+.1f %%\n", k.Load, k.ThroughputRPS, 100*k.Gain)
	fmt.Println("highest load meeting the SLA:", *r.MaxLoadMeetingSLA)
	// Output:
	// knee at 15 users, 1003 req/s; higher loads added at most +4.7 %
	// highest load meeting the SLA: 50
}
