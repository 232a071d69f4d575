package cli

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestRunJMeterPluginGenerators runs the JMeter Plugins' thread groups on
// two local generators (plateau run --generators 2) in real JMeter
// against a loopback stand-in: each generator's plan as run holds its
// share (a Concurrency target of 6 from -J as 3 + 3, each Ultimate row's 2
// threads as 1 + 1; an Arrivals rate of 8 from -J as 4, each Free-Form
// row's rates ÷ 2); the arrivals the two JMeters log add up to what the
// declared schedule adds up to (within what one JMeter is allowed in
// TestRunJMeterPluginPhases, per generator); the merged figures equal
// JMeter's own dashboard (jmeter -g) over the merged JTL; every request
// the JTLs hold was answered by the stand-in.
func TestRunJMeterPluginGenerators(t *testing.T) {
	foreignTool(t, "JMeter with the JMeter Plugins' Custom Thread Groups", jpgcInstalled())
	if testing.Short() {
		t.Skip("runs four JMeters")
	}
	home, _ := jmeterInstalled()
	t.Parallel()
	for _, c := range []struct {
		plan  string
		props []string
		// the plan as each generator ran it: every value of these
		// fields, in order.
		field *regexp.Regexp
		share string
		// arrivals: each group's declared total (as in
		// TestRunJMeterPluginPhases), and the labels.
		arrivals []int
		labels   int
	}{
		{
			plan:   "testdata/declared/jpgc-threads.jmx",
			props:  []string{"conc=6"},
			field:  regexp.MustCompile(`<stringProp name="(?:TargetLevel|82215)">([^<]*)<`),
			share:  "3 1 2 1 2", // TargetLevel ÷ 2; row 1: threads ÷ 2, its startup 2 s kept; row 2: threads ÷ 2, its shutdown 2 s kept
			labels: 3,
		},
		{
			plan:     "testdata/declared/jpgc-arrivals.jmx",
			props:    []string{"rate=8"},
			field:    regexp.MustCompile(`<stringProp name="(?:TargetLevel|98581|18219|62612|47799|33813|97357)">([^<]*)<`),
			share:    "4 0 0 0.3 120 120 0.1 120 240 0.05 240 240 0.1", // TargetLevel ÷ 2; each row's rates ÷ 2, its minutes kept
			arrivals: []int{4*4 + 8*10, 4*6 + 6*3 + 8*6},
			labels:   4,
		},
	} {
		t.Run(filepath.Base(c.plan), func(t *testing.T) {
			t.Parallel()
			var served atomic.Int64
			srv := countingShop(&served)
			defer srv.Close()
			port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
			plan := copyScript(t, c.plan)
			b, err := os.ReadFile(plan)
			if err != nil {
				t.Fatal(err)
			}
			// The Stepping Thread Group is not split: left out here.
			b = []byte(strings.Replace(string(b), `testname="step" enabled="true"`, `testname="step" enabled="false"`, 1))
			if err := os.WriteFile(plan, b, 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(t.TempDir(), "run")
			args := []string{"run", plan, "-J", "port=" + port, "--generators", "2", "-o", dir, "-q"}
			for _, p := range c.props {
				args = append(args, "-J", p)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			code, out := runPlateau(t, nil, args...)
			if code != ExitOK && code != ExitSLAFailed {
				t.Fatalf("exit %d\n%s", code, out)
			}
			info, err := rundir.ReadInfo(dir)
			if err != nil {
				t.Fatal(err)
			}
			if info.Status != rundir.StatusCompleted {
				t.Errorf("status %q (%q)", info.Status, info.Notes)
			}
			arrivals := make([]int, len(c.arrivals))
			var segRows int
			for i := 0; i < 2; i++ {
				seg := filepath.Join(dir, SegmentsDir, strconv.Itoa(i))
				b, err := os.ReadFile(filepath.Join(seg, "tool", "plan-as-run.jmx"))
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, m := range c.field.FindAllSubmatch(b, -1) {
					got = append(got, string(m[1]))
				}
				if strings.Join(got, " ") != c.share {
					t.Errorf("generator %d ran %q, want %q", i, strings.Join(got, " "), c.share)
				}
				segRows += len(csvRows(t, filepath.Join(seg, "tool", "results.jtl")))
				if c.arrivals == nil {
					continue
				}
				logged := arrivalsLogged(t, seg)
				if len(logged) != len(c.arrivals) {
					t.Fatalf("generator %d's jmeter.log: %d groups' arrivals %v, want %d", i, len(logged), logged, len(c.arrivals))
				}
				for g, n := range logged {
					arrivals[g] += n
				}
			}
			for g, want := range c.arrivals {
				t.Logf("group %d: declared %d arrivals; the two JMeters: %d", g+1, want, arrivals[g])
				if arrivals[g] < want-4 || arrivals[g] > want+2 {
					t.Errorf("group %d: the generators made %d arrivals, the declared schedule %d", g+1, arrivals[g], want)
				}
			}
			merged := csvRows(t, filepath.Join(dir, "tool", "results.jtl"))
			if len(merged) != segRows {
				t.Errorf("merged JTL: %d rows, the generators' JTLs %d", len(merged), segRows)
			}
			s := readSummary(t, dir)
			rows := map[string][]float64{}
			var total int64
			for _, l := range s.Labels {
				rows[l.Label] = []float64{float64(l.Samples), float64(l.Errors), l.MinMs, l.MaxMs, l.MeanMs, l.P50Ms, l.P90Ms, l.P95Ms, l.P99Ms}
				if l.Label == "TOTAL" {
					total = l.Samples
				}
			}
			if total == 0 || total != int64(len(merged)) {
				t.Errorf("TOTAL %d, merged JTL %d rows", total, len(merged))
			}
			// The stand-in may have answered a request whose sampler the
			// plugin's schedule stopped before JMeter wrote it (a thread
			// stopped at its group's end, on each generator): JMeter's own
			// JTL does not hold it either. Never fewer answered than
			// recorded, and at most one in flight per generator's group.
			if d := served.Load() - total; d < 0 || d > int64(2*len(c.arrivals)+2) {
				t.Errorf("TOTAL %d, the stand-in answered %d", total, served.Load())
			} else if d > 0 {
				t.Logf("the stand-in answered %d requests JMeter did not record (stopped in flight)", d)
			}
			checkDashboard(t, ctx, home, filepath.Join(dir, "tool", "results.jtl"), rows, c.labels)
		})
	}
}
