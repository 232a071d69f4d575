package promql

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

func runSession(t *testing.T, dir string, targets []monitor.TargetConfig, d time.Duration, getenv func(string) (string, bool)) []monitor.TargetStatus {
	t.Helper()
	s, err := monitor.Start(context.Background(), monitor.Options{Dir: dir, Interval: 500 * time.Millisecond, Targets: targets,
		Kinds: map[string]monitor.Kind{monitor.KindPromQL: Kind(), monitor.KindRecipe: Kind()}, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(d)
	if err := s.Stop(); err != nil {
		t.Fatalf("a monitor must never fail the run: %v", err)
	}
	return s.Status()
}

// TestPrometheusNodeRecipe runs the node recipe and a labelled query of
// its own against the real Prometheus scraping the real node_exporter.
func TestPrometheusNodeRecipe(t *testing.T) {
	node := monitortest.NodeExporter(t)
	prom := monitortest.Prometheus(t, map[string][]string{"node": {node}})
	time.Sleep(2 * time.Second) // two scrapes for rate()
	dir := t.TempDir()
	st := runSession(t, dir, []monitor.TargetConfig{{Kind: monitor.KindPromQL, Name: "hosts", Options: map[string]any{
		"url": prom, "recipe": "node", "window": "5s", "before": "10s",
		"queries": map[string]any{
			"cpu_seconds_by_mode": map[string]any{"query": `sum by (mode) (rate(node_cpu_seconds_total[5s]))`, "unit": "cores"},
			"nothing":             `no_such_metric_anywhere`,
			"broken":              `sum(rate(node_cpu_seconds_total[5s])`,
		}}}}, 3*time.Second, nil)
	if !st[0].Started || st[0].Samples == 0 {
		t.Fatalf("status %+v", st[0])
	}
	t.Logf("own cost: %.2f ms thread CPU per sample (%d instant queries each), over %d samples, range queries at the end included",
		st[0].CPUSeconds/float64(st[0].Samples)*1e3, 13, st[0].Samples)
	if _, err := os.Stat(filepath.Join(dir, monitor.SubDir, "hosts"+monitor.RangeSuffix)); err != nil {
		t.Fatalf("no range file: %v", err)
	}
	series, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string][]float64{}
	for _, s := range series {
		for _, p := range s.Points {
			by[s.Metric] = append(by[s.Metric], p.V)
		}
	}
	inst := "instance=" + node
	mem := by["mem_total_bytes{"+inst+",job=node}"]
	if len(mem) < 5 {
		t.Fatalf("mem_total_bytes: %d points; series: %v", len(mem), keys(by))
	}
	if want := monitortest.ExporterValue(t, node, "node_memory_MemTotal_bytes"); mem[len(mem)-1] != want {
		t.Errorf("MemTotal via Prometheus %v, exporter says %v", mem[len(mem)-1], want)
	}
	busy := by["cpu_busy_pct{"+inst+"}"]
	if len(busy) == 0 {
		t.Fatalf("no cpu_busy_pct; series: %v", keys(by))
	}
	for _, v := range busy {
		if v < 0 || v > 100 {
			t.Errorf("busy %v%% out of range", v)
		}
	}
	// Network errors and drops per instance: the machine's interfaces
	// (eth0 …) are healthy, so the rates are there and zero — the rule that
	// turns a rise into a finding is tested in internal/analysis/resources.
	if _, err := os.Stat("/sys/class/net/eth0"); err == nil {
		for _, m := range []string{"net_errors_per_s{" + inst + "}", "net_drops_per_s{" + inst + "}"} {
			vs := by[m]
			if len(vs) == 0 {
				t.Errorf("no %s; series: %v", m, keys(by))
			}
			for _, v := range vs {
				if v < 0 {
					t.Errorf("%s = %v", m, v)
				}
			}
		}
	}
	// One series per mode, labels kept.
	for _, mode := range []string{"user", "system", "idle"} {
		if len(by["cpu_seconds_by_mode{mode="+mode+"}"]) == 0 {
			t.Errorf("no series for mode %s; series: %v", mode, keys(by))
		}
	}
	// The window starts before the run.
	notes, err := monitor.ReadNotes(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range notes {
		got[n.Subject] = n.Level + ": " + n.Text
	}
	if !strings.HasPrefix(got["nothing"], monitor.NoteEmpty) {
		t.Errorf("empty result note: %q", got["nothing"])
	}
	if !strings.HasPrefix(got["broken"], monitor.NoteError) || !strings.Contains(got["broken"], "parse") {
		t.Errorf("query error note: %q", got["broken"])
	}

	// Requery later: the same series again, and the window has grown
	// after the run.
	if err := os.Remove(filepath.Join(dir, monitor.SubDir, "hosts"+monitor.RangeSuffix)); err != nil {
		t.Fatal(err)
	}
	lines, err := Requery(context.Background(), dir, nil, time.Now().Add(time.Second))
	if err != nil || len(lines) != 1 {
		t.Fatalf("requery: %v %v", lines, err)
	}
	series2, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range series2 {
		found = found || s.Metric == "mem_total_bytes{"+inst+",job=node}"
	}
	if !found {
		t.Error("requery did not bring the series back")
	}
}

func keys(m map[string][]float64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestUnreachableServer: the run goes on, every query is a named note.
func TestUnreachableServer(t *testing.T) {
	dir := t.TempDir()
	addr := monitortest.FreeAddr(t) // nothing listens there
	st := runSession(t, dir, []monitor.TargetConfig{{Kind: monitor.KindRecipe, Name: "gone", Options: map[string]any{
		"url": "http://" + addr, "recipe": "postgres"}}}, 1200*time.Millisecond, nil)
	if !st[0].Started || len(st[0].Gaps) == 0 {
		t.Fatalf("want a started target with a gap, got %+v", st[0])
	}
	notes, err := monitor.ReadNotes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 7 {
		t.Fatalf("want one note per postgres recipe query, got %d: %+v", len(notes), notes)
	}
	for _, n := range notes {
		if n.Level != monitor.NoteError || !strings.Contains(n.Text, "connection refused") || n.Target != "gone" {
			t.Errorf("note %+v", n)
		}
	}
}

// TestCredentialsNeverWritten: a bearer token from the environment reaches
// the server and no file of the run.
func TestCredentialsNeverWritten(t *testing.T) {
	const secret = "s3cr3t-token-value"
	var seen string
	srv := newFakeAuthServer(t, &seen)
	dir := t.TempDir()
	getenv := func(k string) (string, bool) { return secret, k == "PROM_TOKEN" }
	runSession(t, dir, []monitor.TargetConfig{{Kind: monitor.KindPromQL, Name: "auth", Options: map[string]any{
		"url": srv, "bearer_token_env": "PROM_TOKEN", "queries": map[string]any{"up": "up"}}}}, 700*time.Millisecond, getenv)
	if seen != "Bearer "+secret {
		t.Fatalf("server saw Authorization %q", seen)
	}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the token", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Missing variable: the target does not start, the message names it.
	if err := Validate(monitor.TargetConfig{Kind: monitor.KindPromQL, Options: map[string]any{"url": "http://u:p@x:9090", "queries": map[string]any{"a": "up"}}}); err == nil {
		t.Error("credentials in the URL accepted")
	}
	_, err = Open(context.Background(), monitor.TargetConfig{Kind: monitor.KindPromQL, Options: map[string]any{"url": srv, "bearer_token_env": "NOPE", "queries": map[string]any{"a": "up"}}},
		monitor.Env{Getenv: getenv})
	if err == nil || !strings.Contains(err.Error(), "NOPE") {
		t.Errorf("missing env: %v", err)
	}
}

func TestConfigErrors(t *testing.T) {
	for name, tc := range map[string]struct {
		opts map[string]any
		want string
	}{
		"no url":        {map[string]any{"queries": map[string]any{"a": "up"}}, "url is required"},
		"unknown key":   {map[string]any{"url": "http://x:1", "queris": map[string]any{}}, "unknown field queris"},
		"no queries":    {map[string]any{"url": "http://x:1"}, "no queries"},
		"bad recipe":    {map[string]any{"url": "http://x:1", "recipe": "oracle"}, `unknown recipe "oracle"`},
		"bad name":      {map[string]any{"url": "http://x:1", "queries": map[string]any{"a-b": "up"}}, `query name "a-b"`},
		"auth header":   {map[string]any{"url": "http://x:1", "queries": map[string]any{"a": "up"}, "headers": map[string]any{"Authorization": "x"}}, "credential"},
		"bad duration":  {map[string]any{"url": "http://x:1", "queries": map[string]any{"a": "up"}, "before": "soon"}, "not a duration"},
		"half of basic": {map[string]any{"url": "http://x:1", "queries": map[string]any{"a": "up"}, "username_env": "U"}, "go together"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Validate(monitor.TargetConfig{Kind: monitor.KindPromQL, Options: tc.opts})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}

func TestRecipesParse(t *testing.T) {
	names := RecipeNames()
	if strings.Join(names, ",") != "jvm,kafka,kubernetes,mysql,node,postgres" {
		t.Fatalf("recipes %v", names)
	}
	for _, n := range names {
		r, err := LoadRecipe(n)
		if err != nil || len(r.Queries) == 0 || r.Description == "" {
			t.Fatalf("%s: %v", n, err)
		}
		for q, e := range r.Queries {
			for _, f := range []string{"", `namespace="x"`} {
				x := expand(e.Expr, f, "")
				if strings.Contains(x, "__") && !strings.Contains(x, "__name__") {
					t.Errorf("%s.%s: placeholder left in %q", n, q, x)
				}
				if strings.Contains(x, "{,") || strings.Contains(x, ",}") {
					t.Errorf("%s.%s: dangling comma in %q", n, q, x)
				}
			}
		}
	}
	if got := expand(`a{b="c",__FILTER__} + d{__FILTER__}[__WINDOW__]`, `{ns="x"}`, "30s"); got != `a{b="c",ns="x"} + d{ns="x"}[30s]` {
		t.Errorf("expand: %s", got)
	}
}

func TestStep(t *testing.T) {
	if s := Step(time.Second, time.Hour); s != time.Second {
		t.Errorf("1h at 1s: %s", s)
	}
	if s := Step(time.Second, 24*time.Hour); s*time.Duration(maxPoints-1) < 24*time.Hour {
		t.Errorf("24h at %s exceeds the point limit", s)
	}
}
