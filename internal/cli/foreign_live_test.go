package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/executor"
	"github.com/plateau-perf/plateau/internal/output/promtest"
)

// countingServer is shopServer counting the requests it has answered.
func countingServer() (*httptest.Server, *atomic.Int64) {
	shop := shopServer()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		shop.Config.Handler.ServeHTTP(w, r)
		n.Add(1)
	}))
	srv.Config.RegisterOnShutdown(shop.Close)
	return srv, &n
}

// scrapeRequests sums plateau_requests_total over its series; ok is false
// when /metrics does not answer.
func scrapeRequests(addr string) (float64, bool) {
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, false
	}
	var sum float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "plateau_requests_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err == nil {
			sum += v
		}
	}
	return sum, sc.Err() == nil
}

// waitFor polls cond until it holds, failing the test after limit (a
// bound for a broken run, not a timing assertion).
func waitFor(t *testing.T, what string, limit time.Duration, done <-chan runOutcome, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		select {
		case o := <-done:
			t.Fatalf("the run ended before %s: exit %d\n%s\n%s", what, o.code, o.stdout, o.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s", what, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkLiveMidRun runs a foreign script with --listen and, while the tool
// runs, checks /metrics against what the tool has written and what the
// server has answered: once the server has answered `need` requests, the
// live count catches up with the tool's file as it was then, and at every
// reading live ≤ written ≤ answered (each read after the one before it).
// Then Ctrl-C: the run is interrupted, and the final scrape equals the
// report's total.
func checkLiveMidRun(t *testing.T, dir string, args []string, served *atomic.Int64, need int64, written func() int64) {
	t.Helper()
	addr := promtest.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan runOutcome, 1)
	go func() {
		var o runOutcome
		o.code, o.stdout, o.stderr = runCLICtx(ctx, append(append([]string{"run"}, args...), "--listen", addr, "-o", dir, "-q")...)
		done <- o
	}()
	waitFor(t, fmt.Sprintf("%d requests at the server", need), 3*time.Minute, done, func() bool { return served.Load() >= need })
	// What the tool had written by now reaches /metrics while it runs.
	var w0 int64
	waitFor(t, "requests written by the tool", 2*time.Minute, done, func() bool { w0 = written(); return w0 > 0 })
	var live float64
	waitFor(t, fmt.Sprintf("live count of at least %d (written by the tool)", w0), 2*time.Minute, done, func() bool {
		v, ok := scrapeRequests(addr)
		live = v
		return ok && v >= float64(w0)
	})
	for i := 0; i < 3; i++ {
		l, ok := scrapeRequests(addr)
		w := written()
		s := served.Load()
		if !ok || l < live || l > float64(w) || w > s {
			t.Errorf("reading %d: live %v (before %v), written by the tool %d, answered by the server %d: want live ≤ written ≤ answered", i, l, live, w, s)
		}
		live = l
		time.Sleep(300 * time.Millisecond)
	}
	select {
	case o := <-done:
		t.Fatalf("the run ended during the live checks (exit %d): they were not mid-run", o.code)
	default:
	}
	cancel()
	// Scrape until plateau ends: it waits for a scrape of the final
	// counters before it does.
	var final float64
	var o runOutcome
	for ended := false; !ended; {
		select {
		case o = <-done:
			ended = true
		default:
			if v, ok := scrapeRequests(addr); ok {
				final = v
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	checkInterrupted(t, dir, o.code, o.stdout, o.stderr)
	s := readSummary(t, dir)
	for _, l := range s.Labels {
		if l.Label == "TOTAL" && float64(l.Samples) != final {
			t.Errorf("final /metrics count %v, report's total %d", final, l.Samples)
		}
	}
}

// TestRunK6Live: k6's CSV output is read as k6 writes it.
func TestRunK6Live(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv, served := countingServer()
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "live.js")
	if err := os.WriteFile(script, []byte(`import http from 'k6/http';
import { sleep } from 'k6';
export default function () {
  http.get(__ENV.BASE + '/cart');
  http.get(__ENV.BASE + '/flaky');
  sleep(0.05);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	// Requests in k6's stream: its http_req_duration points, whole lines.
	written := func() int64 {
		return countMatching(filepath.Join(dir, "tool", executor.K6Results), func(line []byte) bool {
			return bytes.HasPrefix(line, []byte("http_req_duration,"))
		})
	}
	checkLiveMidRun(t, dir, []string{script, "-e", "BASE=" + srv.URL, "--set", "users=3", "--set", "duration=10m"}, served, 300, written)
}

// TestRunJMeterLive: JMeter's CSV JTL is read as JMeter writes it.
func TestRunJMeterLive(t *testing.T) {
	_, ok := jmeterInstalled()
	foreignTool(t, "JMeter", ok)
	t.Parallel()
	srv, served := countingServer()
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	plan := copyScript(t, "../importer/jtl/testdata/plan.jmx")
	dir := filepath.Join(t.TempDir(), "run")
	// Requests in the JTL: its lines but the header and the Transaction
	// Controller's samples.
	written := func() int64 {
		return countMatching(filepath.Join(dir, "tool", "results.jtl"), func(line []byte) bool {
			return !bytes.HasPrefix(line, []byte("timeStamp,")) && !bytes.Contains(line, []byte("Number of samples in transaction"))
		})
	}
	checkLiveMidRun(t, dir, []string{plan, "-J", "port=" + port, "--set", "users=2", "--set", "duration=600"}, served, 300, written)
}

// TestRunLocustLive: Locust's stats history is read as Locust writes it.
func TestRunLocustLive(t *testing.T) {
	foreignTool(t, "Locust", locustInstalled())
	t.Parallel()
	srv, served := countingServer()
	defer srv.Close()
	script := copyScript(t, "../executor/testdata/locust-quickstart/locustfile.py")
	dir := filepath.Join(t.TempDir(), "run")
	// Requests in the history: the last whole Aggregated row's total.
	written := func() int64 {
		b, _ := os.ReadFile(filepath.Join(dir, "tool", "locust_stats_history.csv"))
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			b = b[:i+1]
		} else {
			return 0
		}
		r := csv.NewReader(bytes.NewReader(b))
		r.FieldsPerRecord = -1
		rows, err := r.ReadAll()
		if err != nil || len(rows) < 2 {
			return 0
		}
		col := -1
		for i, h := range rows[0] {
			if h == "Total Request Count" {
				col = i
			}
		}
		var n int64
		for _, row := range rows[1:] {
			if len(row) > col && col >= 0 && row[3] == "Aggregated" {
				n, _ = strconv.ParseInt(row[col], 10, 64)
			}
		}
		return n
	}
	checkLiveMidRun(t, dir, []string{script, "--set", "target=" + srv.URL, "--set", "users=12", "--set", "ramp_up=1s", "--set", "duration=600"},
		served, 60, written)
}

// countMatching counts the whole lines of path that match.
func countMatching(path string, match func([]byte) bool) int64 {
	b, _ := os.ReadFile(path)
	var n int64
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break // a line being written
		}
		if match(b[:i]) {
			n++
		}
		b = b[i+1:]
	}
	return n
}

func gatlingInstalled() bool {
	home := os.Getenv("GATLING_HOME")
	if home == "" {
		home = "/tmp/plateau-gatling"
	}
	m, _ := filepath.Glob(filepath.Join(home, "lib", "gatling-app-*.jar"))
	_, jerr := exec.LookPath("javac")
	return len(m) > 0 && jerr == nil
}

// TestRunGatling runs a Java simulation in Gatling 3.9.5 under plateau
// with a host monitor and --listen: the report counts every request the
// loopback server answered, and its per-request figures equal the
// stats.json of the report Gatling generated itself.
func TestRunGatling(t *testing.T) {
	foreignTool(t, "Gatling (with javac)", gatlingInstalled())
	t.Parallel()
	srv, served := countingServer()
	defer srv.Close()
	tmp := t.TempDir()
	src, err := os.ReadFile("../importer/gatling/testdata/sim/LoopbackSimulation.java")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(tmp, "sim", "LoopbackSimulation.java")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	addr := promtest.FreePort(t)
	code, out, errOut := runCLICtx(ctx, "run", script, "-J", "base="+srv.URL, "--monitor", "host", "--listen", addr, "-o", dir, "-q")
	// The simulation's third request expects 404 and gets 200: KO.
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	s := readSummary(t, dir)
	rows := map[string][3]float64{}
	for _, l := range s.Labels {
		rows[l.Label] = [3]float64{float64(l.Samples), float64(l.Errors), l.MaxMs}
	}
	// 20 users × 3 requests.
	if n := served.Load(); n != 60 || rows["TOTAL"][0] != float64(n) {
		t.Errorf("server answered %d requests, the report counts %v (want 60 each)", n, rows["TOTAL"][0])
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "tool", "results", "*", "js", "stats.json"))
	if len(logs) != 1 {
		t.Fatalf("Gatling's report: %v", logs)
	}
	b, err := os.ReadFile(logs[0])
	if err != nil {
		t.Fatal(err)
	}
	var st struct {
		Contents map[string]struct {
			Name  string `json:"name"`
			Stats struct {
				N   struct{ Total any } `json:"numberOfRequests"`
				Max struct{ Total any } `json:"maxResponseTime"`
			} `json:"stats"`
			Contents map[string]json.RawMessage `json:"contents"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for _, c := range st.Contents {
		label := c.Name
		if len(c.Contents) > 0 {
			continue // a group: the importer's test compares groups
		}
		r, ok := rows[label]
		if !ok {
			t.Errorf("Gatling's %q not in the report (%v)", label, rows)
			continue
		}
		if fmt.Sprint(c.Stats.N.Total) != fmt.Sprint(r[0]) || fmt.Sprint(c.Stats.Max.Total) != fmt.Sprint(r[2]) {
			t.Errorf("%s: report count %v max %v, Gatling %v, %v", label, r[0], r[2], c.Stats.N.Total, c.Stats.Max.Total)
		}
		compared++
	}
	if compared < 2 || rows["missing"][1] != 20 {
		t.Errorf("%d requests compared; missing KO %v (want 20)", compared, rows["missing"][1])
	}
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("no host monitor data: %v", err)
	}
}

// TestRunGatlingLive: Gatling's simulation.log is read as Gatling writes
// it (in its own buffered bursts), and Ctrl-C stops Gatling with what it
// wrote reported as an interrupted run.
func TestRunGatlingLive(t *testing.T) {
	foreignTool(t, "Gatling (with javac)", gatlingInstalled())
	t.Parallel()
	srv, served := countingServer()
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "sim", "LongSimulation.java")
	if err := os.MkdirAll(filepath.Dir(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte(`package sim;

import static io.gatling.javaapi.core.CoreDsl.*;
import static io.gatling.javaapi.http.HttpDsl.*;

import io.gatling.javaapi.core.*;
import io.gatling.javaapi.http.*;
import java.time.Duration;

public class LongSimulation extends Simulation {
  HttpProtocolBuilder httpProtocol = http.baseUrl(System.getProperty("base"));
  ScenarioBuilder scn = scenario("long").forever().on(exec(http("cart").get("/cart")).pause(Duration.ofMillis(10)));
  {
    setUp(scn.injectOpen(atOnceUsers(3))).protocols(httpProtocol).maxDuration(Duration.ofMinutes(10));
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	// Requests in the log: its whole REQUEST lines.
	written := func() int64 {
		logs, _ := filepath.Glob(filepath.Join(dir, "tool", "results", "*", "simulation.log"))
		if len(logs) != 1 {
			return 0
		}
		return countMatching(logs[0], func(line []byte) bool { return bytes.HasPrefix(line, []byte("REQUEST\t")) })
	}
	checkLiveMidRun(t, dir, []string{script, "-J", "base=" + srv.URL}, served, 300, written)
}

// TestRunPlanEngineLive: a plan's k6 workload feeds --listen as a script
// run does.
func TestRunPlanEngineLive(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv, served := countingServer()
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "live.js")
	if err := os.WriteFile(script, []byte(`import http from 'k6/http';
import { sleep } from 'k6';
export default function () {
  http.get(__ENV.BASE + '/cart');
  sleep(0.05);
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	planPath := filepath.Join(tmp, "plan.yaml")
	if err := os.WriteFile(planPath, []byte(fmt.Sprintf(`name: k6 live
target: %s
workloads:
  shop:
    engine: k6
    script: live.js
    env: {BASE: %s}
    load: {users: 2, duration: 10m}
sla:
  - error_rate < 1%%
`, srv.URL, srv.URL)), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	written := func() int64 {
		return countMatching(filepath.Join(dir, "tool", executor.K6Results), func(line []byte) bool {
			return bytes.HasPrefix(line, []byte("http_req_duration,"))
		})
	}
	checkLiveMidRun(t, dir, []string{planPath}, served, 200, written)
}
