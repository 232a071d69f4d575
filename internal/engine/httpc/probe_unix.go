//go:build unix

package httpc

import (
	"syscall"

	"github.com/plateau-perf/plateau/internal/engine/sockio"
)

// peekAlive looks at the socket without blocking and without consuming
// anything: no data yet means the connection is open and idle; end of stream
// or an error means the server closed it. Pending data on a plain connection
// is an unsolicited response, which also makes it unusable; on TLS it may be a
// session ticket, so the connection is given the benefit of the doubt (the
// retry rule covers the rare wrong guess). It runs in RawConn.Control, not
// Read, so a read deadline that passed while the connection sat idle does
// not make a live connection look dead.
func peekAlive(rc syscall.RawConn, isTLS bool) bool {
	alive := false
	err := rc.Control(func(fd uintptr) {
		n, err := sockio.RawPeek(fd)
		switch {
		case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK:
			alive = true
		case err != nil || n == 0:
			alive = false
		default:
			alive = isTLS
		}
	})
	return err == nil && alive
}
