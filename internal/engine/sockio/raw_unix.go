//go:build unix && !race

package sockio

import (
	"syscall"
	"unsafe"
)

// RawWrite and RawRead are the hot path's system calls on a non-blocking
// socket. They are raw (no entersyscall/exitsyscall): a non-blocking send or
// receive returns in microseconds, and the scheduler's syscall entry wakes
// the runtime's sysmon thread whenever the process was idle. In the open
// model every request follows an idle gap, so each request woke sysmon and
// reset it to polling every 20 µs: at 5,000 req/s that thread took about
// 45 % of the generator's CPU (perf, docs/performance.md).
func RawWrite(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func RawRead(fd uintptr, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// Available says whether RawRead and RawWrite work here.
const Available = true
