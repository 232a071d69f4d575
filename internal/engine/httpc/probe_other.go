//go:build !unix

package httpc

import "syscall"

// peekAlive cannot look at the socket without consuming data on this
// platform, so it trusts the connection; the retry rule covers a stale one.
func peekAlive(syscall.RawConn, bool) bool { return true }
