//go:build unix

package importer

import (
	"syscall"
	"time"
)

// procCPU is the process's CPU time (user + system), for benchmarks on a
// shared machine, where wall time counts the waits for a core.
func procCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
