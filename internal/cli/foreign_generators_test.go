package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/executor"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// countingShop is shopServer's stand-in that counts every request it
// answers.
func countingShop(n *atomic.Int64) *httptest.Server {
	shop := shopServer()
	h := shop.Config.Handler
	shop.Close()
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h.ServeHTTP(w, r)
	}))
}

// runPlateau runs the test binary as plateau in a process of its own (the
// generators it starts are the same binary) and returns its exit code and
// output; interrupt, when not nil, is closed to send it SIGINT (Ctrl-C).
func runPlateau(t *testing.T, interrupt <-chan struct{}, args ...string) (int, string) {
	t.Helper()
	cmd := plateauCmd(args...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-interrupt:
			_ = cmd.Process.Signal(os.Interrupt)
		case <-done:
		case <-time.After(5 * time.Minute):
			_ = cmd.Process.Kill()
		}
	}()
	err := cmd.Wait()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, b.String()
}

// keyOf is a JTL row without its user count, which the merged JTL sums.
func keyOf(r map[string]string) string {
	var b strings.Builder
	for _, k := range sortedKeys(r) {
		if k != "allThreads" {
			fmt.Fprintf(&b, "%s=%q,", k, r[k])
		}
	}
	return b.String()
}

// csvRows reads a CSV file with its header: the rows as maps.
func csvRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	h, err := r.Read()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []map[string]string
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		m := map[string]string{}
		for i, v := range rec {
			if i < len(h) {
				m[h[i]] = v
			}
		}
		out = append(out, m)
	}
}

// TestRunJMeterGenerators: a JMeter plan on two local generators. Each
// runs JMeter with half of every Thread Group's threads from one start
// instant; the merged report's per-label figures equal the dashboard
// JMeter itself generates (jmeter -g) from the merged JTL — the union of
// the generators' JTLs — and its counts equal what the stand-in answered.
func TestRunJMeterGenerators(t *testing.T) {
	home, ok := jmeterInstalled()
	foreignTool(t, "JMeter", ok)
	if testing.Short() {
		t.Skip("runs two JMeters")
	}
	t.Parallel()
	var served atomic.Int64
	srv := countingShop(&served)
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	dir := filepath.Join(t.TempDir(), "run")
	plan := copyScript(t, "../importer/jtl/testdata/plan.jmx") // 4 threads in its Thread Group
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out := runPlateau(t, nil, "run", plan, "-J", "port="+port, "-J", "loops=15", "--generators", "2",
		"--monitor", "host", "-o", dir, "-q")
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s", code, out)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusCompleted {
		t.Errorf("status %q (%q)", info.Status, info.Notes)
	}
	// Each generator ran 2 of the 4 threads, from the common instant.
	var segRows int
	var segKeys []string
	var starts []time.Time
	for i := 0; i < 2; i++ {
		seg := filepath.Join(dir, SegmentsDir, strconv.Itoa(i))
		b, err := os.ReadFile(filepath.Join(seg, "tool", "plan-as-run.jmx"))
		if err != nil {
			t.Fatal(err)
		}
		if m := regexp.MustCompile(`ThreadGroup\.num_threads">(\d+)<`).FindSubmatch(b); m == nil || string(m[1]) != "2" {
			t.Errorf("generator %d ran %q threads, want 2", i, m)
		}
		si, err := rundir.ReadInfo(seg)
		if err != nil {
			t.Fatal(err)
		}
		if si.Segment != fmt.Sprintf("%d/2", i) {
			t.Errorf("generator %d's run says segment %q", i, si.Segment)
		}
		rows := csvRows(t, filepath.Join(seg, "tool", "results.jtl"))
		segRows += len(rows)
		first := int64(math.MaxInt64)
		for _, r := range rows {
			segKeys = append(segKeys, keyOf(r))
			ts, _ := strconv.ParseInt(r["timeStamp"], 10, 64)
			first = min(first, ts)
		}
		starts = append(starts, time.UnixMilli(first))
	}
	// Both JMeters started their load at the common instant: their first
	// samples lie within the JVMs' start-up spread, not a run apart.
	if d := starts[0].Sub(starts[1]).Abs(); d > 20*time.Second {
		t.Errorf("the generators' first samples are %s apart", d)
	}
	// The merged JTL holds every row of the generators' JTLs (the user
	// count aside, which it sums), and no other.
	merged := csvRows(t, filepath.Join(dir, "tool", "results.jtl"))
	var mk []string
	maxThreads := 0
	for _, r := range merged {
		n, _ := strconv.Atoi(r["allThreads"])
		maxThreads = max(maxThreads, n)
		mk = append(mk, keyOf(r))
	}
	slices.Sort(mk)
	slices.Sort(segKeys)
	if len(merged) != segRows || !slices.Equal(mk, segKeys) {
		t.Errorf("merged JTL: %d rows, not the %d rows of the generators' JTLs", len(merged), segRows)
	}
	// Each row's user count is the sum of the generators' latest
	// (executor's TestUnion checks the rule row by row): never more than
	// their 2 + 2, and at least one generator's 2.
	if maxThreads < 2 || maxThreads > 4 {
		t.Errorf("merged JTL: at most %d threads, want 2 to 4 (the sum of the generators' 2 + 2 while both run)", maxThreads)
	}
	s := readSummary(t, dir)
	rows := map[string][]float64{}
	var total, requests int64
	for _, l := range s.Labels {
		rows[l.Label] = []float64{float64(l.Samples), float64(l.Errors), l.MinMs, l.MaxMs, l.MeanMs, l.P50Ms, l.P90Ms, l.P95Ms, l.P99Ms}
		switch {
		case l.Label == "TOTAL":
			total = l.Samples
		case strings.HasPrefix(l.Label, "GET ") || strings.HasPrefix(l.Label, "POST "):
			requests += l.Samples
		}
	}
	// 4 threads × 15 loops × 4 requests, every one answered by the
	// stand-in.
	if total != 4*15*4 || requests != total || served.Load() != total {
		t.Errorf("TOTAL %d, requests %d, the stand-in answered %d; want %d", total, requests, served.Load(), 4*15*4)
	}
	checkDashboard(t, ctx, home, filepath.Join(dir, "tool", "results.jtl"), rows, 5)
	if _, err := os.Stat(filepath.Join(dir, "monitor", "host.csv")); err != nil {
		t.Errorf("the parent's host monitor: %v", err)
	}
	for i := 0; i < 2; i++ {
		if _, err := os.Stat(filepath.Join(dir, SegmentsDir, strconv.Itoa(i), "monitor", "host.csv")); err == nil {
			t.Errorf("generator %d ran a monitor of its own", i)
		}
	}
}

