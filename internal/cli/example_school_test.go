package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// schoolService answers the example's two browse calls from the tables
// load.sql made: a stand-in for the service under test, on a real
// PostgreSQL.
func schoolService(t *testing.T, pool *pgxpool.Pool) *httptest.Server {
	query := func(w http.ResponseWriter, r *http.Request, sql string, arg string) {
		rows, err := pool.Query(r.Context(), sql, arg)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer rows.Close()
		var out []map[string]any
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			m := map[string]any{}
			for i, f := range rows.FieldDescriptions() {
				m[f.Name] = vals[i]
			}
			out = append(out, m)
		}
		if len(out) == 0 {
			http.Error(w, "not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /classes/{id}/students", func(w http.ResponseWriter, r *http.Request) {
		query(w, r, "SELECT student_id, username, name FROM students WHERE class_id = $1::int ORDER BY student_id", r.PathValue("id"))
	})
	mux.HandleFunc("GET /students/{id}/responses", func(w http.ResponseWriter, r *http.Request) {
		query(w, r, "SELECT response_id, campaign_id, submitted, privacy FROM responses WHERE student_id = $1::int ORDER BY submitted DESC LIMIT 50", r.PathValue("id"))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// The school example end to end: its prepare commands generate reference
// 002's data set with plateau datagen and load it into a real PostgreSQL
// (whose foreign keys check the generated relations), the browse load
// reads generated students through a service on those tables, and the
// cleanup drops the tables and the files. The loaded counts equal
// datagen.json's, and the commands are recorded but not measured.
func TestExampleSchoolData(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	monitortest.Need(t, "psql")
	dsn := monitortest.Postgres(t)
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	srv := schoolService(t, pool)

	// A copy of the example, so its data/ is written in a temporary place.
	dir := t.TempDir()
	for _, f := range []string{"plan.yaml", "school.yaml", "load.sql"} {
		b, err := os.ReadFile(filepath.Join("../../examples/school-data", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The commands inherit the environment: PGURL for psql, and plateau
	// (this test binary acting as plateau) for $PLATEAU datagen.
	t.Setenv("PGURL", dsn)
	t.Setenv("PLATEAU_TEST_MAIN", "1")
	t.Setenv("SCALE", "0.01")
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", filepath.Join(dir, "plan.yaml"), "-o", out, "-q",
		"--set", "target="+srv.URL, "--set", "workloads.browse.load={users: 3, duration: 3s}")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Prepare) != 2 || len(info.Cleanup) != 2 {
		t.Fatalf("prepare %+v cleanup %+v", info.Prepare, info.Cleanup)
	}
	for _, r := range append(info.Prepare, info.Cleanup...) {
		if r.Status != rundir.CommandOK {
			t.Errorf("%s: %s", r.Name, r.Describe())
		}
	}
	// The load's own output: the counts PostgreSQL holds equal what
	// datagen says it wrote (its stdout, in the generate command's log).
	gen, _ := os.ReadFile(filepath.Join(out, info.Prepare[0].Log))
	load, _ := os.ReadFile(filepath.Join(out, info.Prepare[1].Log))
	var students, responses string
	for _, l := range strings.Split(string(gen), "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && f[0] == "students" {
			students = f[2]
		}
		if len(f) > 2 && f[0] == "responses" {
			responses = f[2]
		}
	}
	if students == "" || !strings.Contains(string(load), "loaded "+students+" students and "+responses+" responses") {
		t.Errorf("generated %s students and %s responses; the load said:\n%s\n(generate said:\n%s)", students, responses, load, gen)
	}
	if _, err := os.Stat(filepath.Join(dir, "data")); !os.IsNotExist(err) {
		t.Errorf("cleanup left data/: %v", err)
	}
	var n int
	if err := pool.QueryRow(context.Background(), "SELECT count(*) FROM pg_tables WHERE tablename = 'students'").Scan(&n); err != nil || n != 0 {
		t.Errorf("cleanup did not drop the tables: %d, %v", n, err)
	}
	s := readSummary(t, out)
	if s.Verdict != analysis.VerdictPassed {
		t.Errorf("verdict %s: %v", s.Verdict, s.VerdictReasons)
	}
	for _, l := range s.Labels {
		if l.Label != "TOTAL" && (l.Samples == 0 || l.Errors > 0) {
			t.Errorf("%s: %d samples, %d errors", l.Label, l.Samples, l.Errors)
		}
	}
	// Not measured: the run's span starts after the load finished.
	if last := info.Prepare[1]; info.Start.Before(last.Start.Add(time.Duration(last.DurationS * float64(time.Second)))) {
		t.Errorf("run starts %v, before the load ended", info.Start)
	}
	checkRunProse(t, out)
}
