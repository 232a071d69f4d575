package analysis

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Test statuses (Summary.Verdict). Exactly one applies to a run; the CLI
// maps each to an exit code (docs/summary.md lists them).
const (
	VerdictPassed         = "passed"          // every requirement held and the load was applied as planned
	VerdictFailed         = "failed"          // a requirement was broken
	VerdictNoRequirements = "no requirements" // the plan states no SLA: nothing judged
	VerdictInvalid        = "invalid"         // the planned load was not applied (see Validity)
	VerdictInterrupted    = "interrupted"     // stopped by a signal, killed, or unfinished
	VerdictNotRun         = "could not run"   // no request succeeded
)

// Validity thresholds.
const (
	// MaxDroppedPct is the share of scheduled iterations an open-model
	// phase may drop before its load counts as not held.
	MaxDroppedPct = 1.0
	// MaxGeneratorCPUPct is the generator's own CPU use (percent of its
	// cores, during a phase) from which its measurements are suspect.
	MaxGeneratorCPUPct = 90.0

	// MaxRunQueuePct is the share of its runnable time the generator's
	// threads may wait on a run queue (other processes holding its CPUs)
	// before it counts as starved: its response times then include that
	// wait.
	MaxRunQueuePct = 20.0
	// MinRunQueueMsPerS is the least run-queue wait, in ms per second of
	// the phase summed over threads, that starvation needs (a short wait
	// on an idle generator is a large share of almost nothing).
	MinRunQueueMsPerS = 20.0
)

// ReasonKind is what a validity finding is about: later stages branch on
// it, never on the sentence.
type ReasonKind string

const (
	ReasonDropped      ReasonKind = "dropped"           // open model: iterations dropped
	ReasonMissedSlots  ReasonKind = "missed_slots"      // pacing: slots not started by the phase's end
	ReasonGeneratorCPU ReasonKind = "generator_cpu"     // the generator used most of its CPU
	ReasonStarved      ReasonKind = "generator_starved" // the generator waited for a CPU held by others
)

// Finding is one validity finding: its kind, the phase, the sentence, and
// whether it makes the run invalid (Reasons lists those sentences) or is
// a warning beside a valid verdict.
type Finding struct {
	Kind        ReasonKind `json:"kind"`
	Phase       string     `json:"phase,omitempty"`
	Text        string     `json:"text"`
	Invalidates bool       `json:"invalidates"`
}

// Validity says whether the run applied the load its plan asked for, with
// the figures that decide it. It is summary.json's "validity".
type Validity struct {
	Verdict  string          `json:"verdict"` // "valid" or "invalid"
	Reasons  []string        `json:"reasons"` // why invalid, one sentence each
	Findings []Finding       `json:"findings,omitempty"`
	Dropped  int64           `json:"dropped_iterations"`
	Phases   []PhaseValidity `json:"phases"`
}

// Warnings are the findings that do not make the run invalid.
func (v *Validity) Warnings() []Finding {
	var out []Finding
	for _, f := range v.Findings {
		if !f.Invalidates {
			out = append(out, f)
		}
	}
	return out
}

