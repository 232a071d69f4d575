package study

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// A level slower through one label while its total is within the noise
// (demo 001's soak: all requests 3.9 against 3.1 ms, +23.5 %, no
// significant change; Check-In Controller 12.5 against 2.4 ms, +425.8 %,
// slower) is called slower with the label's figures, not the total's;
// levels too short to judge are named as such, not dropped, and do not
// count as levels where the candidate held.
func TestReleaseLineNamesTheSlowerLabel(t *testing.T) {
	t.Parallel()
	soak := ReleaseRow{Group: "circulation, 30 users, soak", Base: "previous, soak", Cand: "current, soak", Verdict: compare.Slower, Exceeds: true,
		Total: compare.Row{Label: core.TotalLabel, BaseMeanMs: 3.1, NewMeanMs: 3.9, DeltaPct: 23.5, Verdict: compare.NoChange},
		Labels: []compare.Row{
			{Label: "Check-Out Controller", BaseMeanMs: 10.1, NewMeanMs: 3.1, DeltaPct: -69.6, Verdict: compare.Faster},
			{Label: "Check-In Controller", BaseMeanMs: 2.4, NewMeanMs: 12.5, DeltaPct: 425.8, Verdict: compare.Slower},
		}}
	short := ReleaseRow{Group: "circulation, 8 users", Base: "previous, 8 users", Cand: "current, 8 users", Verdict: compare.NotEnough,
		Total: compare.Row{Label: core.TotalLabel, BaseMeanMs: 1.4, NewMeanMs: 1.9, DeltaPct: 31.3, Verdict: compare.NotEnough}}
	wd := wordsIn(nil)
	q := Question{Kind: Release}.withDefaults()

	a := Answer{Release: []ReleaseRow{short, soak}}
	wd.releaseLine(q, &a, "current", "previous")
	for _, want := range []string{
		"slower at circulation, 30 users, soak (Check-In Controller 12.5 against 2.4 ms, +425.8 %)",
		"not enough data to judge at circulation, 8 users (1.9 against 1.4 ms, +31.3 %)",
		"1 of 2 matching levels had too little data to judge",
	} {
		if !strings.Contains(a.Line, want) {
			t.Errorf("answer lacks %q:\n%s", want, a.Line)
		}
	}
	if strings.Contains(a.Line, "(3.9 against 3.1 ms") || a.Outcome != Failed {
		t.Errorf("%s: %s", a.Outcome, a.Line)
	}
	if ev := strings.Join(a.Evidence, "\n"); !strings.Contains(ev, "Check-In Controller 12.5 ms against 2.4 ms (+425.8 %), slower") ||
		!strings.Contains(ev, "circulation, 8 users: average 1.9 ms against 1.4 ms (+31.3 %), not enough data to judge") {
		t.Errorf("evidence:\n%s", ev)
	}

	// Without a failed level, a level not judged leaves the answer open.
	fine := ReleaseRow{Group: "circulation, 20 users", Verdict: compare.NoChange,
		Total: compare.Row{Label: core.TotalLabel, BaseMeanMs: 2, NewMeanMs: 2.01, DeltaPct: 0.5, Verdict: compare.NoChange}}
	b := Answer{Release: []ReleaseRow{short, fine}}
	wd.releaseLine(q, &b, "current", "previous")
	if b.Outcome != Inconclusive || !strings.Contains(b.Line, "not slower by more than 5 % beyond run-to-run noise at the 1 of 2 matching levels with enough data to judge") ||
		strings.Contains(b.Line, "at any matching level") {
		t.Errorf("%s: %s", b.Outcome, b.Line)
	}
}

