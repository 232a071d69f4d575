package merge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// fixture is a synthetic plan run: samples spread over seconds, two labels,
// two phases (one per workload, so generators may list them in either order)
// and one failure kind.
type fixture struct {
	t0      time.Time
	seconds int
	samples []fxSample
}

type fxSample struct {
	sec   int
	phase int // 0: "read" workload, 1: "write"
	s     core.Sample
}

var fxPhases = []rundir.PhaseInfo{{Name: "read", Workload: "read", Rate: 40}, {Name: "write", Workload: "write", Users: 3}}

func newFixture(seed uint64, seconds, perSecond int) *fixture {
	rng := rand.New(rand.NewPCG(seed, 7))
	f := &fixture{t0: time.Unix(1_800_000_000, 0), seconds: seconds}
	for sec := 0; sec < seconds; sec++ {
		for j := 0; j < perSecond; j++ {
			ph := rng.IntN(2)
			label := []string{"GET /a", "POST /b, quoted"}[ph]
			// Log-normal-ish latencies from 200 µs to seconds, so the
			// histograms span many buckets.
			el := min(time.Duration(200+rng.ExpFloat64()*rng.ExpFloat64()*30_000)*time.Microsecond, 900*time.Millisecond)
			// Samples complete within their second, as the engine files them.
			intended := f.t0.Add(time.Duration(sec)*time.Second + time.Duration(rng.Int64N(int64(time.Second-el))))
			s := core.Sample{Label: label, Intended: intended.UnixNano(), Elapsed: el, Service: el / 2, Status: 200,
				BytesRecv: int64(100 + rng.IntN(50)), BytesSent: 40, Thread: fmt.Sprintf("%s 1-%d", label, j), URL: "http://x/a"}
			if rng.IntN(20) == 0 {
				s.Status, s.Class, s.Message = 503, core.ErrHTTP5xx, "HTTP 503"
			}
			f.samples = append(f.samples, fxSample{sec: sec, phase: ph, s: s})
		}
	}
	return f
}

