package report

import (
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// A run of 800 one-second records plus one stray record 23 years earlier
// (a time the importers' plausible window keeps: 2001) spans 7·10⁸ seconds.
// The report must cost what its data does: every chart at most maxBuckets
// points per series, and the whole build a bounded allocation (the
// zero-filled per-second throughput arrays it built before cost 17 GB for
// this span; the out-of-memory crash of issue 31 item 3).
func TestReportBoundedByDataNotSpan(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	stray := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	end := start.Add(800 * time.Second)
	info := &rundir.Info{Tool: "plateau", Version: "test", Name: "stray", Start: stray, End: &end, Status: rundir.StatusImported,
		Workloads: []rundir.WorkloadInfo{{Name: "jmeter", Model: "imported", Shape: "as recorded"}}}
	w, err := rundir.Create(dir, info, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	secs := append([]int64{stray.Unix()}, make([]int64, 800)...)
	for i := 1; i < len(secs); i++ {
		secs[i] = start.Unix() + int64(i-1)
	}
	for i, sec := range secs {
		a := metrics.NewAgg()
		for j := range 10 {
			a.AddValue(int64(20000 + 1000*((i+j)%7)))
		}
		r, err := rundir.RecordOf(sec, metrics.Key{Workload: "jmeter", Phase: -1, Label: []string{"GET /", "POST /x"}[i%2]}, a)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	in, err := load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := build(in)
	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 512<<20 {
		t.Errorf("building the report allocated %d MB for 801 records", got>>20)
	}
	// Every polyline or path of every chart: its points are bounded by the
	// buckets (one "x,y" pair per point).
	pair := regexp.MustCompile(`-?[0-9.]+[ ,]-?[0-9.]+`)
	path := regexp.MustCompile(`<(?:polyline|path)[^>]*\b(?:points|d)="([^"]*)"`)
	charts, lines, longest := 0, 0, 0
	for _, f := range d.Figures() {
		charts++
		for _, m := range path.FindAllStringSubmatch(string(f.SVG), -1) {
			n := len(pair.FindAllString(m[1], -1))
			lines, longest = lines+1, max(longest, n)
			if n > 2*maxBuckets+2 { // an area's outline goes there and back
				t.Errorf("%s: a line of %d points for 801 records", f.Name, n)
			}
		}
	}
	if charts == 0 || lines == 0 {
		t.Fatalf("the report drew %d charts with %d lines", charts, lines)
	}
	t.Logf("%d charts, %d lines, the longest %d points", charts, lines, longest)
}
