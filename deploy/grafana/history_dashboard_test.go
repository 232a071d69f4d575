package grafana_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"encoding/json"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// sqlQueries returns every SQL text of the history dashboard: the panels'
// rawSql, the annotations' and the query variables'.
func sqlQueries(dash map[string]any) map[string]string {
	out := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if q, ok := x["rawSql"].(string); ok {
				out[path] = q
			}
			for k, c := range x {
				walk(path+"/"+k, c)
			}
		case []any:
			for i, c := range x {
				title := ""
				if m, ok := c.(map[string]any); ok {
					title = fmt.Sprint(m["title"], m["name"])
				}
				walk(fmt.Sprintf("%s[%d %s]", path, i, title), c)
			}
		}
	}
	walk("panels", dash["panels"])
	walk("annotations", dash["annotations"])
	for _, v := range dash["templating"].(map[string]any)["list"].([]any) {
		m := v.(map[string]any)
		if q, ok := m["query"].(string); ok && m["type"] == "query" {
			out["variable "+m["name"].(string)] = q
		}
	}
	return out
}

// TestHistoryDashboardQueries stores runs in a real PostgreSQL with
// plateau's own history store, then runs every query of the history
// dashboard with Grafana's macros and variables expanded as Grafana does:
// each must run and return rows.
func TestHistoryDashboardQueries(t *testing.T) {
	b, err := os.ReadFile("dashboards/plateau-history.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	qs := sqlQueries(dash)
	if len(qs) < 10 {
		t.Fatalf("found %d queries in the dashboard", len(qs))
	}
	ctx := context.Background()
	dsn := monitortest.Postgres(t)
	s, err := history.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	var plan string
	// 12 runs, the last 6 of them 40 % slower: a change point at run 6 for
	// the change-point panel and annotation.
	for i := range 12 {
		dir := t.TempDir()
		o := reporttest.Options{Seed: uint64(i + 1), Monitor: true, Steps: []reporttest.Step{{Users: 7, Seconds: 60}, {Users: 10, Seconds: 60}, {Users: 14, Seconds: 60}, {Users: 20, Seconds: 60}}}
		if i >= 6 {
			o.SlowerPct = 40
		}
		if err := reporttest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
		if _, err := report.Generate(dir, report.Options{Formats: []string{"json"}}); err != nil {
			t.Fatal(err)
		}
		r, err := history.FromDir(filepath.Join(dir), map[string]string{"release": fmt.Sprintf("r%d", i/3+1)})
		if err != nil {
			t.Fatal(err)
		}
		r.Start = r.Start.Add(time.Duration(i) * time.Hour)
		// The synthetic run watches hosts; a service's process CPU (as
		// the demo's process monitors record it) is added for the CPU per
		// request panel.
		r.Resources = append(r.Resources, history.ResourceRow{Target: "cave-1", Kind: "process", Metric: "cpu_pct", Min: 20, Mean: 40 + float64(i), Max: 60})
		if r.Capacity == nil || r.Capacity.KneeThroughputRPS == nil {
			t.Fatalf("fixture run %d has no capacity knee", i)
		}
		if _, err := s.Add(ctx, r, time.Now()); err != nil {
			t.Fatal(err)
		}
		plan = r.Plan
	}
	if done, err := s.RefreshChangePoints(ctx, plan); err != nil || done[plan] == 0 {
		t.Fatalf("change points: %v, %v", done, err)
	}
	s.Close()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	timeFilter := regexp.MustCompile(`\$__timeFilter\(([^)]+)\)`)
	expand := strings.NewReplacer("$plan", strings.ReplaceAll(plan, "'", "''"), "($label)", "('TOTAL')")
	for where, q := range qs {
		q = timeFilter.ReplaceAllString(q, "$1 BETWEEN '2000-01-01T00:00:00Z' AND '2100-01-01T00:00:00Z'")
		q = expand.Replace(q)
		if strings.Contains(q, "$") {
			t.Errorf("%s: an unexpanded variable or macro is left: %s", where, q)
			continue
		}
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Errorf("%s: %v\n%s", where, err, q)
			continue
		}
		n := 0
		for rows.Next() {
			n++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%s: %v", where, err)
		}
		rows.Close()
		if n == 0 {
			t.Errorf("%s: no rows\n%s", where, q)
		}
	}
}
