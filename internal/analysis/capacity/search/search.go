// Package search decides, probe by probe, how to find a system's capacity:
// the highest load at which every requirement holds and the planned load
// is applied. It is the decision logic of `plateau capacity` (issue 34)
// and nothing else: a pure function from the search's settings and the
// probes run so far to the next decision — probe this load for this long,
// repeat a probe whose verdict was marginal, or stop with an answer. It
// runs nothing, reads no clock and keeps no state; the caller runs each
// probe and appends its result.
//
// The search probes upward geometrically from Settings.Start until a probe
// is bad (a requirement breaks, the planned load is not held, throughput
// falls behind the arrival rate or stops growing), then bisects between
// the highest good and the lowest bad load to the resolution. A probe
// whose load generator saturated is not evidence about the system, so the
// answer is then "limited by the load generator", not a capacity. An
// error rate above the guard makes a probe bad, and stops the search
// ("collapsing") when the system fails it at a load it had handled. The
// method is described in docs/analysis-methods.md §6.
package search

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Model is the load model searched over.
type Model int

// Models.
const (
	// Open searches the arrival rate, in requests per second.
	Open Model = iota + 1
	// Closed searches the number of concurrent users; loads are whole
	// users.
	Closed
)

// Unit is the unit of a Load in this model: "req/s" or "users".
func (m Model) Unit() string {
	switch m {
	case Open:
		return "req/s"
	case Closed:
		return "users"
	}
	return "?"
}

// Load is an offered load: requests per second in the Open model,
// concurrent users in the Closed model (Model.Unit).
type Load float64

// Better says on which side of its limit a requirement holds.
type Better int

// Directions.
const (
	Lower  Better = iota + 1 // holds at or below the limit (a response time, an error %)
	Higher                   // holds at or above the limit (a throughput, an Apdex)
)

// Requirement is one requirement as a probe measured it. Value, Low, High
// and Limit are in the requirement's own unit (ms, %, req/s …), the same
// for all four.
type Requirement struct {
	Name  string // as the plan states it, e.g. "p95(checkout) < 500ms"
	Limit float64
	// Value is the statistic; [Low, High] its confidence interval. A
	// statistic without one has Low = High = Value (and is never
	// marginal).
	Value, Low, High float64
	Better           Better
}

// Verdict is a requirement's or a probe's judgement.
type Verdict int

// Verdicts.
const (
	Holds    Verdict = iota + 1 // the whole interval is on the good side of the limit
	Breaks                      // the whole interval is on the bad side
	Marginal                    // the interval straddles the limit: repeat to narrow it
)

func (v Verdict) String() string {
	switch v {
	case Holds:
		return "holds"
	case Breaks:
		return "breaks"
	case Marginal:
		return "marginal"
	}
	return "?"
}

// Judge compares the requirement's interval with its limit.
func (r Requirement) Judge() Verdict {
	switch r.Better {
	case Lower:
		if r.High <= r.Limit {
			return Holds
		}
		if r.Low > r.Limit {
			return Breaks
		}
	case Higher:
		if r.Low >= r.Limit {
			return Holds
		}
		if r.High < r.Limit {
			return Breaks
		}
	}
	return Marginal
}

// Probe is the result of one probe, as the caller measured it.
type Probe struct {
	// Load is the load the probe was asked to apply (Decision.Load).
	Load Load
	// Throughput is the completed requests per second over the measured
	// part (warm-up excluded).
	Throughput float64
	// Requirements are every requirement of the plan, judged over the
	// measured part.
	Requirements []Requirement
	// ErrorPct is the percentage of failed requests, in [0, 100].
	ErrorPct float64
	// GeneratorSaturated says the load generator ran out of capacity
	// (CPU, connections, users) during the probe.
	GeneratorSaturated bool
	// Held says the planned load was applied: the arrivals started on
	// schedule (open) or every user ran (closed).
	Held bool
	// Duration is how long the measured part lasted; Elapsed is the
	// probe's whole cost against the time budget (warm-up, measured part
	// and cool-down).
	Duration, Elapsed time.Duration
}

