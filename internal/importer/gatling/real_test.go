package gatling

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
)

// gatlingLib is where internal/importer/testdata/install-deps.sh gatling
// puts Gatling's jars ($GATLING_HOME/lib).
func gatlingLib() string {
	home := os.Getenv("GATLING_HOME")
	if home == "" {
		home = "/tmp/plateau-gatling"
	}
	return filepath.Join(home, "lib")
}

// TestRealGatling compiles and runs a simulation in Gatling 3.9.5 against
// a loopback server, imports the simulation.log it wrote and compares
// every request, the group and the total with the stats.json of the report
// Gatling generated from the same log.
func TestRealGatling(t *testing.T) {
	lib := gatlingLib()
	_, jerr := exec.LookPath("javac")
	if _, err := os.Stat(filepath.Join(lib, "gatling-app-3.9.5.jar")); err != nil || jerr != nil {
		importertest.MissingTool(t, fmt.Sprintf("Gatling or javac not installed (%s: %v; javac: %v); run internal/importer/testdata/install-deps.sh gatling", lib, err, jerr))
	}
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	tmp := t.TempDir()
	classes := filepath.Join(tmp, "classes")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cp := filepath.Join(lib, "*")
	if b, err := exec.CommandContext(ctx, "javac", "-cp", cp, "-d", classes, "testdata/sim/LoopbackSimulation.java").CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, b)
	}
	results := filepath.Join(tmp, "results")
	cmd := exec.CommandContext(ctx, "java", "-Dbase="+srv.URL, "-cp", cp+string(os.PathListSeparator)+classes,
		"io.gatling.app.Gatling", "-s", "sim.LoopbackSimulation", "-rf", results)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gatling: %v\n%s", err, b)
	}
	runs, _ := filepath.Glob(filepath.Join(results, "*", "simulation.log"))
	if len(runs) != 1 {
		t.Fatalf("simulation logs: %v", runs)
	}
	dir := filepath.Dir(runs[0])
	d, err := importLog(t, Config{Path: runs[0]}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := readStats(t, filepath.Join(dir, "js", "stats.json"))
	s := analysis.Summarize(d, nil)
	var reqs, groups int
	for _, row := range s.Labels {
		g, ok := want[row.Label]
		if row.Transaction {
			g, ok = groupStats(t, filepath.Join(dir, "js", "stats.json"), row.Label)
			groups++
		} else {
			reqs++
		}
		if !ok {
			t.Errorf("%q (transaction %v) not in stats.json", row.Label, row.Transaction)
			continue
		}
		for _, c := range []struct {
			what      string
			ours, gat float64
			tol       float64
		}{
			{"count", float64(row.Samples), num(t, g.N.Total), 0},
			{"KO", float64(row.Errors), num(t, g.N.KO), 0},
			{"min", row.MinMs, num(t, g.Min.Total), 0},
			{"max", row.MaxMs, num(t, g.Max.Total), 0},
			{"mean", row.MeanMs, num(t, g.Mean.Total), 0.5 + 0.0005},
			{"p50", row.P50Ms, num(t, g.P1.Total), 1},
			{"p95", row.P95Ms, num(t, g.P3.Total), 1},
			{"p99", row.P99Ms, num(t, g.P4.Total), 1},
			{"rate", row.ThroughputRPS, num(t, g.PerSec.Total), 0.0005 + 1e-9},
		} {
			if math.Abs(c.ours-c.gat) > c.tol {
				t.Errorf("%s %s: %v, Gatling %v", row.Label, c.what, c.ours, c.gat)
			}
		}
	}
	// home, checkout / pay, missing and the total; the checkout group.
	if reqs != 4 || groups != 1 {
		t.Errorf("%d request rows and %d groups, want 4 and 1", reqs, groups)
	}
}

// groupStats finds a GROUP node of stats.json by its path.
func groupStats(t *testing.T, path, name string) (gatlingStats, bool) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root statsNode
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	var found *gatlingStats
	var walk func(n statsNode)
	walk = func(n statsNode) {
		for _, c := range n.Contents {
			if c.Type == "GROUP" && c.Path == name {
				s := c.Stats
				found = &s
			}
			walk(c)
		}
	}
	walk(root)
	if found == nil {
		return gatlingStats{}, false
	}
	return *found, true
}
