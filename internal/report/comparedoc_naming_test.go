package report_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/markdown"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// Three runs of one plan at three load levels are a series named by their
// users, not three repeats named by the plan.
func TestCompareLoadSeries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	var dirs []string
	for _, u := range []int{8, 20, 30} {
		d := filepath.Join(root, "u"+string(rune('0'+u/10))+string(rune('0'+u%10)))
		if err := reporttest.Write(d, reporttest.Options{Name: "shop", Seed: 3, Steps: []reporttest.Step{{Users: u, Seconds: 30, RampUpS: 2}}}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	res, err := report.CompareRuns(dirs, report.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Kind != compare.Series {
		t.Fatalf("kind %s, want series", res.Kind)
	}
	if res.BaseName != "shop, 8 users" || res.Runs[1].Name != "shop, 30 users" {
		t.Fatalf("names %q, %q", res.BaseName, res.Runs[1].Name)
	}
	md := string(markdown.Render(res.Doc))
	for _, want := range []string{"Load series", "Throughput and response time against load", "| shop, 20 users | 20 users |"} {
		if !strings.Contains(md, want) {
			t.Errorf("compare.md lacks %q", want)
		}
	}
	for _, bad := range []string{"CV", "change than", "Runs side by side"} {
		if strings.Contains(md, bad) {
			t.Errorf("compare.md of a series contains %q", bad)
		}
	}
}

// A whole-run delta between different phase mixes carries a warning; the
// same phases do not.
func TestComparePhaseMixWarning(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	full, cut, same := filepath.Join(root, "full"), filepath.Join(root, "cut"), filepath.Join(root, "same")
	steps := []reporttest.Step{{Users: 7, Seconds: 30, RampUpS: 2}, {Users: 10, Seconds: 30, RampUpS: 2}}
	for _, c := range []struct {
		dir   string
		steps []reporttest.Step
	}{{full, steps}, {cut, steps[:1]}, {same, steps}} {
		if err := reporttest.Write(c.dir, reporttest.Options{Name: "demo", Seed: 5, Steps: c.steps}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := report.CompareRuns([]string{full, cut, same}, report.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Runs[0].SamePhases || !res.Runs[1].SamePhases {
		t.Fatalf("SamePhases: cut %v, same %v", res.Runs[0].SamePhases, res.Runs[1].SamePhases)
	}
	md := string(markdown.Render(res.Doc))
	if n := strings.Count(md, "different phases"); n != 1 {
		t.Fatalf("phase-mix warning appears %d times, want once:\n%s", n, md)
	}
	if !strings.Contains(md, "from demo") && !strings.Contains(md, "than demo") {
		t.Fatalf("summary sentence does not name the baseline:\n%s", md)
	}
}
