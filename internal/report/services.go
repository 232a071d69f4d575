package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// Findings and conclusions per service, from labelled series (PromQL,
// CloudWatch, scrapes) and database monitors: which service used the most
// CPU, memory or connections in which phase, against its limit when one was
// recorded, and how far below the others stayed — what references 001 and
// 004 worked out by hand.

// judgeServices states, per resource, the busiest service and phase.
func (b *builder) judgeServices(ts []*target) {
	type spanT struct {
		name     string
		from, to time.Time
	}
	var spans []spanT
	for _, p := range b.d.Phases {
		spans = append(spans, spanT{b.red.String(p.Name), p.Start, p.End})
	}
	if len(spans) == 0 {
		spans = append(spans, spanT{"the run", b.d.Start, b.d.End.Add(time.Nanosecond)})
	}
	done := map[string]bool{}
	rts := b.resourceTargets()
	for _, rk := range resources.ServiceRules {
		if done[rk.Aspect] {
			continue
		}
		us := resources.ServiceUses(rts, rk)
		if len(us) == 0 {
			continue
		}
		done[rk.Aspect] = true
		// Each service's busiest phase; the busiest service overall.
		type peak struct {
			u     resources.Use
			phase string
			mean  float64
			frac  float64 // of the limit; NaN without one
		}
		var peaks []peak
		for _, u := range us {
			best := peak{u: u, mean: math.NaN()}
			for _, sp := range spans {
				st, ok := statsOver(u.Series, sp.from, sp.to)
				if ok && (math.IsNaN(best.mean) || st.Mean > best.mean) {
					best.mean, best.phase = st.Mean, sp.name
				}
			}
			if math.IsNaN(best.mean) {
				continue
			}
			best.frac = math.NaN()
			if u.Capacity > 0 {
				best.frac = best.mean / u.Capacity
			}
			peaks = append(peaks, best)
		}
		if len(peaks) == 0 {
			continue
		}
		withLimit := !math.IsNaN(peaks[0].frac)
		for _, p := range peaks {
			withLimit = withLimit && !math.IsNaN(p.frac)
		}
		key := func(p peak) float64 {
			if withLimit {
				return p.frac
			}
			return p.mean
		}
		slices.SortStableFunc(peaks, func(x, y peak) int {
			switch {
			case key(x) > key(y):
				return -1
			case key(x) < key(y):
				return 1
			}
			return 0
		})
		top := peaks[0]
		amount := func(p peak) string {
			switch {
			case rk.Unit == "bytes" && !math.IsNaN(p.frac):
				return bytesU(p.mean) + " of " + bytesU(p.u.Capacity) + " memory (" + pct(100*p.frac) + ")"
			case rk.Unit == "bytes":
				return bytesU(p.mean) + " of memory"
			case rk.Unit == "bytes/s" && !math.IsNaN(p.frac):
				return bytesU(p.mean) + "/s of a " + bytesU(p.u.Capacity) + "/s link (" + pct(100*p.frac) + ")"
			case rk.Unit == "bytes/s":
				return bytesU(p.mean) + "/s"
			case !math.IsNaN(p.frac):
				return fmt.Sprintf("%s of %s %s (%s)", num3(p.mean), num3(p.u.Capacity), rk.Word, pct(100*p.frac))
			}
			return num3(p.mean) + " " + rk.Word
		}
		rest := ""
		if len(peaks) > 1 {
			second := peaks[1]
			// The second busiest bounds the rest: "at or under" its figure.
			others, limits := fmt.Sprintf("the other %d", len(peaks)-1), "their limits"
			if len(peaks) == 2 {
				others, limits = "the other one", "its limit"
			}
			if withLimit {
				rest = fmt.Sprintf("%s stayed at or under %s of %s", others, pct(100*second.frac), limits)
			} else {
				rest = fmt.Sprintf("%s stayed at or under %s on average", others, amountPlain(second.mean, rk))
			}
		}
		lvl, verdict := doc.Info, "measured per service"
		if withLimit {
			switch {
			case top.frac >= 0.85:
				lvl, verdict = doc.Fail, "saturated"
			case top.frac >= 0.70:
				lvl, verdict = doc.Warn, "high"
			default:
				lvl, verdict = doc.OK, "well below the limits"
			}
		}
		lead := fmt.Sprintf("%s used %s on average in %s", b.red.String(top.u.Component), amount(top), top.phase)
		switch {
		case rk.Unit == "%" && rk.Aspect == "CPU":
			lead = fmt.Sprintf("%s was %s busy on average in %s", b.red.String(top.u.Component), pct(top.mean), top.phase)
		case rk.Unit == "%":
			lead = fmt.Sprintf("%s used %s of its memory on average in %s", b.red.String(top.u.Component), pct(top.mean), top.phase)
		}
		if len(peaks) == 1 && verdict == "measured per service" {
			verdict = "measured"
		}
		if withLimit || rk.Aspect == "CPU" {
			// A bare count without a limit is evidence, not a finding.
			b.finding(doc.FindResources, lvl, "busiest for "+strings.ToLower(rk.Aspect)+": "+lead, rest)
		}
		ev := clauses("busiest: "+lead, rest)
		aspect := resourceAspect(rk.Aspect)
		if c, ok := b.conclusions[aspect]; ok && c.Level != doc.NoData {
			c.Evidence = clauses(c.Evidence, "per service, "+ev)
			if lvl > c.Level {
				c.Level, c.Verdict = lvl, verdict
			}
			b.conclusions[aspect] = c
			continue
		}
		b.conclude(aspect, lvl, verdict, ev)
	}
}

func amountPlain(v float64, rk resources.Rule) string {
	switch rk.Unit {
	case "%":
		return pct(v)
	case "bytes":
		return bytesU(v)
	case "bytes/s":
		return bytesU(v) + "/s"
	}
	return num3(v) + " " + rk.Word
}

// judgeRestarts names the containers whose restart counter rose during the
// run (resources.Restarts): a restart under load is a failure of the
// system under test even when no request failed.
func (b *builder) judgeRestarts() {
	rts := b.resourceTargets()
	rs := resources.Restarts(rts, b.d.Start, b.d.End)
	if len(rs) == 0 {
		if n := resources.RestartCounters(rts); n > 0 {
			b.conclude(doc.AspectRestarts, doc.OK, "none", fmt.Sprintf("the restart counters of %s stayed the same during the run", plural(int64(n), "container")))
		}
		return
	}
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("%s restarted %s", b.red.String(r.Component), plural(int64(math.Round(r.N)), "time")))
	}
	// "Container …" first: the sentence's capital must not change a name.
	text := "container " + joinAnd(parts) + " during the run"
	b.finding(doc.FindResources, doc.Fail, text)
	b.conclude(doc.AspectRestarts, doc.Fail, fmt.Sprintf("%s restarted", plural(int64(len(rs)), "container")), text)
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
		parts = append(parts, fmt.Sprintf("%s on %s (about %s, at most %s/s)", f.What, b.red.String(f.Component), num3(f.N), num3(f.MaxPerS)))
	}
	text := "network " + joinAnd(parts) + " during the run"
	b.finding(doc.FindResources, doc.Warn, text)
	c, ok := b.conclusions[doc.AspectNetwork]
	if ok && c.Level != doc.NoData {
		c.Evidence = clauses(c.Evidence, text)
		c.Level, c.Verdict = max(c.Level, doc.Warn), "packets lost or refused"
		b.conclusions[doc.AspectNetwork] = c
		return
	}
	b.conclude(doc.AspectNetwork, doc.Warn, "packets lost or refused", text)
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
