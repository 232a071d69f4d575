package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestStopRuleNoteWorded: the runs table words a stop rule from the figures
// run.json keeps, in the document's language and number format — not the
// engine's English line.
func TestStopRuleNoteWorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Seed: 5}); err != nil {
		t.Fatal(err)
	}
	in, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := len(in.Phases) - 1
	in.Phases[last].Stopped = "stop rule: throughput gain -22.0% < 5% (155.58 → 121.40 req/s)"
	in.Phases[last].StopRule = &core.StopRule{GainPct: -21.97, ThresholdPct: 5, FromRPS: 155.58, ToRPS: 121.4}
	if err := rundir.WriteInfo(dir, in); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ lang, want, not string }{
		{"en", "stop rule: throughput gain -22.0 % below 5 % (156 → 121 req/s)", "stopregel"},
		{"da", "stopregel: throughput ændrede sig -22,0 %, under 5 % (156 → 121 kald/s)", "stop rule"},
	} {
		if _, err := report.Write(dir, report.Options{Lang: c.lang, Formats: []string{"md"}}); err != nil {
			t.Fatal(err)
		}
		md, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		row := ""
		for _, l := range strings.Split(string(md), "\n") {
			if strings.HasPrefix(l, "| 3 |") {
				row = l
			}
		}
		if !strings.Contains(row, c.want) || strings.Contains(row, c.not) {
			t.Errorf("%s: the last phase's row reads\n%s\nwant %q in it and not %q", c.lang, row, c.want, c.not)
		}
	}
}