// PhaseValidity is one phase's planned against achieved load.
type PhaseValidity struct {
	Phase    string `json:"phase"`
	Workload string `json:"workload,omitempty"`
	Model    string `json:"model"` // "open" (arrival rate), "pacing" (users × pace) or "closed" (users)
	// Open model: iterations per second planned and started, over the
	// phase's planned span; Planned = Started + Dropped.
	PlannedRate  float64 `json:"planned_rate_per_s,omitempty"`
	AchievedRate float64 `json:"achieved_rate_per_s,omitempty"`
	Planned      int64   `json:"planned_iterations,omitempty"`
	Started      int64   `json:"started_iterations,omitempty"`
	Dropped      int64   `json:"dropped_iterations"`
	// MaxUsers is the cap on concurrent users (open model); PeakUsers the
	// most users active in any second of the phase.
	MaxUsers  int `json:"max_users,omitempty"`
	PeakUsers int `json:"peak_users"`
	// DroppedLate is how many of the dropped iterations the generator's
	// own lateness accounts for (it was behind its schedule by more than
	// the queue holds when it dropped them; at most LateMaxMs).
	DroppedLate int64   `json:"dropped_late_iterations,omitempty"`
	LateMaxMs   float64 `json:"generator_late_max_ms,omitempty"`
	// Requests per second and mean times: ResponseMs from the intended
	// start (coordinated-omission-correct, the headline), ServiceMs from the
	// actual send (what the server cost).
	RequestsPerS float64 `json:"requests_per_s"`
	ResponseMs   float64 `json:"mean_response_ms"`
	ServiceMs    float64 `json:"mean_service_ms"` // 0: unknown (imports)
	// InFlight is Little's law: requests per second × mean service time
	// (response time when the service time is unknown, 0 in imports), the
	// average number of requests in flight, to set against the users
	// available (MaxUsers or PeakUsers).
	InFlight float64 `json:"littles_law_in_flight"`
	// CPUPct is the generator's own CPU during the phase (percent of its
	// cores); CPUBySegment per generator in a merged run.
	CPUPct       float64            `json:"generator_cpu_pct,omitempty"`
	CPUBySegment map[string]float64 `json:"generator_cpu_pct_by_segment,omitempty"`
	// RunQueueMs is the generator's threads' wait on a run queue during
	// the phase (summed), RunQueuePct its share of their runnable time;
	// Starved when that share reached MaxRunQueuePct.
	RunQueueMs  float64 `json:"generator_run_queue_wait_ms,omitempty"`
	RunQueuePct float64 `json:"generator_run_queue_wait_pct,omitempty"`
	Starved     bool    `json:"generator_starved,omitempty"`
	// Held is false when an invalidating reason applies, and when no
	// request of the phase succeeded (NoSuccess): no load reached the
	// service, so none was held.
	Held      bool     `json:"held"`
	NoSuccess bool     `json:"no_success,omitempty"`
	Reasons   []string `json:"reasons,omitempty"`
	// Kinds are the kinds of Reasons, in the same order.
	Kinds []ReasonKind `json:"reason_kinds,omitempty"`
}

// add notes a finding of phase pv: an invalidating one among its reasons.
func (v *Validity) add(pv *PhaseValidity, kind ReasonKind, text string, invalidates bool) {
	v.Findings = append(v.Findings, Finding{Kind: kind, Phase: pv.Phase, Text: text, Invalidates: invalidates})
	if invalidates {
		pv.Reasons = append(pv.Reasons, text)
		pv.Kinds = append(pv.Kinds, kind)
	}
}

