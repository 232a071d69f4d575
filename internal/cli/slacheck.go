package cli

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/plan"
)

// checkSLANames checks every requirement's label, workload and phase
// against the names the plan's run will record, before the first request:
// a typo in a selector is a plan error naming its line, not a requirement
// found unjudgeable after the load was sent.
func checkSLANames(p *plan.Plan) error {
	if len(p.SLA) == 0 {
		return nil
	}
	names, err := engine.PlanNames(p)
	if err != nil {
		return err
	}
	var errs plan.Errors
	for _, s := range p.SLA {
		e, err := sla.Parse(s.Expr)
		if err != nil {
			continue // syntax was checked at load
		}
		if e.Metric == sla.Checks {
			// A checks requirement selects a check by name, over the run.
			checks := p.CheckNames()
			switch {
			case len(checks) == 0:
				errs = append(errs, plan.Error{File: p.File, Pos: s.Pos, Msg: "sla: the plan has no checks to count"})
			case e.Label != "" && !slices.Contains(checks, e.Label):
				errs = append(errs, plan.Error{File: p.File, Pos: s.Pos,
					Msg: fmt.Sprintf("sla: no check named %q (checks: %s)", e.Label, strings.Join(checks, ", "))})
			case e.Phase != "":
				// Checks are counted per phase: the phase must exist.
				ph := *e
				ph.Label = ""
				if err := ph.CheckNames(names.Workloads, names.Labels, names.Phases); err != nil {
					errs = append(errs, plan.Error{File: p.File, Pos: s.Pos, Msg: "sla: " + err.Error()})
				} else if s.AbortOnFail {
					errs = append(errs, plan.Error{File: p.File, Pos: s.Pos,
						Msg: "sla: abort_on_fail judges the run so far, so it cannot apply to a requirement `during` one phase"})
				}
			}
			continue
		}
		if e.IsServer() {
			// Judged on the access logs attached to the run, after it:
			// the servers it names must be attached, and it cannot stop
			// the run early.
			err := e.CheckServers(attachedServers(p))
			if err == nil {
				err = e.CheckNames(nil, nil, names.Phases)
			}
			if err == nil && s.AbortOnFail {
				err = fmt.Errorf("abort_on_fail: %s is read from the servers' logs after the run, so it cannot stop the run", e.Metric)
			}
			if err != nil {
				errs = append(errs, plan.Error{File: p.File, Pos: s.Pos, Msg: "sla: " + err.Error()})
			}
			continue
		}
		if err := e.CheckNames(names.Workloads, names.Labels, names.Phases); err != nil {
			errs = append(errs, plan.Error{File: p.File, Pos: s.Pos, Msg: "sla: " + err.Error()})
			continue
		}
		if s.AbortOnFail && e.Phase != "" {
			errs = append(errs, plan.Error{File: p.File, Pos: s.Pos,
				Msg: "sla: abort_on_fail judges the run so far, so it cannot apply to a requirement `during` one phase"})
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("the plan has %d problem(s):\n%w", len(errs), errs)
	}
	return nil
}

// abortPrefix starts the stop reason of a run an abort_on_fail requirement
// stopped.
const abortPrefix = "abort_on_fail: "

// abortJudge evaluates the abort_on_fail requirements every second over the
// samples so far (the engine calls it from its collector with each
// finished second). It returns why the run must stop, or "".
type abortJudge struct {
	start     time.Time
	exprs     []*sla.Expr
	graces    []time.Duration
	run       map[analysis.LabelKey]*metrics.Agg
	total     *metrics.Agg
	workloads int
}

// newAbortJudge returns nil when no requirement has abort_on_fail.
func newAbortJudge(p *plan.Plan) *abortJudge {
	j := &abortJudge{run: map[analysis.LabelKey]*metrics.Agg{}, total: metrics.NewAgg(), workloads: len(p.Workloads)}
	for _, s := range p.SLA {
		if !s.AbortOnFail {
			continue
		}
		e, err := sla.Parse(s.Expr)
		if err != nil {
			continue
		}
		j.exprs = append(j.exprs, e)
		j.graces = append(j.graces, s.Grace)
	}
	if len(j.exprs) == 0 {
		return nil
	}
	return j
}

// judge adds one second's aggregates and judges; elapsed is the time since
// the load started.
func (j *abortJudge) judge(iv *metrics.Interval, elapsed time.Duration) string {
	for k, a := range iv.Aggs {
		lk := analysis.LabelKey{Workload: k.Workload, Label: k.Label, Tx: k.Tx}
		dst := j.run[lk]
		if dst == nil {
			dst = metrics.NewAgg()
			j.run[lk] = dst
		}
		dst.Merge(a)
		if !k.Tx {
			j.total.Merge(a)
		}
	}
	name := func(k analysis.LabelKey) string {
		if j.workloads > 1 {
			return k.Workload + ": " + k.Label
		}
		return k.Label
	}
	for i, e := range j.exprs {
		if elapsed < j.graces[i] {
			continue
		}
		obs, ok := analysis.Observe(e, j.run, j.total, elapsed, name)
		if ok && !e.Holds(obs) {
			return fmt.Sprintf("%s%s broken after %s (observed %g%s)", abortPrefix, e.Text,
				elapsed.Round(time.Second), obs, e.Unit())
		}
	}
	return ""
}
