package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// The words of the test status's reasons and of the validity findings:
// analysis decides (analysis.Why, analysis.Finding with its kind, cause
// and numbers), this file says it — the one place these sentences live.

// Words fills the summary's worded reasons from its typed ones, in
// English: verdict_reasons from Why, and the validity findings' text, each
// phase's reasons and the run's; the capacity's knee sentence and reasons,
// the memory trends' method and reason, the comparison's notes. The
// console and summary.json read these. It may run again once more of the
// summary is known: it rewrites every worded field from the typed ones.
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
	if s.Capacity != nil {
		capacityWords(b, s.Capacity)
	}
	if s.Trends != nil {
		trendWords(s.Trends)
	}
	comparisonWords(s.Comparison)
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
		return b.T("prepare command %q %s", r.Name, CommandOutcome(b.loc, &r))
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

// ---- capacity: the knee, the USL fit, Little's law ----

// KneeSentence words a knee in English: "throughput stopped scaling at
// 15 concurrent users, ~1000 req/s: higher loads added at most +4.7 %
// (threshold 5 %); beyond it average response time rose from 14 ms to
// 190 ms".
func KneeSentence(k knee.Knee) string { return kneeSentence(numbers{}, k) }

func kneeSentence(b numbers, k knee.Knee) string {
	return b.T("throughput stopped scaling at %s, ~%s req/s: %s", kneeLoadWords(b, k.Kind, k.Load), b.loc.Num(kneeRoughly(k.ThroughputRPS)), kneeEvidence(b, k))
}

// kneeEvidence is the part of kneeSentence after the knee itself: "higher
// loads added at most +4.7 % (threshold 5 %); beyond it average response
// time rose from 14 ms to 190 ms".
func kneeEvidence(b numbers, k knee.Knee) string {
	gain := b.T("higher loads added at most %s", b.loc.Num(kneeSignedPct(100*k.Gain)))
	if k.Gain < 0.0005 {
		gain = b.W("no higher load added throughput")
	}
	return b.T("%s (threshold %s); beyond it average response time rose from %s ms to %s ms",
		gain, b.loc.Num(kneeTrimPct(100*k.MinGain)), b.loc.Num(kneeMs(k.MeanMs)), b.loc.Num(kneeMs(k.MaxMeanMs)))
}

// NoKneeText says, in English, why a sweep of loads of the kind has no
// knee.
func NoKneeText(nk knee.NoKnee, kind knee.LoadKind) string { return noKneeText(numbers{}, nk, kind) }

func noKneeText(b numbers, nk knee.NoKnee, kind knee.LoadKind) string {
	at := func() string {
		return b.T("%s (~%s req/s)", kneeLoadWords(b, kind, nk.Load), b.loc.Num(kneeRoughly(nk.ThroughputRPS)))
	}
	switch nk.Outcome {
	case knee.TooFewLoads:
		return b.T("a knee needs at least 2 distinct loads, have %d", nk.Loads)
	case knee.Scaling:
		return b.T("throughput kept scaling up to the highest tested load, %s", at())
	case knee.ThinData:
		return b.T("not enough data to judge: %s had %d requests over %s s; a verdict on scaling needs every load step to last %s s or more and hold %d or more",
			kneeLoadWords(b, kind, nk.Load), nk.Samples, b.loc.Num(fmt.Sprintf("%.3g", nk.Seconds)), b.loc.Num(fmt.Sprintf("%g", knee.MinSeconds)), knee.MinSamples)
	case knee.Stalled:
		stall := b.T("throughput stopped growing beyond %s but average response time did not rise", at())
		switch nk.Stall {
		case knee.StallServerTimes:
			return stall + b.W(": these times are the servers' own, so the limit is in front of them (a queue in a balancer or proxy) or in the load generator")
		case knee.StallGenerator:
			return stall + b.W(": the load generator, not the system, was probably the limit (the Little's-law check shows the asked load was not delivered)")
		}
		return stall + b.W(", and the Little's-law check shows the load was delivered: taken as noise, not a knee")
	}
	return nk.Outcome.String()
}

