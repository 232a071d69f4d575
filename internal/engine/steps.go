package engine

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/plan/expr"
)

// step is one compiled plan step: an HTTP request, a think time, or a flow
// construct holding other steps. The user loop calls run and knows nothing
// else about the step, so a new kind of step (another protocol, a new flow
// construct) is a new type, not a new case in a switch. measured is false
// in setup and teardown; s is the user's reused sample.
//
// run returns nil to go on with the next step, or an error that ends the
// iteration: the context's error, errSetupFailed, errDataExhausted, or one
// of the on_fail outcomes (errNextIteration, errStopUser, errStopRun).
type step interface {
	run(ctx context.Context, v *vu, measured bool, s *core.Sample) error
}

// Outcomes of on_fail. They travel up the step tree as errors; the user
// loop turns them into a skipped iteration, a stopped user or a stopped
// run.
var (
	errNextIteration = errors.New("on_fail: next_iteration")
	errStopUser      = errors.New("on_fail: stop_user")
	errStopRun       = errors.New("on_fail: stop_run")
)

// isOutcome reports whether err is an on_fail outcome (the step sequence
// ended on purpose, so enclosing transactions still record their time).
func isOutcome(err error) bool {
	return errors.Is(err, errNextIteration) || errors.Is(err, errStopUser) || errors.Is(err, errStopRun)
}

func outcome(mode string) error {
	switch mode {
	case plan.OnFailNextIteration:
		return errNextIteration
	case plan.OnFailStopUser:
		return errStopUser
	case plan.OnFailStopRun:
		return errStopRun
	}
	return nil
}

// runSteps runs steps in order until one returns an error.
func runSteps(ctx context.Context, v *vu, steps []step, measured bool, s *core.Sample) error {
	for _, st := range steps {
		if err := st.run(ctx, v, measured, s); err != nil {
			return err
		}
	}
	return nil
}

// run sends the request and applies its on_fail rule.
func (q *request) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	if err := v.request(ctx, q, measured, s); err != nil {
		return err
	}
	return q.onFailOutcome(v, measured, s)
}

// onFailOutcome is the on_fail outcome of a request's (or gRPC call's)
// sample s: nil to go on.
func (q *request) onFailOutcome(v *vu, measured bool, s *core.Sample) error {
	if !measured || s.Class == core.ErrNone {
		return nil
	}
	mode := q.onFail
	if mode == "" && v.extractFailed {
		// A request built from an empty variable is not a measurement.
		mode = plan.OnFailNextIteration
	}
	return outcome(mode)
}

// thinkStep pauses the user.
type thinkStep struct{ think plan.Think }

func (t *thinkStep) run(_ context.Context, v *vu, _ bool, _ *core.Sample) error {
	return sleep(v.stopCtx, thinkTime(&t.think, v))
}

// txStep groups steps under one label whose time is the sum of its
// requests' times (JMeter's Transaction Controller without timers); it
// fails if one of them fails. Transactions nest: an inner transaction's
// time also counts in the outer one.
type txStep struct {
	label string
	steps []step
}

func (t *txStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	outer := v.tx
	v.tx = txState{active: true}
	err := runSteps(ctx, v, t.steps, measured, s)
	in := v.tx
	if measured && (err == nil || isOutcome(err)) && in.start != 0 {
		tx := core.Sample{Label: t.label, Intended: in.start, Start: in.start, Elapsed: in.elapsed,
			Service: in.elapsed, Thread: v.thread, Transaction: true, Class: in.failClass,
			Status: in.failStatus, Message: in.failMsg,
			GroupThreads: int32(v.w.active.Load()), AllThreads: int32(v.w.e.activeUsers.Load())}
		v.w.e.record(v, t.label, true, &tx)
	}
	v.tx = outer
	if outer.active && in.start != 0 {
		if v.tx.start == 0 {
			v.tx.start = in.start
		}
		v.tx.elapsed += in.elapsed
		if in.hasFail && !v.tx.hasFail {
			v.tx.hasFail, v.tx.failClass, v.tx.failStatus, v.tx.failMsg = true, in.failClass, in.failStatus, in.failMsg
		}
	}
	return err
}

// loopStep repeats its steps count times, or while a condition holds (at
// most max times).
type loopStep struct {
	count int
	while *expr.Expr
	steps []step
}

func (l *loopStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	for n := 0; n < l.count; n++ {
		if l.while != nil && !l.while.Bool(v) {
			return nil
		}
		if err := runSteps(ctx, v, l.steps, measured, s); err != nil {
			return err
		}
	}
	return nil
}

// ifStep runs one of two step lists.
type ifStep struct {
	cond       *expr.Expr
	then, els  []step
	traceLabel string
}

func (f *ifStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	ok := f.cond.Bool(v)
	v.traceBranch(f.traceLabel, ok)
	if ok {
		return runSteps(ctx, v, f.then, measured, s)
	}
	return runSteps(ctx, v, f.els, measured, s)
}

// chooseStep runs one branch picked at random by weight.
type chooseStep struct {
	cum      []float64 // cumulative weights
	branches [][]step
	names    []string
}

