package cli

import (
	"context"
	"database/sql"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/demo"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// serve runs a demo service on a loopback port until the test ends.
func serve(t *testing.T, fn func(context.Context, net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("demo service did not stop")
		}
	})
	return "http://" + ln.Addr().String()
}

// slowableFront starts the demo's front over back, calling an external-services
// process whose every call takes latency: the setting that slows the demo
// service.
func slowableFront(t *testing.T, back string, latency time.Duration) string {
	t.Helper()
	l := sut.Latency{Kind: sut.LatencyFixed, Median: latency}
	ext, err := sut.NewExternal(sut.ExternalConfig{Seed: 1, Services: []sut.ServiceConfig{{Name: "audit", Latency: l}, {Name: "consent", Latency: l}, {Name: "relation", Latency: l}}})
	if err != nil {
		t.Fatal(err)
	}
	extURL := serve(t, ext.Serve)
	front, err := sut.NewFront(sut.FrontConfig{Secret: "history-test-secret", BackURLs: []string{back}, ExternalURL: extURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = front.Close() })
	return serve(t, front.Serve)
}

// TestHistoryDemoSlowdown: 30 short runs of the demo's plan, the demo
// service slowed from run 15 on (its three external calls take 300 ms each
// instead of 5 ms). A busy test machine can double or triple a 1.5-second
// run's latency by itself (a fast run's p95 rose +150 % from load alone
// once, and the check failed), so the check is given a threshold of 400 %
// (a CI pipeline sets its own for its own noise) and the planted step is
// about +2,000 %: a sleep the load does not shorten, against a fast run's
// tens of milliseconds. history check passes on run 14 and fails as soon as run 15 is
// added; the report finds one change point in the read's response time,
// at run 15; a run added twice is stored once.
func TestHistoryDemoSlowdown(t *testing.T) {
	if testing.Short() {
		t.Skip("30 runs of the demo plan")
	}
	work := t.TempDir()
	const patients = 2000
	back, err := sut.NewBack(context.Background(), sut.BackConfig{DBPath: filepath.Join(work, "cave.db"), Seed: sut.DefaultSeed, Patients: patients})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = back.Close() })
	backURL := serve(t, back.Serve)
	fast, slow := slowableFront(t, backURL, 5*time.Millisecond), slowableFront(t, backURL, 300*time.Millisecond)

	planDir := filepath.Join(work, "plan")
	if err := os.MkdirAll(planDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(planDir, "plan.yaml"), demo.PlanYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	csv, err := os.Create(filepath.Join(planDir, "cpr.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sut.WriteCPRCSV(csv, sut.DefaultSeed, patients); err != nil {
		t.Fatal(err)
	}
	if err := csv.Close(); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(work, "history.db")
	junit := filepath.Join(work, "history.xml")
	const runs, slowFrom = 30, 15
	var dirs []string
	for i := 1; i <= runs; i++ {
		target, release := fast, "r1"
		if i >= slowFrom {
			target, release = slow, "r2"
		}
		dir := filepath.Join(work, fmt.Sprintf("run-%02d", i))
		// The demo's plan, shortened to its first step for 1.5 s (its six
		// steps take two minutes), without the demo's process monitors
		// and access logs (the services run in this process) and so
		// without its requirements on time (the slowed runs break them;
		// here the history is what judges).
		code, out, errOut := runCLI(t, "run", filepath.Join(planDir, "plan.yaml"), "-q", "-o", dir, "--history", db, "--lang", "en",
			"--set", "target="+target,
			"--set", `workloads.read.load.steps=[{name: "1: 2 nodes x 7 threads", users: 3, duration: 1500ms}]`,
			"--set", "monitor.targets=[]", "--set", "server_side.sources=[]",
			"--set", `sla=["error_rate < 1%"]`)
		if code != ExitOK {
			t.Fatalf("run %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
		if !strings.Contains(out, "history:       run ") {
			t.Fatalf("run %d was not added to the history:\n%s\n%s", i, out, errOut)
		}
		// Added again by hand with its tags: the same run, tags merged.
		code, out, errOut = runCLI(t, "history", "add", dir, "--db", db, "--tag", "release="+release, "--tag", fmt.Sprintf("build=%d", 1000+i))
		if code != ExitOK || !strings.Contains(out, "already stored") {
			t.Fatalf("history add of run %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
		dirs = append(dirs, dir)
		switch i {
		case slowFrom - 1:
			code, out, errOut = runCLI(t, "history", "check", "--db", db, "--junit", junit, "--threshold", "400")
			if code != ExitOK {
				t.Fatalf("history check after run %d: exit %d, want 0\n%s\n%s", i, code, out, errOut)
			}
		case slowFrom:
			code, out, errOut = runCLI(t, "history", "check", "--db", db, "--junit", junit, "--threshold", "400")
			if code != ExitSLAFailed || !strings.Contains(out, "WORSE  list allergies p95 (ms)") || !strings.Contains(out, "WORSE  list allergies mean (ms)") {
				t.Fatalf("history check after run %d: exit %d, want 1 naming the read's p95 and mean\n%s\n%s", i, code, out, errOut)
			}
			b, err := os.ReadFile(junit)
			if err != nil {
				t.Fatal(err)
			}
			var suites struct {
				Failures int `xml:"failures,attr"`
				Tests    int `xml:"tests,attr"`
			}
			if err := xml.Unmarshal(b, &suites); err != nil || suites.Failures == 0 || suites.Tests <= suites.Failures {
				t.Errorf("junit after run %d: %+v %v\n%s", i, suites, err, b)
			}
		}
	}
	s, err := history.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := s.Runs(context.Background(), history.Filter{})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) != runs {
		t.Fatalf("%d runs stored after adding each of %d twice", len(stored), runs)
	}
	// The history survives its run directories.
	for _, d := range dirs {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(work, "report")
	// The minimum effect at the check's threshold: a busy machine may
	// slow a stretch of runs by itself, and a search over every (τ, κ)
	// finds such a stretch; the planted step is far larger.
	code, stdout, errOut := runCLI(t, "history", "report", "--db", db, "-o", out, "--min-change", "400")
	if code != ExitOK {
		t.Fatalf("history report: exit %d\n%s\n%s", code, stdout, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "history.json"))
	if err != nil {
		t.Fatal(err)
	}
	var a history.Analysis
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatal(err)
	}
	if len(a.Runs) != runs {
		t.Fatalf("history.json lists %d runs", len(a.Runs))
	}
	checked := 0
	for _, ser := range a.Series {
		for _, cp := range ser.ChangePoints {
			t.Logf("found: %s: before run %d, %+.1f %%, p = %.3f", ser.Name, cp.Run+1, cp.ChangePct, cp.PValue)
		}

		if ser.Label != "list allergies" || ser.Phase != history.WholeRun || (ser.Metric != history.MetricP95 && ser.Metric != history.MetricMean) {
			continue
		}
		checked++
		if len(ser.ChangePoints) != 1 || ser.ChangePoints[0].Run != slowFrom-1 || !ser.ChangePoints[0].Worse {
			t.Errorf("%s: change points %+v, want one, worse, at run %d", ser.Name, ser.ChangePoints, slowFrom)
		}
	}
	if checked != 2 {
		t.Errorf("%d series of the read found, want its p95 and mean", checked)
	}
	md, err := os.ReadFile(filepath.Join(out, "history.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "run 15 (release r2, build 1015)") {
		t.Errorf("history.md does not name run 15 in its change points")
	}
	// show lists every run with its tags.
	code, stdout, _ = runCLI(t, "history", "show", "--db", db, "--label", "list allergies")
	if code != ExitOK || strings.Count(stdout, "release=r2") != runs-slowFrom+1 || !strings.Contains(stdout, "30 runs") {
		t.Errorf("history show: exit %d\n%s", code, stdout)
	}
	// ... and the change points stored as the runs were added (alpha
	// 0.01, 5 % minimum): the read's p95 and mean rose by more than 400 %
	// at run 15 (build 1015), and at no other run by as much (a busy
	// machine may move a stretch of runs less).
	change := regexp.MustCompile(`(p95|mean) ([+-][0-9.]+) %`)
	for _, line := range strings.Split(stdout, "\n") {
		if !strings.Contains(line, "build=") {
			continue
		}
		at15 := strings.Contains(line, "build=1015")
		big := 0
		for _, m := range change.FindAllStringSubmatch(line, -1) {
			if v, _ := strconv.ParseFloat(m[2], 64); v > 400 || v < -80 {
				big++
			}
		}
		if (at15 && big != 2) || (!at15 && big != 0) {
			t.Errorf("history show: the change column is wrong on\n%s", line)
		}
	}
}

// TestHistoryCommandsPostgres: the commands against a real PostgreSQL by
// URL, and their answers to a directory that holds no run and to an empty
// store.
func TestHistoryCommandsPostgres(t *testing.T) {
	dsn := monitortest.Postgres(t)
	code, out, errOut := runCLI(t, "history", "check", "--db", dsn)
	if code != ExitOK || !strings.Contains(out, "no run stored, nothing to compare") {
		t.Errorf("check of an empty store: exit %d\n%s%s", code, out, errOut)
	}
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "history", "add", dir, "--db", dsn, "--tag", "release=quesnelia")
	if code != ExitError || !strings.Contains(errOut, "no summary.json") || !strings.Contains(errOut, dir) {
		t.Errorf("adding a run without summary.json: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := runCLI(t, "report", dir); code != ExitSLAFailed && code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	empty := t.TempDir()
	code, out, errOut = runCLI(t, "history", "add", dir, empty, "--db", dsn, "--tag", "release=quesnelia")
	if code != ExitError || !strings.Contains(out, "added "+dir) || !strings.Contains(errOut, empty) {
		t.Errorf("adding a run and a directory without one: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "history", "show", "--db", dsn, "--tag", "release=quesnelia")
	if code != ExitOK || !strings.Contains(out, "release=quesnelia") || !strings.Contains(out, "1 runs") {
		t.Errorf("show: exit %d\n%s%s", code, out, errOut)
	}
	// A role that may only read (as a Grafana data source's) sees the
	// runs and what is stored; a run added without its change points
	// (another tool, an older plateau) cannot be recomputed by it, which
	// it is told, not refused.
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"CREATE ROLE reader LOGIN", "GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	hs, err := history.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	second := t.TempDir()
	if err := reporttest.Write(second, reporttest.Options{Seed: 2}); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "report", second); code != ExitSLAFailed && code != ExitOK {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	r, err := history.FromDir(second, map[string]string{"release": "quesnelia"})
	if err != nil {
		t.Fatal(err)
	}
	r.ID += "-second"
	if _, err := hs.Add(context.Background(), r, time.Now()); err != nil {
		t.Fatal(err)
	}
	hs.Close()
	reader := strings.Replace(dsn, "postgres://postgres@", "postgres://reader@", 1)
	code, out, errOut = runCLI(t, "history", "show", "--db", reader, "--tag", "release=quesnelia")
	if code != ExitOK || !strings.Contains(out, "2 runs") || !strings.Contains(errOut, "the change points shown are those stored") {
		t.Errorf("show as a reader of a store whose change points are stale: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "history", "show", "--db", dsn, "--since", "yesterday")
	if code != ExitError || !strings.Contains(errOut, `--since "yesterday"`) {
		t.Errorf("show --since yesterday: exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, "history", "report", "--db", dsn)
	if code != ExitError || !strings.Contains(errOut, "out") {
		t.Errorf("report without -o: exit %d\n%s%s", code, out, errOut)
	}
}