// USLSkipText says, in English, why no Universal Scalability Law fit is
// reported.
func USLSkipText(w knee.USLWhy) string { return uslSkipText(numbers{}, w) }

func uslSkipText(b numbers, w knee.USLWhy) string {
	params := b.loc.Num(fmt.Sprintf("σ = %s, κ = %s, R² = %s", kneeSig3(w.Sigma), kneeSig3(w.Kappa), kneeR2Text(w.R2, w.MinR2)))
	switch w.Kind {
	case knee.USLTooFewLoads:
		return b.T("a USL fit needs at least %d distinct loads, have %d", w.Need, w.Loads)
	case knee.USLNoFit:
		return b.T("the USL cannot be fitted to these %d loads", w.Loads)
	case knee.USLPoorFit:
		return b.T("the USL does not describe these data (%s; R² below %s)", params, b.loc.Num(fmt.Sprintf("%.2f", w.MinR2)))
	case knee.USLNoSaturation:
		return b.T("no saturation: throughput grew in proportion to load (%s)", params)
	case knee.USLPeakBeyond:
		return b.T("no coherency penalty found: peak beyond tested range (%s; throughput would approach ~%s req/s)", params, b.loc.Num(kneeRoughly(w.PeakThroughputRPS)))
	case knee.USLNoProbe:
		return b.W("no probe measured the system")
	case knee.USLTooFewProbes:
		return b.T("a USL fit over the probes needs at least %d distinct loads that measured the system, have %d", w.Need, w.Loads)
	case knee.USLPoorAdjFit:
		return b.T("the USL does not describe these probes well enough (R² = %s over %d loads, adjusted for its 3 parameters %s, below %s)",
			b.loc.Num(fmt.Sprintf("%.3f", w.R2)), w.Loads, b.loc.Num(fmt.Sprintf("%.3f", w.AdjR2)), b.loc.Num(fmt.Sprintf("%.2f", w.MinR2)))
	case knee.USLContradicted:
		return b.T("the fit's peak (%s req/s) is above every throughput measured around it (at most %s req/s): the probes contradict it",
			b.loc.Num(fmt.Sprintf("%.4g", w.PeakThroughputRPS)), b.loc.Num(fmt.Sprintf("%.4g", w.MaxThroughputRPS)))
	}
	return w.Kind.String()
}

// LittleText says, in English, what the Little's-law check found at a
// load of users (or a rate) where ratio of it was delivered; "" when it
// flagged nothing.
func LittleText(f knee.LittleFlag, load, ratio float64) string {
	return littleText(numbers{}, f, load, ratio)
}

func littleText(b numbers, f knee.LittleFlag, load, ratio float64) string {
	switch f {
	case knee.LittleShortRate:
		return b.T("throughput reached only %.0f%% of the asked rate: the system saturated or the generator dropped starts", 100*ratio)
	case knee.LittleShortUsers:
		return b.T("only %s of %s were busy by Little's law (%.0f%%): the generator did not deliver the load", b.loc.Num(fmt.Sprintf("%.3g", ratio*load)), kneeLoadWords(b, knee.Users, load), 100*ratio)
	case knee.LittleOver:
		return b.T("Little's law gives %s busy users for %s: think time or response time overstated, or requests issued in parallel", b.loc.Num(fmt.Sprintf("%.3g", ratio*load)), kneeLoadWords(b, knee.Users, load))
	}
	return ""
}

