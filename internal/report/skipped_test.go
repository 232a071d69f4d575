package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestSkippedIterationsReported: iterations an on_fail rule ended early are
// in summary.json and stated in the report's results, per workload; a run
// without any says nothing about them.
func TestSkippedIterationsReported(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		skipped map[string]int64
		want    string
	}{
		{"some", map[string]int64{"steps": 12, "zeta": 1}, "13 iterations ended early by an on\\_fail rule (12 in steps and 1 in zeta)."},
		{"none", nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := reporttest.Write(dir, reporttest.Options{}); err != nil {
				t.Fatal(err)
			}
			if c.skipped != nil {
				p := filepath.Join(dir, "run.json")
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				m["skipped_iterations"] = c.skipped
				b, _ = json.Marshal(m)
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			sum, err := Generate(dir, Options{Now: fixedNow, Formats: []string{"md"}})
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for _, n := range sum.Skipped {
				total += n
			}
			md, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			has := strings.Contains(string(md), "ended early by an on")
			switch {
			case c.want != "" && !strings.Contains(string(md), c.want):
				t.Errorf("report.md lacks %q (summary %v):\n%s", c.want, sum.Skipped, grepLine(string(md), "ended early"))
			case c.want != "" && total != 13:
				t.Errorf("summary skipped %v, want 13 in all", sum.Skipped)
			case c.want == "" && has:
				t.Errorf("a run without skipped iterations mentions them")
			}
		})
	}
}

func grepLine(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return "(no line with " + sub + ")"
}

// TestFewSamplesNoted: a label with fewer than 100 samples carries a visible
// "n = …" note under its table; labels with enough samples do not.
func TestFewSamplesNoted(t *testing.T) {
	t.Parallel()
	b := &builder{red: NewRedactor(nil, nil)}
	tab := b.statsTable("t", []core.LabelStats{
		{Label: "login", Samples: 12, P50Ms: 10, P90Ms: 19791},
		{Label: "list", Samples: 5000, P50Ms: 10},
		{Label: core.TotalLabel, Samples: 5012},
	})
	if !strings.Contains(tab.Note, "login (n = 12)") {
		t.Errorf("note %q lacks login (n = 12)", tab.Note)
	}
	if strings.Contains(tab.Note, "list") || strings.Contains(tab.Note, core.TotalLabel) {
		t.Errorf("note %q names a label with enough samples", tab.Note)
	}
}
