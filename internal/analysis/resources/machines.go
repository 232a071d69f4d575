package resources

import (
	"math"
	"slices"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// The machine-level answers of the report's resources conclusions: the
// busiest CPU of the system under test, the load generator's own CPU, the
// network per host and the garbage collection per JVM. The load generator
// is judged apart: a finding about CPU or network is about the services.

// CPUPeak is a target's busiest span of CPU: busy % of a host, or % of one
// core for a process or container.
type CPUPeak struct {
	Target, Span string
	Mean, Max    float64
	Host         bool
}

// Grade grades the peak (GradeCPU).
func (p CPUPeak) Grade() CPUGrade { return GradeCPU(p.Mean, p.Host) }

// NetPeak is a host's span with the highest mean traffic, in and out, in
// bytes per second.
type NetPeak struct {
	Target, Span string
	In, Out      float64
}

// GCUse is a JVM's garbage collection over the run. A count or share is
// NaN when the JVM did not report it.
type GCUse struct {
	Target string
	// Young and Full are the collections counted over the run; YoungPerMin
	// and FullPerMin the same per minute of the run.
	Young, Full             float64
	YoungPerMin, FullPerMin float64
	// TimePct is the mean share of time spent collecting.
	TimePct float64
	Busy    bool // GCBusy: too many full collections or too much time
}

// Machines is the machine-level answer over the monitored targets.
type Machines struct {
	// CPU is the busiest target of the system under test; hosts are
	// compared on their own scale (0–100 %), a process's per-core
	// percentage only when no host was watched. Nil when none reported
	// CPU.
	CPU *CPUPeak
	// GeneratorCPU is the load generator's own, judged apart.
	GeneratorCPU *CPUPeak
	// Net are the hosts with traffic (not the generator's when the test
	// ran over loopback), in target order.
	Net []NetPeak
	// NetIdle are the targets whose interfaces read zero throughout.
	NetIdle []string
	// NetLoopback are the generator's targets whose interfaces do not
	// carry a test run over loopback: their figures are other traffic.
	NetLoopback []string
	// GC are the JVMs' collections, in target order.
	GC []GCUse
}

// MachineOptions are the facts about the run the answer needs.
type MachineOptions struct {
	// Spans are the phases (or the whole run when it has none).
	Spans []Span
	// From and To bound the run, for the GC counts.
	From, To time.Time
	// Loopback says the test's target is on the loopback interface.
	Loopback bool
}

// JudgeMachines states the machine-level answers over ts.
func JudgeMachines(ts []Target, o MachineOptions) Machines {
	var m Machines
	for _, t := range ts {
		var s *core.Series
		host := t.Kind == kindHost
		switch t.Kind {
		case kindHost:
			s = BusySeries(t)
		case kindProcess, kindCgroup:
			s = t.get("cpu_pct")
		}
		if s == nil {
			continue
		}
		for _, sp := range o.Spans {
			st, ok := statIn(s.Points, sp.From, sp.To)
			if !ok {
				continue
			}
			into := &m.CPU
			if t.Generator {
				into = &m.GeneratorCPU
			}
			if c := *into; c == nil || (host && !c.Host) || (host == c.Host && st.Mean > c.Mean) {
				*into = &CPUPeak{Target: t.Name, Span: sp.Name, Mean: st.Mean, Max: st.Max, Host: host}
			}
		}
	}
	for _, t := range ts {
		rx, tx := t.get("net_rx_bytes_per_s"), t.get("net_tx_bytes_per_s")
		if rx == nil && tx == nil {
			continue
		}
		if t.Generator && o.Loopback {
			m.NetLoopback = append(m.NetLoopback, t.Name)
			continue
		}
		best := NetPeak{Target: t.Name}
		for _, sp := range o.Spans {
			var in, out float64
			if rx != nil {
				if st, ok := statIn(rx.Points, sp.From, sp.To); ok {
					in = st.Mean
				}
			}
			if tx != nil {
				if st, ok := statIn(tx.Points, sp.From, sp.To); ok {
					out = st.Mean
				}
			}
			if in+out > best.In+best.Out {
				best.In, best.Out, best.Span = in, out, sp.Name
			}
		}
		if best.In+best.Out <= 0 {
			m.NetIdle = append(m.NetIdle, t.Name)
			continue
		}
		m.Net = append(m.Net, best)
	}
	minutes := math.Max(o.To.Sub(o.From).Minutes(), 1e-9)
	for _, t := range ts {
		if t.Kind != kindJVM {
			continue
		}
		y, f := t.get("YGC"), t.get("FGC")
		if y == nil && f == nil {
			continue
		}
		g := GCUse{Target: t.Name, Young: math.NaN(), Full: math.NaN(), YoungPerMin: math.NaN(), FullPerMin: math.NaN(), TimePct: math.NaN()}
		end := o.To.Add(time.Nanosecond)
		if y != nil {
			if st, ok := statIn(y.Points, o.From, end); ok {
				g.Young = st.Last - st.First
				g.YoungPerMin = g.Young / minutes
			}
		}
		if f != nil {
			if st, ok := statIn(f.Points, o.From, end); ok {
				g.Full = st.Last - st.First
				g.FullPerMin = g.Full / minutes
				g.Busy = g.Busy || GCBusy(g.FullPerMin, 0)
			}
		}
		if gt := t.get("gc_time_pct"); gt != nil {
			if st, ok := statIn(gt.Points, o.From, end); ok {
				g.TimePct = st.Mean
				g.Busy = g.Busy || GCBusy(0, st.Mean)
			}
		}
		m.GC = append(m.GC, g)
	}
	return m
}

// get returns the target's series of that metric, nil when it has none
// or it is empty.
func (t Target) get(metric string) *core.Series {
	for _, s := range t.Series {
		if s.Metric == metric && len(s.Points) > 0 {
			return s
		}
	}
	return nil
}

// BusySeries is a host's busy CPU: cpu_busy_pct, or 100 − cpu_idle_pct;
// nil without either.
func BusySeries(t Target) *core.Series {
	if s := t.get("cpu_busy_pct"); s != nil {
		return s
	}
	idle := t.get("cpu_idle_pct")
	if idle == nil {
		return nil
	}
	out := &core.Series{Target: idle.Target, Kind: idle.Kind, Metric: "cpu_busy_pct", Unit: "%", Points: make([]core.Point, len(idle.Points))}
	for i, p := range idle.Points {
		out.Points[i] = core.Point{T: p.T, V: 100 - p.V}
	}
	return out
}

// spanStat summarises a series over a span, each figure rounded to 3
// decimals.
type spanStat struct{ Mean, Max, First, Last float64 }

// statIn summarises the finite points of a time-sorted series in
// [from, to); false without any.
func statIn(pts []core.Point, from, to time.Time) (spanStat, bool) {
	i, _ := slices.BinarySearchFunc(pts, from, func(p core.Point, t time.Time) int { return p.T.Compare(t) })
	st := spanStat{Max: math.Inf(-1)}
	sum, n := 0.0, 0
	for ; i < len(pts) && pts[i].T.Before(to); i++ {
		v := pts[i].V
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if n == 0 {
			st.First = v
		}
		st.Last, st.Max = v, math.Max(st.Max, v)
		sum += v
		n++
	}
	if n == 0 {
		return spanStat{}, false
	}
	st.Mean = sum / float64(n)
	r := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	st.Mean, st.Max, st.First, st.Last = r(st.Mean), r(st.Max), r(st.First), r(st.Last)
	return st, true
}
