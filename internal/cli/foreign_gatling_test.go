package cli

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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
)

// computerDatabase is a loopback stand-in for the site Gatling's
// computer-database sample runs against: a home page, a search whose
// result links each computer the search names, a computer's page, the
// list's pages, the new-computer form, and the form's POST answered 200
// (the simulation expects 200 or 201 at random, so about half its posts
// fail and are retried once). It counts the requests it answered.
func computerDatabase() (*httptest.Server, *atomic.Int64) {
	var n atomic.Int64
	names := map[string]string{"Macbook": "MacBook Pro", "eee": "ASUS Eee PC 1005PE"}
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		defer n.Add(1)
		time.Sleep(time.Millisecond)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/computers":
			if r.ParseForm() != nil || r.PostForm.Get("name") != "Beautiful Computer" {
				http.Error(w, "bad form", http.StatusBadRequest)
				return
			}
			fmt.Fprint(w, "<html><body>Computer Beautiful Computer has been created</body></html>")
		case r.URL.Path == "/computers" && r.URL.Query().Has("f"):
			fmt.Fprintf(w, `<html><body><table><tr><td><a href="/computers/17">%s</a></td></tr>`+
				`<tr><td><a href="/computers/18">Other</a></td></tr></table></body></html>`, names[r.URL.Query().Get("f")])
		case r.URL.Path == "/" || r.URL.Path == "/computers" || strings.HasPrefix(r.URL.Path, "/computers/"):
			fmt.Fprintf(w, "<html><body>%s</body></html>", r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	})
	return httptest.NewServer(mux), &n
}

// TestRunGatlingPublicSimulation runs Gatling's own computer-database
// sample (executor/testdata/gatling-computerdatabase: Gatling 3.9.5's
// bundle, Apache-2.0), its base URL pointed at a loopback stand-in, under
// plateau with a host monitor: the report counts every request the
// stand-in answered, and every request name's figures equal Gatling's own
// stats.json within docs/import.md's tolerances.
func TestRunGatlingPublicSimulation(t *testing.T) {
	foreignTool(t, "Gatling (with javac)", gatlingInstalled())
	t.Parallel()
	srv, served := computerDatabase()
	defer srv.Close()
	const fx = "../executor/testdata/gatling-computerdatabase"
	tmp := t.TempDir()
	src, err := os.ReadFile(filepath.Join(fx, "computerdatabase", "ComputerDatabaseSimulation.java"))
	if err != nil {
		t.Fatal(err)
	}
	const site = `http.baseUrl("https://computer-database.gatling.io")`
	if strings.Count(string(src), site) != 1 || strings.Count(string(src), "baseUrl(") != 1 || strings.Count(string(src), "computer-database") != 1 {
		t.Fatalf("the simulation's base URL is not the one %s", site)
	}
	src = []byte(strings.Replace(string(src), site, `http.baseUrl("`+srv.URL+`")`, 1))
	script := filepath.Join(tmp, "computerdatabase", "ComputerDatabaseSimulation.java")
	feed, err := os.ReadFile(filepath.Join(fx, "search.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	// The feeder's file, on the class path beside the package.
	if err := os.WriteFile(filepath.Join(tmp, "search.csv"), feed, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "--monitor", "host", "-o", dir, "-q")
	// About half the form posts fail the simulation's own check.
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	s := readSummary(t, dir)
	rows := map[string]int{}
	for i, l := range s.Labels {
		rows[l.Label] = i
	}
	total := s.Labels[rows["TOTAL"]]
	// 12 users × (3 search + 4 pages) requests, and 2 admins' 2 to 4 form requests.
	if n := served.Load(); n != total.Samples || n < 12*7+2*2 || n > 12*7+2*4 {
		t.Errorf("the stand-in answered %d requests, the report counts %d", n, total.Samples)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "tool", "results", "*", "js", "stats.json"))
	if len(logs) != 1 {
		t.Fatalf("Gatling's report: %v", logs)
	}
	names := checkGatlingStats(t, s, logs[0])
	// Home, Search, Select, Page 0–3, Form, Post.
	if names != 9 {
		t.Errorf("%d request names in stats.json, want 9", names)
	}
	if i, ok := rows["Post"]; !ok || s.Labels[i].Samples < 2 {
		t.Errorf("the admins' posts are missing: %v", rows)
	}
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("no host monitor data: %v", err)
	}
}