// Settings configure a search. Zero fields take the defaults named.
type Settings struct {
	Model Model
	// Start is the first load probed (> 0). Max is the highest load the
	// search may probe (≥ Start).
	Start, Max Load
	// Growth is the factor between upward probes (> 1, default 2).
	Growth float64
	// The search stops bisecting when the lowest bad load is within the
	// resolution of the highest good one: ResolutionPct percent of it, or
	// ResolutionAbs in the load's unit. Set exactly one; the default is
	// 5 %. In the closed model one user is the finest resolution.
	ResolutionPct float64
	ResolutionAbs Load
	// MinLoad is the lowest load probed when even Start is bad (default
	// Start/Growth⁴, and at least one user in the closed model).
	MinLoad Load
	// MaxProbes bounds the number of probes, repeats included (default
	// 20). MaxTime bounds their total Elapsed (0: no bound).
	MaxProbes int
	MaxTime   time.Duration
	// Warmup is excluded from each probe's figures; Duration is the
	// shortest measured part of a probe (default 30 s); Cooldown is the
	// pause after each probe.
	Warmup, Duration, Cooldown time.Duration
	// MinSamples is how many completed requests a probe needs for its
	// requirements' statistics to be judged (a p99 needs ten times more
	// than a p90 for the same tail): the measured part is lengthened to
	// MinSamples at the expected throughput. 0: Duration alone.
	MinSamples int
	// MaxErrorPct is the error-rate guard, in percent (default 20): a
	// probe with more errors is bad, the search never probes that load
	// again or above it, and it stops ("collapsing") when the guard trips
	// at the first load or at a load the system had handled before.
	MaxErrorPct float64
	// Closed model: throughput has stopped growing once two probes at
	// least MinStepPct percent (default 20) apart in load differ by less
	// than MinGainPct percent (default 5) in throughput — the knee
	// package's rule; the step keeps throughput noise from being judged
	// over a small load change. The plateau is then the highest
	// throughput seen; the knee is the lowest load whose throughput is
	// within PlateauTolPct percent (default 1) of it. Loads above the
	// knee are bad, and the search narrows the knee to the resolution
	// from below.
	MinGainPct, MinStepPct, PlateauTolPct float64
	// MaxShortfallPct (open model, default 5): a probe whose throughput is
	// more than this percentage below its arrival rate is bad, since the
	// system fell behind the arrivals and requests queued.
	MaxShortfallPct float64
	// MaxRepeats is how often a marginal probe is repeated, each time
	// twice as long, before it counts as bad (default 1; negative: never
	// repeat).
	MaxRepeats int
}

// Defaults.
const (
	DefaultGrowth        = 2.0
	DefaultResolutionPct = 5.0
	DefaultMaxProbes     = 20
	DefaultDuration      = 30 * time.Second
	DefaultMaxErrorPct   = 20.0
	DefaultMinGainPct    = 5.0
	DefaultPlateauTolPct = 1.0
	DefaultMinStepPct    = 20.0
	DefaultMaxShortfall  = 5.0
	DefaultMaxRepeats    = 1
)

func (s Settings) withDefaults() Settings {
	if s.Growth == 0 {
		s.Growth = DefaultGrowth
	}
	if s.ResolutionPct == 0 && s.ResolutionAbs == 0 {
		s.ResolutionPct = DefaultResolutionPct
	}
	if s.MinLoad == 0 && s.Start > 0 && s.Growth > 1 {
		s.MinLoad = s.Start / Load(math.Pow(s.Growth, 4))
	}
	if s.Model == Closed {
		s.MinLoad = max(1, Load(math.Ceil(float64(s.MinLoad))))
	}
	if s.MaxProbes == 0 {
		s.MaxProbes = DefaultMaxProbes
	}
	if s.Duration == 0 {
		s.Duration = DefaultDuration
	}
	if s.MaxErrorPct == 0 {
		s.MaxErrorPct = DefaultMaxErrorPct
	}
	if s.MinGainPct == 0 {
		s.MinGainPct = DefaultMinGainPct
	}
	if s.PlateauTolPct == 0 {
		s.PlateauTolPct = DefaultPlateauTolPct
	}
	if s.MinStepPct == 0 {
		s.MinStepPct = DefaultMinStepPct
	}
	if s.MaxShortfallPct == 0 {
		s.MaxShortfallPct = DefaultMaxShortfall
	}
	if s.MaxRepeats == 0 {
		s.MaxRepeats = DefaultMaxRepeats
	} else if s.MaxRepeats < 0 {
		s.MaxRepeats = 0
	}
	return s
}

