package resources

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/core"
)

// A Use is one monitored quantity of one component with the capacity it is
// judged against: a host's busy CPU against 100 %, a process's CPU against
// the host's cores, a container's memory against its limit, a database's
// connections against max_connections, a pod's CPU against its limit. The
// rules that pair a usage with its capacity live here, once: the report's
// per-service conclusions and the capacity section's bottleneck both read
// them.
type Use struct {
	Target, Kind string
	// Component names the service for a sentence: the target, or for a
	// labelled series the telling label values (pod, instance, database).
	Component string
	// Resource is what is used: "CPU", "Memory", "Connections",
	// "Old generation".
	Resource string
	// Unit is the series' unit: "%", "cores", "bytes", "" (a count).
	Unit   string
	Series *core.Series
	// Capacity is the limit in the series' unit; NaN when unknown.
	Capacity float64
	Labels   map[string]string
}

// The resources a component uses, as Use.Resource, Reading.Resource and
// Rule.Aspect name them.
const (
	CPU         = "CPU"
	Memory      = "Memory"
	Network     = "Network"
	Connections = "Connections"
	// OldGeneration is a JVM's old generation against its committed size.
	OldGeneration = "Old generation"
)

// Rule pairs usage series with their limit series by metric name, for
// labelled monitors (PromQL, recipes, scrapes, CloudWatch, MySQL) and
// PostgreSQL. Rules of one Aspect are alternatives, tried in order.
type Rule struct {
	Aspect string // "CPU", "Memory", "Connections"
	Unit   string // of the usage series
	// Use and Limit pick metric families by name (Limit nil: no limit
	// series; a percentage's limit is 100).
	Use, Limit func(name string) bool
	// Measure is how an amount of the usage is counted; the report words
	// it (report.MeasureText).
	Measure Measure
}

// Measure is the counting unit of a rule's usage, as a kind: the words
// ("cores", "of memory", "connections") are the report's.
type Measure int

// Measures of a rule's usage.
const (
	MeasureCores       Measure = iota // CPU in cores
	MeasureBusyPct                    // CPU busy, in per cent
	MeasureMemory                     // bytes of memory
	MeasureMemoryPct                  // memory used, in per cent
	MeasureLinkSpeed                  // bytes/s against the link's speed
	MeasureConnections                // a count of connections
)

// String names the measure in logs and tests.
func (m Measure) String() string {
	switch m {
	case MeasureCores:
		return "cores"
	case MeasureBusyPct:
		return "busy_pct"
	case MeasureMemory:
		return "memory"
	case MeasureMemoryPct:
		return "memory_pct"
	case MeasureLinkSpeed:
		return "link_speed"
	case MeasureConnections:
		return "connections"
	}
	return "measure(" + strconv.Itoa(int(m)) + ")"
}

// ServiceRules are the usage/limit pairings of labelled series.
var ServiceRules = []Rule{
	{Aspect: CPU, Unit: "cores", Measure: MeasureCores,
		Use: func(n string) bool {
			return !strings.Contains(n, "limit") && !strings.Contains(n, "request") && !strings.Contains(n, "capacity")
		},
		Limit: func(n string) bool {
			return strings.Contains(n, "cpu") && (strings.Contains(n, "limit") || strings.Contains(n, "capacity"))
		}},
	{Aspect: CPU, Unit: "%", Measure: MeasureBusyPct,
		Use: func(n string) bool {
			return strings.Contains(n, "cpu") && (strings.Contains(n, "busy") || strings.Contains(n, "utili"))
		}},
	{Aspect: Memory, Unit: "bytes", Measure: MeasureMemory,
		Use: func(n string) bool {
			return strings.Contains(n, "mem") && !strings.Contains(n, "limit") && !strings.Contains(n, "total") && !strings.Contains(n, "max")
		},
		Limit: func(n string) bool {
			return strings.Contains(n, "mem") && (strings.Contains(n, "limit") || strings.Contains(n, "total") || strings.Contains(n, "max"))
		}},
	{Aspect: Memory, Unit: "%", Measure: MeasureMemoryPct,
		Use: func(n string) bool { return strings.Contains(n, "mem") && strings.Contains(n, "utili") }},
	{Aspect: Network, Unit: "bytes/s", Measure: MeasureLinkSpeed,
		Use: func(n string) bool {
			return strings.Contains(n, "net_") && (strings.Contains(n, "rx") || strings.Contains(n, "tx")) && !strings.Contains(n, "speed")
		},
		Limit: func(n string) bool { return strings.Contains(n, "net_") && strings.Contains(n, "speed") }},
	{Aspect: Connections, Unit: "", Measure: MeasureConnections,
		Use:   func(n string) bool { return strings.Contains(n, "connections") && !strings.Contains(n, "max") },
		Limit: func(n string) bool { return strings.Contains(n, "max_connections") || n == "connections_max" }},
}

