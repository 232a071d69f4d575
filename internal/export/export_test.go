package export_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/cli"
	"github.com/plateau-perf/plateau/internal/export"
	"github.com/plateau-perf/plateau/internal/monitor"
)

// duckdbPython finds a Python with the duckdb module: $DUCKDB_PYTHON, then
// the venv testdata/install-deps.sh makes. Missing, the test skips, except
// under CI=true where it fails.
func duckdbPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("DUCKDB_PYTHON"), "/tmp/plateau-duckdb-venv/bin/python"} {
		if p == "" {
			continue
		}
		if err := exec.Command(p, "-c", "import duckdb").Run(); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("duckdb not installed under CI: run internal/export/testdata/install-deps.sh")
	}
	t.Skip("duckdb not installed (internal/export/testdata/install-deps.sh)")
	return ""
}

// plateauRun makes a real run directory: two labels, one failing every
// fourth request, the host monitor on.
func plateauRun(t *testing.T) string {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/flaky" && n.Add(1)%4 == 0 {
			w.WriteHeader(503)
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	planPath := filepath.Join(dir, "plan.yaml")
	os.WriteFile(planPath, []byte(fmt.Sprintf(`name: export
target: %s
workloads:
  w:
    scenario:
      - request: {name: home, url: /}
      - request: {name: flaky, url: /flaky}
    load: {rate: 60/s, duration: 3s, max_users: 20}
`, srv.URL)), 0o644)
	out := filepath.Join(dir, "run")
	var so, se bytes.Buffer
	code := cli.Main(context.Background(), cli.State{Args: []string{"run", planPath, "-o", out, "-q", "--monitor", "host"},
		Stdin: bytes.NewReader(nil), Stdout: &so, Stderr: &se, Getenv: func(string) (string, bool) { return "", false }})
	if code != cli.ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, so.String(), se.String())
	}
	return out
}

// query reads the exported tables with DuckDB and returns what it counted.
const query = `
import duckdb, json, sys
d, fmt = sys.argv[1], sys.argv[2]
def src(t):
    p = f"{d}/{t}.{fmt}"
    return f"read_parquet('{p}')" if fmt == "parquet" else f"read_csv('{p}', header=true)"
out = {"labels": {}}
for label, count, errors, sum_ms in duckdb.sql(f"""
    select label, sum(count)::BIGINT, sum(errors)::BIGINT, sum(sum_ms)::DOUBLE from {src('intervals')}
    where not transaction and not derived group by label""").fetchall():
    out["labels"][label] = {"count": count, "errors": errors, "sum_ms": sum_ms}
row = duckdb.sql(f"""select sum(count)::BIGINT, sum(errors)::BIGINT, sum(sum_ms)::DOUBLE, min(min_ms)::DOUBLE, max(max_ms)::DOUBLE,
    count(distinct time)::BIGINT from {src('intervals')} where not transaction and not derived and count > 0""").fetchall()[0]
out["total"] = dict(zip(["count", "errors", "sum_ms", "min_ms", "max_ms", "seconds"], row))
out["samples"], out["sample_errors"] = duckdb.sql(f"select count(*), count(*) filter (where not success) from {src('samples')}").fetchall()[0]
out["monitor"] = duckdb.sql(f"select count(*) from {src('monitor')}").fetchall()[0][0]
out["users_max"] = duckdb.sql(f"select max(users)::BIGINT from {src('load')}").fetchall()[0][0]
print(json.dumps(out))
`

// TestDuckDBReadsExport exports a real run as Parquet and as CSV and reads
// both with DuckDB: counts, errors and sums equal summary.json.
func TestDuckDBReadsExport(t *testing.T) {
	py := duckdbPython(t)
	run := plateauRun(t)
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum analysis.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	series, _, err := monitor.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	points := 0
	for _, s := range series {
		points += len(s.Points)
	}
	if points == 0 {
		t.Fatal("the host monitor recorded nothing")
	}
	for _, f := range []export.Format{export.Parquet, export.CSV} {
		t.Run(string(f), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "export")
			files, err := export.Run(run, out, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 4 {
				t.Fatalf("files %+v, want intervals, load, samples, monitor", files)
			}
			cmd := exec.Command(py, "-c", query, out, string(f))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			res, err := cmd.Output()
			if err != nil {
				t.Fatalf("duckdb: %v\n%s", err, stderr.String())
			}
			var got struct {
				Labels map[string]struct {
					Count, Errors int64
					SumMs         float64 `json:"sum_ms"`
				}
				Total struct {
					Count, Errors, Seconds int64
					SumMs                  float64 `json:"sum_ms"`
					MinMs                  float64 `json:"min_ms"`
					MaxMs                  float64 `json:"max_ms"`
				}
				Samples      int64
				SampleErrors int64 `json:"sample_errors"`
				Monitor      int
				UsersMax     int64 `json:"users_max"`
			}
			if err := json.Unmarshal(res, &got); err != nil {
				t.Fatalf("%v: %s", err, res)
			}
			labels := 0
			for _, l := range sum.Labels {
				if l.Label == "TOTAL" {
					if got.Total.Count != l.Samples || got.Total.Errors != l.Errors {
						t.Errorf("total: duckdb %d samples %d errors, summary.json %d, %d", got.Total.Count, got.Total.Errors, l.Samples, l.Errors)
					}
					if m := math.Round(got.Total.SumMs/float64(got.Total.Count)*1000) / 1000; m != l.MeanMs {
						t.Errorf("mean: duckdb sum/count %v, summary.json %v", m, l.MeanMs)
					}
					if got.Total.MinMs != l.MinMs || got.Total.MaxMs != l.MaxMs {
						t.Errorf("min/max: duckdb %v/%v, summary.json %v/%v", got.Total.MinMs, got.Total.MaxMs, l.MinMs, l.MaxMs)
					}
					if got.Samples != l.Samples || got.SampleErrors != l.Errors {
						t.Errorf("samples table: %d rows, %d failed; summary.json %d, %d", got.Samples, got.SampleErrors, l.Samples, l.Errors)
					}
					continue
				}
				labels++
				g := got.Labels[l.Label]
				if g.Count != l.Samples || g.Errors != l.Errors {
					t.Errorf("label %s: duckdb %d/%d, summary.json %d/%d", l.Label, g.Count, g.Errors, l.Samples, l.Errors)
				}
				if m := math.Round(g.SumMs/float64(g.Count)*1000) / 1000; m != l.MeanMs {
					t.Errorf("label %s mean: duckdb %v, summary.json %v", l.Label, m, l.MeanMs)
				}
			}
			if labels != 2 || len(got.Labels) != 2 {
				t.Errorf("labels: summary %d, duckdb %d", labels, len(got.Labels))
			}
			if got.Total.Errors == 0 {
				t.Error("no errors exported; the plan no longer fails any request")
			}
			if got.Monitor != points {
				t.Errorf("monitor rows %d, run has %d readings", got.Monitor, points)
			}
			if got.UsersMax < 1 {
				t.Errorf("load table: max users %d", got.UsersMax)
			}
		})
	}
}

// TestColumnsDocumented keeps docs/export.md in step with the row types.
func TestColumnsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	for table, cols := range map[string][]string{
		"intervals": export.Columns[export.IntervalRow](), "load": export.Columns[export.LoadRow](),
		"samples": export.Columns[export.SampleRow](), "monitor": export.Columns[export.MonitorRow](),
	} {
		for _, c := range cols {
			if !bytes.Contains(b, []byte("| `"+c+"` |")) {
				t.Errorf("docs/export.md: %s column %s not documented", table, c)
			}
		}
	}
}
