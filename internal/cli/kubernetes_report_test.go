package cli

import (
	"fmt"
	"html"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// TestKubernetesReport runs a load while the real Prometheus scrapes the
// recorded kubelet and kube-state-metrics expositions
// (internal/monitor/promql/testdata), the restart counter of
// pod2/container3 advancing a restart a second while served and the others
// as recorded: the report charts the recipe's per-pod limit series, names
// the container that restarted during the run, and only that one.
func TestKubernetesReport(t *testing.T) {
	kubelet := serveRecording(t, "../monitor/promql/testdata/kubelet-resource-metrics.prom")
	ksm := serveAdvancing(t, "../monitor/promql/testdata/kube-state-metrics-pods.prom",
		map[string]float64{`kube_pod_container_status_restarts_total{container="container3"`: 1})
	prom := monitortest.Prometheus(t, map[string][]string{"kubelet": {kubelet}, "kube-state-metrics": {ksm}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	defer srv.Close()
	time.Sleep(2 * time.Second)
	plan := writePlan(t, fmt.Sprintf(`name: k8s
target: %s
workloads:
  w:
    scenario:
      - request: {name: ping, url: /ping}
    load: {users: 1, duration: 6s}
monitor:
  interval: 1s
  targets:
    - recipe: {name: pods, url: "%s", recipe: kubernetes, filter: 'namespace=~"ns1|ns2|namespace_a"', window: 3s, before: 3s}
`, srv.URL, prom))
	out := filepath.Join(t.TempDir(), "run")
	if d := os.Getenv("PLATEAU_KEEP_RUN"); d != "" {
		out = d
	}
	code, stdout, stderr := runCLI(t, "run", plan, "-o", out, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := html.UnescapeString(strings.ReplaceAll(string(md), `\`, ""))
	for _, want := range []string{
		"pods — pod_cpu_limit_cores", "pods — pod_memory_limit_bytes", "container=pod1_con1", "container=pod1_con2",
		"pods — pod_restarts", "**Restarts:** 1 container restarted",
		// the recorded limits, as recorded
		"| container=pod1_con1, namespace=ns1, pod=pod1 | 0.20 cores | 0.20 cores | 0.20 cores |",
		"| container=pod1_con2, namespace=ns1, pod=pod1 | 191 MiB | 191 MiB | 191 MiB |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// A restart a second over a 6 s run: about 6 (the first and last
	// scrapes fall anywhere within their second).
	m := regexp.MustCompile(`Container pod2/container3 restarted (\d+) times during the run`).FindStringSubmatch(report)
	if m == nil {
		t.Errorf("no finding names pod2/container3's restarts")
	} else if n, _ := strconv.Atoi(m[1]); n < 4 || n > 9 {
		t.Errorf("pod2/container3 restarted %d times, its counter rose about 6 during the run", n)
	}
	for _, not := range []string{"container2 restarted", "container1 restarted"} {
		if strings.Contains(report, not) {
			t.Errorf("report.md says %q: its counter did not move", not)
		}
	}
}

// serveAdvancing serves a recorded exposition without sample timestamps,
// the series starting with a key of advance rising by whole steps at that
// many per second from their recorded value.
func serveAdvancing(t *testing.T, path string, advance map[string]float64) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	start := time.Now()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		el := time.Since(start).Seconds()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		for _, l := range lines {
			f := strings.Fields(l)
			if strings.HasPrefix(l, "#") || len(f) < 2 {
				fmt.Fprintln(w, l)
				continue
			}
			series := l[:strings.LastIndex(l, "} ")+1]
			v, err := strconv.ParseFloat(strings.Fields(l[len(series):])[0], 64)
			if err != nil {
				http.Error(w, err.Error(), 500)
				return
			}
			for k, rate := range advance {
				if strings.HasPrefix(series, k) {
					v += math.Floor(rate * el)
				}
			}
			fmt.Fprintf(w, "%s %s\n", series, strconv.FormatFloat(v, 'g', -1, 64))
		}
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
