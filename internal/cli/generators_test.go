package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/merge"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// rowServer answers every request and counts, per source address, the
// requests and the feeder rows (?row=) it saw.
type rowServer struct {
	mu     sync.Mutex
	bySrc  map[string]int
	rows   map[string]int
	total  int
	server *http.Server
	URL    string
}

func startRowServer(t *testing.T, listen string) *rowServer {
	t.Helper()
	s := &rowServer{bySrc: map[string]int{}, rows: map[string]int{}}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		t.Fatal(err)
	}
	s.server = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		s.mu.Lock()
		s.bySrc[host]++
		s.total++
		if row := r.URL.Query().Get("row"); row != "" {
			s.rows[row]++
		}
		s.mu.Unlock()
		w.Write([]byte("ok"))
	})}
	go s.server.Serve(ln)
	s.URL = "http://" + ln.Addr().String()
	t.Cleanup(func() { s.server.Close() })
	return s
}

// rowsCSV writes a feeder file of n rows and returns its directory.
func rowsCSV(t *testing.T, n int) string {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "r%05d\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, "rows.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// openPlan is an open-model plan at rate/s for secs seconds whose every
// iteration reads one row of a unique feeder.
func openPlan(t *testing.T, target string, rate, secs int) string {
	dir := rowsCSV(t, rate*secs)
	p := filepath.Join(dir, "plan.yaml")
	src := fmt.Sprintf(`name: split
target: %s
data:
  rows: {csv: rows.csv, order: unique}
workloads:
  w:
    scenario:
      - request: {name: get, url: "/x?row=${rows.id}"}
    load: {rate: %d/s, duration: %ds, max_users: 40}
sla:
  - error_rate < 1%%
`, target, rate, secs)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// startInstant is a whole second at least lead ahead, so the plan's seconds
// line up with the interval log's.
func startInstant(lead time.Duration) time.Time {
	return time.Now().Add(lead).Truncate(time.Second).Add(time.Second)
}

// perSecond reads a run directory's request counts per second.
func perSecond(t *testing.T, dir string) map[int64]int64 {
	t.Helper()
	out := map[int64]int64{}
	err := rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
		if r.Users == nil && r.Dropped == nil && !r.Tx {
			out[r.T] += r.Count
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lateSlack returns, for a second s of the run in dir, how many requests
// of an open-model rate may have moved across its boundaries because they
// completed late: a request due in second s−1 that completes in s took at
// least the time to the boundary from its intended start, and open-model
// times count from the intended start, so at most rate × (the longest time
// recorded in s) requests moved in, and likewise rate × (the longest in
// s+1) moved out. On an idle machine (times of a millisecond) this is 0,
// leaving the ±1 of the schedule; a loaded machine that stalls the
// generator for 100 ms widens it by what the run itself recorded.
func lateSlack(t *testing.T, dir string, rate int64) func(s int64) int64 {
	t.Helper()
	maxUs := map[int64]int64{}
	err := rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
		if r.Users == nil && r.Dropped == nil && !r.Tx {
			maxUs[r.T] = max(maxUs[r.T], r.MaxUs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return func(s int64) int64 {
		n := rate * max(maxUs[s], maxUs[s+1]) / 1_000_000
		if n > 0 {
			t.Logf("second %d: ±%d more: requests took up to %d ms", s, n, max(maxUs[s], maxUs[s+1])/1000)
		}
		return n
	}
}

// groundTruth is one histogram fed every sample of the segments: all their
// label records added in whatever order, seconds and phases ignored.
func groundTruth(t *testing.T, dirs []string) *metrics.Agg {
	t.Helper()
	all := metrics.NewAgg()
	for _, d := range dirs {
		err := rundir.ReadIntervals(d, func(r *rundir.IntervalRecord) error {
			if r.Users != nil || r.Dropped != nil || r.Tx {
				return nil
			}
			a, err := r.Agg()
			if err != nil {
				return err
			}
			all.Merge(a)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return all
}

func readRunInfo(t *testing.T, dir string) *merge.Info {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.InfoFile))
	if err != nil {
		t.Fatal(err)
	}
	in := &merge.Info{Info: &rundir.Info{}}
	if err := json.Unmarshal(b, in); err != nil {
		t.Fatal(err)
	}
	return in
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); {
		n++
	}
	return n
}

// `plateau run --generators N` at a fixed total rate: after the merge, every
// second holds the planned count (±1), the percentiles are those of one
// histogram fed every sample, no feeder row is used twice, and the load is
// exactly the plan's, for N = 1, 2, 3 and 7.
func TestGeneratorsExact(t *testing.T) {
	if testing.Short() {
		t.Skip("runs local generator processes for seconds")
	}
	const rate, secs = 40, 3
	for _, n := range []int{1, 2, 3, 7} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			var (
				srv          *rowServer
				out          string
				start, began time.Time
			)
			for attempt := 1; ; attempt++ {
				srv = startRowServer(t, "127.0.0.1:0")
				plan := openPlan(t, srv.URL, rate, secs)
				out = filepath.Join(t.TempDir(), "run")
				start = startInstant(1500 * time.Millisecond)
				began = time.Now()
				cmd := plateauCmd("run", plan, "--generators", strconv.Itoa(n), "--start-at", start.Format(time.RFC3339Nano), "-o", out, "-q")
				b, err := cmd.CombinedOutput()
				if err == nil {
					break
				}
				// Exit 3: the run itself found that the planned load was
				// not applied (iterations that could not start on time on
				// this busy machine): measure again, up to 3 times.
				var ee *exec.ExitError
				if errors.As(err, &ee) && ee.ExitCode() == ExitNotHeld && attempt < 3 {
					t.Logf("attempt %d: the run was invalid, measuring again:\n%s", attempt, b)
					continue
				}
				t.Fatalf("plateau run --generators %d: %v\n%s", n, err, b)
			}
			t.Logf("N=%d: %.2f s from launch for a %d s load starting %.2f s after launch",
				n, time.Since(began).Seconds(), secs, start.Sub(began).Seconds())

			counts := perSecond(t, out)
			slack := lateSlack(t, out, rate)
			var total int64
			for s := start.Unix(); s < start.Unix()+secs; s++ {
				if c, tol := counts[s], 1+slack(s); c < rate-tol || c > rate+tol {
					t.Errorf("second %d: %d requests, want %d ± %d (all seconds: %v)", s-start.Unix(), c, rate, tol, counts)
				}
			}
			for _, c := range counts {
				total += c
			}
			// The plan's iterations, each sent or — when a generator
			// starved of CPU could not start it on time — dropped and
			// counted (1 of 120 beside two CPU burners at load 40): the
			// counts below are exact either way.
			sum := readSummary(t, out)
			var dropped int64
			for _, d := range sum.Dropped {
				dropped += d
			}
			sent := int64(rate*secs) - dropped
			if dropped > 0 {
				t.Logf("%d iterations dropped and counted (busy machine)", dropped)
			}
			if total != sent || dropped < 0 || sent <= 0 {
				t.Errorf("%d requests in all and %d dropped, want %d in all", total, dropped, rate*secs)
			}
			// The merged validity adds the generators' schedules and keeps
			// each one's own CPU.
			if v := sum.Validity; v == nil || len(v.Phases) != 1 || v.Phases[0].Planned != rate*secs ||
				v.Phases[0].Started != sent || v.Phases[0].PlannedRate != rate || len(v.Phases[0].CPUBySegment) == 0 || len(v.Phases[0].CPUBySegment) > n {
				t.Errorf("merged validity %+v, want %d planned and started at %d/s, CPU of %d generators", v, rate*secs, rate, n)
			}
			tot := sum.Labels[len(sum.Labels)-1]
			var dirs []string
			for i := 0; i < n; i++ {
				dirs = append(dirs, filepath.Join(out, SegmentsDir, strconv.Itoa(i)))
			}
			truth := groundTruth(t, dirs)
			want := truth.Stats("TOTAL", false, 0)
			if tot.Samples != want.Samples || tot.Samples != sent || tot.P50Ms != want.P50Ms || tot.P90Ms != want.P90Ms ||
				tot.P95Ms != want.P95Ms || tot.P99Ms != want.P99Ms || tot.MaxMs != want.MaxMs || tot.MeanMs != want.MeanMs {
				t.Errorf("merged TOTAL %+v\nwant %+v (one histogram fed every sample)", tot, want)
			}
			if got := int64(countLines(t, filepath.Join(out, rundir.SamplesFile))); got != sent+1 {
				t.Errorf("samples.jtl has %d lines, want %d samples + header", got, sent)
			}
			srv.mu.Lock()
			if int64(len(srv.rows)) != sent || int64(srv.total) != sent {
				t.Errorf("server saw %d requests, %d distinct rows; want %d each", srv.total, len(srv.rows), sent)
			}
			for r, c := range srv.rows {
				if c != 1 {
					t.Errorf("row %s used %d times", r, c)
				}
			}
			srv.mu.Unlock()
			info := readRunInfo(t, out)
			if len(info.Segments) != n || info.Status != rundir.StatusCompleted {
				t.Errorf("run.json: status %s, %d segments", info.Status, len(info.Segments))
			}
			for i, s := range info.Segments {
				// Iteration k runs on segment k mod N.
				share := int64((rate*secs - i + n - 1) / n)
				if s.Samples+s.Dropped != share {
					t.Errorf("segment %s ran %d iterations and dropped %d, want %d in all", s.Segment, s.Samples, s.Dropped, share)
				}
			}
			if _, err := os.Stat(filepath.Join(out, "report.html")); err != nil {
				t.Errorf("no report: %v", err)
			}
		})
	}
}

// Closed-model users are striped by global index: user v (1-based thread
// number v+1) runs on segment v mod N, and ramps up at its global offset.
func TestSegmentUsersStriped(t *testing.T) {
	if testing.Short() {
		t.Skip("runs generator processes")
	}
	srv, _ := testServer(t)
	p := writePlan(t, fmt.Sprintf(`name: users
target: %s
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
      - think: 200ms
    load: {users: 5, ramp_up: 2s, duration: 3s}
`, srv.URL))
	const n = 2
	// A user that starts late on a loaded machine (a process stalled past
	// its offset) is measured again, up to 3 times; starting early, the
	// wrong users, or late in every attempt fail.
	for attempt := 1; ; attempt++ {
		late := runStriped(t, p, n)
		if len(late) == 0 {
			return
		}
		if attempt == 3 {
			for _, l := range late {
				t.Error(l)
			}
			return
		}
		t.Logf("attempt %d: %v; measuring again (the machine is busy)", attempt, late)
	}
}

// runStriped runs the plan p on n segments and checks each segment's
// users; it returns the users that started over 150 ms after their offset.
func runStriped(t *testing.T, p string, n int) (late []string) {
	t.Helper()
	start := startInstant(1500 * time.Millisecond)
	base := t.TempDir()
	var dirs []string
	var cmds []*exec.Cmd
	for i := 0; i < n; i++ {
		d := filepath.Join(base, strconv.Itoa(i))
		dirs = append(dirs, d)
		c := plateauCmd("run", p, "--segment", fmt.Sprintf("%d/%d", i, n), "--start-at", start.Format(time.RFC3339Nano), "-o", d, "-q")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for _, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	for i, d := range dirs {
		first := firstStarts(t, filepath.Join(d, rundir.SamplesFile))
		var users []int
		for u := range first {
			users = append(users, u)
		}
		sort.Ints(users)
		var want []int
		for v := i; v < 5; v += n {
			want = append(want, v+1)
		}
		if fmt.Sprint(users) != fmt.Sprint(want) {
			t.Errorf("segment %d ran users %v, want %v", i, users, want)
		}
		for u, at := range first {
			// Ramp-up: global user v starts at 2s·v/5 after the start.
			wantAt := start.Add(2 * time.Second * time.Duration(u-1) / 5)
			switch d := at.Sub(wantAt); {
			case d < -5*time.Millisecond:
				t.Errorf("user %d started %v before its ramp-up offset", u, -d)
			case d > 150*time.Millisecond:
				late = append(late, fmt.Sprintf("user %d started %v after its ramp-up offset", u, d))
			}
		}
	}
	return late
}

// firstStarts reads a JTL file: each thread's (user's) first timeStamp.
func firstStarts(t *testing.T, path string) map[int]time.Time {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]time.Time{}
	sc := bufio.NewScanner(f)
	sc.Scan()
	for sc.Scan() {
		fields := strings.Split(sc.Text(), ",")
		ms, _ := strconv.ParseInt(fields[0], 10, 64)
		thread := fields[5]
		u, err := strconv.Atoi(thread[strings.LastIndexByte(thread, '-')+1:])
		if err != nil {
			t.Fatalf("thread name %q", thread)
		}
		at := time.UnixMilli(ms)
		if prev, ok := out[u]; !ok || at.Before(prev) {
			out[u] = at
		}
	}
	return out
}

// A generator that starts after the common start instant skips the
// iterations already due (counted as dropped) instead of sending them in a
// burst, and ends with the others.
func TestLateGeneratorSkips(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a generator process")
	}
	srv := startRowServer(t, "127.0.0.1:0")
	const rate, secs = 20, 4
	plan := openPlan(t, srv.URL, rate, secs)
	start := time.Now().Add(-2 * time.Second).Truncate(time.Millisecond)
	out := filepath.Join(t.TempDir(), "late")
	b, err := plateauCmd("run", plan, "--segment", "0/1", "--start-at", start.Format(time.RFC3339Nano), "-o", out, "-q").CombinedOutput()
	// Half the schedule was skipped: the load was not held, which the
	// status and the exit code say.
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitNotHeld {
		t.Fatalf("%v, want exit %d (load not held)\n%s", err, ExitNotHeld, b)
	}
	sum := readSummary(t, out)
	if sum.Verdict != "invalid" || sum.Validity == nil || sum.Validity.Phases[0].PlannedRate != rate {
		t.Errorf("verdict %q, validity %+v: want invalid at a planned %d/s", sum.Verdict, sum.Validity, rate)
	}
	ran := sum.Labels[len(sum.Labels)-1].Samples
	dropped := sum.Dropped["w"]
	t.Logf("started 2 s late: %d iterations ran, %d skipped as overdue", ran, dropped)
	if ran+dropped != rate*secs {
		t.Errorf("ran %d + dropped %d, want the %d scheduled", ran, dropped, rate*secs)
	}
	// Every iteration due before the generator started is skipped (2 s
	// worth, and the moments it took to start — from run.json's start: a
	// loaded machine took seconds more), none sent in a burst.
	info := readRunInfo(t, out)
	late := info.Start.Sub(start).Seconds()
	if due := int64(rate * late); dropped < min(rate*2, due) || dropped > due+rate/2 {
		t.Errorf("dropped %d, want the %d due in the %.2f s before it started (a little more for its start-up)", dropped, due, late)
	}
	// No burst: nothing that ran was due before the generator started.
	for u, at := range firstStarts(t, filepath.Join(out, rundir.SamplesFile)) {
		if at.Before(info.Start.Add(-time.Millisecond)) {
			t.Errorf("user %d sent an iteration due at %v, before the generator started at %v", u, at, info.Start)
		}
	}
	if info.End == nil || info.End.Sub(start.Add(secs*time.Second)) > 700*time.Millisecond+max(info.Start.Sub(start.Add(secs*time.Second)), 0) {
		t.Errorf("ended at %v, want with the schedule at %v", info.End, start.Add(secs*time.Second))
	}
}

// One generator killed mid-run: the merge names the missing segment and for
// how long, the status is failed, the exit status says incomplete, and
// plateau report says the same.
func TestGeneratorKilledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs generator processes")
	}
	srv := startRowServer(t, "127.0.0.1:0")
	const rate, secs, n = 30, 6, 3
	plan := openPlan(t, srv.URL, rate, secs)
	start := startInstant(1500 * time.Millisecond)
	base := t.TempDir()
	var dirs []string
	var cmds []*exec.Cmd
	for i := 0; i < n; i++ {
		d := filepath.Join(base, fmt.Sprintf("segment-%d", i))
		dirs = append(dirs, d)
		c := plateauCmd("run", plan, "--segment", fmt.Sprintf("%d/%d", i, n), "--start-at", start.Format(time.RFC3339Nano), "-o", d, "-q")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	time.Sleep(time.Until(start.Add(2500 * time.Millisecond)))
	killedAt := time.Now()
	if err := cmds[1].Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		_ = c.Wait()
	}
	out := filepath.Join(base, "merged")
	code, stdout, stderr := runCLI(t, "merge", "--segments", "3", dirs[0], dirs[1], dirs[2], "-o", out)
	if code != ExitError {
		t.Fatalf("exit %d, want %d (incomplete)\n%s\n%s", code, ExitError, stdout, stderr)
	}
	info := readRunInfo(t, out)
	if info.Status != rundir.StatusFailed {
		t.Errorf("status %q", info.Status)
	}
	seg := info.Segments[1]
	wantMissing := start.Add(secs * time.Second).Sub(killedAt).Seconds()
	if seg.Segment != "1/3" || seg.MissingS < wantMissing-1.2 || seg.MissingS > wantMissing+1.2 {
		t.Errorf("segment %+v, want 1/3 missing about %.1f s", seg, wantMissing)
	}
	missing := strconv.FormatFloat(seg.MissingS, 'f', -1, 64) + " s"
	for _, where := range []string{stderr, strings.Join(info.Notes, "\n"), info.Stopped} {
		if !strings.Contains(where, "1/3") || !strings.Contains(where, missing) {
			t.Errorf("%q does not name segment 1/3 and %s", where, missing)
		}
	}
	code, stdout, stderr = runCLI(t, "report", out, "--format", "md,json")
	if code == ExitError {
		t.Fatalf("report: exit %d\n%s\n%s", code, stdout, stderr)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"segment 1/3", "no data for the last " + missing, "The run failed"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	// The load that did run is all there: the server's count of the two
	// survivors' requests plus what segment 1 recorded before it died.
	sum := readSummary(t, out)
	srv.mu.Lock()
	served := srv.total
	srv.mu.Unlock()
	if got := sum.Labels[len(sum.Labels)-1].Samples; got > int64(served) || got < int64(served)-rate {
		t.Errorf("merged %d samples, server answered %d", got, served)
	}
}
