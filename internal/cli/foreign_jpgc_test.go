package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// jpgcInstalled: JMeter with the JMeter Plugins' Custom Thread Groups
// (internal/importer/testdata/install-deps.sh jmeter).
func jpgcInstalled() bool {
	home, ok := jmeterInstalled()
	m, _ := filepath.Glob(filepath.Join(home, "lib", "ext", "jmeter-plugins-casutg-*.jar"))
	return ok && len(m) > 0
}

// jtlSample is one row of a CSV JTL: its end and the thread count JMeter
// wrote with it.
type jtlSample struct {
	end        int64 // Unix ns
	allThreads int
	label      string
}

func jtlSamples(t *testing.T, path string) []jtlSample {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	col := map[string]int{}
	for i, h := range strings.Split(lines[0], ",") {
		col[h] = i
	}
	for _, h := range []string{"timeStamp", "elapsed", "allThreads", "label"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("%s: no %s column in %q", path, h, lines[0])
		}
	}
	var out []jtlSample
	for _, l := range lines[1:] {
		fs := strings.Split(l, ",")
		s, err1 := strconv.ParseInt(fs[col["timeStamp"]], 10, 64)
		e, err2 := strconv.ParseInt(fs[col["elapsed"]], 10, 64)
		n, err3 := strconv.Atoi(fs[col["allThreads"]])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: %q", path, l)
		}
		out = append(out, jtlSample{end: (s + e) * 1e6, allThreads: n, label: fs[col["label"]]})
	}
	return out
}

// jmeterStart is the start of JMeter's first thread group, as its log
// says it.
func jmeterStart(t *testing.T, dir string) time.Time {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tool", "jmeter.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "StandardJMeterEngine: Starting ThreadGroup: 1 :") && len(l) > 23 {
			at, err := time.ParseInLocation("2006-01-02 15:04:05,000", l[:23], time.Local)
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
	}
	t.Fatal("jmeter.log: no thread group started")
	return time.Time{}
}

