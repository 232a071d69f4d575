package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/wake"
)

// run drives the workload's load model and returns why it stopped early
// ("" when it ran to the end).
func (wl *workload) run(ctx context.Context) string {
	l := &wl.spec.Load
	switch {
	case len(l.Steps) > 0:
		return wl.runSteps(ctx)
	case len(l.Stages) > 0 && l.Stages[0].ByUsers:
		return wl.runUserStages(ctx)
	case float64(l.Rate) > 0 || len(l.Stages) > 0:
		name := wl.e.phaseName(wl, "")
		a := newArrivals(float64(l.Rate), l.Duration, l.Stages)
		if l.RampDown > 0 {
			a.rampDown(l.RampDown)
		}
		return wl.runOpen(ctx, name, a, l.MaxUsers, float64(l.Rate))
	default:
		name := wl.e.phaseName(wl, "")
		idx := wl.e.startPhase(wl, name, l.Users, 0, l.RampUp)
		g := wl.newGroup(ctx)
		ep := g.setPace(l.Pace, l.Users)
		g.add(l.Users, 0, l.RampUp, l.Iterations)
		// The load ends on the common schedule (a late generator ends
		// with the others); at least 1ns, as 0 means "no time limit".
		d := max(time.Until(wl.e.anchor.Add(l.StartAfter+l.Duration)), time.Nanosecond)
		var stopped string
		if l.RampDown > 0 && l.Iterations == 0 {
			stopped = g.wait(d, false)
			if stopped == "" {
				stopped = g.rampDown(l.Users, 0, l.RampDown)
			}
			g.stop()
		} else {
			stopped = g.runFor(d, l.Iterations > 0)
		}
		stopped = wl.cutNote(stopped)
		wl.e.pacedPhase(idx, ep)
		wl.e.endPhase(idx, stopped)
		return stopped
	}
}

// group is the set of closed-model users of a workload. Users persist across
// steps; a step changes how many run.
type group struct {
	wl       *workload
	ctx      context.Context // run context: requests finish unless this ends
	unwatch  func() bool     // stops the watch that stops the users when ctx ends
	mu       sync.Mutex
	users    []*userRun // by global index, as they start (only this segment's are non-nil)
	stopping bool       // stopAll ran: users added now start stopped (mu)
	stopped  chan struct{}
	// next is the global index of the next user to add: users [0, next)
	// run or are due to start (a starter makes each when its time comes).
	next     int
	starters map[*starter]bool // starters still adding users (mu)
	wg       sync.WaitGroup
	dataOut  chan struct{}
	once     sync.Once
	alive    int // users started or due to start, and not yet finished
	aliveMu  sync.Mutex
	allDone  chan struct{}
	doneSet  bool // allDone closed (guarded by aliveMu)
	// ep is the current pacing schedule (nil: no pacing), mu.
	ep *paceEpoch
	// startDone receives a token from each user started through the
	// start window (startUsers) when its start is over.
	startDone chan struct{}
}

func (wl *workload) newGroup(ctx context.Context) *group {
	g := &group{wl: wl, ctx: ctx, dataOut: make(chan struct{}), allDone: make(chan struct{}),
		startDone: make(chan struct{}, startWindow), stopped: make(chan struct{}), starters: map[*starter]bool{}}
	// The run's end (interrupt, graceful_stop) stops every user: a waiting
	// one at once.
	g.unwatch = context.AfterFunc(ctx, g.stopAll)
	return g
}

// stopAll stops every user of the group (think time and pacing cut short,
// requests in flight finish), and any added later; users not started yet
// never start. Their missed pacing slots are counted.
func (g *group) stopAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopping {
		g.stopping = true
		close(g.stopped)
	}
	g.closeEpochLocked(time.Now())
	for _, u := range g.users {
		if u != nil {
			u.stop()
		}
	}
}

// starter adds users [from, to) of a step, each when its ramp-up delay
// comes: a user exists from its start on, so 10⁶ users ramping up over an
// hour hold nothing before their turn. limit lowers when a later step
// removes users the starter has not made yet (mu).
type starter struct {
	from, to, limit int
	begin           time.Time
	ramp            time.Duration
	rampFrom        int // the ramp counts from this user (the step's from)
	iterations      int
}

