package report

import (
	"math"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// Findings and conclusions per service, from labelled series (PromQL,
// CloudWatch, scrapes) and database monitors: which service used the most
// CPU, memory or connections in which phase, against its limit when one was
// recorded, and how far below the others stayed — what references 001 and
// 004 worked out by hand.

// judgeServices words, per resource, the busiest service and phase
// (resources.Services decides and grades).
func (b *builder) judgeServices() {
	var spans []resources.Span
	for _, p := range b.d.Phases {
		spans = append(spans, resources.Span{Name: b.red.String(p.Name), From: p.Start, To: p.End})
	}
	if len(spans) == 0 {
		spans = append(spans, resources.Span{Name: b.W("the run"), From: b.d.Start, To: b.d.End.Add(time.Nanosecond)})
	}
	for _, a := range resources.Services(b.resourceTargets(), spans) {
		rk, peaks := a.Rule, a.Peaks
		top := peaks[0]
		amount := func(p resources.ServicePeak) string {
			withFrac := !math.IsNaN(p.Frac)
			switch {
			case rk.Unit == "bytes" && withFrac:
				return b.bytesU(p.Mean) + b.W(" of ") + b.bytesU(p.Use.Capacity) + b.W(" memory (") + b.pct(100*p.Frac) + ")"
			case rk.Unit == "bytes":
				return b.bytesU(p.Mean) + b.W(" of memory")
			case rk.Unit == "bytes/s" && withFrac:
				return b.bytesU(p.Mean) + b.W("/s of a ") + b.bytesU(p.Use.Capacity) + b.W("/s link (") + b.pct(100*p.Frac) + ")"
			case rk.Unit == "bytes/s":
				return b.bytesU(p.Mean) + "/s"
			case withFrac:
				return b.T("%s of %s %s (%s)", b.num3(p.Mean), b.num3(p.Use.Capacity), b.measureText(rk.Measure), b.pct(100*p.Frac))
			}
			return b.num3(p.Mean) + " " + b.measureText(rk.Measure)
		}
		rest := ""
		if len(peaks) > 1 {
			second := peaks[1]
			// The second busiest bounds the rest: "at or under" its figure.
			others, limits := b.T("the other %d", len(peaks)-1), b.W("their limits")
			if len(peaks) == 2 {
				others, limits = b.W("the other one"), b.W("its limit")
			}
			switch {
			case a.WithLimit && resources.GradeFrac(second.Frac) == resources.ServiceSaturated:
				// "Stayed at or under 100 %" reads as spared; the second
				// busiest saturated as well (000: both balancer backends
				// at 12 of 12 connections).
				rest = b.T("%s reached up to %s of %s, saturated as well", others, b.pct(100*second.Frac), limits)
			case a.WithLimit:
				rest = b.T("%s stayed at or under %s of %s", others, b.pct(100*second.Frac), limits)
			default:
				rest = b.T("%s stayed at or under %s on average", others, b.amountPlain(second.Mean, rk))
			}
		}
		var lvl doc.Level
		var verdict string
		switch a.Grade {
		case resources.ServiceSaturated:
			lvl, verdict = doc.Fail, b.W("saturated")
		case resources.ServiceHigh:
			lvl, verdict = doc.Warn, b.W("high")
		case resources.ServiceWellBelow:
			lvl, verdict = doc.OK, b.W("well below the limits")
		default:
			lvl, verdict = doc.Info, b.W("measured per service")
			if len(peaks) == 1 {
				verdict = b.W("measured")
			}
		}
		name := b.red.String(top.Use.Component)
		lead := b.T("%s used %s on average in %s", name, amount(top), top.Span)
		switch {
		case rk.Unit == "%" && rk.Aspect == resources.CPU:
			lead = b.T("%s was %s busy on average in %s", name, b.pct(top.Mean), top.Span)
		case rk.Unit == "%":
			lead = b.T("%s used %s of its memory on average in %s", name, b.pct(top.Mean), top.Span)
		}
		if a.WithLimit || rk.Aspect == resources.CPU {
			// A bare count without a limit is evidence, not a finding.
			b.finding(doc.FindResources, lvl, b.W("busiest for ")+b.resourceWord(rk.Aspect)+": "+lead, rest)
		}
		ev := clauses(b.W("busiest: ")+lead, rest)
		aspect := resourceAspect(rk.Aspect)
		if c, ok := b.conclusions[aspect]; ok && c.Level != doc.NoData {
			c.Evidence = clauses(c.Evidence, b.W("per service, ")+ev)
			if lvl > c.Level {
				c.Level, c.Verdict = lvl, verdict
			}
			b.conclusions[aspect] = c
			continue
		}
		b.conclude(aspect, lvl, verdict, ev)
	}
}

func (b numbers) amountPlain(v float64, rk resources.Rule) string {
	switch rk.Unit {
	case "%":
		return b.pct(v)
	case "bytes":
		return b.bytesU(v)
	case "bytes/s":
		return b.bytesU(v) + "/s"
	}
	return b.num3(v) + " " + b.measureText(rk.Measure)
}

// judgeRestarts names the containers whose restart counter rose during the
// run (resources.Restarts): a restart under load is a failure of the
// system under test even when no request failed.
func (b *builder) judgeRestarts() {
	rts := b.resourceTargets()
	rs := resources.Restarts(rts, b.d.Start, b.d.End)
	if len(rs) == 0 {
		if n := resources.RestartCounters(rts); n > 0 {
			b.conclude(doc.AspectRestarts, doc.OK, b.W("none"), b.T("the restart counters of %s stayed the same during the run", b.plural(int64(n), "container")))
		}
		return
	}
	var parts []string
	for _, r := range rs {
		parts = append(parts, b.T("%s restarted %s", b.red.String(r.Component), b.plural(int64(math.Round(r.N)), "time")))
	}
	// "Container …" first: the sentence's capital must not change a name.
	text := b.W("container ") + b.joinAnd(parts) + b.W(" during the run")
	b.finding(doc.FindResources, doc.Fail, text)
	b.conclude(doc.AspectRestarts, doc.Fail, b.T("%s restarted", b.plural(int64(len(rs)), "container")), text)
}

// judgeNetwork names the instances and pods whose network error or drop
// rate read above zero during the run (resources.NetFaults).
func (b *builder) judgeNetwork() {
	fs := resources.NetFaults(b.resourceTargets(), b.d.Start, b.d.End)
	if len(fs) == 0 {
		return
	}
	var parts []string
	for _, f := range fs {
		parts = append(parts, b.T("%s on %s (about %s, at most %s/s)", b.netFaultText(f.What), b.red.String(f.Component), b.num3(f.N), b.num3(f.MaxPerS)))
	}
	text := b.W("network ") + b.joinAnd(parts) + b.W(" during the run")
	b.finding(doc.FindResources, doc.Warn, text)
	c, ok := b.conclusions[doc.AspectNetwork]
	if ok && c.Level != doc.NoData {
		c.Evidence = clauses(c.Evidence, text)
		c.Level, c.Verdict = max(c.Level, doc.Warn), b.W("packets lost or refused")
		b.conclusions[doc.AspectNetwork] = c
		return
	}
	b.conclude(doc.AspectNetwork, doc.Warn, b.W("packets lost or refused"), text)
}

// resourceAspect is the conclusion aspect of a resources rule.
func resourceAspect(r string) doc.Aspect {
	switch r {
	case resources.CPU:
		return doc.AspectCPU
	case resources.Memory:
		return doc.AspectMemory
	case resources.Network:
		return doc.AspectNetwork
	}
	return doc.AspectConnections
}
