package engine

import (
	"math"
	"sync/atomic"
	"time"
)

// paceEpoch is one pacing schedule (a pacing load, or one pacing step):
// from at, user v starts one iteration every pace, the users staggered
// evenly over the first pace — user v's slot k is at + v·pace/total +
// k·pace.
//
// A user that overruns its pace does not skip the slots it missed: it
// starts them one after the other, each timed from its own slot, until it
// has caught up (wrk2's rule). A stall therefore shows in the percentiles
// as it would to the slots' real users, instead of vanishing with the
// slots (coordinated omission). Slots due more than a pace before the
// epoch's end (the load's end, the step's end, an interrupt, the user
// removed) and still not started are missed: counted like the open model's
// drops, and the phase's planned against started iterations says how many.
type paceEpoch struct {
	pace  time.Duration
	at    time.Time
	total int
	// started counts the slots users started; missed the slots due and
	// not started when the epoch closed (the group's mu).
	started atomic.Int64
	missed  atomic.Int64
	closed  bool
}

// offset is user idx's stagger within the first pace.
func (ep *paceEpoch) offset(idx int) time.Duration {
	return time.Duration(float64(ep.pace) * float64(idx) / float64(ep.total))
}

// due is how many of user idx's slots are due before t.
func (ep *paceEpoch) due(idx int, t time.Time) int64 {
	el := t.Sub(ep.at) - ep.offset(idx)
	if el <= 0 {
		return 0
	}
	return int64(math.Ceil(float64(el) / float64(ep.pace)))
}

// setPace starts a new pacing schedule for total users from now, closing
// the current one; users already running keep their place in the new
// schedule from its first slot. It returns the schedule, nil without
// pacing.
func (g *group) setPace(pace time.Duration, total int) *paceEpoch {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	g.closeEpochLocked(now)
	g.ep = nil
	if pace <= 0 {
		return nil
	}
	ep := &paceEpoch{pace: pace, at: now, total: max(total, 1)}
	g.ep = ep
	for _, u := range g.users {
		if u != nil {
			u.slotEp, u.slotNext = ep, 0
		}
	}
	return ep
}

// closeEpoch ends the current pacing schedule now: the slots due and not
// started are missed.
func (g *group) closeEpoch() {
	g.mu.Lock()
	g.closeEpochLocked(time.Now())
	g.mu.Unlock()
}

func (g *group) closeEpochLocked(t time.Time) {
	ep := g.ep
	if ep == nil || ep.closed {
		return
	}
	for _, u := range g.users {
		if u != nil {
			g.leaveEpochLocked(u, t)
		}
	}
	ep.closed = true
}

// leaveEpochLocked counts user u's slots due more than a pace before t and
// not started as missed, and takes it out of the schedule (it stops, or the
// schedule ends). A slot due within the last pace is neither planned nor
// missed: a user still in its previous iteration then is late by less than
// its pace (the open model's queue likewise holds one iteration per user),
// and counting it would make every short run whose last iteration ran a
// little long invalid.
func (g *group) leaveEpochLocked(u *userRun, t time.Time) {
	ep := g.ep
	if ep == nil || ep.closed || u.slotEp != ep {
		return
	}
	if n := ep.due(u.idx, t.Add(-ep.pace)) - u.slotNext; n > 0 {
		ep.missed.Add(n)
		g.wl.dropped.Add(n)
	}
	u.slotEp = nil
}

// pace returns how long the user waits before its next iteration under the
// group's pacing (0 without; negative when the slot is past: the user is
// catching up), and sets u.intended to that iteration's slot.
func (u *userRun) pace() time.Duration {
	g := u.g
	g.mu.Lock()
	ep := g.ep
	if ep == nil {
		g.mu.Unlock()
		u.paceEp = nil
		return 0
	}
	var k int64
	if u.slotEp == ep {
		k = u.slotNext // the next slot, even a past one: none is skipped
	} else {
		// The user joins the schedule (it started, or the schedule is
		// new to it): its first slot is the next one.
		k = ep.due(u.idx, time.Now())
		u.slotEp = ep
	}
	u.slotNext = k + 1
	g.mu.Unlock()
	u.paceEp = ep
	u.intended = ep.at.Add(ep.offset(u.idx) + time.Duration(k)*ep.pace)
	return time.Until(u.intended)
}

// pacedPhase records a pacing phase's slots in run.json: planned (due
// before its end) against started; the rest were missed (dropped).
func (e *Engine) pacedPhase(idx int, ep *paceEpoch) {
	if ep == nil {
		return
	}
	started := ep.started.Load()
	e.mu.Lock()
	p := &e.info.Phases[idx]
	p.Paced = true
	p.Planned, p.Started = started+ep.missed.Load(), started
	e.mu.Unlock()
}