// JudgeValidity compares each phase's planned load with what the run applied.
func (d *Dataset) JudgeValidity() *Validity {
	v := &Validity{Verdict: "valid", Reasons: []string{}, Phases: []PhaseValidity{}}
	for _, n := range d.Dropped {
		v.Dropped += n
	}
	var info []rundir.PhaseInfo
	if d.Info != nil {
		info = d.Info.Phases
	}
	for i, p := range d.Phases {
		pv := PhaseValidity{Phase: p.Name, Workload: p.Workload, Model: "closed", Held: true}
		var pi rundir.PhaseInfo
		if i < len(info) {
			pi = info[i]
		}
		// Rates are over the schedule's span (not the graceful wait after
		// it, nor a late generator's shorter share of it); a phase stopped
		// early had only the part it ran.
		span := p.Duration().Seconds()
		if pi.PlannedS > 0 && (span <= 0 || pi.PlannedS < span || p.Stopped == "") {
			span = pi.PlannedS
		}
		if t := d.PhaseTotal[i]; t != nil && t.Count > 0 {
			if s := p.Duration().Seconds(); s > 0 {
				pv.RequestsPerS = round3(float64(t.Count) / s)
			}
			pv.ResponseMs = round3(t.MeanMs())
			pv.ServiceMs = round3(float64(t.SumServiceUs) / float64(t.Count) / 1000)
			w := pv.ServiceMs
			if w == 0 {
				w = pv.ResponseMs // service time unknown (an import)
			}
			pv.InFlight = round3(pv.RequestsPerS * w / 1000)
		}
		pv.PeakUsers = d.peakUsers(p)
		pv.CPUPct, pv.CPUBySegment = pi.CPUPct, pi.CPUBySegment
		pv.RunQueueMs, pv.RunQueuePct = pi.RunQueueMs, pi.RunQueuePct
		if s := p.Duration().Seconds(); s > 0 && pv.RunQueuePct >= MaxRunQueuePct && pv.RunQueueMs/s >= MinRunQueueMsPerS {
			pv.Starved = true
		}
		if pi.Planned > 0 || p.Rate > 0 {
			pv.Model = "open"
			if pi.Paced {
				pv.Model = "pacing"
			}
			pv.Planned, pv.Started, pv.MaxUsers = pi.Planned, pi.Started, pi.MaxUsers
			pv.Dropped = max(pi.Planned-pi.Started, 0)
			pv.DroppedLate, pv.LateMaxMs = min(pi.DroppedLate, pv.Dropped), pi.LateMaxMs
			if span > 0 && pi.Planned > 0 {
				pv.PlannedRate = round3(float64(pi.Planned) / span)
				pv.AchievedRate = round3(float64(pi.Started) / span)
			} else {
				pv.PlannedRate = p.Rate
			}
			if pi.Planned > 0 && 100*float64(pv.Dropped)/float64(pi.Planned) > MaxDroppedPct {
				if pi.Paced {
					v.add(&pv, ReasonMissedSlots, pv.missedReason(d.phaseLabel(p)), true)
				} else {
					v.add(&pv, ReasonDropped, pv.droppedReason(d.phaseLabel(p)), true)
				}
			}
		}
		cpu := pv.CPUBySegment
		if len(cpu) == 0 && pv.CPUPct > 0 {
			cpu = map[string]float64{"": pv.CPUPct}
		}
		for _, seg := range sortedKeys(cpu) {
			if pct := cpu[seg]; pct >= MaxGeneratorCPUPct {
				who := "the generator"
				if seg != "" {
					who = "generator " + seg
				}
				v.add(&pv, ReasonGeneratorCPU, fmt.Sprintf("%s%s used %.0f%% of its CPU: it may have limited the load and added to the response times",
					who, d.inPhase(p), pct), true)
			}
		}
		if pv.Starved {
			// A warning, not a reason for invalid: the load may still
			// have been applied, and a loaded CI machine would otherwise
			// fail every run; the response times are stated as suspect.
			v.add(&pv, ReasonStarved, fmt.Sprintf("the generator%s was starved of CPU: its threads waited %s%% of their runnable time for a CPU held by other processes (%s ms in all), so its response times include its own waiting",
				d.inPhase(p), fmtNum(pv.RunQueuePct), thousands(int64(math.Round(pv.RunQueueMs)))), false)
		}
		if len(pv.Reasons) > 0 {
			pv.Held = false
			v.Reasons = append(v.Reasons, pv.Reasons...)
		}
		if t := d.PhaseTotal[i]; t == nil || t.Count == 0 || t.Errors >= t.Count {
			pv.Held, pv.NoSuccess = false, true
		}
		v.Phases = append(v.Phases, pv)
	}
	if len(v.Reasons) > 0 {
		v.Verdict = "invalid"
	}
	return v
}

