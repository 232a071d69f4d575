package study

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// A capacity search below the load expected fails the question — unless a
// run of the same workload at that load or more met the requirements
// (demo 002: the search's 3 users "below the 16 users expected" while
// its upload at 16 clients averaged 50 ms with 0.10 % errors, within
// them): then the study's runs disagree, the answer says so and names
// the run, and the question is inconclusive, not failed.
func TestCapacityBelowExpectedDisputed(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "search"), reporttest.Options{Seed: 4})
	write(t, filepath.Join(root, "level-4"), reporttest.Options{Seed: 6, Steps: []reporttest.Step{{Users: 4, Seconds: 30}}})
	write(t, filepath.Join(root, "level-16"), reporttest.Options{Seed: 7, Steps: []reporttest.Step{{Users: 16, Seconds: 30}}})
	writeSearch(t, filepath.Join(root, "search"), &capacity.Search{Workload: "read", Unit: "users", Outcome: search.Found, Load: 12, UpperBound: 14,
		LimitedBy: search.RequirementBroke, Requirement: "avg(response_time) < 200ms", Resolution: "20%", Sentence: "capacity 12 users (14 users broke avg(response_time) < 200ms)",
		Probes: []capacity.SearchProbe{
			{N: 1, Dir: "probe-01", Load: 8, ThroughputRPS: 8, MeanMs: 40, Held: true, Verdict: capacity.Good},
			{N: 2, Dir: "probe-02", Load: 16, ThroughputRPS: 10.5, MeanMs: 420, Held: true, Verdict: capacity.Bad, LimitedBy: search.RequirementBroke},
			{N: 3, Dir: "probe-03", Load: 12, ThroughputRPS: 10.3, MeanMs: 150, Held: true, Verdict: capacity.Good},
			{N: 4, Dir: "probe-04", Load: 14, ThroughputRPS: 10.4, MeanMs: 260, Held: true, Verdict: capacity.Bad, LimitedBy: search.RequirementBroke},
		}})
	build := func(levels ...string) Answer {
		t.Helper()
		body := "questions:\n  - {kind: capacity, min_load: 14, sla: [\"avg(response_time) < 2s\", \"error_rate < 5%\"]}\nruns:\n  - {dir: search, role: baseline, factors: {workload: read}}\n"
		for _, l := range levels {
			body += "  - {dir: " + l + ", factors: {workload: read}}\n"
		}
		s, err := Build(studyFile(t, root, body), nil)
		if err != nil {
			t.Fatal(err)
		}
		writeStudy(t, s)
		return s.Answers[0]
	}
	// Beside a run at 4 users only, nothing contradicts the search.
	if a := build("level-4"); a.Outcome != Failed || strings.Contains(a.Line, "disagree") {
		t.Errorf("beside 4 users: %s: %s", a.Outcome, a.Line)
	}
	a := build("level-4", "level-16")
	if a.Outcome != Inconclusive || !strings.Contains(a.Line, "below the 14 users expected; yet shop, 16 users met the requirements at 16 users: the study's runs disagree") {
		t.Errorf("beside 16 users within the requirements: %s: %s", a.Outcome, a.Line)
	}
}

