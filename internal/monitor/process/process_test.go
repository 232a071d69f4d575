package process

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// childEnv selects what a re-executed test binary does instead of testing.
const childEnv = "PLATEAU_PROCESS_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "burn":
		burn(20 * time.Second)
		os.Exit(0)
	case "sleep":
		time.Sleep(20 * time.Second)
		os.Exit(0)
	case "tree":
		// Two burning children under a sleeping parent.
		var kids []*exec.Cmd
		for range 2 {
			c := exec.Command(os.Args[0], os.Args[1:]...)
			c.Env = append(os.Environ(), childEnv+"=burn")
			if err := c.Start(); err != nil {
				os.Exit(2)
			}
			kids = append(kids, c)
		}
		time.Sleep(20 * time.Second)
		for _, k := range kids {
			_ = k.Process.Kill()
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func burn(d time.Duration) {
	end := time.Now().Add(d)
	x := 0
	for time.Now().Before(end) {
		for i := range 100000 {
			x += i
		}
	}
	_ = x
}

// spawn re-executes the test binary in a child mode; token ends up on its
// command line so a pattern can find it. The child is killed at cleanup.
func spawn(t *testing.T, mode, token string) *exec.Cmd {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$", "plateau-token="+token)
	c.Env = append(os.Environ(), childEnv+"="+mode)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	})
	return c
}

// cpuTicks is the ground truth the monitor is checked against.
func cpuTicks(t *testing.T, pids ...int) uint64 {
	t.Helper()
	var n uint64
	for _, pid := range pids {
		st, _, err := ReadStat("/proc", pid, nil)
		if err != nil {
			t.Fatal(err)
		}
		n += st.UTime + st.STime
	}
	return n
}

func TestBurningProcess(t *testing.T) {
	t.Parallel()
	child := spawn(t, "burn", fmt.Sprint("burn-", time.Now().UnixNano()))
	dir := t.TempDir()
	s, err := monitor.Start(context.Background(), monitor.Options{
		Dir: dir, Interval: 200 * time.Millisecond,
		Targets: []monitor.TargetConfig{{Kind: "process", Name: "burner", Pid: child.Process.Pid}},
		Kinds:   map[string]monitor.Kind{"process": Kind()},
	})
	if err != nil {
		t.Fatal(err)
	}
	t0, ticks0 := time.Now(), cpuTicks(t, child.Process.Pid)
	time.Sleep(1500 * time.Millisecond)
	ticks1, t1 := cpuTicks(t, child.Process.Pid), time.Now()
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	truth := float64(ticks1-ticks0) / TicksPerSecond / t1.Sub(t0).Seconds() * 100

	series, status, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(status) != 1 || !status[0].Started || len(status[0].Gaps) != 0 {
		t.Fatalf("status = %+v", status)
	}
	cpu := find(series, "cpu_pct")
	if len(cpu) < 5 {
		t.Fatalf("%d cpu_pct points in 1.5 s at 200 ms", len(cpu))
	}
	mean := 0.0
	for _, p := range cpu {
		mean += p.V
	}
	mean /= float64(len(cpu))
	t.Logf("monitor mean cpu_pct %.1f, /proc ground truth %.1f", mean, truth)
	// A burner gets a whole core unless the machine is saturated (other
	// test binaries); then the /proc ground truth sets the bar.
	if mean < min(40, 0.7*truth) {
		t.Errorf("burning process shows cpu_pct %.1f", mean)
	}
	if math.Abs(mean-truth) > 15 {
		t.Errorf("monitor says %.1f %%, /proc ticks say %.1f %%", mean, truth)
	}
	// The first sample may catch the child right after exec, before its
	// program is mapped in: judge the largest.
	maxRSS := 0.0
	rss := find(series, "rss_bytes")
	for _, p := range rss {
		maxRSS = max(maxRSS, p.V)
	}
	if maxRSS < 1<<20 {
		t.Errorf("rss_bytes = %v", rss)
	}
	if th := find(series, "threads"); len(th) == 0 || th[0].V < 1 {
		t.Errorf("threads = %v", th)
	}
	if fd := find(series, "open_fds"); len(fd) == 0 || fd[0].V < 3 {
		t.Errorf("open_fds = %v", fd)
	}
}

func TestChildrenSummed(t *testing.T) {
	t.Parallel()
	parent := spawn(t, "tree", fmt.Sprint("tree-", time.Now().UnixNano()))
	// Wait until both children run.
	var kids []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		kids, _, _ = Children("/proc", parent.Process.Pid, nil, kids[:0])
		if len(kids) == 2 {
			break
		}
	}
	if len(kids) != 2 {
		t.Fatalf("tree child has %d children", len(kids))
	}
	c, err := New("/proc", monitor.TargetConfig{Pid: parent.Process.Pid, Children: true})
	if err != nil {
		t.Fatal(err)
	}
	_, t0 := monitortest.Sample(t, c)
	all := append([]int{parent.Process.Pid}, kids...)
	ticks0 := cpuTicks(t, all...)
	time.Sleep(800 * time.Millisecond)
	m, t1 := monitortest.Sample(t, c)
	truth := float64(cpuTicks(t, all...)-ticks0) / TicksPerSecond / t1.Sub(t0).Seconds() * 100
	if m["processes"] != 3 {
		t.Errorf("processes = %v, want 3", m["processes"])
	}
	t.Logf("tree cpu_pct %.1f, ground truth %.1f", m["cpu_pct"], truth)
	if math.Abs(m["cpu_pct"]-truth) > 20 || m["cpu_pct"] < min(20, 0.7*truth) {
		t.Errorf("tree cpu_pct %.1f, /proc says %.1f", m["cpu_pct"], truth)
	}
}