// droppedReason is the sentence for an open-model phase that did not hold
// its rate: "planned 5,000/s, achieved 190/s: the 10 users allowed were all
// busy; 24,000 iterations dropped". A drop is the generator's own
// (DroppedLate) when the loop handing out iterations was already behind its
// schedule by more than the queue holds; the others came while every
// allowed user was busy. Each cause is named with its count when both
// occurred; max_users is blamed only for the drops it caused, and only when
// the users were at the cap.
func (pv *PhaseValidity) droppedReason(where string) string {
	late, busy := pv.DroppedLate, pv.Dropped-pv.DroppedLate
	atCap := pv.MaxUsers > 0 && pv.PeakUsers >= pv.MaxUsers
	var why string
	behind := func() string {
		w := fmt.Sprintf("the generator itself fell behind its schedule, by up to %s ms, so iterations came due together faster than the %s allowed (max_users) could take them",
			fmtNum(pv.LateMaxMs), usersAllowed(pv.MaxUsers))
		switch {
		case pv.Starved:
			w += fmt.Sprintf(" (it was starved of CPU: its threads waited %s%% of their runnable time for a CPU held by other processes)", fmtNum(pv.RunQueuePct))
		case pv.CPUPct >= MaxGeneratorCPUPct:
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
	switch {
	case late > 0 && busy > 0 && atCap && 10*late >= pv.Dropped && 10*busy >= pv.Dropped:
		// Both causes, each at least a tenth of the drops.
		why = fmt.Sprintf("%s for %s of them, and %s for the other %s", behind(), thousands(late), users(), thousands(busy))
	case late > 0 && 2*late >= pv.Dropped:
		why = behind()
	case atCap:
		why = users()
	case late > 0:
		why = behind()
	case pv.CPUPct >= MaxGeneratorCPUPct:
		why = "the generator was short of CPU"
	case pv.Starved:
		why = "the generator was starved of CPU by other processes"
	default:
		why = "iterations could not start on time"
	}
	return fmt.Sprintf("%splanned %s/s, achieved %s/s: %s; %s of %s iterations dropped", where,
		fmtNum(pv.PlannedRate), fmtNum(pv.AchievedRate), why, thousands(pv.Dropped), thousands(pv.Planned))
}

// missedReason is the sentence for a pacing phase whose users did not start
// all their slots by its end: each user runs the slots it missed after an
// overrun, one after the other and timed from its slot, so the missed ones
// are those it had not caught up by the end.
func (pv *PhaseValidity) missedReason(where string) string {
	why := "the users overran their pace and had not caught up by the end"
	if pv.Starved {
		why += fmt.Sprintf(" (the generator was starved of CPU: its threads waited %s%% of their runnable time for a CPU)", fmtNum(pv.RunQueuePct))
	}
	return fmt.Sprintf("%splanned %s/s (users × pace), achieved %s/s: %s; %s of %s paced iterations missed", where,
		fmtNum(pv.PlannedRate), fmtNum(pv.AchievedRate), why, thousands(pv.Dropped), thousands(pv.Planned))
}

// usersAllowed is "10 users" or "one user".
func usersAllowed(n int) string {
	if n == 1 {
		return "one user"
	}
	return thousands(int64(n)) + " users"
}

// phaseLabel prefixes a sentence with the phase when the run has several.
func (d *Dataset) phaseLabel(p core.Phase) string {
	if len(d.Phases) <= 1 {
		return ""
	}
	return p.Name + ": "
}

func (d *Dataset) inPhase(p core.Phase) string {
	if len(d.Phases) <= 1 {
		return ""
	}
	return " in " + p.Name
}

// peakUsers is the most users of p's workload active in a second of p.
func (d *Dataset) peakUsers(p core.Phase) int {
	peak := 0
	for _, u := range d.Users {
		// A users tick is stamped with the start of its second and counts
		// the users at its end.
		t := u.T.Add(1e9)
		if t.Before(p.Start) || t.After(p.End.Add(1e9)) {
			continue
		}
		// Counted after the next phase of the workload began: that
		// phase's users (core.PhaseOf), not this one's.
		if i := core.PhaseOf(d.Phases, p.Workload, t); i >= 0 && d.Phases[i].Name != p.Name {
			continue
		}
		n := u.Total
		if p.Workload != "" {
			n = u.Users[p.Workload]
		}
		peak = max(peak, n)
	}
	return peak
}

// judgeVerdict sets the test status from the run status, the requirements,
// the validity and whether any request succeeded. Precedence: interrupted
// (by a signal), could not run, unfinished, failed, invalid, then passed or no requirements. A broken
// requirement outranks an invalid load: a service that fails its SLA at less
// than the planned load fails it at the full load too.
func (s *Summary) judgeVerdict(total int64, errors int64, abortedBy, target string) {
	s.VerdictReasons = []string{}
	failed := 0
	for _, r := range s.SLA {
		if !r.Passed {
			failed++
		}
	}
	switch {
	case s.Status == rundir.StatusInterrupted:
		s.Verdict = VerdictInterrupted
		s.VerdictReasons = append(s.VerdictReasons, "the run was interrupted; the results cover only the time it ran")
	case total == 0 || errors >= total:
		s.Verdict = VerdictNotRun
		for i := range s.Prepare {
			if r := &s.Prepare[i]; r.Status != rundir.CommandOK && r.Status != rundir.CommandSkipped {
				s.VerdictReasons = append(s.VerdictReasons, fmt.Sprintf("prepare command %q %s", r.Name, r.Describe()))
			}
		}
		s.VerdictReasons = append(s.VerdictReasons, s.noSuccessReason(total, target))
	case s.Status == rundir.StatusRunning || s.Status == rundir.StatusFailed:
		s.Verdict = VerdictInterrupted
		why := "the run was interrupted"
		switch s.Status {
		case rundir.StatusRunning:
			why = "the run did not finish (killed, or still running)"
		case rundir.StatusFailed:
			why = "the run failed before its end"
		}
		s.VerdictReasons = append(s.VerdictReasons, why+"; the results cover only the time it ran")
	case abortedBy != "":
		s.Verdict = VerdictFailed
		s.VerdictReasons = append(s.VerdictReasons, "stopped early by "+abortedBy)
	case failed > 0:
		s.Verdict = VerdictFailed
		for _, r := range s.SLA {
			if !r.Passed {
				s.VerdictReasons = append(s.VerdictReasons, "requirement broken: "+r.Expr)
			}
		}
	case s.Validity != nil && s.Validity.Verdict == "invalid":
		s.Verdict = VerdictInvalid
		s.VerdictReasons = append(s.VerdictReasons, s.Validity.Reasons...)
	case len(s.SLA) == 0:
		s.Verdict = VerdictNoRequirements
	default:
		s.Verdict = VerdictPassed
	}
	if s.Verdict != VerdictInvalid && s.Validity != nil && s.Validity.Verdict == "invalid" && s.Verdict != VerdictNotRun {
		// Still said, after the reason for the status.
		s.VerdictReasons = append(s.VerdictReasons, s.Validity.Reasons...)
	}
}

// noSuccessReason says why no request succeeded, naming the most frequent
// failure ("refused: dial tcp 127.0.0.1:9: …") and the plan's target, which
// stays in the sentence when messages have their addresses normalised.
func (s *Summary) noSuccessReason(total int64, target string) string {
	at := ""
	if target != "" {
		at = " (target " + target + ")"
	}
	if total == 0 {
		return "no request was sent" + at
	}
	var top *ErrorDetail
	for i := range s.Errors.Details {
		if e := &s.Errors.Details[i]; top == nil || e.Count > top.Count {
			top = e
		}
	}
	msg := fmt.Sprintf("none of the %s requests succeeded", thousands(total))
	if top != nil {
		what := top.Class
		if top.Message != "" {
			what += ": " + top.Message
		}
		msg += "; most frequent failure: " + what
	}
	return msg + at
}

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

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

func thousands(n int64) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
