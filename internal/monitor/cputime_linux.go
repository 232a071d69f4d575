package monitor

import "golang.org/x/sys/unix"

// threadCPUSeconds is the CPU time of the calling OS thread. The sampling
// goroutine is locked to its thread, so this is the goroutine's own cost.
func threadCPUSeconds() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