// checkGatlingStats compares the report's rows with Gatling's own
// js/stats.json (docs/import.md's tolerances) and returns how many
// request names it compared.
func checkGatlingStats(t *testing.T, s *analysis.Summary, stats string) int {
	t.Helper()
	rows := map[string]int{}
	for i, l := range s.Labels {
		rows[l.Label] = i
	}
	b, err := os.ReadFile(stats)
	if err != nil {
		t.Fatal(err)
	}
	type triple struct{ Total, KO json.Number }
	type node struct {
		Type  string `json:"type"`
		Path  string `json:"path"`
		Stats struct {
			N      triple `json:"numberOfRequests"`
			Min    triple `json:"minResponseTime"`
			Max    triple `json:"maxResponseTime"`
			Mean   triple `json:"meanResponseTime"`
			P50    triple `json:"percentiles1"`
			P95    triple `json:"percentiles3"`
			P99    triple `json:"percentiles4"`
			PerSec triple `json:"meanNumberOfRequestsPerSecond"`
		} `json:"stats"`
		Contents map[string]json.RawMessage `json:"contents"`
	}
	var root node
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	num := func(n json.Number) float64 {
		v, err := n.Float64()
		if err != nil {
			t.Fatalf("stats.json number %q: %v", n, err)
		}
		return v
	}
	compare := func(label string, g node) {
		i, ok := rows[label]
		if !ok {
			t.Errorf("Gatling's %q not in the report (%v)", label, rows)
			return
		}
		r := s.Labels[i]
		for _, c := range []struct {
			what      string
			ours, gat float64
			tol       float64
		}{
			{"count", float64(r.Samples), num(g.Stats.N.Total), 0},
			{"KO", float64(r.Errors), num(g.Stats.N.KO), 0},
			{"min", r.MinMs, num(g.Stats.Min.Total), 0},
			{"max", r.MaxMs, num(g.Stats.Max.Total), 0},
			// Gatling prints the mean and the percentiles in whole ms.
			{"mean", r.MeanMs, num(g.Stats.Mean.Total), 0.5 + 0.0005},
			{"p50", r.P50Ms, num(g.Stats.P50.Total), 1},
			{"p95", r.P95Ms, num(g.Stats.P95.Total), 1},
			{"p99", r.P99Ms, num(g.Stats.P99.Total), 1},
			// summary.json keeps three decimals.
			{"rate", r.ThroughputRPS, num(g.Stats.PerSec.Total), 0.0005 + 1e-9},
		} {
			if math.Abs(c.ours-c.gat) > c.tol {
				t.Errorf("%s %s: report %v, Gatling %v", label, c.what, c.ours, c.gat)
			}
		}
	}
	compare("TOTAL", root)
	names := 0
	for _, raw := range root.Contents {
		var c node
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		if c.Type != "REQUEST" {
			t.Errorf("stats.json node %q of type %s: the simulation has no groups", c.Path, c.Type)
			continue
		}
		compare(c.Path, c)
		names++
	}
	return names
}

// splitSimulation is a Java simulation whose user count is a system
// property, so that plateau can divide it among generators.
const splitSimulation = `package split;

import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;

import io.gatling.javaapi.core.*;
import io.gatling.javaapi.http.*;

public class SplitSimulation extends Simulation {
  int users = Integer.getInteger("users", 1);
  HttpProtocolBuilder httpProtocol = http.baseUrl(System.getProperty("base"));
  ScenarioBuilder shop = scenario("shop").repeat(10).on(
      exec(http("cart").get("/cart")).exec(http("pay").post("/pay")).exec(http("flaky").get("/flaky")));
  {
    setUp(shop.injectOpen(atOnceUsers(users))).protocols(httpProtocol);
  }
}
`

// TestRunGatlingGenerators: a simulation that reads its user count from a
// system property, on two generators with --set users=3 (2 and 1 users).
// The merged report's figures equal those Gatling's own reports-only mode
// (gatling -ro) computes from the union of the two simulation.logs, and
// its requests equal those the stand-in answered.
func TestRunGatlingGenerators(t *testing.T) {
	foreignTool(t, "Gatling (with javac)", gatlingInstalled())
	if testing.Short() {
		t.Skip("runs two Gatlings")
	}
	t.Parallel()
	var served atomic.Int64
	srv := countingShop(&served)
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "split", "SplitSimulation.java")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(splitSimulation), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	code, out := runPlateau(t, nil, "run", script, "-J", "base="+srv.URL, "--set", "users=3", "-g", "2", "-o", dir, "-q")
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for i, want := range []string{"-Dusers=2", "-Dusers=1"} {
		b, err := os.ReadFile(filepath.Join(dir, SegmentsDir, fmt.Sprint(i), "run.json"))
		if err != nil || !bytes.Contains(b, []byte(want)) {
			t.Errorf("generator %d did not run with %s: %v", i, want, err)
		}
	}
	s := readSummary(t, dir)
	var total int64
	for _, l := range s.Labels {
		if l.Label == "TOTAL" {
			total = l.Samples
		}
	}
	// 3 users × 10 rounds × 3 requests, every one answered by the stand-in.
	if total != 3*10*3 || served.Load() != total {
		t.Errorf("TOTAL %d, the stand-in answered %d; want %d", total, served.Load(), 3*10*3)
	}
	// Gatling's own report of the union.
	home := os.Getenv("GATLING_HOME")
	if home == "" {
		home = "/tmp/plateau-gatling"
	}
	reports := filepath.Join(tmp, "reports")
	union, err := os.ReadFile(filepath.Join(dir, "tool", "results", "plateau-union", "simulation.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(reports, "union"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(reports, "union", "simulation.log"), union, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", "-cp", filepath.Join(home, "lib", "*"), "io.gatling.app.Gatling", "-ro", "union", "-rf", reports)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gatling -ro: %v\n%s", err, b)
	}
	if n := checkGatlingStats(t, s, filepath.Join(reports, "union", "js", "stats.json")); n != 3 {
		t.Errorf("%d request names compared, want 3", n)
	}
}