// capacityWords fills the capacity result's worded fields from its typed
// ones: the knee's sentence, why there is none, why there is no USL fit,
// the Little's-law notes and the capacity search's answer.
func capacityWords(b numbers, c *capacity.Result) {
	kind := knee.Users
	if c.LoadUnit == "req/s" {
		kind = knee.Rate
	}
	c.KneeReason, c.USLReason = "", ""
	if k := c.Knee; k != nil {
		k.Sentence = kneeSentence(b, knee.Knee{Kind: kind, Load: k.Load, ThroughputRPS: k.ThroughputRPS, MeanMs: k.MeanMs,
			Gain: k.Gain, MinGain: k.MinGain, MaxLoad: k.MaxLoad, MaxMeanMs: k.MaxMeanMs})
	}
	if c.NoKnee != nil {
		c.KneeReason = noKneeText(b, *c.NoKnee, kind)
	}
	if c.USLSkip != nil {
		c.USLReason = uslSkipText(b, *c.USLSkip)
	}
	for i := range c.Points {
		p := &c.Points[i]
		p.LittleNote = littleText(b, p.LittleFlag, p.Load, p.LittleRatio)
	}
	if cs := c.Search; cs != nil {
		SearchWords(cs)
	}
}

// SearchWords fills a capacity search's worded fields (its answer line and
// why there is no USL fit) from its typed ones.
func SearchWords(cs *capacity.Search) {
	cs.Sentence = SearchSentence(cs)
	if cs.USLSkip != nil {
		cs.USLReason = USLSkipText(*cs.USLSkip)
	}
}

// SearchSentence is a capacity search's console answer line (the
// report's is SearchAnswer): "capacity = 40 req/s [40 req/s, 44 req/s),
// limited by p95(response_time) < 500ms".
func SearchSentence(cs *capacity.Search) string {
	u := cs.Unit
	var s string
	switch cs.Outcome {
	case search.GeneratorLimited:
		s = "limited by the load generator at " + answerLoad(cs.At, u) + ": not a capacity of the system"
		if cs.Load > 0 {
			s += "; it held at least " + answerLoad(cs.Load, u)
		}
	case search.Collapsing:
		s = "collapsing at " + answerLoad(cs.At, u) + ": the error rate passed the guard at a load the system had handled (or at the first)"
	case search.BelowMin:
		s = "capacity below the lowest load probed"
		if cs.UpperBound > 0 {
			s += " (" + answerLoad(cs.UpperBound, u) + ", limited by " + answerLimit(cs) + ")"
		}
	case search.AboveMax:
		s = "capacity ≥ " + answerLoad(cs.Load, u) + " (--max): every probe up to it was good"
	default:
		if cs.Load == 0 {
			s = "no capacity found: no load probed was shown good"
			if cs.UpperBound > 0 {
				s += " (" + answerLoad(cs.UpperBound, u) + " was bad, limited by " + answerLimit(cs) + ")"
			}
			break
		}
		s = "capacity = " + answerLoad(cs.Load, u)
		if cs.UpperBound == 0 && cs.Outcome == search.Budget {
			// stopped before any probe was bad: a lower bound
			s = "capacity ≥ " + answerLoad(cs.Load, u)
		}
		if cs.UpperBound > 0 {
			s += " [" + answerLoad(cs.Load, u) + ", " + answerLoad(cs.UpperBound, u) + ")"
		}
		if cs.Below > 0 {
			s += ", the knee in (" + answerLoad(cs.Below, u) + ", " + answerLoad(cs.Load, u) + "]"
		}
		if cs.UpperBound > 0 || cs.LimitedBy != search.NoLimit {
			s += ", limited by " + answerLimit(cs)
		}
		if cs.Outcome == search.Budget && !cs.Interrupted {
			s += " — not to the resolution: the probe or time budget ran out"
		}
	}
	if cs.Interrupted {
		s += " (interrupted: as far as the probes before it show)"
	}
	return s
}

// answerLimit names what limited a search: the requirement that broke
// ("(marginal)" when it stayed marginal), else the limit's name.
func answerLimit(cs *capacity.Search) string {
	if cs.LimitedBy == search.RequirementBroke {
		t := cs.Requirement
		if cs.Marginal {
			t += " (marginal)"
		}
		return t
	}
	return cs.LimitedBy.String()
}

