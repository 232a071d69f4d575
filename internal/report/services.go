package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// Findings and conclusions per service, from labelled series (PromQL,
// CloudWatch, scrapes) and database monitors: which service used the most
// CPU, memory or connections in which phase, against its limit when one was
// recorded, and how far below the others stayed — what references 001 and
// 004 worked out by hand.

// usage is one measured quantity of one service.
type usage struct {
	who    string       // service name for sentences
	s      *core.Series // the usage
	limit  float64      // NaN when unknown
	labels map[string]string
}

// resourceKind is a judged quantity.
type resourceKind struct {
	aspect string // conclusion aspect
	unit   string // of the usage series
	// use and limit pick families by name.
	use, limit func(name string) bool
	word       string // "cores", "of memory", "connections"
}

var serviceResources = []resourceKind{
	{aspect: "CPU", unit: "cores", word: "cores",
		use: func(n string) bool {
			return !strings.Contains(n, "limit") && !strings.Contains(n, "request") && !strings.Contains(n, "capacity")
		},
		limit: func(n string) bool {
			return strings.Contains(n, "cpu") && (strings.Contains(n, "limit") || strings.Contains(n, "capacity"))
		}},
	{aspect: "CPU", unit: "%", word: "% busy",
		use: func(n string) bool {
			return strings.Contains(n, "cpu") && (strings.Contains(n, "busy") || strings.Contains(n, "utili"))
		}},
	{aspect: "Memory", unit: "bytes", word: "of memory",
		use: func(n string) bool {
			return strings.Contains(n, "mem") && !strings.Contains(n, "limit") && !strings.Contains(n, "total") && !strings.Contains(n, "max")
		},
		limit: func(n string) bool {
			return strings.Contains(n, "mem") && (strings.Contains(n, "limit") || strings.Contains(n, "total") || strings.Contains(n, "max"))
		}},
	{aspect: "Memory", unit: "%", word: "% of memory",
		use: func(n string) bool { return strings.Contains(n, "mem") && strings.Contains(n, "utili") }},
	{aspect: "Connections", unit: "", word: "connections",
		use:   func(n string) bool { return strings.Contains(n, "connections") && !strings.Contains(n, "max") },
		limit: func(n string) bool { return strings.Contains(n, "max_connections") || n == "connections_max" }},
}