func (s Settings) validate() error {
	var errs []error
	if s.Model != Open && s.Model != Closed {
		errs = append(errs, fmt.Errorf("model %d is neither open nor closed", s.Model))
	}
	if !(s.Start > 0) || math.IsInf(float64(s.Start), 0) {
		errs = append(errs, fmt.Errorf("start load %v is not positive", s.Start))
	}
	if !(s.Max >= s.Start) || math.IsInf(float64(s.Max), 0) {
		errs = append(errs, fmt.Errorf("max load %v is below the start %v", s.Max, s.Start))
	}
	if s.Model == Closed && (s.Start != Load(math.Round(float64(s.Start))) || s.Max != Load(math.Round(float64(s.Max)))) {
		errs = append(errs, fmt.Errorf("closed model: start %v and max %v must be whole users", s.Start, s.Max))
	}
	if !(s.Growth > 1) {
		errs = append(errs, fmt.Errorf("growth %v is not above 1", s.Growth))
	}
	if s.ResolutionPct != 0 && s.ResolutionAbs != 0 {
		errs = append(errs, errors.New("resolution given both in percent and in the load's unit"))
	}
	if s.ResolutionPct < 0 || s.ResolutionAbs < 0 || math.IsNaN(s.ResolutionPct) || math.IsNaN(float64(s.ResolutionAbs)) {
		errs = append(errs, fmt.Errorf("negative resolution"))
	}
	if !(s.MinLoad > 0 && s.MinLoad <= s.Start) {
		errs = append(errs, fmt.Errorf("min load %v is not in (0, start]", s.MinLoad))
	}
	if s.MaxProbes < 1 || s.MaxTime < 0 || s.Warmup < 0 || s.Duration < 0 || s.Cooldown < 0 || s.MinSamples < 0 {
		errs = append(errs, errors.New("negative budget, duration or sample count"))
	}
	if !(s.MaxErrorPct > 0 && s.MaxErrorPct <= 100) {
		errs = append(errs, fmt.Errorf("error guard %v %% is not in (0, 100]", s.MaxErrorPct))
	}
	if !(s.MinGainPct > 0) || !(s.MinStepPct > 0) || !(s.PlateauTolPct > 0 && s.PlateauTolPct < 100) || !(s.MaxShortfallPct > 0 && s.MaxShortfallPct < 100) {
		errs = append(errs, errors.New("throughput scaling and step must be positive percentages"))
	}
	return errors.Join(errs...)
}

func validProbe(i int, p Probe) error {
	bad := func(f string, a ...any) error { return fmt.Errorf("probe %d: "+f, append([]any{i}, a...)...) }
	if !(p.Load > 0) || math.IsInf(float64(p.Load), 0) {
		return bad("load %v is not positive", p.Load)
	}
	if !(p.Throughput >= 0) || math.IsInf(p.Throughput, 0) {
		return bad("throughput %v is not a rate", p.Throughput)
	}
	if !(p.ErrorPct >= 0 && p.ErrorPct <= 100) {
		return bad("error rate %v %% is not in [0, 100]", p.ErrorPct)
	}
	if p.Duration < 0 || p.Elapsed < 0 {
		return bad("negative duration")
	}
	for _, r := range p.Requirements {
		if r.Better != Lower && r.Better != Higher {
			return bad("requirement %q has no direction", r.Name)
		}
		for _, v := range []float64{r.Limit, r.Value, r.Low, r.High} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return bad("requirement %q: %v is not a number", r.Name, v)
			}
		}
		if !(r.Low <= r.Value && r.Value <= r.High) {
			return bad("requirement %q: value %v outside its interval [%v, %v]", r.Name, r.Value, r.Low, r.High)
		}
	}
	return nil
}

// Action is what the search asks for next.
type Action int

// Actions.
const (
	// Run a probe at Decision.Load.
	Run Action = iota + 1
	// Repeat the marginal probe at Decision.Load, longer.
	Repeat
	// Stop: Decision.Answer holds the answer.
	Stop
)

// Phase says why a load is probed.
type Phase int

// Phases.
const (
	Up     Phase = iota + 1 // geometric steps upward from Start
	Down                    // geometric steps down from Start, which was bad
	Bisect                  // between the highest good and the lowest bad load
	// Verify re-probes the highest good load after the error guard first
	// tripped, to tell a bad load from a system that did not recover.
	Verify
)

