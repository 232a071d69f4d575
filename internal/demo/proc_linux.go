package demo

import "syscall"

// childAttr makes a child die with its parent, even when the parent is
// killed outright, so the demo never leaves orphans holding ports.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
