package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/wake"
)

// userRun is one closed-model user of a group. A user that waits — its
// ramp-up delay, its pacing, a think step at the top level of the scenario —
// holds no goroutine: it arms its timer (one per user, made on its first
// wait and reset for every later one), and its goroutine returns. When the
// timer fires, the user continues on the timer's goroutine from the position
// it saved (pos). So 100,000 users thinking cost their state on the heap and
// no stacks; only users whose requests are in flight have goroutines.
//
// A think step nested in a transaction, a loop, an if or any other construct
// still sleeps on the user's goroutine (its position is a call stack), as do
// the other waits (until's interval, rendezvous).
//
// The user is also its own stop context (vu.stopCtx): stop ends it, cutting
// a wait short, while a request in flight completes (it runs under the
// group's ctx). Exactly one goroutine runs the user at a time: parked (under
// mu) hands the user from a goroutine to the timer and back.
type userRun struct {
	g     *group
	v     *vu // made when the user starts (after its ramp-up delay)
	timer *time.Timer
	// paced is the user's entry in the run's queue of paced waits
	// (pacing needs the instant: latency counts from it), made by its
	// first one: users that think instead carry 8 bytes, not 40.
	paced      *wake.Entry
	idx        int // global user index, 0-based
	iterations int // iterations to run; 0: no limit
	n          int // iterations started
	// pos is where the user continues: posNext before a new iteration,
	// posPaced when its pacing wait is over (the iteration starts at
	// intended), or 1 + the index of the scenario step to run next.
	pos      int
	intended time.Time
	mu       sync.Mutex
	parked   bool          // waiting on timer or paced, no goroutine runs the user (mu)
	done     chan struct{} // made on demand by Done, closed by stop (mu)
	stopped  atomic.Bool
	active   bool // counted in the workload's active users
	starting bool // started through the group's start window, not yet out of it
	// slotEp is the pacing schedule the user is in and slotNext its next
	// slot there (the group's mu); paceEp the schedule of the slot it
	// runs (its own goroutine).
	slotEp   *paceEpoch
	slotNext int64
	paceEp   *paceEpoch
}

const (
	posNext  = 0
	posPaced = -1
)

// The user is the stop context of its vu.
var _ context.Context = (*userRun)(nil)

func (u *userRun) Deadline() (time.Time, bool) { return time.Time{}, false }
func (u *userRun) Value(any) any               { return nil }

// Err is context.Canceled once the user was stopped.
func (u *userRun) Err() error {
	if u.stopped.Load() {
		return context.Canceled
	}
	return nil
}

// Done returns a channel closed when the user is stopped (made on the
// first call: only waits that block a goroutine need it).
func (u *userRun) Done() <-chan struct{} {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done == nil {
		u.done = make(chan struct{})
		if u.stopped.Load() {
			close(u.done)
		}
	}
	return u.done
}

// stop ends the user: a waiting user continues at once (and ends), a
// running one stops at its next step that may stop (a request in flight
// completes). stop may run the end of a waiting user on the caller's
// goroutine: it must not hold locks the user's end takes (u.mu, the group's
// aliveMu).
func (u *userRun) stop() {
	u.mu.Lock()
	if u.stopped.Load() {
		u.mu.Unlock()
		return
	}
	u.stopped.Store(true)
	if u.done != nil {
		close(u.done)
	}
	resume := u.parked
	if resume {
		u.parked = false
		// Should a callback run anyway, it finds parked false.
		if u.timer != nil {
			u.timer.Stop()
		}
		if u.paced != nil {
			u.g.wl.e.paced.Cancel(u.paced)
		}
	}
	u.mu.Unlock()
	if !resume {
		return
	}
	if len(u.g.wl.prog.teardown) > 0 {
		go u.run() // the teardown's requests run on the user's own goroutine
		return
	}
	// Nothing left to run but the user's end (closing its connections):
	// on this goroutine, so that stopping 100,000 waiting users does not
	// start 100,000 goroutines at once.
	u.run()
}

// started leaves the group's start window (startUsers).
func (u *userRun) started() {
	if u.starting {
		u.starting = false
		u.g.wl.e.inStart.Add(-1)
		select {
		case u.g.startDone <- struct{}{}:
		default: // the window was given up on (slow starts)
		}
	}
}