// answerLoad is a searched load with its unit, to 0.1: "40 req/s",
// "12.5 users".
func answerLoad(l float64, unit string) string {
	return strconv.FormatFloat(math.Round(l*10)/10, 'f', -1, 64) + " " + unit
}

// ---- trends: memory after GC ----

// MemoryMethodText says how the after-GC points were chosen: "after GC
// (12 collections)", "after detected collections (5 drops)", "lower
// envelope (12 windows of 30s)"; "" when none were.
func MemoryMethodText(b trend.MemoryBasis) string {
	switch b.Method {
	case trend.MethodAfterGC:
		return fmt.Sprintf("after GC (%d collections)", b.N)
	case trend.MethodDrops:
		return fmt.Sprintf("after detected collections (%d drops)", b.N)
	case trend.MethodEnvelope:
		return fmt.Sprintf("lower envelope (%d windows of %s)", b.N, time.Duration(b.WindowS*float64(time.Second)))
	}
	return ""
}

// MemoryReasonText explains a memory trend's verdict, with the slope
// (series units per hour) and its interval.
func MemoryReasonText(w trend.MemoryWhy, slope, lo, hi float64) string {
	switch w.Kind {
	case trend.MemoryTooFewPoints:
		return fmt.Sprintf("%d finite readings; need %d to judge a trend", w.Points, w.Need)
	case trend.MemoryShortSpan:
		return fmt.Sprintf("observed for %s; a leak is judged over at least %s (warm-up looks like growth in shorter runs)",
			time.Duration(w.SpanS*float64(time.Second)).Round(time.Second), time.Duration(w.MinSpanS*float64(time.Second)))
	case trend.MemoryFewBaseline:
		return fmt.Sprintf("only %d after-GC points; need %d to fit a trend", w.Points, w.Need)
	case trend.MemoryGrowing:
		return fmt.Sprintf("after-GC memory rises %.3g per hour (%.3g to %.3g at %.0f%% confidence), %.1f%% of its mean over %.1f h",
			slope, lo, hi, w.Confidence*100, w.GrowthPct, w.Hours)
	case trend.MemorySmallGrowth:
		return fmt.Sprintf("after-GC memory rises %.3g per hour, only %.1f%% of its mean over %.1f h (at most %.1f%% at %.0f%% confidence; threshold %.1f%%)",
			slope, w.GrowthPct, w.Hours, w.GrowthHighPct, w.Confidence*100, w.MinGrowthPct)
	case trend.MemoryFlat:
		return fmt.Sprintf("after-GC memory slope %.3g per hour (%.3g to %.3g at %.0f%% confidence): at most %.1f%% of its mean over %.1f h (threshold %.1f%%)",
			slope, lo, hi, w.Confidence*100, w.GrowthHighPct, w.Hours, w.MinGrowthPct)
	case trend.MemoryUndecided:
		return fmt.Sprintf("after-GC memory slope %.3g per hour (%.3g to %.3g at %.0f%% confidence) from %d after-GC points over %.1f h: between %.1f%% and %.1f%% of its mean, either side of the %.1f%% threshold",
			slope, lo, hi, w.Confidence*100, w.Points, w.Hours, w.GrowthLowPct, w.GrowthHighPct, w.MinGrowthPct)
	}
	return w.Kind.String()
}

// trendWords fills the memory trends' method and reason.
func trendWords(t *trend.Trends) {
	for i := range t.Memory {
		m := &t.Memory[i]
		r := m.Result
		m.Method = ""
		if m.Basis != nil {
			m.Method = MemoryMethodText(*m.Basis)
		}
		m.Reason = MemoryReasonText(m.Why, r.SlopePerHour, r.CILow, r.CIHigh)
	}
}

// ---- comparison ----

