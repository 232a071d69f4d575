package cli

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// declaredWant is a phase the script declares: its name and its hold as
// offsets from the tool's first request.
type declaredWant struct {
	name     string
	from, to time.Duration
	// ref, when set, is the moment from is counted from, as the tool
	// recorded it (a thread group's first thread); else the tool's
	// first request.
	ref time.Time
}

// checkDeclaredPhases checks a foreign run's phase table against the
// holds its script declares: their count and names, and their bounds,
// placed by what the tool did — within slack of the tool's first request
// plus the declared offset (the tool starts its first request within a
// second of its start), each shortened by at most a second by the
// rounding inwards to whole seconds — and that each phase's figures are
// those of the requests the tool completed within it (ends, Unix ns).
func checkDeclaredPhases(t *testing.T, dir string, want []declaredWant, ends []int64, slack time.Duration) {
	t.Helper()
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ends) == 0 {
		t.Fatal("the tool completed no request")
	}
	first := ends[0]
	for _, e := range ends {
		first = min(first, e)
	}
	if len(info.Phases) != len(want) {
		t.Fatalf("%d phases %+v, the script declares %d\nnotes: %s", len(info.Phases), info.Phases, len(want), strings.Join(info.Notes, "\n"))
	}
	s := readSummary(t, dir)
	if len(s.Phases) != len(want) {
		t.Fatalf("summary: %d phases", len(s.Phases))
	}
	t0 := time.Unix(0, first)
	for i, w := range want {
		p := info.Phases[i]
		if p.Name != w.name {
			t.Errorf("phase %d: %q, declared %q", i, p.Name, w.name)
		}
		if p.End == nil {
			t.Fatalf("phase %q: no end", p.Name)
		}
		ref := t0
		if !w.ref.IsZero() {
			ref = w.ref
		}
		if d := p.Start.Sub(ref.Add(w.from)); d < -slack || d > slack {
			t.Errorf("phase %q starts %s, %s after the tool's reference %s; declared %s (±%s)", p.Name, p.Start, p.Start.Sub(ref), ref, w.from, slack)
		}
		if got, hold := p.End.Sub(p.Start), w.to-w.from; got > hold || got < hold-time.Second {
			t.Errorf("phase %q lasts %s, the declared hold %s", p.Name, got, hold)
		}
		// The phase's figures are over its window: the requests that
		// completed in its seconds.
		var n int64
		for _, e := range ends {
			if e >= p.Start.UnixNano() && e < p.End.UnixNano() {
				n++
			}
		}
		var got int64 = -1
		for _, l := range s.Phases[i].Labels {
			if l.Label == "TOTAL" {
				got = l.Samples
			}
		}
		if n == 0 || got != n {
			t.Errorf("phase %q: %d samples in the summary, the tool completed %d in its window", p.Name, got, n)
		}
	}
}

// k6Ends reads the ends of k6's requests (http_req_duration points) from
// its CSV output (unix_nano times).
func k6Ends(t *testing.T, path string) []int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fs := strings.Split(sc.Text(), ",")
		if fs[0] != "http_req_duration" || len(fs) < 2 {
			continue
		}
		ns, err := strconv.ParseInt(fs[1], 10, 64)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, ns)
	}
	return out
}

// TestRunK6DeclaredPhases: a k6 step test in the open model
// (ramping-arrival-rate) reports no users — k6's vus stay at zero between
// iterations — so the user count gives no phases; the phases are the
// script's holds, read with k6 inspect (its -e applied), named by their
// rate and placed where k6 ran them.
func TestRunK6DeclaredPhases(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script, _ := filepath.Abs("testdata/declared/steps.js")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "-e", "BASE="+srv.URL, "-e", "LOW=4", "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	checkDeclaredPhases(t, dir, []declaredWant{
		{"4 iterations/s", 1 * time.Second, 8 * time.Second, time.Time{}},
		{"10 iterations/s", 9 * time.Second, 16 * time.Second, time.Time{}},
	}, k6Ends(t, filepath.Join(dir, "tool", "k6.csv")), 2*time.Second)
	info, _ := rundir.ReadInfo(dir)
	if p := info.Phases; len(p) == 2 && (p[0].Rate != 4 || p[1].Rate != 10) {
		t.Errorf("declared rates %v, %v; want 4, 10", p[0].Rate, p[1].Rate)
	}
	if !strings.Contains(strings.Join(info.Notes, "\n"), "2 phases as k6's script declares them") {
		t.Errorf("the notes do not say where the phases come from:\n%s", strings.Join(info.Notes, "\n"))
	}
}

