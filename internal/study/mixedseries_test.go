package study

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// A capacity question over a series of runs of two workloads is answered
// per workload: reads at 7, 10 and 14 users beside a data import of
// 900 ms calls, one, four and eight a second. An average of all requests
// rises along the series with the import's share, no call slower, and
// would be read as response time growing with load. Each workload's row
// holds its own requests' figures at each load.
func TestMixedSeriesCapacityPerWorkload(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	users, per := []int{7, 10, 14}, []int{1, 4, 8}
	var sets []*analysis.Dataset
	for i := range users {
		dir := filepath.Join(root, fmt.Sprintf("u%d", users[i]))
		write(t, dir, reporttest.Options{Seed: uint64(i + 3), Concurrent: true, ImportPerSecond: per[i],
			Steps: []reporttest.Step{{Users: users[i], Seconds: 120, RampUpS: 5}}})
		d, err := analysis.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, d)
	}
	if m0, m2 := sets[0].Total.MeanMs(), sets[2].Total.MeanMs(); m2 < 1.5*m0 {
		t.Fatalf("the planted mix does not move the all-requests average: %.1f ms at 14 users against %.1f ms at 7", m2, m0)
	}
	s, err := Build(studyFile(t, root, "questions:\n  - kind: capacity\nruns:\n  - {dir: u7, role: baseline, name: seven users}\n  - {dir: u10, name: ten users}\n  - {dir: u14, name: fourteen users}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range s.Answers[0].Capacity {
		rows = append(rows, r.Workload)
		w := r.Workload
		if strings.Contains(w, "+") {
			t.Errorf("a capacity row %q of all requests of runs of two workloads", w)
			continue
		}
		if len(r.Points) != 3 {
			t.Errorf("%s: %d points, want 3", w, len(r.Points))
			continue
		}
		for i, p := range r.Points {
			a, _ := sets[i].WorkloadTotal(w)
			if math.Abs(p.MeanMs-a.MeanMs()) > 0.01 {
				t.Errorf("%s at %v users: average %.2f ms, its requests' %.2f ms", w, p.Load, p.MeanMs, a.MeanMs())
			}
		}
		if w == "data-import" && r.Points[2].MeanMs > 1.2*r.Points[0].MeanMs {
			t.Errorf("data-import's calls, every one as fast, average %.1f ms at 14 users against %.1f ms at 7", r.Points[2].MeanMs, r.Points[0].MeanMs)
		}
	}
	if strings.Join(rows, ",") != "read,data-import" {
		t.Errorf("capacity rows %q, want read and data-import", rows)
	}
	md, _ := writeStudy(t, s) // the truth checks: every figure in a table
	for _, want := range []string{"| read |", "| data-import |"} {
		if !strings.Contains(md, want) {
			t.Errorf("study.md lacks the capacity row %q", want)
		}
	}
}
