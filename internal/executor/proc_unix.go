//go:build !windows

package executor

import (
	"os/exec"
	"syscall"
	"time"
)

// ownGroup starts the tool in a process group of its own, so that a
// signal reaches the launcher's children too (JMeter's and Locust's).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// interrupt sends the tool's process group SIGINT: each tool's clean stop.
func interrupt(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT) }

// kill ends the tool's process group.
func kill(cmd *exec.Cmd) { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }

// SelfCPU is the CPU time (user + system) this process has used.
func SelfCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
