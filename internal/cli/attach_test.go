package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// serveSUT runs one demo service on a loopback port until the test ends.
func serveSUT(t *testing.T, serve func(context.Context, net.Listener) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// logLine is one line of the demo front's access log: completion time and
// status, as the server wrote them.
type logLine struct {
	end    time.Time
	status int
	ms     float64
}

func readAccessLog(t *testing.T, path string) []logLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []logLine
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text()) // sut.AccessLogFormat
		if len(fs) != 7 {
			t.Fatalf("access log line %q: want 7 fields (%s)", sc.Text(), sut.AccessLogFormat)
		}
		end, err := time.Parse(sut.TimeLayout, fs[0])
		if err != nil {
			t.Fatal(err)
		}
		st, _ := strconv.Atoi(fs[3])
		ms, _ := strconv.ParseFloat(fs[4], 64)
		out = append(out, logLine{end: end, status: st, ms: ms})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// A short stepped live run against the demo's front service (real access
// log and external-call log, real back with its SQLite store, external
// services failing now and then) with the front's logs attached: the
// report's server-side table counts per status what the front itself
// counted, splits the calls per step exactly as the run's phases do by
// core.PhaseOf on the log's own times, and the requirements on server-side
// times are judged on those times.
func TestRunAttachesServerLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live load against the demo services")
	}
	tmp := t.TempDir()
	logs := filepath.Join(tmp, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		t.Fatal(err)
	}
	const patients = 300
	lat := sut.Latency{Kind: sut.LatencyUniform, Min: 500 * time.Microsecond, Max: 2 * time.Millisecond}
	ext, err := sut.NewExternal(sut.ExternalConfig{Seed: 7, Services: []sut.ServiceConfig{
		{Name: "audit", Latency: lat}, {Name: "consent", Latency: lat, FailurePercent: 8}, {Name: "relation", Latency: lat}}})
	if err != nil {
		t.Fatal(err)
	}
	extURL := serveSUT(t, ext.Serve)
	back, err := sut.NewBack(context.Background(), sut.BackConfig{DBPath: filepath.Join(tmp, "cave.db"), Seed: sut.DefaultSeed, Patients: patients})
	if err != nil {
		t.Fatal(err)
	}
	backURL := serveSUT(t, back.Serve)
	accessLog, slaLog := filepath.Join(logs, "front-access.log"), filepath.Join(logs, "front-sla.log")
	front, err := sut.NewFront(sut.FrontConfig{Secret: "attach-test", BackURLs: []string{backURL}, ExternalURL: extURL,
		AccessLog: accessLog, ExternalLog: slaLog, FlushInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	frontURL := serveSUT(t, front.Serve)

	planDir := filepath.Join(tmp, "study")
	if err := os.MkdirAll(planDir, 0o755); err != nil {
		t.Fatal(err)
	}
	csv, err := os.Create(filepath.Join(planDir, "cpr.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sut.WriteCPRCSV(csv, sut.DefaultSeed, patients); err != nil {
		t.Fatal(err)
	}
	csv.Close()
	// Every status the front answers: 200, 400 (malformed cpr), 401 (no
	// token), 404 (unknown cpr) and 500 (a failed external call).
	planPath := filepath.Join(planDir, "plan.yaml")
	plan := fmt.Sprintf(`name: attach
target: %s
data:
  patients: {csv: cpr.csv, on_exhausted: recycle}
workloads:
  read:
    scenario:
      - request:
          name: login
          method: POST
          url: /token
          json: {user: perf}
          extract: {token: {json: "$.access_token"}}
      - request: {name: read, url: "/allergies?cpr=${patients.cpr}", headers: {Authorization: "Bearer ${token}"}}
      - request: {name: malformed, url: "/allergies?cpr=12", headers: {Authorization: "Bearer ${token}"}}
      - request: {name: no token, url: "/allergies?cpr=${patients.cpr}"}
      - request: {name: unknown, url: "/allergies?cpr=9999999999", headers: {Authorization: "Bearer ${token}"}}
      - think: 20ms
    load:
      steps:
        - {name: s1, users: 2, duration: 1500ms}
        - {name: s2, users: 5, duration: 1500ms}
server_side:
  settle: 400ms
  sources:
    - accesslog: {name: front, path: ../logs/front-access.log, format: plateau, external: ../logs/front-sla.log}
sla:
  - 'avg(server_time{server="front"}) < 1us'
  - 'avg(server_time_net) < 60s during "s2"'
`, frontURL)
	if err := os.WriteFile(planPath, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(tmp, "run")
	code, stdout, stderr := runCLI(t, "run", planPath, "-o", run, "-q")
	if code != ExitSLAFailed {
		t.Fatalf("exit %d, want %d (the server_time requirement fails)\nstdout:\n%s\nstderr:\n%s", code, ExitSLAFailed, stdout, stderr)
	}
	served := front.Served()
	info, err := rundir.ReadInfo(run)
	if err != nil {
		t.Fatal(err)
	}
	s := readSummary(t, run)
	ss := s.ServerSide
	if ss == nil {
		t.Fatalf("summary.json has no server_side\nstderr:\n%s", stderr)
	}
	for _, st := range []int{200, 400, 401, 404, 500} {
		if served[st] == 0 {
			t.Errorf("the front served no %d: the test does not cover every status (served %v)", st, served)
		}
	}
	// Per status over the run: exactly the front's own tally.
	got := map[int]int64{}
	for _, r := range ss.Rows {
		if r.Server == "front" && r.Phase == "" {
			got[r.Status] += r.Count
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(served) {
		t.Errorf("server-side totals per status %v, the front counted %v", got, served)
	}
	// Per step: each log line in the phase core.PhaseOf gives its logged
	// completion time, among the run's own phases.
	phases := info.CorePhases(*info.End)
	lines := readAccessLog(t, accessLog)
	want := map[string]int64{}
	var sumUs, n int64
	for _, l := range lines {
		if l.end.Before(info.Start) || l.end.After(*info.End) {
			continue
		}
		sumUs += int64(math.Round(l.ms * 1000))
		n++
		if i := core.PhaseOf(phases, "", l.end); i >= 0 {
			want[fmt.Sprintf("%s %d", phases[i].Name, l.status)]++
		}
	}
	if n != int64(len(lines)) {
		t.Errorf("%d of %d log lines within the run: the front had no traffic but the run's", n, len(lines))
	}
	gotPhase := map[string]int64{}
	for _, r := range ss.Rows {
		if r.Server == "front" && r.Phase != "" {
			gotPhase[fmt.Sprintf("%s %d", r.Phase, r.Status)] = r.Count
		}
	}
	if fmt.Sprint(gotPhase) != fmt.Sprint(want) || len(want) < 2 {
		t.Errorf("per step and status %v, the log by the run's phases %v", gotPhase, want)
	}
	for _, r := range ss.Rows {
		if r.Server == "front" && r.Status == 200 && (r.NetMeanMs == nil || *r.NetMeanMs > r.MeanMs) {
			t.Errorf("%s 200: time without downstream %v, with %v", r.Phase, r.NetMeanMs, r.MeanMs)
		}
	}
	// The requirements on server-side times, judged as computed.
	if len(s.SLA) != 2 {
		t.Fatalf("SLA results %d, want 2", len(s.SLA))
	}
	full, net := s.SLA[0], s.SLA[1]
	mean := math.Round(float64(sumUs)/float64(n)) / 1000
	if full.Passed || full.NoData || math.Abs(full.Observed-mean) > 0.002 {
		t.Errorf("avg(server_time) < 1us: passed %v, observed %v ms, the log's mean is %v ms (%s)", full.Passed, full.Observed, mean, full.Error)
	}
	if !net.Passed || net.NoData || net.Scope != "s2" || net.Observed <= 0 || net.Observed >= full.Observed {
		t.Errorf("avg(server_time_net) < 60s during s2: passed %v, scope %s, observed %v ms (server_time over the run %v ms) %s",
			net.Passed, net.Scope, net.Observed, full.Observed, net.Error)
	}
	md, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"## Server side", "| front | s1 |", "| All servers | s1 |", "Per step: the client's view and the servers' view"} {
		if !strings.Contains(string(md), w) {
			t.Errorf("report.md lacks %q", w)
		}
	}
}

// Requirements on server-side times are checked before the first request,
// like every other selector.
func TestServerSLACheckedBeforeRun(t *testing.T) {
	dir := t.TempDir()
	base := `name: check
target: http://127.0.0.1:9
workloads:
  w:
    scenario: [{request: {url: /x}}]
    load: {users: 1, iterations: 1}
`
	cases := []struct{ extra, want string }{
		{"sla: ['avg(server_time) < 1s']", "server_time needs an access log attached"},
		{"server_side:\n  sources:\n    - accesslog: {name: web, path: a.log, format: combined_rt}\nsla: ['avg(server_time{server=\"api\"}) < 1s']", `no attached access log of a server named "api"`},
		{"server_side:\n  sources:\n    - accesslog: {name: web, path: a.log, format: combined_rt}\nsla: ['avg(server_time_net) < 1s']", "needs every attached access log joined"},
		{"server_side:\n  sources:\n    - accesslog: {name: web, path: a.log, format: combined_rt}\nsla: ['avg(server_time) < 1s during \"nope\"']", `no phase named "nope"`},
		{"server_side:\n  sources:\n    - accesslog: {name: web, path: a.log, format: combined_rt}\nsla: [{expr: 'avg(server_time) < 1s', abort_on_fail: true}]", "cannot stop the run"},
		{"server_side:\n  sources:\n    - accesslog: {path: a.log}", "no log format"},
		{"server_side:\n  sources:\n    - jmeter: {path: a.jtl}", `unknown server_side kind "jmeter"`},
		{"server_side:\n  sources:\n    - vmstat: {path: cpu.log, colour: red}", `unknown option "colour"`},
		{"server_side:\n  sources:\n    - vmstat: {path: cpu.log, start: '2019-05-13T11:09:36', interval: 10s}", `p8.yaml:9:7: vmstat source: --start "2019-05-13T11:09:36" has no time zone: add one (e.g. 2019-05-13T11:10:14+02:00) or set server_side: tz:`},
	}
	for i, c := range cases {
		p := filepath.Join(dir, fmt.Sprintf("p%d.yaml", i))
		if err := os.WriteFile(p, []byte(base+c.extra+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := runCLI(t, "run", p, "-o", filepath.Join(dir, fmt.Sprintf("r%d", i)), "-q")
		if code != ExitError || !strings.Contains(stderr, c.want) {
			t.Errorf("case %d: exit %d, stderr %q; want exit %d and %q", i, code, stderr, ExitError, c.want)
		}
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("r%d", i))); err == nil {
			t.Errorf("case %d: a run directory was written although the plan was refused", i)
		}
	}
	// server_side.tz gives the zone of times written without one.
	p := filepath.Join(dir, "tz.yaml")
	if err := os.WriteFile(p, []byte(base+"server_side:\n  tz: Europe/Copenhagen\n  sources:\n    - vmstat: {path: cpu.log, start: '2019-05-13T11:09:36', interval: 10s}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "check", p); code != ExitOK {
		t.Errorf("server_side.tz: check exit %d: %s", code, stderr)
	}
	// --attach adds a source the requirement may select.
	p = filepath.Join(dir, "attach.yaml")
	if err := os.WriteFile(p, []byte(base+"sla: ['avg(server_time{server=\"api\"}) < 1s during \"nope\"']\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "run", p, "--attach", "accesslog:api="+filepath.Join(dir, "api.log")+",format=combined_rt", "-o", filepath.Join(dir, "ra"), "-q")
	if code != ExitError || !strings.Contains(stderr, `no phase named "nope"`) {
		t.Errorf("--attach: exit %d, stderr %q; want the server accepted and the phase refused", code, stderr)
	}
}

// vmstat output written while a run goes (vmstat -t, the real program) and
// attached to it joins the run's own monitor data: the report's resources
// have the host's CPU per step.
func TestRunAttachesVmstat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live load and vmstat")
	}
	vm, err := exec.LookPath("vmstat")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("vmstat not found under CI; scripts/install-test-deps.sh installs procps")
		}
		t.Skip("vmstat not installed")
	}
	sb, err := exec.LookPath("stdbuf")
	if err != nil {
		t.Skip("stdbuf (coreutils) not installed")
	}
	tmp := t.TempDir()
	out, err := os.Create(filepath.Join(tmp, "cpu.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// Line-buffered, as a log written by a running vmstat is read while
	// it still runs; UTC, as vmstat names its zone in the header.
	cmd := exec.Command(sb, "-oL", vm, "-n", "-t", "1")
	cmd.Stdout, cmd.Env = out, append(os.Environ(), "TZ=UTC")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	srv, _ := testServer(t)
	p := writePlan(t, fmt.Sprintf(`name: vmstat
target: %s
workloads:
  w:
    scenario: [{request: {url: /x}}, {think: 50ms}]
    load:
      steps:
        - {name: s1, users: 1, duration: 2s}
        - {name: s2, users: 2, duration: 2s}
server_side: {settle: 1500ms}
`, srv.URL))
	run := filepath.Join(tmp, "run")
	code, stdout, stderr := runCLI(t, "run", p, "--attach", "vmstat:db-host="+out.Name(), "-o", run, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Resources []struct {
			Target  string                        `json:"target"`
			Kind    string                        `json:"kind"`
			Phase   *string                       `json:"phase"`
			Metrics map[string]map[string]float64 `json:"metrics"`
		} `json:"resources"`
		ServerSide any `json:"server_side"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	phases := map[string]bool{}
	for _, r := range sum.Resources {
		if r.Target == "db-host" && r.Kind == "host" && r.Phase != nil {
			if _, ok := r.Metrics["cpu_busy_pct"]; ok {
				phases[*r.Phase] = true
			}
		}
	}
	if !phases["s1"] || !phases["s2"] {
		t.Errorf("the attached vmstat's CPU per step: %v, want s1 and s2 (resources %s)", phases, b)
	}
	if sum.ServerSide != nil {
		t.Errorf("server_side %v without an access log, want null", sum.ServerSide)
	}
	md, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "db-host") {
		t.Error("report.md does not show the attached vmstat's host")
	}
}

// A file the plan attaches that is missing after the run is a note, not a
// failure of the run: the client's view stands, the report and the
// server-side requirement say which file could not be read.
func TestRunAttachMissingFile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live load")
	}
	srv, _ := testServer(t)
	p := writePlan(t, fmt.Sprintf(`name: missing
target: %s
workloads:
  w:
    scenario: [{request: {url: /x}}]
    load: {users: 1, iterations: 5}
server_side:
  settle: 0s
  sources:
    - accesslog: {name: web, path: gone/access.log, format: combined_rt}
sla:
  - 'avg(server_time) < 1s'
  - error_rate < 1%%
`, srv.URL))
	run := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", p, "-o", run, "-q")
	if code != ExitSLAFailed {
		t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, ExitSLAFailed, stdout, stderr)
	}
	s := readSummary(t, run)
	if s.Labels[len(s.Labels)-1].Samples != 5 || s.SLA[1].Error != "" || !s.SLA[1].Passed {
		t.Errorf("the client's view does not stand: %+v", s.SLA[1])
	}
	if r := s.SLA[0]; r.Passed || !r.NoData || !strings.Contains(r.Error, "gone/access.log not read") {
		t.Errorf("server_time requirement: passed %v, no data %v, error %q; want it unjudged naming the missing file", r.Passed, r.NoData, r.Error)
	}
	md, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "No server-side data: accesslog") || !strings.Contains(string(md), "gone/access.log not read") {
		t.Error("the report's server side does not say which file could not be read")
	}
}

// jstat -gc -t output of a real JVM, written while a run goes and attached
// to it, joins the run's monitor data: the report's resources have the
// JVM's heap per step.
func TestRunAttachesJstat(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live load, a JVM and jstat")
	}
	tool := func(name string) string {
		p, err := exec.LookPath(name)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s not found under CI (the JDK): %v", name, err)
			}
			t.Skipf("%s not installed", name)
		}
		return p
	}
	javac, java, jstatBin := tool("javac"), tool("java"), tool("jstat")
	tmp := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "monitor", "jvm", "testdata", "Alloc.java"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "Alloc.java"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(javac, "-d", tmp, filepath.Join(tmp, "Alloc.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	app := exec.Command(java, "-Xmx64m", "-Xmn8m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1", "-cp", tmp, "Alloc")
	if err := app.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Process.Kill(); _ = app.Wait() })
	out, err := os.Create(filepath.Join(tmp, "gc.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	// jstat attaches once the JVM is up; -t stamps each sample with the
	// seconds since the JVM started, and start: is that moment.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if probe, _ := exec.Command(jstatBin, "-gc", strconv.Itoa(app.Process.Pid)).Output(); len(probe) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("jstat could not attach to the JVM within 60 s")
		}
	}
	js := exec.Command(jstatBin, "-gc", "-t", strconv.Itoa(app.Process.Pid), "250")
	js.Stdout = out
	if err := js.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = js.Process.Kill(); _ = js.Wait() })
	// The run starts once jstat writes samples (jstat is a JVM too: on a
	// loaded machine its first line came after the first step had ended),
	// and the JVM's start (jvm-start:) is read from the newest sample's stamp.
	var first time.Time
	for deadline := time.Now().Add(60 * time.Second); first.IsZero(); time.Sleep(100 * time.Millisecond) {
		b, _ := os.ReadFile(out.Name())
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if f := strings.Fields(lines[len(lines)-1]); len(lines) > 1 && len(f) > 0 {
			if secs, err := strconv.ParseFloat(f[0], 64); err == nil {
				first = time.Now().Add(-time.Duration(secs * float64(time.Second)))
			}
		}
		if first.IsZero() && time.Now().After(deadline) {
			t.Fatalf("jstat wrote no sample within 60 s: %q", b)
		}
	}
	srv, _ := testServer(t)
	p := writePlan(t, fmt.Sprintf(`name: jstat
target: %s
workloads:
  w:
    scenario: [{request: {url: /x}}, {think: 50ms}]
    load:
      steps:
        - {name: s1, users: 1, duration: 2s}
        - {name: s2, users: 2, duration: 2s}
server_side:
  settle: 1s
  sources:
    - jstat: {name: app-jvm, path: %s, jvm-start: "%s"}
`, srv.URL, out.Name(), first.UTC().Format(time.RFC3339Nano)))
	run := filepath.Join(tmp, "run")
	code, stdout, stderr := runCLI(t, "run", p, "-o", run, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Resources []struct {
			Target  string                        `json:"target"`
			Kind    string                        `json:"kind"`
			Phase   *string                       `json:"phase"`
			Metrics map[string]map[string]float64 `json:"metrics"`
		} `json:"resources"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	phases := map[string]bool{}
	for _, r := range sum.Resources {
		if r.Target == "app-jvm" && r.Kind == "jvm" && r.Phase != nil && r.Metrics["heap_used_bytes"]["mean"] > 0 {
			phases[*r.Phase] = true
		}
	}
	if !phases["s1"] || !phases["s2"] {
		t.Errorf("the attached jstat's heap per step: %v, want s1 and s2 (resources %s)", phases, b)
	}
}
