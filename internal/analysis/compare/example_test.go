package compare_test

import (
	"fmt"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
)

func ExampleParseRules() {
	rules, err := compare.ParseRules("p95 > +10%, error_rate > +1%")
	if err != nil {
		fmt.Println(err)
		return
	}
	base := core.LabelStats{P95Ms: 400, ErrorPct: 0.2}
	cand := core.LabelStats{P95Ms: 452, ErrorPct: 0.4}
	outcomes, failed := compare.CheckAll(rules, base, cand)
	for _, o := range outcomes {
		fmt.Println(o.Text)
	}
	fmt.Println("fail:", failed)

	_, err = compare.ParseRules("p95 > +10")
	fmt.Println(err)
	// Output:
	// p95 +13% (400 ms → 452 ms) breaks p95 > +10%
	// error_rate +0.2 pp (0.2% → 0.4%) within error_rate > +1%
	// fail: true
	// fail-on "p95 > +10": column 10: missing unit after 10 (want %, ms, s, us or µs)
}