// A search whose throughput went flat while a count of the server
// saturated (demo 003: manager-slots full, "the knee lies between 7 users
// and 8 users") keeps its knee in the side-by-side table: it read "none"
// beside the answer's bracket.
func TestCapacitySearchKneeWithSaturatedCount(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "search"), reporttest.Options{Seed: 4})
	write(t, filepath.Join(root, "other"), reporttest.Options{Seed: 5, Steps: []reporttest.Step{{Users: 4, Seconds: 30}}})
	writeSearch(t, filepath.Join(root, "search"), &capacity.Search{Workload: "read", Unit: "users", Outcome: search.Found, Load: 8, Below: 7, UpperBound: 16,
		LimitedBy: search.ThroughputFlat, Resolution: "25%",
		Bottleneck: &resources.Bottleneck{Saturated: true, Phase: "probe-03", Load: 8, Reading: resources.Reading{Component: "manager-slots", Resource: resources.Connections, Used: 8, Capacity: 8, Utilisation: 1}},
		Probes: []capacity.SearchProbe{
			{N: 1, Dir: "probe-01", Load: 2, ThroughputRPS: 160, Held: true, Verdict: capacity.Good},
			{N: 2, Dir: "probe-02", Load: 4, ThroughputRPS: 286, Held: true, Verdict: capacity.Good},
			{N: 3, Dir: "probe-03", Load: 8, ThroughputRPS: 326, Held: true, Verdict: capacity.Good},
			{N: 4, Dir: "probe-04", Load: 16, ThroughputRPS: 318, Held: true, Verdict: capacity.Bad, LimitedBy: search.ThroughputFlat},
			{N: 5, Dir: "probe-05", Load: 7, ThroughputRPS: 300, Held: true, Verdict: capacity.Good},
			// A repeat counts as a probe the search ran, not as a load.
			{N: 6, Dir: "probe-06", Load: 8, ThroughputRPS: 325, Held: true, Verdict: capacity.Good, Repeat: true},
		}})
	s, err := Build(studyFile(t, root, "questions:\n  - kind: capacity\nlimits: {manager calls at once: 8}\nruns:\n  - {dir: search, role: baseline, factors: {workload: read}}\n  - {dir: other, factors: {workload: write}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var row CapacityRow
	for _, r := range s.Answers[0].Capacity {
		if r.Search {
			row = r
		}
	}
	if row.Limiter != "configured limit" || row.KneeLoad != 8 || row.KneeFrom != 7 || row.KneeRPS != 326 {
		t.Errorf("limiter %q, knee %g–%g users at %g req/s; want the configured limit, 7–8 users at 326", row.Limiter, row.KneeFrom, row.KneeLoad, row.KneeRPS)
	}
	// The configurations question quotes the same bracket.
	if got := wordsIn(nil).cfgFigures(row); !strings.Contains(got, "knee between 7 and 8 users") {
		t.Errorf("configuration figures %q lack the knee's bracket", got)
	}
	md, _ := writeStudy(t, s)
	if !strings.Contains(row.Sentence, "the knee lies between 7 users and 8 users") || !strings.Contains(md, "| 7–8 users | 326 |") {
		t.Errorf("the answer (%s) and the table disagree on the knee:\n%s", row.Sentence, md)
	}
	// The row says its figures are the search's probes' (its peak is
	// theirs, not another run's of the same workload).
	if !strings.Contains(md, "| read | its capacity search's 6 probes | 2, 4, 7, 8, 16 users |") {
		t.Errorf("the side-by-side row does not say what measured it:\n%s", md)
	}
}

// A capacity search probes several loads: it is no run at the load it
// started from (demo 002: "upload, capacity search" in the group "upload,
// 10 users", compared with the upload at 10 clients, and drawn in the
// load series as a second point at 10 users under "the runs are at
// different load levels"). Its group names the search and its probes'
// range, it is compared with no run, and the series holds the fixed runs.
func TestCapacitySearchIsNoFixedLoadRun(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "search"), reporttest.Options{Seed: 4, Steps: []reporttest.Step{{Users: 10, Seconds: 30}}})
	write(t, filepath.Join(root, "level-10"), reporttest.Options{Seed: 6, Steps: []reporttest.Step{{Users: 10, Seconds: 30}}})
	write(t, filepath.Join(root, "level-20"), reporttest.Options{Seed: 7, Steps: []reporttest.Step{{Users: 20, Seconds: 30}}})
	write(t, filepath.Join(root, "search-b"), reporttest.Options{Seed: 8, Steps: []reporttest.Step{{Users: 10, Seconds: 30}}})
	for _, dir := range []string{"search", "search-b"} {
		writeSearch(t, filepath.Join(root, dir), &capacity.Search{Workload: "read", Unit: "users", Outcome: search.Found, Load: 15, UpperBound: 20,
			LimitedBy: search.RequirementBroke, Requirement: "avg(response_time) < 200ms", Resolution: "30%",
			Probes: []capacity.SearchProbe{
				{N: 1, Dir: "probe-01", Load: 10, ThroughputRPS: 10, MeanMs: 40, Held: true, Verdict: capacity.Good},
				{N: 2, Dir: "probe-02", Load: 20, ThroughputRPS: 10.5, MeanMs: 420, Held: true, Verdict: capacity.Bad, LimitedBy: search.RequirementBroke},
				{N: 3, Dir: "probe-03", Load: 15, ThroughputRPS: 10.4, MeanMs: 150, Held: true, Verdict: capacity.Good},
			}})
	}
	// A second configuration's search over the same range (demo 003: "C:
	// no log, capacity search" compared with A's, −60.7 %, though each
	// search's whole-run figures are of the probes it happened to choose).
	s, err := Build(studyFile(t, root, "runs:\n  - {dir: level-10, role: baseline, name: level 10, factors: {workload: read, config: A}}\n  - {dir: level-20, name: level 20, factors: {workload: read, config: A}}\n  - {dir: search, name: the search, factors: {workload: read, config: A}}\n  - {dir: search-b, name: B's search, role: configuration, factors: {workload: read, config: B}}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	r := s.Runs[2]
	if r.Group != "read, capacity search over 10–20 users" || r.ComparedWith != "" {
		t.Errorf("the search's group %q, compared with %q; want its own group, compared with none", r.Group, r.ComparedWith)
	}
	if len(s.Series) != 1 || strings.Join(s.Series[0].Runs, ",") != "level 10,level 20" {
		t.Errorf("series %+v, want the fixed runs at 10 and 20 users only", s.Series)
	}
	if r := s.Runs[3]; r.Group != s.Runs[2].Group || r.ComparedWith != "" {
		t.Errorf("B's search in group %q, compared with %q; want A's search's group, compared with none", r.Group, r.ComparedWith)
	}
	for _, l := range s.Labels {
		for _, c := range l.Cells[2:] {
			if c.Against != "" {
				t.Errorf("%s: %s compared with %s", l.Label, c.Run, c.Against)
			}
		}
	}
	writeStudy(t, s)
}