// labelMap parses a metric's labels.
func labelMap(metric string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(labelsOf(metric), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// serviceName names a series for a sentence: the target, then the most
// telling label values (pod, container, service, instance, database).
func serviceName(target string, s *core.Series) string {
	l := labelMap(s.Metric)
	var parts []string
	for _, k := range []string{"service", "ServiceName", "DBInstanceIdentifier", "ClusterName", "pod", "container", "instance", "datname"} {
		if v := l[k]; v != "" && !slices.Contains(parts, v) {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		if lb := labelsOf(s.Metric); lb != "" {
			return target + " " + lb
		}
		return target
	}
	return strings.Join(parts, "/")
}

// lastValue is the last finite value of a series (NaN without any).
func lastValue(s *core.Series) float64 {
	for i := len(s.Points) - 1; i >= 0; i-- {
		if v := s.Points[i].V; !math.IsNaN(v) && !math.IsInf(v, 0) {
			return v
		}
	}
	return math.NaN()
}

// usages collects the usage series of one resource over the targets, with
// their limits matched by labels (or by instance alone).
func usages(ts []*target, rk resourceKind) []usage {
	var out []usage
	for _, t := range ts {
		if !labelledKind(t.kind) && t.kind != monitor.KindPostgres {
			continue
		}
		fams := families(t)
		limits := map[string]float64{}
		byInstance := map[string]float64{}
		for _, f := range fams {
			if rk.limit == nil || !rk.limit(f.name) {
				continue
			}
			for _, s := range f.series {
				v := lastValue(s)
				limits[labelsOf(s.Metric)] = v
				if inst := labelMap(s.Metric)["instance"]; inst != "" {
					byInstance[inst] = v
				}
			}
		}
		for _, f := range fams {
			if f.unit != rk.unit || !rk.use(f.name) || (rk.limit != nil && rk.limit(f.name)) {
				continue
			}
			if t.kind == monitor.KindPostgres && f.name != "connections_total" {
				continue // active, idle… are parts of the total
			}
			for _, s := range f.series {
				u := usage{who: serviceName(t.name, s), s: s, limit: math.NaN(), labels: labelMap(s.Metric)}
				if v, ok := limits[labelsOf(s.Metric)]; ok {
					u.limit = v
				} else if v, ok := byInstance[u.labels["instance"]]; ok {
					u.limit = v
				}
				if rk.unit == "%" {
					u.limit = 100
				}
				out = append(out, u)
			}
		}
	}
	return out
}

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
	for _, rk := range serviceResources {
		if done[rk.aspect] {
			continue
		}
		us := usages(ts, rk)
		if len(us) == 0 {
			continue
		}
		done[rk.aspect] = true
		// Each service's busiest phase; the busiest service overall.
		type peak struct {
			u     usage
			phase string
			mean  float64
			frac  float64 // of the limit; NaN without one
		}
		var peaks []peak
		for _, u := range us {
			best := peak{u: u, mean: math.NaN()}
			for _, sp := range spans {
				st, ok := statsOver(u.s, sp.from, sp.to)
				if ok && (math.IsNaN(best.mean) || st.Mean > best.mean) {
					best.mean, best.phase = st.Mean, sp.name
				}
			}
			if math.IsNaN(best.mean) {
				continue
			}
			best.frac = math.NaN()
			if u.limit > 0 {
				best.frac = best.mean / u.limit
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
			case rk.unit == "bytes" && !math.IsNaN(p.frac):
				return bytesU(p.mean) + " of " + bytesU(p.u.limit) + " memory (" + pct(100*p.frac) + ")"
			case rk.unit == "bytes":
				return bytesU(p.mean) + " of memory"
			case !math.IsNaN(p.frac):
				return fmt.Sprintf("%s of %s %s (%s)", num3(p.mean), num3(p.u.limit), rk.word, pct(100*p.frac))
			}
			return num3(p.mean) + " " + rk.word
		}
		rest := ""
		if len(peaks) > 1 {
			second := peaks[1]
			if withLimit {
				rest = fmt.Sprintf("the other %d stayed under %s of their limits", len(peaks)-1, pct(100*second.frac))
			} else {
				rest = fmt.Sprintf("the other %d stayed at or under %s on average", len(peaks)-1, amountPlain(second.mean, rk))
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
		lead := fmt.Sprintf("%s used %s on average in %s", b.red.String(top.u.who), amount(top), top.phase)
		switch {
		case rk.unit == "%" && rk.aspect == "CPU":
			lead = fmt.Sprintf("%s was %s busy on average in %s", b.red.String(top.u.who), pct(top.mean), top.phase)
		case rk.unit == "%":
			lead = fmt.Sprintf("%s used %s of its memory on average in %s", b.red.String(top.u.who), pct(top.mean), top.phase)
		}
		if len(peaks) == 1 && verdict == "measured per service" {
			verdict = "measured"
		}
		if withLimit || rk.aspect == "CPU" {
			// A bare count without a limit is evidence, not a finding.
			b.finding(doc.FindResources, lvl, "busiest for "+strings.ToLower(rk.aspect)+": "+lead, rest)
		}
		ev := clauses("busiest: "+lead, rest)
		if c, ok := b.conclusions[rk.aspect]; ok && c.Level != doc.NoData {
			c.Evidence = clauses(c.Evidence, "per service, "+ev)
			if lvl > c.Level {
				c.Level, c.Verdict = lvl, verdict
			}
			b.conclusions[rk.aspect] = c
			continue
		}
		b.conclude(rk.aspect, lvl, verdict, ev)
	}
}

func amountPlain(v float64, rk resourceKind) string {
	switch rk.unit {
	case "%":
		return pct(v)
	case "bytes":
		return bytesU(v)
	}
	return num3(v) + " " + rk.word
}
