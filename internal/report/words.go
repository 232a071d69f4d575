package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/locale"
)

// The words of the test status's reasons and of the validity findings:
// analysis decides (analysis.Why, analysis.Finding with its kind, cause
// and numbers), this file says it — the one place these sentences live.

// Words fills the summary's worded reasons from its typed ones, in
// English: verdict_reasons from Why, and the validity findings' text, each
// phase's reasons and the run's. The console and summary.json read these.
func Words(s *analysis.Summary) { WordsIn(s, nil) }

// WordsIn is Words in the language loc (nil is English): every sentence
// is a key of the message catalogue (internal/locale).
func WordsIn(s *analysis.Summary, loc *locale.Locale) {
	b := numbers{loc: loc}
	if v := s.Validity; v != nil {
		v.Reasons = []string{}
		for i := range v.Phases {
			v.Phases[i].Reasons = nil
		}
		for i := range v.Findings {
			f := &v.Findings[i]
			var pv analysis.PhaseValidity
			if f.PhaseIndex < len(v.Phases) {
				pv = v.Phases[f.PhaseIndex]
			}
			f.Text = findingText(b, *f, pv, len(v.Phases))
			if f.Invalidates {
				v.Reasons = append(v.Reasons, f.Text)
				if f.PhaseIndex < len(v.Phases) {
					v.Phases[f.PhaseIndex].Reasons = append(v.Phases[f.PhaseIndex].Reasons, f.Text)
				}
			}
		}
	}
	for i := range s.SLA {
		if r := &s.SLA[i]; r.Skip != "" {
			r.Error = skipText(b, *r)
		}
	}
	s.VerdictReasons = []string{}
	for _, w := range s.Why {
		s.VerdictReasons = append(s.VerdictReasons, whyText(b, w, s))
	}
}

// skipText says why a requirement could not be judged.
func skipText(b numbers, r analysis.SLAResult) string {
	switch r.Skip {
	case analysis.SkipNoServerData:
		return b.T("no server-side data: %s", nonEmpty(r.SkipNote, b.T("no access log was attached to this run")))
	case analysis.SkipServerUnreadable:
		return b.T("server-side data unreadable: %s", r.SkipNote)
	case analysis.SkipNoPhase:
		return b.T("no phase named %s", r.Scope)
	case analysis.SkipNoSamples:
		return b.T("no samples for this requirement")
	case analysis.SkipNoChecks:
		t := b.T("no check outcomes for this requirement")
		if r.SkipCheck != "" {
			t = b.T("no outcomes of a check named %s", strconv.Quote(r.SkipCheck))
		}
		if r.Scope != "run" {
			t += b.T(" in %s", r.Scope)
		}
		return t
	}
	return string(r.Skip)
}

// whyText words one reason for the test status.
func whyText(b numbers, w analysis.Why, s *analysis.Summary) string {
	at := ""
	if w.Target != "" {
		at = b.T(" (target %s)", w.Target)
	}
	switch w.Kind {
	case analysis.WhyInterrupted:
		return b.T("the run was interrupted; the results cover only the time it ran")
	case analysis.WhyDidNotFinish:
		return b.T("the run did not finish (killed, or still running); the results cover only the time it ran")
	case analysis.WhyFailedMidRun:
		return b.T("the run failed before its end; the results cover only the time it ran")
	case analysis.WhyPrepareFailed:
		r := s.Prepare[w.Command]
		return b.T("prepare command %q %s", r.Name, r.Describe())
	case analysis.WhyNothingSent:
		return b.T("no request was sent") + at
	case analysis.WhyNoneSucceeded:
		msg := b.T("none of the %s requests succeeded", b.thousands(w.Requests))
		if top := w.Top; top != nil {
			what := top.Class
			if top.Message != "" {
				what += ": " + top.Message
			}
			msg += b.T("; most frequent failure: %s", what)
		}
		return msg + at
	case analysis.WhyStoppedEarly:
		return b.T("stopped early by %s", w.Rule)
	case analysis.WhyRequirementBroken:
		return b.T("requirement broken: %s", s.SLA[w.SLA].Expr)
	case analysis.WhyLoadNotHeld:
		return s.Validity.Findings[w.Finding].Text
	}
	return string(w.Kind)
}

