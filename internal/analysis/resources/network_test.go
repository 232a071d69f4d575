package resources

import (
	"math"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

func TestNetFaults(t *testing.T) {
	t0 := time.Unix(1000, 0)
	pts := func(vs ...float64) []core.Point {
		var out []core.Point
		for i, v := range vs {
			out = append(out, core.Point{T: t0.Add(time.Duration(i) * time.Second), V: v})
		}
		return out
	}
	ts := []Target{{Name: "hosts", Kind: "recipe", Series: []*core.Series{
		{Metric: "net_errors_per_s{instance=a:9100}", Unit: "/s", Points: pts(9, 0, 2, 2, 0, 0)}, // 9 before the span
		{Metric: "net_drops_per_s{instance=a:9100}", Unit: "/s", Points: pts(0, 0, 0, 0, 0, 0)},
		{Metric: "net_rx_bytes_per_s{instance=a:9100}", Unit: "bytes/s", Points: pts(5, 5, 5, 5)},
		{Metric: "pod_net_drops_per_s{namespace=n,pod=p}", Unit: "/s", Points: pts(0, 0, 0, 0, 0, 3)},
	}}}
	got := NetFaults(ts, t0.Add(time.Second), t0.Add(5*time.Second))
	if len(got) != 2 {
		t.Fatalf("got %+v, want a:9100 errors and p drops", got)
	}
	if g := got[0]; g.Component != "a:9100" || g.What != NetErrors || math.Abs(g.N-4) > 1e-9 || g.MaxPerS != 2 {
		t.Errorf("errors %+v, want 4 (2/s for 2 s), peak 2/s", g)
	}
	if g := got[1]; g.Component != "p" || g.What != NetDrops || g.N != 0 || g.MaxPerS != 3 {
		t.Errorf("drops %+v, want a reading of 3/s at the span's end", g)
	}
}
