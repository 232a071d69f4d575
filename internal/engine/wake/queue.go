package wake

import (
	"container/heap"
	"runtime"
	"sync"
	"time"
)

// Queue runs functions at instants, each on a goroutine of its own, as
// time.AfterFunc does but on a Timer: woken a learnt margin before the
// earliest instant and spinning the rest, so a function starts within
// microseconds of its instant instead of up to a millisecond after it. The
// engine's paced users wait on one: their latency counts from the instant.
//
// The spin before an instant is bounded by SpinLimit of the time since the
// previous one fired, as the open model's dispatcher's is by the gap between
// its iterations.
type Queue struct {
	mu     sync.Mutex
	h      entries
	t      *Timer
	coarse *time.Timer // Go's timer, for instants close together
	armed  time.Time   // the instant t or coarse is armed for (zero: not armed)
	last   time.Time   // when an entry last fired
	closed bool
	done   chan struct{}
}

// Entry is one function to run at an instant. The caller owns it and may
// schedule it again once it has run or been cancelled: a Queue allocates
// nothing per wait.
type Entry struct {
	F  func()
	at time.Time
	i  int // index in the heap; -1 when not scheduled
}

// NewQueue starts a Queue; Close stops it.
func NewQueue() *Queue {
	q := &Queue{t: New(), coarse: time.NewTimer(time.Hour), done: make(chan struct{}), last: time.Now()}
	q.coarse.Stop()
	go q.loop()
	return q
}

// Schedule runs e.F at at on a new goroutine (at once if at has passed),
// unless Cancel comes first. e must not be scheduled already.
func (q *Queue) Schedule(e *Entry, at time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		e.i = -1
		return
	}
	e.at = at
	heap.Push(&q.h, e)
	if e.i == 0 {
		q.arm()
	}
}

// Cancel removes e if it has not run; it reports whether it did.
func (q *Queue) Cancel(e *Entry) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e.i < 0 || e.i >= len(q.h) || q.h[e.i] != e {
		return false
	}
	heap.Remove(&q.h, e.i)
	return true
}

// Close stops the Queue: entries not yet run never run.
func (q *Queue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.closed {
		q.closed = true
		q.t.Close()
		q.coarse.Stop()
		close(q.done)
	}
}

// arm sets the Timer for the earliest entry, a margin before it, or Go's
// timer for it when instants come close together (q.mu).
func (q *Queue) arm() {
	e := q.h[0]
	limit := SpinLimit(e.at.Sub(q.last))
	at := e.at
	if limit > 0 {
		at = at.Add(-q.t.Margin(limit))
	}
	if !q.armed.IsZero() && !at.Before(q.armed) {
		return // armed for an earlier instant already
	}
	q.armed = at
	if limit > 0 {
		q.t.Arm(at)
	} else {
		q.coarse.Reset(time.Until(at))
	}
}

func (q *Queue) loop() {
	for {
		precise := false
		select {
		case <-q.t.C:
			precise = true
		case <-q.coarse.C:
		case <-q.done:
			return
		}
		q.mu.Lock()
		if precise {
			q.t.Fired()
		}
		q.armed = time.Time{}
		if len(q.h) == 0 || q.closed {
			q.mu.Unlock()
			continue
		}
		at := q.h[0].at
		if wait := time.Until(at); wait > 0 {
			if !precise || wait > q.t.Margin(SpinLimit(at.Sub(q.last))) {
				q.arm() // woken for an entry cancelled meanwhile
				q.mu.Unlock()
				continue
			}
			q.mu.Unlock()
			// Spin to the instant; the network is not polled meanwhile,
			// so the spin is kept to the margin (see Timer).
			for time.Now().Before(at) {
				runtime.Gosched()
			}
			q.mu.Lock()
		}
		now := time.Now()
		for len(q.h) > 0 && !q.h[0].at.After(now) {
			e := heap.Pop(&q.h).(*Entry)
			go e.F()
		}
		q.last = now
		if len(q.h) > 0 && !q.closed {
			q.arm()
		}
		q.mu.Unlock()
	}
}

// entries is a min-heap of entries by instant.
type entries []*Entry

func (h entries) Len() int           { return len(h) }
func (h entries) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h entries) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].i, h[j].i = i, j
}
func (h *entries) Push(x any) {
	e := x.(*Entry)
	e.i = len(*h)
	*h = append(*h, e)
}
func (h *entries) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.i = -1
	return e
}