// gatlingEnds reads the ends of Gatling's requests (REQUEST records:
// REQUEST, groups, name, start, end, status, message; times in ms).
func gatlingEnds(t *testing.T, out string) []int64 {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(out, "results", "*", "simulation.log"))
	if len(m) != 1 {
		t.Fatalf("simulation.log: %v", m)
	}
	b, err := os.ReadFile(m[0])
	if err != nil {
		t.Fatal(err)
	}
	var ends []int64
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Split(line, "\t")
		if fs[0] != "REQUEST" || len(fs) < 6 {
			continue
		}
		ms, err := strconv.ParseInt(fs[4], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", m[0], line, err)
		}
		ends = append(ends, ms*1e6)
	}
	return ends
}

// TestRunGatlingDeclaredPhases: a Gatling step test in the open model
// (constantUsersPerSec steps with a ramp between them, the first step's
// rate given with -J): its users each make one request and leave, so
// Gatling's active users stay at 0 or 1 and give no phases; the phases
// are the injection profile's holds, placed from Gatling's RUN record.
func TestRunGatlingDeclaredPhases(t *testing.T) {
	foreignTool(t, "Gatling (with javac)", gatlingInstalled())
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	dir := filepath.Join(t.TempDir(), "run")
	script, _ := filepath.Abs("testdata/declared/gatling/steps/StepSimulation.java")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "-J", "base="+srv.URL, "-J", "low=4", "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// The first user starts a second after the start (nothingFor): the
	// holds count from it.
	checkDeclaredPhases(t, dir, []declaredWant{
		{"4 users/s", 0, 7 * time.Second, time.Time{}},
		{"8 users/s", 9 * time.Second, 16 * time.Second, time.Time{}},
	}, gatlingEnds(t, filepath.Join(dir, "tool")), 2*time.Second)
	info, _ := rundir.ReadInfo(dir)
	if p := info.Phases; len(p) == 2 && (p[0].Rate != 4 || p[1].Rate != 8) {
		t.Errorf("declared rates %v, %v; want 4, 8", p[0].Rate, p[1].Rate)
	}
}

// jtlEnds reads the ends of JMeter's samples from its CSV JTL
// (timeStamp, the start in epoch ms, plus elapsed).
func jtlEnds(t *testing.T, path string) []int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	head := strings.Split(lines[0], ",")
	ts, el := -1, -1
	for i, h := range head {
		switch h {
		case "timeStamp":
			ts = i
		case "elapsed":
			el = i
		}
	}
	if ts < 0 || el < 0 {
		t.Fatalf("%s: header %q", path, lines[0])
	}
	var ends []int64
	for _, l := range lines[1:] {
		fs := strings.Split(l, ",")
		s, err1 := strconv.ParseInt(fs[ts], 10, 64)
		e, err2 := strconv.ParseInt(fs[el], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %q", path, l)
		}
		ends = append(ends, (s+e)*1e6)
	}
	return ends
}

// jmeterThreadStart is when JMeter's log says it started thread name.
func jmeterThreadStart(t *testing.T, dir, name string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tool", "jmeter.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasSuffix(strings.TrimSpace(l), "Thread started: "+name) && len(l) > 23 {
			at, err := time.ParseInLocation("2006-01-02 15:04:05,000", l[:23], time.Local)
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
	}
	t.Fatalf("jmeter.log: no thread %s started", name)
	return time.Time{}
}