// ComparisonNote words what a comparison row flags: "mixed: mean −4.1%,
// p95 +12.0%; a regression in either counts"; "" when nothing.
func ComparisonNote(r compare.Row) string {
	if r.Mixed {
		return fmt.Sprintf("mixed: mean %+.1f%%, p95 %+.1f%%; a regression in either counts", r.DeltaPct, r.P95DeltaPct)
	}
	return ""
}

// VerdictPhrase is a comparison's verdict as it reads before the
// baseline's name: "faster than", "slower than", "no significant change
// from", "not enough data to judge against".
func VerdictPhrase(v compare.Verdict) string {
	switch v {
	case compare.NoChange:
		return string(v) + " from"
	case compare.NotEnough:
		return "not enough data to judge against"
	}
	return string(v) + " than"
}

// RuleOutcomeText says what a --fail-on rule saw: "p95 +13% (400 ms →
// 452 ms) breaks p95 > +10%".
func RuleOutcomeText(o compare.Outcome) string {
	verb := "within"
	if o.Failed {
		verb = "breaks"
	}
	return ruleFigures(o) + " " + verb + " " + o.Rule.String()
}

// ruleFigures is what a --fail-on rule saw, in notation: "p95 +13% (400
// ms → 452 ms)".
func ruleFigures(o compare.Outcome) string {
	r := o.Rule
	unit, levels := "ms", "%.4g ms → %.4g ms"
	switch r.Metric {
	case compare.ErrorRate:
		unit, levels = " pp", "%.3g%% → %.3g%%"
	case compare.Throughput:
		unit, levels = " req/s", "%.4g → %.4g req/s"
	}
	if r.Relative {
		unit = "%"
	}
	return fmt.Sprintf("%s %+.3g%s ("+levels+")", r.Metric, o.Observed, unit, o.Base, o.New)
}

// comparisonWords fills the comparison rows' notes.
func comparisonWords(rows []compare.Row) {
	for i := range rows {
		rows[i].Note = ComparisonNote(rows[i])
	}
}

// kneeLoadWords renders a load with its unit: "15 concurrent users", "800
// req/s offered".
func kneeLoadWords(b numbers, k knee.LoadKind, l float64) string {
	if k == knee.Rate {
		return b.T("%s req/s offered", b.loc.Num(kneeRoughlyExact(l)))
	}
	if l == 1 {
		return b.W("1 concurrent user")
	}
	return b.T("%s concurrent users", b.loc.Num(kneeRoughlyExact(l)))
}

// kneeSignedPct is a signed percentage with one decimal ("+4.7 %", "−2.0 %").
func kneeSignedPct(v float64) string {
	if math.Abs(v) < 0.05 {
		return "0 %"
	}
	if v < 0 {
		return fmt.Sprintf("−%.1f %%", -v)
	}
	return fmt.Sprintf("+%.1f %%", v)
}

// kneeTrimPct is a threshold percentage without needless decimals ("5 %").
func kneeTrimPct(v float64) string {
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) + " %"
}

// kneeSig3 prints a fitted parameter with 3 significant digits in plain
// notation ("0.000831", never "8.31e-04"); a value below 1e-6 — a
// coefficient the bounded fit pinned at zero, "5.68e-16" — is "0".
func kneeSig3(v float64) string {
	if math.Abs(v) < 1e-6 {
		return "0"
	}
	d := max(2-int(math.Floor(math.Log10(math.Abs(v)))), 0)
	return strconv.FormatFloat(v, 'f', d, 64)
}

// kneeR2Text prints R² to 3 decimals, or to as many more as it takes not
// to round a value below the threshold up to it ("R² = 0.7996; below
// 0.80", never "R² = 0.800; below 0.80").
func kneeR2Text(r2, threshold float64) string {
	for d := 3; d < 8; d++ {
		s := strconv.FormatFloat(r2, 'f', d, 64)
		if v, _ := strconv.ParseFloat(s, 64); r2 >= threshold || v < threshold {
			return s
		}
	}
	return strconv.FormatFloat(r2, 'f', -1, 64)
}

