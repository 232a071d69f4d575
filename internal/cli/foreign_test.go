package cli

import (
	"bytes"
	"context"
	"encoding/csv"
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
	"github.com/plateau-perf/plateau/internal/executor"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// foreignTool finds a tool for the foreign-executor tests: it skips when
// the tool is missing, except under CI=true, where it fails.
func foreignTool(t testing.TB, what string, ok bool) {
	t.Helper()
	if ok {
		return
	}
	msg := what + " not installed (scripts/install-test-deps.sh installs it)"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; CI=true, so this fails instead of skipping")
	}
	t.Skip(msg)
}

func jmeterInstalled() (string, bool) {
	home := os.Getenv("JMETER_HOME")
	if home == "" {
		home = "/tmp/plateau-jmeter"
	}
	_, jerr := os.Stat(filepath.Join(home, "bin", "ApacheJMeter.jar"))
	_, err := exec.LookPath("java")
	return home, jerr == nil && err == nil
}

func k6Installed() (string, bool) {
	if p, err := exec.LookPath("k6"); err == nil {
		return p, true
	}
	for _, p := range []string{"/usr/local/bin/k6", "/tmp/k6bin/k6"} {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// shopServer answers the test scripts: /cart, /pay, /text (with "ok" in
// the body), /flaky (500 every 5th time), /items/N.
func shopServer() *httptest.Server {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%5 == 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		fmt.Fprint(w, "ok "+r.URL.Path)
	})
	return httptest.NewServer(mux)
}

// runCLICtx is runCLI with a context (Ctrl-C is its cancellation).
func runCLICtx(ctx context.Context, args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	exe, _ := os.Executable()
	code := Main(ctx, State{Args: args, Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errb,
		Getenv: func(string) (string, bool) { return "", false }, Exe: exe})
	return code, out.String(), errb.String()
}

// TestRunJMeterPlan runs a .jmx plan in JMeter under plateau with a host
// monitor, and checks the report's figures against the dashboard JMeter
// itself generates from the same results (jmeter -g).
func TestRunJMeterPlan(t *testing.T) {
	home, ok := jmeterInstalled()
	foreignTool(t, "JMeter", ok)
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	dir := filepath.Join(t.TempDir(), "run")
	plan := copyScript(t, "../importer/jtl/testdata/plan.jmx")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", plan, "-J", "port="+port, "-J", "loops=25", "--set", "users=3",
		"--monitor", "host", "-o", dir, "-q")
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusCompleted {
		t.Errorf("status %q", info.Status)
	}
	// The override reached JMeter: 3 threads × 25 loops × 4 requests.
	s := readSummary(t, dir)
	var total *float64
	rows := map[string][]float64{}
	for _, l := range s.Labels {
		rows[l.Label] = []float64{float64(l.Samples), float64(l.Errors), l.MinMs, l.MaxMs, l.MeanMs, l.P50Ms, l.P90Ms, l.P95Ms, l.P99Ms}
		if l.Label == "TOTAL" {
			v := float64(l.Samples)
			total = &v
		}
	}
	if total == nil || *total != 3*25*4 {
		t.Fatalf("total %v, want 300 (3 users × 25 loops × 4 requests)", total)
	}
	// JMeter's own dashboard of the same results.
	checkDashboard(t, ctx, home, filepath.Join(dir, "tool", "results.jtl"), rows, 5)
	// The monitor watched the same run.
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("no host monitor data: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "tool", "jmeter.log")); err != nil {
		t.Errorf("JMeter's log not kept: %v", err)
	}
}

