package demo

import "syscall"

// childAttr makes a child die with its parent, even when the parent is
// killed outright, so the demo never leaves orphans holding ports. Children
// get their own process group: Ctrl-C on the terminal reaches plateau only,
// which stops the load first and the services after, so the last seconds of
// the run do not fill with errors from services shutting down under load.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