func (c *chooseStep) pick(r float64) int {
	x := r * c.cum[len(c.cum)-1]
	for i, w := range c.cum {
		if x < w {
			return i
		}
	}
	return len(c.cum) - 1
}

func (c *chooseStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	i := c.pick(v.rng.Float64())
	v.traceBranch(c.names[i], true)
	return runSteps(ctx, v, c.branches[i], measured, s)
}

// foreachStep runs its steps once per item.
type foreachStep struct {
	items []string // literal list
	from  int      // else: slot of a variable holding a JSON array
	as    int      // slot of the item variable
	max   int
	steps []step
}

func (f *foreachStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	items := f.items
	if items == nil {
		items = listItems(v.vars[f.from])
	}
	if f.max > 0 && len(items) > f.max {
		items = items[:f.max]
	}
	for _, it := range items {
		v.vars[f.as] = it
		if err := runSteps(ctx, v, f.steps, measured, s); err != nil {
			return err
		}
	}
	return nil
}

// listItems reads a list variable: a JSON array (what extract all: true
// stores), or one value.
func listItems(val string) []string {
	if val == "" {
		return nil
	}
	if val[0] != '[' {
		return []string{val}
	}
	var arr []any
	if json.Unmarshal([]byte(val), &arr) != nil {
		return []string{val}
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		out[i] = expr.Text(x)
	}
	return out
}

// untilStep polls: it repeats its steps every interval until the
// condition holds or the timeout passes, and records the whole wait under
// its own label.
type untilStep struct {
	label    string
	cond     *expr.Expr
	interval time.Duration
	timeout  time.Duration
	steps    []step
	onFail   string
}

func (u *untilStep) run(ctx context.Context, v *vu, measured bool, s *core.Sample) error {
	start := time.Now()
	deadline := start.Add(u.timeout)
	polls := 0
	for {
		polls++
		if err := runSteps(ctx, v, u.steps, measured, s); err != nil {
			return err
		}
		done := u.cond.Bool(v)
		if done || time.Now().Add(u.interval).After(deadline) {
			if measured {
				w := core.Sample{Label: u.label, Intended: start.UnixNano(), Start: start.UnixNano(),
					Elapsed: time.Since(start), Thread: v.thread, Transaction: true,
					GroupThreads: int32(v.w.active.Load()), AllThreads: int32(v.w.e.activeUsers.Load())}
				w.Service = w.Elapsed
				if !done {
					w.Class = core.ErrCheck
					w.Message = "until " + u.label + ": not done after " + u.timeout.String() + " (" + strconv.Itoa(polls) + " polls)"
				}
				v.w.e.record(v, u.label, true, &w)
			}
			if done {
				return nil
			}
			return outcome(u.onFail)
		}
		if err := sleep(v.stopCtx, u.interval); err != nil {
			return err
		}
	}
}

// rendezvousStep holds users until users of them have arrived (or the
// timeout passes), then releases them together.
type rendezvousStep struct {
	users   int
	timeout time.Duration
	mu      sync.Mutex
	waiting int
	release chan struct{}
}

func (r *rendezvousStep) run(_ context.Context, v *vu, _ bool, _ *core.Sample) error {
	r.mu.Lock()
	if r.release == nil {
		r.release = make(chan struct{})
	}
	r.waiting++
	if r.waiting >= r.users {
		close(r.release)
		r.release, r.waiting = nil, 0
		r.mu.Unlock()
		return nil
	}
	ch := r.release
	r.mu.Unlock()
	t := time.NewTimer(r.timeout)
	defer t.Stop()
	select {
	case <-ch:
		return nil
	case <-t.C:
	case <-v.stopCtx.Done():
	}
	r.mu.Lock()
	if r.release == ch {
		r.waiting-- // left without the group
	}
	r.mu.Unlock()
	return v.stopCtx.Err()
}

// trendStep records a rendered value as a time under its own label (the
// plan's trend: k6's custom Trend).
type trendStep struct {
	label string
	value tmpl
}

func (t *trendStep) run(_ context.Context, v *vu, measured bool, _ *core.Sample) error {
	if !measured {
		return nil
	}
	raw := v.render(&t.value)
	d, ok := trendTime(raw)
	now := time.Now().UnixNano()
	s := core.Sample{Label: t.label, Intended: now, Start: now, Elapsed: d, Service: d, Thread: v.thread, Transaction: true,
		GroupThreads: int32(v.w.active.Load()), AllThreads: int32(v.w.e.activeUsers.Load())}
	if !ok {
		s.Elapsed, s.Service = 0, 0
		s.Class = core.ErrCheck
		// The value itself is not quoted: it may come from a secret.
		s.Message = "trend " + t.label + ": the value is not a time (milliseconds, or a duration such as 120ms)"
	}
	v.w.e.record(v, t.label, true, &s)
	return nil
}

// trendTime reads a trend's value: a number of milliseconds or a Go
// duration; false for anything else or a negative time.
func trendTime(raw string) (time.Duration, bool) {
	raw = strings.TrimSpace(raw)
	if f, err := strconv.ParseFloat(raw, 64); err == nil {
		if f < 0 || math.IsNaN(f) || f > float64(math.MaxInt64/int64(time.Millisecond)) {
			return 0, false
		}
		return time.Duration(f * float64(time.Millisecond)), true
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}
