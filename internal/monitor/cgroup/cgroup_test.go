package cgroup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/monitor/process"
)

const childEnv = "PLATEAU_CGROUP_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "burn" {
		// Wait for the go (the test moves us into the cgroup first, and v1
		// memory charges do not follow a moved process), touch 48 MiB so
		// memory shows, then burn one core.
		var go1 [1]byte
		_, _ = os.Stdin.Read(go1[:])
		mem := make([]byte, 48<<20)
		for i := range mem {
			mem[i] = byte(i)
		}
		end := time.Now().Add(20 * time.Second)
		x := 0
		for time.Now().Before(end) {
			for i := range 100000 {
				x += i + int(mem[i])
			}
		}
		fmt.Fprint(os.Stderr, x)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// burner starts a child that burns CPU and holds memory; cleanup kills it
// before the cgroup directories are removed (registered earlier, so they
// run later).
func burner(t *testing.T) (*exec.Cmd, func()) {
	t.Helper()
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), childEnv+"=burn")
	in, err := c.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = c.Process.Kill()
		_ = c.Wait()
	})
	return c, func() { _, _ = in.Write([]byte{1}) }
}

// mkCgroup creates a cgroup directory or skips the test saying why.
func mkCgroup(t *testing.T, dir string) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("this machine does not let the test create cgroup %s: %v (the reader is still tested on copied files in TestCopiedFiles)", dir, err)
	}
	t.Cleanup(func() { rmCgroup(dir) })
}

