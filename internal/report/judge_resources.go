package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- resource verdicts --------------------------------------------------------

// spans are the run's phases as the resources analysis reads them (the
// whole run when it has none), names masked.
func (b *builder) spans() []resources.Span {
	var out []resources.Span
	for _, p := range b.d.Phases {
		out = append(out, resources.Span{Name: b.red.String(p.Name), From: p.Start, To: p.End})
	}
	if len(out) == 0 {
		out = append(out, resources.Span{Name: b.W("the run"), From: b.d.Start, To: b.d.End.Add(time.Nanosecond)})
	}
	return out
}

// cpuUnit is the unit of a CPU peak.
func cpuUnit(p *resources.CPUPeak) string {
	if p.Host {
		return "% busy"
	}
	return "% of one core"
}

// judgeResources words the CPU, network, memory and GC conclusions and
// findings (resources.JudgeMachines and the memory trends decide).
func (b *builder) judgeResources() {
	m := resources.JudgeMachines(b.resourceTargets(), resources.MachineOptions{Spans: b.spans(), From: b.d.Start, To: b.d.End, Loopback: b.loopbackTarget()})
	if c := m.CPU; c != nil {
		lvl, verdict := doc.OK, b.W("never near the ceiling")
		switch c.Grade() {
		case resources.CPUSaturated:
			lvl, verdict = doc.Fail, b.W("saturated")
		case resources.CPUHigh:
			lvl, verdict = doc.Warn, b.W("high")
		case resources.CPUPerProcess:
			lvl, verdict = doc.Info, b.W("measured per process")
		}
		name, unit := b.red.String(c.Target), b.W(cpuUnit(c))
		ev := b.T("busiest: %s at %s %s on average in %s (peak %s %s)", name, b.num3(c.Mean), unit, c.Span, b.num3(c.Max), unit)
		b.conclude(doc.AspectCPU, lvl, verdict, ev)
		b.finding(doc.FindResources, lvl, b.T("CPU %s: %s averaged %s %s in %s (peak %s %s)", verdict, name, b.num3(c.Mean), unit, c.Span, b.num3(c.Max), unit))
	} else if g := m.GeneratorCPU; g != nil {
		b.conclude(doc.AspectCPU, doc.NoData, b.W("not measured for the system under test"), b.W("only the load generator's own host (")+b.red.String(g.Target)+b.W(") was monitored; its health is stated apart"))
	}
	if g := m.GeneratorCPU; g != nil {
		unit := b.W(cpuUnit(g))
		lvl, verdict := doc.OK, b.W("kept up")
		if gr := g.Grade(); gr == resources.CPUSaturated || gr == resources.CPUHigh {
			lvl, verdict = doc.Warn, b.W("busy: it may have limited the load it could apply")
		}
		ev := b.T("%s at %s %s on average in %s (peak %s %s)", b.red.String(g.Target), b.num3(g.Mean), unit, g.Span, b.num3(g.Max), unit)
		// The host's average can look moderate while the generator's own
		// threads waited for a CPU (the validity check counts that wait):
		// then it did not keep up, whatever the host's mean says.
		if n := b.starvedPhases(); n > 0 {
			lvl, verdict = doc.Warn, b.W("starved of CPU: its response times include its own waiting")
			ev += b.T("; its threads waited for a CPU held by other processes in %s", b.plural(int64(n), "phase"))
		}
		b.conclude(doc.AspectGenerator, lvl, verdict, ev)
		b.finding(doc.FindResources, lvl, b.T("Load generator %s: %s", verdict, ev))
	}
	// Network: the highest phase means in and out per host of the system
	// under test.
	var netEv []string
	for _, n := range m.Net {
		var dirs []string
		if n.In > 0 {
			dirs = append(dirs, b.W("in ")+b.bytesU(n.In)+"/s")
		}
		if n.Out > 0 {
			dirs = append(dirs, b.W("out ")+b.bytesU(n.Out)+"/s")
		}
		netEv = append(netEv, b.T("%s %s in %s", b.red.String(n.Target), strings.Join(dirs, ", "), n.Span))
	}
	names := func(ts []string) []string {
		out := make([]string, len(ts))
		for i, t := range ts {
			out[i] = b.red.String(t)
		}
		return out
	}
	switch {
	case len(netEv) > 0:
		if len(netEv) > 3 {
			netEv = append(netEv[:3], b.T("and %d more", len(netEv)-3))
		}
		b.conclude(doc.AspectNetwork, doc.Info, b.W("measured"), b.W("highest phase means: ")+strings.Join(netEv, "; "))
	case len(m.NetIdle) > 0:
		b.conclude(doc.AspectNetwork, doc.NoData, b.W("no traffic recorded"), b.W("the monitored interfaces of ")+b.joinAnd(names(m.NetIdle))+b.W(" read zero throughout: the load used another interface, or the counters were not updated"))
	case len(m.NetLoopback) > 0:
		b.conclude(doc.AspectNetwork, doc.NoData, b.W("not measured"), b.W("the test ran over loopback, which the monitored interfaces of ")+b.joinAnd(names(m.NetLoopback))+b.W(" (the load generator's host) do not carry; their figures are other traffic"))
	}
	if mts := b.s.Trends.Memory; len(mts) > 0 {
		var growing, stable, thin []string
		var longest time.Duration
		var firstStable *trend.MemoryTrend
		for i, m := range mts {
			switch trend.Verdict(m.Verdict) {
			case trend.Growing:
				growing = append(growing, fmt.Sprintf("%s %s +%s/h", m.Target, b.memoryWhat(m.What), b.bytesU(math.Abs(float64(m.SlopeBytesPerHour)))))
			case trend.Stable:
				stable = append(stable, fmt.Sprintf("%s %s", m.Target, b.memoryWhat(m.What)))
				if firstStable == nil {
					firstStable = &mts[i]
				}
			default:
				who, _ := b.memoryThin(m)
				thin = append(thin, who)
				longest = max(longest, m.Result.Span)
			}
		}
		switch {
		case len(growing) > 0:
			ev := b.W("growing after GC: ") + strings.Join(growing, "; ")
			b.conclude(doc.AspectMemory, doc.Warn, b.W("grows over the run: possible leak"), ev)
			b.finding(doc.FindMemory, doc.Warn, b.W("Memory grows after garbage collection: ")+strings.Join(growing, "; "))
		case len(stable) > 0:
			m := firstStable
			ev := b.T("stable after GC: %s (%s %s/h, %s)", strings.Join(stable, ", "), m.Target, b.signedBytes(float64(m.SlopeBytesPerHour)), m.Method)
			if len(thin) > 0 {
				ev += b.T("; not enough data to judge %s (Trends)", b.joinAnd(thin))
			}
			b.conclude(doc.AspectMemory, doc.OK, b.W("handled well: no leak signal"), ev)
			b.finding(doc.FindMemory, doc.OK, b.T("Memory stable after garbage collection (%s): no leak signal", strings.Join(stable, ", ")))
		default:
			ev := b.W("no memory series showed a growth or ruled one out (Trends gives the numbers)")
			if longest < trend.MinMemorySpan {
				ev = b.T("observed for %s at most; a verdict needs %s", dur(longest), dur(trend.MinMemorySpan))
			}
			b.conclude(doc.AspectMemory, doc.NoData, b.W("not enough data to judge"), ev)
		}
	}
	// GC: collections per JVM over the run.
	var gcEv []string
	gcLvl := doc.OK
	for _, g := range m.GC {
		var parts []string
		if finite(g.Young) {
			parts = append(parts, b.T("%s young (%s/min)", b.count(int64(g.Young)), b.num3(g.YoungPerMin)))
		}
		if finite(g.Full) {
			parts = append(parts, b.T("%s full", b.count(int64(g.Full))))
		}
		if finite(g.TimePct) {
			parts = append(parts, b.T("GC time %s %%", b.num3(g.TimePct)))
		}
		if g.Busy {
			gcLvl = doc.Warn
		}
		gcEv = append(gcEv, b.red.String(g.Target)+": "+strings.Join(parts, ", "))
	}
	if len(gcEv) > 0 {
		verdict := b.W("collects regularly and keeps up")
		if gcLvl == doc.Warn {
			verdict = b.W("busy: frequent full collections or a high GC time share")
		}
		b.conclude(doc.AspectGC, gcLvl, verdict, strings.Join(gcEv, "; "))
	}
}

// starvedPhases counts the phases in which the validity check found the
// generator waiting for a CPU held by other processes.
func (b *builder) starvedPhases() int {
	n := 0
	if v := b.s.Validity; v != nil {
		for _, p := range v.Phases {
			if p.Starved {
				n++
			}
		}
	}
	return n
}