// Decision is the search's next step.
type Decision struct {
	Action Action
	Phase  Phase // for Run and Repeat
	Load   Load  // for Run and Repeat
	// Warmup, Duration (the measured part) and Cooldown of the probe to run.
	Warmup, Duration, Cooldown time.Duration
	Answer                     *Answer // for Stop
}

// Outcome is how a search ended.
type Outcome int

// Outcomes.
const (
	// Found: the capacity is known to the resolution.
	Found Outcome = iota + 1
	// AboveMax: every probe up to Settings.Max was good; the capacity is
	// at least Max.
	AboveMax
	// BelowMin: no load down to Settings.MinLoad was good.
	BelowMin
	// GeneratorLimited: a probe's load generator saturated, so the probe
	// says nothing about the system; the capacity is at least Capacity
	// (the highest good load, 0 when none).
	GeneratorLimited
	// Collapsing: a probe's error rate passed the guard at the first load,
	// or at a load no higher than one the system had handled. (Over the
	// guard above every good load, the probe is bad and the search goes on
	// below it.)
	Collapsing
	// Budget: the probe or time budget ran out before the resolution was
	// reached; Capacity and UpperBound bracket the answer as far as known.
	Budget
)

func (o Outcome) String() string {
	return [...]string{"?", "found", "above max", "below min", "generator limited", "collapsing", "budget"}[max(0, min(int(o), 6))]
}

// MarshalText writes the outcome as its name ("found", "generator
// limited" …), so JSON carries words, not numbers.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Limit is what made a probe bad.
type Limit int

// Limits.
const (
	NoLimit          Limit = iota
	RequirementBroke       // a requirement broke (or stayed marginal after its repeats)
	LoadNotHeld            // the planned load was not applied
	ThroughputFlat         // throughput stopped growing
	ErrorGuard             // the error rate passed Settings.MaxErrorPct
	Generator              // the load generator saturated
	Shortfall              // throughput fell behind the arrival rate (open model)
)

func (l Limit) String() string {
	return [...]string{"none", "requirement", "load not held", "throughput flat", "error guard", "load generator", "throughput short of the rate"}[max(0, min(int(l), 6))]
}

// MarshalText writes the limit as its name ("requirement", "load
// generator" …).
func (l Limit) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// MarshalText writes the model as its unit, "req/s" or "users".
func (m Model) MarshalText() ([]byte, error) { return []byte(m.Unit()), nil }

// Answer is the search's result.
type Answer struct {
	Outcome Outcome
	Unit    string // Model.Unit
	// Capacity is the highest load probed good: every requirement held,
	// the load was held and throughput still grew. 0 when no probe was.
	Capacity Load
	// UpperBound is the lowest load probed bad above Capacity: the
	// capacity lies in [Capacity, UpperBound). 0 when no probe was bad.
	UpperBound Load
	// LimitedBy is why UpperBound was bad; Requirement names the
	// requirement when LimitedBy is RequirementBroke, and Marginal says it
	// stayed marginal after its repeats rather than breaking clearly.
	LimitedBy   Limit
	Requirement string
	Marginal    bool
	// At is the load of the probe that ended the search for
	// GeneratorLimited and Collapsing.
	At Load
	// Below is, when LimitedBy is ThroughputFlat, the highest load probed
	// below the throughput plateau: Capacity is then the knee, the lowest
	// load probed on the plateau, and the true knee lies in (Below,
	// Capacity] — the resolution applies to that interval, while every
	// load above Capacity is past the knee by definition. 0 otherwise.
	Below Load
	// Probes is how many probes were run, Elapsed their total cost.
	Probes  int
	Elapsed time.Duration
}

// judged is the search's view of one load after its probes.
type judged struct {
	load        Load
	probe       int // index of the latest probe at this load
	verdict     Verdict
	limit       Limit
	requirement string
	marginal    bool // bad because it stayed marginal
	wasGood     bool // some probe at this load was good
	repeats     int  // probes at this load beyond the first
}

// Next returns the next decision given the settings and the probes so far,
// in the order they ran. It returns an error for invalid settings or a
// probe that is not a measurement (a NaN, an interval not around its
// value); it never panics.
func Next(s Settings, probes []Probe) (Decision, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return Decision{}, fmt.Errorf("capacity search: %w", err)
	}
	for i, p := range probes {
		if err := validProbe(i, p); err != nil {
			return Decision{}, fmt.Errorf("capacity search: %w", err)
		}
		// probes the search could not have asked for: another search's,
		// or settings changed under it.
		if p.Load < s.MinLoad || p.Load > s.Max || (s.Model == Closed && p.Load != Load(math.Round(float64(p.Load)))) {
			return Decision{}, fmt.Errorf("capacity search: probe %d: load %v is not one this search probes (%v … %v %s)", i, p.Load, s.MinLoad, s.Max, s.Model.Unit())
		}
	}
	st := newState(s, probes)
	return st.next(), nil
}

