package report

import (
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/rundir/rundirtest"
)

// The validity and test-status tests of package analysis's judgement with
// the words this package gives it (Words): what a reader and the console
// see.

// summarize is analysis.Summarize worded as the report words it.
func summarize(d *analysis.Dataset, slas []string) *analysis.Summary {
	s := analysis.Summarize(d, slas)
	Words(s)
	return s
}

// withPhases rewrites the run.json of writeSteps with the given phase facts
// and status, and loads it.
func withPhases(t *testing.T, status, aborted string, edit func(p []rundir.PhaseInfo)) *analysis.Dataset {
	t.Helper()
	dir := rundirtest.WriteSteps(t)
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	info.Status, info.AbortedBy = status, aborted
	edit(info.Phases)
	if err := rundir.WriteInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestValidity(t *testing.T) {
	t.Parallel()
	held := func(p []rundir.PhaseInfo) {}
	cases := []struct {
		name, status, aborted string
		slas                  []string
		edit                  func(p []rundir.PhaseInfo)
		verdict               string
		reason                string // in Validity.Reasons (or VerdictReasons when no validity reason)
	}{
		{"held, no SLA", rundir.StatusCompleted, "", nil, held, analysis.VerdictNoRequirements, ""},
		{"held, SLA holds", rundir.StatusCompleted, "", []string{"error_rate < 5%"}, held, analysis.VerdictPassed, ""},
		{"SLA broken", rundir.StatusCompleted, "", []string{"error_rate < 0.1%"}, held, analysis.VerdictFailed, ""},
		{"generator CPU saturated", rundir.StatusCompleted, "", []string{"error_rate < 5%"},
			func(p []rundir.PhaseInfo) { p[1].CPUPct = 93 }, analysis.VerdictInvalid, "the generator in step 2 used 93% of its CPU"},
		{"one generator of a merged run saturated", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) {
				p[0].CPUPct, p[0].CPUBySegment = 97, map[string]float64{"0/2": 40, "1/2": 97}
			},
			analysis.VerdictInvalid, "generator 1/2 in step 1 used 97% of its CPU"},
		{"rate not held, users at max", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) {
				p[2].Rate, p[2].Planned, p[2].Started, p[2].MaxUsers, p[2].PlannedS = 100, 1000, 200, 5, 10
			}, analysis.VerdictInvalid, "step 3: planned 100/s, achieved 20/s: the 5 users allowed (max_users) were all busy (20 req/s × 300 ms = 6.0 requests in flight); 800 of 1,000 iterations dropped"},
		{"rate not held, users at max now and then", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) {
				p[2].Rate, p[2].Planned, p[2].Started, p[2].MaxUsers, p[2].PlannedS = 100, 1000, 200, 30, 10
			}, analysis.VerdictInvalid, "step 3: planned 100/s, achieved 20/s: the 30 users allowed (max_users) were all busy at times, though on average only 6.0 requests were in flight (20 req/s × 300 ms); 800 of 1,000 iterations dropped"},
		{"rate not held, the generator late", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) {
				p[2].Rate, p[2].Planned, p[2].Started, p[2].MaxUsers, p[2].PlannedS = 100, 1000, 900, 30, 10
				p[2].DroppedLate, p[2].LateMaxMs = 95, 16.4
			}, analysis.VerdictInvalid, "step 3: planned 100/s, achieved 90/s: the generator itself fell behind its schedule, by up to 16.4 ms, so iterations came due together faster than the 30 users allowed (max_users) could take them (it was paused: other processes on its CPU, or its own pauses); 100 of 1,000 iterations dropped"},
		// 35 % of the drops late: both causes named, each with its count,
		// and the starvation read from the run queue, not guessed.
		{"rate not held, partly the starved generator", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) {
				p[2].Rate, p[2].Planned, p[2].Started, p[2].MaxUsers, p[2].PlannedS = 100, 1000, 900, 30, 10
				p[2].DroppedLate, p[2].LateMaxMs = 35, 16.4
				p[2].RunQueueMs, p[2].RunQueuePct = 4000, 61.5
			}, analysis.VerdictInvalid, "step 3: planned 100/s, achieved 90/s: the generator itself fell behind its schedule, by up to 16.4 ms, so iterations came due together faster than the 30 users allowed (max_users) could take them (it was starved of CPU: its threads waited 61.5% of their runnable time for a CPU held by other processes) for 35 of them, and the 30 users allowed (max_users) were all busy at times, though on average only 6.0 requests were in flight (20 req/s × 300 ms) for the other 65; 100 of 1,000 iterations dropped"},
		// Late drops, users never at the cap: max_users is not blamed.
		{"rate not held, users below the cap", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) {
				p[2].Rate, p[2].Planned, p[2].Started, p[2].MaxUsers, p[2].PlannedS = 100, 1000, 900, 500, 10
				p[2].DroppedLate, p[2].LateMaxMs = 35, 16.4
			}, analysis.VerdictInvalid, "step 3: planned 100/s, achieved 90/s: the generator itself fell behind its schedule, by up to 16.4 ms, so iterations came due together faster than the 500 users allowed (max_users) could take them (it was paused: other processes on its CPU, or its own pauses); 100 of 1,000 iterations dropped"},
		{"pacing slots missed", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) {
				p[1].Paced, p[1].Planned, p[1].Started, p[1].PlannedS = true, 1000, 900, 10
			}, analysis.VerdictInvalid, "step 2: planned 100/s (users × pace), achieved 90/s: the users overran their pace and had not caught up by the end; 100 of 1,000 paced iterations missed"},
		{"1% dropped is still held", rundir.StatusCompleted, "", nil,
			func(p []rundir.PhaseInfo) { p[0].Rate, p[0].Planned, p[0].Started, p[0].MaxUsers = 20, 200, 198, 100 },
			analysis.VerdictNoRequirements, ""},
		{"SLA broken outranks invalid", rundir.StatusCompleted, "", []string{"error_rate < 0.1%"},
			func(p []rundir.PhaseInfo) { p[1].CPUPct = 99 }, analysis.VerdictFailed, ""},
		{"interrupted outranks all", rundir.StatusInterrupted, "", []string{"error_rate < 0.1%"},
			func(p []rundir.PhaseInfo) { p[1].CPUPct = 99 }, analysis.VerdictInterrupted, ""},
		{"killed", rundir.StatusRunning, "", nil, held, analysis.VerdictInterrupted, ""},
		{"aborted by a requirement", rundir.StatusCompleted, "abort_on_fail: error_rate < 1% broken after 3s (observed 5%)",
			[]string{"error_rate < 5%"}, held, analysis.VerdictFailed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := summarize(withPhases(t, c.status, c.aborted, c.edit), c.slas)
			if s.Verdict != c.verdict {
				t.Errorf("verdict %q, want %q (reasons %q)", s.Verdict, c.verdict, s.VerdictReasons)
			}
			if c.reason != "" && !strings.Contains(strings.Join(s.Validity.Reasons, "\n"), c.reason) {
				t.Errorf("validity reasons %q lack %q", s.Validity.Reasons, c.reason)
			}
			if c.reason == "" && c.verdict != analysis.VerdictFailed && c.verdict != analysis.VerdictInterrupted && len(s.Validity.Reasons) > 0 {
				t.Errorf("unexpected validity reasons %q", s.Validity.Reasons)
			}
			if c.aborted != "" && (len(s.VerdictReasons) == 0 || !strings.Contains(s.VerdictReasons[0], c.aborted)) {
				t.Errorf("verdict reasons %q do not name the abort", s.VerdictReasons)
			}
		})
	}
}

