// Package sockio reads and writes TCP sockets with raw system calls.
//
// Go's syscall.Read and syscall.Write tell the scheduler they may block
// (entersyscall), and the scheduler's syscall entry wakes the runtime's
// sysmon thread whenever every P was idle, resetting it to poll every
// 20 µs. A load generator between requests is exactly that idle process:
// at 5,000 requests/s over plain HTTP/1.1, sysmon's wake-ups took ~47 % of
// plateau's CPU (perf; docs/performance.md, "Issue 21"). A non-blocking
// socket call returns in microseconds, so it needs no scheduler bookkeeping:
// Conn makes its calls raw, inside RawConn.Read and RawConn.Write, which
// keep net.Conn's deadlines, its safety against a concurrent Close and the
// poller's wait for readiness.
package sockio

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// Conn is a TCP connection whose Read and Write use raw system calls. As on
// a net.Conn, any goroutine may call them at any time; calls of one kind
// take turns (they would anyway, on the socket's own locks). The other
// methods are the TCPConn's.
type Conn struct {
	*net.TCPConn
	raw      syscall.RawConn
	rmu, wmu sync.Mutex // held for the whole Read or Write: they own rd, wr
	rd, wr   op
	readFn   func(fd uintptr) bool
	writeFn  func(fd uintptr) bool
}

// op is the state of one Read or Write: the caller's slice, the bytes
// done and the error.
type op struct {
	p   []byte
	n   int
	err error
}

// Wrap returns nc reading and writing with raw system calls when it is a
// TCP connection on a platform that has them, else nc itself.
func Wrap(nc net.Conn) net.Conn {
	tc, ok := nc.(*net.TCPConn)
	if !ok || !Available {
		return nc
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nc
	}
	c := &Conn{TCPConn: tc, raw: raw}
	c.readFn, c.writeFn = c.read, c.write
	return c
}

// Read reads what the socket has, waiting for it when it has nothing.
func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return c.TCPConn.Read(p)
	}
	c.rmu.Lock()
	c.rd = op{p: p}
	err := c.raw.Read(c.readFn)
	n, rerr := c.rd.n, c.rd.err
	c.rd = op{}
	c.rmu.Unlock()
	if err != nil {
		return 0, renamed(err, "read")
	}
	return n, rerr
}

// Write writes all of p, waiting while the send buffer is full.
func (c *Conn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	c.wr = op{p: p}
	err := c.raw.Write(c.writeFn)
	n, werr := c.wr.n, c.wr.err
	c.wr = op{}
	c.wmu.Unlock()
	if err != nil {
		return n, renamed(err, "write")
	}
	return n, werr
}

func (c *Conn) read(fd uintptr) bool {
	for {
		n, err := RawRead(fd, c.rd.p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			c.rd.err = c.opError("read", err)
		case n == 0:
			c.rd.err = io.EOF
		}
		c.rd.n = n
		return true
	}
}

func (c *Conn) write(fd uintptr) bool {
	for c.wr.n < len(c.wr.p) {
		n, err := RawWrite(fd, c.wr.p[c.wr.n:])
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false // the send buffer is full: wait until writable
		case err != nil:
			c.wr.err = c.opError("write", err)
			return true
		}
		c.wr.n += n
	}
	return true
}

// opError is the error net.Conn's own Read or Write would give.
func (c *Conn) opError(opName string, err error) error {
	return &net.OpError{Op: opName, Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(),
		Err: os.NewSyscallError(opName, err)}
}

// renamed names RawConn's errors (a deadline, a closed connection) as the
// read or write they are.
func renamed(err error, opName string) error {
	if oe, ok := err.(*net.OpError); ok && (oe.Op == "raw-read" || oe.Op == "raw-write") {
		oe.Op = opName
	}
	return err
}