// TestRunK6Generators: a k6 script with two scenarios on two local
// generators, split by k6's own execution segments. The merged report's
// totals equal what k6's own summary exports of the two instances add up
// to (count, failures, min, max, the count-weighted mean), its
// percentiles equal k6's definition over the union of both instances'
// raw durations, and its requests equal what the stand-in answered.
func TestRunK6Generators(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	var served atomic.Int64
	srv := countingShop(&served)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script, _ := filepath.Abs("../importer/k6/testdata/script.js")
	code, out := runPlateau(t, nil, "run", script, "-e", "BASE="+srv.URL, "-e", "SECONDS=4", "-g", "2", "-o", dir, "-q")
	if code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("exit %d\n%s", code, out)
	}
	type fig = map[string]float64
	var count, failed, sum, vusMax float64
	lo, hi := math.Inf(1), math.Inf(-1)
	var durations []float64
	for i := 0; i < 2; i++ {
		seg := filepath.Join(dir, SegmentsDir, strconv.Itoa(i), "tool")
		b, err := os.ReadFile(filepath.Join(seg, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var sm struct {
			Metrics map[string]fig `json:"metrics"`
		}
		if err := json.Unmarshal(b, &sm); err != nil {
			t.Fatal(err)
		}
		d := sm.Metrics["http_req_duration"]
		count += d["count"]
		sum += d["avg"] * d["count"]
		lo, hi = min(lo, d["min"]), max(hi, d["max"])
		failed += sm.Metrics["http_req_failed"]["passes"]
		vusMax += sm.Metrics["vus_max"]["max"]
		for _, r := range csvRows(t, filepath.Join(seg, executor.K6Results)) {
			if r["metric_name"] == "http_req_duration" {
				v, _ := strconv.ParseFloat(r["metric_value"], 64)
				durations = append(durations, v)
			}
		}
	}
	// The script's scenarios hold 2 + 2 VUs: each generator had half.
	if vusMax != 4 {
		t.Errorf("the generators' k6 had %v VUs at most together, want the script's 4", vusMax)
	}
	slices.Sort(durations)
	s := readSummary(t, dir)
	var tot, down *float64
	for _, l := range s.Labels {
		switch {
		case l.Label == "TOTAL":
			n := float64(l.Samples)
			tot = &n
			for _, c := range []struct {
				what      string
				ours, k6s float64
				tol       float64
			}{{"count", float64(l.Samples), count, 0}, {"failed", float64(l.Errors), failed, 0},
				// Times are kept to the µs; summary.json's to 0.001 ms.
				{"min", l.MinMs, lo, 0.0005 + 1e-9}, {"max", l.MaxMs, hi, 0.0005 + 1e-9},
				{"mean", l.MeanMs, sum / count, 0.001 + 1e-9},
				{"p50", l.P50Ms, importer.K6Percentile(durations, 50), 0.001 + 1e-9},
				{"p90", l.P90Ms, importer.K6Percentile(durations, 90), 0.001 + 1e-9},
				{"p95", l.P95Ms, importer.K6Percentile(durations, 95), 0.001 + 1e-9},
				{"p99", l.P99Ms, importer.K6Percentile(durations, 99), 0.001 + 1e-9}} {
				if c.k6s == 0 && c.what == "count" || math.Abs(c.ours-c.k6s) > c.tol {
					t.Errorf("TOTAL %s: %v; k6's own (both instances) %v", c.what, c.ours, c.k6s)
				}
			}
		case strings.HasSuffix(l.Label, "/down"):
			n := float64(l.Samples)
			down = &n
		}
	}
	if tot == nil || down == nil {
		t.Fatalf("no TOTAL or no refused-connection label in %v", s.Labels)
	}
	// Every request but the refused connections reached the stand-in.
	if got := *tot - *down; got != float64(served.Load()) {
		t.Errorf("the report has %v requests that reached the stand-in, which answered %d", got, served.Load())
	}
	maxVUs := 0.0
	for _, r := range csvRows(t, filepath.Join(dir, "tool", executor.K6Results)) {
		if r["metric_name"] == "vus" {
			v, _ := strconv.ParseFloat(r["metric_value"], 64)
			maxVUs = max(maxVUs, v)
		}
	}
	// Each vus point is the sum of the instances' latest (executor's
	// TestUnion checks the rule point by point): at most their 2 + 2.
	if maxVUs < 2 || maxVUs > 4 {
		t.Errorf("merged k6.csv: at most %v VUs, want 2 to 4", maxVUs)
	}
}

// TestRunForeignGeneratorsInterrupted: Ctrl-C while two generators run k6
// stops both k6 instances (the stand-in gets nothing more), and the merged
// run is interrupted, with what they sent until then.
func TestRunForeignGeneratorsInterrupted(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	var served atomic.Int64
	srv := countingShop(&served)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script, _ := filepath.Abs("../importer/k6/testdata/script.js")
	interrupt := make(chan struct{})
	go func() {
		// Ctrl-C once both generators' k6 have written results.
		defer close(interrupt)
		deadline := time.Now().Add(3 * time.Minute)
		for time.Now().Before(deadline) {
			n := 0
			for i := 0; i < 2; i++ {
				b, _ := os.ReadFile(filepath.Join(dir, SegmentsDir, strconv.Itoa(i), "tool", executor.K6Results))
				if bytes.Count(b, []byte("http_req_duration")) >= 20 {
					n++
				}
			}
			if n == 2 {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	code, out := runPlateau(t, interrupt, "run", script, "-e", "BASE="+srv.URL, "-e", "SECONDS=600", "-g", "2", "-o", dir, "-q")
	if code != ExitNotHeld {
		t.Fatalf("exit %d, want %d (interrupted)\n%s", code, ExitNotHeld, out)
	}
	// Every k6 has ended: nothing reaches the stand-in any more.
	before := served.Load()
	time.Sleep(1500 * time.Millisecond)
	if after := served.Load(); after != before {
		t.Errorf("the stand-in answered %d requests after the run ended: a generator's k6 still runs", after-before)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusInterrupted {
		t.Errorf("status %q, want interrupted (%q)", info.Status, info.Notes)
	}
	for i := 0; i < 2; i++ {
		si, err := rundir.ReadInfo(filepath.Join(dir, SegmentsDir, strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		if si.Status != rundir.StatusInterrupted {
			t.Errorf("generator %d: status %q", i, si.Status)
		}
	}
	s := readSummary(t, dir)
	for _, l := range s.Labels {
		if l.Label == "TOTAL" && l.Samples < 40 {
			t.Errorf("TOTAL %d: the samples from before the interrupt are not all there", l.Samples)
		}
	}
}

// TestRunLocustGenerators: a locustfile on --generators 2 runs in Locust's
// own distributed mode on this machine — a master and two workers, each
// worker's log kept — and the report's counts equal the master's own
// statistics file. The requests the stand-in answered are those counts,
// or at most one a user more: Locust stops its users at once under a
// master (no graceful stop, whose requests the master would not count),
// so a request in flight then may reach the stand-in uncounted.
func TestRunLocustGenerators(t *testing.T) {
	foreignTool(t, "Locust", locustInstalled())
	t.Parallel()
	var served atomic.Int64
	srv := countingShop(&served)
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script := copyScript(t, "../executor/testdata/locust-quickstart/locustfile.py")
	code, out := runPlateau(t, nil, "run", script, "--set", "target="+srv.URL, "--set", "users=4", "--set", "ramp_up=1s",
		"--set", "duration=6s", "-g", "2", "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, out)
	}
	checkLocustStats(t, dir)
	b, err := os.ReadFile(filepath.Join(dir, "tool", "locust.out.log"))
	if err != nil || !bytes.Contains(b, []byte("2 workers connected")) {
		t.Errorf("Locust's master did not report 2 workers: %v\n%s", err, b)
	}
	for i := 0; i < 2; i++ {
		if w, err := os.ReadFile(filepath.Join(dir, "tool", fmt.Sprintf("locust-worker-%d.log", i))); err != nil || !bytes.Contains(w, []byte("Starting Locust")) {
			t.Errorf("worker %d's log: %v %q", i, err, w)
		}
	}
	var total int64
	for _, l := range readSummary(t, dir).Labels {
		if l.Label == "TOTAL" {
			total = l.Samples
		}
	}
	if d := served.Load() - total; total == 0 || d < 0 || d > 4 {
		t.Errorf("the report counts %d requests, the stand-in answered %d", total, served.Load())
	}
}
