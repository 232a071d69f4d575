package resources

import (
	"math"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// TestServices: the busiest service of a resource is found per span and
// graded against its limit by the one pair of thresholds (HighFrac,
// SaturatedFrac); without a limit for every service there is no grade.
func TestServices(t *testing.T) {
	t0 := time.Unix(1000, 0)
	pts := func(vs ...float64) []core.Point {
		var out []core.Point
		for i, v := range vs {
			out = append(out, core.Point{T: t0.Add(time.Duration(i) * time.Second), V: v})
		}
		return out
	}
	spans := []Span{{"low", t0, t0.Add(3 * time.Second)}, {"high", t0.Add(3 * time.Second), t0.Add(6 * time.Second)}}
	for _, c := range []struct {
		usedHigh float64
		want     ServiceGrade
	}{{1.9, ServiceSaturated}, {SaturatedFrac*2 - 0.01, ServiceHigh}, {HighFrac * 2, ServiceHigh}, {HighFrac*2 - 0.01, ServiceWellBelow}} {
		ts := []Target{{Name: "k8s", Kind: "recipe", Series: []*core.Series{
			{Metric: "pod_cpu_cores{pod=a}", Unit: "cores", Points: pts(0.1, 0.1, 0.1, c.usedHigh, c.usedHigh, c.usedHigh)},
			{Metric: "pod_cpu_limit_cores{pod=a}", Unit: "cores", Points: pts(2, 2, 2, 2, 2, 2)},
			{Metric: "pod_cpu_cores{pod=b}", Unit: "cores", Points: pts(0.5, 0.5, 0.5, 0.2, 0.2, 0.2)},
			{Metric: "pod_cpu_limit_cores{pod=b}", Unit: "cores", Points: pts(1, 1, 1, 1, 1, 1)},
		}}}
		as := Services(ts, spans)
		if len(as) != 1 || as[0].Rule.Aspect != CPU {
			t.Fatalf("used %v: got %+v, want one CPU aspect", c.usedHigh, as)
		}
		a := as[0]
		if !a.WithLimit || a.Grade != c.want {
			t.Errorf("used %v of 2 cores: grade %v (with limit %v), want %v", c.usedHigh, a.Grade, a.WithLimit, c.want)
		}
		// pod b's busiest span is "low" at 50 %; pod a's is "high".
		var b ServicePeak
		for _, p := range a.Peaks {
			if p.Use.Component == "b" {
				b = p
			}
		}
		if b.Span != "low" || b.Mean != 0.5 || b.Frac != 0.5 {
			t.Errorf("pod b: %+v, want low, 0.5, 0.5", b)
		}
		if top := a.Peaks[0]; top.Frac < a.Peaks[len(a.Peaks)-1].Frac {
			t.Errorf("peaks not busiest first: %+v", a.Peaks)
		}
	}
	// No limit series: measured, not graded.
	ts := []Target{{Name: "k8s", Kind: "recipe", Series: []*core.Series{{Metric: "pod_cpu_cores{pod=a}", Unit: "cores", Points: pts(3, 3, 3, 3, 3, 3)}}}}
	as := Services(ts, spans)
	if len(as) != 1 || as[0].WithLimit || as[0].Grade != ServiceMeasured || !math.IsNaN(as[0].Peaks[0].Frac) {
		t.Errorf("without a limit: %+v, want measured", as)
	}
}