// add sets the group to total global users: users [next, total) start,
// staggered over ramp from user from on; users beyond total stop after
// their iteration. Global user v belongs to segment v mod N.
func (g *group) add(total, from int, ramp time.Duration, iterations int) {
	e := g.wl.e
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	for v := total; v < len(g.users); v++ {
		if u := g.users[v]; u != nil {
			g.leaveEpochLocked(u, now)
			u.stop()
			g.users[v] = nil
		}
	}
	if len(g.users) > total {
		g.users = g.users[:total]
	}
	for s := range g.starters {
		s.limit = min(s.limit, total)
	}
	if total <= g.next {
		g.next = total
		return
	}
	sp := stripe{int64(e.cfg.Segment), int64(e.cfg.Segments)}
	n := int(sp.count(int64(g.next), int64(total)))
	s := &starter{from: g.next, to: total, limit: total, begin: now, ramp: ramp, rampFrom: from, iterations: iterations}
	g.next = total
	if n == 0 {
		return
	}
	// Counted alive now: the group is not done while users are due.
	g.wg.Add(n)
	g.aliveMu.Lock()
	g.alive += n
	g.aliveMu.Unlock()
	g.starters[s] = true
	go g.start(s)
}

// startWindow is how many users start lets be in their start at once.
const startWindow = 64

// start makes and starts the users of s, each at its ramp-up delay. Users
// without a delay (or past it) start all at once, as fast as the process
// can, but at most startWindow of them in their start at a time — from their
// goroutine's creation to their first wait (think, pacing), the end of
// their first iteration or their end, whichever comes first. When no start
// ends while the CPU is free (the starts wait for the server, not for the
// process) for a millisecond, another window opens: the starts are never
// slower than startWindow users a millisecond.
//
// Without the window, n users starting at once are n goroutines at once,
// each with the stack its first connection needs (8 KiB: net's dial path
// alone is 2.6 KiB deep) and a goroutine descriptor the runtime never frees.
// The CPU does not start them faster anyway (~100 µs each on one core of
// this machine): the scheduler runs every new goroutine before it polls the
// network, so the users piled up waiting for connections that were already
// there.
func (g *group) start(s *starter) {
	e := g.wl.e
	sp := stripe{int64(e.cfg.Segment), int64(e.cfg.Segments)}
	inStart := 0
	idle := 0 // rounds without a start ending while the CPU was free
	var t *time.Timer
	wait := func(d time.Duration) bool {
		if t == nil {
			t = time.NewTimer(d)
		} else {
			t.Reset(d)
		}
		select {
		case <-t.C:
			return true
		case <-g.stopped:
			return false
		}
	}
	v := int(sp.next(int64(s.from)))
	defer func() {
		if t != nil {
			t.Stop()
		}
		g.mu.Lock()
		delete(g.starters, s)
		g.mu.Unlock()
		// The users not made (removed by a later step, or the group
		// stopped) are no longer due.
		if n := int(sp.count(int64(v), int64(s.to))); n > 0 {
			g.aliveMu.Lock()
			g.alive -= n
			if g.alive == 0 && !g.doneSet {
				g.doneSet = true
				close(g.allDone)
			}
			g.aliveMu.Unlock()
			g.wg.Add(-n)
		}
	}()
	for ; v < s.to; v += int(sp.n) {
		var delay time.Duration
		if s.to > s.rampFrom && s.ramp > 0 {
			delay = time.Duration(float64(s.ramp) * float64(v-s.rampFrom) / float64(s.to-s.rampFrom))
		}
		if delay > 0 {
			if d := time.Until(s.begin.Add(delay)); d > 0 && !wait(d) {
				return
			}
		}
		// Users whose ramp-up delay is past (a ramp too steep for the
		// process) start through the window too.
		for inStart >= startWindow {
			select {
			case <-g.startDone:
				inStart--
				idle = 0
				continue
			case <-g.stopped:
				return
			default:
			}
			// Let whatever is runnable run first (Gosched puts this
			// goroutine behind it), then let the runtime poll the
			// network while it sleeps.
			runtime.Gosched()
			runtime.Gosched()
			if t == nil {
				t = time.NewTimer(startPoll)
			} else {
				t.Reset(startPoll)
			}
			polled := time.Now()
			select {
			case <-g.startDone:
				inStart--
				idle = 0
			case <-t.C:
				// Only a punctual timer says the CPU is free: a late
				// one means this process waited for a core (its own
				// starts, or other processes), and more goroutines
				// would wait for it too.
				if time.Since(polled) > 2*startPoll {
					break
				}
				if idle++; time.Duration(idle)*startPoll >= time.Millisecond {
					inStart, idle = 0, 0 // the server is slow: another window
					e.startWindows.Add(1)
				}
			case <-g.stopped:
				return
			}
		}
		g.mu.Lock()
		if g.stopping || v >= s.limit {
			g.mu.Unlock()
			return
		}
		u := &userRun{g: g, idx: v, iterations: s.iterations}
		for len(g.users) <= v {
			g.users = append(g.users, nil)
		}
		g.users[v] = u
		g.mu.Unlock()
		u.starting = true
		inStart++
		if n := e.inStart.Add(1); n > e.startPeak.Load() {
			storeMax(&e.startPeak, n)
		}
		go u.run()
	}
}

