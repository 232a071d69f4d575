package engine

import (
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/plan/expr"
)

// Check compiles every workload of a loaded plan as Run would, without
// sending a request: what plateau check reports beyond the loader.
func Check(p *plan.Plan) error {
	feeders := map[string]*feeder{}
	for name, f := range p.Data {
		feeders[name] = newFeeder(f, 0, 1)
	}
	counters := &expr.Counters{}
	if len(p.Setup) > 0 || len(p.Teardown) > 0 {
		if _, err := compile(p, &plan.Workload{Name: "setup", Setup: p.Setup, Teardown: p.Teardown}, -1, feeders, counters, nil); err != nil {
			return err
		}
	}
	for i, w := range p.Workloads {
		if _, err := compile(p, w, i, feeders, counters, nil); err != nil {
			return err
		}
	}
	return nil
}