// TestRunJMeterDeclaredPhases: a JMeter step test paced by Constant
// Throughput Timers — two thread groups one after the other, the first's
// rate given with -J — has its phases named by the timers' targets and
// placed by the thread groups' schedulers from JMeter's start.
func TestRunJMeterDeclaredPhases(t *testing.T) {
	_, ok := jmeterInstalled()
	foreignTool(t, "JMeter", ok)
	t.Parallel()
	srv := shopServer()
	defer srv.Close()
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	dir := filepath.Join(t.TempDir(), "run")
	plan := copyScript(t, "testdata/declared/steps.jmx")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", plan, "-J", "port="+port, "-J", "rate=480", "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	// Each hold counts from its group's first thread, as JMeter's log
	// says it started it (the second group's scheduler delays it 10 s).
	low, high := jmeterThreadStart(t, dir, "low 1-1"), jmeterThreadStart(t, dir, "high 2-1")
	if d := high.Sub(low); d < 9*time.Second || d > 12*time.Second {
		t.Errorf("JMeter started the second group %s after the first; its scheduler says 10 s", d)
	}
	checkDeclaredPhases(t, dir, []declaredWant{
		{"480 samples/min", 1 * time.Second, 9 * time.Second, low},
		{"1200 samples/min", 1 * time.Second, 9 * time.Second, high},
	}, jtlEnds(t, filepath.Join(dir, "tool", "results.jtl")), 2*time.Second)
	info, _ := rundir.ReadInfo(dir)
	if p := info.Phases; len(p) == 2 && (p[0].Rate != 8 || p[1].Rate != 20) {
		t.Errorf("declared rates %v, %v; want 8, 20", p[0].Rate, p[1].Rate)
	}
}

// TestRunK6LiveDeclaredPhase: live, the requests of a declared phase
// (a constant-arrival-rate scenario, whose users k6 reports as 0 between
// iterations) carry its name as /metrics' phase label, and the report
// puts at least as many in it.
func TestRunK6LiveDeclaredPhase(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv, _ := countingServer()
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "rate.js")
	if err := os.WriteFile(script, []byte(`import http from 'k6/http';
export const options = {
  scenarios: {
    paced: { executor: 'constant-arrival-rate', rate: 5, timeUnit: '1s', duration: '10m', preAllocatedVUs: 2, maxVUs: 10 },
  },
};
export default function () {
  http.get(__ENV.BASE + '/cart');
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	checkLivePhase(t, filepath.Join(tmp, "run"), []string{script, "-e", "BASE=" + srv.URL}, "5 iterations/s")
}

// TestRunK6DeclaredPhaseNotReached: a hold k6 cannot keep — 20
// iterations a second with one VU against a server that takes 200 ms, so
// at most 5 — is named in the notes with the rate it reached.
func TestRunK6DeclaredPhaseNotReached(t *testing.T) {
	_, ok := k6Installed()
	foreignTool(t, "k6", ok)
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(200 * time.Millisecond)
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	tmp := t.TempDir()
	script := filepath.Join(tmp, "fast.js")
	if err := os.WriteFile(script, []byte(`import http from 'k6/http';
export const options = {
  scenarios: {
    fast: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '6s', preAllocatedVUs: 1, maxVUs: 1 },
  },
};
export default function () {
  http.get(__ENV.BASE + '/slow');
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "run")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, out, errOut := runCLICtx(ctx, "run", script, "-e", "BASE="+srv.URL, "-o", dir, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Phases) != 1 || info.Phases[0].Name != "20 iterations/s" {
		t.Fatalf("phases %+v", info.Phases)
	}
	var note string
	for _, n := range info.Notes {
		if strings.HasPrefix(n, `phase "20 iterations/s": declared 20 iterations/s, `) {
			note = n
		}
	}
	// One VU, 200 ms an iteration: at most 5 a second.
	var reached float64
	if _, err := fmt.Sscanf(strings.TrimPrefix(note, `phase "20 iterations/s": declared 20 iterations/s, `), "%g", &reached); err != nil ||
		reached > 5.5 || !strings.HasSuffix(note, "k6 could not keep up") {
		t.Errorf("note %q (reached %v); notes:\n%s", note, reached, strings.Join(info.Notes, "\n"))
	}
}