// Target is one monitored target's series in file order.
type Target struct {
	Name, Kind string
	Series     []*core.Series
	// Generator marks the load generator's own host or process: judged
	// apart from the system under test.
	Generator bool
}

// Monitor kinds the rules know (the names of internal/monitor's kinds,
// repeated here so that analysis does not depend on the collectors).
const (
	kindHost       = "host"
	kindProcess    = "process"
	kindCgroup     = "cgroup"
	kindJVM        = "jvm"
	kindPostgres   = "postgres"
	kindMySQL      = "mysql"
	kindPromQL     = "promql"
	kindRecipe     = "recipe"
	kindPrometheus = "prometheus"
	kindCloudWatch = "cloudwatch"
)

// Labelled reports whether a kind records labelled series judged by the
// ServiceRules.
func Labelled(kind string) bool {
	switch kind {
	case kindPromQL, kindRecipe, kindPrometheus, kindCloudWatch, kindMySQL:
		return true
	}
	return false
}

// metaMetrics are a scrape's own bookkeeping, never a usage.
var metaMetrics = map[string]bool{"scrape_duration_s": true, "scrape_series": true, "scrape_series_dropped": true}

// BaseName is a metric name without its {labels}.
func BaseName(metric string) string {
	if i := strings.IndexByte(metric, '{'); i >= 0 {
		return metric[:i]
	}
	return metric
}

// LabelsOf is a metric's label part ("pod=a,container=b"), "" without.
func LabelsOf(metric string) string {
	i := strings.IndexByte(metric, '{')
	if i < 0 {
		return ""
	}
	return strings.TrimSuffix(metric[i+1:], "}")
}

// LabelMap parses a metric's labels.
func LabelMap(metric string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(LabelsOf(metric), ",") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		}
	}
	return out
}

