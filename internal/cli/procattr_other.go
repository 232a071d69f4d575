//go:build unix && !linux

package cli

import "syscall"

// childAttr puts a generator in its own process group. Outside Linux there
// is no parent-death signal: a generator whose parent is killed outright
// runs to the end of its plan.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