// storeMax raises a to n if n is higher.
func storeMax(a *atomic.Int64, n int64) {
	for {
		old := a.Load()
		if n <= old || a.CompareAndSwap(old, n) {
			return
		}
	}
}

// startPoll is how long start waits for a start to end before it
// counts a round without one.
const startPoll = 100 * time.Microsecond

// runFor waits for d (or until every user finished its iterations when
// untilDone), data exhaustion or cancellation, then stops the users and
// waits for them. It returns why it stopped early.
func (g *group) runFor(d time.Duration, untilDone bool) string {
	stopped := g.wait(d, untilDone)
	g.stop()
	return stopped
}

// stop ends every user (think time cut short, requests in flight finish)
// and waits for them.
func (g *group) stop() {
	g.unwatch()
	g.stopAll()
	g.wg.Wait()
}

// wait blocks for one step of duration d without stopping the users.
func (g *group) wait(d time.Duration, untilDone bool) string {
	var timer <-chan time.Time
	if !untilDone && d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	g.aliveMu.Lock()
	none := g.alive == 0
	g.aliveMu.Unlock()
	if none {
		return ""
	}
	select {
	case <-timer:
		return ""
	case <-g.allDone:
		return ""
	case <-g.dataOut:
		return "data exhausted"
	case <-g.ctx.Done():
		return "interrupted"
	}
}

// rampDown lowers the group from users to target users, one user at a
// time, evenly over d, the last at its end (the users above the count stop
// after their iteration). It returns why it stopped early.
func (g *group) rampDown(users, target int, d time.Duration) string {
	if users <= target {
		return g.wait(d, false)
	}
	step := d / time.Duration(users-target)
	start := time.Now()
	for k := users - 1; k >= target; k-- {
		// User k+1 stops at (users−k)/(users−target) of d. A stop
		// already due (this loop behind on a busy machine) waits 1 ns:
		// wait takes 0 for "no time limit", and the ramp-down then held
		// every user until graceful_stop ran out (30 s, "interrupted";
		// TestUserStagesAndRampDown under two CPU burners, 1 run in 15).
		if why := g.wait(max(time.Until(start.Add(time.Duration(users-k)*step)), time.Nanosecond), false); why != "" {
			return why
		}
		g.add(k, k, 0, 0)
	}
	return ""
}