// kneeRoughlyExact prints whole numbers without decimals and others with
// up to 3 significant digits.
func kneeRoughlyExact(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e9 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.3g", v)
}

// kneeRoughly rounds to two significant digits for the "~1000 req/s" style.
func kneeRoughly(v float64) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprint(v)
	}
	mag := math.Pow(10, math.Floor(math.Log10(math.Abs(v)))-1)
	r := math.Round(v/mag) * mag
	if math.Abs(r) >= 10 {
		return fmt.Sprintf("%.0f", r)
	}
	return fmt.Sprintf("%.2g", r)
}

// kneeMs formats milliseconds: whole numbers from 10 ms up, one decimal
// below.
func kneeMs(v float64) string {
	if v >= 10 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}

// statusWord names a run's state (run.json status) in the document's
// language; a state this version does not know is shown as recorded.
func (b numbers) statusWord(st string) string {
	switch st {
	case rundir.StatusRunning:
		return b.W("running")
	case rundir.StatusCompleted:
		return b.W("completed")
	case rundir.StatusInterrupted:
		return b.W("interrupted")
	case rundir.StatusFailed:
		return b.W("failed")
	case rundir.StatusImported:
		return b.W("imported")
	}
	return st
}

// modelWord names a workload's load model (run.json workloads[].model).
func (b numbers) modelWord(m string) string {
	switch m {
	case "closed":
		return b.W("closed")
	case "open":
		return b.W("open")
	case "pacing":
		return b.W("pacing")
	case "steps":
		return b.W("steps")
	case "imported":
		return b.W("imported")
	}
	return m
}

// SubjectText words what a requirement judges (sla.Subject): "average
// response time", "99.9th percentile server-side response time net of
// downstream calls of server "lar-1"", "error rate of "login" in workload
// "read"", "pass rate of the checks".
func SubjectText(s sla.Subject, loc *locale.Locale) string { return numbers{loc}.subjectText(s) }

func (b numbers) subjectText(s sla.Subject) string {
	var q string
	switch s.Quantity {
	case sla.QResponseTime:
		q = b.W("response time")
	case sla.QServerTime:
		q = b.W("server-side response time")
	case sla.QServerTimeNet:
		q = b.W("server-side response time net of downstream calls")
	case sla.QErrorRate:
		q = b.W("error rate")
	case sla.QChecks:
		if s.Label != "" {
			return b.T("pass rate of check %s", strconv.Quote(s.Label))
		}
		return b.W("pass rate of the checks")
	default:
		q = b.W("throughput")
	}
	switch s.Stat {
	case sla.StatAverage:
		q = b.T("average %s", q)
	case sla.StatMinimum:
		q = b.T("minimum %s", q)
	case sla.StatMaximum:
		q = b.T("maximum %s", q)
	case sla.StatMedian:
		q = b.T("median %s", q)
	case sla.StatPercentile:
		q = b.T("%sth percentile %s", b.loc.Num(strconv.FormatFloat(s.Percentile, 'f', -1, 64)), q)
	}
	if s.Quantity == sla.QServerTime || s.Quantity == sla.QServerTimeNet {
		if s.Server != "" {
			q += b.T(" of server %s", strconv.Quote(s.Server))
		}
		return q
	}
	if s.Label != "" {
		q += b.T(" of %s", strconv.Quote(s.Label))
	}
	if s.Workload != "" {
		q += b.T(" in workload %s", strconv.Quote(s.Workload))
	}
	return q
}

// MeasureText words the counting unit of a resource rule's usage
// (resources.Measure): "cores", "% busy", "of memory", "% of memory", "of
// the link's speed", "connections".
func MeasureText(m resources.Measure, loc *locale.Locale) string { return numbers{loc}.measureText(m) }

