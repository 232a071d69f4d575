// Package resources summarises monitor series for summary.json: for every
// monitored target, min/mean/max/first/last of each metric over the whole
// run and within each phase, so "CPU of service X during the second
// workload" or "CPU per load step" is a lookup for the report, not a
// computation. It is pure: series and phases in, entries out.
package resources

import (
	"math"
	"sort"

	"github.com/plateau-perf/plateau/internal/core"
)

// Stat summarises one metric over a span. Mean is the plain mean of the
// samples (monitors sample at a fixed interval, so it is also the time
// mean away from gaps); First and Last are the earliest and latest samples
// in the span. Units are the series' own (docs/monitoring.md).
type Stat struct {
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	Max   float64 `json:"max"`
	First float64 `json:"first"`
	Last  float64 `json:"last"`
}

// Entry is one element of summary.json's resources list: one target over
// the whole run (Phase nil, marshalled as null) or over one phase.
type Entry struct {
	Target string `json:"target"`
	Kind   string `json:"kind"`
	// Phase is the phase name; nil means the whole run.
	Phase *string `json:"phase"`
	// Metrics maps metric names to their statistics. Metrics without a
	// sample in the span are left out; the map is never nil.
	Metrics map[string]Stat `json:"metrics"`
}

// Summarize returns, for each target in order of first appearance, its
// whole-run entry followed by one entry per phase, in the order given.
// Gap points (NaN) and infinities are ignored.
func Summarize(series []core.Series, phases []core.Phase) []Entry {
	type target struct {
		name, kind string
		series     []*core.Series
	}
	var targets []*target
	index := map[string]*target{}
	for i := range series {
		s := &series[i]
		t := index[s.Target]
		if t == nil {
			t = &target{name: s.Target, kind: s.Kind}
			index[s.Target] = t
			targets = append(targets, t)
		}
		t.series = append(t.series, s)
	}
	var out []Entry
	for _, t := range targets {
		whole := Entry{Target: t.name, Kind: t.kind, Metrics: map[string]Stat{}}
		for _, s := range t.series {
			if st, ok := summarize(s.Points, nil); ok {
				whole.Metrics[s.Metric] = st
			}
		}
		out = append(out, whole)
		for i := range phases {
			p := &phases[i]
			name := p.Name
			e := Entry{Target: t.name, Kind: t.kind, Phase: &name, Metrics: map[string]Stat{}}
			for _, s := range t.series {
				if st, ok := summarize(s.Points, p); ok {
					e.Metrics[s.Metric] = st
				}
			}
			out = append(out, e)
		}
	}
	return out
}

// summarize computes the statistics of the finite points in phase p (all
// points when p is nil). Points need not be sorted.
func summarize(pts []core.Point, p *core.Phase) (Stat, bool) {
	var (
		st          Stat
		n           int
		sum         float64
		first, last core.Point
	)
	for _, pt := range pts {
		if math.IsNaN(pt.V) || math.IsInf(pt.V, 0) || (p != nil && !p.Contains(pt.T)) {
			continue
		}
		if n == 0 {
			st.Min, st.Max, first, last = pt.V, pt.V, pt, pt
		}
		st.Min = min(st.Min, pt.V)
		st.Max = max(st.Max, pt.V)
		if pt.T.Before(first.T) {
			first = pt
		}
		if !pt.T.Before(last.T) {
			last = pt
		}
		sum += pt.V
		n++
	}
	if n == 0 {
		return Stat{}, false
	}
	st.Mean = sum / float64(n)
	// A mean computed in floating point may land a hair outside [min, max]
	// when all values are equal; clamp so the invariant holds exactly.
	st.Mean = min(max(st.Mean, st.Min), st.Max)
	st.First, st.Last = first.V, last.V
	return st, true
}

// Find returns the statistics of one metric of one target, for the whole
// run (phase "") or one phase.
func Find(entries []Entry, target, phase, metric string) (Stat, bool) {
	for _, e := range entries {
		if e.Target != target {
			continue
		}
		if (phase == "" && e.Phase == nil) || (e.Phase != nil && *e.Phase == phase) {
			st, ok := e.Metrics[metric]
			return st, ok
		}
	}
	return Stat{}, false
}

// MetricNames lists an entry's metric names in sorted order (for reports that
// print tables in a stable order).
func (e Entry) MetricNames() []string {
	out := make([]string, 0, len(e.Metrics))
	for k := range e.Metrics {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