type state struct {
	s      Settings
	probes []Probe
	loads  []judged // by load, in the order first probed
	spent  time.Duration
	// knee is the lowest load on the throughput plateau (closed model), 0
	// while no plateau is established; belowKnee the highest load probed
	// below it.
	knee, belowKnee Load
}

func newState(s Settings, probes []Probe) *state {
	st := &state{s: s, probes: probes}
	st.plateau()
	for _, p := range probes {
		st.spent += p.Elapsed
	}
	for i, p := range probes {
		at := -1
		for j := range st.loads {
			if st.loads[j].load == p.Load {
				at = j
			}
		}
		if at < 0 {
			st.loads = append(st.loads, judged{load: p.Load})
			at = len(st.loads) - 1
		} else {
			st.loads[at].repeats++
		}
		j := &st.loads[at]
		j.probe = i
		j.verdict, j.limit, j.requirement = st.judge(i)
		j.marginal = false
		if j.verdict == Holds {
			j.wasGood = true
		}
		if j.verdict == Marginal && j.repeats >= s.MaxRepeats {
			// still not clear after its repeats: not shown to hold, so bad.
			j.verdict, j.marginal = Breaks, true
		}
	}
	return st
}

// plateau finds the closed model's throughput plateau from every probe
// that measured the system (held, generator not saturated, errors within
// the guard): established when a load at least MinStepPct above another
// gained less than MinGainPct throughput over it. It depends on
// throughputs only, never on verdicts, so judging can use it.
func (st *state) plateau() {
	if st.s.Model != Closed {
		return
	}
	valid := func(p Probe) bool {
		return p.Held && !p.GeneratorSaturated && p.ErrorPct <= st.s.MaxErrorPct
	}
	established, top := false, 0.0
	for _, y := range st.probes {
		if !valid(y) {
			continue
		}
		top = math.Max(top, y.Throughput)
		for _, z := range st.probes {
			if valid(z) && float64(z.Load) >= float64(y.Load)*(1+st.s.MinStepPct/100) &&
				z.Throughput < y.Throughput*(1+st.s.MinGainPct/100) {
				established = true
			}
		}
	}
	if !established || top <= 0 {
		return
	}
	for _, p := range st.probes {
		if valid(p) && p.Throughput >= top*(1-st.s.PlateauTolPct/100) && (st.knee == 0 || p.Load < st.knee) {
			st.knee = p.Load
		}
	}
	for _, p := range st.probes {
		if valid(p) && p.Load < st.knee && p.Load > st.belowKnee {
			st.belowKnee = p.Load
		}
	}
}

// judge judges probe i on its own and against the throughput plateau.
func (st *state) judge(i int) (Verdict, Limit, string) {
	p := st.probes[i]
	if p.GeneratorSaturated {
		return Breaks, Generator, ""
	}
	if p.ErrorPct > st.s.MaxErrorPct {
		return Breaks, ErrorGuard, ""
	}
	if !p.Held {
		return Breaks, LoadNotHeld, ""
	}
	marginal := ""
	for _, r := range p.Requirements {
		switch r.Judge() {
		case Breaks:
			return Breaks, RequirementBroke, r.Name
		case Marginal:
			if marginal == "" {
				marginal = r.Name
			}
		}
	}
	if st.s.Model == Open && p.Throughput < float64(p.Load)*(1-st.s.MaxShortfallPct/100) {
		return Breaks, Shortfall, ""
	}
	if st.knee > 0 && p.Load > st.knee {
		return Breaks, ThroughputFlat, ""
	}
	if marginal != "" {
		return Marginal, RequirementBroke, marginal
	}
	return Holds, NoLimit, ""
}

