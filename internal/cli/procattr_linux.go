package cli

import "syscall"

// childAttr puts a generator in its own process group (a Ctrl-C in the
// terminal reaches the parent only, which stops the children gracefully
// itself) and has the kernel send it SIGTERM when the parent dies, even by
// SIGKILL: an orphaned generator would otherwise send its whole load to a
// target nobody watches any more. SIGTERM lets it stop gracefully and keep
// its segment directory, which `plateau merge` can still join.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
