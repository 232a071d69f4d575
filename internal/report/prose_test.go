package report_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/accesslog"
	"github.com/plateau-perf/plateau/internal/importer/jstat"
	"github.com/plateau-perf/plateau/internal/importer/jtl"
	"github.com/plateau-perf/plateau/internal/importer/k6"
	"github.com/plateau-perf/plateau/internal/importer/locust"
	"github.com/plateau-perf/plateau/internal/importer/vmstat"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// proseVariant makes one run directory whose report the prose test reads.
type proseVariant struct {
	name string
	make func(t *testing.T, dir string)
}

func synthetic(o reporttest.Options) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		if err := reporttest.Write(dir, o); err != nil {
			t.Fatal(err)
		}
	}
}

func imported(src func() importer.Source, derive bool) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		t.Helper()
		run, err := importer.NewRun(importer.Options{Dir: dir, Name: "imported", DerivePhases: derive, Clock: importer.Clock{Loc: time.UTC}})
		if err != nil {
			t.Fatal(err)
		}
		if err := src().Import(context.Background(), run); err != nil {
			t.Fatal(err)
		}
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// writeAccessLog writes an nginx combined_rt access log of three minutes at
// 5, 10 and 15 requests a second, with one 500 in fifty, and returns its
// path and the three phases.
func writeAccessLog(t *testing.T, dir string) (string, []core.Phase) {
	t.Helper()
	start := time.Date(2025, 5, 13, 11, 10, 0, 0, time.UTC)
	var b strings.Builder
	var phases []core.Phase
	n := 0
	for step, rate := range []int{5, 10, 15} {
		from := start.Add(time.Duration(step) * time.Minute)
		phases = append(phases, core.Phase{Name: fmt.Sprintf("step %d", step+1), Start: from, End: from.Add(time.Minute), Users: rate})
		for sec := range 60 {
			for i := range rate {
				n++
				at := from.Add(time.Duration(sec)*time.Second + time.Duration(i)*time.Second/time.Duration(rate))
				status := 200
				if n%50 == 0 {
					status = 500
				}
				rt := 0.040 + 0.004*float64(rate) + 0.001*float64(n%17)
				fmt.Fprintf(&b, "127.0.0.1 - - [%s] \"GET /api/items/%d HTTP/1.1\" %d 512 \"-\" \"curl/8\" %.3f\n", at.Format("02/Jan/2006:15:04:05 -0700"), 1000+n%40, status, rt)
			}
		}
	}
	path := filepath.Join(dir, "access.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, phases
}

// writeAccessLogNoTimes writes an nginx combined access log (no request
// time field) of three minutes at 5 requests a second, one 500 in fifty.
func writeAccessLogNoTimes(t *testing.T, dir string) string {
	t.Helper()
	start := time.Date(2025, 5, 13, 11, 10, 0, 0, time.UTC)
	var b strings.Builder
	for n := range 900 {
		status := 200
		if (n+1)%50 == 0 {
			status = 500
		}
		at := start.Add(time.Duration(n) * time.Second / 5)
		fmt.Fprintf(&b, "127.0.0.1 - - [%s] \"GET /api/items/%d HTTP/1.1\" %d 512 \"-\" \"curl/8\"\n", at.Format("02/Jan/2006:15:04:05 -0700"), 1000+n%40, status)
	}
	path := filepath.Join(dir, "access.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// proseVariants is the grid of report shapes the prose rules must hold
// for: a demo-like stepped run with monitors, the same without monitors,
// without SLA, one step, constant load, every request failing, and
// imports of each load-tool format.
func proseVariants() []proseVariant {
	imp := "../importer/"
	return []proseVariant{
		{"stepped with monitors", synthetic(reporttest.Options{Monitor: true})},
		{"no monitors", synthetic(reporttest.Options{})},
		{"monitors on an idle interface", synthetic(reporttest.Options{Monitor: true, IdleNetwork: true})},
		{"no SLA", synthetic(reporttest.Options{SLA: []string{}, Monitor: true})},
		{"one step", synthetic(reporttest.Options{Steps: []reporttest.Step{{Users: 8, Seconds: 120, RampUpS: 10}}})},
		{"constant load in four phases", synthetic(reporttest.Options{Steps: []reporttest.Step{{Users: 5, Seconds: 60}, {Users: 5, Seconds: 60}, {Users: 5, Seconds: 60}, {Users: 5, Seconds: 60}}})},
		{"every request fails", synthetic(reporttest.Options{AllErrors: true, Monitor: true})},
		{"12-minute soak with a throughput SLA", synthetic(reporttest.Options{Steps: []reporttest.Step{{Users: 8, Seconds: 720, RampUpS: 10}}, SLA: []string{"throughput > 5/s", "p95(response_time) < 500ms"}})},
		{"two concurrent workloads", synthetic(reporttest.Options{Concurrent: true, Monitor: true})},
		{"sweep past the plateau", synthetic(reporttest.Options{Capacity: 20, Steps: []reporttest.Step{{Users: 4, Seconds: 60}, {Users: 8, Seconds: 60}, {Users: 16, Seconds: 60}, {Users: 24, Seconds: 60}, {Users: 32, Seconds: 60}}})},
		{"import JMeter JTL", imported(func() importer.Source {
			return jtl.New(jtl.Config{Path: imp + "jtl/testdata/jmeter-5.6.3/results.jtl"})
		}, true)},
		{"import k6 JSON", imported(func() importer.Source {
			return k6.New(k6.Config{Path: imp + "k6/testdata/k6-v1.8.1/out.json.gz"})
		}, true)},
		{"interrupted", synthetic(reporttest.Options{Killed: true, Monitor: true})},
		{"vmstat alone", func(t *testing.T, dir string) {
			t.Helper()
			var b strings.Builder
			b.WriteString("procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n")
			b.WriteString(" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n")
			start := time.Date(2025, 5, 13, 11, 0, 0, 0, time.UTC)
			for i := range 120 {
				fmt.Fprintf(&b, " 1  0      0 %d  10240 204800    0    0     0    12  310  520 %2d  3 %2d  0  0 %s\n",
					800000-i*100, 20+i%7, 77-i%7, start.Add(time.Duration(i)*time.Second).Format("2006-01-02 15:04:05"))
			}
			path := filepath.Join(t.TempDir(), "vmstat.log")
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			imported(func() importer.Source { return vmstat.New(vmstat.Config{Path: path, Target: "app01"}) }, false)(t, dir)
		}},
		{"import k6 JSON with its summary export", imported(func() importer.Source {
			return k6.New(k6.Config{Path: imp + "k6/testdata/k6-v1.8.1/out.json.gz", Summary: imp + "k6/testdata/k6-v1.8.1/summary.json"})
		}, true)},
		{"import nginx access log", func(t *testing.T, dir string) {
			t.Helper()
			path, phases := writeAccessLog(t, t.TempDir())
			run, err := importer.NewRun(importer.Options{Dir: dir, Name: "nginx", Phases: phases, Clock: importer.Clock{Loc: time.UTC}})
			if err != nil {
				t.Fatal(err)
			}
			src, err := accesslog.New(accesslog.Config{Path: path, Server: "web", Format: "combined_rt"})
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Import(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			if err := run.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"import access log without durations", func(t *testing.T, dir string) {
			t.Helper()
			path := writeAccessLogNoTimes(t, t.TempDir())
			run, err := importer.NewRun(importer.Options{Dir: dir, Name: "nginx", Clock: importer.Clock{Loc: time.UTC}})
			if err != nil {
				t.Fatal(err)
			}
			src, err := accesslog.New(accesslog.Config{Path: path, Server: "web", Format: "combined"})
			if err != nil {
				t.Fatal(err)
			}
			if err := src.Import(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			if err := run.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"import Locust CSV", imported(func() importer.Source {
			return locust.New(locust.Config{Path: imp + "locust/testdata/locust-2.47.0/run_stats.csv"})
		}, false)},
		// The same Locust run's history goes from 2 to 4 users (at
		// 1795310554): one phase per user count, as a phases file gives them
		// (the run is too short for derived phases).
		{"import Locust with a change of user count", func(t *testing.T, dir string) {
			t.Helper()
			at := func(s int64) time.Time { return time.Unix(s, 0).UTC() }
			phases := []core.Phase{{Name: "2 users", Start: at(1795310549), End: at(1795310554), Users: 2}, {Name: "4 users", Start: at(1795310554), End: at(1795310558), Users: 4}}
			run, err := importer.NewRun(importer.Options{Dir: dir, Name: "locust", Phases: phases, Clock: importer.Clock{Loc: time.UTC}})
			if err != nil {
				t.Fatal(err)
			}
			if err := locust.New(locust.Config{Path: imp + "locust/testdata/locust-2.47.0/run_stats.csv"}).Import(context.Background(), run); err != nil {
				t.Fatal(err)
			}
			if err := run.Close(); err != nil {
				t.Fatal(err)
			}
		}},
		{"jstat alone", func(t *testing.T, dir string) {
			t.Helper()
			var b strings.Builder
			b.WriteString("Timestamp        S0C         S1C         S0U         S1U          EC           EU           OC           OU          MC         MU       CCSC      CCSU     YGC     YGCT     FGC    FGCT     CGC    CGCT       GCT   \n")
			eu, ygc, ygct := 0.0, 0, 0.0
			for i := range 120 {
				eu += 9000
				if eu > 200000 {
					eu, ygc, ygct = 4000, ygc+1, ygct+0.004
				}
				fmt.Fprintf(&b, "%9.1f %11.1f %11.1f %11.1f %11.1f %12.1f %12.1f %12.1f %12.1f %10.1f %10.1f %9.1f %9.1f %6d %8.3f %6d %7.3f %6d %7.3f %9.3f\n",
					float64(10+i), 0.0, 8192.0, 0.0, 2048.0, 210944.0, eu, 262144.0, 40000.0+float64(i*10), 30000.0, 29000.0, 4000.0, 3500.0, ygc, ygct, 0, 0.0, 0, 0.0, ygct)
			}
			path := filepath.Join(t.TempDir(), "jstat.log")
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			start := time.Date(2025, 5, 13, 11, 0, 0, 0, time.UTC)
			imported(func() importer.Source { return jstat.New(jstat.Config{Path: path, Target: "app", JVMStart: start}) }, false)(t, dir)
		}},
	}
}

// TestProse renders the report of every variant and rejects sentences
// with empty slots, broken punctuation, NaN, claims of no traffic, signed
// zeros, fractional users, and throughputs summary.json does not hold.
func TestProse(t *testing.T) {
	t.Parallel()
	for _, v := range proseVariants() {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "run")
			v.make(t, dir)
			now := func() time.Time { return time.Date(2025, 5, 14, 9, 0, 0, 0, time.UTC) }
			if _, err := report.Write(dir, report.Options{Formats: []string{"json", "md", "html"}, Now: now}); err != nil {
				t.Fatal(err)
			}
			md, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			lines := reporttest.Sentences(string(md))
			if len(lines) < 10 {
				t.Fatalf("only %d lines of prose", len(lines))
			}
			defects, err := reporttest.RunDefects(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range defects {
				t.Error(d)
			}
		})
	}
}

// TestNoGrowthClaimWithoutLoadSteps: constant load (5/5/5/5 users) and
// two concurrent workloads are not load steps, so no sentence may claim
// that throughput grew with the load, and Capacity says why it is empty.
func TestNoGrowthClaimWithoutLoadSteps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		o    reporttest.Options
		why  string
	}{
		{"constant load", reporttest.Options{Steps: []reporttest.Step{{Users: 5, Seconds: 60}, {Users: 5, Seconds: 60}, {Users: 5, Seconds: 60}, {Users: 5, Seconds: 60}}}, "all 4 phases here ran at the same load"},
		{"two workloads", reporttest.Options{Concurrent: true, Steps: []reporttest.Step{{Users: 8, Seconds: 120}, {Users: 8, Seconds: 120}}}, "concurrent workloads are not load steps"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "run")
			if err := reporttest.Write(dir, c.o); err != nil {
				t.Fatal(err)
			}
			if _, err := report.Write(dir, report.Options{Formats: []string{"md"}}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			md := string(b)
			for _, claim := range []string{"grew with the load", "kept growing", "stopped scaling", "stopped growing", "this run has 2 phases"} {
				if strings.Contains(md, claim) {
					t.Errorf("report claims %q without load steps", claim)
				}
			}
			if !strings.Contains(md, c.why) {
				t.Errorf("report does not say %q", c.why)
			}
		})
	}
}

// TestProseRulesCatchDefects shows each rule rejecting the defect it names.
func TestProseRulesCatchDefects(t *testing.T) {
	t.Parallel()
	bad := []string{
		"7 errors in 3,200 requests (0.22 %); .",
		"Network: steady traffic — web in 0 B/s, out 0 B/s in .",
		"Latency drift: all requests mean -0 ms/h",
		"Highest tested load that met every requirement: 40.0 users.",
		"Each point is one phase. the vertical line marks the knee.",
		"The dashed curve is the fitted Universal Scalability Law;",
		"p95 NaN ms",
		"contention σ = 9.827e-16, coherency κ = 0.000558",
		"Error rate 0.08 %% (11 of 13,029 requests).",
		"80 requests in 0s at 1,083 req/s; average 0.45 ms.",
	}
	for _, line := range bad {
		hit := false
		for _, r := range reporttest.ProseRules {
			if r.Match(line) != "" {
				hit = true
			}
		}
		if !hit {
			t.Errorf("no rule rejects %q", line)
		}
	}
	for _, c := range []struct {
		line    string
		noTimes bool
	}{
		{"900 requests in 2m 59s at 5.0 req/s; average 0 ms, p95 0 ms.", true},
		{"Verdict: response time measured; no response-time requirement.", true},
	} {
		if reporttest.MeasuredWithoutData(c.line, c.noTimes) == "" {
			t.Errorf("a time stated without durations not caught: %q", c.line)
		}
	}
	if m := reporttest.MeasuredWithoutData("average 12 ms, p95 30 ms", false); m != "" {
		t.Errorf("a time stated with durations rejected: %q", m)
	}
	for _, line := range []string{"the rebuilt mean is off by 0.000 ms", "the rebuilt mean is off by -0.019 ms", "mean rose by -3 ms", "p95 fell by +12 %"} {
		if reporttest.SignAgainstWord(line) == "" {
			t.Errorf("a verdict word against its number not caught: %q", line)
		}
	}
	if m := reporttest.SignAgainstWord("mean rose by 35 ms; p95 fell by -4 %"); m != "" {
		t.Errorf("agreeing words rejected: %q", m)
	}
	locust := []byte(`{"labels":[{"label":"TOTAL","min_ms":2008,"max_ms":2057,"p50_ms":2000,"p95_ms":2000,"p99_ms":2100}]}`)
	if ds, _ := reporttest.ProseDefects([]byte("min 2,008 ms, median 2,000 ms\n"), locust); len(ds) == 0 {
		t.Error("a percentile below the minimum without a note not caught")
	}
	if reporttest.RepeatedRate("Throughput 117 req/s over the run at 117 req/s: within the requirement > 5/s") == "" {
		t.Error("repeated throughput not caught")
	}
	if got := reporttest.AgreesWithSummary("Throughput +3.8 % (198 → 206 req/s)", []float64{198.03, 203.64}); got == "" {
		t.Errorf("206 req/s accepted against 203.64")
	}
	if got := reporttest.AgreesWithSummary("at 203.6 req/s and ~200 req/s", []float64{203.64}); got != "" {
		t.Errorf("rejected %q", got)
	}
	_ = fmt.Sprint
}

// TestMinColumn: the per-label tables show the minimum summary.json has.
func TestMinColumn(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, reporttest.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := report.Write(dir, report.Options{Formats: []string{"md"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if !strings.Contains(md, "| Min (ms) |") {
		t.Fatal("no Min column in the per-label tables")
	}
	for _, l := range res.Summary.Labels {
		if l.MinMs <= 0 {
			t.Fatalf("label %s has min %v", l.Label, l.MinMs)
		}
		want := fmt.Sprintf("| %s |", strconv.FormatFloat(l.MinMs, 'f', 1, 64))
		if l.MinMs >= 100 || l.MinMs < 10 {
			continue // other precisions; one label in range is enough
		}
		if !strings.Contains(md, want) {
			t.Errorf("min %v of %s not in the tables", l.MinMs, l.Label)
		}
	}
}

// TestPerLabelCharts: the results section draws response time and
// throughput over time per label, and an 80-character label keeps its
// legend inside the chart (full name in a tooltip).
func TestPerLabelCharts(t *testing.T) {
	t.Parallel()
	long := "GET /lar/allergies/very-long-label-name-that-goes-on-and-on-for-eighty-chars-xyz"
	if len([]rune(long)) != 80 {
		t.Fatalf("label of %d characters", len([]rune(long)))
	}
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, reporttest.Options{LarLabel: long}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"response-time-per-label", "throughput-per-label"} {
		ms, _ := filepath.Glob(filepath.Join(dir, "charts", "*-"+name+".svg"))
		if len(ms) != 1 {
			t.Fatalf("chart %s: %v", name, ms)
		}
		b, err := os.ReadFile(ms[0])
		if err != nil {
			t.Fatal(err)
		}
		svg := string(b)
		for _, l := range []string{reporttest.CaveLabel} {
			if !strings.Contains(svg, ">"+l+"<") {
				t.Errorf("%s: no line for %s", name, l)
			}
		}
		if !strings.Contains(svg, "<title>"+long+"</title>") {
			t.Errorf("%s: the 80-character label is not in a tooltip", name)
		}
	}
}

// TestBeforeDuringAfterSaysWhyItIsMissing: a workload that ran the whole
// run has no before/after; the Trends section says so instead of leaving
// the comparison out silently.
func TestBeforeDuringAfterSaysWhyItIsMissing(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	// Workload read runs the whole run; data-import runs from its second
	// minute, so only data-import has a before to compare with.
	o := reporttest.Options{Concurrent: true, Monitor: true, Steps: []reporttest.Step{{Users: 5, Seconds: 20}, {Users: 8, Seconds: 60}, {Users: 10, Seconds: 20}}}
	if err := reporttest.Write(dir, o); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if !strings.Contains(md, "No before/during/after comparison for workload read: it started within 30 s") || !strings.Contains(md, "CPU before, during and after workload data-import") {
		t.Errorf("the report does not say why the before/during/after tables are missing")
	}
}

// TestErrorsListedOnceWithTheirWorkload: a derived label repeats its
// request's failures, so the errors table lists each failure once, and
// with two workloads it names the workload of each.
func TestErrorsListedOnceWithTheirWorkload(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, reporttest.Options{NetOfDownstream: true, Concurrent: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	i := strings.Index(md, "By message")
	if i < 0 {
		t.Fatal("no errors table")
	}
	table := md[i:]
	table = table[:strings.Index(table, "![")]
	if strings.Contains(table, "net of downstream") {
		t.Errorf("errors listed twice (derived rows):\n%s", table)
	}
	if !strings.Contains(table, "read: "+reporttest.CaveLabel) {
		t.Errorf("errors table does not name the workload:\n%s", table)
	}
}

// TestResponseTimeConclusionNamesEveryRequirement: with two response-time
// requirements the conclusion names both, each with its own observed value.
func TestResponseTimeConclusionNamesEveryRequirementOnce(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	o := reporttest.Options{SLA: []string{"avg(response_time{label=\"" + reporttest.CaveLabel + "\"}) < 1000ms", "p95(response_time) < 400ms"}}
	if err := reporttest.Write(dir, o); err != nil {
		t.Fatal(err)
	}
	res, err := report.Write(dir, report.Options{Formats: []string{"md"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "**Response time:**") {
			line = l
		}
	}
	for _, r := range res.Summary.SLA {
		if r.Error != "" {
			t.Fatalf("requirement %q: %s", r.Expr, r.Error)
		}
		expr := strings.NewReplacer("_", `\_`, "<", "&lt;", `"`, "&#34;").Replace(r.Expr)
		// Named once: with its own observed value, not again in the verdict.
		n := strings.Count(line, expr)
		if unq := strings.ReplaceAll(expr, "&#34;", `"`); unq != expr {
			n += strings.Count(line, unq)
		}
		if n != 1 {
			t.Errorf("conclusion names %q %d times, want once: %s", r.Expr, n, line)
		}
	}
}

// TestKneeNamesTheSaturatedComponent: when a monitored host's CPU is
// saturated beyond the knee, the capacity verdict names it.
func TestKneeNamesTheSaturatedComponent(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	o := reporttest.Options{Monitor: true, SaturateCPU: true, Steps: []reporttest.Step{{Users: 4, Seconds: 60}, {Users: 8, Seconds: 60}, {Users: 12, Seconds: 60}, {Users: 16, Seconds: 60}, {Users: 20, Seconds: 60}}}
	if err := reporttest.Write(dir, o); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	var knee string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "Knee:") {
			knee = l
		}
	}
	if !strings.Contains(knee, "docker02, with CPU") || !strings.Contains(knee, "busy") || !strings.Contains(knee, "first monitored component to saturate") {
		t.Errorf("the knee verdict does not name the saturated host: %q", knee)
	}
}

// capacityLines returns the report's knee verdict and the throughput
// conclusion (the sentences that name what ran out).
func capacityLines(t *testing.T, o reporttest.Options) (knee, conclusion, summary string, sum map[string]any) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, o); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Formats: []string{"md", "json"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "Knee:") {
			knee = l
		}
		if strings.HasPrefix(l, "- ") && strings.Contains(l, "**Throughput:**") {
			conclusion = l
		}
		if strings.HasPrefix(l, "- ") && strings.Contains(l, "Throughput stopped scaling") && summary == "" {
			summary = l
		}
	}
	sj, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(sj, &sum); err != nil {
		t.Fatal(err)
	}
	return knee, conclusion, summary, sum
}

// The component that saturated first is named wherever the knee is stated,
// whatever kind of monitor read it: here the database's connections reach
// max_connections while the hosts' CPU stays below its ceiling, so the
// database, not a host, is the bottleneck — in the capacity verdict, the
// conclusions and summary.json.
func TestKneeNamesTheSaturatedDatabase(t *testing.T) {
	t.Parallel()
	steps := []reporttest.Step{{Users: 4, Seconds: 60}, {Users: 8, Seconds: 60}, {Users: 12, Seconds: 60}, {Users: 16, Seconds: 60}, {Users: 20, Seconds: 60}}
	knee, concl, summ, sum := capacityLines(t, reporttest.Options{Monitor: true, SaturateConnections: true, Steps: steps})
	for what, line := range map[string]string{"knee verdict": knee, "throughput conclusion": concl, "summary bullet": summ} {
		if !strings.Contains(line, "db") || !strings.Contains(line, "connections") || !strings.Contains(line, "of 36") || strings.Contains(line, "docker0") {
			t.Errorf("the %s does not name the database's connections as the first to saturate: %q", what, line)
		}
	}
	c, _ := sum["capacity"].(map[string]any)
	bn, _ := c["bottleneck"].(map[string]any)
	if bn["component"] != "db" || bn["resource"] != "Connections" || bn["saturated"] != true || bn["capacity"] != 36.0 {
		t.Errorf("summary.json capacity.bottleneck = %v", bn)
	}
}

// When no monitored component came near its capacity, the report says so
// plainly, with the busiest one's figure, instead of naming nothing.
func TestKneeSaysTheLimitWasNotMonitored(t *testing.T) {
	t.Parallel()
	steps := []reporttest.Step{{Users: 4, Seconds: 60}, {Users: 8, Seconds: 60}, {Users: 12, Seconds: 60}, {Users: 16, Seconds: 60}, {Users: 20, Seconds: 60}}
	knee, concl, summ, sum := capacityLines(t, reporttest.Options{Monitor: true, Steps: steps})
	for what, line := range map[string]string{"knee verdict": knee, "throughput conclusion": concl, "summary bullet": summ} {
		if !strings.Contains(line, "no monitored component saturated") || !strings.Contains(line, "outside what was monitored") || !strings.Contains(line, "docker0") {
			t.Errorf("the %s does not say that the limit lies outside what was monitored: %q", what, line)
		}
	}
	c, _ := sum["capacity"].(map[string]any)
	if bn, _ := c["bottleneck"].(map[string]any); bn["saturated"] != false {
		t.Errorf("summary.json capacity.bottleneck = %v", bn)
	}
}

// The load generator's own CPU counts among the components: when it ran
// out first (the hosts and database below their ceilings), the knee names
// it rather than blaming the system.
func TestKneeNamesTheGenerator(t *testing.T) {
	t.Parallel()
	steps := []reporttest.Step{{Users: 4, Seconds: 60}, {Users: 8, Seconds: 60}, {Users: 12, Seconds: 60}, {Users: 16, Seconds: 60}, {Users: 20, Seconds: 60}}
	knee, concl, _, sum := capacityLines(t, reporttest.Options{Monitor: true, GeneratorCPU: 90, Steps: steps})
	for what, line := range map[string]string{"knee verdict": knee, "throughput conclusion": concl} {
		if !strings.Contains(line, "first monitored component to saturate was the load generator") || !strings.Contains(line, "of its cores") {
			t.Errorf("the %s does not name the generator: %q", what, line)
		}
	}
	c, _ := sum["capacity"].(map[string]any)
	if bn, _ := c["bottleneck"].(map[string]any); bn["component"] != "the load generator" || bn["saturated"] != true {
		t.Errorf("summary.json capacity.bottleneck = %v", bn)
	}
}

// Two components full at the knee: the first is named as the bottleneck
// and the other beside it, not left out.
func TestKneeNamesEverySaturatedComponent(t *testing.T) {
	t.Parallel()
	steps := []reporttest.Step{{Users: 4, Seconds: 60}, {Users: 8, Seconds: 60}, {Users: 12, Seconds: 60}, {Users: 16, Seconds: 60}, {Users: 20, Seconds: 60}}
	knee, _, _, sum := capacityLines(t, reporttest.Options{Monitor: true, SaturateCPU: true, SaturateConnections: true, Steps: steps})
	if !strings.Contains(knee, "first monitored component to saturate") || !strings.Contains(knee, "saturated too") ||
		!strings.Contains(knee, "docker0") || !strings.Contains(knee, "connections") {
		t.Errorf("the knee verdict does not name both the hosts' CPU and the database's connections: %q", knee)
	}
	c, _ := sum["capacity"].(map[string]any)
	bn, _ := c["bottleneck"].(map[string]any)
	if also, _ := bn["also_saturated"].([]any); len(also) == 0 {
		t.Errorf("summary.json capacity.bottleneck.also_saturated is empty: %v", bn)
	}
}

// A generator host whose CPU average looks moderate, while its threads
// waited for a CPU in every phase, did not keep up: the conclusion must not
// say it did beside the warning that it was starved (demo 000 on a busy
// machine said both, "starved" in its warning and "kept up" two lines on).
func TestStarvedGeneratorDidNotKeepUp(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	steps := []reporttest.Step{{Users: 4, Seconds: 60}, {Users: 8, Seconds: 60}}
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true, StarvedGenerator: true, Steps: steps}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	if !strings.Contains(md, "starved of CPU in 2 phases") {
		t.Fatalf("no starved-generator warning: the test's run does not show what it tests")
	}
	var gen []string
	for _, l := range strings.Split(md, "\n") {
		if strings.Contains(l, "loadgen") {
			gen = append(gen, l)
			if strings.Contains(l, "kept up") {
				t.Errorf("the generator is said to have kept up while starved: %q", l)
			}
		}
	}
	if !strings.Contains(strings.Join(gen, "\n"), "starved of CPU: its response times include its own waiting") {
		t.Errorf("no line about the generator host says it was starved:\n%s", strings.Join(gen, "\n"))
	}
}