// runUserStages runs closed-model stages (k6's ramping-vus): each stage
// moves the users linearly from the previous stage's count to its own over
// its duration, and is a phase of its own.
func (wl *workload) runUserStages(ctx context.Context) string {
	l := &wl.spec.Load
	g := wl.newGroup(ctx)
	defer g.stop()
	prev := 0
	for i, st := range l.Stages {
		name := wl.e.phaseName(wl, fmt.Sprintf("stage %d: %d→%d users", i+1, prev, st.Users))
		idx := wl.e.startPhase(wl, name, st.Users, 0, st.Duration)
		var stopped string
		if st.Users >= prev {
			ramp := st.Duration
			if i == 0 {
				// The first stage starts on the common schedule.
				if err := sleep(ctx, time.Until(wl.e.anchor.Add(l.StartAfter))); err != nil {
					wl.e.endPhase(idx, "interrupted")
					return "interrupted"
				}
			}
			g.add(st.Users, prev, ramp, 0)
			stopped = g.waitFull(st.Duration)
		} else {
			stopped = g.rampDown(prev, st.Users, st.Duration)
		}
		wl.e.endPhase(idx, wl.cutNote(stopped))
		prev = st.Users
		if stopped != "" {
			return stopped
		}
	}
	return ""
}

// waitFull waits d even when no user is alive yet (a ramp from 0 starts
// its first user after a delay).
func (g *group) waitFull(d time.Duration) string {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return ""
	case <-g.dataOut:
		return "data exhausted"
	case <-g.ctx.Done():
		return "interrupted"
	}
}

// runSteps runs a stepped load: each step is a phase; the stop rule ends it
// after the first step whose throughput grew less than the threshold.
func (wl *workload) runSteps(ctx context.Context) string {
	l := &wl.spec.Load
	var g *group
	prevTP := -1.0
	prevUsers := 0
	stopped := ""
	for i, st := range l.Steps {
		// The first step starts on the common schedule (a late generator
		// skips what is overdue); later ones when the previous ended.
		begin := time.Now()
		if i == 0 {
			begin = wl.e.anchor.Add(l.StartAfter)
		}
		name := st.Name
		if name == "" {
			name = fmt.Sprintf("step %d", i+1)
		}
		name = wl.e.phaseName(wl, name)
		var idx int
		if float64(st.Rate) > 0 {
			if g != nil {
				g.stop()
				g = nil
			}
			idx = -1
			stopped = wl.runOpenPhase(ctx, name, begin, newArrivals(float64(st.Rate), st.Duration, nil), l.MaxUsers, float64(st.Rate), &idx)
		} else {
			if g == nil {
				g = wl.newGroup(ctx)
				prevUsers = 0
			}
			idx = wl.e.startPhase(wl, name, st.Users, 0, st.RampUp)
			pace := st.Pace
			if pace == 0 {
				pace = l.Pace
			}
			ep := g.setPace(pace, st.Users)
			g.add(st.Users, min(prevUsers, st.Users), st.RampUp, 0)
			prevUsers = st.Users
			stopped = g.wait(st.Duration, false)
			g.closeEpoch()
			wl.e.pacedPhase(idx, ep)
			wl.e.endPhase(idx, stopped)
		}
		tp := wl.phaseThroughput(idx)
		reason := stopped
		if reason == "" && l.StopWhen != nil && prevTP > 0 {
			gain := (tp - prevTP) / prevTP
			if gain < l.StopWhen.Threshold {
				rule := &core.StopRule{GainPct: 100 * gain, ThresholdPct: 100 * l.StopWhen.Threshold, FromRPS: prevTP, ToRPS: tp}
				reason = fmt.Sprintf("stop rule: throughput gain %.1f%% < %.4g%% (%.2f → %.2f req/s)",
					rule.GainPct, rule.ThresholdPct, prevTP, tp)
				wl.e.setStopped(idx, reason, rule)
			}
		}
		prevTP = tp
		if reason != "" {
			stopped = reason
			break
		}
	}
	if g != nil {
		if stopped == "" && l.RampDown > 0 {
			stopped = g.rampDown(prevUsers, 0, l.RampDown)
		}
		g.stop()
	}
	return stopped
}

// phaseThroughput is phase idx's requests per second counted as the
// report's table counts them: the requests that completed while it was wl's
// phase (from the switch in startPhase to the one in endPhase), over its span
// in run.json. The stop rule judges these figures and its note quotes them,
// so the note and the table cannot disagree. 0 when the phase did not end.
func (wl *workload) phaseThroughput(idx int) float64 {
	if idx < 0 {
		return 0
	}
	n := wl.phaseReqs[idx%len(wl.phaseReqs)].Load()
	e := wl.e
	e.mu.Lock()
	p := e.info.Phases[idx]
	e.mu.Unlock()
	if p.End == nil || !p.End.After(p.Start) {
		return 0
	}
	return float64(n) / p.End.Sub(p.Start).Seconds()
}