// A generator starved by other processes (its threads waited most of their
// runnable time on a run queue) is a typed warning beside a valid verdict:
// the load was applied, its response times include the generator's wait.
func TestValidityStarvedGenerator(t *testing.T) {
	t.Parallel()
	d := withPhases(t, rundir.StatusCompleted, "", func(p []rundir.PhaseInfo) {
		p[1].RunQueueMs, p[1].RunQueuePct = 3867, 78.5
		p[2].RunQueueMs, p[2].RunQueuePct = 5, 40 // a large share of almost nothing
	})
	s := summarize(d, nil)
	v := s.Validity
	if s.Verdict != analysis.VerdictNoRequirements || v.Verdict != "valid" {
		t.Errorf("verdict %q, validity %q: starvation warns, it does not invalidate", s.Verdict, v.Verdict)
	}
	w := v.Warnings()
	if len(w) != 1 || w[0].Kind != analysis.ReasonStarved || w[0].Phase != "step 2" ||
		!strings.Contains(w[0].Text, "the generator in step 2 was starved of CPU: its threads waited 78.5% of their runnable time for a CPU held by other processes (3,867 ms in all)") {
		t.Errorf("warnings %+v", w)
	}
	if !v.Phases[1].Starved || v.Phases[2].Starved || !v.Phases[1].Held {
		t.Errorf("phases starved %v %v, held %v", v.Phases[1].Starved, v.Phases[2].Starved, v.Phases[1].Held)
	}
}

func TestValidityNoSuccess(t *testing.T) {
	t.Parallel()
	d := withPhases(t, rundir.StatusCompleted, "", func(p []rundir.PhaseInfo) {})
	d.Total.Errors = d.Total.Count // every request failed
	s := summarize(d, nil)
	if s.Verdict != analysis.VerdictNotRun || !strings.Contains(s.VerdictReasons[0], "none of the 600 requests succeeded; most frequent failure: http_5xx: HTTP 503") {
		t.Errorf("verdict %q, reasons %q", s.Verdict, s.VerdictReasons)
	}
}