// TestExitAndRestart loses the matched process mid-run and starts another
// one matching the same pattern: the gap is recorded and sampling resumes.
func TestExitAndRestart(t *testing.T) {
	t.Parallel()
	token := fmt.Sprint("restart-", time.Now().UnixNano())
	first := spawn(t, "sleep", token)
	dir := t.TempDir()
	s, err := monitor.Start(context.Background(), monitor.Options{
		Dir: dir, Interval: 100 * time.Millisecond,
		Targets: []monitor.TargetConfig{{Kind: "process", Name: "svc", Match: "plateau-token=" + token}},
		Kinds:   map[string]monitor.Kind{"process": Kind()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if st := s.Status(); !st[0].Started {
		t.Fatalf("not started: %+v", st[0])
	}
	time.Sleep(300 * time.Millisecond)
	_ = first.Process.Kill()
	_ = first.Wait()
	waitFor(t, "gap start", func() bool { return len(s.Status()[0].Gaps) == 1 })
	time.Sleep(300 * time.Millisecond)
	if g := s.Status()[0].Gaps[0]; g.End != nil {
		t.Fatalf("gap closed without a process: %+v", g)
	}
	second := spawn(t, "sleep", token)
	waitFor(t, "resume", func() bool { return s.Status()[0].Gaps[0].End != nil })
	time.Sleep(300 * time.Millisecond)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	series, status, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(status) != 1 || len(status[0].Gaps) != 1 || status[0].Gaps[0].End == nil {
		t.Fatalf("status read back = %+v", status)
	}
	gap := status[0].Gaps[0]
	if !gap.End.After(gap.Start) {
		t.Errorf("gap %v .. %v", gap.Start, *gap.End)
	}
	rss := find(series, "rss_bytes")
	var before, nan, after int
	for _, p := range rss {
		switch {
		case math.IsNaN(p.V):
			nan++
		case p.T.Before(gap.Start):
			before++
		case !p.T.Before(*gap.End):
			after++
		}
	}
	if before == 0 || nan != 1 || after == 0 {
		t.Errorf("rss points: %d before the gap, %d NaN, %d after", before, nan, after)
	}
	restarts := find(series, "restarts")
	if last := restarts[len(restarts)-1].V; last != 1 {
		t.Errorf("restarts = %v, want 1", last)
	}
	_ = second
}

func TestPidFileFollowed(t *testing.T) {
	t.Parallel()
	a := spawn(t, "sleep", "pidfile-a")
	pidFile := filepath.Join(t.TempDir(), "svc.pid")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(a.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := New("/proc", monitor.TargetConfig{PidFile: pidFile})
	if err != nil {
		t.Fatal(err)
	}
	if c.Pid() != a.Process.Pid {
		t.Fatalf("following %d, want %d", c.Pid(), a.Process.Pid)
	}
	_ = a.Process.Kill()
	_ = a.Wait()
	var b monitor.Batch
	b.Reset(time.Now(), time.Now())
	if err := c.Collect(context.Background(), &b); err == nil {
		t.Fatal("collect succeeded on a dead pid")
	}
	bb := spawn(t, "sleep", "pidfile-b")
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(bb.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	b.Reset(time.Now(), time.Now())
	if err := c.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	if c.Pid() != bb.Process.Pid {
		t.Fatalf("following %d, want %d", c.Pid(), bb.Process.Pid)
	}
}

func TestValidateSelector(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		cfg  monitor.TargetConfig
		ok   bool
	}{
		{"pid", monitor.TargetConfig{Pid: 1}, true},
		{"match", monitor.TargetConfig{Match: "demo serve"}, true},
		{"none", monitor.TargetConfig{}, false},
		{"two", monitor.TargetConfig{Pid: 1, Match: "x"}, false},
		{"bad regexp", monitor.TargetConfig{Match: "("}, false},
		{"negative pid", monitor.TargetConfig{Pid: -4}, false},
	} {
		if err := ValidateSelector(tc.cfg); (err == nil) != tc.ok {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

func TestParseStatOddName(t *testing.T) {
	t.Parallel()
	line := "42 (a) b (c)) S 1 42 42 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 5 0 12345 1000000 250 18446744073709551615\n"
	st, err := ParseStat([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	want := Stat{Pid: 42, Comm: "a) b (c)", State: 'S', PPid: 1, UTime: 7, STime: 3, CUTime: 2, CSTime: 1, Threads: 5, StartTime: 12345, RSSPages: 250}
	if st != want {
		t.Errorf("got %+v\nwant %+v", st, want)
	}
	if _, err := ParseStat([]byte("42 (x) S 1")); err == nil {
		t.Error("short stat accepted")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func find(series []core.Series, metric string) []core.Point {
	for _, s := range series {
		if s.Metric == metric {
			return s.Points
		}
	}
	return nil
}

func BenchmarkCollectSelf(b *testing.B) {
	c, err := New("/proc", monitor.TargetConfig{Pid: os.Getpid()})
	if err != nil {
		b.Fatal(err)
	}
	var batch monitor.Batch
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset(time.Now(), time.Now())
		if err := c.Collect(context.Background(), &batch); err != nil {
			b.Fatal(err)
		}
	}
}
