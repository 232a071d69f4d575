package report

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// A run of six steps (demo 000) gave its multi-series tables one column of
// the whole load under the caption "… per phase", while the conclusions
// named a step's figure ("12 of 12 connections on average in step 3")
// that no table held. With few series, each phase is a row: the caption
// is true and the finding's figure is in the table.
func TestManyPhasesFamilyTableHasPhaseRows(t *testing.T) {
	dir := t.TempDir()
	var steps []reporttest.Step
	for i := range 6 {
		steps = append(steps, reporttest.Step{Users: 4 + 2*i, Seconds: 30, RampUpS: 1})
	}
	if err := reporttest.Write(dir, reporttest.Options{Steps: steps}); err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(dir, monitor.SubDir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	prefix := monitor.LinePrefix("folio", monitor.KindPromQL)
	// Pod a at 1 core, then 3.4 of 4 cores in step 5 only; pod b at 0.5 of 2.
	for s := 0; s < 180; s += 5 {
		at := reporttest.Start.Add(time.Duration(s) * time.Second)
		a := 1.0
		if s >= 120 && s < 150 {
			a = 3.4
		}
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_cores{pod=mod-circulation}", "cores", a)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_cores{pod=mod-users}", "cores", 0.5)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_limit_cores{pod=mod-circulation}", "cores", 4)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_limit_cores{pod=mod-users}", "cores", 2)
	}
	if err := os.WriteFile(filepath.Join(mdir, "folio.csv"), append([]byte(monitor.CSVHeader), buf...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := strings.ReplaceAll(string(md), `\`, "")
	if !strings.Contains(report, "used 3.40 of 4 cores (85 %) on average in step 5") {
		t.Fatalf("the finding does not name step 5:\n%s", report)
	}
	i := strings.Index(report, "**folio — pod_cpu_cores per phase**")
	if i < 0 {
		t.Fatalf("no per-phase table of pod_cpu_cores:\n%s", report)
	}
	table := report[i:]
	if j := strings.Index(table, "\n\n!"); j > 0 {
		table = table[:j]
	}
	if !strings.Contains(table, "| Phase | pod=mod-circulation mean | max | pod=mod-users mean | max |") {
		t.Errorf("the table is not one row per phase:\n%s", table)
	}
	if !strings.Contains(table, "| step 5 | 3.40 cores | 3.40 cores |") {
		t.Errorf("step 5's 3.40 cores is not in the table:\n%s", table)
	}
}

// When the second busiest service saturated as well, the finding says so
// rather than that it "stayed at or under 100 % of its limit" (demo 000:
// both balancer backends at 12 of 12 connections, the conclusions naming
// one saturated and the other spared).
func TestSecondBusiestSaturatedToo(t *testing.T) {
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{}); err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(dir, monitor.SubDir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	prefix := monitor.LinePrefix("folio", monitor.KindPromQL)
	for s := 0; s < 180; s += 5 {
		at := reporttest.Start.Add(time.Duration(s) * time.Second)
		a, u := 1.0, 0.5
		if s >= 120 {
			a, u = 4, 1.96
		}
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_cores{pod=mod-circulation}", "cores", a)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_cores{pod=mod-users}", "cores", u)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_limit_cores{pod=mod-circulation}", "cores", 4)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_limit_cores{pod=mod-users}", "cores", 2)
	}
	if err := os.WriteFile(filepath.Join(mdir, "folio.csv"), append([]byte(monitor.CSVHeader), buf...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := strings.ReplaceAll(string(md), `\`, "")
	if !strings.Contains(report, "mod-circulation used 4 of 4 cores (100 %) on average in step 3; the other one reached up to 98 % of its limit, saturated as well") {
		t.Errorf("the finding does not say the other pod saturated too:\n%s", report)
	}
	if strings.Contains(report, "stayed at or under 98 %") {
		t.Errorf("a saturated pod 'stayed at or under' its figure")
	}
}

// A run of two workloads compared with its baseline is compared workload
// by workload: the candidate sends eight slow import calls a second where
// the baseline sent one, every call as fast, and its average of all
// requests is twice the baseline's. The report's headline and its
// summary.json comparison are per workload, neither "slower".
func TestComparisonOfMixedRunsPerWorkload(t *testing.T) {
	root := t.TempDir()
	base, cand := filepath.Join(root, "base"), filepath.Join(root, "cand")
	for dir, per := range map[string]int{base: 1, cand: 8} {
		if err := reporttest.Write(dir, reporttest.Options{Seed: 5, Concurrent: true, ImportPerSecond: per, Steps: []reporttest.Step{{Users: 7, Seconds: 120, RampUpS: 5}}}); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := Generate(cand, Options{Baseline: base, Formats: []string{"json", "md"}})
	if err != nil {
		t.Fatal(err)
	}
	var totals []string
	for _, r := range sum.Comparison {
		if r.Phase != "run" || r.Label != "TOTAL" {
			continue
		}
		totals = append(totals, r.Workload)
		if r.Verdict == "slower" {
			t.Errorf("%s's requests compared %s (%+.1f %%)", r.Workload, r.Verdict, r.DeltaPct)
		}
	}
	if strings.Join(totals, ",") != "read,data-import" {
		t.Errorf("whole-run totals of %q, want one of read and one of data-import", totals)
	}
	md, err := os.ReadFile(filepath.Join(cand, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Compared with lar-cave read allergies, workload read: ", "Compared with lar-cave read allergies, workload data-import: ", "| **read: TOTAL** |"} {
		if !strings.Contains(string(md), want) {
			_, cmp, _ := strings.Cut(string(md), "## Comparison")
			t.Errorf("report.md lacks %q:\n%s", want, cmp)
		}
	}
}

// Three runs of two workloads side by side are lined up workload by
// workload: the third sends eight slow import calls a second where the
// others sent one, every call as fast. Its average of all requests is
// about twice theirs, so a spread of all requests would read a CV of tens
// of percent — run-to-run "noise" that is only the mix. Each workload's
// spread stays small.
func TestRunsSideBySidePerWorkload(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i, per := range []int{1, 1, 8} {
		dir := filepath.Join(root, fmt.Sprintf("r%d", i+1))
		if err := reporttest.Write(dir, reporttest.Options{Seed: 5, Concurrent: true, ImportPerSecond: per, Steps: []reporttest.Step{{Users: 7, Seconds: 120, RampUpS: 5}}}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	res, err := CompareRuns(dirs, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != compare.Repeats {
		t.Fatalf("runs at one load classified %v", res.Kind)
	}
	var ws []string
	for _, sp := range res.Spreads {
		ws = append(ws, sp.Workload)
		if len(sp.Runs) != 3 {
			t.Errorf("%q: %d runs side by side, want 3", sp.Workload, len(sp.Runs))
		}
		if sp.MeanMs.CV > 0.1 || sp.P95Ms.CV > 0.1 {
			t.Errorf("%q: average's CV %.1f %%, p95's %.1f %% across runs whose every call is as fast", sp.Workload, 100*sp.MeanMs.CV, 100*sp.P95Ms.CV)
		}
	}
	if strings.Join(ws, ",") != "read,data-import" {
		t.Errorf("side-by-side of %q, want read and data-import", ws)
	}
	if _, err := WriteCompare(root, res); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, CompareMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	_, runs, _ := strings.Cut(string(md), "## Runs side by side")
	for _, want := range []string{"Workload read: its requests, whole run", "Workload data-import: its requests, whole run"} {
		if !strings.Contains(runs, want) {
			t.Errorf("compare.md's runs side by side lack %q:\n%s", want, runs)
		}
	}
	if strings.Contains(runs, "All requests, whole run") {
		t.Errorf("compare.md lines up the mixed runs' all requests:\n%s", runs)
	}
}

// Runs of two workloads at three load levels are a load series per
// workload, each with its own table and chart: the import's share grows
// along the series, so a series of all requests would draw response time
// rising with load, no call slower.
func TestLoadSeriesPerWorkload(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for i, u := range []int{7, 10, 14} {
		dir := filepath.Join(root, fmt.Sprintf("u%d", u))
		if err := reporttest.Write(dir, reporttest.Options{Seed: uint64(i + 3), Concurrent: true, ImportPerSecond: []int{1, 4, 8}[i], Steps: []reporttest.Step{{Users: u, Seconds: 120, RampUpS: 5}}}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	res, err := CompareRuns(dirs, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != compare.Series {
		t.Fatalf("runs at 7, 10 and 14 users classified %v", res.Kind)
	}
	var ws []string
	for _, sp := range res.Spreads {
		ws = append(ws, sp.Workload)
		if sp.Workload == "data-import" && sp.MeanMs.Max > 1.2*sp.MeanMs.Min {
			t.Errorf("data-import's calls, every one as fast, average %.1f to %.1f ms along the series", sp.MeanMs.Min, sp.MeanMs.Max)
		}
	}
	if strings.Join(ws, ",") != "read,data-import" {
		t.Fatalf("load series of %q, want read and data-import", ws)
	}
	files, err := WriteCompare(root, res)
	if err != nil {
		t.Fatal(err)
	}
	charts := 0
	for _, f := range files {
		if strings.Contains(f, "compare-series") {
			charts++
		}
	}
	if charts != 2 {
		t.Errorf("%d load series charts written, want one per workload: %v", charts, files)
	}
	md, err := os.ReadFile(filepath.Join(root, CompareMarkdown))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Workload read: its requests, whole run, by load", "Workload data-import: its requests, whole run, by load"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("compare.md lacks %q", want)
		}
	}
}
