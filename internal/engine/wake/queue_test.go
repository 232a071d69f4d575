package wake

import (
	"sync"
	"testing"
	"time"
)

// TestQueueRunsAtTheInstants schedules entries out of order, cancels one
// and checks that every other runs once, never before its instant.
func TestQueueRunsAtTheInstants(t *testing.T) {
	q := NewQueue()
	defer q.Close()
	const n = 40
	var mu sync.Mutex
	ran := make([]time.Time, n)
	var wg sync.WaitGroup
	es := make([]Entry, n)
	ats := make([]time.Time, n)
	base := time.Now().Add(5 * time.Millisecond)
	for i := range es {
		ats[i] = base.Add(time.Duration((i*7)%n) * 500 * time.Microsecond)
		es[i].F = func() {
			mu.Lock()
			ran[i] = time.Now()
			mu.Unlock()
			wg.Done()
		}
		wg.Add(1)
		q.Schedule(&es[i], ats[i])
	}
	if !q.Cancel(&es[3]) {
		t.Fatal("Cancel of a waiting entry reported false")
	}
	wg.Done()
	if q.Cancel(&es[3]) {
		t.Fatal("a second Cancel reported true")
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("entries did not run in 10 s")
	}
	time.Sleep(5 * time.Millisecond) // a cancelled entry would have run by now
	mu.Lock()
	defer mu.Unlock()
	var worst time.Duration
	for i, r := range ran {
		switch {
		case i == 3:
			if !r.IsZero() {
				t.Fatal("a cancelled entry ran")
			}
		case r.Before(ats[i]):
			t.Fatalf("entry %d ran %v before its instant", i, ats[i].Sub(r))
		default:
			worst = max(worst, r.Sub(ats[i]))
		}
	}
	t.Logf("latest start %v after its instant", worst)
	// An entry that ran may be scheduled again.
	again := make(chan struct{})
	es[0].F = func() { close(again) }
	q.Schedule(&es[0], time.Now())
	select {
	case <-again:
	case <-time.After(5 * time.Second):
		t.Fatal("an entry scheduled again did not run")
	}
}

// TestQueueClose: nothing runs after Close, and Schedule on a closed Queue
// is ignored.
func TestQueueClose(t *testing.T) {
	q := NewQueue()
	ranCh := make(chan struct{}, 2)
	a := Entry{F: func() { ranCh <- struct{}{} }}
	b := Entry{F: func() { ranCh <- struct{}{} }}
	q.Schedule(&a, time.Now().Add(20*time.Millisecond))
	q.Close()
	q.Close()
	q.Schedule(&b, time.Now())
	select {
	case <-ranCh:
		t.Fatal("an entry ran after Close")
	case <-time.After(60 * time.Millisecond):
	}
	if q.Cancel(&b) {
		t.Fatal("Cancel found an entry scheduled on a closed Queue")
	}
}

// TestQueueDense: instants 100 µs apart (10,000 a second, Go's timer's
// range) all run, none early.
func TestQueueDense(t *testing.T) {
	q := NewQueue()
	defer q.Close()
	const n = 2000
	es := make([]Entry, n)
	var wg sync.WaitGroup
	var early sync.Map
	base := time.Now().Add(2 * time.Millisecond)
	for i := range es {
		at := base.Add(time.Duration(i) * 100 * time.Microsecond)
		es[i].F = func() {
			if time.Now().Before(at) {
				early.Store(i, at)
			}
			wg.Done()
		}
		wg.Add(1)
		q.Schedule(&es[i], at)
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("2,000 entries over 0.2 s did not all run in 20 s")
	}
	early.Range(func(k, _ any) bool {
		t.Errorf("entry %v ran before its instant", k)
		return true
	})
}