func (st *state) next() Decision {
	s := st.s
	// The latest probe may end the search by itself.
	if n := len(st.probes); n > 0 {
		last := st.find(st.probes[n-1].Load)
		if last.verdict == Breaks && last.limit == Generator {
			return st.stop(GeneratorLimited, last.load)
		}
		if last.verdict == Breaks && last.limit == ErrorGuard {
			// Over the guard at the first load, or at a load the system
			// handled before: it is collapsing (or has not recovered), and
			// further probes would measure the wreck. Over the guard above
			// every good load is just bad: the search bisects below it,
			// once it has checked (Verify) that the highest good load is
			// still good.
			if n == 1 || last.wasGood || st.everGoodAbove(last.load) {
				return st.stop(Collapsing, last.load)
			}
		}
		if good, _ := st.bracket(); good != nil && st.needsVerify(good.load) {
			return st.probe(Repeat, Verify, good.load, 0)
		}
		if last.verdict == Marginal {
			return st.probe(Repeat, st.phaseOf(last.load), last.load, 2*st.probes[last.probe].Duration)
		}
	}
	good, bad := st.bracket()
	switch {
	case good == nil && bad == nil:
		return st.probe(Run, Up, s.Start, 0)
	case bad == nil: // all good so far: up
		if good.load >= s.Max {
			return st.stop(AboveMax, 0)
		}
		next := min(Load(float64(good.load)*s.Growth), s.Max)
		return st.probe(Run, Up, st.round(next, good.load+1, s.Max), 0)
	case good == nil: // all bad so far: down
		if bad.load <= s.MinLoad {
			return st.stop(BelowMin, 0)
		}
		next := max(Load(float64(bad.load)/s.Growth), s.MinLoad)
		return st.probe(Run, Down, st.round(next, s.MinLoad, bad.load-1), 0)
	}
	if st.knee > 0 && good.load == st.knee {
		// The plateau limits: every load above the knee is flat by
		// definition, so what is left is the knee itself, known to lie
		// above the highest load probed below it.
		if st.belowKnee == 0 {
			if st.knee <= s.MinLoad {
				return st.stop(Found, 0)
			}
			next := max(Load(float64(st.knee)/s.Growth), s.MinLoad)
			return st.probe(Run, Down, st.round(next, s.MinLoad, st.knee-1), 0)
		}
		if mid := st.middle(st.belowKnee, st.knee); !st.resolved(st.belowKnee, st.knee) && st.find(mid) == nil {
			return st.probe(Run, Bisect, mid, 0)
		}
		return st.stop(Found, 0)
	}
	if st.resolved(good.load, bad.load) {
		return st.stop(Found, 0)
	}
	if l, ok := st.served(good.load, bad); ok {
		return st.probe(Run, Bisect, l, 0)
	}
	return st.probe(Run, Bisect, st.middle(good.load, bad.load), 0)
}

// served uses what an overloaded open-model probe served: when the bad
// probe completed fewer requests per second than it offered, the system's
// capacity is about its throughput there, so the search probes that rate
// rather than the middle of the bracket — and once it is the highest good
// load, one resolution step above it, to close the bracket. Either way the
// answer still rests on probes on both sides; this only saves halvings
// when the limit is the system's throughput (two probes instead of four
// from a factor 2).
func (st *state) served(good Load, bad *judged) (Load, bool) {
	if st.s.Model != Open {
		return 0, false
	}
	t := Load(st.probes[bad.probe].Throughput)
	if float64(t) >= float64(bad.load)*(1-st.s.MaxShortfallPct/100) {
		return 0, false
	}
	next := t
	if t <= good || st.find(t) != nil {
		next = good + st.step(good)
	}
	if next > good && next < bad.load && st.find(next) == nil {
		return next, true
	}
	return 0, false
}

// step is one resolution above load l.
func (st *state) step(l Load) Load {
	if st.s.ResolutionAbs > 0 {
		return st.s.ResolutionAbs
	}
	return l * Load(st.s.ResolutionPct/100)
}

// middle is the next load between lo and hi: a resolution in percent
// halves the ratio (geometric mean), one in the load's unit the width.
func (st *state) middle(lo, hi Load) Load {
	mid := (lo + hi) / 2
	if st.s.ResolutionAbs == 0 {
		mid = Load(math.Sqrt(float64(lo) * float64(hi)))
	}
	if st.s.Model == Closed {
		mid = Load(math.Round(float64(mid)))
	}
	return mid
}

// bracket returns the highest good load and the lowest bad load above it
// (or the lowest bad load when none is good).
func (st *state) bracket() (good, bad *judged) {
	for i := range st.loads {
		l := &st.loads[i]
		if l.verdict == Holds && (good == nil || l.load > good.load) {
			good = l
		}
	}
	for i := range st.loads {
		l := &st.loads[i]
		if l.verdict == Breaks && (good == nil || l.load > good.load) && (bad == nil || l.load < bad.load) {
			bad = l
		}
	}
	return good, bad
}