func (e *Engine) setStopped(idx int, why string, rule *core.StopRule) {
	e.mu.Lock()
	e.info.Phases[idx].Stopped = why
	e.info.Phases[idx].StopRule = rule
	e.saveLocked()
	e.mu.Unlock()
}

// runOpen runs one open-model phase, its schedule starting on the common
// schedule's workload start.
func (wl *workload) runOpen(ctx context.Context, name string, a *arrivals, maxUsers int, rate float64) string {
	idx := -1
	return wl.runOpenPhase(ctx, name, wl.e.anchor.Add(wl.spec.Load.StartAfter), a, maxUsers, rate, &idx)
}

// runOpenPhase starts iterations on the arrival schedule a, each on an idle
// user; users are added (up to maxUsers) when none is idle. When every
// allowed user is busy, an iteration may wait in a small queue — at most
// maxUsers iterations, one per user, which absorbs a scheduling hiccup of a
// few milliseconds — and beyond that it is dropped at once and counted (k6's
// rule for arrival-rate executors). A stalled server therefore cannot build a
// backlog that runs on past the plan: the shortfall is stated, not hidden.
// Latency counts from the intended start, so a wait in the queue shows in
// the percentiles (coordinated omission).
//
// begin is the instant the schedule counts from; iterations already more
// than a second overdue when the loop first reaches them (a generator that
// started after the common start) are skipped and counted as dropped.
//
// Nothing starts after the schedule's end, which is on the wall clock:
// iterations still queued then are dropped; those running may finish within
// graceful_stop (ctx ends then). A loop behind its schedule never walks the
// iterations it cannot start: it drops all that are due in one step
// (arrivals.Due), so a rate no machine can send ends on time, and the
// context is checked on every step, so an interrupt stops it at once.
// Started counts iterations a user began: what was sent.
func (wl *workload) runOpenPhase(ctx context.Context, name string, begin time.Time, a *arrivals, maxUsers int, rate float64, idxOut *int) string {
	e := wl.e
	if maxUsers <= 0 {
		maxUsers = 1000
	}
	seg, nseg := int64(e.cfg.Segment), int64(e.cfg.Segments)
	maxUsers = max(shareOf(maxUsers, int(seg), int(nseg)), 1)
	peak := a.PeakRate() / float64(nseg)
	// The queue: one slot per user on its way to take an iteration, plus
	// at most maxUsers iterations waiting for a busy user to finish.
	work := make(chan time.Time, 2*maxUsers)
	var wg sync.WaitGroup
	stopCtx, stopAll := context.WithCancel(ctx)
	defer stopAll()
	dataOut := make(chan struct{})
	var once sync.Once
	var spawned atomic.Int64
	// tooLate counts iterations users took from the queue after the
	// run's end: dropped, not started.
	var tooLate atomic.Int64
	// freed wakes the loop when a user finishes an iteration (it waits
	// on it when every user is busy and the queue full).
	freed := make(chan struct{}, 1)
	// The schedule ends on the wall clock: nothing starts after end,
	// however far behind the loop is.
	end := begin.Add(a.Duration())
	// free counts users that will take an iteration from the queue without
	// finishing another first: idle ones and ones still starting.
	var free atomic.Int64
	spawn := func() bool {
		if spawned.Add(1) > int64(maxUsers) {
			spawned.Add(-1)
			return false
		}
		free.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := newVU(int(wl.nextUser.Add(1)), wl, e)
			defer v.close()
			v.stopCtx = stopCtx
			if err := v.runSetup(ctx); err != nil {
				free.Add(-1)
				if errors.Is(err, errDataExhausted) {
					once.Do(func() { close(dataOut) })
				} else if ctx.Err() == nil {
					e.setupFailed(err)
				}
				return
			}
			wl.active.Add(1)
			e.activeUsers.Add(1)
			defer func() { wl.active.Add(-1); e.activeUsers.Add(-1) }()
			for {
				t, ok := <-work
				free.Add(-1)
				if !ok {
					break
				}
				if ctx.Err() != nil {
					// Taken after the run's end (an interrupt, or
					// graceful_stop out): not started, dropped. An
					// iteration handed out before the schedule's end
					// starts even if this goroutine runs a little
					// later (a loaded machine); what is still queued at
					// the end is dropped by the loop.
					tooLate.Add(1)
					wl.dropped.Add(1)
					free.Add(1)
					continue
				}
				err := v.iteration(ctx, t)
				if errors.Is(err, errDataExhausted) {
					once.Do(func() { close(dataOut) })
				}
				if errors.Is(err, errStopUser) || errors.Is(err, errStopRun) {
					spawned.Add(-1) // this user ends (on_fail); another may be started
					break
				}
				free.Add(1)
				select {
				case freed <- struct{}{}:
				default:
				}
			}
			if ctx.Err() == nil && len(v.prog.teardown) > 0 {
				_ = v.runTeardown(ctx)
			}
		}()
		return true
	}
	// Start with enough users for the first moments; more are added when
	// an iteration is due and none is free, up to maxUsers.
	for i := 0; i < min(maxUsers, max(1, int(math.Ceil(peak/50)))); i++ {
		spawn()
	}
	*idxOut = e.startPhase(wl, name, 0, rate, 0)
	sp := stripe{seg, nseg}
	total := a.Count()
	stopped := ""
	const lateLimit = time.Second
	first := true
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	precise := wake.New() // for gaps long enough to be slept exactly
	defer precise.Close()
	var prevAt time.Duration
	var planned, started int64
	late := lateDrops{queue: time.Hour}
	if peak > 0 {
		late.queue = time.Duration(float64(maxUsers) / peak * float64(time.Second))
	}
	// dropDue drops, in one step, this generator's iterations from k on
	// that are due by now (at least k itself), and returns the next one.
	// A loop that fell behind — a rate beyond what the machine can send, a
	// process short of CPU — thus costs one step per wake-up, not one per
	// planned iteration: 10¹²/s ends on time like 10/s.
	//
	// Then it waits for a user to finish (or a millisecond, so that drops
	// are counted in the second they happen), instead of spinning on
	// arrivals that are due and cannot start.
	dropDue := func(k int64, now time.Time) int64 {
		to := max(a.Due(now.Sub(begin)), k+1)
		n := sp.count(k, to)
		planned += n
		wl.dropped.Add(n)
		late.dropRange(a, sp, begin, k, to, now)
		timer.Reset(time.Millisecond)
		select {
		case <-freed:
			timer.Stop() // Go ≥ 1.23: no stale tick is left behind
		case <-timer.C:
		case <-ctx.Done():
		case <-dataOut:
		}
		return sp.next(to)
	}
	k := sp.next(0)
