// Package grafana holds the provisionable Grafana dashboard for plateau's
// Prometheus metrics; this test checks its queries against a real Prometheus
// fed by a plateau run.
package grafana_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/cli"
	"github.com/plateau-perf/plateau/internal/output/promtest"
)

// queries returns every PromQL expression of the dashboard: panel targets,
// annotations, and the template variables' label_values() (as the series
// query Grafana makes of them), with where they come from.
func queries(t *testing.T, dash map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if e, ok := x["expr"].(string); ok {
				out[path+" "+fmt.Sprint(x["refId"], x["name"])] = e
			}
			for k, c := range x {
				walk(path+"/"+k, c)
			}
		case []any:
			for i, c := range x {
				title := ""
				if m, ok := c.(map[string]any); ok {
					title = fmt.Sprint(m["title"])
				}
				walk(fmt.Sprintf("%s[%d %s]", path, i, title), c)
			}
		}
	}
	walk("", dash["panels"])
	walk("annotations", dash["annotations"])
	lv := regexp.MustCompile(`^label_values\((.+), (\w+)\)$`)
	for _, v := range dash["templating"].(map[string]any)["list"].([]any) {
		m := v.(map[string]any)
		if m["type"] != "query" {
			continue
		}
		q := m["query"].(map[string]any)["query"].(string)
		g := lv.FindStringSubmatch(q)
		if g == nil {
			t.Errorf("variable %s: query %q is not label_values(selector, label)", m["name"], q)
			continue
		}
		out["variable "+m["name"].(string)] = fmt.Sprintf("count by (%s) (%s)", g[2], g[1])
	}
	return out
}

// grafanaVars replaces Grafana's variables as Grafana would for a 1 s
// scrape interval and "All" selections.
var grafanaVars = strings.NewReplacer("$__rate_interval", "4s", "$__range", "2m", "$__interval", "1s",
	`"$job"`, `".*"`, `"$workload"`, `".*"`, `"$label"`, `".*"`)

// TestDashboardQueries runs plateau with --listen while the real Prometheus
// scrapes it, then evaluates every query of the dashboard: each must parse,
// evaluate and return data.
func TestDashboardQueries(t *testing.T) {
	promtest.Binary(t)
	b, err := os.ReadFile("dashboards/plateau.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	qs := queries(t, dash)
	if len(qs) < 15 {
		t.Fatalf("only %d queries found", len(qs))
	}
	addr := promtest.FreePort(t)
	ps := promtest.Start(t, promtest.Options{Scrape: []string{addr}})
	ps.WaitTargets(1)
	runPlan(t, addr, 6)
	ended := time.Now()
	for where, q := range qs {
		expr := grafanaVars.Replace(q)
		if strings.Contains(expr, "$") {
			t.Errorf("%s: unreplaced variable in %q", where, expr)
			continue
		}
		if strings.HasPrefix(where, "annotations") {
			// Phases are active during the run, not at its end: look
			// over the run (a subquery evaluates the expression there).
			expr = "max_over_time((" + expr + ")[2m:1s])"
		}
		var res []promtest.Sample
		var err error
		// The last scrape is committed a moment after plateau served it.
		for range 20 {
			if res, err = ps.QueryAt(expr, ended); err != nil || len(res) > 0 {
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		if len(res) == 0 {
			t.Errorf("%s: %q returned no data after a run", where, expr)
		}
	}
}

func runPlan(t *testing.T, addr string, seconds int) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flaky" && n.Add(1)%3 == 0 {
			w.WriteHeader(500)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.yaml")
	os.WriteFile(planPath, []byte(fmt.Sprintf(`name: grafana
target: %s
workloads:
  shop:
    scenario:
      - request: {name: home, url: /}
      - request: {name: flaky, url: /flaky}
    load: {steps: [{rate: 20/s, duration: %ds}, {rate: 40/s, duration: %ds}], max_users: 200}
`, srv.URL, seconds/2, seconds-seconds/2)), 0o644)
	var so, se bytes.Buffer
	code := cli.Main(context.Background(), cli.State{Args: []string{"run", planPath, "-o", filepath.Join(dir, "run"), "-q", "--listen", addr},
		Stdin: bytes.NewReader(nil), Stdout: &so, Stderr: &se, Getenv: func(string) (string, bool) { return "", false }})
	if code != cli.ExitOK && code != cli.ExitNotHeld {
		t.Fatalf("run: exit %d\n%s\n%s", code, so.String(), se.String())
	}
}
