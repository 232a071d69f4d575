package builtin

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/jvm"
)

// TestOwnCost measures the budget: host + three processes + one JVM
// sampled every second must cost under 1 % of one core. The whole test
// process's CPU (sampling threads, writer, Go runtime and GC) is measured
// with getrusage over a real 1-second-interval session; nothing else runs
// in this process meanwhile (the test is not parallel).
func TestOwnCost(t *testing.T) {
	java := jvmUnderTest(t)
	var targets []monitor.TargetConfig
	targets = append(targets, monitor.TargetConfig{Kind: "host", Name: "host"})
	for i := range 3 {
		c := exec.Command("sleep", "60")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		targets = append(targets, monitor.TargetConfig{Kind: "process", Name: fmt.Sprint("proc", i), Pid: c.Process.Pid})
	}
	targets = append(targets, monitor.TargetConfig{Kind: "jvm", Name: "jvm", Pid: java.Process.Pid})

	const samples = 6 // at 0 s, 1 s … 5 s
	dir := t.TempDir()
	cpu0 := rusageSeconds(t)
	t0 := time.Now()
	s, err := Start(context.Background(), monitor.Options{Dir: dir, Interval: time.Second, Targets: targets})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep((samples-1)*time.Second + 100*time.Millisecond)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	cpu := rusageSeconds(t) - cpu0
	wall := time.Since(t0).Seconds()
	pct := cpu / wall * 100
	var thread float64
	for _, st := range s.Status() {
		if !st.Started {
			t.Fatalf("%s did not start: %s", st.Name, st.Error)
		}
		if st.Method != "" && st.Method != jvm.MethodHsperf {
			t.Errorf("JVM read with %s", st.Method)
		}
		thread += st.CPUSeconds
		t.Logf("%-6s %-8s %d samples, %.3f ms CPU per sample (sampling thread)", st.Name, st.Kind, st.Samples, st.CPUSeconds/float64(st.Samples)*1e3)
	}
	t.Logf("host + 3 processes + 1 JVM at 1 s: %.3f s CPU in %.2f s = %.3f %% of one core (process getrusage); sampling threads alone %.3f %%", cpu, wall, pct, thread/wall*100)
	if pct >= 1 {
		t.Errorf("monitoring cost %.3f %% of one core, budget 1 %%", pct)
	}
}

func rusageSeconds(t *testing.T) float64 {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// jvmUnderTest compiles and starts the JVM test program of the jvm package
// and waits for its performance-data file.
func jvmUnderTest(t *testing.T) *exec.Cmd {
	t.Helper()
	javac, err1 := exec.LookPath("javac")
	javaBin, err2 := exec.LookPath("java")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("JDK missing under CI: %v %v", err1, err2)
		}
		t.Skipf("JDK not installed: %v %v", err1, err2)
	}
	dir := t.TempDir()
	src := filepath.Join("..", "jvm", "testdata", "Alloc.java")
	if out, err := exec.Command(javac, "-d", dir, src).CombinedOutput(); err != nil {
		t.Fatalf("javac: %v\n%s", err, out)
	}
	cmd := exec.Command(javaBin, "-Xmx64m", "-Xmn8m", "-XX:TieredStopAtLevel=1", "-cp", dir, "Alloc")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if _, err := jvm.FindPerfFile(cmd.Process.Pid); err == nil {
			return cmd
		}
	}
	t.Fatal("JVM wrote no hsperfdata file")
	return nil
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg monitor.TargetConfig
		ok  bool
	}{
		{monitor.TargetConfig{Kind: "host"}, true},
		{monitor.TargetConfig{Kind: "process", Match: "demo serve back"}, true},
		{monitor.TargetConfig{Kind: "jvm", Pid: 4242}, true},
		{monitor.TargetConfig{Kind: "cgroup", Path: "/sys/fs/cgroup/system.slice/app.service"}, true},
		{monitor.TargetConfig{Kind: "postgres", DSN: "postgres://perf@127.0.0.1:5432/app"}, true},
		{monitor.TargetConfig{Kind: "prometheus", URL: "http://127.0.0.1:9100/metrics", Series: []string{"node_cpu_seconds_total"}}, true},
		{monitor.TargetConfig{Kind: "gpu"}, false},
		{monitor.TargetConfig{Kind: "process"}, false},
		{monitor.TargetConfig{Kind: "host", Interval: time.Millisecond}, false},
		{monitor.TargetConfig{Kind: "postgres"}, false},
	} {
		if err := Validate(tc.cfg); (err == nil) != tc.ok {
			t.Errorf("%+v: %v", tc.cfg, err)
		}
	}
}
