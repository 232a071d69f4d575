package merge

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// phaseKey identifies a phase across generators. Phase indexes cannot: when a
// plan has several workloads, their phases start at the same instant and each
// generator appends them to run.json in whatever order its goroutines ran.
type phaseKey struct{ workload, name string }

// alignPhases builds the merged phase list — the union of the segments'
// phases, ordered by start — and for every segment the map from its phase
// index to the merged one. Phases of one name are the same step of the same
// workload on every generator: start is the earliest start, end the latest
// end (open while any generator left it open and none closed it).
func alignPhases(segs []*Segment) ([]rundir.PhaseInfo, [][]int, []string) {
	type acc struct {
		p     rundir.PhaseInfo
		order int // first seen: segment order, then position
		in    []string
	}
	byKey := map[phaseKey]*acc{}
	var keys []phaseKey
	var notes []string
	for _, s := range segs {
		for _, p := range s.info.Phases {
			k := phaseKey{p.Workload, p.Name}
			a := byKey[k]
			if a == nil {
				a = &acc{p: p, order: len(keys)}
				a.p.CPUPct, a.p.CPUBySegment = 0, nil
				a.p.Checks = maps.Clone(p.Checks) // summed over the segments below
				addSegmentCPU(&a.p, s.Segment, p.CPUPct)
				byKey[k] = a
				keys = append(keys, k)
				a.in = append(a.in, s.Segment)
				continue
			}
			a.in = append(a.in, s.Segment)
			// Each generator ran its share of the schedule and of
			// max_users: the merged phase holds their sums, and each
			// generator's own CPU (the busiest one's as CPUPct).
			a.p.Planned += p.Planned
			a.p.Started += p.Started
			a.p.DroppedLate += p.DroppedLate
			a.p.LateMaxMs = max(a.p.LateMaxMs, p.LateMaxMs)
			if p.RunQueuePct > a.p.RunQueuePct { // the most starved generator's
				a.p.RunQueuePct, a.p.RunQueueMs = p.RunQueuePct, p.RunQueueMs
			}
			for name, n := range p.Checks {
				if a.p.Checks == nil {
					a.p.Checks = map[string]rundir.CheckCount{}
				}
				c := a.p.Checks[name]
				c.Passed += n.Passed
				c.Failed += n.Failed
				a.p.Checks[name] = c
			}
			a.p.MaxUsers += p.MaxUsers
			addSegmentCPU(&a.p, s.Segment, p.CPUPct)
			if p.Start.Before(a.p.Start) {
				a.p.Start = p.Start
			}
			if p.End != nil && (a.p.End == nil || p.End.After(*a.p.End)) {
				e := *p.End
				a.p.End = &e
			}
			if a.p.Stopped == "" {
				a.p.Stopped, a.p.StopRule = p.Stopped, p.StopRule
			}
			// Every generator records the global load of a phase (all
			// users, the whole rate), so they must agree.
			if p.Users != a.p.Users || p.Rate != a.p.Rate {
				notes = append(notes, fmt.Sprintf("phase %q: segment %s recorded %s, another segment %s",
					p.Name, s.Segment, loadOf(p), loadOf(a.p)))
			}
		}
	}
	sort.SliceStable(keys, func(i, j int) bool {
		a, b := byKey[keys[i]], byKey[keys[j]]
		if d := a.p.Start.Sub(b.p.Start); d > 50*time.Millisecond || d < -50*time.Millisecond {
			return d < 0
		}
		return a.order < b.order
	})
	phases := make([]rundir.PhaseInfo, len(keys))
	index := map[phaseKey]int{}
	for i, k := range keys {
		phases[i] = byKey[k].p
		index[k] = i
		if in := byKey[k].in; len(in) < len(segs) {
			// A stop rule is judged by each generator on its own share,
			// so generators can disagree about where a stepped load ends.
			notes = append(notes, fmt.Sprintf("phase %q ran on segments %s only, not on all %d merged ones",
				k.name, strings.Join(in, ", "), len(segs)))
		}
	}
	maps := make([][]int, len(segs))
	for si, s := range segs {
		maps[si] = make([]int, len(s.info.Phases))
		for pi, p := range s.info.Phases {
			maps[si][pi] = index[phaseKey{p.Workload, p.Name}]
		}
	}
	return phases, maps, notes
}

func loadOf(p rundir.PhaseInfo) string {
	if p.Rate > 0 {
		return fmt.Sprintf("%g/s", p.Rate)
	}
	return fmt.Sprintf("%d users", p.Users)
}

// addSegmentCPU records one generator's own CPU during a merged phase.
func addSegmentCPU(p *rundir.PhaseInfo, segment string, pct float64) {
	if pct <= 0 {
		return
	}
	if p.CPUBySegment == nil {
		p.CPUBySegment = map[string]float64{}
	}
	p.CPUBySegment[segment] = pct
	p.CPUPct = max(p.CPUPct, pct)
}