// TestRunJMeterPluginPhases runs the JMeter Plugins' thread groups in
// JMeter (with the plugins installed as the tests install them) under
// plateau run, against a loopback stand-in: the phase table holds each
// hold the plugins schedule, placed from JMeter's start; each phase's
// samples are those JMeter's own JTL completed in its window; in each
// thread-count phase JMeter's own thread count (allThreads, the median
// over the samples in it) is the declared one; and for each arrival-rate
// phase the notes say "declared X, Y reached" exactly when the rate in
// JMeter's JTL over the phase is off the declared one, with the JTL's
// figure.
func TestRunJMeterPluginPhases(t *testing.T) {
	foreignTool(t, "JMeter with the JMeter Plugins' Custom Thread Groups", jpgcInstalled())
	t.Parallel()
	for _, c := range []struct {
		plan  string
		props []string
		want  []declaredWant
		// arrivals: declared samples a second of each rate phase (two
		// samples an arrival in the Arrivals group, one in the Free-Form).
		rates map[string]float64
		users map[string]int
		// arrivals: what each arrival-rate group's schedule adds up to
		// (worked out from the plan), and the labels its arrivals write.
		arrivals []int
		labels   [][]string
	}{
		{
			plan:  "testdata/declared/jpgc-threads.jmx",
			props: []string{"conc=6"},
			want: []declaredWant{
				{name: "3 threads", from: 0, to: 4 * time.Second},
				{name: "6 threads", from: 4 * time.Second, to: 14 * time.Second},
				{name: "2 threads (1)", from: 18 * time.Second, to: 20 * time.Second},
				{name: "4 threads (1)", from: 20 * time.Second, to: 24 * time.Second},
				{name: "2 threads (2)", from: 28 * time.Second, to: 31 * time.Second},
				{name: "4 threads (2)", from: 31 * time.Second, to: 35 * time.Second},
				{name: "2 threads (3)", from: 35 * time.Second, to: 37 * time.Second},
			},
			users: map[string]int{"3 threads": 3, "6 threads": 6, "2 threads (1)": 2, "4 threads (1)": 4, "2 threads (2)": 2, "4 threads (2)": 4, "2 threads (3)": 2},
		},
		{
			plan:  "testdata/declared/jpgc-arrivals.jmx",
			props: []string{"rate=8"},
			want: []declaredWant{
				{name: "4 arrivals/s", from: 0, to: 4 * time.Second},
				{name: "8 arrivals/s", from: 4 * time.Second, to: 14 * time.Second},
				{name: "240 arrivals/min", from: 18 * time.Second, to: 24 * time.Second},
				{name: "480 arrivals/min", from: 27 * time.Second, to: 33 * time.Second},
			},
			rates: map[string]float64{"4 arrivals/s": 8, "8 arrivals/s": 16, "240 arrivals/min": 4, "480 arrivals/min": 8},
			// Arrivals: 4/s for 4 s, then 8/s for 10 s. Free-Form: 4/s for
			// 6 s, 4 to 8/s over 3 s, 8/s for 6 s.
			arrivals: []int{4*4 + 8*10, 4*6 + 6*3 + 8*6},
			labels:   [][]string{{"GET /a", "GET /b"}, {"GET /ff"}},
		},
	} {
		t.Run(filepath.Base(c.plan), func(t *testing.T) {
			t.Parallel()
			srv := shopServer()
			defer srv.Close()
			port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
			dir := filepath.Join(t.TempDir(), "run")
			args := []string{"run", copyScript(t, c.plan), "-J", "port=" + port, "-o", dir, "-q"}
			for _, p := range c.props {
				args = append(args, "-J", p)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			code, out, errOut := runCLICtx(ctx, args...)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			start := jmeterStart(t, dir)
			for i := range c.want {
				c.want[i].ref = start
			}
			samples := jtlSamples(t, filepath.Join(dir, "tool", "results.jtl"))
			ends := make([]int64, len(samples))
			for i, s := range samples {
				ends[i] = s.end
			}
			// Placed from JMeter's start itself: within the second the
			// rounding inwards takes; each phase's samples are those
			// JMeter completed in its window. (JMeter's first samples may
			// complete seconds late on a busy machine — its JVM warms up —
			// so the first hold may hold none; its count is still checked.)
			info, err := rundir.ReadInfo(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Phases) != len(c.want) {
				t.Fatalf("%d phases %+v, the plan declares %d\nnotes: %s", len(info.Phases), info.Phases, len(c.want), strings.Join(info.Notes, "\n"))
			}
			sum := readSummary(t, dir)
			if len(sum.Phases) != len(c.want) {
				t.Fatalf("summary: %d phases", len(sum.Phases))
			}
			for i, w := range c.want {
				p := info.Phases[i]
				if p.Name != w.name || p.End == nil {
					t.Fatalf("phase %d: %+v, declared %q", i, p, w.name)
				}
				if d := p.Start.Sub(start.Add(w.from)); d < 0 || d >= time.Second {
					t.Errorf("phase %q starts %s, %s after JMeter's start %s; declared %s", p.Name, p.Start, p.Start.Sub(start), start, w.from)
				}
				if got, hold := p.End.Sub(p.Start), w.to-w.from; got > hold || got < hold-time.Second {
					t.Errorf("phase %q lasts %s, the declared hold %s", p.Name, got, hold)
				}
				var n int64
				for _, e := range ends {
					if e >= p.Start.UnixNano() && e < p.End.UnixNano() {
						n++
					}
				}
				var got int64 = -1
				for _, l := range sum.Phases[i].Labels {
					if l.Label == "TOTAL" {
						got = l.Samples
					}
				}
				if got < 0 && n == 0 && w.from == 0 {
					got = 0 // a phase without samples has no TOTAL row
				}
				if got != n || n == 0 && w.from > 0 {
					t.Errorf("phase %q: %d samples in the summary, JMeter completed %d in its window", p.Name, got, n)
				}
			}
			notes := strings.Join(info.Notes, "\n")
			if c.arrivals != nil {
				// JMeter's own count of each group's arrivals (its log)
				// is what the declared schedule adds up to — whatever the
				// machine's load, the plugin keeps its schedule and
				// catches up — and each arrival wrote one sample of each
				// of its samplers to the JTL.
				got := arrivalsLogged(t, dir)
				if len(got) != len(c.arrivals) {
					t.Fatalf("jmeter.log: %d groups' arrivals %v, want %d", len(got), got, len(c.arrivals))
				}
				count := map[string]int{}
				for _, s := range samples {
					count[s.label]++
				}
				for i, want := range c.arrivals {
					t.Logf("group %d: declared %d arrivals; JMeter: %d; JTL: %v", i+1, want, got[i], count)
					if got[i] < want-2 || got[i] > want+1 {
						t.Errorf("group %d: JMeter made %d arrivals, the declared schedule %d", i+1, got[i], want)
					}
					for _, l := range c.labels[i] {
						if count[l] != got[i] {
							t.Errorf("group %d: %d samples %q in the JTL, %d arrivals", i+1, count[l], l, got[i])
						}
					}
				}
			}
			for _, p := range info.Phases {
				if p.End == nil {
					continue
				}
				var in []jtlSample
				for _, s := range samples {
					if s.end >= p.Start.UnixNano() && s.end < p.End.UnixNano() {
						in = append(in, s)
					}
				}
				if len(in) == 0 {
					continue // checked above
				}
				if u, ok := c.users[p.Name]; ok {
					var n []int
					for _, s := range in {
						n = append(n, s.allThreads)
					}
					sort.Ints(n)
					med := n[len(n)/2]
					t.Logf("phase %q: declared %d threads; JMeter's JTL: %d samples, allThreads median %d", p.Name, u, len(in), med)
					if med != u || p.Users != u {
						t.Errorf("phase %q: declared %d threads (phase: %d); JMeter's allThreads median over its samples %d", p.Name, u, p.Users, med)
					}
					if !strings.Contains(notes, fmt.Sprintf("%q %d → ", p.Name, u)) {
						t.Errorf("phase %q: the notes do not say what ran beside the declared %d threads:\n%s", p.Name, u, notes)
					}
					if strings.Contains(notes, fmt.Sprintf("phase %q:", p.Name)) {
						t.Errorf("phase %q held its threads, yet the notes say otherwise:\n%s", p.Name, notes)
					}
				}
				if r, ok := c.rates[p.Name]; ok {
					secs := p.End.Sub(p.Start).Seconds()
					reached := float64(len(in)) / secs
					if p.Rate != r {
						t.Errorf("phase %q: declared %v samples/s, want %v", p.Name, p.Rate, r)
					}
					off := math.Abs(reached-r) > math.Max(0.1*r, 2/secs)
					t.Logf("phase %q: declared %v samples/s; JMeter's JTL: %d samples in %v s, %.3g/s", p.Name, r, len(in), secs, reached)
					note := fmt.Sprintf("phase %q: declared %s samples/s, %s samples/s reached", p.Name, fmtRateTest(r), fmtRateTest(reached))
					if each := fmt.Sprintf("%q %s → %s samples/s", p.Name, fmtRateTest(r), fmtRateTest(reached)); !strings.Contains(notes, each) {
						t.Errorf("phase %q: the notes do not say %s:\n%s", p.Name, each, notes)
					}
					if got := strings.Contains(notes, note); got != off {
						t.Errorf("phase %q: JMeter's JTL has %d samples in %v s (%.3g/s, declared %v/s, off: %v); the notes (want %q: %v):\n%s", p.Name, len(in), secs, reached, r, off, note, got, notes)
					}
				}
			}
		})
	}
}

// arrivalsLogged reads each Arrivals group's count of arrivals from
// JMeter's log, in the order the groups finished.
func arrivalsLogged(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "tool", "jmeter.log"))
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, l := range strings.Split(string(b), "\n") {
		if _, v, ok := strings.Cut(l, "no more arrivals needed, had arrivals: "); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("jmeter.log: %q", l)
			}
			out = append(out, n)
		}
	}
	return out
}

// fmtRateTest writes a rate as the run's notes do (importer.fmtRate).
func fmtRateTest(v float64) string {
	if v >= 100 || v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}
