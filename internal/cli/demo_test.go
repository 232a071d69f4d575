package cli

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/demo"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

func TestDemoPlanMatchesExample(t *testing.T) {
	ex, err := os.ReadFile("../../examples/lar-cave/plan.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ex, demo.PlanYAML) {
		t.Error("examples/lar-cave/plan.yaml differs from internal/demo/plan.yaml: copy one over the other")
	}
}

// A shortened demo end to end: phases with start and end, throughput per
// step, every instance's access log present and parseable, SLA verdicts,
// and no child process left afterwards.
func TestDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo stack (about 20 s)")
	}
	// A relative -o, as a user types it: the attached logs must still be
	// found (the plan resolves relative paths against its own directory).
	cwd := t.TempDir()
	dir := filepath.Join(cwd, "demo")
	cmd := plateauCmd("demo", "--step", "2s", "--patients", "3000", "-o", "demo", "-q")
	cmd.Dir = cwd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("demo exit %d (%v)\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	run := filepath.Join(dir, "run")
	info, err := rundir.ReadInfo(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Phases) < 2 {
		t.Fatalf("phases %d, want the steps", len(info.Phases))
	}
	for _, p := range info.Phases {
		if p.End == nil || !p.End.After(p.Start) || p.Users == 0 {
			t.Errorf("phase %+v lacks start/end/users", p)
		}
	}
	s := readSummary(t, run)
	for _, p := range s.Phases {
		tot := p.Labels[len(p.Labels)-1]
		if tot.ThroughputRPS <= 0 || tot.Samples == 0 {
			t.Errorf("phase %s: throughput %v, samples %d", p.Name, tot.ThroughputRPS, tot.Samples)
		}
	}
	if len(s.SLA) != 4 {
		t.Errorf("SLA verdicts %d, want 4", len(s.SLA))
	}
	for _, r := range s.SLA {
		if r.NoData || r.Error != "" {
			t.Errorf("SLA %q not judged: %s", r.Expr, r.Error)
		}
	}
	// Demo 000 speaks Danish, as its report: "rapport: …/report.html".
	if !strings.Contains(stdout.String(), "rapport:") || !strings.Contains(stdout.String(), "report.html") {
		t.Errorf("the report path is not printed:\n%s", stdout.String())
	}
	// The servers' view is in the same report: the front services' own
	// logs attached to the run with its steps as phases, with and without
	// the external calls; no second report.
	if _, err := os.Stat(filepath.Join(dir, "server")); err == nil {
		t.Error("the demo still writes a separate server-side report")
	}
	ss := s.ServerSide
	if ss == nil {
		t.Fatal("summary.json has no server_side")
	}
	if strings.Join(ss.Servers, ",") != "lar-1,lar-2" {
		t.Errorf("servers %v, want lar-1,lar-2", ss.Servers)
	}
	perPhase := map[string]int64{}
	for _, r := range ss.Rows {
		if r.Server == "lar-1" && r.Phase != "" {
			perPhase[r.Phase] += r.Count
			if r.Status == 200 && (r.NetMeanMs == nil || *r.NetMeanMs >= r.MeanMs) {
				t.Errorf("lar-1 %s: time without downstream %v not below the time with it %v", r.Phase, r.NetMeanMs, r.MeanMs)
			}
		}
	}
	for _, p := range info.Phases {
		if perPhase[p.Name] == 0 {
			t.Errorf("server side: lar-1 has no calls in step %s", p.Name)
		}
	}
	rmd, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rmd), "balancer") {
		t.Error("the run's report does not show the balancer's resources")
	}
	// Demo 000 writes Danish, as its reference does (the plan's lang: da):
	// the reference's own words for the server-side table.
	for _, want := range []string{"## Serverside", "| Applikations server | Trin | HTTP kode | Antal kald | Kald per sekund | Tidsforbrug med videre kald (ms) | Tidsforbrug uden videre kald (ms) |",
		"| lar-1 |", "Teststatus: ", "## Konklusion"} {
		if !strings.Contains(string(rmd), want) {
			t.Errorf("the run's Danish report lacks %q", want)
		}
	}
	for _, en := range []string{"## Server side", "Test status", "## Conclusions", "| Server | Step |"} {
		if strings.Contains(string(rmd), en) {
			t.Errorf("the run's Danish report has the English %q", en)
		}
	}
	// Read as a Danish manager reads it: report.html, the comparison of
	// the run with itself (Danish by the plan's lang) and the history
	// report (--lang da) hold no English sentence outside code and the
	// run's own names (its labels, phases, targets, the servers' error
	// messages, the " (net of downstream)" label suffix).
	names, err := reporttest.Names(run)
	if err != nil {
		t.Fatal(err)
	}
	names = append(names, core.NetSuffix, filepath.Join(dir, "sut", "logs"), filepath.Join(cwd, "demo"))
	readDanish := func(what, path string) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `<html lang="da">`) {
			t.Errorf("%s is not Danish", what)
		}
		left, err := reporttest.EnglishLeft(b, reporttest.EnglishStopList, names)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range left {
			t.Errorf("English in the Danish %s: %s", what, l)
		}
	}
	readDanish("report", filepath.Join(run, "report.html"))
	cmpDir := filepath.Join(cwd, "compare")
	if out, err := plateauCmd("compare", run, run, "-o", cmpDir).CombinedOutput(); err != nil {
		t.Fatalf("plateau compare: %v\n%s", err, out)
	}
	readDanish("comparison", filepath.Join(cmpDir, "compare.html"))
	db, histDir := filepath.Join(cwd, "history.db"), filepath.Join(cwd, "history")
	if out, err := plateauCmd("history", "add", "--db", db, "--tag", "release=r1", run).CombinedOutput(); err != nil {
		t.Fatalf("plateau history add: %v\n%s", err, out)
	}
	if out, err := plateauCmd("history", "report", "--db", db, "--lang", "da", "-o", histDir).CombinedOutput(); err != nil {
		t.Fatalf("plateau history report: %v\n%s", err, out)
	}
	readDanish("history", filepath.Join(histDir, "history.html"))
	// --lang beats the plan: the same run's report in English.
	en := plateauCmd("report", "--lang", "en", "--format", "md", run)
	if out, err := en.CombinedOutput(); err != nil {
		t.Fatalf("plateau report --lang en: %v\n%s", err, out)
	}
	emd, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Server side", "| Server | Step | HTTP status | Calls | Calls/s | Time with downstream (ms) | Time without downstream (ms) |", "| lar-1 |", "| All servers |"} {
		if !strings.Contains(string(emd), want) {
			t.Errorf("the run's English report lacks %q", want)
		}
	}
	bad := plateauCmd("report", "--lang", "xx", run)
	if out, err := bad.CombinedOutput(); err == nil || !strings.Contains(string(out), `"xx"`) || !strings.Contains(string(out), "en, da") {
		t.Errorf("plateau report --lang xx: %v\n%s; want an error naming the value and the languages", err, out)
	}
	// Access logs of every instance, each line in the documented format.
	line := regexp.MustCompile(`^\S+Z (GET|POST) \S+ \d{3} \d+\.\d+ [0-9a-f]+ \S+$`)
	for _, name := range []string{"lar-1", "lar-2", "cave-1", "cave-2"} {
		f, err := os.Open(filepath.Join(dir, "sut", "logs", name+"-access.log"))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		n := 0
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			n++
			if !line.MatchString(sc.Text()) {
				t.Errorf("%s line %d not in %q: %q", name, n, sut.AccessLogFormat, sc.Text())
				break
			}
		}
		f.Close()
		if n == 0 {
			t.Errorf("%s access log is empty", name)
		}
	}
	// No child survives the demo.
	pids := regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(stderr.String(), -1)
	if len(pids) < 6 {
		t.Fatalf("found %d child pids in the demo's output:\n%s", len(pids), stderr.String())
	}
	time.Sleep(200 * time.Millisecond)
	for _, m := range pids {
		pid, _ := strconv.Atoi(m[1])
		if b, err := os.ReadFile("/proc/" + m[1] + "/cmdline"); err == nil && strings.Contains(string(b), "serve") {
			t.Errorf("child %d still running after the demo: %q", pid, b)
		}
	}
	// Every report the demo wrote (the run and the server-side view) reads
	// true, sentence by sentence.
	if n := checkRunsProse(t, dir); n < 1 {
		t.Error("no run directory under the demo's output")
	}
}

