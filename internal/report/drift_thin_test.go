package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// writeShift writes a 12-minute run at one load, perMin requests a minute
// (spread over the minute's seconds), whose response time jumps from 100 ms
// to 5 s half-way.
func writeShift(t *testing.T, perMin int) string {
	t.Helper()
	dir := t.TempDir()
	start := time.Date(2025, 5, 13, 11, 0, 0, 0, time.UTC)
	end := start.Add(12 * time.Minute)
	info := &rundir.Info{Tool: "plateau", Name: "shift", Start: start, End: &end, Status: rundir.StatusCompleted,
		Phases: []rundir.PhaseInfo{{Name: "soak", Start: start, End: &end, Users: 2}}}
	w, err := rundir.Create(dir, info, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for sec := 0; sec < 12*60; sec++ {
		n := perMin / 60
		if sec%60 < perMin%60 {
			n++
		}
		if n == 0 {
			continue
		}
		a := metrics.NewAgg()
		for i := 0; i < n; i++ {
			el := 100*time.Millisecond + time.Duration(i)*time.Millisecond
			if sec >= 6*60 {
				el = 5 * time.Second
			}
			a.Add(&core.Sample{Elapsed: el})
		}
		iv := &metrics.Interval{Aggs: map[metrics.Key]*metrics.Agg{{Workload: "w", Phase: 0, Label: "read"}: a}}
		if err := w.WriteInterval(start.Add(time.Duration(sec)*time.Second), iv, map[string]int{"w": 2}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestDriftNeedsEnoughData: a level shift resting on 15 requests a minute
// (180 in all) is "not enough data to judge", said with its numbers, and no
// drift headline is drawn from it; the same shift on 60 a minute is stated.
func TestDriftNeedsEnoughData(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		perMin  int
		drifted bool
	}{{15, false}, {60, true}} {
		dir := writeShift(t, c.perMin)
		if _, err := Generate(dir, Options{Now: fixedNow, Formats: []string{"md"}}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		headline := strings.Contains(md, "Latency drift: ")
		thin := strings.Contains(md, "Not enough data to judge a drift") && strings.Contains(md, "180 requests")
		if headline != c.drifted || (!c.drifted && !thin) {
			t.Errorf("%d requests a minute: drift headline %v (want %v), not-enough-data note %v", c.perMin, headline, c.drifted, thin)
		}
		if !c.drifted && strings.Contains(md, "stay level") {
			t.Errorf("%d requests a minute: says latency stays level without the data to judge", c.perMin)
		}
	}
}
