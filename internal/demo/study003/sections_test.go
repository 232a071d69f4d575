package study003

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/demo/studykit"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/study"
)

// The log configurations' table gives each sweep's peak beside its
// capacity search's, which the answers quote: the demo's table said "C:
// no log … 731.8 req/s" while the answer above it said "peak 793 req/s"
// for the same configuration, with nothing telling the two apart.
func TestLogSettingsTableHasTheSearchPeak(t *testing.T) {
	var runs []*studykit.Run
	for i, name := range []string{"A: synchronous log", "B: asynchronous log"} {
		dir := filepath.Join(t.TempDir(), fmt.Sprint(i))
		if err := reporttest.Write(dir, reporttest.Options{Seed: uint64(i + 1)}); err != nil {
			t.Fatal(err)
		}
		d, err := analysis.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		runs = append(runs, &studykit.Run{Dir: dir, Name: name, Data: d})
	}
	s := &study.Study{Answers: []study.Answer{{Question: study.Question{Kind: study.CapacityQ},
		Capacity: []study.CapacityRow{{Workload: "manager, A: synchronous log", Search: true, PeakRPS: 793, PeakLoad: 16}}}}}
	var table *doc.Table
	var assess string
	for _, sec := range sections(runs, s) {
		for _, b := range sec.Blocks {
			switch b := b.(type) {
			case *doc.Table:
				if strings.HasPrefix(b.Caption, "Different log settings") {
					table = b
				}
			case *doc.Verdict:
				if sec.ID == "ref-logs" {
					assess = b.Text
				}
			}
		}
	}
	if table == nil {
		t.Fatal("no log settings table")
	}
	row := func(i int) string {
		var cells []string
		for _, c := range table.Rows[i].Cells {
			cells = append(cells, c.Text)
		}
		return strings.Join(cells, " | ")
	}
	if got := row(0); !strings.HasSuffix(got, " | 793.0 | 16") {
		t.Errorf("A's row %q lacks its search's peak, 793.0 req/s at 16 users", got)
	}
	if got := row(1); !strings.HasSuffix(got, " | — | —") {
		t.Errorf("B's row %q: no search, so no search peak", got)
	}
	if !strings.HasPrefix(assess, "Assessment: in the stepped sweeps, ") {
		t.Errorf("the assessment does not say whose peak it names: %q", assess)
	}
}
