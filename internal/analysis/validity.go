package analysis

import (
	"math"
	"sort"

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
//
// The finding carries its numbers, not its words: Text is filled by the
// report (report.Words) from Kind, the phase's PhaseValidity, Segment and
// Cause.
type Finding struct {
	Kind  ReasonKind `json:"kind"`
	Phase string     `json:"phase,omitempty"`
	// PhaseIndex is the phase's index in Validity.Phases.
	PhaseIndex int `json:"-"`
	// Segment names the generator of a merged run (ReasonGeneratorCPU);
	// CPUPct is its CPU share.
	Segment string  `json:"segment,omitempty"`
	CPUPct  float64 `json:"cpu_pct,omitempty"`
	// Cause is why iterations were dropped (ReasonDropped).
	Cause       DropCause `json:"cause,omitempty"`
	Text        string    `json:"text"`
	Invalidates bool      `json:"invalidates"`
}

// DropCause is why an open-model phase dropped iterations: the judgement
// droppedCause makes, which the report words.
type DropCause string

// Drop causes.
const (
	DropBoth      DropCause = "behind_and_users" // both, each at least a tenth of the drops
	DropBehind    DropCause = "behind"           // the generator fell behind its schedule
	DropUsers     DropCause = "users_busy"       // every allowed user was busy
	DropShortCPU  DropCause = "short_of_cpu"
	DropStarved   DropCause = "starved"
	DropNotOnTime DropCause = "not_on_time"
)

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

// add notes a finding of phase pv (index i): an invalidating one among its
// reasons (worded later, by the report).
func (v *Validity) add(pv *PhaseValidity, i int, f Finding) {
	f.Phase, f.PhaseIndex = pv.Phase, i
	v.Findings = append(v.Findings, f)
	if f.Invalidates {
		pv.Kinds = append(pv.Kinds, f.Kind)
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
					v.add(&pv, i, Finding{Kind: ReasonMissedSlots, Invalidates: true})
				} else {
					v.add(&pv, i, Finding{Kind: ReasonDropped, Cause: pv.droppedCause(), Invalidates: true})
				}
			}
		}
		cpu := pv.CPUBySegment
		if len(cpu) == 0 && pv.CPUPct > 0 {
			cpu = map[string]float64{"": pv.CPUPct}
		}
		for _, seg := range sortedKeys(cpu) {
			if pct := cpu[seg]; pct >= MaxGeneratorCPUPct {
				v.add(&pv, i, Finding{Kind: ReasonGeneratorCPU, Segment: seg, CPUPct: pct, Invalidates: true})
			}
		}
		if pv.Starved {
			// A warning, not a reason for invalid: the load may still
			// have been applied, and a loaded CI machine would otherwise
			// fail every run; the response times are stated as suspect.
			v.add(&pv, i, Finding{Kind: ReasonStarved})
		}
		if len(pv.Kinds) > 0 {
			pv.Held = false
		}
		if t := d.PhaseTotal[i]; t == nil || t.Count == 0 || t.Errors >= t.Count {
			pv.Held, pv.NoSuccess = false, true
		}
		v.Phases = append(v.Phases, pv)
	}
	for _, f := range v.Findings {
		if f.Invalidates {
			v.Verdict = "invalid"
		}
	}
	return v
}

