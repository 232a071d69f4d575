package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// TestExampleMonitorsRender runs the examples of references 001, 003 and
// 004 for a few seconds each, with their monitor sections pointed (through
// the environment variables the plans read) at the real Prometheus scraping
// a recorded kubelet exposition, node_exporter and postgres_exporter, and
// checks that the recipes' per-pod and per-database series reach the report.
func TestExampleMonitorsRender(t *testing.T) {
	kubelet := serveRecording(t, "../monitor/promql/testdata/kubelet-resource-metrics.prom")
	node := monitortest.NodeExporter(t)
	dsn := monitortest.Postgres(t)
	pgexp := monitortest.PostgresExporter(t, dsn)
	prom := monitortest.Prometheus(t, map[string][]string{"kubelet": {kubelet}, "node": {node}, "postgres": {pgexp}})
	time.Sleep(2 * time.Second)
	env := map[string]string{"PROMETHEUS_URL": prom, "FOLIO_NAMESPACE": "namespace_a", "NAMESPACE": "namespace_a", "NODE_1": node,
		"FOLIO_DB_DSN": dsn}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Okapi-Token", "t")
		w.Header().Set("Authorization", "Bearer t")
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"totalRecords": 1, "access_token": "t"})
	}))
	defer srv.Close()
	for _, c := range []struct {
		example string
		set     []string
		want    []string
	}{
		{"folio-circulation", []string{"workloads.circulation.load={users: 1, duration: 4s}"},
			[]string{"PromQL queries: folio, data", "folio — pod_cpu_cores", "pod=pod_a", "data — pg_connections", "datname=postgres",
				"Query kafka_consumer_lag (data): the query returned no series"}},
		{"concurrency-sweep", []string{"workloads.manager.load={users: 1, duration: 4s}"},
			[]string{"PromQL recipes: pods", "pods — pod_memory_bytes", "container=container_b", "Query heap_used_bytes (jvms): the query returned no series"}},
		{"concurrent-workloads", []string{"workloads.circulation.load={users: 1, duration: 4s}", "workloads.data-import.load={users: 1, pace: 1s, duration: 4s}", "monitor.interval=1s"},
			[]string{"services — pod_cpu_cores", "database — pg_connections", "Prometheus endpoints: hosts", "mode=user"}},
	} {
		t.Run(c.example, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := []string{"run", filepath.Join("../../examples", c.example, "plan.yaml"), "-o", out, "-q", "--set", "target=" + srv.URL}
			for _, s := range c.set {
				args = append(args, "--set", s)
			}
			var stdout, stderr bytes.Buffer
			code := Main(context.Background(), State{Args: args, Stdin: bytes.NewReader(nil), Stdout: &stdout, Stderr: &stderr,
				Getenv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
			if code != ExitOK && code != ExitSLAFailed {
				t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
			}
			md, err := os.ReadFile(filepath.Join(out, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			report := html.UnescapeString(strings.ReplaceAll(string(md), `\`, ""))
			for _, w := range c.want {
				if !strings.Contains(report, w) {
					t.Errorf("report.md lacks %q", w)
				}
			}
		})
	}
}

// serveRecording serves a recorded exposition file without its sample
// timestamps (Prometheus rejects samples a year old) and returns host:port.
func serveRecording(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 3 && !strings.HasPrefix(l, "#") && strings.HasSuffix(f[0], "}") {
			l = f[0] + " " + f[1]
		} else if len(f) == 3 && !strings.HasPrefix(l, "#") && !strings.Contains(l, "{") {
			l = f[0] + " " + f[1]
		}
		out.WriteString(l + "\n")
	}
	body := out.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}
