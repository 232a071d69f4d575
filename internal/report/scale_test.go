package report

import (
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestScale builds a run of PLATEAU_SCALE_HOURS hours (24 for the issue's
// 10-million-sample case) at 116 samples/s with one-second monitor data,
// times each stage of the report and checks the 10 s budget. It is skipped
// unless PLATEAU_SCALE_HOURS is set: building and reading 24 hours takes
// minutes on a shared 2-core machine.
func TestScale(t *testing.T) {
	hs := os.Getenv("PLATEAU_SCALE_HOURS")
	if hs == "" {
		t.Skip("set PLATEAU_SCALE_HOURS=24 to run the scale test")
	}
	hours, err := strconv.ParseFloat(hs, 64)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := reporttest.Large{Duration: time.Duration(hours * float64(time.Hour)), Rate: 116, Monitor: true}
	t0 := time.Now()
	if err := reporttest.WriteLarge(dir, l); err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s samples over %s in %s", count(l.Samples()), l.Duration, time.Since(t0).Round(time.Millisecond))

	// Stage by stage, as Generate runs them.
	t0 = time.Now()
	in, err := load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	loadT := time.Since(t0)
	t0 = time.Now()
	series, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	readT := time.Since(t0)
	points := 0
	for _, s := range series {
		points += len(s.Points)
	}
	t0 = time.Now()
	d := build(in)
	buildT := time.Since(t0)
	t0 = time.Now()
	for _, w := range writers() {
		if _, err := w.Write(dir, d); err != nil {
			t.Fatal(err)
		}
	}
	writeT := time.Since(t0)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	total := loadT + buildT + writeT
	t.Logf("load (analysis.Load + monitor.Read + Summarize) %s, of which monitor.Read %s for %s points; build document and charts %s; write 4 formats %s; total %s; peak heap %s",
		loadT.Round(time.Millisecond), readT.Round(time.Millisecond), count(int64(points)), buildT.Round(time.Millisecond),
		writeT.Round(time.Millisecond), total.Round(time.Millisecond), bytesU(float64(ms.HeapSys)))
	if total > 10*time.Second {
		t.Errorf("report took %s, budget 10 s", total.Round(time.Millisecond))
	}
}