// resolved says the bracket [good, bad) is as narrow as the settings ask
// (or as a whole user allows).
func (st *state) resolved(good, bad Load) bool {
	if st.s.Model == Closed && bad-good <= 1 {
		return true
	}
	// A relative tolerance of 1e-9: the step that closes the bracket at
	// exactly the resolution (good + good × pct) must count as closing it
	// despite its rounding, or it costs a probe.
	const tol = 1 + 1e-9
	if st.s.ResolutionAbs > 0 {
		return float64(bad-good) <= float64(st.s.ResolutionAbs)*tol
	}
	return float64(bad-good) <= float64(good)*st.s.ResolutionPct/100*tol
}

// round makes a closed-model load a whole number of users in [lo, hi]
// (whole numbers themselves, with lo ≤ hi).
func (st *state) round(l, lo, hi Load) Load {
	if st.s.Model != Closed {
		return l
	}
	return min(max(Load(math.Round(float64(l))), lo), hi)
}

// everGoodAbove says some load at or above l was good at some time.
func (st *state) everGoodAbove(l Load) bool {
	for _, j := range st.loads {
		if j.wasGood && j.load >= l {
			return true
		}
	}
	return false
}

// needsVerify says the error guard has tripped and no probe at the good
// load g ran since the first trip.
func (st *state) needsVerify(g Load) bool {
	trip := -1
	for i := range st.probes {
		if st.probes[i].ErrorPct > st.s.MaxErrorPct && !st.probes[i].GeneratorSaturated {
			trip = i
			break
		}
	}
	if trip < 0 {
		return false
	}
	for _, p := range st.probes[trip+1:] {
		if p.Load == g {
			return false
		}
	}
	return true
}

func (st *state) find(l Load) *judged {
	for i := range st.loads {
		if st.loads[i].load == l {
			return &st.loads[i]
		}
	}
	return nil
}

func (st *state) phaseOf(l Load) Phase {
	good, bad := st.bracket()
	switch {
	case good != nil && bad != nil:
		return Bisect
	case good == nil && l < st.s.Start:
		return Down
	}
	return Up
}

// probe returns a Run or Repeat decision, or Budget when the probe would
// go over a budget. minDur is the measured part a repeat needs.
func (st *state) probe(a Action, ph Phase, l Load, minDur time.Duration) Decision {
	s := st.s
	if st.find(l) != nil && a == Run {
		// a load already judged: the bracket cannot narrow further.
		return st.stop(Found, 0)
	}
	d := Decision{Action: a, Phase: ph, Load: l, Warmup: s.Warmup, Cooldown: s.Cooldown,
		Duration: max(s.Duration, minDur, st.forSamples(l))}
	if len(st.probes) >= s.MaxProbes || (s.MaxTime > 0 && st.spent+d.Warmup+d.Duration+d.Cooldown > s.MaxTime) {
		return st.stop(Budget, 0)
	}
	return d
}

// forSamples is how long a probe at l must measure to complete MinSamples
// requests at its expected throughput: the load itself (open), or the
// per-user throughput of the nearest probe below (closed; none known:
// Duration alone).
func (st *state) forSamples(l Load) time.Duration {
	if st.s.MinSamples == 0 {
		return 0
	}
	rate := float64(l)
	if st.s.Model == Closed {
		rate = 0
		var best Load
		for _, p := range st.probes {
			if p.Load <= l && p.Load > best && p.Throughput > 0 {
				best, rate = p.Load, p.Throughput/float64(p.Load)*float64(l)
			}
		}
		if rate == 0 {
			return 0
		}
	}
	// at most a day: the budget check then stops an impossible probe.
	return time.Duration(math.Min(math.Ceil(float64(st.s.MinSamples)/rate*float64(time.Second)), float64(24*time.Hour)))
}