loop:
	for k < total {
		if err := ctx.Err(); err != nil {
			stopped = "interrupted"
			break
		}
		at, ok := a.At(k)
		if !ok {
			break
		}
		intended := begin.Add(at)
		now := time.Now()
		if !now.Before(end) {
			break // the schedule is over: the rest is dropped below
		}
		d := intended.Sub(now)
		// Go's timers fire up to 1 ms late on Linux (the poller sleeps in
		// whole milliseconds), and latency counts from the intended start,
		// so that lateness would be added to every response time. Where the
		// gap to the previous iteration is long enough (wake.SpinLimit),
		// sleep on a precise timer until a margin before the start, then
		// yield in a loop until it. The margin is what wake-ups on this
		// machine were seen to take, within that limit: the network is not
		// polled while this loop spins, so a response arriving in it is
		// held until the start, and the margin bounds that hold to about
		// what waking the process would cost. Shorter gaps use Go's timer.
		spin := wake.SpinLimit(at - prevAt)
		if spin > 0 {
			spin = precise.Margin(spin)
		}
		prevAt = at
		if d > spin {
			var c <-chan struct{}
			var tc <-chan time.Time
			if spin > 0 {
				precise.Arm(intended.Add(-spin))
				c = precise.C
			} else {
				timer.Reset(d)
				tc = timer.C
			}
			select {
			case <-tc:
			case <-c:
				precise.Fired()
			case <-ctx.Done():
				stopped = "interrupted"
				break loop
			case <-dataOut:
				stopped = "data exhausted"
				break loop
			}
		}
		for spin > 0 && time.Now().Before(intended) && ctx.Err() == nil {
			runtime.Gosched()
		}
		if d > 0 {
			now = time.Now()
		}
		if d <= 0 && first && (-d > lateLimit || intended.Before(e.lateFrom)) {
			// A generator that starts late (distributed start) skips and
			// counts what is already past due instead of bursting.
			to := max(a.Due(now.Add(-lateLimit).Sub(begin)), a.Due(e.lateFrom.Sub(begin)), k+1)
			n := sp.count(k, to)
			planned += n
			wl.dropped.Add(n)
			k = sp.next(to)
			continue
		}
		first = false
		// waiting is how many queued iterations no free user is on its
		// way to take; they start when a busy user finishes.
		if waiting := int64(len(work)) - free.Load(); waiting >= 0 && !spawn() && waiting >= int64(maxUsers) {
			// Every allowed user is busy and the queue is full: what is
			// due now is dropped.
			k = dropDue(k, now)
			continue
		}
		select {
		case work <- intended:
			planned++
			started++
			k += nseg
		default:
			k = dropDue(k, now)
		}
	}
	if ctx.Err() != nil && stopped == "" {
		stopped = "interrupted"
	}
	// What was due and not handed out (the loop was behind at the end or
	// at the interruption) is dropped, counted.
	if k < total {
		now := time.Now()
		if to := a.Due(min(now.Sub(begin), end.Sub(begin))); to > k {
			n := sp.count(k, to)
			planned += n
			wl.dropped.Add(n)
			late.dropRange(a, sp, begin, k, to, now)
		}
	}
	// Iterations still queued may start until the schedule's end (a busy
	// user finishing), not after: then what is still queued is dropped, as
	// is what a user takes from the queue after the end.
	for len(work) > 0 && stopped == "" && time.Now().Before(end) {
		select {
		case <-ctx.Done():
			stopped = "interrupted"
		case <-dataOut:
			stopped = "data exhausted"
		case <-time.After(time.Millisecond):
		}
	}