// rmCgroup removes a cgroup once its processes are gone; the kernel may
// need a moment after the kill.
func rmCgroup(dir string) {
	for range 50 {
		if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func join(t *testing.T, dir string, pid int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
		t.Skipf("cannot move a process into %s: %v", dir, err)
	}
}

func ticks(t *testing.T, pid int) uint64 {
	t.Helper()
	st, _, err := process.ReadStat("/proc", pid, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st.UTime + st.STime
}

func v2Base() string {
	if exists(filepath.Join(Mount, "cgroup.controllers")) {
		return Mount
	}
	return filepath.Join(Mount, "unified")
}

// TestRealV2Cgroup creates a real v2 cgroup, runs a burning process in it,
// then removes the cgroup mid-run and re-creates it: the monitor records a
// gap and resumes.
func TestRealV2Cgroup(t *testing.T) {
	dir := filepath.Join(v2Base(), fmt.Sprint("plateau-test-", os.Getpid(), "-", time.Now().UnixNano()))
	mkCgroup(t, dir)
	child, goAhead := burner(t)
	join(t, dir, child.Process.Pid)
	goAhead()

	run := t.TempDir()
	s, err := monitor.Start(context.Background(), monitor.Options{
		Dir: run, Interval: 200 * time.Millisecond,
		Targets: []monitor.TargetConfig{{Kind: "cgroup", Name: "svc", Path: dir}},
		Kinds:   map[string]monitor.Kind{"cgroup": Kind()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if st := s.Status()[0]; !st.Started {
		t.Fatalf("not started: %s", st.Error)
	}
	t0, k0 := time.Now(), ticks(t, child.Process.Pid)
	time.Sleep(1200 * time.Millisecond)
	truth := float64(ticks(t, child.Process.Pid)-k0) / process.TicksPerSecond / time.Since(t0).Seconds() * 100

	// Lose the cgroup: kill its process and remove it.
	_ = child.Process.Kill()
	_ = child.Wait()
	rmCgroup(dir)
	waitFor(t, "gap", func() bool { return len(s.Status()[0].Gaps) == 1 })
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "resume", func() bool { return s.Status()[0].Gaps[0].End != nil })
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	series, status, err := monitor.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(status[0].Gaps) != 1 || status[0].Gaps[0].End == nil {
		t.Errorf("gaps = %+v", status[0].Gaps)
	}
	cpu := points(series, "cpu_pct")
	var sum float64
	n := 0
	for _, p := range cpu {
		if p.T.Before(status[0].Gaps[0].Start) && !math.IsNaN(p.V) {
			sum += p.V
			n++
		}
	}
	if n < 3 {
		t.Fatalf("%d cpu_pct points before the gap", n)
	}
	mean := sum / float64(n)
	t.Logf("cgroup v2 %s: monitor cpu_pct %.1f, process ground truth %.1f", dir, mean, truth)
	if math.Abs(mean-truth) > 20 || mean < min(30, 0.7*truth) {
		t.Errorf("cgroup cpu_pct %.1f, the process in it used %.1f %%", mean, truth)
	}
}

// TestRealV1Cgroup creates v1 cpuacct and memory cgroups (the memory one
// inside the test's own memory cgroup, so its limit still applies) and finds
// them through the pid of the process inside.
func TestRealV1Cgroup(t *testing.T) {
	if exists(filepath.Join(Mount, "cgroup.controllers")) || !exists(filepath.Join(Mount, "cpuacct", "cpuacct.usage")) || !exists(filepath.Join(Mount, "memory")) {
		t.Skip("no v1 cpuacct and memory hierarchies on this machine (pure cgroup v2): covered by TestRealV2Cgroup")
	}
	own := ownV1Path(t, "memory")
	rel := filepath.Join(own, fmt.Sprint("plateau-test-", os.Getpid(), "-", time.Now().UnixNano()))
	memDir := filepath.Join(Mount, "memory", rel)
	mkCgroup(t, memDir)
	// The cpuacct path may need parents (own memory path does not exist there).
	cpuDir := filepath.Join(Mount, "cpuacct", rel)
	var made []string
	for d := cpuDir; !exists(d); d = filepath.Dir(d) {
		made = append([]string{d}, made...)
	}
	for _, d := range made {
		mkCgroup(t, d)
	}
	child, goAhead := burner(t)
	join(t, memDir, child.Process.Pid)
	join(t, cpuDir, child.Process.Pid)
	goAhead()

	d, err := Resolve(Mount, monitor.TargetConfig{Pid: child.Process.Pid})
	if err != nil {
		t.Fatal(err)
	}
	if d.V1["memory"] != memDir || d.V1["cpuacct"] != cpuDir {
		t.Fatalf("resolved %+v, want memory %s cpuacct %s", d, memDir, cpuDir)
	}
	byPath, err := Resolve(Mount, monitor.TargetConfig{Path: memDir})
	if err != nil || byPath.V1["cpuacct"] != cpuDir {
		t.Fatalf("path %s resolved to %+v (%v), want cpuacct %s", memDir, byPath, err, cpuDir)
	}
	c, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	// Let the child touch its memory first.
	time.Sleep(300 * time.Millisecond)
	_, t0 := monitortest.Sample(t, c)
	k0 := ticks(t, child.Process.Pid)
	time.Sleep(800 * time.Millisecond)
	m, t1 := monitortest.Sample(t, c)
	truth := float64(ticks(t, child.Process.Pid)-k0) / process.TicksPerSecond / t1.Sub(t0).Seconds() * 100
	t.Logf("cgroup v1 %s: cpu_pct %.1f (truth %.1f), memory %.1f MiB, sources %v", rel, m["cpu_pct"], truth, m["memory_bytes"]/(1<<20), c.Sources())
	if math.Abs(m["cpu_pct"]-truth) > 20 {
		t.Errorf("cpu_pct %.1f, process used %.1f", m["cpu_pct"], truth)
	}
	if m["memory_bytes"] < 40<<20 {
		t.Errorf("memory_bytes %.0f, the process touched 48 MiB", m["memory_bytes"])
	}
	if _, ok := m["memory_working_set_bytes"]; !ok {
		t.Error("no memory_working_set_bytes")
	}
}

func ownV1Path(t *testing.T, ctrl string) string {
	t.Helper()
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && parts[1] == ctrl {
			return strings.TrimPrefix(parts[2], "/")
		}
	}
	t.Skipf("no v1 %s line in /proc/self/cgroup", ctrl)
	return ""
}

// TestCopiedFiles runs the reader on copies of this machine's real cgroup
// files (v2 cpu.stat and PSI from the v2 tree, v1 memory files from the
// test's own memory cgroup) and checks values against the copies.
func TestCopiedFiles(t *testing.T) {
	t.Parallel()
	dst := t.TempDir()
	copied := 0
	cp := func(src string) {
		b, err := os.ReadFile(src)
		if err != nil {
			return
		}
		if err := os.WriteFile(filepath.Join(dst, filepath.Base(src)), b, 0o644); err != nil {
			t.Fatal(err)
		}
		copied++
	}
	for _, f := range []string{"cpu.stat", "cpu.pressure", "memory.pressure", "io.pressure", "memory.current", "memory.max", "memory.stat", "io.stat", "pids.current"} {
		cp(filepath.Join(v2Base(), f))
	}
	if !exists(filepath.Join(dst, "memory.current")) {
		if exists(filepath.Join(Mount, "memory")) {
			own := filepath.Join(Mount, "memory", ownV1Path(t, "memory"))
			for _, f := range []string{"memory.usage_in_bytes", "memory.limit_in_bytes", "memory.stat"} {
				cp(filepath.Join(own, f))
			}
		}
	}
	if copied == 0 {
		t.Skip("no cgroup files readable on this machine")
	}
	d, err := Resolve(Mount, monitor.TargetConfig{Path: dst})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	m, t0 := monitortest.Sample(t, c)
	for _, f := range []string{"memory.current", "memory.usage_in_bytes"} {
		if raw, err := os.ReadFile(filepath.Join(dst, f)); err == nil {
			want, _ := strconv.ParseFloat(strings.TrimSpace(string(raw)), 64)
			if m["memory_bytes"] != want {
				t.Errorf("memory_bytes %v, %s holds %v", m["memory_bytes"], f, want)
			}
		}
	}
	// Rates need a second sample: bump the copied counters by known amounts.
	if raw, err := os.ReadFile(filepath.Join(dst, "cpu.stat")); err == nil {
		bumped := bump(string(raw), "usage_usec", 500000) // 0.5 s of CPU
		if err := os.WriteFile(filepath.Join(dst, "cpu.stat"), []byte(bumped), 0o644); err != nil {
			t.Fatal(err)
		}
		var b monitor.Batch
		b.Reset(time.Now(), t0.Add(time.Second))
		if err := c.Collect(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		for _, r := range b.Readings() {
			if r.Metric == "cpu_pct" && math.Abs(r.Value-50) > 1e-9 {
				t.Errorf("cpu_pct %v after 0.5 s of usage in 1 s, want 50", r.Value)
			}
		}
	}
}

func bump(stat, key string, by float64) string {
	lines := strings.Split(stat, "\n")
	for i, l := range lines {
		f := strings.Fields(l)
		if len(f) == 2 && f[0] == key {
			v, _ := strconv.ParseFloat(f[1], 64)
			lines[i] = key + " " + strconv.FormatFloat(v+by, 'f', 0, 64)
		}
	}
	return strings.Join(lines, "\n")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if Validate(monitor.TargetConfig{Path: "/sys/fs/cgroup/x"}) != nil || Validate(monitor.TargetConfig{Pid: 3}) != nil {
		t.Error("valid target rejected")
	}
	if Validate(monitor.TargetConfig{}) == nil || Validate(monitor.TargetConfig{Path: "x", Pid: 3}) == nil {
		t.Error("invalid target accepted")
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

func points(series []core.Series, metric string) []core.Point {
	for _, s := range series {
		if s.Metric == metric {
			return s.Points
		}
	}
	return nil
}

func BenchmarkCollectV2Root(b *testing.B) {
	c, err := Open(context.Background(), monitor.TargetConfig{Path: v2Base()}, monitor.Env{})
	if err != nil {
		b.Skip(err)
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
