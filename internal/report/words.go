package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
)

// The words of the test status's reasons and of the validity findings:
// analysis decides (analysis.Why, analysis.Finding with its kind, cause
// and numbers), this file says it — the one place these sentences live.

// Words fills the summary's worded reasons from its typed ones:
// verdict_reasons from Why, and the validity findings' text, each phase's
// reasons and the run's. The console and summary.json read these.
func Words(s *analysis.Summary) {
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
			f.Text = findingText(*f, pv, len(v.Phases))
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
			r.Error = skipText(*r)
		}
	}
	s.VerdictReasons = []string{}
	for _, w := range s.Why {
		s.VerdictReasons = append(s.VerdictReasons, whyText(w, s))
	}
}

// skipText says why a requirement could not be judged.
func skipText(r analysis.SLAResult) string {
	switch r.Skip {
	case analysis.SkipNoServerData:
		return "no server-side data: " + nonEmpty(r.SkipNote, "no access log was attached to this run")
	case analysis.SkipServerUnreadable:
		return "server-side data unreadable: " + r.SkipNote
	case analysis.SkipNoPhase:
		return "no phase named " + r.Scope
	case analysis.SkipNoSamples:
		return "no samples for this requirement"
	case analysis.SkipNoChecks:
		t := "no check outcomes for this requirement"
		if r.SkipCheck != "" {
			t = "no outcomes of a check named " + strconv.Quote(r.SkipCheck)
		}
		if r.Scope != "run" {
			t += " in " + r.Scope
		}
		return t
	}
	return string(r.Skip)
}

// whyText words one reason for the test status.
func whyText(w analysis.Why, s *analysis.Summary) string {
	at := ""
	if w.Target != "" {
		at = " (target " + w.Target + ")"
	}
	switch w.Kind {
	case analysis.WhyInterrupted:
		return "the run was interrupted; the results cover only the time it ran"
	case analysis.WhyDidNotFinish:
		return "the run did not finish (killed, or still running); the results cover only the time it ran"
	case analysis.WhyFailedMidRun:
		return "the run failed before its end; the results cover only the time it ran"
	case analysis.WhyPrepareFailed:
		r := s.Prepare[w.Command]
		return fmt.Sprintf("prepare command %q %s", r.Name, r.Describe())
	case analysis.WhyNothingSent:
		return "no request was sent" + at
	case analysis.WhyNoneSucceeded:
		msg := fmt.Sprintf("none of the %s requests succeeded", thousands(w.Requests))
		if top := w.Top; top != nil {
			what := top.Class
			if top.Message != "" {
				what += ": " + top.Message
			}
			msg += "; most frequent failure: " + what
		}
		return msg + at
	case analysis.WhyStoppedEarly:
		return "stopped early by " + w.Rule
	case analysis.WhyRequirementBroken:
		return "requirement broken: " + s.SLA[w.SLA].Expr
	case analysis.WhyLoadNotHeld:
		return s.Validity.Findings[w.Finding].Text
	}
	return string(w.Kind)
}

// findingText words a validity finding of phase pv in a run of n phases.
func findingText(f analysis.Finding, pv analysis.PhaseValidity, n int) string {
	where, in := "", ""
	if n > 1 {
		where, in = pv.Phase+": ", " in "+pv.Phase
	}
	switch f.Kind {
	case analysis.ReasonDropped:
		return droppedText(pv, f.Cause, where)
	case analysis.ReasonMissedSlots:
		why := "the users overran their pace and had not caught up by the end"
		if pv.Starved {
			why += fmt.Sprintf(" (the generator was starved of CPU: its threads waited %s%% of their runnable time for a CPU)", fmtNum(pv.RunQueuePct))
		}
		return fmt.Sprintf("%splanned %s/s (users × pace), achieved %s/s: %s; %s of %s paced iterations missed", where,
			fmtNum(pv.PlannedRate), fmtNum(pv.AchievedRate), why, thousands(pv.Dropped), thousands(pv.Planned))
	case analysis.ReasonGeneratorCPU:
		who := "the generator"
		if f.Segment != "" {
			who = "generator " + f.Segment
		}
		return fmt.Sprintf("%s%s used %.0f%% of its CPU: it may have limited the load and added to the response times", who, in, f.CPUPct)
	case analysis.ReasonStarved:
		return fmt.Sprintf("the generator%s was starved of CPU: its threads waited %s%% of their runnable time for a CPU held by other processes (%s ms in all), so its response times include its own waiting",
			in, fmtNum(pv.RunQueuePct), thousands(int64(math.Round(pv.RunQueueMs))))
	}
	return string(f.Kind)
}