drain:
	for {
		select {
		case <-work:
			started--
			wl.dropped.Add(1)
		default:
			break drain
		}
	}
	close(work)
	wg.Wait()
	stopAll()
	e.mu.Lock()
	p := &e.info.Phases[*idxOut]
	started -= tooLate.Load() // taken from the queue after the end: not started
	p.Planned, p.Started, p.MaxUsers, p.PlannedS = planned, started, maxUsers, a.Duration().Seconds()
	p.DroppedLate, p.LateMaxMs = late.n, float64(late.max.Microseconds())/1000
	e.mu.Unlock()
	e.endPhase(*idxOut, wl.cutNote(stopped))
	return stopped
}

// lateDrops tells apart the open model's drops that the generator itself
// caused. A drop means every allowed user was busy and the queue full; when
// the loop handing out iterations was at that moment already behind the
// schedule by more than the queue holds (queue: max_users iterations at the
// peak rate), its own delay — a process short of CPU, a pause — made that
// many iterations due at once, whatever the server did. The report says so
// instead of blaming busy users.
type lateDrops struct {
	queue time.Duration
	n     int64
	max   time.Duration
}

// dropRange notes the dropped iterations [from, to) of stripe sp at now:
// those due more than the queue holds before now count as late, without
// walking them (the schedule's Due finds the boundary).
func (l *lateDrops) dropRange(a *arrivals, sp stripe, begin time.Time, from, to int64, now time.Time) {
	at, ok := a.At(sp.next(from))
	if !ok {
		return
	}
	if late := now.Sub(begin.Add(at)); late > l.queue {
		l.max = max(l.max, late)
		l.n += sp.count(from, min(to, a.Due(now.Add(-l.queue).Sub(begin))))
	}
}
