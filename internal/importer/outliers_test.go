package importer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// A server reading stamped 1970, or past the import's clock, is left out of
// the series file and counted once per time (not once per metric), as the
// rule leaves out request samples.
func TestImplausibleReadingsLeftOut(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "run")
	r, err := NewRun(Options{Dir: dir, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	w, err := r.Series("web1", KindHost, "import: vmstat", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t0 := now.Add(-time.Hour)
	times := []time.Time{t0, t0.Add(time.Second), time.Unix(0, 0), t0.Add(2 * time.Second), now.Add(48 * time.Hour), t0.Add(3 * time.Second)}
	for _, tm := range times {
		w.Add(tm, "cpu_user_pct", "%", 10)
		w.Add(tm, "cpu_system_pct", "%", 5)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if n := r.Implausible(); n != 2 {
		t.Errorf("%d implausible readings counted, want 2", n)
	}
	if w.Samples() != 4 {
		t.Errorf("%d readings written, want 4", w.Samples())
	}
	b, err := os.ReadFile(filepath.Join(dir, "monitor", "web1.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "1970-") || strings.Contains(string(b), "2026-11-30") {
		t.Errorf("an implausible reading was written:\n%s", b)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Start.Equal(t0) || !info.End.Equal(t0.Add(3*time.Second)) {
		t.Errorf("run span %s – %s, want the plausible readings' %s – %s", info.Start, info.End, t0, t0.Add(3*time.Second))
	}
	found := false
	for _, n := range info.Notes {
		found = found || strings.Contains(n, "web1: 2 implausible readings left out")
	}
	if !found {
		t.Errorf("no note on web1's implausible readings: %q", info.Notes)
	}
}

// The rule's edges, and a response time so long that start + elapsed
// overflows: judged by the response time, not by the wrapped completion.
func TestPlausibleRule(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	w := plausibleWindow(now)
	day := MaxElapsed.Microseconds()
	for _, c := range []struct {
		name    string
		end, us int64
		ok      bool
	}{
		{"first plausible ns", PlausibleSince * 1e9, 0, true},
		{"1999-12-31T23:59:59.999999999", PlausibleSince*1e9 - 1, 0, false},
		{"a day ahead", now.Add(PlausibleAhead).UnixNano(), 0, true},
		{"a day and 1 ns ahead", now.Add(PlausibleAhead).UnixNano() + 1, 0, false},
		{"24 h response", now.UnixNano(), day, true},
		{"24 h + 1 µs", now.UnixNano(), day + 1, false},
		{"10¹⁵ ms, wrapped end", now.UnixNano(), 1e18, false},
	} {
		c2 := newImplausible()
		if got := c2.sample(w, c.end, c.us); got != c.ok {
			t.Errorf("%s: plausible %v, want %v", c.name, got, c.ok)
		}
		if !c.ok && c2.total() != 1 {
			t.Errorf("%s: counted %d, want 1", c.name, c2.total())
		}
	}
}

// A source's own span (Locust's history) that fails the rule does not
// stretch the run: the samples' span stands, and a note says why.
func TestImplausibleSourceSpanIgnored(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	dir := filepath.Join(t.TempDir(), "run")
	r, err := NewRun(Options{Dir: dir, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	a := r.Requests("locust")
	end := now.Add(-time.Hour)
	a.SetSpan(0, end.UnixNano())
	if err := a.Add(&Rec{End: end.UnixNano(), Elapsed: 1000, Label: a.Labels().ID([]byte("GET /")), Threads: -1}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := end.Add(-time.Millisecond); !info.Start.Equal(want) {
		t.Errorf("run starts %s, want the sample's start %s", info.Start, want)
	}
	found := false
	for _, n := range info.Notes {
		found = found || strings.Contains(n, "locust: the source's run span (1970-01-01T00:00:00Z")
	}
	if !found {
		t.Errorf("no note on the implausible span: %q", info.Notes)
	}
}

// The bulk rule: groups of hours more than BulkGap apart; the outer
// groups under BulkShare of the requests are far, inner ones and large
// ones are not.
func TestBulk(t *testing.T) {
	t.Parallel()
	h := func(days, hour int64) int64 { return 500_000 + days*24 + hour } // hours since 1970, around 2027
	many := map[int64]int64{}                                             // 101 groups of one request: none is 1 %
	for i := range int64(101) {
		many[h(10*i, 0)] = 1
	}
	for _, c := range []struct {
		name  string
		hours map[int64]int64
		far   int64
		from  int64 // hour
		to    int64 // last hour
	}{
		{"one group", map[int64]int64{h(0, 0): 800, h(0, 1): 10}, 0, 0, 0},
		{"30 sparse days", map[int64]int64{h(0, 0): 5, h(6, 0): 1, h(12, 0): 1, h(18, 0): 1, h(24, 0): 1, h(30, 0): 5}, 0, 0, 0},
		{"a stray row years before", map[int64]int64{h(-8000, 3): 1, h(0, 0): 800, h(0, 1): 10}, 1, h(0, 0), h(0, 1)},
		{"stray rows on both sides", map[int64]int64{h(-30, 0): 2, h(0, 0): 800, h(40, 5): 3}, 5, h(0, 0), h(0, 0)},
		{"two sessions a month apart", map[int64]int64{h(0, 0): 500, h(31, 0): 500}, 0, 0, 0},
		{"a small group between two large", map[int64]int64{h(0, 0): 500, h(15, 0): 1, h(31, 0): 500}, 0, 0, 0},
		{"only small groups", many, 0, 0, 0},
	} {
		r := &Run{hours: c.hours}
		from, to, far, ok := r.Bulk()
		if far != c.far || ok != (c.far > 0) {
			t.Errorf("%s: %d far (ok %v), want %d", c.name, far, ok, c.far)
			continue
		}
		if ok && (from.Unix() != c.from*3600 || to.Unix() != (c.to+1)*3600-1) {
			t.Errorf("%s: bulk %s – %s, want hours %d – %d", c.name, from.UTC(), to.UTC(), c.from, c.to)
		}
	}
}
