//go:build unix

package cli

import "syscall"

// openFileLimit is the process's hard limit on open files (Go raises the
// soft limit to it at start); 0 when unknown or unlimited.
func openFileLimit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil && rl.Max < 1<<40 {
		return int(rl.Max)
	}
	return 0
}