func (b numbers) measureText(m resources.Measure) string {
	switch m {
	case resources.MeasureCores:
		return b.W("cores")
	case resources.MeasureBusyPct:
		return b.W("% busy")
	case resources.MeasureMemory:
		return b.W("of memory")
	case resources.MeasureMemoryPct:
		return b.W("% of memory")
	case resources.MeasureLinkSpeed:
		return b.W("of the link's speed")
	case resources.MeasureConnections:
		return b.W("connections")
	}
	return m.String()
}

// resourceWord names a resource a component uses (resources.CPU, Memory,
// Network, Connections, OldGeneration) inside a sentence: "cpu",
// "memory", "connections" in English.
func (b numbers) resourceWord(r string) string {
	switch r {
	case resources.CPU:
		return b.W("cpu")
	case resources.Memory:
		return b.W("memory")
	case resources.Network:
		return b.W("network")
	case resources.Connections:
		return b.W("connections")
	case resources.OldGeneration:
		return b.W("old generation")
	}
	return strings.ToLower(r)
}

// componentName names a component of a capacity reading: the load
// generator (resources.Generator) in the document's language, any other
// by its own name.
func (b numbers) componentName(c string) string {
	if c == resources.Generator {
		return b.W("the load generator")
	}
	return c
}

// netFaultText words what a network fault counts.
func (b numbers) netFaultText(k resources.NetFaultKind) string {
	switch k {
	case resources.NetErrors:
		return b.W("errors")
	case resources.NetDrops:
		return b.W("drops")
	}
	return k.String()
}

// worded is a note or a source's description of run.json in the
// document's language: from its message when the run recorded one
// (rundir.Info.Messages), else as recorded.
func (b numbers) worded(in *rundir.Info, text string) string {
	if b.loc.English() || in == nil {
		return text
	}
	return in.WordedNum(text, b.loc.T, b.numArg)
}

// numArg writes a number a message recorded in English the document's
// way: a whole number grouped as counts are ("3304" → "3.304" in Danish),
// any other with the language's separators.
func (b numbers) numArg(s string) string {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return b.count(n)
	}
	return b.loc.Num(s)
}

// shapeText is a workload's load line: a stepped load worded from its
// steps ("steps: 14 users for 20s, …; stop when throughput_gain < 5%",
// in the document's language), any other as run.json records it.
func (b numbers) shapeText(w rundir.WorkloadInfo) string {
	if len(w.Steps) == 0 || b.loc.English() {
		return w.Shape
	}
	var parts []string
	for _, s := range w.Steps {
		if s.Rate > 0 {
			parts = append(parts, b.T("%s/s for %s", b.loc.Num(strconv.FormatFloat(s.Rate, 'g', -1, 64)), s.Duration.String()))
		} else {
			parts = append(parts, b.T("%s users for %s", b.count(int64(s.Users)), s.Duration.String()))
		}
	}
	out := b.T("steps: %s", strings.Join(parts, ", "))
	if w.StopWhen != "" {
		out += b.T("; stop when %s", w.StopWhen)
	}
	return out
}

// runLoadText is a run's load level in a series table: compare.RunFacts'
// phrase in English ("20 users at 5/s", "20 users", "50/s"), worded from
// the numbers in another language.
func (b numbers) runLoadText(r compare.RunStats) string {
	if b.loc.English() {
		return r.Load
	}
	rate := func() string { return b.loc.Num(strconv.FormatFloat(r.Rate, 'g', -1, 64)) }
	switch {
	case r.Users == 1 && r.Rate > 0:
		return b.T("1 user at %s/s", rate())
	case r.Users > 0 && r.Rate > 0:
		return b.T("%s users at %s/s", b.count(int64(r.Users)), rate())
	case r.Users == 1:
		return b.T("1 user")
	case r.Users > 0:
		return b.T("%s users", b.count(int64(r.Users)))
	case r.Rate > 0:
		return rate() + "/s"
	}
	return r.Load
}