// Runs of a few seconds hold too little data for a verdict: the study
// says so in its answer and its tables, never "no significant change".
func TestReleaseTooShortToJudge(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	steps := []reporttest.Step{{Users: 8, Seconds: 6, RampUpS: 1}}
	write(t, filepath.Join(root, "base"), reporttest.Options{Seed: 3, Steps: steps})
	write(t, filepath.Join(root, "cand"), reporttest.Options{Seed: 4, SlowerPct: 40, Steps: steps})
	s, err := Build(studyFile(t, root, "runs:\n  - {dir: base, role: baseline, name: old}\n  - {dir: cand, role: candidate, name: new}\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var a *Answer
	for i := range s.Answers {
		if s.Answers[i].Question.Kind == Release {
			a = &s.Answers[i]
		}
	}
	if a == nil || len(a.Release) != 1 || a.Release[0].Verdict != compare.NotEnough {
		t.Fatalf("answers %+v", s.Answers)
	}
	if a.Outcome != Inconclusive || !strings.Contains(a.Line, "not enough data to judge at") || strings.Contains(a.Line, "not slower than") {
		t.Errorf("%s: %s", a.Outcome, a.Line)
	}
	md, _ := writeStudy(t, s)
	if strings.Contains(md, "no significant change") {
		t.Errorf("a comparison without enough data reads 'no significant change':\n%s", md)
	}
}

// The status names each failed question so that two of one kind are told
// apart (demo 002: "2 of 2 questions failed their expectation: capacity
// and capacity").
func TestStatusNamesQuestionsByWorkload(t *testing.T) {
	t.Parallel()
	as := []Answer{
		{Question: Question{Kind: CapacityQ, Workload: "upload"}, Outcome: Failed},
		{Question: Question{Kind: CapacityQ, Workload: "browse"}, Outcome: Failed},
		{Question: Question{Kind: Repeatability}, Outcome: Passed},
	}
	o, why := StatusOf(as)
	if o != Failed || why != "2 of 3 questions failed their expectation: capacity (upload) and capacity (browse)" {
		t.Errorf("%s: %s", o, why)
	}
}

// A run whose generator's CPU was at its ceiling is no evidence of
// interference: demo 004 on a loaded machine answered "most in test №2:
// average 211 ms … against 14.5 ms before" from a run whose load was not
// held. The headline comes from a valid run; when only invalid runs show
// a disturbance the answer is inconclusive, and the invalid runs are
// named.
func TestInterferenceInvalidRuns(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	steps := []reporttest.Step{{Users: 8, Seconds: 60, RampUpS: 2}, {Users: 8, Seconds: 60}, {Users: 8, Seconds: 60}}
	write(t, filepath.Join(root, "ok"), reporttest.Options{Seed: 1, Concurrent: true, Steps: steps})
	write(t, filepath.Join(root, "ceiling"), reporttest.Options{Seed: 6, Concurrent: true, Steps: steps, GeneratorCPU: 130})
	build := func(runs string) Answer {
		t.Helper()
		// Any rise counts as a disturbance here, so that each run shows one.
		s, err := Build(studyFile(t, root, "questions:\n  - {kind: interference, max_slower_pct: 0.001, max_error_pct: 0.001}\nruns:\n"+runs), nil)
		if err != nil {
			t.Fatal(err)
		}
		writeStudy(t, s)
		return s.Answers[0]
	}
	a := build("  - {dir: ceiling, role: baseline, name: test 1}\n  - {dir: ok, role: repeat, name: test 2}\n")
	if len(a.Interference) != 2 || !a.Interference[0].Invalid || a.Interference[1].Invalid {
		t.Fatalf("invalid runs %+v", a.Interference)
	}
	// Seeds 1 and 6 give both runs a rise during the import.
	if !a.Interference[0].Disturbed || !a.Interference[1].Disturbed {
		t.Fatalf("the planted runs show no rise to test with: %+v", a.Interference)
	}
	if a.Outcome != Failed || !strings.Contains(a.Line, "; most in test 2:") ||
		!strings.Contains(a.Line, "test 1: the load was not held or the generator's CPU was at its ceiling, so no evidence either way") {
		t.Errorf("%s: %s", a.Outcome, a.Line)
	}
	b := build("  - {dir: ceiling, role: baseline, name: test 1}\n  - {dir: ceiling, role: repeat, name: test 2}\n")
	if b.Outcome != Inconclusive || !strings.Contains(b.Line, "no other run answers the question") {
		t.Errorf("only invalid runs: %s: %s", b.Outcome, b.Line)
	}
}

// A level within the noise but beyond the bound in its figure (demo 001:
// 8 users "+13.1 %, within the noise of these runs") does not sit beside
// an unqualified "not slower than 5 %": what held is "not slower beyond
// the noise", and the line says so.
func TestReleaseHeldBoundIsQualified(t *testing.T) {
	t.Parallel()
	noisy := ReleaseRow{Group: "circulation, 8 users", Verdict: compare.NoChange,
		Total: compare.Row{Label: core.TotalLabel, BaseMeanMs: 5.3, NewMeanMs: 6.0, DeltaPct: 13.1, Verdict: compare.NoChange}}
	fast := ReleaseRow{Group: "circulation, 20 users", Verdict: compare.Faster,
		Total: compare.Row{Label: core.TotalLabel, BaseMeanMs: 6.2, NewMeanMs: 1.3, DeltaPct: -79.6, Verdict: compare.Faster}}
	q := Question{Kind: Release}.withDefaults()
	a := Answer{Release: []ReleaseRow{noisy, fast}}
	wordsIn(nil).releaseLine(q, &a, "current", "previous")
	if a.Outcome != Passed {
		t.Fatalf("%s: %s", a.Outcome, a.Line)
	}
	if m := reporttest.BoundAgainstDelta(a.Line); m != "" {
		t.Errorf("%q in: %s", m, a.Line)
	}
	if !strings.Contains(a.Line, "not slower by more than 5 % beyond run-to-run noise at any matching level") {
		t.Errorf("the held bound is not qualified: %s", a.Line)
	}
}
