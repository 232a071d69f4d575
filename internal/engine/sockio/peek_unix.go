//go:build unix

package sockio

import (
	"syscall"
	"unsafe"
)

// RawPeek looks at the socket's receive queue without consuming it or
// blocking (the socket is non-blocking): n > 0 means data is waiting, n == 0
// with a nil error means the peer has closed its side (a FIN is queued), and
// syscall.EAGAIN means nothing has arrived. Raw like RawRead: it returns at
// once, so it needs no scheduler bookkeeping, and reads nothing the race
// detector would have to order.
func RawPeek(fd uintptr) (int, error) {
	var b [1]byte
	for {
		n, _, e := syscall.RawSyscall6(syscall.SYS_RECVFROM, fd, uintptr(unsafe.Pointer(&b[0])), 1,
			syscall.MSG_PEEK, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			return 0, e
		}
		return int(n), nil
	}
}