// write writes the run directory of the samples for which keep(i) holds, as
// segment seg ("" for a plain run). Odd segments list the phases in reverse
// order, as a generator whose second workload started first would. Seconds
// from stopAt on are not written, and then run.json says running (a killed
// generator).
func (f *fixture) write(t testing.TB, dir, seg string, keep func(i int) bool, reverse bool, stopAt int) {
	t.Helper()
	phases := slices.Clone(fxPhases)
	local := []int{0, 1}
	if reverse {
		phases[0], phases[1] = phases[1], phases[0]
		local = []int{1, 0}
	}
	for i := range phases {
		phases[i].Start = f.t0
		e := f.t0.Add(time.Duration(f.seconds) * time.Second)
		phases[i].End = &e
	}
	end := f.t0.Add(time.Duration(f.seconds) * time.Second)
	info := &rundir.Info{Tool: "plateau", Name: "fx", Start: f.t0, End: &end, Status: rundir.StatusCompleted,
		Phases: phases, Segment: seg, SLA: []string{"p95(response_time) < 10s"}, Host: rundir.Host{Hostname: "gen-host"}}
	// Check outcomes and skipped iterations as the engine counts them: this
	// generator's share.
	var ok, bad int64
	phaseOK, phaseBad := map[int]int64{}, map[int]int64{}
	for i, x := range f.samples {
		if keep(i) && x.sec < stopAt {
			if x.s.Class == core.ErrNone {
				ok++
				phaseOK[x.phase]++
			} else {
				bad++
				phaseBad[x.phase]++
			}
		}
	}
	info.Checks = map[string]rundir.CheckCount{"status ok": {Passed: ok, Failed: bad}}
	for i := range phases {
		if n := phaseOK[local[i]] + phaseBad[local[i]]; n > 0 {
			phases[i].Checks = map[string]rundir.CheckCount{"status ok": {Passed: phaseOK[local[i]], Failed: phaseBad[local[i]]}}
		}
	}
	info.Skipped = map[string]int64{"read": bad}
	if stopAt < f.seconds {
		info.Status, info.End = rundir.StatusRunning, nil
		for i := range phases {
			phases[i].End = nil
		}
	}
	w, err := rundir.Create(dir, info, []byte("name: fx\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	for sec := 0; sec < min(f.seconds, stopAt); sec++ {
		iv := &metrics.Interval{Aggs: map[metrics.Key]*metrics.Agg{}, Raw: make([][]byte, 1)}
		users := map[string]int{"read": 0, "write": 0}
		for i, x := range f.samples {
			if x.sec != sec || !keep(i) {
				continue
			}
			k := metrics.Key{Workload: fxPhases[x.phase].Workload, Phase: local[x.phase], Label: x.s.Label}
			a := iv.Aggs[k]
			if a == nil {
				a = metrics.NewAgg()
				iv.Aggs[k] = a
			}
			a.Add(&x.s)
			iv.Raw[0] = rundir.AppendJTL(iv.Raw[0], &x.s)
			users[fxPhases[x.phase].Workload] = 1
		}
		if err := w.WriteInterval(f.t0.Add(time.Duration(sec)*time.Second), iv, users, map[string]int64{"read": 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := rundir.WriteInfo(dir, info); err != nil {
		t.Fatal(err)
	}
}

// segments writes n segment directories striping the samples (sample i to
// segment i mod n) and returns them.
func (f *fixture) segments(t testing.TB, n int) []string {
	var dirs []string
	for s := 0; s < n; s++ {
		d := filepath.Join(t.TempDir(), fmt.Sprintf("seg%d", s))
		f.write(t, d, fmt.Sprintf("%d/%d", s, n), func(i int) bool { return i%n == s }, s%2 == 1, f.seconds)
		dirs = append(dirs, d)
	}
	return dirs
}

type cellKey struct {
	t     int64
	w     string
	phase string
	label string
}

// cells reads a run directory's label records, keyed by phase name.
func cells(t *testing.T, dir string) map[cellKey]*metrics.Agg {
	t.Helper()
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[cellKey]*metrics.Agg{}
	err = rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
		if r.Users != nil || r.Dropped != nil {
			return nil
		}
		a, err := r.Agg()
		if err != nil {
			return err
		}
		k := cellKey{r.T, r.Workload, info.Phases[r.Phase].Name, r.Label}
		if prev := out[k]; prev != nil {
			prev.Merge(a)
		} else {
			out[k] = a
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameAgg(a, b *metrics.Agg) string {
	switch {
	case a.Count != b.Count, a.Errors != b.Errors, a.SumUs != b.SumUs, a.MinUs != b.MinUs, a.MaxUs != b.MaxUs,
		a.SumServiceUs != b.SumServiceUs, a.Sent != b.Sent, a.Recv != b.Recv:
		return fmt.Sprintf("n %d/%d err %d/%d sum %d/%d min %d/%d max %d/%d", a.Count, b.Count, a.Errors, b.Errors,
			a.SumUs, b.SumUs, a.MinUs, b.MinUs, a.MaxUs, b.MaxUs)
	case !a.Hist.Equals(b.Hist):
		return "histograms differ"
	}
	return ""
}

// The merge of N striped segments equals the single run of all samples, cell
// by cell (second × workload × phase × label), for N = 1, 2, 3, 7; the report
// numbers (percentiles from the merged histograms) are those of the single
// run; the raw samples are all there, once, in completion order.
func TestMergeEqualsSingleRun(t *testing.T) {
	f := newFixture(1, 6, 300)
	single := filepath.Join(t.TempDir(), "single")
	f.write(t, single, "", func(int) bool { return true }, false, f.seconds)
	want := cells(t, single)
	wantSum := summarize(t, single)
	for _, n := range []int{1, 2, 3, 7} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "merged")
			segs := f.segments(t, n)
			res, err := Merge(Options{Dirs: segs, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Incomplete) != 0 || res.Info.Status != rundir.StatusCompleted {
				t.Fatalf("incomplete %+v, status %s", res.Incomplete, res.Info.Status)
			}
			// The merged run is a run of its own (the results history keys
			// on the id), not one of its segments.
			merged, err := rundir.ReadInfo(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range segs {
				seg, err := rundir.ReadInfo(d)
				if err != nil {
					t.Fatal(err)
				}
				if merged.ID == "" || seg.RunID() == merged.ID {
					t.Errorf("merged id %q, segment %s id %q", merged.ID, d, seg.RunID())
				}
			}
			wantInfo, err := rundir.ReadInfo(single)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(res.Info.Checks, wantInfo.Checks) || !reflect.DeepEqual(res.Info.Skipped, wantInfo.Skipped) {
				t.Errorf("merged checks %v skipped %v, want %v %v", res.Info.Checks, res.Info.Skipped, wantInfo.Checks, wantInfo.Skipped)
			}
			for i, p := range res.Info.Phases {
				if i >= len(wantInfo.Phases) || !reflect.DeepEqual(p.Checks, wantInfo.Phases[i].Checks) {
					t.Errorf("merged phase %q checks %v, want those of the single run %v", p.Name, p.Checks, wantInfo.Phases)
				}
			}
			got := cells(t, out)
			if len(got) != len(want) {
				t.Fatalf("%d cells, want %d", len(got), len(want))
			}
			for k, w := range want {
				g := got[k]
				if g == nil {
					t.Fatalf("cell %+v missing", k)
				}
				if d := sameAgg(g, w); d != "" {
					t.Fatalf("cell %+v: %s", k, d)
				}
			}
			gotSum := summarize(t, out)
			if fmt.Sprint(gotSum.Labels) != fmt.Sprint(wantSum.Labels) {
				t.Errorf("labels\n got %+v\nwant %+v", gotSum.Labels, wantSum.Labels)
			}
			for i := range wantSum.Phases {
				if fmt.Sprint(gotSum.Phases[i].Labels) != fmt.Sprint(wantSum.Phases[i].Labels) {
					t.Errorf("phase %d labels differ", i)
				}
			}
			if fmt.Sprint(gotSum.SLA) != fmt.Sprint(wantSum.SLA) {
				t.Errorf("SLA %+v, want %+v", gotSum.SLA, wantSum.SLA)
			}
			if gotSum.Dropped["read"] != int64(n*f.seconds) {
				t.Errorf("dropped %v, want %d (every segment's dropped counts add)", gotSum.Dropped, n*f.seconds)
			}
			checkSamples(t, single, out)
			mi := readMergedInfo(t, out)
			if len(mi.Segments) != n || mi.Segments[n-1].Segment != fmt.Sprintf("%d/%d", n-1, n) {
				t.Errorf("run.json segments %+v", mi.Segments)
			}
			var total int64
			for _, s := range mi.Segments {
				total += s.Samples
			}
			if total != int64(len(f.samples)) {
				t.Errorf("segment samples add to %d, want %d", total, len(f.samples))
			}
		})
	}
}

func summarize(t *testing.T, dir string) *analysis.Summary {
	t.Helper()
	d, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Summarize(d, d.Info.SLA)
}

func readMergedInfo(t *testing.T, dir string) *Info {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.InfoFile))
	if err != nil {
		t.Fatal(err)
	}
	in := &Info{Info: &rundir.Info{}}
	if err := json.Unmarshal(b, in); err != nil {
		t.Fatal(err)
	}
	return in
}

// checkSamples: the merged sample log holds exactly the single run's lines
// and is ordered by completion time.
func checkSamples(t *testing.T, single, merged string) {
	t.Helper()
	read := func(dir string) []string {
		b, err := os.ReadFile(filepath.Join(dir, rundir.SamplesFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		return lines[1:]
	}
	want, got := read(single), read(merged)
	prev := int64(0)
	for i, l := range got {
		at, err := completion([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		// Inputs are ordered by completion second, not by ms within it.
		if at/1000 < prev/1000 {
			t.Fatalf("line %d completes at %d, before line %d at %d", i+2, at, i+1, prev)
		}
		prev = max(prev, at)
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(want, got) {
		t.Errorf("merged samples differ from the single run's: %d vs %d lines", len(got), len(want))
	}
}

// A generator that died, and one that never reported, are named with how
// long their load is missing; the merged status is failed and the load that
// did run is still merged.
func TestMissingAndShortSegments(t *testing.T) {
	f := newFixture(2, 8, 50)
	dirs := f.segments(t, 3)
	// Segment 1 dies after 3 s; segment 2 never wrote anything.
	short := filepath.Join(t.TempDir(), "short")
	f.write(t, short, "1/3", func(i int) bool { return i%3 == 1 }, true, 3)
	out := filepath.Join(t.TempDir(), "merged")
	res, err := Merge(Options{Dirs: []string{dirs[0], short, filepath.Join(t.TempDir(), "gone")}, Out: out, Segments: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Status != rundir.StatusFailed {
		t.Errorf("status %q, want failed", res.Info.Status)
	}
	if len(res.Incomplete) != 2 {
		t.Fatalf("incomplete %+v, want segments 1/3 and 2/3", res.Incomplete)
	}
	if s := res.Incomplete[0]; s.Segment != "1/3" || s.MissingS != 5 {
		t.Errorf("short segment %+v, want 1/3 missing 5 s", s)
	}
	if s := res.Incomplete[1]; s.Segment != "2/3" || s.MissingS != 8 || s.Status != "missing" {
		t.Errorf("missing segment %+v, want 2/3 missing for the whole 8 s", s)
	}
	mi := readMergedInfo(t, out)
	notes := strings.Join(mi.Notes, "\n")
	for _, want := range []string{"segment 1/3 (host gen-host) has no data for the last 5 s", "segment 2/3 is missing",
		"gone: no run.json"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.Contains(mi.Stopped, "1/3 for 5 s") || !strings.Contains(mi.Stopped, "2/3 for 8 s") {
		t.Errorf("stopped %q", mi.Stopped)
	}
	s := summarize(t, out)
	var wantN int64
	for i, x := range f.samples {
		if i%3 == 0 || (i%3 == 1 && x.sec < 3) {
			wantN++
		}
	}
	if tot := s.Labels[len(s.Labels)-1]; tot.Samples != wantN {
		t.Errorf("merged %d samples, want the %d that ran", tot.Samples, wantN)
	}
	if s.Status != rundir.StatusFailed {
		t.Errorf("summary status %q", s.Status)
	}
}

// Generators all killed at the same moment: nothing is missing relative to
// the others, and the merged run reads like one killed run.
func TestAllKilledTogether(t *testing.T) {
	f := newFixture(7, 5, 20)
	var dirs []string
	for s := 0; s < 2; s++ {
		d := filepath.Join(t.TempDir(), fmt.Sprint(s))
		f.write(t, d, fmt.Sprintf("%d/2", s), func(i int) bool { return i%2 == s }, false, 3)
		dirs = append(dirs, d)
	}
	res, err := Merge(Options{Dirs: dirs, Out: filepath.Join(t.TempDir(), "m")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Info.Status != rundir.StatusRunning || len(res.Incomplete) != 0 {
		t.Errorf("status %q, incomplete %+v; want running, none", res.Info.Status, res.Incomplete)
	}
}

// Monitor series of every generator survive under "<host>#<i>/<target>".
func TestMonitorsKeptPerHost(t *testing.T) {
	f := newFixture(3, 2, 10)
	dirs := f.segments(t, 2)
	for i, d := range dirs {
		m := filepath.Join(d, monitor.SubDir)
		if err := os.MkdirAll(m, 0o755); err != nil {
			t.Fatal(err)
		}
		csv := monitor.CSVHeader + fmt.Sprintf("2027-01-15T08:00:00.000Z,generator host,host,cpu_busy_pct,%%,%d\n", 10+i) +
			"2027-01-15T08:00:01.000Z,generator host,host,cpu_busy_pct,%,NaN\n2027-01-15T08:00:02.0" // torn tail
		if err := os.WriteFile(filepath.Join(m, "generator_host.csv"), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
		ev := `{"time":"2027-01-15T08:00:00Z","target":"generator host","kind":"host","event":"started","file":"generator_host.csv","interval_s":1}` + "\n"
		if err := os.WriteFile(filepath.Join(m, monitor.EventsFile), []byte(ev), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "merged")
	if _, err := Merge(Options{Dirs: dirs, Out: out}); err != nil {
		t.Fatal(err)
	}
	series, statuses, err := monitor.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(series) != 2 || len(statuses) != 2 {
		t.Fatalf("%d series, %d statuses, want 2 each", len(series), len(statuses))
	}
	for i, s := range series {
		want := fmt.Sprintf("gen-host#%d/generator host", i)
		if s.Target != want || len(s.Points) != 2 || s.Points[0].V != float64(10+i) {
			t.Errorf("series %d: %s %d points %v, want %s with 2 points", i, s.Target, len(s.Points), s.Points, want)
		}
		if !statuses[i].Started || statuses[i].Name != want {
			t.Errorf("status %d %+v", i, statuses[i])
		}
	}
}

func TestMergeRefuses(t *testing.T) {
	f := newFixture(4, 2, 10)
	dirs := f.segments(t, 2)
	other := f.segments(t, 3)
	bad := filepath.Join(t.TempDir(), "bad")
	f.write(t, bad, "1/2", func(i int) bool { return i%2 == 1 }, false, 2)
	if err := os.WriteFile(filepath.Join(bad, rundir.PlanFile), []byte("name: other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	torn := filepath.Join(t.TempDir(), "torn")
	f.write(t, torn, "1/2", func(i int) bool { return i%2 == 1 }, false, 2)
	fh, err := os.OpenFile(filepath.Join(torn, rundir.IntervalsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(fh, "{\"t\":%d,\"ph\":0,\"label\":\"x\",\"n\":\"many\"}\n", f.t0.Unix())
	fh.Close()
	cases := []struct {
		name string
		dirs []string
		want string
	}{
		{"same segment twice", []string{dirs[0], dirs[0]}, "are both segment 0/2"},
		{"different splits", []string{dirs[0], other[1]}, "split differently"},
		{"different plans", []string{dirs[0], bad}, "ran different plans"},
		{"bad record", []string{dirs[0], torn}, filepath.Join(torn, rundir.IntervalsFile) + ":"},
		{"nothing", []string{filepath.Join(t.TempDir(), "none")}, "none of the 1 directories"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Merge(Options{Dirs: c.dirs, Out: filepath.Join(t.TempDir(), "out")})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// A killed generator's torn last sample line is left out and noted.
func TestTornSampleLine(t *testing.T) {
	f := newFixture(5, 2, 20)
	dirs := f.segments(t, 2)
	p := filepath.Join(dirs[1], rundir.SamplesFile)
	fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(fh, "%d,12,\"cut", f.t0.UnixMilli())
	fh.Close()
	out := filepath.Join(t.TempDir(), "merged")
	res, err := Merge(Options{Dirs: dirs, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if res.Samples != int64(len(f.samples)) {
		t.Errorf("%d sample lines, want %d", res.Samples, len(f.samples))
	}
	if !strings.Contains(strings.Join(res.Info.Notes, "\n"), "cut off") {
		t.Errorf("notes %q", res.Info.Notes)
	}
	fh2, _ := os.Open(filepath.Join(out, rundir.SamplesFile))
	defer fh2.Close()
	n := 0
	for sc := bufio.NewScanner(fh2); sc.Scan(); n++ {
	}
	if n != len(f.samples)+1 {
		t.Errorf("%d lines in merged file", n)
	}
}

// BenchmarkMerge merges 4 segments of a 60-second run at 2000 requests per
// second (120 000 samples, 2 labels): interval logs and raw samples.
func BenchmarkMerge(b *testing.B) {
	f := newFixture(6, 60, 2000)
	dirs := f.segments(b, 4)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Merge(Options{Dirs: dirs, Out: filepath.Join(b.TempDir(), "m")}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(f.samples))*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}
