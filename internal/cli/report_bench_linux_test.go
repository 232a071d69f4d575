package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// BenchmarkReport10Hours is issue 30's performance goal: `plateau report`
// on a 10-hour run at 1,000 req/s over 20 labels (36 M samples, one
// interval record per label and second, a host and a JVM monitored every
// second) within 5 s and 300 MB peak RSS. Setup writes the run directory
// with the real writers (reporttest.WriteLarge: rundir's intervals, the
// monitor CSV and events), outside the timer; each iteration runs the
// plateau binary (this test binary as plateau) as a child process, so its
// wall time and peak RSS are those of the command alone. It reports
// s/report (wall), cpu-s/report (user + system: what a loaded machine
// does not inflate) and peak-RSS-MB; PLATEAU_BENCH_HOURS (default 10) scales the
// span, to show that memory follows the data's labels, not the span.
//
//	go test -run '^$' -bench BenchmarkReport10Hours -benchtime 3x ./internal/cli
func BenchmarkReport10Hours(b *testing.B) {
	hours := 10.0
	if h := os.Getenv("PLATEAU_BENCH_HOURS"); h != "" {
		v, err := strconv.ParseFloat(h, 64)
		if err != nil {
			b.Fatal(err)
		}
		hours = v
	}
	dir := filepath.Join(b.TempDir(), "run")
	l := reporttest.Large{Duration: time.Duration(hours * float64(time.Hour)), Rate: 1000, Labels: 20, Monitor: true}
	t0 := time.Now()
	if err := reporttest.WriteLarge(dir, l); err != nil {
		b.Fatal(err)
	}
	var size int64
	_ = filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			size += fi.Size()
		}
		return nil
	})
	b.Logf("run directory: %d samples over %s, %d MB, written in %s", l.Samples(), l.Duration, size>>20, time.Since(t0).Round(time.Millisecond))
	var wall, cpu time.Duration
	var peak int64
	b.ResetTimer()
	for range b.N {
		cmd := plateauCmd("report", dir)
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		wall += time.Since(t0)
		if err != nil {
			b.Fatalf("plateau report: %v\n%s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, ru.Maxrss>>10) // KiB on Linux
		}
	}
	b.StopTimer()
	b.ReportMetric(wall.Seconds()/float64(b.N), "s/report")
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/report")
	b.ReportMetric(float64(peak), "peak-RSS-MB")
	b.ReportMetric(float64(l.Samples())/1e6, "M-samples")
	if _, err := os.Stat(filepath.Join(dir, "report.html")); err != nil {
		b.Fatal(err)
	}
}