// park hands the user to its timer for d, or, when at is set (pacing),
// to the run's paced queue until at: Go's timers fire up to 1 ms late, and
// a paced iteration's latency counts from at. It reports false when the
// user was stopped: the caller goes on (and stops) on its own goroutine.
func (u *userRun) park(d time.Duration, at time.Time) bool {
	var q *wake.Queue
	if !at.IsZero() {
		q = u.g.wl.e.pacedQueue() // nil once the run is over: the timer
	}
	u.started()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped.Load() {
		return false
	}
	u.parked = true
	switch {
	case q != nil:
		if u.paced == nil {
			u.paced = &wake.Entry{F: u.wake}
		}
		q.Schedule(u.paced, at)
	case u.timer == nil:
		u.timer = time.AfterFunc(d, u.wake)
	default:
		u.timer.Reset(d)
	}
	return true
}

// wake is the timer's callback: the user continues on its goroutine.
func (u *userRun) wake() {
	u.mu.Lock()
	if !u.parked {
		u.mu.Unlock() // stop resumed the user already
		return
	}
	u.parked = false
	u.mu.Unlock()
	u.run()
}

// run runs the user from where it stopped until it parks or ends.
func (u *userRun) run() {
	g := u.g
	wl := g.wl
	if u.v == nil {
		if u.Err() != nil {
			u.finish() // stopped before it started
			return
		}
		v := newVU(u.idx+1, wl, wl.e)
		v.stopCtx = u
		u.v = v
		if err := v.runSetup(g.ctx); err != nil {
			if errors.Is(err, errDataExhausted) {
				g.once.Do(func() { close(g.dataOut) })
			} else if g.ctx.Err() == nil {
				wl.e.setupFailed(err)
			}
			u.finish()
			return
		}
		u.active = true
		wl.active.Add(1)
		wl.e.activeUsers.Add(1)
	}
	v := u.v
	for {
		if u.pos == posNext {
			if u.iterations > 0 && u.n >= u.iterations || u.Err() != nil {
				break
			}
			u.intended = time.Time{}
			if d := u.pace(); d > 0 {
				u.pos = posPaced
				if u.park(d, u.intended) {
					return
				}
				break // stopped
			}
			u.pos = posPaced
		}
		if u.pos == posPaced {
			if u.Err() != nil {
				break // stopped while it waited for its pacing
			}
			u.n++
			if u.paceEp != nil {
				u.paceEp.started.Add(1)
			}
			if err := v.beginIteration(u.intended); err != nil {
				if u.ended(err) {
					break
				}
				u.pos = posNext
				continue
			}
			u.pos = 1
		}
		parked, err := u.steps()
		if parked {
			return
		}
		u.started()
		u.pos = posNext
		if u.ended(v.endIteration(err)) {
			break
		}
	}
	if g.ctx.Err() == nil && len(v.prog.teardown) > 0 {
		_ = v.runTeardown(g.ctx)
	}
	u.finish()
}

// steps runs the scenario's top-level steps from u.pos. At a think step it
// parks the user (parked true: the goroutine must return at once); err is
// what ended the iteration otherwise.
func (u *userRun) steps() (parked bool, err error) {
	v := u.v
	sc := v.prog.scenario
	if u.pos > 1 {
		// Back from a think: one cut short by a stop ends the iteration.
		if err := u.Err(); err != nil {
			return false, err
		}
	}
	for i := u.pos - 1; i < len(sc); i++ {
		if t, ok := sc[i].(*thinkStep); ok {
			if d := thinkTime(&t.think, v); d > 0 {
				u.pos = i + 2
				if u.park(d, time.Time{}) {
					return true, nil
				}
			}
			if err := u.Err(); err != nil {
				return false, err // the think was cut short: the iteration is abandoned
			}
			continue
		}
		if err := sc[i].run(u.g.ctx, v, true, &v.sample); err != nil {
			return false, err
		}
	}
	return false, nil
}

// ended applies an iteration's outcome to the user: true when it stops
// (data ran out, the run ended, on_fail stop_user or stop_run).
func (u *userRun) ended(err error) bool {
	g := u.g
	if errors.Is(err, errDataExhausted) {
		g.once.Do(func() { close(g.dataOut) })
		return true
	}
	return err != nil && (g.ctx.Err() != nil || errors.Is(err, errStopUser) || errors.Is(err, errStopRun))
}

// finish ends the user: its counters, connections and the group's
// accounting.
func (u *userRun) finish() {
	u.started()
	g := u.g
	if u.active {
		u.active = false
		g.wl.active.Add(-1)
		g.wl.e.activeUsers.Add(-1)
	}
	if u.v != nil {
		u.v.close()
		u.v = nil // a finished user keeps nothing alive
	}
	if u.timer != nil {
		u.timer.Stop()
	}
	g.aliveMu.Lock()
	g.alive--
	if g.alive == 0 && !g.doneSet {
		g.doneSet = true
		close(g.allDone)
	}
	g.aliveMu.Unlock()
	g.wg.Done()
}
