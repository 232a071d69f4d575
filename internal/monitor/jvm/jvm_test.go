package jvm

import (
	"context"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// requireTool skips without the tool, except under CI=true where the JDK
// must be installed and a skip would hide a broken setup.
func requireTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s not found under CI: %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

// startJVM compiles testdata/Alloc.java and starts it with a small young
// generation so it collects several times a second.
func startJVM(t testing.TB) *exec.Cmd {
	t.Helper()
	javac := requireTool(t, "javac")
	java := requireTool(t, "java")
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("testdata", "Alloc.java"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "Alloc.java"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(javac, "-d", dir, filepath.Join(dir, "Alloc.java")).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command(java, "-Xmx64m", "-Xmn8m", "-XX:+UseG1GC", "-XX:TieredStopAtLevel=1", "-cp", dir, "Alloc")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// The JVM creates its hsperfdata file early in startup.
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := FindPerfFile(cmd.Process.Pid); err == nil {
			return cmd
		}
	}
	t.Fatalf("no hsperfdata file for JVM %d after 15 s", cmd.Process.Pid)
	return nil
}

func TestRealJVM(t *testing.T) {
	t.Parallel()
	jvm := startJVM(t)
	pid := jvm.Process.Pid
	dir := t.TempDir()
	s, err := monitor.Start(context.Background(), monitor.Options{
		Dir: dir, Interval: 200 * time.Millisecond,
		Targets: []monitor.TargetConfig{{Kind: "jvm", Name: "app", Pid: pid}},
		Kinds:   map[string]monitor.Kind{"jvm": Kind()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if st := s.Status()[0]; !st.Started || st.Method != MethodHsperf {
		t.Fatalf("status %+v", st)
	}
	time.Sleep(2 * time.Second)
	compareWithJstat(t, pid)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	series, status, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if status[0].Method != MethodHsperf {
		t.Errorf("method read back %q", status[0].Method)
	}
	byName := map[string][]float64{}
	for _, s := range series {
		for _, p := range s.Points {
			byName[s.Metric] = append(byName[s.Metric], p.V)
		}
	}
	ygc := byName["YGC"]
	if len(ygc) < 5 || ygc[len(ygc)-1] <= ygc[0] {
		t.Errorf("YGC did not rise: %v", ygc)
	}
	for _, col := range []string{"S0C", "EC", "EU", "OC", "OU", "MC", "MU", "CCSC", "CCSU", "YGCT", "FGC", "FGCT", "CGC", "CGCT", "GCT", "heap_used_bytes", "heap_committed_bytes", "gc_time_pct"} {
		if len(byName[col]) == 0 {
			t.Errorf("no %s series", col)
		}
	}
	used, committed := byName["heap_used_bytes"], byName["heap_committed_bytes"]
	if u, c := used[len(used)-1], committed[len(committed)-1]; u <= 0 || u > c {
		t.Errorf("heap used %v, committed %v", u, c)
	}
}

// compareWithJstat takes a monitor sample, runs `jstat -gc` and takes
// another sample: jstat's counters must lie between the two, and capacities
// that did not move must equal jstat's (which rounds to 0.1 KB).
func compareWithJstat(t *testing.T, pid int) {
	t.Helper()
	jstat := requireTool(t, "jstat")
	c, err := New(monitor.TargetConfig{Pid: pid}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sample := func() map[string]float64 {
		m, _ := monitortest.Sample(t, c)
		return m
	}
	for attempt := 0; ; attempt++ {
		before := sample()
		out, err := exec.Command(jstat, "-J-Duser.language=en", "-gc", strconv.Itoa(pid)).Output()
		after := sample()
		if err != nil {
			t.Fatalf("jstat: %v", err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != 2 {
			t.Fatalf("jstat printed %q", out)
		}
		js, err := ParseJstatRow(strings.Fields(lines[0]), strings.Fields(lines[1]))
		if err != nil {
			t.Fatal(err)
		}
		compared := 0
		for _, col := range []string{"S0C", "S1C", "EC", "OC", "MC", "CCSC"} {
			if before[col] != after[col] {
				continue // resized meanwhile
			}
			compared++
			if math.Abs(js[col]-before[col]) > 0.051 {
				t.Errorf("%s: monitor %.2f, jstat %.1f", col, before[col], js[col])
			}
		}
		for _, col := range []string{"YGC", "FGC", "CGC", "YGCT", "FGCT", "CGCT", "GCT"} {
			if _, ok := js[col]; !ok {
				t.Errorf("jstat has no %s", col)
				continue
			}
			// jstat prints times with 3 decimals.
			if js[col] < before[col]-0.0005 || js[col] > after[col]+0.0005 {
				t.Errorf("%s: jstat %v outside the monitor's %v .. %v", col, js[col], before[col], after[col])
			}
		}
		t.Logf("compared %d capacities and 7 counters with jstat: YGC %v ≤ %v ≤ %v", compared, before["YGC"], js["YGC"], after["YGC"])
		if compared >= 4 || attempt == 2 {
			if compared < 4 {
				t.Errorf("capacities kept changing; compared only %d", compared)
			}
			return
		}
	}
}

func TestJstatFallback(t *testing.T) {
	t.Parallel()
	requireTool(t, "jstat")
	jvm := startJVM(t)
	c, err := New(monitor.TargetConfig{Pid: jvm.Process.Pid}, Config{ForceJstat: true, Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Method() != MethodJstat {
		t.Fatalf("method %q", c.Method())
	}
	var ygc []float64
	for range 8 {
		var b monitor.Batch
		b.Reset(time.Now(), time.Now())
		if err := c.Collect(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		for _, r := range b.Readings() {
			if r.Metric == "YGC" {
				ygc = append(ygc, r.Value)
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	if len(ygc) != 8 || ygc[7] <= ygc[0] {
		t.Errorf("YGC via jstat did not rise: %v", ygc)
	}
	if cpu := c.ChildCPUSeconds(); cpu <= 0 {
		t.Errorf("jstat CPU %v", cpu)
	} else {
		t.Logf("jstat child used %.2f s CPU for %d samples", cpu, len(ygc))
	}
	jpid := c.jstat.cmd.Process.Pid
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(jpid, 0); err == nil {
		if st, err := os.ReadFile("/proc/" + strconv.Itoa(jpid) + "/stat"); err == nil && !strings.Contains(string(st), ") Z") {
			t.Errorf("jstat %d still running after Close", jpid)
		}
	}
}

// TestKilledJVMLeavesStaleFile: after kill -9 the hsperfdata file stays
// behind; the monitor must report the JVM lost, not its frozen counters.
func TestKilledJVMLeavesStaleFile(t *testing.T) {
	t.Parallel()
	jvm := startJVM(t)
	pid := jvm.Process.Pid
	c, err := New(monitor.TargetConfig{Pid: pid}, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	stale := filepath.Join(os.TempDir(), "hsperfdata_*", strconv.Itoa(pid))
	_ = jvm.Process.Signal(syscall.SIGKILL)
	_ = jvm.Wait()
	if m, _ := filepath.Glob(stale); len(m) == 0 {
		t.Logf("no stale file %s after kill -9; the liveness check is still exercised", stale)
	} else {
		t.Cleanup(func() { _ = os.Remove(m[0]) })
	}
	var b monitor.Batch
	b.Reset(time.Now(), time.Now())
	if err := c.Collect(context.Background(), &b); err == nil {
		t.Fatalf("collect on a killed JVM succeeded with %d readings", len(b.Readings()))
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"short", []byte{0xca, 0xfe}},
		{"magic", make([]byte, 64)},
		{"version", append([]byte{0xca, 0xfe, 0xc0, 0xc0, 1, 9, 0, 1}, make([]byte, 56)...)},
	} {
		if _, _, err := ParseAll(tc.b); err == nil {
			t.Errorf("%s: parsed", tc.name)
		}
	}
	// A real prologue whose entries point past the end must fail, not panic.
	b := append([]byte{0xca, 0xfe, 0xc0, 0xc0, 1, 2, 0, 1}, make([]byte, 56)...)
	b[24], b[28] = 32, 3 // entry_offset 32, 3 entries
	b[32] = 200          // entry_length beyond the buffer
	if _, _, err := ParseAll(b); err == nil {
		t.Error("truncated entries parsed")
	}
}

func FuzzParseAll(f *testing.F) {
	f.Add(append([]byte{0xca, 0xfe, 0xc0, 0xc0, 1, 2, 0, 1}, make([]byte, 56)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _, _ = ParseAll(b) // must not panic
	})
}

func BenchmarkCollectHsperf(b *testing.B) {
	jvm := startJVM(b)
	c, err := New(monitor.TargetConfig{Pid: jvm.Process.Pid}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var batch monitor.Batch
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset(time.Now(), time.Now())
		if err := c.Collect(context.Background(), &batch); err != nil {
			b.Fatal(err)
		}
	}
}
