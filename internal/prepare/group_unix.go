//go:build unix

package prepare

import "syscall"

// groupAttr starts a command in its own process group, so a timeout or an
// interrupt can stop everything it started (a shell's children too), and
// a Ctrl-C in the terminal reaches plateau only, which then stops the
// command itself.
func groupAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// stopGroup signals the process group led by pid: SIGTERM, or SIGKILL
// when kill is set. A group already gone is not an error.
func stopGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-pid, sig)
}
