package promql

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// recordedExposition serves a recorded exposition with its sample
// timestamps replaced by the time of serving; counters (families ending in _total) advance from their
// recorded value at rate(i) per second for the i-th counter series; restart
// counters advance in whole steps, as real ones do.
func recordedExposition(t *testing.T, path string, rate func(i int) float64) (addr string, rates map[string]float64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type line struct {
		text    string
		series  string
		value   float64
		counter bool
		whole   bool
		rate    float64
	}
	var lines []line
	rates = map[string]float64{}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "#") || strings.TrimSpace(l) == "" {
			lines = append(lines, line{text: l})
			continue
		}
		i := strings.LastIndex(l, "} ")
		if i < 0 {
			i = strings.Index(l, " ") - 1
		}
		series, rest := l[:i+1], strings.Fields(l[i+1:])
		v, err := strconv.ParseFloat(rest[0], 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		ln := line{series: series, value: v, counter: strings.Contains(series, "_total"), whole: strings.Contains(series, "restarts")}
		if ln.counter {
			ln.rate = rate(n)
			rates[series] = ln.rate
			n++
		}
		lines = append(lines, ln)
	}
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Each sample carries the time its value was computed, so that a
		// scrape delayed on a loaded machine does not skew the rate.
		now := time.Now()
		el, ms := now.Sub(start).Seconds(), now.UnixMilli()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		for _, l := range lines {
			if l.series == "" {
				fmt.Fprintln(w, l.text)
				continue
			}
			inc := l.rate * el
			if l.whole {
				inc = math.Floor(inc)
			}
			fmt.Fprintf(w, "%s %s %d\n", l.series, strconv.FormatFloat(l.value+inc, 'g', -1, 64), ms)
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), rates
}

// TestKubernetesRecipe: a recorded kubelet exposition, served to the real
// Prometheus, gives one CPU and one memory series per pod and container of
// the filtered namespace; kube-state-metrics is not there, so its queries
// are named empty results.
func TestKubernetesRecipe(t *testing.T) {
	addr, rates := recordedExposition(t, "testdata/kubelet-resource-metrics.prom", func(i int) float64 { return 0.05 * float64(i+1) })
	prom := monitortest.Prometheus(t, map[string][]string{"kubelet": {addr}})
	time.Sleep(3 * time.Second)
	dir := t.TempDir()
	runSession(t, dir, []monitor.TargetConfig{{Kind: monitor.KindRecipe, Name: "k8s", Options: map[string]any{
		"url": prom, "recipe": "kubernetes", "filter": `namespace="namespace_a"`, "window": "3s", "before": "3s"}}}, 2*time.Second, nil)
	series, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]float64{}
	pods := map[string]bool{}
	for _, s := range series {
		if n := len(s.Points); n > 0 {
			last[s.Metric] = s.Points[n-1].V
		}
		if strings.Contains(s.Metric, "namespace_b") {
			t.Errorf("the namespace filter let %s through", s.Metric)
		}
		if strings.HasPrefix(s.Metric, "pod_cpu_cores{") {
			pods[s.Metric] = true
		}
	}
	if len(pods) != 2 {
		t.Errorf("want the 2 containers of namespace_a, got %v", pods)
	}
	server := "{container=container_b,namespace=namespace_a,pod=pod_a}"
	want := rates[`container_cpu_usage_seconds_total{container="container_b",namespace="namespace_a",pod="pod_a"}`]
	if got := last["pod_cpu_cores"+server]; math.Abs(got-want) > 0.1*want {
		t.Errorf("container_b CPU %v cores, the counter advanced at %v", got, want)
	}
	if got := last["pod_memory_bytes"+server]; got != 1000 {
		t.Errorf("container_b memory %v, recorded 1000", got)
	}
	notes, err := monitor.ReadNotes(dir)
	if err != nil {
		t.Fatal(err)
	}
	empty := map[string]bool{}
	for _, n := range notes {
		if n.Level == monitor.NoteEmpty {
			empty[n.Subject] = true
		}
	}
	for _, q := range []string{"pod_restarts", "pod_cpu_limit_cores", "pod_memory_limit_bytes", "pod_cpu_throttled_pct"} {
		// kube-state-metrics is served by TestKubeStateMetricsRecipe.
		if !empty[q] {
			t.Errorf("no empty-result note for %s (no kube-state-metrics, no CFS counters in the capture): %+v", q, notes)
		}
	}
}

// TestKubeStateMetricsRecipe: kube-state-metrics' own expected exposition
// (limits of pod1's two containers, restart counters of pod1 and pod2),
// served beside the kubelet's to the real Prometheus, gives the recipe's
// limit and restart series with the recorded values; the restart counter
// of pod2/container3 advances while served (one restart a second), the
// others stay, and resources.Restarts names exactly the one that rose.
func TestKubeStateMetricsRecipe(t *testing.T) {
	kubelet, _ := recordedExposition(t, "testdata/kubelet-resource-metrics.prom", func(i int) float64 { return 0.05 * float64(i+1) })
	ksm, _ := recordedExposition(t, "testdata/kube-state-metrics-pods.prom", func(i int) float64 {
		return []float64{0, 0, 1}[i] // container1, container2 stay; container3 restarts every second
	})
	prom := monitortest.Prometheus(t, map[string][]string{"kubelet": {kubelet}, "kube-state-metrics": {ksm}})
	time.Sleep(2 * time.Second)
	dir := t.TempDir()
	start := time.Now()
	runSession(t, dir, []monitor.TargetConfig{{Kind: monitor.KindRecipe, Name: "k8s", Options: map[string]any{
		"url": prom, "recipe": "kubernetes", "filter": `namespace=~"ns1|ns2|namespace_a"`, "window": "3s", "before": "3s"}}}, 4*time.Second, nil)
	end := time.Now()
	series, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]float64{}
	for _, s := range series {
		if n := len(s.Points); n > 0 {
			last[s.Metric] = s.Points[n-1].V
		}
	}
	for metric, want := range map[string]float64{
		"pod_cpu_limit_cores{container=pod1_con1,namespace=ns1,pod=pod1}":    0.2,
		"pod_cpu_limit_cores{container=pod1_con2,namespace=ns1,pod=pod1}":    0.3,
		"pod_memory_limit_bytes{container=pod1_con1,namespace=ns1,pod=pod1}": 1e8,
		"pod_memory_limit_bytes{container=pod1_con2,namespace=ns1,pod=pod1}": 2e8,
		"pod_restarts{container=container1,namespace=ns1,pod=pod1}":          0,
		"pod_restarts{container=container2,namespace=ns2,pod=pod2}":          0,
	} {
		if got, ok := last[metric]; !ok || got != want {
			t.Errorf("%s = %v (recorded %v), series %v", metric, got, want, ok)
		}
	}
	if got := last["pod_restarts{container=container3,namespace=ns2,pod=pod2}"]; got < 4 {
		t.Errorf("container3's restart counter %v: recorded 1, advancing a restart a second", got)
	}
	rt := resources.Target{Name: "k8s", Kind: monitor.KindRecipe}
	for i := range series {
		rt.Series = append(rt.Series, &series[i])
	}
	rs := resources.Restarts([]resources.Target{rt}, start, end)
	if len(rs) != 1 || rs[0].Component != "pod2/container3" || rs[0].N < 2 {
		t.Errorf("restarts during the run: %+v, want pod2/container3 (≈4)", rs)
	}
}
