package study004

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/demo/studykit"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/study"
)

// Each test's CPU table is the study's interference answer's: its windows
// and its figures. The demo computed its own windows (the import label's
// first to last second) while the answer measured the workloads' phases,
// so one document said mod-data-import used 21.1 % CPU during the import
// and, a screen further, 19.8 %.
func TestCPUTableIsTheInterferenceAnswers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "test1")
	if err := reporttest.Write(dir, reporttest.Options{Seed: 3, Concurrent: true, Steps: []reporttest.Step{{Users: 5, Seconds: 120, RampUpS: 2}}}); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// The synthetic import's calls under this plan's label.
	for k, ticks := range d.Timeline {
		if k.Workload == "data-import" {
			k2 := k
			k2.Label = Import
			d.Timeline[k2], d.Run[k2] = ticks, d.Run[k]
		}
	}
	cuts, _, _, ok := study.InterferenceCuts(d, "read", DataImport)
	if !ok {
		t.Fatal("the synthetic run has no import within its reads")
	}
	// Figures no monitor of the synthetic run holds: only the answer can
	// put them in the table.
	ir := study.InterferenceRun{Run: "test №1", Workload: "read", Other: DataImport,
		CPU: []study.CPUWin{{Target: Services[1], Pct: [3]float64{0.1, 19.83, 0}, Has: [3]bool{true, true, true}},
			{Target: Services[0], Pct: [3]float64{1.9, 6.2, 2.6}, Has: [3]bool{true, true, true}}}}
	for i, c := range cuts {
		ir.Windows[i].From, ir.Windows[i].To = c.From, c.To
	}
	s := &study.Study{Answers: []study.Answer{{Question: study.Question{Kind: study.Interference}, Interference: []study.InterferenceRun{ir}}}}
	secs := sections([]*studykit.Run{{Dir: dir, Name: "test №1", Data: d}}, false, s)
	var table *doc.Table
	var assess string
	for _, sec := range secs {
		if sec.ID != "ref-test-1" {
			continue
		}
		for _, b := range sec.Blocks {
			switch b := b.(type) {
			case *doc.Table:
				if strings.HasPrefix(b.Caption, "Service CPU utilization") {
					table = b
				}
			case *doc.Verdict:
				assess = b.Text
			}
		}
	}
	if table == nil {
		t.Fatalf("no CPU table in test №1's section")
	}
	want := map[string]string{Services[1]: "0.1 19.8 0.0", Services[0]: "1.9 6.2 2.6"}
	for _, r := range table.Rows {
		var cells []string
		for _, c := range r.Cells[1:] {
			cells = append(cells, c.Text)
		}
		if w, ok := want[r.Cells[0].Text]; ok && strings.Join(cells, " ") != w {
			t.Errorf("%s: %v, want the answer's %s", r.Cells[0].Text, cells, w)
		}
	}
	if !strings.Contains(assess, "mod-data-import used 19.8 % CPU during the import (0.1 before, 0.0 after) while mod-circulation used 1.9 % before, 6.2 % during and 2.6 % after") {
		t.Errorf("the assessment does not quote the answer's figures: %s", assess)
	}
}
