package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// capacityFlags are the flags of `plateau capacity`.
type capacityFlags struct {
	out        string
	workload   string
	set        []string
	start      float64
	max        float64
	resolution string
	failBelow  float64
	warmup     time.Duration
	probe      time.Duration
	cooldown   time.Duration
	maxProbes  int
	maxTime    time.Duration
	minSamples int
	maxErrors  float64
	monitors   []string
}

// maxCutProbes is how often in a row a probe the engine cut short (not
// interrupted by the user) is run again before the search gives up.
const maxCutProbes = 2

// The names of a probe's two phases: the warm-up, excluded from every
// figure the search judges, and the measured part.
const (
	probeWarmupPhase  = "warm-up"
	probeMeasurePhase = "measure"
	// probeTailPhase follows the measured phase at the same load, so
	// that the measured phase ends on schedule: its throughput counts the
	// responses completed within it, not those of a run's last phase,
	// which waits for the requests still in flight (graceful_stop).
	probeTailPhase = "tail"
)

// probeTail is the length of a probe's tail phase: a fifth of the
// measured part, between 200 ms and 5 s.
func probeTail(measure time.Duration) time.Duration {
	return min(max(measure/5, 200*time.Millisecond), 5*time.Second)
}

func newCapacityCmd(st *State) *cobra.Command {
	var f capacityFlags
	c := &cobra.Command{
		Use:   "capacity PLAN.yaml",
		Short: "Search for the highest load at which the plan's requirements hold",
		Long: `Search for the capacity: the highest load at which every requirement of the plan holds,
the load is applied and the throughput keeps up. One workload (--workload, else the one
whose load has search:, else the plan's only one) is probed at loads chosen by the search,
the plan's other workloads running at their own load beside it (docs/analysis-methods.md §6): the arrival rate when its load
has rate: (req/s), the number of users when it has users: — upward in geometric steps
until a probe is bad, then bisecting to the resolution. Each probe is a full run of the
plan at that load (a warm-up phase, excluded, then the measured phase), written with its
report to DIR/probe-01, probe-02 …; DIR/capacity.json holds the answer and the probes,
and DIR itself is the run of the probe at the capacity with the search's report: its
summary opens with the capacity, the requirement that limited it and the component that
saturated first, its summary.json carries capacity.search (docs/capacity.md).

A workload whose load has a search: block (docs/plan.md) gives the search's settings;
these flags override them one by one, and plateau run of such a plan runs the same search.

Exit code 0 when the search ended, 1 when the capacity found is below --fail-below,
2 when it could not be done, 3 when it was interrupted (Ctrl-C stops the probe running,
keeps its run directory and prints what the probes before it showed).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCapacity(cmd.Context(), st, CapacityRequest{Plan: args[0], Set: f.set, Out: f.out, Workload: f.workload,
				Monitors: f.monitors, Overrides: f.overrides(cmd.Flags().Changed)})
		},
	}
	c.Flags().StringVarP(&f.out, "out", "o", "", "directory for capacity.json and the probes' run directories (default runs/<name>-capacity-<UTC time>)")
	c.Flags().StringArrayVar(&f.monitors, "monitor", nil, "watch a target in every probe, as plateau run's --monitor KIND:key=value,… (repeatable): what saturated first is read from them")
	c.Flags().StringVar(&f.workload, "workload", "", "the workload to search when the plan has several (default the one whose load has search:); the others run at their plan's load in every probe")
	c.Flags().StringArrayVar(&f.set, "set", nil, "override a plan value before the search, as plateau run's --set (repeatable)")
	c.Flags().Float64Var(&f.start, "start", 0, "first load probed, in req/s or users (default the plan's load)")
	c.Flags().Float64Var(&f.max, "max", 0, "highest load probed, in req/s or users (default 16 × the first load)")
	c.Flags().StringVar(&f.resolution, "resolution", "5%", "stop when the capacity is bracketed this closely: a percentage (5%) or a load (10users, 20/s)")
	c.Flags().Float64Var(&f.failBelow, "fail-below", 0, "exit 1 when the capacity found is below this load (for CI)")
	c.Flags().DurationVar(&f.warmup, "warmup", 10*time.Second, "warm-up of each probe, excluded from its figures")
	c.Flags().DurationVar(&f.probe, "probe", search.DefaultDuration, "measured part of each probe (at least)")
	c.Flags().DurationVar(&f.cooldown, "cooldown", 5*time.Second, "pause after each probe")
	c.Flags().IntVar(&f.maxProbes, "max-probes", search.DefaultMaxProbes, "most probes to run, repeats included")
	c.Flags().DurationVar(&f.maxTime, "max-time", 0, "most time the probes may take in all (0: no bound)")
	c.Flags().IntVar(&f.minSamples, "min-samples", 0, "completed requests a probe needs for its requirements to be judged (lengthens a probe)")
	c.Flags().Float64Var(&f.maxErrors, "max-error-pct", search.DefaultMaxErrorPct, "error-rate guard, in percent: a probe above it is bad, and the search stops when the system fails it at a load it had handled")
	return c
}

// searchedWorkload is the workload of the plan that the search varies,
// with its model and the load the plan gives it: the one named (--workload),
// else the one whose load has search:, else the plan's only workload. The
// plan's other workloads run as the plan gives them in every probe, beside
// the searched one (docs/capacity.md, several workloads).
func searchedWorkload(p *plan.Plan, name string) (*plan.Workload, search.Model, float64, error) {
	names := make([]string, len(p.Workloads))
	var w *plan.Workload
	var withSearch []string
	for i, x := range p.Workloads {
		names[i] = x.Name
		if name != "" && x.Name == name {
			w = x
		}
		if x.Load.Search != nil {
			withSearch = append(withSearch, x.Name)
		}
	}
	switch {
	case name != "" && w == nil:
		return nil, 0, 0, fmt.Errorf("--workload %s: the plan has no such workload (%s)", name, strings.Join(names, ", "))
	case name != "" && len(withSearch) > 0 && (len(withSearch) > 1 || withSearch[0] != name):
		return nil, 0, 0, fmt.Errorf("--workload %s: the plan gives search: to %s; search the workload it names, or drop the block", name, strings.Join(withSearch, " and "))
	case name != "":
	case len(withSearch) > 1:
		return nil, 0, 0, fmt.Errorf("workloads %s: searching several workloads together (all scaled in proportion) is not supported yet; give search: to one workload — the others run at their plan's load in every probe", strings.Join(withSearch, " and "))
	case len(withSearch) == 1:
		for _, x := range p.Workloads {
			if x.Name == withSearch[0] {
				w = x
			}
		}
	case len(p.Workloads) == 1:
		w = p.Workloads[0]
	default:
		return nil, 0, 0, fmt.Errorf("the plan has %d workloads (%s): name the one to search with --workload NAME, or give its load a search: block; the others run at their plan's load in every probe",
			len(p.Workloads), strings.Join(names, ", "))
	}
	l := w.Load
	switch {
	case len(l.Steps) > 0 || len(l.Stages) > 0:
		return nil, 0, 0, fmt.Errorf("workload %s: capacity searches a load of rate: or users:, not steps or stages (the search chooses the loads)", w.Name)
	case l.Iterations > 0:
		return nil, 0, 0, fmt.Errorf("workload %s: capacity needs a load that lasts a time, not iterations", w.Name)
	case l.Rate > 0:
		return w, search.Open, l.Rate.PerSecond(), nil
	case l.Users > 0:
		// with pace: or without: each probe keeps the pace, and the
		// search varies the users.
		return w, search.Closed, float64(l.Users), nil
	}
	return nil, 0, 0, fmt.Errorf("workload %s: capacity needs a load with rate: or users:", w.Name)
}

// capacityRequirements parses the plan's requirements for the search: each
// is judged over a probe's measured phase, so none may name a phase of
// its own, and each needs a direction.
//
// Each is judged over the searched workload's measured phase, so one that
// selects another workload would have nothing to judge there.
func capacityRequirements(p *plan.Plan, w *plan.Workload) ([]*sla.Expr, error) {
	var out []*sla.Expr
	for _, s := range p.SLA {
		e, err := sla.Parse(s.Expr)
		if err != nil {
			return nil, fmt.Errorf("sla %q: %w", s.Expr, err)
		}
		if e.Workload != "" && e.Workload != w.Name {
			return nil, fmt.Errorf("sla %q: capacity judges the requirements over the searched workload %s's probes; a requirement on workload %s is not judged there (drop it, or search %s)", s.Expr, w.Name, e.Workload, e.Workload)
		}
		if e.Phase != "" {
			return nil, fmt.Errorf("sla %q: a requirement during one phase is not supported by capacity (each probe has its own phases); drop the during", s.Expr)
		}
		if e.Op == "==" || e.Op == "!=" {
			return nil, fmt.Errorf("sla %q: capacity needs a requirement with a side (<, <=, >, >=)", s.Expr)
		}
		out = append(out, e)
	}
	return out, nil
}

// parseResolution reads --resolution (search.ParseResolution).
func parseResolution(s string, m search.Model) (float64, search.Load, error) {
	pct, abs, err := search.ParseResolution(s, m)
	if err != nil {
		return 0, 0, fmt.Errorf("--resolution %w", err)
	}
	return pct, abs, nil
}

// probeLoad is the --set value that replaces the workload's load with a
// probe's: a warm-up step (when there is one), the measured step and a
// short tail step, at the same load, keeping the plan's max_users, ramp_up (in the first
// step), graceful_stop and start_after.
func probeLoad(orig plan.Load, m search.Model, load search.Load, warmup, measure time.Duration) string {
	at := func(rampUp time.Duration) string {
		if m == search.Open {
			return "rate: " + strconv.FormatFloat(float64(load), 'f', -1, 64) + "/s"
		}
		s := "users: " + strconv.Itoa(int(math.Round(float64(load))))
		if orig.Pace > 0 {
			s += ", pace: " + orig.Pace.String()
		}
		if rampUp > 0 {
			s += ", ramp_up: " + rampUp.String()
		}
		return s
	}
	var steps []string
	if warmup > 0 {
		steps = append(steps, fmt.Sprintf("{name: %s, %s, duration: %s}", probeWarmupPhase, at(min(orig.RampUp, warmup)), warmup))
	}
	steps = append(steps, fmt.Sprintf("{name: %s, %s, duration: %s}", probeMeasurePhase, at(0), measure))
	steps = append(steps, fmt.Sprintf("{name: %s, %s, duration: %s}", probeTailPhase, at(0), probeTail(measure)))
	v := "{steps: [" + strings.Join(steps, ", ") + "]"
	if orig.MaxUsers > 0 {
		v += ", max_users: " + strconv.Itoa(orig.MaxUsers)
	}
	if orig.GracefulStop > 0 {
		v += ", graceful_stop: " + orig.GracefulStop.String()
	}
	if orig.StartAfter > 0 {
		v += ", start_after: " + orig.StartAfter.String()
	}
	return v + "}"
}

// besideProbe are the --set values that make the plan's other workloads
// last as long as a probe: one whose load runs for a duration (users,
// rate or pace) runs for the probe's whole length — warm-up, measured
// part and tail — so that it is there throughout the measured part and
// does not hold the probe's run open after it. Steps, stages and
// iterations run as the plan gives them.
func besideProbe(p *plan.Plan, searched *plan.Workload, d search.Decision) []string {
	var out []string
	total := d.Warmup + d.Duration + probeTail(d.Duration)
	for _, x := range p.Workloads {
		l := x.Load
		if x == searched || l.Duration <= 0 || len(l.Steps) > 0 || len(l.Stages) > 0 || l.Iterations > 0 {
			continue
		}
		if dur := total - l.StartAfter; dur > 0 {
			out = append(out, "workloads."+x.Name+".load.duration="+dur.String())
		}
	}
	return out
}

// probeFromSummary is what one probe's run showed, for the search: the
// measured phase's throughput, error rate, requirements and validity.
//
// ivs are the requirements' intervals over the measured phase
// (analysis.PhaseIntervals; nil or a missing one: the statistic is its own
// interval). A requirement whose interval straddles its limit is marginal,
// and the search repeats the probe, longer.
//
// measure is the name of the measured phase in the probe's run
// (measurePhase).
func probeFromSummary(s *analysis.Summary, measure string, reqs []*sla.Expr, ivs []analysis.Interval, d search.Decision) (search.Probe, error) {
	p := search.Probe{Load: d.Load, Duration: d.Duration, Elapsed: d.Warmup + d.Duration + probeTail(d.Duration) + d.Cooldown, Held: true}
	phase := -1
	for i, ph := range s.Phases {
		if ph.Name == measure {
			phase = i
		}
	}
	if phase < 0 {
		return p, fmt.Errorf("the probe's run has no %q phase", measure)
	}
	ph := s.Phases[phase]
	for _, l := range ph.Labels {
		if l.Label == core.TotalLabel {
			p.Throughput, p.ErrorPct = l.ThroughputRPS, l.ErrorPct
		}
	}
	if v := s.Validity; v != nil {
		for _, pv := range v.Phases {
			if pv.Phase != ph.Name {
				continue
			}
			p.Held = pv.Held
			for _, k := range pv.Kinds {
				// The generator's own shortage: its CPU, or iterations it
				// dropped because it fell behind its schedule (not because
				// the system kept every allowed user busy).
				if k == analysis.ReasonGeneratorCPU || (k == analysis.ReasonDropped && 2*pv.DroppedLate >= pv.Dropped) {
					p.GeneratorSaturated = true
				}
			}
		}
	}
	for i, e := range reqs {
		if i >= len(s.SLA) {
			return p, fmt.Errorf("the probe's summary judged %d requirement(s), the plan has %d", len(s.SLA), len(reqs))
		}
		r := s.SLA[i]
		obs, found := math.NaN(), false
		for _, pc := range r.PerPhase {
			if pc.Phase == ph.Name {
				obs, found = pc.Observed, true
			}
		}
		if !found || math.IsNaN(obs) || math.IsInf(obs, 0) {
			// No request in the measured phase to judge it on: the
			// requirement is not shown to hold.
			obs = breaking(e)
		}
		better := search.Lower
		if e.Op == ">" || e.Op == ">=" {
			better = search.Higher
		}
		lo, hi := obs, obs
		if found && i < len(ivs) && ivs[i].OK {
			lo, hi = math.Min(obs, ivs[i].Low), math.Max(obs, ivs[i].High)
		}
		p.Requirements = append(p.Requirements, search.Requirement{Name: r.Expr, Limit: e.Value,
			Value: obs, Low: lo, High: hi, Better: better})
	}
	return p, nil
}

// breaking is a value on the wrong side of e's limit.
func breaking(e *sla.Expr) float64 {
	if e.Op == ">" || e.Op == ">=" {
		return math.Min(e.Value-1, 0)
	}
	return math.Max(e.Value+1, 2*e.Value)
}

// CapacityRequest asks for one capacity search: the plan with its
// overrides, where to write, and the settings that override the plan's
// search: block (CapacityOverrides; a nil field keeps the plan's value or
// the default).
type CapacityRequest struct {
	// Plan is the plan file; Set its overrides (as plateau run's --set).
	Plan string
	Set  []string
	// Out is the search's directory (default runs/<name>-capacity-<UTC>).
	Out string
	// Workload names the workload to search (--workload); "" takes the one
	// whose load has search:, else the plan's only one.
	Workload string
	// Monitors are --monitor targets added to every probe's plan.
	Monitors []string
	// Formats of the search's report (nil: all).
	Formats   []string
	Overrides CapacityOverrides
}

// CapacityOverrides are the search's settings given outside the plan
// (plateau capacity's flags); nil means not given.
type CapacityOverrides struct {
	Start, Max                       *float64
	Resolution                       *string
	Warmup, Probe, Cooldown, MaxTime *time.Duration
	MaxProbes, MinSamples            *int
	MaxErrorPct, FailBelow           *float64
}

// CapacityConfig is a search's settings, consolidated: defaults ← the
// workload's search: block ← CapacityOverrides.
type CapacityConfig struct {
	// Start is the first load probed (0: the plan's), Max the highest
	// (0: 16 × Start), in req/s or users.
	Start, Max float64
	// Resolution: "5%", "10users", "20/s".
	Resolution string
	// Warmup, Probe (the measured part, at least) and Cooldown of each
	// probe.
	Warmup, Probe, Cooldown time.Duration
	MaxProbes               int
	MaxTime                 time.Duration
	MinSamples              int
	MaxErrorPct             float64
	// FailBelow: the caller fails (exit 1) below this capacity; 0 never.
	FailBelow float64
}

// capacityConfig layers the defaults, the workload's search: block and
// the overrides.
func capacityConfig(l plan.Load, o CapacityOverrides) CapacityConfig {
	s := plan.DefaultLoadSearch()
	if l.Search != nil {
		s = *l.Search
	}
	c := CapacityConfig{Start: s.Start, Max: s.Max, Resolution: s.Resolution, Warmup: s.Warmup, Probe: s.Probe,
		Cooldown: s.Cooldown, MaxProbes: s.MaxProbes, MaxTime: s.MaxTime, MinSamples: s.MinSamples,
		MaxErrorPct: s.MaxErrorPct, FailBelow: s.FailBelow}
	override(&c.Start, o.Start)
	override(&c.Max, o.Max)
	override(&c.Resolution, o.Resolution)
	override(&c.Warmup, o.Warmup)
	override(&c.Probe, o.Probe)
	override(&c.Cooldown, o.Cooldown)
	override(&c.MaxTime, o.MaxTime)
	override(&c.MaxProbes, o.MaxProbes)
	override(&c.MinSamples, o.MinSamples)
	override(&c.MaxErrorPct, o.MaxErrorPct)
	override(&c.FailBelow, o.FailBelow)
	return c
}

// override sets *dst to *v when v is set.
func override[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// CapacityResult is a finished capacity search.
type CapacityResult struct {
	// Search is the answer with its probes, as summary.json's
	// capacity.search.
	Search *capacity.Search
	// Config is the settings the search ran with.
	Config CapacityConfig
	// Dir is the search's directory: capacity.json, the probes' run
	// directories and the search's report.
	Dir string
	// Summary is the search report's summary.json (nil when the report
	// could not be written: ReportErr says why).
	Summary   *analysis.Summary
	ReportErr error
}

// overrides are the flags given on the command line.
func (f capacityFlags) overrides(changed func(string) bool) CapacityOverrides {
	var o CapacityOverrides
	pick := func(name string, set func()) {
		if changed(name) {
			set()
		}
	}
	pick("start", func() { o.Start = &f.start })
	pick("max", func() { o.Max = &f.max })
	pick("resolution", func() { o.Resolution = &f.resolution })
	pick("warmup", func() { o.Warmup = &f.warmup })
	pick("probe", func() { o.Probe = &f.probe })
	pick("cooldown", func() { o.Cooldown = &f.cooldown })
	pick("max-time", func() { o.MaxTime = &f.maxTime })
	pick("max-probes", func() { o.MaxProbes = &f.maxProbes })
	pick("min-samples", func() { o.MinSamples = &f.minSamples })
	pick("max-error-pct", func() { o.MaxErrorPct = &f.maxErrors })
	pick("fail-below", func() { o.FailBelow = &f.failBelow })
	return o
}

func runCapacity(ctx context.Context, st *State, r CapacityRequest) error {
	res, err := SearchCapacity(ctx, st, r)
	if err != nil {
		return err
	}
	printCapacity(st, res)
	return capacityVerdict(st.Stdout, res.Search, res.Config.FailBelow)
}

// printCapacity prints a finished search: the answer first, then what
// limited it and the probes it rests on, then where it is written.
func printCapacity(st *State, res *CapacityResult) {
	cs := res.Search
	printSearch(st.Stdout, cs)
	fmt.Fprintf(st.Stdout, "\n%d probe(s) in %s; %s\n", len(cs.Probes), time.Duration(cs.ElapsedS*float64(time.Second)).Round(time.Second), filepath.Join(res.Dir, analysis.SearchFile))
	if res.ReportErr != nil {
		fmt.Fprintf(st.Stderr, "plateau: capacity: the search's report: %v\n", res.ReportErr)
	} else {
		fmt.Fprintf(st.Stdout, "report: %s\n", filepath.Join(res.Dir, "report.html"))
	}
}

// searched says a workload of the plan asks for a capacity search (its
// load has search:).
func searched(p *plan.Plan) bool {
	for _, w := range p.Workloads {
		if w.Load.Search != nil {
			return true
		}
	}
	return false
}

// runSearchPlan is plateau run of a plan whose workload's load has
// search:: the same search as plateau capacity, with the plan's settings.
func runSearchPlan(ctx context.Context, st *State, planPath string, f runFlags) error {
	switch {
	case f.segment != "" || f.generators > 0 || f.listen != "" || len(f.outputs) > 0 || f.trace > 0 || len(f.attach) > 0 || f.startAt != "":
		return errors.New("a plan whose load has search: runs a capacity search; --segment, --generators, --listen, --out, --trace, --attach and --start-at are not supported with it yet")
	}
	res, err := SearchCapacity(ctx, st, CapacityRequest{Plan: planPath, Set: f.set, Out: f.out, Monitors: f.monitors})
	if err != nil {
		return err
	}
	if !f.quiet {
		printCapacity(st, res)
	}
	if f.onSummary != nil && res.Summary != nil {
		f.onSummary(res.Summary)
	}
	return capacityVerdict(st.Stdout, res.Search, res.Config.FailBelow)
}

// capacityVerdict decides the exit of a search: interrupted, below
// --fail-below (a capacity known to be lower: 1; a search that could not
// show one: 2), or fine.
func capacityVerdict(w io.Writer, cs *capacity.Search, failBelow float64) error {
	switch {
	case cs.Interrupted:
		return &notHeldError{verdict: "interrupted", why: "the search was stopped; the answer above rests on the probes before it"}
	case failBelow > 0 && cs.Load < failBelow && (cs.Outcome == search.GeneratorLimited || cs.Outcome == search.Budget && cs.UpperBound == 0):
		// Only a lower bound below the threshold: not a capacity below it.
		return fmt.Errorf("capacity: %s required (--fail-below, or fail_below in the plan's search:): the search could not show the capacity (%s), only that it is at least %s", fmtLoad(search.Load(failBelow), cs.Unit), cs.Outcome, fmtLoad(search.Load(cs.Load), cs.Unit))
	case failBelow > 0 && cs.Load < failBelow:
		fmt.Fprintf(w, "capacity %s is below the %s required (--fail-below, or fail_below in the plan's search:)\n", fmtLoad(search.Load(cs.Load), cs.Unit), fmtLoad(search.Load(failBelow), cs.Unit))
		return ErrSLAFailed
	}
	return nil
}

// SearchCapacity runs a capacity search over the plan's workload and
// writes its directory: each probe's run directory (probe-01, …),
// capacity.json, and the search's report — the shown probe's run
// (capacity.Search.Shown) with the search in its summary and capacity
// section. A study answers a capacity question by calling it per
// workload or configuration and reading CapacityResult.Search. An error
// means the search could not be done; its outcome (found, generator
// limited …) is in the result.
func SearchCapacity(ctx context.Context, st *State, r CapacityRequest) (*CapacityResult, error) {
	p, err := loadPlan(st, r.Plan, r.Set)
	if err != nil {
		return nil, err
	}
	if engineOf(p) != "" {
		return nil, errors.New("capacity drives plateau's own engine; a workload run by another tool is not supported yet")
	}
	w, model, planLoad, err := searchedWorkload(p, r.Workload)
	if err != nil {
		return nil, err
	}
	c := capacityConfig(w.Load, r.Overrides)
	// The measured phase as the probe's run names it (prefixed with the
	// workload's name when the plan has several).
	measure := engine.PhaseName(len(p.Workloads), w.Name, probeMeasurePhase)
	reqs, err := capacityRequirements(p, w)
	if err != nil {
		return nil, err
	}
	start := c.Start
	if start == 0 {
		start = planLoad
	}
	if model == search.Closed {
		start = math.Round(start)
	}
	maxLoad := c.Max
	if maxLoad == 0 {
		maxLoad = 16 * start
	}
	pct, abs, err := parseResolution(c.Resolution, model)
	if err != nil {
		return nil, err
	}
	s := search.Settings{Model: model, Start: search.Load(start), Max: search.Load(maxLoad),
		ResolutionPct: pct, ResolutionAbs: abs, MaxProbes: c.MaxProbes, MaxTime: c.MaxTime,
		Warmup: c.Warmup, Duration: c.Probe, Cooldown: c.Cooldown, MinSamples: c.MinSamples,
		MaxErrorPct: c.MaxErrorPct}
	if _, err := search.Next(s, nil); err != nil {
		return nil, err
	}
	dir := r.Out
	if dir == "" {
		dir = filepath.Join("runs", safeName(p.Name)+"-capacity-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.InfoFile)); err == nil {
		return nil, fmt.Errorf("capacity: %s already holds a run", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	fmt.Fprintf(st.Stderr, "plateau: capacity of %s (%s), from %g to at most %g %s → %s\n", p.Name, w.Name, start, maxLoad, model.Unit(), dir)

	cs := &capacity.Search{Workload: w.Name, Unit: model.Unit(), Resolution: strings.TrimSpace(c.Resolution),
		FailBelow: c.FailBelow, Probes: []capacity.SearchProbe{}}
	var probes []search.Probe
	var judgedAt []int // index in cs.Probes of each judged probe
	var readings [][]resources.Reading
	began := time.Now()
	var ans *search.Answer
	cut := 0 // probes in a row the engine cut short
	for ans == nil {
		d, err := search.Next(s, probes)
		if err != nil {
			return nil, err
		}
		if d.Action == search.Stop {
			ans = d.Answer
			break
		}
		n := len(cs.Probes) + 1
		name := fmt.Sprintf("probe-%02d", n)
		set := append(append([]string(nil), r.Set...),
			"workloads."+w.Name+".load="+probeLoad(w.Load, model, d.Load, d.Warmup, d.Duration))
		set = append(set, besideProbe(p, w, d)...)
		var sum *analysis.Summary
		var console bytes.Buffer
		pst := *st
		pst.Stdout, pst.Stderr = &console, &console
		fmt.Fprintf(st.Stderr, "plateau: %s: %s for %s (%s)…", name, fmtLoad(d.Load, model.Unit()), d.Duration, d.Phase)
		probeDir := filepath.Join(dir, name)
		runErr := runPlan(ctx, &pst, r.Plan, runFlags{out: probeDir, set: set, quiet: true, monitors: r.Monitors,
			onSummary: func(s *analysis.Summary) { sum = s }})
		_ = os.WriteFile(filepath.Join(probeDir, "console.txt"), console.Bytes(), 0o644)
		var nh *notHeldError
		if runErr != nil && !errors.Is(runErr, ErrSLAFailed) && !errors.As(runErr, &nh) {
			fmt.Fprintln(st.Stderr, " failed")
			return nil, fmt.Errorf("%s: %w (its console output is in %s)", name, runErr, filepath.Join(probeDir, "console.txt"))
		}
		if sum == nil {
			fmt.Fprintln(st.Stderr, " no summary")
			return nil, fmt.Errorf("%s: the run wrote no summary (console output in %s)", name, filepath.Join(probeDir, "console.txt"))
		}
		interrupted := ctx.Err() != nil || sum.Verdict == analysis.VerdictInterrupted || sum.Status == "interrupted"
		ds, _ := analysis.Load(probeDir) // nil: neither intervals nor readings, which the report then lacks
		var ivs []analysis.Interval
		if ds != nil && !interrupted {
			ivs, _ = analysis.PhaseIntervals(ds, measure, reqs)
		}
		pr, err := probeFromSummary(sum, measure, reqs, ivs, d)
		if err != nil && !interrupted {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if interrupted && ctx.Err() == nil && err == nil && measuredFully(sum, measure, d.Duration) {
			// The engine cut the run at its planned end plus
			// graceful_stop, but only after the measured phase had run
			// its length: the backlog of an overloaded system (every
			// allowed user busy, arrivals late) outlasted the grace. That
			// is evidence: the planned load was not applied in time —
			// unless the generator itself saturated, which
			// probeFromSummary has read from the phase's validity.
			interrupted = false
			pr.Held = false
			fmt.Fprint(st.Stderr, " (cut at graceful_stop after its measured phase: load not held)")
		}
		fig, _ := analysis.PhaseFigures(sum, measure)
		cp := capacity.SearchProbe{N: n, Dir: name, Phase: d.Phase, Repeat: d.Action == search.Repeat,
			Load: float64(d.Load), WarmupS: d.Warmup.Seconds(), DurationS: d.Duration.Seconds(),
			ThroughputRPS: pr.Throughput, MeanMs: fig.MeanMs, P95Ms: fig.P95Ms, ErrorPct: pr.ErrorPct,
			Held: pr.Held, GeneratorSaturated: pr.GeneratorSaturated,
			TestStatus: sum.Verdict, Requirements: []capacity.ProbeReq{}}
		cp.GeneratorStarved, cp.RunQueuePct = probeStarved(sum, measure)
		for _, r := range pr.Requirements {
			cp.Requirements = append(cp.Requirements, capacity.ProbeReq{Expr: r.Name, Observed: r.Value, Low: r.Low, High: r.High, Limit: r.Limit, Verdict: r.Judge()})
		}
		if interrupted {
			// An interrupted probe is not evidence: recorded, not judged.
			cp.Interrupted, cp.CutShort = ctx.Err() != nil, ctx.Err() == nil
			cs.Probes = append(cs.Probes, cp)
			readings = append(readings, nil)
			if ctx.Err() != nil {
				fmt.Fprintln(st.Stderr, " interrupted")
				break
			}
			// Stopped without a Ctrl-C: the engine cut the measured
			// step at the load's planned end plus graceful_stop, which a
			// generator running late on a busy machine passes. Run the
			// same probe again, a bounded number of times.
			cut++
			fmt.Fprintf(st.Stderr, " cut short by the engine (generator late by more than graceful_stop); running it again\n")
			if cut > maxCutProbes {
				return nil, fmt.Errorf("%s: the probe at %g %s was cut short %d times in a row without an interrupt: the generator ran late by more than the workload's graceful_stop; give a longer graceful_stop or a less loaded machine",
					name, float64(d.Load), model.Unit(), cut)
			}
			continue
		}
		cut = 0
		readings = append(readings, probeReadings(ds, probeDir, measure, sum))
		judgedAt = append(judgedAt, len(cs.Probes))
		cs.Probes = append(cs.Probes, cp)
		probes = append(probes, pr)
		fmt.Fprintf(st.Stderr, " %.1f req/s, %.2f%% errors%s\n", pr.Throughput, pr.ErrorPct, probeNote(pr))
		if d.Cooldown > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(d.Cooldown):
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	if ans == nil {
		// Interrupted: the answer as far as the probes so far show it —
		// the search's own budget stop, with no probe left to run.
		cs.Interrupted = true
		b := s
		b.MaxProbes = max(1, len(probes))
		if len(probes) == 0 {
			ans = &search.Answer{Outcome: search.Budget, Unit: model.Unit()}
		} else {
			d, err := search.Next(b, probes)
			if err != nil {
				return nil, err
			}
			if d.Action != search.Stop {
				return nil, errors.New("capacity: the search did not stop at its budget")
			}
			ans = d.Answer
		}
	}
	// Every probe judged with all the probes known: one good when it ran
	// can lie past the knee the later ones showed.
	js, err := search.Judge(s, probes)
	if err != nil {
		return nil, err
	}
	for k, j := range js {
		cp := &cs.Probes[judgedAt[k]]
		cp.Verdict, cp.LimitedBy = capacity.VerdictOf(j), j.Limit
	}
	cs.Outcome = ans.Outcome
	cs.Load, cs.UpperBound = float64(ans.Capacity), float64(ans.UpperBound)
	cs.LimitedBy, cs.Requirement, cs.Marginal = ans.LimitedBy, ans.Requirement, ans.Marginal
	cs.At, cs.Below = float64(ans.At), float64(ans.Below)
	cs.ElapsedS = math.Round(time.Since(began).Seconds()*1000) / 1000
	cs.Sentence = answerSentence(ans, cs.Interrupted)
	analysis.FinishSearch(cs, readings)
	cs.Shown = shownProbe(cs)
	res := &CapacityResult{Search: cs, Config: c, Dir: dir}
	if cs.Shown != "" {
		if err := copyRun(filepath.Join(dir, cs.Shown), dir); err != nil {
			res.ReportErr = err
			cs.Shown = ""
		}
	}
	var cf analysis.SearchFileContent
	cf.Name = p.Name
	cf.Capacity.Search = cs
	b, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, analysis.SearchFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("capacity: %w", err)
	}
	if cs.Shown != "" {
		rr, err := report.Write(dir, report.Options{Formats: r.Formats, Version: version()})
		if rr != nil {
			res.Summary = rr.Summary
		}
		res.ReportErr = err
	} else if res.ReportErr == nil {
		res.ReportErr = errors.New("no probe ran to its end, so there is no run to report on")
	}
	return res, nil
}

// measuredFully says the probe's measured phase ran at least its planned
// length.
func measuredFully(s *analysis.Summary, measure string, planned time.Duration) bool {
	for _, ph := range s.Phases {
		if ph.Name == measure {
			return ph.End.Sub(ph.Start) >= planned
		}
	}
	return false
}

// probeReadings reads the monitored components of a probe's run over its
// measured phase, for the search's bottleneck; nil when nothing was
// monitored or the run cannot be read (the bottleneck is then not known,
// which the report says).
func probeReadings(d *analysis.Dataset, dir, measure string, sum *analysis.Summary) []resources.Reading {
	if d == nil {
		return nil
	}
	series, targets, _ := mondata.Read(dir)
	return analysis.ProbeReadings(d, sum, analysis.MonitorTargets(targets, series), measure)
}

// shownProbe is the probe whose run the search's report shows: the latest
// judged probe at the capacity, else the last judged probe (it shows why
// no load was good), else none.
func shownProbe(cs *capacity.Search) string {
	shown := ""
	for _, p := range cs.Probes {
		if p.Verdict == capacity.NotJudged {
			continue
		}
		if cs.Load > 0 && p.Load == cs.Load && p.Verdict == capacity.Good {
			shown = p.Dir
		}
	}
	if shown != "" {
		return shown
	}
	for i := len(cs.Probes) - 1; i >= 0; i-- {
		if cs.Probes[i].Verdict != capacity.NotJudged {
			return cs.Probes[i].Dir
		}
	}
	return ""
}

// copyRun makes dir a copy of the probe run directory from: every file
// the report is written from (hard links where the file system allows),
// not the probe's own reports or console output.
func copyRun(from, dir string) error {
	skip := map[string]bool{"console.txt": true, rundir.SummaryFile: true, "report.html": true, "report.md": true,
		"junit.xml": true, "charts": true}
	return filepath.WalkDir(from, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if !strings.Contains(rel, string(filepath.Separator)) && skip[rel] {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		to := filepath.Join(dir, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if err := os.Link(path, to); err == nil {
			return nil
		}
		in, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("copying the shown probe: %w", err)
		}
		defer in.Close()
		out, err := os.Create(to)
		if err != nil {
			return fmt.Errorf("copying the shown probe: %w", err)
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return fmt.Errorf("copying the shown probe: %w", err)
		}
		return out.Close()
	})
}

// probeStarved reads whether the generator was starved of CPU during the
// probe's measured phase, and its run-queue wait share.
func probeStarved(s *analysis.Summary, measure string) (bool, float64) {
	if s.Validity == nil {
		return false, 0
	}
	for _, pv := range s.Validity.Phases {
		if pv.Phase == measure {
			return pv.Starved, pv.RunQueuePct
		}
	}
	return false, 0
}

func probeNote(p search.Probe) string {
	var notes []string
	if p.GeneratorSaturated {
		notes = append(notes, "generator saturated")
	} else if !p.Held {
		notes = append(notes, "load not held")
	}
	for _, r := range p.Requirements {
		if r.Judge() != search.Holds {
			notes = append(notes, r.Name+" "+r.Judge().String())
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "; " + strings.Join(notes, "; ")
}

// fmtLoad is a load in its unit: "191.3 req/s", "20 users".
func fmtLoad(l search.Load, unit string) string {
	return strconv.FormatFloat(math.Round(float64(l)*10)/10, 'f', -1, 64) + " " + unit
}

// answerSentence is the console's first line.
func answerSentence(a *search.Answer, interrupted bool) string {
	u := a.Unit
	var s string
	switch a.Outcome {
	case search.GeneratorLimited:
		s = "limited by the load generator at " + fmtLoad(a.At, u) + ": not a capacity of the system"
		if a.Capacity > 0 {
			s += "; it held at least " + fmtLoad(a.Capacity, u)
		}
	case search.Collapsing:
		s = "collapsing at " + fmtLoad(a.At, u) + ": the error rate passed the guard at a load the system had handled (or at the first)"
	case search.BelowMin:
		s = "capacity below the lowest load probed"
		if a.UpperBound > 0 {
			s += " (" + fmtLoad(a.UpperBound, u) + ", limited by " + limitText(a) + ")"
		}
	case search.AboveMax:
		s = "capacity ≥ " + fmtLoad(a.Capacity, u) + " (--max): every probe up to it was good"
	default:
		if a.Capacity == 0 {
			s = "no capacity found: no load probed was shown good"
			if a.UpperBound > 0 {
				s += " (" + fmtLoad(a.UpperBound, u) + " was bad, limited by " + limitText(a) + ")"
			}
			break
		}
		s = "capacity = " + fmtLoad(a.Capacity, u)
		if a.UpperBound == 0 && a.Outcome == search.Budget {
			// stopped before any probe was bad: a lower bound
			s = "capacity ≥ " + fmtLoad(a.Capacity, u)
		}
		if a.UpperBound > 0 {
			s += " [" + fmtLoad(a.Capacity, u) + ", " + fmtLoad(a.UpperBound, u) + ")"
		}
		if a.Below > 0 {
			s += ", the knee in (" + fmtLoad(a.Below, u) + ", " + fmtLoad(a.Capacity, u) + "]"
		}
		if a.UpperBound > 0 || a.LimitedBy != search.NoLimit {
			s += ", limited by " + limitText(a)
		}
		if a.Outcome == search.Budget && !interrupted {
			s += " — not to the resolution: the probe or time budget ran out"
		}
	}
	if interrupted {
		s += " (interrupted: as far as the probes before it show)"
	}
	return s
}

func limitText(a *search.Answer) string {
	if a.LimitedBy == search.RequirementBroke {
		t := a.Requirement
		if a.Marginal {
			t += " (marginal)"
		}
		return t
	}
	return a.LimitedBy.String()
}

// printSearch prints the answer, what saturated first, the USL fit and
// the probes.
func printSearch(w io.Writer, cs *capacity.Search) {
	fmt.Fprintln(w, cs.Sentence)
	if n, m, worst := cs.Starved(); n > 0 {
		fmt.Fprintf(w, "uncertain: the load generator waited for a CPU during %d of %d probes (up to %.0f %% of its runnable time): their times include its own waits; run the search on a machine of its own\n", n, m, worst)
	}
	if bn := cs.Bottleneck; bn != nil {
		what := bn.Component
		if bn.Target != "" && bn.Target != bn.Component {
			what += " (" + bn.Target + ")"
		}
		if bn.Saturated {
			fmt.Fprintf(w, "saturated first: %s %s at %s (%s, %.0f %% of its capacity)\n", what, bn.Resource, fmtLoad(search.Load(bn.Load), cs.Unit), bn.Phase, 100*bn.Utilisation)
		} else {
			fmt.Fprintf(w, "no monitored component saturated (the busiest: %s %s, %.0f %% of its capacity at %s, %s): the limit lies outside what was monitored\n", what, bn.Resource, 100*bn.Utilisation, fmtLoad(search.Load(bn.Load), cs.Unit), bn.Phase)
		}
	} else if len(cs.Probes) > 0 {
		fmt.Fprintln(w, "what saturated first is not known: nothing with a known capacity was monitored (add targets under monitor: in the plan)")
	}
	if u := cs.USL; u != nil {
		fmt.Fprintf(w, "USL fit over the probes: σ = %.4g, κ = %.4g, R² = %.3f", u.Sigma, u.Kappa, u.R2)
		if u.PeakLoad != nil && u.PeakThroughputRPS != nil {
			per := cs.Unit
			if cs.Unit == "req/s" {
				per = "concurrent requests"
			}
			fmt.Fprintf(w, "; predicted peak %.4g req/s at %.4g %s", *u.PeakThroughputRPS, *u.PeakLoad, per)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n%-9s %-7s %10s %10s %8s %-17s  %s\n", "probe", "phase", cs.Unit, "req/s", "err %", "verdict", "requirements")
	for _, p := range cs.Probes {
		var rs []string
		for _, r := range p.Requirements {
			rs = append(rs, fmt.Sprintf("%s: %g %s", r.Expr, math.Round(r.Observed*10)/10, r.Verdict))
		}
		if p.Interrupted {
			rs = []string{"interrupted: not judged"}
		}
		if p.CutShort {
			rs = []string{"cut short by the engine: not judged, run again"}
		}
		v := p.Verdict.String()
		if p.Verdict == capacity.Bad && p.LimitedBy != search.RequirementBroke {
			v += ": " + p.LimitedBy.String()
		}
		fmt.Fprintf(w, "%-9s %-7s %10g %10.1f %8.2f %-17s  %s\n", p.Dir, p.Phase, math.Round(p.Load*10)/10, p.ThroughputRPS, p.ErrorPct, v, strings.Join(rs, "; "))
	}
}
