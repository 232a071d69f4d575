package analysis

import (
	"slices"
	"sort"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// RequestWorkloads are the workloads the run's requests belong to
// (transactions and derived labels left out), in plan order, then by
// name; empty when no request label names a workload.
func (d *Dataset) RequestWorkloads() []string {
	var out []string
	for k, a := range d.Run {
		if k.Tx || k.Derived || k.Workload == "" || a.Count == 0 || slices.Contains(out, k.Workload) {
			continue
		}
		out = append(out, k.Workload)
	}
	plan := map[string]int{}
	if d.Info != nil {
		for i, w := range d.Info.Workloads {
			if _, ok := plan[w.Name]; !ok {
				plan[w.Name] = i
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		pi, oki := plan[out[i]]
		pj, okj := plan[out[j]]
		if oki != okj {
			return oki
		}
		if pi != pj {
			return pi < pj
		}
		return out[i] < out[j]
	})
	return out
}

// Mixed reports whether the run's requests belong to several workloads:
// then one figure of all its requests (an average, a percentile) mixes
// requests that are different things, in the proportion the run happened
// to send them, and the run is described workload by workload.
func (d *Dataset) Mixed() bool { return len(d.RequestWorkloads()) > 1 }

// WorkloadTotal is all requests of workload w over the whole run: the
// merged histogram of its request labels (transactions excluded, so
// nothing counts twice) and its per-second figures. The aggregate is
// empty when w has no requests.
func (d *Dataset) WorkloadTotal(w string) (*metrics.Agg, []Tick) {
	a := metrics.NewAgg()
	var ticks []Tick
	for k, la := range d.Run {
		if k.Tx || k.Derived || k.Workload != w {
			continue
		}
		a.Merge(la)
		ticks = append(ticks, d.Timeline[k]...)
	}
	sort.SliceStable(ticks, func(i, j int) bool { return ticks[i].T.Before(ticks[j].T) })
	return a, mergeSameSecond(ticks)
}