// findingText words a validity finding of phase pv in a run of n phases.
func findingText(b numbers, f analysis.Finding, pv analysis.PhaseValidity, n int) string {
	where, in := "", ""
	if n > 1 {
		where, in = pv.Phase+": ", b.T(" in %s", pv.Phase)
	}
	switch f.Kind {
	case analysis.ReasonDropped:
		return droppedText(b, pv, f.Cause, where)
	case analysis.ReasonMissedSlots:
		why := b.T("the users overran their pace and had not caught up by the end")
		if pv.Starved {
			why += b.T(" (the generator was starved of CPU: its threads waited %s%% of their runnable time for a CPU)", b.fmtNum(pv.RunQueuePct))
		}
		return b.T("%splanned %s/s (users × pace), achieved %s/s: %s; %s of %s paced iterations missed", where,
			b.fmtNum(pv.PlannedRate), b.fmtNum(pv.AchievedRate), why, b.thousands(pv.Dropped), b.thousands(pv.Planned))
	case analysis.ReasonGeneratorCPU:
		who := b.T("the generator")
		if f.Segment != "" {
			who = b.T("generator %s", f.Segment)
		}
		return b.T("%s%s used %.0f%% of its CPU: it may have limited the load and added to the response times", who, in, f.CPUPct)
	case analysis.ReasonStarved:
		return b.T("the generator%s was starved of CPU: its threads waited %s%% of their runnable time for a CPU held by other processes (%s ms in all), so its response times include its own waiting",
			in, b.fmtNum(pv.RunQueuePct), b.thousands(int64(math.Round(pv.RunQueueMs))))
	}
	return string(f.Kind)
}

// droppedText is the sentence for an open-model phase that did not hold
// its rate: "planned 5,000/s, achieved 190/s: the 10 users allowed were all
// busy; 24,000 iterations dropped", the cause as analysis judged it.
func droppedText(b numbers, pv analysis.PhaseValidity, cause analysis.DropCause, where string) string {
	behind := func() string {
		w := b.T("the generator itself fell behind its schedule, by up to %s ms, so iterations came due together faster than the %s allowed (max_users) could take them",
			b.fmtNum(pv.LateMaxMs), usersAllowed(b, pv.MaxUsers))
		switch {
		case pv.Starved:
			w += b.T(" (it was starved of CPU: its threads waited %s%% of their runnable time for a CPU held by other processes)", b.fmtNum(pv.RunQueuePct))
		case pv.CPUPct >= analysis.MaxGeneratorCPUPct:
			w += b.T(" (it was short of CPU)")
		case pv.RunQueuePct > 0 || pv.RunQueueMs > 0:
			w += b.T(" (neither short of CPU nor starved by other processes: the rate is beyond what it can send)")
		default:
			w += b.T(" (it was paused: other processes on its CPU, or its own pauses)")
		}
		return w
	}
	users := func() string {
		w := b.T("the %s users allowed (max_users) were all busy", b.thousands(int64(pv.MaxUsers)))
		if pv.MaxUsers == 1 {
			w = b.T("the one user allowed (max_users) was busy")
		}
		if pv.InFlight > 0 {
			t := pv.ServiceMs
			if t == 0 {
				t = pv.ResponseMs
			}
			if 2*pv.InFlight < float64(pv.MaxUsers) {
				// On average far fewer were needed: the shortfall came
				// in bursts (the server stalled now and then).
				w += b.T(" at times, though on average only %.1f requests were in flight (%s req/s × %s ms)",
					pv.InFlight, b.fmtNum(pv.RequestsPerS), b.fmtNum(t))
			} else {
				w += b.T(" (%s req/s × %s ms = %.1f requests in flight)", b.fmtNum(pv.RequestsPerS), b.fmtNum(t), pv.InFlight)
			}
		}
		return w
	}
	var why string
	switch cause {
	case analysis.DropBoth:
		why = b.T("%s for %s of them, and %s for the other %s", behind(), b.thousands(pv.DroppedLate), users(), b.thousands(pv.Dropped-pv.DroppedLate))
	case analysis.DropBehind:
		why = behind()
	case analysis.DropUsers:
		why = users()
	case analysis.DropShortCPU:
		why = b.T("the generator was short of CPU")
	case analysis.DropStarved:
		why = b.T("the generator was starved of CPU by other processes")
	default:
		why = b.T("iterations could not start on time")
	}
	return b.T("%splanned %s/s, achieved %s/s: %s; %s of %s iterations dropped", where,
		b.fmtNum(pv.PlannedRate), b.fmtNum(pv.AchievedRate), why, b.thousands(pv.Dropped), b.thousands(pv.Planned))
}

// usersAllowed is "10 users" or "one user".
func usersAllowed(b numbers, n int) string {
	if n == 1 {
		return b.T("one user")
	}
	return b.T("%s users", b.thousands(int64(n)))
}

// fmtNum renders a rate or time for a sentence: thousands separated, at
// most three significant decimals below 10.
func fmtNum(x float64) string {
	switch {
	case x >= 100 || x == math.Trunc(x):
		return thousands(int64(math.Round(x)))
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", x), "0"), ".")
}
