package resources

import (
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

func TestRestarts(t *testing.T) {
	t0 := time.Unix(1000, 0)
	pts := func(vs ...float64) []core.Point {
		var out []core.Point
		for i, v := range vs {
			out = append(out, core.Point{T: t0.Add(time.Duration(i) * time.Second), V: v})
		}
		return out
	}
	ts := []Target{{Name: "k8s", Kind: "recipe", Series: []*core.Series{
		{Metric: "pod_restarts{container=container2,namespace=ns2,pod=pod2}", Points: pts(0, 0, 0, 0, 0, 0)},
		{Metric: "pod_restarts{container=container3,namespace=ns2,pod=pod2}", Points: pts(1, 1, 2, 3, 3, 3)},
		{Metric: "pod_restarts{container=c,namespace=ns2,pod=p}", Points: pts(5, 6, 1, 1)},     // recreated in the span: its new count
		{Metric: "pod_restarts{container=early,namespace=ns2,pod=p}", Points: pts(0, 4, 4, 4)}, // before the span
		{Metric: "pod_memory_bytes{container=container3,namespace=ns2,pod=pod2}", Points: pts(1, 9, 20)},
		// a direct scrape's rate of the counter, not a counter
		{Metric: "kube_pod_container_status_restarts_total_per_s{pod=x}", Unit: "/s", Points: pts(0, 1, 2, 3, 4, 5)},
	}}, {Name: "host", Kind: "host", Series: []*core.Series{{Metric: "restarts", Points: pts(0, 5)}}}}
	got := Restarts(ts, t0.Add(2*time.Second), t0.Add(5*time.Second))
	want := []Restart{{"k8s", "pod2/container3", 2}, {"k8s", "p/c", 1}}
	if len(got) != len(want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("got %+v, want %+v", got[i], want[i])
		}
	}
}
