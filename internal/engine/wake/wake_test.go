package wake

import (
	"runtime"
	"testing"
	"time"
)

// TestFiresAtTheInstant arms the Timer at instants a few milliseconds ahead
// and checks that C never receives before the instant; on Linux the Timer
// must be precise.
func TestFiresAtTheInstant(t *testing.T) {
	tm := New()
	defer tm.Close()
	if runtime.GOOS == "linux" && !tm.Precise() {
		t.Fatal("no timerfd on Linux: the dispatcher would fall back to Go's millisecond timers")
	}
	var worst time.Duration
	for i := range 300 {
		at := time.Now().Add(time.Duration(1+i%3) * time.Millisecond)
		tm.Arm(at)
		select {
		case <-tm.C:
		case <-time.After(5 * time.Second):
			t.Fatalf("arm %d: nothing received in 5 s", i)
		}
		now := time.Now()
		tm.Fired()
		if now.Before(at) {
			t.Fatalf("arm %d: received %v before the instant", i, at.Sub(now))
		}
		worst = max(worst, now.Sub(at))
	}
	t.Logf("latest wake-up %v, margin learnt %v (limit 1ms)", worst, tm.Margin(time.Millisecond))
}

// TestArmDiscardsAnEarlierFiring: a firing nobody received does not end the
// next wait early.
func TestArmDiscardsAnEarlierFiring(t *testing.T) {
	tm := New()
	defer tm.Close()
	tm.Arm(time.Now())
	time.Sleep(20 * time.Millisecond) // it fired; C holds it
	tm.Arm(time.Now().Add(time.Hour))
	select {
	case <-tm.C:
		t.Fatal("C received an earlier Arm's firing")
	case <-time.After(50 * time.Millisecond):
	}
}

// TestArmPastInstant: an instant already passed fires at once.
func TestArmPastInstant(t *testing.T) {
	tm := New()
	defer tm.Close()
	tm.Arm(time.Now().Add(-time.Second))
	select {
	case <-tm.C:
	case <-time.After(5 * time.Second):
		t.Fatal("an instant in the past did not fire")
	}
}

// TestCloseThenArm: a closed Timer ignores Arm and never fires.
func TestCloseThenArm(t *testing.T) {
	tm := New()
	tm.Close()
	tm.Close()
	tm.Arm(time.Now())
	select {
	case <-tm.C:
		if tm.Precise() {
			t.Fatal("a closed timerfd fired")
		}
	case <-time.After(20 * time.Millisecond):
	}
}

// TestMarginLearns feeds the estimator wake-up delays and checks where the
// margin settles: near the 90th percentile of steady delays, up after a
// late one and back down slowly, never above the caller's limit; a Timer that is not precise always spins the whole limit.
func TestMarginLearns(t *testing.T) {
	tm := &Timer{est: initialEstimate, precise: true}
	limit := time.Millisecond
	if got := tm.Margin(limit); got != limit {
		t.Fatalf("before any wake-up the margin is %v, want the limit %v", got, limit)
	}
	for i := range 400 {
		// 150–250 µs, as on this project's VMs
		tm.learn(150*time.Microsecond + time.Duration(i%11)*10*time.Microsecond)
	}
	m := tm.Margin(limit)
	// Their 90th percentile is 240 µs; the margin adds minMargin.
	if m < 220*time.Microsecond || m > 320*time.Microsecond {
		t.Fatalf("after wake-ups of 150–250 µs the margin is %v, want 220–320 µs", m)
	}
	tm.learn(900 * time.Microsecond)
	if up := tm.Margin(limit); up <= m {
		t.Fatalf("a late wake-up did not raise the margin (%v, before %v)", up, m)
	}
	for range 400 {
		tm.learn(5 * time.Microsecond)
	}
	if got := tm.Margin(limit); got > minMargin+40*time.Microsecond {
		t.Fatalf("after wake-ups of 5 µs the margin is %v, want at most %v", got, minMargin+40*time.Microsecond)
	}
	if got := tm.Margin(50 * time.Microsecond); got > 50*time.Microsecond {
		t.Fatalf("margin %v above the caller's limit", got)
	}
	coarse := &Timer{est: time.Microsecond}
	if got := coarse.Margin(limit); got != limit {
		t.Fatalf("a Go timer's margin is %v, want the whole limit", got)
	}
}

// TestSpinLimit: an eighth of the gap, at most 1 ms, none below 0.8 ms.
func TestSpinLimit(t *testing.T) {
	for _, c := range []struct{ gap, want time.Duration }{
		{-time.Millisecond, 0},
		{200 * time.Microsecond, 0},
		{799 * time.Microsecond, 0},
		{800 * time.Microsecond, 100 * time.Microsecond},
		{4 * time.Millisecond, 500 * time.Microsecond},
		{time.Second, time.Millisecond},
	} {
		if got := SpinLimit(c.gap); got != c.want {
			t.Errorf("SpinLimit(%v) = %v, want %v", c.gap, got, c.want)
		}
	}
}
