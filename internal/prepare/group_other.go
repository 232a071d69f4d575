//go:build !unix

package prepare

import (
	"os"
	"syscall"
)

// groupAttr: outside Unix, commands run in plateau's own process group.
func groupAttr() *syscall.SysProcAttr { return nil }

// stopGroup kills the command's process (its children may survive).
func stopGroup(pid int, _ bool) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
