//go:build unix

package httpc

import "syscall"

// peekAlive looks at the socket without blocking and without consuming
// anything: no data yet means the connection is open and idle; end of stream
// or an error means the server closed it. Pending data on a plain connection
// is an unsolicited response, which also makes it unusable; on TLS it may be a
// session ticket, so the connection is given the benefit of the doubt (the
// retry rule covers the rare wrong guess).
func peekAlive(rc syscall.RawConn, isTLS bool) bool {
	var b [1]byte
	alive := false
	err := rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			alive = true
		case err != nil || n == 0:
			alive = false
		default:
			alive = isTLS
		}
		return true // never wait for readiness: this is a poll, not a read
	})
	return err == nil && alive
}
