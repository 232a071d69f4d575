package report_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// The plan's context opens the run report's runs section.
func TestRunReportContext(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Steps: []reporttest.Step{{Users: 5, Seconds: 20, RampUpS: 1}}}); err != nil {
		t.Fatal(err)
	}
	in, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	in.Context = &rundir.Context{Description: "allergy reads after the index change", Hypothesis: "reads stay under 200 ms at 14 users",
		System: map[string]string{"lar": "2.3.1", "cave": "7.0"}}
	if err := rundir.WriteInfo(dir, in); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Allergy reads after the index change.", "Hypothesis: Reads stay under 200 ms at 14 users.", "| cave | 7.0 |\n| lar | 2.3.1 |"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}
