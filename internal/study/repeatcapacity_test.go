package study

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestRepeatsAnswerCapacityEachForItself: a candidate and its repeat are
// both stepped runs of one variant; each answers the capacity question for
// itself under its own name, and the side-by-side table holds a row for
// each — before, the table kept the first row of a name, so a repeat's
// knee ("19.9 req/s") was quoted in the answer and stood in no table.
func TestRepeatsAnswerCapacityEachForItself(t *testing.T) {
	t.Parallel()
	for _, seeds := range [][3]uint64{{7, 8, 9}, {1, 2, 3}} {
		root := t.TempDir()
		steps := []reporttest.Step{{Users: 7, Seconds: 40, RampUpS: 2}, {Users: 10, Seconds: 40, RampUpS: 2}, {Users: 14, Seconds: 40, RampUpS: 2}}
		write(t, filepath.Join(root, "a"), reporttest.Options{Seed: seeds[0], Monitor: true, Steps: steps, Name: "lar-cave"})
		write(t, filepath.Join(root, "b"), reporttest.Options{Seed: seeds[1], Monitor: true, Steps: steps, Name: "lar-cave"})
		write(t, filepath.Join(root, "c"), reporttest.Options{Seed: seeds[2], SlowerPct: 30, Monitor: true, Steps: steps, Name: "lar-cave"})
		f := studyFile(t, root, `title: LAR
runs:
  - {dir: a, role: baseline, name: "1.0.2", factors: {release: "1.0.2"}}
  - {dir: c, role: candidate, name: "1.0.3", factors: {release: "1.0.3"}}
  - {dir: b, role: repeat, factors: {release: "1.0.3"}}
`)
		s, err := Build(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		md, _ := writeStudy(t, s) // the truth checks: every figure in a table
		for _, row := range []string{"| read, 1.0.2 |", "| read, 1.0.3 (1.0.3) |", "| read, 1.0.3 (repeat 1) |"} {
			if !strings.Contains(md, row) {
				t.Errorf("seeds %v: the side-by-side table lacks the row %q", seeds, row)
			}
		}
		if n := strings.Count(firstScreen(md), "Read, 1.0.3 (repeat 1):"); n != 1 {
			t.Errorf("seeds %v: the answer names the repeat's capacity %d times, want once", seeds, n)
		}
	}
}