// verdictWord is a comparison's verdict in a table cell ("faster",
// "slower", "no significant change", "not enough data").
func (b numbers) verdictWord(v compare.Verdict) string {
	switch v {
	case compare.Faster:
		return b.W("faster")
	case compare.Slower:
		return b.W("slower")
	case compare.NoChange:
		return b.W("no significant change")
	case compare.NotEnough:
		return b.W("not enough data")
	}
	return string(v)
}

// verdictPhrase is VerdictPhrase in the document's language.
func (b numbers) verdictPhrase(v compare.Verdict) string {
	switch v {
	case compare.Faster:
		return b.W("faster than")
	case compare.Slower:
		return b.W("slower than")
	case compare.NoChange:
		return b.W("no significant change from")
	case compare.NotEnough:
		return b.W("not enough data to judge against")
	}
	return VerdictPhrase(v)
}

// ruleOutcomeText is RuleOutcomeText in the document's language: the
// figures and the rule are notation, the verb a word.
func (b numbers) ruleOutcomeText(o compare.Outcome) string {
	if b.loc.English() {
		return RuleOutcomeText(o)
	}
	verb := b.W("within")
	if o.Failed {
		verb = b.W("breaks")
	}
	return b.loc.Num(ruleFigures(o)) + " " + verb + " " + o.Rule.String()
}

// memoryWhat names the memory a trend reads (trend.What*) in the
// document's language.
func (b numbers) memoryWhat(w string) string {
	switch w {
	case trend.WhatOldGeneration:
		return b.W("old generation")
	case trend.WhatHeap:
		return b.W("heap")
	case trend.WhatRSS:
		return "RSS"
	case trend.WhatMemory:
		return b.W("memory")
	case trend.WhatMemoryUsed:
		return b.W("memory used")
	}
	return w
}

// CompareWords words a comparison's verdicts, rule outcomes and load
// levels in loc's language, for a console beside the document: English
// is what compare writes (the verdict's own word, compare.RunStats.Load).
type CompareWords struct{ n numbers }

// NewCompareWords returns the words of loc (nil is English).
func NewCompareWords(loc *locale.Locale) CompareWords { return CompareWords{numbers{loc}} }

// Verdict is a comparison's verdict in a table cell.
func (c CompareWords) Verdict(v compare.Verdict) string {
	if c.n.loc.English() {
		return string(v)
	}
	return c.n.verdictWord(v)
}

// RuleOutcome is a --fail-on rule's outcome.
func (c CompareWords) RuleOutcome(o compare.Outcome) string { return c.n.ruleOutcomeText(o) }

// Load is a run's load level in a series.
func (c CompareWords) Load(r compare.RunStats) string { return c.n.runLoadText(r) }

// RunNaming words the parts of a derived run name that are words (its
// load level, the ordinal of a run whose name still collides) in loc's
// language: compare.NamesWith's words for a document or a study.
func RunNaming(loc *locale.Locale) compare.Naming {
	if loc.English() {
		return compare.Naming{}
	}
	n := numbers{loc}
	return compare.Naming{
		Load: func(f compare.RunFacts) string {
			return n.runLoadText(compare.RunStats{Load: f.Load(), Users: f.Users, Rate: f.Rate})
		},
		Nth: func(i int) string { return n.T("run %d", i) },
	}
}

// ResourceWord names a resource a component uses (resources.CPU, Memory,
// …) inside a sentence in loc's language: "cpu", "memory" in English.
func ResourceWord(loc *locale.Locale, r string) string { return numbers{loc}.resourceWord(r) }

// ComponentName names a component of a capacity reading in loc's
// language: the load generator (resources.Generator) worded, any other by
// its own name.
func ComponentName(loc *locale.Locale, c string) string { return numbers{loc}.componentName(c) }