func (st *state) stop(o Outcome, at Load) Decision {
	a := &Answer{Outcome: o, Unit: st.s.Model.Unit(), At: at, Probes: len(st.probes), Elapsed: st.spent}
	good, bad := st.bracket()
	if good != nil {
		a.Capacity = good.load
	}
	if bad != nil {
		a.UpperBound = bad.load
		a.LimitedBy, a.Requirement, a.Marginal = bad.limit, bad.requirement, bad.marginal
	}
	if good != nil && st.knee > 0 && good.load == st.knee {
		a.LimitedBy, a.Requirement, a.Marginal, a.Below = ThroughputFlat, "", false, st.belowKnee
	}
	if o == Found && good == nil {
		a.Outcome = BelowMin
	}
	return Decision{Action: Stop, Answer: a}
}

// MarshalText writes the verdict as its name ("holds", "breaks",
// "marginal").
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

func (p Phase) String() string {
	return [...]string{"?", "up", "down", "bisect", "verify"}[max(0, min(int(p), 4))]
}

// MarshalText writes the phase as its name ("up", "down", "bisect",
// "verify").
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Judgement is the search's view of one probe after all the probes: its
// verdict on the probe's own figures and against the throughput plateau
// the later probes established (closed model), and what made it bad.
type Judgement struct {
	Verdict     Verdict
	Limit       Limit  // NoLimit when it held
	Requirement string // the requirement, when Limit is RequirementBroke
}

// Judge returns the search's judgement of each probe, in order, with the
// same rules Next applies: a probe that was good when it ran can be judged
// past the knee once later probes showed the throughput plateau. A
// marginal probe is Marginal here, whatever its repeats decided.
func Judge(s Settings, probes []Probe) ([]Judgement, error) {
	s = s.withDefaults()
	if err := s.validate(); err != nil {
		return nil, fmt.Errorf("capacity search: %w", err)
	}
	for i, p := range probes {
		if err := validProbe(i, p); err != nil {
			return nil, fmt.Errorf("capacity search: %w", err)
		}
	}
	st := newState(s, probes)
	out := make([]Judgement, len(probes))
	for i := range probes {
		v, l, r := st.judge(i)
		out[i] = Judgement{Verdict: v, Limit: l, Requirement: r}
	}
	return out, nil
}

// unmarshalName sets *v to the value whose String is text, among the
// values 0 … n-1.
func unmarshalName[T interface {
	~int
	String() string
}](v *T, text []byte, n int, what string) error {
	for i := range n {
		if T(i).String() == string(text) {
			*v = T(i)
			return nil
		}
	}
	return fmt.Errorf("unknown %s %q", what, text)
}

// UnmarshalText reads an outcome's name.
func (o *Outcome) UnmarshalText(b []byte) error { return unmarshalName(o, b, 7, "outcome") }

// UnmarshalText reads a limit's name.
func (l *Limit) UnmarshalText(b []byte) error { return unmarshalName(l, b, 7, "limit") }

// UnmarshalText reads a verdict's name.
func (v *Verdict) UnmarshalText(b []byte) error { return unmarshalName(v, b, 4, "verdict") }

// UnmarshalText reads a phase's name.
func (p *Phase) UnmarshalText(b []byte) error { return unmarshalName(p, b, 5, "phase") }

// ParseResolution reads a resolution: "5%" or "5" (percent of the load),
// "10users" or "20/s" (in the load's unit, which must be model's). The
// error quotes s and says what is wanted.
func ParseResolution(s string, m Model) (pct float64, abs Load, err error) {
	t := strings.TrimSpace(s)
	num := func(v string) (float64, error) {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("%q: want a positive percentage (5%%) or load (10users, 20/s)", s)
		}
		return x, nil
	}
	switch {
	case strings.HasSuffix(t, "%"):
		pct, err = num(strings.TrimSuffix(t, "%"))
	case strings.HasSuffix(t, "users"), strings.HasSuffix(t, "user"):
		if m != Closed {
			return 0, 0, fmt.Errorf("%q: users for a workload with rate:; give req/s (20/s) or a percentage", s)
		}
		var x float64
		x, err = num(strings.TrimSuffix(strings.TrimSuffix(t, "users"), "user"))
		abs = Load(x)
	case strings.HasSuffix(t, "/s"):
		if m != Open {
			return 0, 0, fmt.Errorf("%q: req/s for a workload with users:; give users (10users) or a percentage", s)
		}
		var x float64
		x, err = num(strings.TrimSuffix(t, "/s"))
		abs = Load(x)
	default:
		pct, err = num(t)
	}
	if err == nil && pct >= 100 {
		return 0, 0, fmt.Errorf("%q: a percentage below 100", s)
	}
	return pct, abs, err
}
