package engine_test

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"testing"
	"time"
)

// TestMemoryPerUser measures what an extra virtual user costs while it thinks
// between requests: live heap plus goroutine stacks, from 100 to 2,100 users
// with 1 s think time against a local server. The target is ≤ 10 KiB per
// extra user (issue 21); a thinking user holds no goroutine, so its stack is
// no longer part of it.
func TestMemoryPerUser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 2,100 users")
	}
	if raceOn {
		// The race detector adds shadow memory and bigger stacks per
		// goroutine: the figure measured under it (17–26 KiB on main
		// before this change, 18–22 after) says nothing about plateau.
		t.Skip("memory per user means nothing under -race")
	}
	// The server runs in a child process so that only the generator's
	// memory is counted.
	url := childServer(t)
	measure := func(users int) (heap, stack uint64) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			runPlan(t, ctx, simplePlan, url,
				"workloads.w.load={users: "+itoa(users)+", duration: 30s}",
				"workloads.w.scenario=[{request: {name: get, url: /}}, {think: 1s}]")
		}()
		time.Sleep(3 * time.Second) // every user started, connected and thinking
		runtime.GC()
		debug.FreeOSMemory()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		if f := os.Getenv("PLATEAU_MEMTEST_PROFILE"); f != "" {
			f += "." + itoa(users)
			if w, err := os.Create(f); err == nil {
				_ = pprof.WriteHeapProfile(w)
				w.Close()
			}
		}
		cancel()
		<-done
		return m.HeapInuse, m.StackInuse
	}
	h1, s1 := measure(100)
	h2, s2 := measure(2100)
	// Signed: with no goroutine per thinking user, the stacks of 2,100
	// users may come out below those of 100.
	perHeap := (float64(h2) - float64(h1)) / 2000 / 1024
	perStack := (float64(s2) - float64(s1)) / 2000 / 1024
	t.Logf("per extra user: heap %.1f KiB + stack %.1f KiB = %.1f KiB", perHeap, perStack, perHeap+perStack)
	if perHeap+perStack > 10 {
		t.Errorf("an extra user costs %.1f KiB, target ≤ 10 KiB", perHeap+perStack)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
