package resources

import (
	"math"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// TestJudgeMachines: the CPU finding is about the system under test even
// when the generator's host is busier; the generator's network over a
// loopback test is not the test's traffic; GC counts come from the
// counters' rise over the run.
func TestJudgeMachines(t *testing.T) {
	t0 := time.Unix(1000, 0)
	pts := func(vs ...float64) []core.Point {
		var out []core.Point
		for i, v := range vs {
			out = append(out, core.Point{T: t0.Add(time.Duration(i) * time.Minute), V: v})
		}
		return out
	}
	ts := []Target{
		{Name: "gen", Kind: "host", Generator: true, Series: []*core.Series{
			{Metric: "cpu_idle_pct", Points: pts(10, 2, 1, 5)},
			{Metric: "net_rx_bytes_per_s", Points: pts(5e6, 5e6, 5e6, 5e6)}}},
		{Name: "app", Kind: "process", Series: []*core.Series{{Metric: "cpu_pct", Points: pts(10, 20, 30, 40)}}},
		{Name: "db", Kind: "host", Series: []*core.Series{
			{Metric: "cpu_busy_pct", Points: pts(5, 10, 12, 14)},
			{Metric: "net_rx_bytes_per_s", Points: pts(0, 0, 0, 0)}}},
		{Name: "jvm", Kind: "jvm", Series: []*core.Series{
			{Metric: "YGC", Points: pts(3, 10, 20, 33)}, {Metric: "FGC", Points: pts(0, 2, 4, 6)}}},
	}
	spans := []Span{{"a", t0, t0.Add(2 * time.Minute)}, {"b", t0.Add(2 * time.Minute), t0.Add(4 * time.Minute)}}
	m := JudgeMachines(ts, MachineOptions{Spans: spans, From: t0, To: t0.Add(3 * time.Minute), Loopback: true})
	// A host outranks a process; db's busiest phase is b at 13 %.
	if c := m.CPU; c == nil || c.Target != "db" || c.Span != "b" || c.Mean != 13 || c.Max != 14 || c.Grade() != CPUOK {
		t.Errorf("CPU: %+v, want db in b at 13 %% (peak 14)", m.CPU)
	}
	if g := m.GeneratorCPU; g == nil || g.Target != "gen" || g.Span != "b" || g.Mean != 97 || g.Grade() != CPUSaturated {
		t.Errorf("generator CPU: %+v, want gen in b at 97 %%, saturated", m.GeneratorCPU)
	}
	if len(m.Net) != 0 || len(m.NetIdle) != 1 || m.NetIdle[0] != "db" || len(m.NetLoopback) != 1 || m.NetLoopback[0] != "gen" {
		t.Errorf("network: %+v idle %v loopback %v", m.Net, m.NetIdle, m.NetLoopback)
	}
	if len(m.GC) != 1 || m.GC[0].Young != 30 || m.GC[0].Full != 6 || m.GC[0].FullPerMin != 2 || !m.GC[0].Busy || !math.IsNaN(m.GC[0].TimePct) {
		t.Errorf("GC: %+v, want 30 young, 6 full (2/min, busy), no time share", m.GC)
	}
	// Without loopback, the generator's network is its traffic.
	m = JudgeMachines(ts, MachineOptions{Spans: spans, From: t0, To: t0.Add(3 * time.Minute)})
	if len(m.Net) != 1 || m.Net[0].Target != "gen" || m.Net[0].In != 5e6 {
		t.Errorf("network without loopback: %+v", m.Net)
	}
}
