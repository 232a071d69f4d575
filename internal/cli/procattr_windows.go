package cli

import "syscall"

// childAttr starts a generator in its own process group, so a Ctrl-C in the
// console reaches the parent only (which stops the children itself). There
// is no parent-death signal: a generator whose parent is killed outright
// runs to the end of its plan.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
