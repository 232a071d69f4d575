package changepoint_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/plateau-perf/plateau/internal/analysis/changepoint"
)

// A label's p95 over 12 releases: 8 % slower from the seventh on.
func ExampleDetect() {
	p95 := []float64{201, 199, 200, 202, 198, 200, 216, 217, 215, 216, 218, 216}
	res, err := changepoint.Detect(p95, changepoint.Options{Alpha: 0.05, MinChangePct: 5}, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range res.Points {
		fmt.Printf("run %d: %.1f ms → %.1f ms (%+.1f %%), p = %.3f\n", p.Index, p.Before.Mean, p.After.Mean, p.ChangePct, p.PValue)
	}
	last := res.Segments[len(res.Segments)-1]
	fmt.Printf("current level: %.1f ± %.1f ms over %d runs\n", last.Mean, last.StdDev, last.Len())
	// Output:
	// run 6: 200.0 ms → 216.3 ms (+8.2 %), p = 0.005
	// current level: 216.3 ± 1.0 ms over 6 runs
}