// checkDashboard compares the report's per-label rows (count, errors,
// min, max, mean, p50, p90, p95, p99) with the dashboard JMeter itself
// generates from jtl (jmeter -g): at least labels labels, each figure
// equal to the 0.001 ms summary.json keeps.
func checkDashboard(t *testing.T, ctx context.Context, home, jtl string, rows map[string][]float64, labels int) {
	t.Helper()
	dash := filepath.Join(t.TempDir(), "dash")
	cmd := exec.CommandContext(ctx, "java", "-jar", filepath.Join(home, "bin", "ApacheJMeter.jar"), "-g",
		jtl, "-o", dash, "-j", filepath.Join(t.TempDir(), "g.log"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("jmeter -g: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(dash, "statistics.json"))
	if err != nil {
		t.Fatal(err)
	}
	var stats map[string]struct {
		N      float64 `json:"sampleCount"`
		Errors float64 `json:"errorCount"`
		Min    float64 `json:"minResTime"`
		Max    float64 `json:"maxResTime"`
		Mean   float64 `json:"meanResTime"`
		P50    float64 `json:"medianResTime"`
		P90    float64 `json:"pct1ResTime"`
		P95    float64 `json:"pct2ResTime"`
		P99    float64 `json:"pct3ResTime"`
	}
	if err := json.Unmarshal(b, &stats); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for name, st := range stats {
		label := name
		if name == "Total" {
			label = "TOTAL"
		}
		r, ok := rows[label]
		if !ok {
			t.Errorf("dashboard label %q not in the report (%v)", name, rows)
			continue
		}
		want := []float64{st.N, st.Errors, st.Min, st.Max, st.Mean, st.P50, st.P90, st.P95, st.P99}
		for i, what := range []string{"count", "errors", "min", "max", "mean", "p50", "p90", "p95", "p99"} {
			compared++
			// summary.json keeps 0.001 ms; counts, min and max are exact.
			if math.Abs(r[i]-want[i]) > 0.0005+1e-9*math.Abs(want[i]) {
				t.Errorf("%s %s: %v, JMeter's dashboard %v", name, what, r[i], want[i])
			}
		}
	}
	if compared < labels*9 {
		t.Errorf("%d figures compared", compared)
	}
}

// copyScript copies a test script into a temporary directory, so that
// nothing a run writes beside it lands in the repository.
func copyScript(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// interruptWhen cancels ctx once file has at least n lines (Ctrl-C in
// the middle of a run), giving up after limit.
func interruptWhen(ctx context.Context, cancel func(), file string, n int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if b, err := os.ReadFile(file); err == nil && bytes.Count(b, []byte{'\n'}) >= n {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
}

// checkInterrupted: exit code 3, status interrupted, the samples the tool
// wrote before it stopped are in the report.
func checkInterrupted(t *testing.T, dir string, code int, out, errOut string) {
	t.Helper()
	if code != ExitNotHeld {
		t.Fatalf("exit %d, want %d (interrupted)\n%s\n%s", code, ExitNotHeld, out, errOut)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusInterrupted {
		t.Errorf("status %q, want interrupted", info.Status)
	}
	s := readSummary(t, dir)
	if s.Verdict != analysis.VerdictInterrupted {
		t.Errorf("verdict %q", s.Verdict)
	}
	var n int64
	for _, l := range s.Labels {
		if l.Label == "TOTAL" {
			n = l.Samples
		}
	}
	if n == 0 {
		t.Errorf("no samples kept from before the interrupt")
	}
	var said bool
	for _, note := range info.Notes {
		said = said || strings.Contains(note, "interrupted: plateau sent")
	}
	if !said {
		t.Errorf("notes do not say how the tool was stopped: %q", info.Notes)
	}
}

// TestRunJMeterInterrupted: Ctrl-C in the middle of a JMeter run stops
// JMeter, and the run is reported as interrupted with what it did.
func TestRunJMeterInterrupted(t *testing.T) {
	_, ok := jmeterInstalled()
	foreignTool(t, "JMeter", ok)
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	dir := filepath.Join(t.TempDir(), "run")
	plan := copyScript(t, "../importer/jtl/testdata/plan.jmx")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go interruptWhen(ctx, cancel, filepath.Join(dir, "tool", "results.jtl"), 50, 3*time.Minute)
	start := time.Now()
	code, out, errOut := runCLICtx(ctx, "run", plan, "-J", "port="+port, "--set", "users=2", "--set", "duration=600", "-o", dir, "-q")
	if time.Since(start) > 5*time.Minute {
		t.Errorf("took %s: JMeter was not stopped", time.Since(start))
	}
	checkInterrupted(t, dir, code, out, errOut)
}

// TestRunK6Script runs a k6 script under plateau and checks the report
// against k6's own summary export of the same run.
func TestRunK6Script(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script, _ := filepath.Abs("../importer/k6/testdata/script.js")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "-e", "BASE="+srv.URL, "-e", "SECONDS=4", "--monitor", "host", "-o", dir, "-q")
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tool", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Metrics map[string]map[string]any `json:"metrics"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	f := func(m, k string) float64 { v, _ := sum.Metrics[m][k].(float64); return v }
	s := readSummary(t, dir)
	var tot *struct{ n, e, min, max, mean float64 }
	for _, l := range s.Labels {
		if l.Label == "TOTAL" {
			tot = &struct{ n, e, min, max, mean float64 }{float64(l.Samples), float64(l.Errors), l.MinMs, l.MaxMs, l.MeanMs}
		}
	}
	if tot == nil {
		t.Fatal("no TOTAL row")
	}
	for _, c := range []struct {
		what     string
		ours, k6 float64
		tol      float64
	}{{"count", tot.n, f("http_reqs", "count"), 0}, {"failed", tot.e, f("http_req_failed", "passes"), 0},
		{"min", tot.min, f("http_req_duration", "min"), 0.0005 + 1e-9}, {"max", tot.max, f("http_req_duration", "max"), 0.0005 + 1e-9},
		// Values are kept to the µs (0.5 µs) and summary.json to 0.001 ms.
		{"mean", tot.mean, f("http_req_duration", "avg"), 0.001 + 1e-9}} {
		if c.k6 == 0 && c.what == "count" || math.Abs(c.ours-c.k6) > c.tol {
			t.Errorf("%s: %v, k6's summary %v", c.what, c.ours, c.k6)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("no host monitor data: %v", err)
	}
	// The figures above are equal to k6's with k6 given only the system
	// tags the import reads: its rows carry no protocol and no scenario.
	csvOut, err := os.ReadFile(filepath.Join(dir, "tool", "k6.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(csvOut)).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("k6's CSV: %d rows, %v", len(rows), err)
	}
	for i, col := range rows[0] {
		if col != "proto" && col != "scenario" && col != "tls_version" {
			continue
		}
		for _, r := range rows[1:] {
			if r[i] != "" {
				t.Fatalf("k6's CSV rows hold %s %q (k6 given %s): %q", col, r[i], executor.K6SystemTags, r)
			}
		}
	}
}

// TestRunK6Interrupted: Ctrl-C in the middle of a k6 run.
func TestRunK6Interrupted(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script, _ := filepath.Abs("../importer/k6/testdata/script.js")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go interruptWhen(ctx, cancel, filepath.Join(dir, "tool", executor.K6Results), 200, 3*time.Minute)
	code, out, errOut := runCLICtx(ctx, "run", script, "-e", "BASE="+srv.URL, "-e", "SECONDS=600", "-o", dir, "-q")
	checkInterrupted(t, dir, code, out, errOut)
	// k6's graceful stop still writes its summary export.
	if _, err := os.Stat(filepath.Join(dir, "tool", "summary.json")); err != nil {
		t.Errorf("k6 left no summary export after SIGINT: %v", err)
	}
}

// TestRunForeignRefusals: overrides a tool does not take are refused
// before anything runs, naming what it takes, and no run directory is
// left.
func TestRunForeignRefusals(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	for _, c := range []struct {
		script string
		args   []string
		want   string
	}{
		{"a.js", []string{"-J", "x=1"}, "-J sets JMeter properties"},
		{"a.js", []string{"--set", "target=http://127.0.0.1:1"}, "k6 takes --set users, ramp_up, duration, rate"},
		{"a.jmx", []string{"--set", "rate=5"}, "Constant Throughput Timer"},
		{"a.py", []string{"--set", "users=2"}, "give --set duration"},
		{"a.scala", nil, "plateau import gatling"},
		{"a.js", []string{"--generators", "2", "--set", "users=1"}, "users=1 on 2 generators"},
		{"a.jmx", []string{"--generators", "2"}, "Thread Group"},
	} {
		p := filepath.Join(tmp, c.script)
		if err := os.WriteFile(p, []byte("<x/>"), 0o644); err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, "run-"+c.script)
		code, _, errOut := runCLI(t, append([]string{"run", p, "-o", dir}, c.args...)...)
		if code == ExitOK || !strings.Contains(errOut, c.want) {
			t.Errorf("%s %v: exit %d, %q; want an error with %q", c.script, c.args, code, errOut, c.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%s %v: left a run directory", c.script, c.args)
		}
	}
}

func locustInstalled() bool {
	if _, err := exec.LookPath("locust"); err == nil {
		return true
	}
	_, err := os.Stat("/opt/plateau-locust/bin/locust")
	return err == nil
}

// TestRunLocust runs a locustfile (a LoadTestShape of 2 then 4 users)
// under plateau and checks every name's count and failures against
// Locust's own stats CSV of the same run.
func TestRunLocust(t *testing.T) {
	foreignTool(t, "Locust", locustInstalled())
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script := copyScript(t, "../importer/locust/testdata/locustfile.py")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "--set", "target="+srv.URL, "--set", "duration=120",
		"-e", "STEP_SECONDS=3", "--monitor", "host", "-o", dir, "-q")
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkLocustStats(t, dir)
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("no host monitor data: %v", err)
	}
}

// TestRunLocustInterrupted: Ctrl-C in the middle of a Locust run.
func TestRunLocustInterrupted(t *testing.T) {
	foreignTool(t, "Locust", locustInstalled())
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script := copyScript(t, "../importer/locust/testdata/locustfile.py")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go interruptWhen(ctx, cancel, filepath.Join(dir, "tool", "locust_stats_history.csv"), 4, 3*time.Minute)
	code, out, errOut := runCLICtx(ctx, "run", script, "--set", "target="+srv.URL, "--set", "duration=600",
		"-e", "STEP_SECONDS=300", "-o", dir, "-q")
	checkInterrupted(t, dir, code, out, errOut)
}

// TestRunPlanEngineK6: a plan whose workload runs a k6 script: the plan's
// load reaches k6 (--vus, --duration), its monitors watch the run, its SLA
// is judged on k6's results and its prepare command runs first.
func TestRunPlanEngineK6(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	tmp := t.TempDir()
	script := copyScript(t, "../importer/k6/testdata/script.js")
	planPath := filepath.Join(tmp, "plan.yaml")
	marker := filepath.Join(tmp, "prepared")
	src := fmt.Sprintf(`name: k6 under plateau
target: %s
prepare:
  - {name: mark, run: "touch %s"}
monitor:
  targets:
    - host: {}
workloads:
  shop:
    engine: k6
    script: %s
    env: {BASE: %s}
    load: {users: 3, duration: 3s}
sla:
  - error_rate < 50%%
  - p95(response_time) < 1ms
`, srv.URL, marker, script, srv.URL)
	if err := os.WriteFile(planPath, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", planPath, "-o", dir, "-q")
	// p95 < 1 ms cannot hold against a server that sleeps 2 ms: the SLA
	// is judged, and fails.
	if code != ExitSLAFailed {
		t.Fatalf("exit %d, want %d (SLA failed)\n%s\n%s", code, ExitSLAFailed, out, errOut)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("prepare command did not run: %v", err)
	}
	s := readSummary(t, dir)
	if len(s.SLA) != 2 || !s.SLA[0].Passed || s.SLA[1].Passed {
		t.Errorf("SLA %+v: want error_rate held and p95 failed", s.SLA)
	}
	// The plan's load reached k6: 3 VUs.
	max := 0
	d, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range d.Users {
		max = maxInt(max, u.Total)
	}
	if max != 3 {
		t.Errorf("max users %d, the plan asked for 3", max)
	}
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("the plan's host monitor did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.PlanFile)); err != nil {
		t.Errorf("no plan copy in the run directory: %v", err)
	}
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// quickPizza stands in for Grafana's QuickPizza demo on loopback: GET /
// and POST /api/pizza, which answers a pizza of 3 to 6 ingredients.
func quickPizza() *httptest.Server {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/api/pizza", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "method", http.StatusMethodNotAllowed)
			return
		}
		k := int(n.Add(1)%4) + 3
		ing := make([]map[string]any, k)
		for i := range ing {
			ing[i] = map[string]any{"name": fmt.Sprintf("ingredient %d", i)}
		}
		time.Sleep(3 * time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"pizza": map[string]any{"name": "Loopback Special", "ingredients": ing}})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "QuickPizza") })
	return httptest.NewServer(mux)
}

// TestRunK6PublicScript runs k6's public QuickPizza thresholds example
// (internal/executor/testdata/quickpizza) under plateau with a monitor:
// the report's figures equal k6's summary export, and k6's thresholds are
// reported beside plateau's SLA.
func TestRunK6PublicScript(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv := quickPizza()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script := copyScript(t, "../executor/testdata/quickpizza/05.thresholds.js")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "-e", "BASE_URL="+srv.URL, "--set", "users=3", "--set", "duration=4s",
		"--monitor", "host", "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tool", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Metrics map[string]map[string]any `json:"metrics"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	f := func(m, k string) float64 { v, _ := sum.Metrics[m][k].(float64); return v }
	s := readSummary(t, dir)
	rows := map[string]float64{}
	for _, l := range s.Labels {
		if l.Label == "TOTAL" {
			rows["count"], rows["failed"], rows["min"], rows["max"], rows["mean"] = float64(l.Samples), float64(l.Errors), l.MinMs, l.MaxMs, l.MeanMs
		}
		if l.Label == "POST /api/pizza" {
			rows["pizza"] = float64(l.Samples)
		}
	}
	for _, c := range []struct {
		what string
		k6   float64
		tol  float64
	}{{"count", f("http_reqs", "count"), 0}, {"failed", f("http_req_failed", "passes"), 0},
		{"min", f("http_req_duration", "min"), 0.0005 + 1e-9}, {"max", f("http_req_duration", "max"), 0.0005 + 1e-9},
		// Values are kept to the µs (0.5 µs) and summary.json to 0.001 ms.
		{"mean", f("http_req_duration", "avg"), 0.001 + 1e-9}} {
		if math.Abs(rows[c.what]-c.k6) > c.tol {
			t.Errorf("%s: %v, k6's summary %v", c.what, rows[c.what], c.k6)
		}
	}
	// One GET / in setup, the rest are pizzas, one per iteration.
	if rows["pizza"] != f("iterations", "count") || rows["pizza"] < 3 {
		t.Errorf("%v pizzas, k6 ran %v iterations", rows["pizza"], f("iterations", "count"))
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	var th string
	for _, n := range info.Notes {
		if strings.HasPrefix(n, "k6's own thresholds") {
			th = n
		}
	}
	for _, w := range []string{"http_req_duration p(95)<500: held", "http_req_failed rate<0.01: held", "quickpizza_ingredients avg<8: held"} {
		if !strings.Contains(th, w) {
			t.Errorf("thresholds note %q lacks %q", th, w)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("no host monitor data: %v", err)
	}
}

// checkLocustStats compares every name's count and failures in the report
// with Locust's own stats CSV of the run.
func checkLocustStats(t *testing.T, dir string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tool", "locust_stats.csv"))
	if err != nil {
		t.Fatal(err)
	}
	// Locust's stats: Type,Name,Request Count,Failure Count,… per name,
	// and the Aggregated row.
	want := map[string][2]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(line, ",")
		if len(f) < 4 {
			continue
		}
		name := strings.TrimSpace(f[0] + " " + f[1])
		if f[1] == "Aggregated" {
			name = "TOTAL"
		}
		want[name] = [2]string{f[2], f[3]}
	}
	s := readSummary(t, dir)
	got := map[string][2]string{}
	for _, l := range s.Labels {
		got[l.Label] = [2]string{fmt.Sprint(l.Samples), fmt.Sprint(l.Errors)}
	}
	if len(want) < 3 {
		t.Fatalf("Locust's stats: %q", b)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: plateau %v (count, failures), Locust %v", name, got[name], w)
		}
	}
}

// TestRunLocustPublicScript runs Locust's public quickstart locustfile
// (internal/executor/testdata/locust-quickstart) under plateau.
func TestRunLocustPublicScript(t *testing.T) {
	foreignTool(t, "Locust", locustInstalled())
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script := copyScript(t, "../executor/testdata/locust-quickstart/locustfile.py")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "--set", "target="+srv.URL, "--set", "users=4", "--set", "ramp_up=1s",
		"--set", "duration=6s", "--monitor", "host", "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkLocustStats(t, dir)
	s := readSummary(t, dir)
	names := map[string]bool{}
	for _, l := range s.Labels {
		names[l.Label] = true
	}
	for _, n := range []string{"POST /login", "GET /item"} {
		if !names[n] {
			t.Errorf("no %q in %v", n, names)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("no host monitor data: %v", err)
	}
}

// TestRunK6BrokenScript: a script the tool rejects gives a clear error
// naming the tool's exit code and its output, and a run marked failed.
func TestRunK6BrokenScript(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "broken.js")
	if err := os.WriteFile(script, []byte("export default function () { this is not javascript }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "-o", dir, "-q")
	if code != ExitError || !strings.Contains(errOut, "k6 exited with code") || !strings.Contains(errOut, "k6.out.log") {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusFailed {
		t.Errorf("status %q, want failed", info.Status)
	}
	b, err := os.ReadFile(filepath.Join(dir, "tool", "k6.out.log"))
	if err != nil || !bytes.Contains(b, []byte("SyntaxError")) && !bytes.Contains(b, []byte("error")) {
		t.Errorf("k6's output not kept: %v %q", err, b)
	}
}

// TestForeignNotDistributed: what cannot be split across generators is
// refused with a message saying why and the way on, before anything runs
// — never run on one generator: a Locust segment (its master must see all
// workers: --generators, --locust-master and plateau k8s run Locust's own
// master and workers), a Gatling simulation whose user count is not a system
// property, a JMeter plan whose threads are not a number, fewer users
// than generators, and --generators with --segment.
func TestForeignNotDistributed(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	for f, src := range map[string]string{"s.js": "x", "l.py": "x", "S.java": "x",
		"p.jmx": `<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="tg"><stringProp name="ThreadGroup.num_threads">${__P(threads,4)}</stringProp></ThreadGroup>`} {
		if err := os.WriteFile(filepath.Join(tmp, f), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	planPath := filepath.Join(tmp, "plan.yaml")
	if err := os.WriteFile(planPath, []byte(`name: engine
target: http://127.0.0.1:1
workloads:
  shop:
    engine: locust
    script: l.py
    load: {users: 2, duration: 5s}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	const locustWhy, locustWay = "Locust's whole-run statistics are its master's", "--locust-master"
	const gatlingWhy, gatlingWay = "Gatling's injection profile is the simulation's own code", "gatling -ro"
	for i, c := range []struct {
		args     []string
		why, way string
	}{
		{[]string{"run", filepath.Join(tmp, "l.py"), "--segment", "0/2"}, locustWhy, locustWay},
		{[]string{"run", filepath.Join(tmp, "S.java"), "-g", "3"}, gatlingWhy, gatlingWay},
		{[]string{"run", planPath, "--segment", "1/2"}, locustWhy, locustWay},
		{[]string{"k8s", filepath.Join(tmp, "S.java"), "-g", "2", "--image", "x"}, gatlingWhy, gatlingWay},
		{[]string{"run", filepath.Join(tmp, "p.jmx"), "-g", "2"}, `"${__P(threads,4)}" threads`, "--set users=N"},
		{[]string{"k8s", filepath.Join(tmp, "p.jmx"), "-g", "2", "--image", "x"}, `"${__P(threads,4)}" threads`, "--set users=N"},
		{[]string{"run", filepath.Join(tmp, "s.js"), "-g", "3", "--set", "users=2"}, "users=2 on 3 generators", "users=3 or more"},
		{[]string{"run", filepath.Join(tmp, "s.js"), "-g", "2", "--segment", "0/2"}, "exclude each other", "--generators starts the segments itself"},
	} {
		dir := filepath.Join(tmp, fmt.Sprint("run", i))
		args := c.args
		if args[0] == "run" {
			args = append(args, "-o", dir)
		}
		code, out, errOut := runCLI(t, args...)
		if code == ExitOK || !strings.Contains(errOut, c.why) || !strings.Contains(errOut, c.way) {
			t.Errorf("%v: exit %d, %q; want an error with %q and %q", c.args, code, errOut, c.why, c.way)
		}
		if strings.Contains(out, "apiVersion") {
			t.Errorf("%v: printed manifests", c.args)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: left a run directory", c.args)
		}
	}
}
