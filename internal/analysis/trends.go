package analysis

import (
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
)

// Trends judges the latency drift of every label within a constant load and
// the memory after GC of every monitored target that reports memory
// (summary.json's trends). Names are as recorded; the report masks them.
func Trends(d *Dataset, ts []resources.Target) *trend.Trends {
	tr := &trend.Trends{Latency: []trend.LatencyTrend{}, Memory: MemoryTrends(ts)}
	tr.Latency, tr.LatencySkip = d.latencyTrends()
	return tr
}

// ConstantLoad reports whether every phase ran at the same load.
func (d *Dataset) ConstantLoad() bool {
	for _, p := range d.Phases {
		q := d.Phases[0]
		if p.Users != q.Users || p.Rate != q.Rate || p.Workload != q.Workload {
			return false
		}
	}
	return true
}

// perMinute returns a label's per-minute means and p95s within [from, to),
// each from the minute's merged histogram, and the requests behind them. A
// minute belongs to the span when its middle does; a minute with fewer
// than trend.MinMinuteSamples requests gives no value.
func perMinute(minutes []Tick, from, to time.Time) (mean, p95 []core.Point, n int64) {
	for _, m := range minutes {
		if mid := m.T.Add(30 * time.Second); m.Count < trend.MinMinuteSamples || mid.Before(from) || !mid.Before(to) {
			continue
		}
		mean = append(mean, core.Point{T: m.T, V: m.MeanMs})
		p95 = append(p95, core.Point{T: m.T, V: m.P95Ms})
		n += m.Count
	}
	return mean, p95, n
}

// latencyTrends judges drift within a constant load: over the whole run
// when the load never changed, else within each phase long enough to have
// a trend (a step up in load is not a drift).
func (d *Dataset) latencyTrends() ([]trend.LatencyTrend, trend.LatencySkip) {
	type segment struct {
		name     string
		from, to time.Time
	}
	var segs []segment
	if d.ConstantLoad() {
		if d.Span() >= trend.MinTrendMinutes*time.Minute {
			segs = append(segs, segment{"run", d.Start, d.End.Add(time.Nanosecond)})
		}
	} else {
		for _, p := range d.Phases {
			if p.Duration() >= trend.MinTrendMinutes*time.Minute {
				segs = append(segs, segment{p.Name, p.Start, p.End})
			}
		}
	}
	out := []trend.LatencyTrend{}
	if len(segs) == 0 {
		if d.ConstantLoad() {
			return out, trend.LatencyRunTooShort
		}
		return out, trend.LatencyNoLongPhase
	}
	type lk struct {
		name  string
		ticks []Tick
	}
	var ls []lk
	for _, k := range d.Labels() {
		ls = append(ls, lk{d.LabelName(k), d.Minutes[k]})
	}
	if len(ls) > 1 {
		ls = append(ls, lk{"all requests", d.TotalMinutes})
	}
	for _, sg := range segs {
		for _, l := range ls {
			mean, p95, samples := perMinute(l.ticks, sg.from, sg.to)
			for _, st := range []struct {
				name string
				pts  []core.Point
			}{{"mean", mean}, {"p95", p95}} {
				if len(st.pts) < trend.MinTrendMinutes {
					continue
				}
				r, err := trend.Drift(st.pts, trend.DriftOptions{})
				if err != nil {
					continue
				}
				lt := trend.LatencyTrend{Label: l.name, Phase: sg.name, Stat: st.name, SlopeMsPerHour: trend.Num(r.SlopePerHour),
					CILow: trend.Num(r.CILow), CIHigh: trend.Num(r.CIHigh), Significant: r.Significant, MinutesAnalyzed: r.N,
					Requests: samples, Verdict: trend.DriftFlat}
				if r.ChangeAt != nil {
					at := r.ChangeAt.UTC()
					lt.ChangeAt, lt.ChangeMs = &at, trend.Num(r.ChangeDelta)
				}
				// A rise is judged on the level shift when there is one,
				// else on the slope.
				up := r.SlopePerHour > 0
				if r.ChangeAt != nil {
					up = r.ChangeDelta > 0
				}
				switch {
				case r.Significant && samples < trend.MinDriftSamples:
					lt.Verdict, lt.Significant = trend.DriftThin, false
				case r.Significant && up:
					lt.Verdict = trend.DriftUp
				case r.Significant:
					lt.Verdict = trend.DriftDown
				}
				out = append(out, lt)
			}
		}
	}
	if len(out) == 0 {
		return out, trend.LatencyFewMinutes
	}
	return out, trend.LatencyJudged
}

// MemoryTrends fits memory after GC for each JVM (old generation against
// full collections, as reference 000 argues it), each process or cgroup
// (RSS) and each host (memory used); a list, [] when no target reported
// memory.
func MemoryTrends(ts []resources.Target) []trend.MemoryTrend {
	out := []trend.MemoryTrend{}
	for _, t := range ts {
		get := func(name string) *core.Series {
			for _, s := range t.Series {
				if s.Metric == name && len(s.Points) > 0 {
					return s
				}
			}
			return nil
		}
		last := func(s *core.Series) float64 {
			if s == nil || len(s.Points) == 0 {
				return 0
			}
			return s.Points[len(s.Points)-1].V * KBToBytes(s)
		}
		var mem, gc *core.Series
		var what string
		var limit float64
		switch t.Kind {
		case mondata.KindJVM:
			if mem = get("OU"); mem != nil {
				what, gc, limit = trend.WhatOldGeneration, get("FGC"), last(get("OC"))
			} else if mem = get("heap_used_bytes"); mem != nil {
				what, limit = trend.WhatHeap, last(get("heap_committed_bytes"))
			}
		case mondata.KindProcess:
			mem, what = get("rss_bytes"), trend.WhatRSS
		case mondata.KindCgroup:
			mem, what, limit = get("memory_bytes"), trend.WhatMemory, last(get("memory_limit_bytes"))
		case mondata.KindHost:
			mem, what, limit = get("mem_used_bytes"), trend.WhatMemoryUsed, last(get("mem_total_bytes"))
		}
		if mem == nil {
			continue
		}
		var gp []core.Point
		if gc != nil {
			gp = gc.Points
		}
		pts := mem.Points
		if k := KBToBytes(mem); k != 1 {
			pts = make([]core.Point, len(mem.Points))
			for i, x := range mem.Points {
				pts[i] = core.Point{T: x.T, V: x.V * k}
			}
		}
		r, err := trend.Memory(pts, gp, trend.MemoryOptions{Limit: limit})
		if err != nil {
			r.Verdict = trend.Unknown // r.Why says why
		}
		mt := trend.MemoryTrend{Target: t.Name, What: what, SlopeBytesPerHour: trend.Num(r.SlopePerHour), CILow: trend.Num(r.CILow),
			CIHigh: trend.Num(r.CIHigh), Verdict: string(r.Verdict), Why: r.Why, Result: r,
			Readings: r.Readings, SpanS: trend.Num(r.Span.Seconds()), AfterGCPoints: len(r.Baseline)}
		if r.Basis.Method != trend.MethodNone {
			b := r.Basis
			mt.Basis = &b
		}
		if r.TimeToLimit != nil {
			h := round3(r.TimeToLimit.Hours())
			mt.HoursToLimit = &h
		}
		out = append(out, mt)
	}
	return out
}

// KBToBytes is the factor that scales a series to bytes: 1024 for jstat's
// KB, else 1.
func KBToBytes(s *core.Series) float64 {
	switch s.Unit {
	case "KB", "kB", "KiB":
		return 1024
	}
	return 1
}