// ServiceName names a series for a sentence: the target, then the most
// telling label values (pod, container, service, instance, database).
func ServiceName(target string, s *core.Series) string {
	l := LabelMap(s.Metric)
	var parts []string
	for _, k := range []string{"service", "ServiceName", "DBInstanceIdentifier", "ClusterName", "pod", "container", "instance", "datname"} {
		if v := l[k]; v != "" && !slices.Contains(parts, v) {
			parts = append(parts, v)
		}
	}
	if len(parts) == 0 {
		if lb := LabelsOf(s.Metric); lb != "" {
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

type family struct {
	name, unit string
	series     []*core.Series
}

// families groups a target's series by base name, in file order.
func families(t Target) []*family {
	var out []*family
	idx := map[string]*family{}
	for _, s := range t.Series {
		base := BaseName(s.Metric)
		if metaMetrics[base] || len(s.Points) == 0 {
			continue
		}
		f := idx[base]
		if f == nil {
			f = &family{name: base, unit: s.Unit}
			idx[base] = f
			out = append(out, f)
		}
		f.series = append(f.series, s)
	}
	return out
}

// ServiceUses collects the usage series one rule picks from the labelled
// and PostgreSQL targets, with their limits matched by labels (or by
// instance alone).
func ServiceUses(ts []Target, rk Rule) []Use {
	var out []Use
	for _, t := range ts {
		if !Labelled(t.Kind) && t.Kind != kindPostgres {
			continue
		}
		fams := families(t)
		limits := map[string]float64{}
		byInstance := map[string]float64{}
		for _, f := range fams {
			if rk.Limit == nil || !rk.Limit(f.name) {
				continue
			}
			for _, s := range f.series {
				v := lastValue(s)
				limits[LabelsOf(s.Metric)] = v
				if inst := LabelMap(s.Metric)["instance"]; inst != "" {
					byInstance[inst] = v
				}
			}
		}
		for _, f := range fams {
			if f.unit != rk.Unit || !rk.Use(f.name) || (rk.Limit != nil && rk.Limit(f.name)) {
				continue
			}
			if t.Kind == kindPostgres && f.name != "connections_total" {
				continue // active, idle… are parts of the total
			}
			for _, s := range f.series {
				u := Use{Target: t.Name, Kind: t.Kind, Component: ServiceName(t.Name, s), Resource: rk.Aspect, Unit: rk.Unit,
					Series: s, Capacity: math.NaN(), Labels: LabelMap(s.Metric)}
				if rk.Aspect == Network { // each direction has the link's full speed
					u.Component += map[bool]string{true: " (in)", false: " (out)"}[strings.Contains(f.name, "rx")]
				}
				if v, ok := limits[LabelsOf(s.Metric)]; ok {
					u.Capacity = v
				} else if v, ok := byInstance[u.Labels["instance"]]; ok {
					u.Capacity = v
				}
				if rk.Unit == "%" {
					u.Capacity = 100
				}
				if !(u.Capacity > 0) {
					u.Capacity = math.NaN()
				}
				out = append(out, u)
			}
		}
	}
	return out
}

// Uses lists every quantity of the targets that has a known capacity:
//   - host: busy CPU (cpu_busy_pct, or 100 − idle) of 100 %, and used
//     memory of the total;
//   - process and cgroup: CPU (% of one core) of 100 × cpus, the cores of
//     the machine they run on (cpus: a host target's, else the generator
//     host's from run.json, as these monitors run beside the generator; 0
//     when unknown), and a cgroup's memory (working set) of its limit;
//   - jvm: the old generation's use of its committed size (OU of OC), the
//     space a full collection has to free;
//   - postgres and mysql: connections of max_connections;
//   - labelled series (PromQL, recipes, scrapes, CloudWatch): every
//     ServiceRules pairing that found a limit.
//
// Quantities without a capacity (a process's memory, a request rate) are
// left out: there is nothing to be saturated against.
func Uses(ts []Target, cpus int) []Use {
	var out []Use
	for _, t := range ts {
		if n := hostCPUs(t); n > 0 && t.Kind == kindHost {
			cpus = n
		}
	}
	for _, t := range ts {
		get := func(name string) *core.Series {
			for _, s := range t.Series {
				if s.Metric == name && len(s.Points) > 0 {
					return s
				}
			}
			return nil
		}
		add := func(res, unit string, s *core.Series, capacity float64, capSeries *core.Series) {
			if s == nil {
				return
			}
			if capSeries != nil {
				capacity = lastValue(capSeries)
			}
			if !(capacity > 0) {
				return
			}
			out = append(out, Use{Target: t.Name, Kind: t.Kind, Component: t.Name, Resource: res, Unit: unit, Series: s, Capacity: capacity})
		}
		switch t.Kind {
		case kindHost:
			add(CPU, "%", busy(t.Name, t.Kind, get("cpu_busy_pct"), get("cpu_idle_pct")), 100, nil)
			if tot := get("mem_total_bytes"); tot != nil {
				add(Memory, "bytes", get("mem_used_bytes"), 0, tot)
			}
		case kindProcess, kindCgroup:
			if cpus > 0 {
				add(CPU, "%", get("cpu_pct"), 100*float64(cpus), nil)
			}
			if lim := get("memory_limit_bytes"); lim != nil {
				mem := get("memory_working_set_bytes")
				if mem == nil {
					mem = get("memory_bytes")
				}
				add(Memory, "bytes", mem, 0, lim)
			}
		case kindJVM:
			if oc := get("OC"); oc != nil {
				add(OldGeneration, "KB", get("OU"), 0, oc)
			}
		}
	}
	// Databases' connections and labelled series: the service rules.
	for _, rk := range ServiceRules {
		for _, u := range ServiceUses(ts, rk) {
			if !math.IsNaN(u.Capacity) {
				out = append(out, u)
			}
		}
	}
	return out
}

// hostCPUs is a host target's CPU count (its last reading), 0 without.
func hostCPUs(t Target) int {
	for _, s := range t.Series {
		if s.Metric == "cpus" {
			if v := lastValue(s); v > 0 {
				return int(v)
			}
		}
	}
	return 0
}

// busy is a host's busy CPU: the recorded series, or 100 − idle.
func busy(target, kind string, b, idle *core.Series) *core.Series {
	if b != nil || idle == nil {
		return b
	}
	out := &core.Series{Target: target, Kind: kind, Metric: "cpu_busy_pct", Unit: "%", Points: make([]core.Point, len(idle.Points))}
	for i, p := range idle.Points {
		out.Points[i] = core.Point{T: p.T, V: 100 - p.V}
	}
	return out
}
