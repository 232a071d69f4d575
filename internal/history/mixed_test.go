package history_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// A history of runs of two workloads is followed workload by workload:
// the later runs send eight slow import calls a second where the earlier
// sent one, every call as fast. Their average of all requests doubles, so
// a TOTAL series of all requests finds a change point for the worse with
// nothing slower. The store keeps a TOTAL per workload instead, and none
// of its series is worse.
func TestMixedRunsHistoryPerWorkload(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSQLite(t)
	const n = 8
	for i := range n {
		per := 1
		if i >= n/2 {
			per = 8
		}
		r, err := history.FromDir(runDir(t, reporttest.Options{Seed: uint64(i + 1), Concurrent: true, ImportPerSecond: per,
			Steps: []reporttest.Step{{Users: 7, Seconds: 120, RampUpS: 5}}}), nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Start = r.Start.Add(time.Duration(i) * 24 * time.Hour)
		if _, err := s.Add(ctx, r, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.Runs(ctx, history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != n {
		t.Fatalf("%d runs stored, want %d", len(runs), n)
	}
	var totals []string
	for _, l := range runs[0].Labels {
		if l.Phase == history.WholeRun && history.IsTotal(l.Label) {
			totals = append(totals, l.Label)
		}
	}
	if strings.Join(totals, ",") != "read: TOTAL,data-import: TOTAL" && strings.Join(totals, ",") != "data-import: TOTAL,read: TOTAL" {
		t.Errorf("whole-run totals stored %q, want one of read and one of data-import and none of all requests", totals)
	}
	a, err := history.Analyze(runs, history.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, sr := range a.Series {
		if sr.Phase != history.WholeRun || !history.IsTotal(sr.Label) {
			continue
		}
		seen[sr.Label] = true
		if sr.Label == core.TotalLabel {
			t.Errorf("a series %s of all requests of runs of two workloads", sr.Name)
		}
		if len(sr.Points) != n {
			t.Errorf("%s: %d points, want %d", sr.Name, len(sr.Points), n)
		}
		for _, cp := range sr.ChangePoints {
			if cp.Worse {
				t.Errorf("%s: a change for the worse at run %d (%+.1f %%) with every call as fast", sr.Name, cp.Run, cp.ChangePct)
			}
		}
		if sr.Latest != nil && sr.Latest.Worse {
			t.Errorf("%s: latest run judged worse", sr.Name)
		}
	}
	if !seen["read: TOTAL"] || !seen["data-import: TOTAL"] {
		t.Errorf("series of the workloads' totals: %v", seen)
	}
	var out bytes.Buffer
	if err := history.Show(&out, runs, "", nil); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(out.String(), "[read]"); got != n {
		t.Errorf("history show has %d lines of workload read, want %d:\n%s", got, n, out.String())
	}
	if got := strings.Count(out.String(), "[data-import]"); got != n {
		t.Errorf("history show has %d lines of workload data-import, want %d:\n%s", got, n, out.String())
	}
}
