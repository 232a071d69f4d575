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
		fmt.Printf("%s: %+.3g (%g → %g), failed %v\n", o.Rule, o.Observed, o.Base, o.New, o.Failed)
	}
	fmt.Println("fail:", failed)

	_, err = compare.ParseRules("p95 > +10")
	fmt.Println(err)
	// Output:
	// p95 > +10%: +13 (400 → 452), failed true
	// error_rate > +1%: +0.2 (0.2 → 0.4), failed false
	// fail: true
	// fail-on "p95 > +10": column 10: missing unit after 10 (want %, ms, s, us or µs)
}