// Ctrl-C during the demo stops the load, stops every child and still writes
// the run directory with its report.
func TestDemoInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo stack")
	}
	dir := filepath.Join(t.TempDir(), "demo")
	cmd := plateauCmd("demo", "--step", "30s", "--patients", "3000", "-o", dir, "-q")
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Interrupt once the load has run a few seconds.
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(stderr.String(), "plateau: kører") && time.Now().Before(deadline) { // demo 000's Danish "running"
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		// An interrupted run is never green: status interrupted, exit 3.
		if code := exitCode(t, err); code != ExitNotHeld {
			t.Errorf("exit %d after Ctrl-C, want %d", code, ExitNotHeld)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("demo did not stop within 30 s of Ctrl-C\nstderr:\n%s", stderr.String())
	}
	// Demo 000's console is Danish, as its report (the plan's lang: da).
	if out := stdout.String(); strings.Contains(out, "BESTÅET") || !strings.Contains(out, "teststatus: AFBRUDT") {
		t.Errorf("console after Ctrl-C does not say AFBRUDT (interrupted), or says BESTÅET (passed):\n%s", out)
	}
	// The balancer does not report the requests its client gave up on.
	if n := strings.Count(stdout.String()+stderr.String(), "proxy error"); n > 0 {
		t.Errorf("%d lines of proxy errors after Ctrl-C:\n%s", n, stderr.String())
	}
	run := filepath.Join(dir, "run")
	info, err := rundir.ReadInfo(run)
	if err != nil {
		t.Fatal(err)
	}
	if info.Status != rundir.StatusInterrupted {
		t.Errorf("status %q, want interrupted", info.Status)
	}
	for _, f := range []string{"summary.json", "report.html", "report.md", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("missing %s after Ctrl-C: %v", f, err)
		}
	}
	if s := readSummary(t, run); s.Labels[len(s.Labels)-1].Samples == 0 {
		t.Error("no samples recorded before the interrupt")
	}
	for _, m := range regexp.MustCompile(`pid (\d+)`).FindAllStringSubmatch(stderr.String(), -1) {
		if b, err := os.ReadFile("/proc/" + m[1] + "/cmdline"); err == nil && strings.Contains(string(b), "serve") {
			t.Errorf("child %s still running after Ctrl-C: %q", m[1], b)
		}
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a child writes to it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
