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
	if b.Outcome != Inconclusive || !strings.Contains(b.Line, "not slower than 5 % at the 1 of 2 matching levels with enough data to judge") ||
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
