package resources

import (
	"math"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
)

// flat is a series at v over seconds [from, to).
func flat(target, kind, metric, unit string, from, to int, v float64) *core.Series {
	s := &core.Series{Target: target, Kind: kind, Metric: metric, Unit: unit}
	for i := from; i < to; i++ {
		s.Points = append(s.Points, core.Point{T: at(i), V: v})
	}
	return s
}

// Every kind of monitor contributes its quantities with their capacities:
// host CPU and memory, a process's CPU against the host's cores, a
// cgroup's memory against its limit, a JVM's old generation, PostgreSQL
// and MySQL connections, and a pod's CPU against its limit from PromQL.
func TestUsesEveryKind(t *testing.T) {
	t.Parallel()
	ts := []Target{
		{Name: "gen", Kind: "host", Series: []*core.Series{
			flat("gen", "host", "cpu_idle_pct", "%", 0, 10, 40), flat("gen", "host", "cpus", "", 0, 10, 4),
			flat("gen", "host", "mem_used_bytes", "bytes", 0, 10, 3e9), flat("gen", "host", "mem_total_bytes", "bytes", 0, 10, 4e9)}},
		{Name: "back", Kind: "process", Series: []*core.Series{flat("back", "process", "cpu_pct", "%", 0, 10, 300), flat("back", "process", "rss_bytes", "bytes", 0, 10, 1e8)}},
		{Name: "svc", Kind: "cgroup", Series: []*core.Series{flat("svc", "cgroup", "memory_working_set_bytes", "bytes", 0, 10, 900), flat("svc", "cgroup", "memory_limit_bytes", "bytes", 0, 10, 1000)}},
		{Name: "app", Kind: "jvm", Series: []*core.Series{flat("app", "jvm", "OU", "KB", 0, 10, 50), flat("app", "jvm", "OC", "KB", 0, 10, 100)}},
		{Name: "db", Kind: "postgres", Series: []*core.Series{flat("db", "postgres", "connections_total", "", 0, 10, 95), flat("db", "postgres", "connections_active", "", 0, 10, 5), flat("db", "postgres", "connections_max", "", 0, 10, 100)}},
		{Name: "my", Kind: "mysql", Series: []*core.Series{flat("my", "mysql", "connections", "", 0, 10, 10), flat("my", "mysql", "connections_max", "", 0, 10, 151)}},
		{Name: "balancer-pool", Kind: "prometheus", Series: []*core.Series{flat("balancer-pool", "prometheus", "lb_connections{backend=127.0.0.1:4000}", "", 0, 10, 12),
			flat("balancer-pool", "prometheus", "lb_max_connections{backend=127.0.0.1:4000}", "", 0, 10, 12), flat("balancer-pool", "prometheus", "lb_queued{backend=127.0.0.1:4000}", "", 0, 10, 30)}},
		{Name: "k8s", Kind: "promql", Series: []*core.Series{flat("k8s", "promql", "pod_cpu_cores{pod=api-1}", "cores", 0, 10, 0.5), flat("k8s", "promql", "pod_cpu_limit_cores{pod=api-1}", "cores", 0, 10, 2),
			flat("k8s", "promql", "pod_cpu_cores{pod=nolimit}", "cores", 0, 10, 7)}},
	}
	got := map[string]Reading{}
	p := core.Phase{Name: "s", Start: at(0), End: at(10)}
	for _, u := range Uses(ts, 0) {
		r, ok := u.Over(p)
		if !ok {
			t.Errorf("%s %s: no reading", u.Component, u.Resource)
			continue
		}
		got[r.Component+" "+r.Resource] = r
	}
	want := map[string]float64{
		"gen CPU": 0.6, "gen Memory": 0.75, "back CPU": 0.75, "svc Memory": 0.9, "app Old generation": 0.5,
		"db Connections": 0.95, "my Connections": 10.0 / 151, "api-1 CPU": 0.25,
		"balancer-pool backend=127.0.0.1:4000 Connections": 1, // the demo balancer's worker pool (internal/demo.MetricsPath)
	}
	for k, w := range want {
		if r, ok := got[k]; !ok || math.Abs(r.Utilisation-w) > 1e-9 {
			t.Errorf("%s: %+v, want utilisation %v", k, r, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("readings %v, want exactly %v (a pod without a limit and a process's memory have no capacity)", got, want)
	}
	// Without a host target the generator host's cores from run.json count.
	if us := Uses(ts[1:2], 8); len(us) != 1 || us[0].Capacity != 800 {
		t.Errorf("process CPU with 8 cores: %+v", us)
	}
	if us := Uses(ts[1:2], 0); len(us) != 0 {
		t.Errorf("process CPU with no known core count has no capacity: %+v", us)
	}
}

// The first component to reach SaturatedFrac as the load rises is named,
// even when another is busier later; without one the busiest is named as
// not saturated; steps beyond the one after the knee are not looked at.
func TestFirstSaturated(t *testing.T) {
	t.Parallel()
	rd := func(c string, u float64) Reading { return Reading{Component: c, Resource: "CPU", Utilisation: u} }
	steps := []PhaseReadings{
		{Phase: "1", Load: 1, Readings: []Reading{rd("db", 0.3), rd("api", 0.2)}},
		{Phase: "2", Load: 2, Readings: []Reading{rd("db", 0.86), rd("api", 0.5)}},
		{Phase: "3", Load: 4, Readings: []Reading{rd("api", 0.99), rd("db", 0.9)}},
		{Phase: "4", Load: 8, Readings: []Reading{rd("cache", 1)}},
	}
	b := FirstSaturated(steps, 1)
	if b == nil || !b.Saturated || b.Component != "db" || b.Phase != "2" || b.Components != 2 {
		t.Errorf("knee at step 2: %+v, want db saturated in step 2 of 2 components", b)
	}
	b = FirstSaturated(steps[:1], 0)
	if b == nil || b.Saturated || b.Component != "db" || b.Utilisation != 0.3 {
		t.Errorf("nothing saturated: %+v, want the busiest, db at 30 %%, not saturated", b)
	}
	if b := FirstSaturated(steps, 2); b.Component != "db" || b.Phase != "2" || b.Components != 3 {
		t.Errorf("knee at step 3: %+v", b)
	}
	// db saturated first (step 2); by the step after the knee api (99 %) is
	// full too, and is named beside it.
	if b := FirstSaturated(steps, 1); b.AlsoPhase != "3" || len(b.Also) != 1 || b.Also[0].Component != "api" {
		t.Errorf("also saturated: %+v", b)
	}
	if b := FirstSaturated([]PhaseReadings{{Phase: "1"}}, 0); b != nil {
		t.Errorf("no readings: %+v", b)
	}
	if g := GeneratorCPU(92); g.Utilisation != 0.92 || g.Component != Generator {
		t.Errorf("generator %+v", g)
	}
}
