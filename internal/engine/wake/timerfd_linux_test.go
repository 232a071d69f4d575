//go:build linux && !race

package wake

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestFiringLeavesSysmonAsleep: a firing costs the process one wake-up, not
// the three of a system call entered through the scheduler (which wakes the
// runtime's sysmon thread from its deep sleep: a futex wake, its 20 µs
// nanosleep, its futex wait). Counted as the process's voluntary context
// switches (every thread's, getrusage) over 200 firings 2 ms apart, with
// one P as in the harness. Under the race detector the reads go through
// syscall.Read on purpose (sockio), so the count means nothing there.
func TestFiringLeavesSysmonAsleep(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	tm := New()
	defer tm.Close()
	if !tm.Precise() {
		t.Fatal("no timerfd on Linux")
	}
	fire := func(n int) {
		for range n {
			tm.Arm(time.Now().Add(2 * time.Millisecond))
			select {
			case <-tm.C:
			case <-time.After(5 * time.Second):
				t.Fatal("nothing received in 5 s")
			}
			tm.Fired()
		}
	}
	fire(20) // let the goroutines and threads settle
	const n = 200
	before := switches(t)
	fire(n)
	per := float64(switches(t)-before) / n
	t.Logf("%.2f voluntary context switches per firing", per)
	// One is the wake-up itself; sysmon woken by each firing made it ~3.
	if per >= 2 {
		t.Fatalf("%.2f voluntary context switches per firing: something wakes another thread each time (sysmon, through a system call entered via the scheduler?)", per)
	}
}

func switches(t *testing.T) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return ru.Nvcsw
}