// droppedText is the sentence for an open-model phase that did not hold
// its rate: "planned 5,000/s, achieved 190/s: the 10 users allowed were all
// busy; 24,000 iterations dropped", the cause as analysis judged it.
func droppedText(pv analysis.PhaseValidity, cause analysis.DropCause, where string) string {
	behind := func() string {
		w := fmt.Sprintf("the generator itself fell behind its schedule, by up to %s ms, so iterations came due together faster than the %s allowed (max_users) could take them",
			fmtNum(pv.LateMaxMs), usersAllowed(pv.MaxUsers))
		switch {
		case pv.Starved:
			w += fmt.Sprintf(" (it was starved of CPU: its threads waited %s%% of their runnable time for a CPU held by other processes)", fmtNum(pv.RunQueuePct))
		case pv.CPUPct >= analysis.MaxGeneratorCPUPct:
			w += " (it was short of CPU)"
		case pv.RunQueuePct > 0 || pv.RunQueueMs > 0:
			w += " (neither short of CPU nor starved by other processes: the rate is beyond what it can send)"
		default:
			w += " (it was paused: other processes on its CPU, or its own pauses)"
		}
		return w
	}
	users := func() string {
		w := fmt.Sprintf("the %s users allowed (max_users) were all busy", thousands(int64(pv.MaxUsers)))
		if pv.MaxUsers == 1 {
			w = "the one user allowed (max_users) was busy"
		}
		if pv.InFlight > 0 {
			t := pv.ServiceMs
			if t == 0 {
				t = pv.ResponseMs
			}
			if 2*pv.InFlight < float64(pv.MaxUsers) {
				// On average far fewer were needed: the shortfall came
				// in bursts (the server stalled now and then).
				w += fmt.Sprintf(" at times, though on average only %.1f requests were in flight (%s req/s × %s ms)",
					pv.InFlight, fmtNum(pv.RequestsPerS), fmtNum(t))
			} else {
				w += fmt.Sprintf(" (%s req/s × %s ms = %.1f requests in flight)", fmtNum(pv.RequestsPerS), fmtNum(t), pv.InFlight)
			}
		}
		return w
	}
	var why string
	switch cause {
	case analysis.DropBoth:
		why = fmt.Sprintf("%s for %s of them, and %s for the other %s", behind(), thousands(pv.DroppedLate), users(), thousands(pv.Dropped-pv.DroppedLate))
	case analysis.DropBehind:
		why = behind()
	case analysis.DropUsers:
		why = users()
	case analysis.DropShortCPU:
		why = "the generator was short of CPU"
	case analysis.DropStarved:
		why = "the generator was starved of CPU by other processes"
	default:
		why = "iterations could not start on time"
	}
	return fmt.Sprintf("%splanned %s/s, achieved %s/s: %s; %s of %s iterations dropped", where,
		fmtNum(pv.PlannedRate), fmtNum(pv.AchievedRate), why, thousands(pv.Dropped), thousands(pv.Planned))
}

// usersAllowed is "10 users" or "one user".
func usersAllowed(n int) string {
	if n == 1 {
		return "one user"
	}
	return thousands(int64(n)) + " users"
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
