package study

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// Two runs of two workloads, alike in every call's time: reads at 7 users
// and a data import of 900 ms calls, one a second in the first run and
// eight a second in the second. An average of all requests weighs the
// import by how many calls each run happened to send, so the second run
// reads twice as slow with no call slower. The study describes such runs
// workload by workload: each workload's average from its own requests,
// no figure of all requests, and each workload's Δ "no change".
func TestStudyMixedWorkloadsHaveNoAllRequestsAverage(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i, per := range []int{1, 8} {
		write(t, filepath.Join(root, fmt.Sprintf("r%d", i+1)), reporttest.Options{Seed: 5, Concurrent: true, ImportPerSecond: per,
			Steps: []reporttest.Step{{Users: 7, Seconds: 120, RampUpS: 5}}})
	}
	s, err := Build(studyFile(t, root, "runs:\n  - {dir: r1, role: baseline, name: one import call a second}\n  - {dir: r2, role: repeat, name: eight import calls a second}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The planted data tell the two ways apart: the second run's average
	// of all requests is far above the first's.
	d1, err := analysis.Load(filepath.Join(root, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := analysis.Load(filepath.Join(root, "r2"))
	if err != nil {
		t.Fatal(err)
	}
	if !d1.Mixed() || !d2.Mixed() {
		t.Fatalf("the runs hold workloads %v and %v, want two each", d1.RequestWorkloads(), d2.RequestWorkloads())
	}
	if m1, m2 := d1.Total.MeanMs(), d2.Total.MeanMs(); m2 < 1.5*m1 {
		t.Fatalf("the planted mix does not move the all-requests average: %v ms against %v ms", m2, m1)
	}
	// The runs table: per workload, each from its own requests (the
	// count-weighted average of its labels' means), none of all requests.
	for i, d := range []*analysis.Dataset{d1, d2} {
		r := s.Runs[i]
		if r.MeanMs != 0 || r.P95Ms != 0 {
			t.Errorf("%s: an average %v ms / p95 %v ms of all requests of two workloads", r.Name, r.MeanMs, r.P95Ms)
		}
		if len(r.Workloads) != 2 || r.Workloads[0].Workload != "read" || r.Workloads[1].Workload != "data-import" {
			t.Fatalf("%s: workloads %+v, want read and data-import", r.Name, r.Workloads)
		}
		for _, w := range r.Workloads {
			var sum float64
			var n int64
			for _, k := range d.Labels() {
				if k.Workload == w.Workload && !k.Tx && !k.Derived {
					sum += d.Run[k].MeanMs() * float64(d.Run[k].Count)
					n += d.Run[k].Count
				}
			}
			if want := sum / float64(n); w.Requests != n || math.Abs(w.MeanMs-want) > 0.01*want+0.01 {
				t.Errorf("%s, %s: %d requests averaging %v ms, want %d averaging %v ms", r.Name, w.Workload, w.Requests, w.MeanMs, n, want)
			}
		}
	}
	if imp1, imp2 := s.Runs[0].Workloads[1].Requests, s.Runs[1].Workloads[1].Requests; imp2 < 6*imp1 {
		t.Errorf("import calls %d and %d, want eight times as many in the second run", imp1, imp2)
	}
	// The per-label table: one total per workload, each "no change".
	var totals []string
	for _, l := range s.Labels {
		if l.Label != "TOTAL" {
			continue
		}
		totals = append(totals, l.Workload)
		if c := l.Cells[1]; c.Against != s.Runs[0].Name || c.Verdict == compare.Slower || c.Verdict == compare.Faster {
			t.Errorf("%s's total in %s: %+v, want no change against %s", l.Workload, c.Run, c, s.Runs[0].Name)
		}
	}
	if strings.Join(totals, ",") != "read,data-import" {
		t.Errorf("totals of %q, want one of read and one of data-import", totals)
	}
	md, _ := writeStudy(t, s)
	for _, want := range []string{"| read average (ms) | read p95 (ms) | data-import average (ms) | data-import p95 (ms) |", "**read: all requests**",
		"**data-import: all requests**", "none of all requests"} {
		if !strings.Contains(md, want) {
			t.Errorf("study.md lacks %q", want)
		}
	}
	for _, bad := range []string{"| Error % | Average (ms) |", "**all requests**"} {
		if strings.Contains(md, bad) {
			t.Errorf("study.md has %q", bad)
		}
	}
}

// A run of the baseline release that a candidate is compared with is its
// group's reference, not a "candidate" (demo 001: "previous release, 20
// users | candidate" beside "current release, 20 users", compared with it).
func TestRunsTableNamesGroupReference(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, r := range []struct {
		dir   string
		users int
	}{{"p8", 8}, {"p20", 20}, {"c8", 8}, {"c20", 20}} {
		write(t, filepath.Join(root, r.dir), reporttest.Options{Seed: uint64(r.users), Steps: []reporttest.Step{{Users: r.users, Seconds: 30, RampUpS: 1}}})
	}
	s, err := Build(studyFile(t, root, `runs:
  - {dir: p8, role: baseline, name: previous 8, factors: {release: previous}}
  - {dir: p20, role: candidate, name: previous 20, factors: {release: previous}}
  - {dir: c8, role: candidate, name: current 8, factors: {release: current}}
  - {dir: c20, role: candidate, name: current 20, factors: {release: current}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Runs[3].ComparedWith != "previous 20" {
		t.Fatalf("current 20 compared with %q", s.Runs[3].ComparedWith)
	}
	md, _ := writeStudy(t, s)
	for _, want := range []string{"| previous 20 | group reference |", "| current 20 | candidate |", "| previous 8 | baseline |"} {
		if !strings.Contains(md, want) {
			t.Errorf("the runs table lacks %q", want)
		}
	}
}

// A release comparison of runs of two workloads compares them workload by
// workload: the candidate sending eight import calls a second where the
// baseline sent one, every call as fast, is not "slower" (its average of
// all requests is twice the baseline's).
func TestReleaseOfMixedRunsPerWorkload(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i, per := range []int{1, 8} {
		write(t, filepath.Join(root, fmt.Sprintf("r%d", i+1)), reporttest.Options{Seed: 5, Concurrent: true, ImportPerSecond: per,
			Steps: []reporttest.Step{{Users: 7, Seconds: 120, RampUpS: 5}}})
	}
	s, err := Build(studyFile(t, root, `questions:
  - {kind: release, baseline: old, candidate: new}
runs:
  - {dir: r1, role: baseline, name: old release, factors: {release: old}}
  - {dir: r2, role: candidate, name: new release, factors: {release: new}}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := s.Answers[0]
	var groups []string
	for _, r := range a.Release {
		groups = append(groups, r.Group)
		if r.Total.Label != "TOTAL" || r.Total.Workload == "" || r.Verdict == compare.Slower {
			t.Errorf("%s: total %+v, verdict %s; want its workload's total, not slower", r.Group, r.Total, r.Verdict)
		}
	}
	if strings.Join(groups, "; ") != "read + data-import, 7 users, workload read; read + data-import, 7 users, workload data-import" {
		t.Errorf("release groups %q, want one per workload", groups)
	}
	if a.Outcome == Failed {
		t.Errorf("the release failed on the mix of requests: %s", a.Line)
	}
	writeStudy(t, s)
}