// droppedCause judges why an open-model phase dropped iterations. A drop is
// the generator's own (DroppedLate) when the loop handing out iterations
// was already behind its schedule by more than the queue holds; the others
// came while every allowed user was busy. Both causes are named when each
// is at least a tenth of the drops; max_users is blamed only for the drops
// it caused, and only when the users were at the cap.
func (pv *PhaseValidity) droppedCause() DropCause {
	late, busy := pv.DroppedLate, pv.Dropped-pv.DroppedLate
	atCap := pv.MaxUsers > 0 && pv.PeakUsers >= pv.MaxUsers
	switch {
	case late > 0 && busy > 0 && atCap && 10*late >= pv.Dropped && 10*busy >= pv.Dropped:
		return DropBoth
	case late > 0 && 2*late >= pv.Dropped:
		return DropBehind
	case atCap:
		return DropUsers
	case late > 0:
		return DropBehind
	case pv.CPUPct >= MaxGeneratorCPUPct:
		return DropShortCPU
	case pv.Starved:
		return DropStarved
	}
	return DropNotOnTime
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

// WhyKind is what one reason for the test status is about.
type WhyKind string

// Kinds of the reasons for a test status.
const (
	WhyInterrupted       WhyKind = "interrupted"        // stopped by a signal
	WhyDidNotFinish      WhyKind = "did_not_finish"     // killed, or still running
	WhyFailedMidRun      WhyKind = "failed_mid_run"     // the run failed before its end
	WhyPrepareFailed     WhyKind = "prepare_failed"     // a prepare command failed (Command)
	WhyNothingSent       WhyKind = "nothing_sent"       // no request was sent
	WhyNoneSucceeded     WhyKind = "none_succeeded"     // Requests sent, none succeeded; Top the most frequent failure
	WhyStoppedEarly      WhyKind = "stopped_early"      // an abort rule stopped the run (Rule)
	WhyRequirementBroken WhyKind = "requirement_broken" // SLA[SLA] broke
	WhyLoadNotHeld       WhyKind = "load_not_held"      // Validity.Findings[Finding] invalidates the run
)

// Why is one reason for the test status: its kind and the facts it rests
// on, never its words (the report words it into verdict_reasons).
type Why struct {
	Kind WhyKind `json:"kind"`
	// Subject names what the reason is about, for a reader of
	// summary.json: the prepare command's name, the broken requirement's
	// expression, or the phase of the validity finding.
	Subject string `json:"subject,omitempty"`
	// Command is the prepare command's index in Prepare.
	Command int `json:"-"`
	// Requests is how many requests were sent; Top the most frequent
	// failure among them (nil when none was recorded); Target the plan's.
	Requests int64        `json:"requests,omitempty"`
	Top      *ErrorDetail `json:"-"`
	Target   string       `json:"target,omitempty"`
	// Rule is the abort rule that stopped the run.
	Rule string `json:"rule,omitempty"`
	// SLA is the broken requirement's index in SLA.
	SLA int `json:"-"`
	// Finding is the validity finding's index in Validity.Findings.
	Finding int `json:"-"`
}

// judgeVerdict sets the test status from the run status, the requirements,
// the validity and whether any request succeeded. Precedence: interrupted
// (by a signal), could not run, unfinished, failed, invalid, then passed or no requirements. A broken
// requirement outranks an invalid load: a service that fails its SLA at less
// than the planned load fails it at the full load too.
func (s *Summary) judgeVerdict(total int64, errors int64, abortedBy, target string) {
	s.VerdictReasons = []string{}
	s.Why = []Why{}
	failed := 0
	for _, r := range s.SLA {
		if !r.Passed {
			failed++
		}
	}
	invalid := s.Validity != nil && s.Validity.Verdict == "invalid"
	notHeld := func() {
		for i, f := range s.Validity.Findings {
			if f.Invalidates {
				s.Why = append(s.Why, Why{Kind: WhyLoadNotHeld, Finding: i, Subject: f.Phase})
			}
		}
	}
	switch {
	case s.Status == rundir.StatusInterrupted:
		s.Verdict = VerdictInterrupted
		s.Why = append(s.Why, Why{Kind: WhyInterrupted})
	case total == 0 || errors >= total:
		s.Verdict = VerdictNotRun
		for i := range s.Prepare {
			if r := &s.Prepare[i]; r.Status != rundir.CommandOK && r.Status != rundir.CommandSkipped {
				s.Why = append(s.Why, Why{Kind: WhyPrepareFailed, Command: i, Subject: r.Name})
			}
		}
		if total == 0 {
			s.Why = append(s.Why, Why{Kind: WhyNothingSent, Target: target})
		} else {
			w := Why{Kind: WhyNoneSucceeded, Requests: total, Target: target}
			for i := range s.Errors.Details {
				if e := &s.Errors.Details[i]; w.Top == nil || e.Count > w.Top.Count {
					w.Top = e
				}
			}
			s.Why = append(s.Why, w)
		}
	case s.Status == rundir.StatusRunning:
		s.Verdict = VerdictInterrupted
		s.Why = append(s.Why, Why{Kind: WhyDidNotFinish})
	case s.Status == rundir.StatusFailed:
		s.Verdict = VerdictInterrupted
		s.Why = append(s.Why, Why{Kind: WhyFailedMidRun})
	case abortedBy != "":
		s.Verdict = VerdictFailed
		s.Why = append(s.Why, Why{Kind: WhyStoppedEarly, Rule: abortedBy})
	case failed > 0:
		s.Verdict = VerdictFailed
		for i, r := range s.SLA {
			if !r.Passed {
				s.Why = append(s.Why, Why{Kind: WhyRequirementBroken, SLA: i, Subject: r.Expr})
			}
		}
	case invalid:
		s.Verdict = VerdictInvalid
		notHeld()
	case len(s.SLA) == 0:
		s.Verdict = VerdictNoRequirements
	default:
		s.Verdict = VerdictPassed
	}
	if s.Verdict != VerdictInvalid && invalid && s.Verdict != VerdictNotRun {
		// Still said, after the reason for the status.
		notHeld()
	}
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
