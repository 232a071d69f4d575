// Package wake wakes a goroutine at a given instant to within the machine's
// own wake-up latency.
//
// Go's timers are up to a millisecond late on Linux: when nothing else is
// due, the runtime's poller sleeps in whole milliseconds (epoll_pwait's
// timeout), so a timer set 9.5 ms ahead fires at 10 ms or later. The open
// model counts latency from each iteration's intended start, so that
// lateness would be added to every response time. The dispatcher used to
// sleep on a Go timer until a millisecond before the start and spin
// (runtime.Gosched) the rest; but while one goroutine spins, the scheduler
// never polls the network (it does so only when no goroutine is runnable),
// so a response that arrived in that millisecond waited for the spin to end
// and was measured up to 1 ms too slow (docs/performance.md, "The spin
// window").
//
// A Timer here is a Linux timerfd read through the runtime's poller: the
// kernel's high-resolution timer wakes the poller at the instant asked, and
// network events wake it as before. Margin learns how late those wake-ups
// actually are on this machine, so the caller spins only for that long
// (tens of microseconds on bare metal, ~200 µs on this project's nested
// VMs), and a response arriving meanwhile waits no longer than it would
// have waited for the process to wake. Where timerfd is missing, Timer is
// a Go timer and Margin the whole cap: the behaviour before this package.
package wake

import (
	"sync"
	"time"
)

// Timer fires on C once per Arm. One goroutine arms it and receives from C;
// Close may come from any.
type Timer struct {
	// C receives once per Arm, when the instant armed for has come.
	C <-chan struct{}

	src     source
	armedAt time.Time
	est     time.Duration // a high estimate of how late a wake-up is
	precise bool
	once    sync.Once
}

// source is what a Timer waits on: a timerfd, or a Go timer.
type source interface {
	arm(d time.Duration) // fire once, d from now (d > 0)
	close()
}

// New returns a Timer, precise where the platform allows it.
func New() *Timer {
	c := make(chan struct{}, 1)
	t := &Timer{C: c, est: initialEstimate}
	if s, ok := newPrecise(c); ok {
		t.src, t.precise = s, true
	} else {
		t.src = newGoTimer(c)
	}
	return t
}

// initialEstimate is the wake-up delay assumed before any was seen: large,
// so that a Timer starts out spinning as long as its caller allows and
// shortens the spin as it learns.
const initialEstimate = time.Millisecond

// minMargin covers the hand-off from the poller to the caller's goroutine.
const minMargin = 20 * time.Microsecond

// Precise reports whether the Timer wakes at the instant asked (timerfd)
// rather than on Go's millisecond-grained poller.
func (t *Timer) Precise() bool { return t.precise }

// Arm makes C receive once, at at (at once if at has passed). A value
// still in C from an earlier Arm is discarded.
func (t *Timer) Arm(at time.Time) {
	select {
	case <-t.C:
	default:
	}
	t.armedAt = at
	t.src.arm(max(time.Until(at), time.Nanosecond))
}

// Fired tells the Timer that C was received from: it learns from how late
// that was. Call it at once after the receive.
func (t *Timer) Fired() {
	t.learn(time.Since(t.armedAt))
}

// learn moves the estimate toward the 90th percentile of the wake-up
// delays seen: up by 9 steps after a later one, down by 1 after an earlier
// one, so that it settles where one in ten is later, however late that one
// is (on this project's VMs the 99th percentile of wake-ups is a whole
// millisecond late, the median ~180 µs: an average would chase the few).
func (t *Timer) learn(late time.Duration) {
	if late > t.est {
		t.est += 9 * learnStep
	} else {
		t.est = max(0, t.est-learnStep)
	}
}

// learnStep is the estimate's step down: from the initial 1 ms to 200 µs
// in 200 wake-ups.
const learnStep = 4 * time.Microsecond

// Margin is how long before an instant to arm the Timer and spin the rest,
// at most limit: the learnt wake-up delay and the hand-off to the caller,
// or limit where wake-ups are not precise.
func (t *Timer) Margin(limit time.Duration) time.Duration {
	if !t.precise {
		return limit
	}
	return min(limit, t.est+minMargin)
}

// SpinLimit is the longest spin worth a precise wake-up before an instant
// that comes gap after the previous one: an eighth of the gap (so spinning
// takes at most an eighth of the idle time), at most 1 ms. It is 0 for gaps
// under 0.8 ms: there a wake-up per instant would cost more than the
// millisecond batches of Go's own timers, which wake often enough anyway
// (docs/performance.md, "The floor at 5,000 req/s").
func SpinLimit(gap time.Duration) time.Duration {
	s := min(time.Millisecond, gap/8)
	if s < 100*time.Microsecond {
		return 0
	}
	return s
}

// Close releases the Timer; C receives nothing more.
func (t *Timer) Close() {
	t.once.Do(t.src.close)
}

// goTimer is the fallback source.
type goTimer struct{ t *time.Timer }

func newGoTimer(c chan struct{}) *goTimer {
	g := &goTimer{}
	g.t = time.AfterFunc(time.Hour, func() {
		select {
		case c <- struct{}{}:
		default:
		}
	})
	g.t.Stop()
	return g
}

func (g *goTimer) arm(d time.Duration) { g.t.Reset(d) }
func (g *goTimer) close()              { g.t.Stop() }
