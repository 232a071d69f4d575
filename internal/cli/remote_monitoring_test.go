package cli

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// TestRemoteMonitoringReport runs a load against a service backed by a real
// PostgreSQL while the real Prometheus scrapes node_exporter and
// postgres_exporter: the report holds per-instance CPU, per-database
// connections against the server's limit and the service's top statements,
// names the queries that failed or returned nothing, and its numbers match
// the exporters' own.
func TestRemoteMonitoringReport(t *testing.T) {
	dsn := monitortest.Postgres(t)
	node := monitortest.NodeExporter(t)
	pgexp := monitortest.PostgresExporter(t, dsn)
	prom := monitortest.Prometheus(t, map[string][]string{"node": {node}, "postgres": {pgexp}})

	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int64
		if err := pool.QueryRow(r.Context(), "SELECT count(*) FROM pg_class WHERE relpages >= $1 /* lookup */", 0).Scan(&n); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		fmt.Fprint(w, n)
	}))
	defer srv.Close()
	time.Sleep(2 * time.Second) // rate() needs two scrapes before the run

	plan := writePlan(t, fmt.Sprintf(`name: remote
target: %s
workloads:
  w:
    scenario:
      - request: {name: lookup, url: /lookup}
    load:
      steps:
        - {users: 2, duration: 6s}
        - {users: 4, duration: 6s}
monitor:
  interval: 1s
  targets:
    - recipe: {name: hosts, url: "%s", recipe: node, window: 5s, before: 10s, top: 2}
    - promql:
        name: databases
        url: "%s"
        recipes: [postgres]
        window: 5s
        before: 10s
        queries:
          broken: 'sum(rate(pg_stat_database_xact_commit[5s])'
          nothing: 'no_such_metric_anywhere'
    - postgres: {name: pg, dsn: "%s"}
`, srv.URL, prom, prom, dsn))
	out := filepath.Join(t.TempDir(), "run")
	if d := os.Getenv("PLATEAU_KEEP_RUN"); d != "" {
		out = d // to look at the report by hand
	}
	code, stdout, stderr := runCLI(t, "run", plan, "-o", out, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Read the Markdown as text: no escapes.
	report := html.UnescapeString(strings.ReplaceAll(string(md), `\`, ""))
	for _, want := range []string{
		"hosts — cpu_busy_pct", "instance=" + node, // per-instance CPU
		"databases — pg_connections", "datname=postgres", // per-database connections
		"Top SQL — pg", "SELECT count(*) FROM pg_class WHERE relpages >= $1 /* lookup */", // the service's statement
		"top statements in step 1", "top statements in step 2",
		"Query broken (databases): query failed", "Query nothing (databases): the query returned no series", // named notes
		"**Connections:**", "of 40 connections", "**CPU:**", "busy on average in step",
		"Before mean",
		"mode_pct of hosts, the 2 series with the highest mean during the run of", // top: 2
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}

	// Requery: the series come back from Prometheus, now with the time
	// after the run.
	if err := os.Remove(filepath.Join(out, "monitor", "hosts"+monitor.RangeSuffix)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	code, _, stderr = runCLI(t, "report", out, "--requery", "--format", "md")
	if code != ExitOK || !strings.Contains(stderr, "requeried hosts") {
		t.Fatalf("report --requery: exit %d\n%s", code, stderr)
	}
	if md, err = os.ReadFile(filepath.Join(out, "report.md")); err != nil || !strings.Contains(string(md), "After mean") {
		t.Errorf("requeried report has no After column (%v)", err)
	}

	// Values against the exporters' own numbers.
	series, _, err := monitor.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]float64{}
	for _, s := range series {
		if n := len(s.Points); n > 0 {
			last[s.Target+" "+s.Metric] = s.Points[n-1].V
		}
	}
	memTotal := monitortest.ExporterValue(t, node, "node_memory_MemTotal_bytes")
	if got := last["hosts mem_total_bytes{instance="+node+",job=node}"]; got != memTotal {
		t.Errorf("mem_total_bytes via Prometheus %v, node_exporter says %v", got, memTotal)
	}
	maxConn := monitortest.ExporterValue(t, pgexp, `pg_settings_max_connections{server="127.0.0.1:`+dsnPort(dsn)+`"}`)
	if got := last["databases pg_max_connections{instance="+pgexp+"}"]; got != maxConn || got != 40 {
		t.Errorf("pg_max_connections via Prometheus %v, postgres_exporter says %v, server set to 40", got, maxConn)
	}
}

func dsnPort(dsn string) string {
	_, rest, _ := strings.Cut(dsn, "@127.0.0.1:")
	port, _, _ := strings.Cut(rest, "/")
	return port
}

// fixedCollector returns the same readings at every sample.
type fixedCollector struct{ rs []monitor.Reading }

func (f fixedCollector) Collect(_ context.Context, b *monitor.Batch) error {
	for _, r := range f.rs {
		b.Add(r.Metric, r.Unit, r.Value)
	}
	return nil
}
func (fixedCollector) Close() error { return nil }

// TestPanelLines: the live panel shows each target's latest readings, the
// CPU-like ones with the highest values first.
func TestPanelLines(t *testing.T) {
	rs := []monitor.Reading{{Metric: "memory{pod=a}", Unit: "bytes", Value: 5e8}, {Metric: "cpu{pod=a}", Unit: "cores", Value: 0.5},
		{Metric: "cpu{pod=b}", Unit: "cores", Value: 3.4}, {Metric: "scrape_series", Value: 9}}
	kinds := map[string]monitor.Kind{"fixed": {Open: func(context.Context, monitor.TargetConfig, monitor.Env) (monitor.Collector, error) {
		return fixedCollector{rs}, nil
	}}}
	s, err := monitor.Start(context.Background(), monitor.Options{Dir: t.TempDir(), Kinds: kinds, Interval: time.Hour,
		Targets: []monitor.TargetConfig{{Kind: "fixed", Name: "k8s"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	m := &monitorRun{sess: s}
	var lines []string
	for deadline := time.Now().Add(5 * time.Second); len(lines) == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		lines = m.panelLines()
	}
	if len(lines) != 1 || lines[0] != "monitor k8s: cpu{pod=b} 3.4 cores, cpu{pod=a} 0.5 cores, memory{pod=a} 5e+08 bytes" {
		t.Errorf("panel lines %q", lines)
	}
}

// TestMonitorFlagsOptionKinds: --monitor passes a promql or mysql target's
// keys to the kind, which checks them.
func TestMonitorFlagsOptionKinds(t *testing.T) {
	got, err := parseMonitorFlags([]string{"recipe:name=hosts,url=http://127.0.0.1:9090,recipe=node,filter=job=\"node\"",
		"mysql:name=db,dsn=perf@tcp(127.0.0.1:3306)/,password_env=DB_PW", "cloudwatch:name=aws,region=eu-west-1,recipes=ecs|rds"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || len(got[2].Options["recipes"].([]any)) != 2 || got[0].Options["recipe"] != "node" || got[0].Options["url"] != "http://127.0.0.1:9090" || got[1].Options["dsn"] != "perf@tcp(127.0.0.1:3306)/" {
		t.Errorf("parsed %+v", got)
	}
	for _, c := range []struct{ in, want string }{
		{"recipe:url=http://x:1,recipe=oracle", `unknown recipe "oracle"`},
		{"promql:url=http://x:1,colour=red", "unknown field colour"},
		{"cloudwatch:recipes=ecs|ec2", `unknown recipe "ec2"`},
	} {
		if _, err := parseMonitorFlags([]string{c.in}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.want)
		}
	}
}
