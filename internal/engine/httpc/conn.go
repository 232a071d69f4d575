package httpc

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/sockio"
)

// Buffer sizes. 2 KiB holds a typical request or response head in one
// system call each way; larger bodies bypass the buffer (bufio reads straight
// into the caller's slice, and discarded remainders go through a 32 KiB sink).
// With 4 KiB, 1,000 synchronised users peaked 2.3 KiB per user higher in RSS
// while closed-loop throughput did not change measurably.
const (
	readBufSize  = 2 << 10
	writeBufSize = 2 << 10
)

// idleProbeAfter is how long a kept-alive connection may sit unused before
// it is checked (one non-blocking peek) for a close by the server. Servers
// commonly drop idle connections after 5 s (Node.js) to 75 s (nginx); the
// check costs one system call and is skipped for busy connections, so the
// closed-loop hot path never pays it.
const idleProbeAfter = time.Second

// counter wraps a connection and counts the bytes that pass through it, so
// BytesSent/BytesRecv are exact without touching the data.
type counter struct {
	nc net.Conn
	r  int64 // bytes read from nc
	w  int64 // bytes accepted by nc.Write
}

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.nc.Read(p)
	c.r += int64(n)
	return n, err
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.nc.Write(p)
	c.w += int64(n)
	return n, err
}

// reqWriter buffers one request so that its head (and a small body) leave
// in one write system call. Its buffer is borrowed (Buffers) only while the
// request is being written: it is handed back as soon as the last byte was
// accepted by the socket, before the wait for the response, so users waiting
// for their responses hold no buffer.
type reqWriter struct {
	arr *[writeBufSize]byte // the borrowed buffer, nil when none
	buf []byte              // arr[:buffered]
	out *counter
	err error
}

// Write buffers p; what does not fit is flushed, and a large p with nothing
// buffered goes straight to the socket (like bufio.Writer).
func (w *reqWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > cap(w.buf)-len(w.buf) && w.err == nil {
		var k int
		if len(w.buf) == 0 {
			k, w.err = w.out.Write(p)
		} else {
			k = copy(w.buf[len(w.buf):cap(w.buf)], p)
			w.buf = w.buf[:len(w.buf)+k]
			_ = w.Flush()
		}
		n += k
		p = p[k:]
	}
	if w.err != nil {
		return n, w.err
	}
	w.buf = append(w.buf, p...)
	return n + len(p), nil
}

// WriteString is Write for a string, without converting it.
func (w *reqWriter) WriteString(s string) (int, error) {
	if len(s) <= cap(w.buf)-len(w.buf) {
		w.buf = append(w.buf, s...)
		return len(s), nil
	}
	n := 0
	for len(s) > 0 && w.err == nil {
		if len(w.buf) == cap(w.buf) {
			_ = w.Flush()
			continue
		}
		k := min(len(s), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, s[:k]...)
		s = s[k:]
		n += k
	}
	return n, w.err
}

// WriteByte buffers one byte.
func (w *reqWriter) WriteByte(c byte) error {
	if len(w.buf) == cap(w.buf) {
		if err := w.Flush(); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, c)
	return nil
}

// Flush writes what is buffered.
func (w *reqWriter) Flush() error {
	if w.err != nil {
		return w.err
	}
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.out.Write(w.buf)
	if n < len(w.buf) && err == nil {
		err = io.ErrShortWrite
	}
	if err != nil {
		w.buf = w.buf[:copy(w.buf, w.buf[n:])]
		w.err = err
		return err
	}
	w.buf = w.buf[:0]
	return nil
}

// conn is one HTTP/1.1 connection with its buffers. A conn is used by one
// request at a time; between requests it is idle in a hostSlot or a Pool.
type conn struct {
	nc  net.Conn        // *net.TCPConn or *tls.Conn
	raw syscall.RawConn // of the TCP socket, for the idle probe; may be nil
	cnt counter
	// br is borrowed when a response starts to arrive and given back when
	// it has been read whole; bw holds a buffer only while a request is
	// written. Between requests a connection holds neither, unless the
	// server sent more than was asked for (then the connection is dropped).
	br  *bufio.Reader
	bw  reqWriter
	tls bool
	// State of one send-and-await (see sendAwait).
	awaitDone bool
	reused    bool                  // the connection served an earlier request
	closed    error                 // what the look before the write found: the server closed or reset the connection, or sent unasked
	awaitFn   func(fd uintptr) bool // cn.writeThenWait, bound once per connection
	lent      *Buffers              // where bw's buffer goes back during the wait
	deadline  time.Time             // last deadline set on nc
	lastUsed  time.Time             // end of the last exchange
	ph        *poolHost             // owning pool host in shared mode, else nil
}

// setDeadline arms the connection deadline d. exact deadlines (from a
// context) are set as given. Otherwise d is start+Timeout and may be
// enforced up to slack later: a deadline already armed in [d, d+slack] is
// kept, so a busy connection re-arms its timer about once per slack instead
// of once per request (the re-arm was 4 % of the closed-loop profile).
func (cn *conn) setDeadline(d time.Time, slack time.Duration, exact bool) {
	if exact || slack <= 0 || d.IsZero() {
		if !d.Equal(cn.deadline) {
			cn.deadline = d
			_ = cn.nc.SetDeadline(d) // fails only on a closed conn; the next I/O reports it
		}
		return
	}
	if !cn.deadline.Before(d) && !cn.deadline.After(d.Add(slack)) {
		return
	}
	cn.deadline = d.Add(slack)
	_ = cn.nc.SetDeadline(cn.deadline)
}

// readCount is the number of response bytes consumed so far: bytes read from
// the socket minus those still buffered.
func (cn *conn) readCount() int64 {
	if cn.br == nil {
		return cn.cnt.r
	}
	return cn.cnt.r - int64(cn.br.Buffered())
}

// sendAwait writes the request buffered in bw (the rest of it; earlier
// parts may have been flushed already) and, on a plain TCP connection,
// waits until the socket is readable (the response, a close or a reset)
// in the same RawConn.Read: the request is written from inside the read
// callback, which then reports "not ready", so the goroutine parks on the
// socket's read readiness. The wait starts after the poller's readiness was
// reset (RawConn.Read resets it before the first callback), so the
// response's readiness event cannot be missed. The write buffer goes back
// to the pool before the wait.
//
// That reset also forgets an edge that came earlier: a server's FIN queued
// while the connection was idle raises no new one, and a wait for it would
// last until the deadline (issue 31: 36 % of the requests to a server that
// half-closes kept-alive connections timed out). So the callback first
// peeks at the socket (one non-blocking recv, MSG_PEEK): a close, a reset
// or unasked bytes there end the exchange before the request is written
// (cn.closed, errServerClosed), as net/http's transport drops an idle
// connection its reader saw closed; anything arriving after the peek
// raises an edge the wait sees. The peek replaces the read that would fail
// with EAGAIN, so a request still costs two socket calls and one wait.
//
// A write the socket does not take whole (a full send buffer), an error or
// a deadline already past leave the rest to the ordinary Flush, which
// reports errors as usual; a failed wait is not reported here either, as
// the read that follows meets the same deadline or error.
func (c *Client) sendAwait(cn *conn) error {
	if cn.raw != nil && !cn.tls && cn.bw.err == nil && len(cn.bw.buf) > 0 {
		if cn.awaitFn == nil {
			cn.awaitFn = cn.writeThenWait
		}
		cn.awaitDone, cn.closed, cn.lent = false, nil, c.cfg.Buffers
		_ = cn.raw.Read(cn.awaitFn)
		cn.lent = nil
		if cn.closed != nil {
			return &closedError{err: cn.closed}
		}
		if len(cn.bw.buf) == 0 {
			return nil
		}
	}
	err := cn.bw.Flush()
	c.giveBackWriter(cn)
	return err
}

// errUnsolicited is what the peek found on a kept-alive connection that
// has bytes nobody asked for (an unsolicited 408, for example).
var errUnsolicited = &ProtocolError{Msg: "unsolicited bytes on an idle kept-alive connection"}

// closedError is a connection found closed (or unusable) before the
// request was written to it.
type closedError struct{ err error }

func (e *closedError) Error() string {
	return "server closed the connection before the request was sent: " + e.err.Error()
}
func (e *closedError) Unwrap() error { return e.err }

// writeThenWait is the RawConn.Read callback of sendAwait: the first call
// peeks for a close, writes and, when all was accepted, returns the buffer
// and asks to wait for readability; the call after the wait ends it.
func (cn *conn) writeThenWait(fd uintptr) bool {
	if cn.awaitDone {
		return true
	}
	cn.awaitDone = true
	switch n, err := sockio.RawPeek(fd); {
	case err == syscall.EAGAIN || err == syscall.EWOULDBLOCK || err == errors.ErrUnsupported:
	case err != nil:
		cn.closed = err // a reset
		return true
	case n == 0:
		cn.closed = io.EOF
		return true
	case cn.reused:
		// Bytes before the request: an unsolicited response makes a
		// kept-alive connection unusable. On a new connection they are
		// left to the response parser.
		cn.closed = errUnsolicited
		return true
	}
	w := &cn.bw
	for {
		n, err := sockio.RawWrite(fd, w.buf)
		if err == syscall.EINTR {
			continue
		}
		if n > 0 {
			cn.cnt.w += int64(n)
			w.buf = w.buf[:copy(w.buf, w.buf[n:])]
		}
		if err != nil || len(w.buf) > 0 {
			return true // short or failed: no wait, Flush finishes
		}
		if cn.lent != nil && w.arr != nil {
			cn.lent.w.Put(w.arr)
			w.arr, w.buf = nil, nil
		}
		return false
	}
}

// alive reports whether an idle connection can still be used. The server
// may have closed it, or sent bytes nobody asked for (an unsolicited 408, for
// example), and either makes it unusable.
func (cn *conn) alive() bool {
	if cn.br != nil && cn.br.Buffered() > 0 {
		return false
	}
	if cn.raw == nil {
		return true
	}
	return peekAlive(cn.raw, cn.tls)
}

// resolve returns the addresses of t, from the per-client cache when fresh.
func (c *Client) resolve(ctx context.Context, t *target) ([]netip.Addr, error) {
	if t.ip.IsValid() {
		c.oneAddr[0] = t.ip
		return c.oneAddr[:], nil
	}
	now := time.Now()
	if e, ok := c.dns[t.hostname]; ok && now.Before(e.expires) {
		return e.addrs, nil
	}
	addrs, err := c.resolver.LookupNetIP(ctx, "ip", t.hostname)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, &net.DNSError{Err: "no addresses", Name: t.hostname, IsNotFound: true}
	}
	// Prefer IPv4 first, as most load targets listen there; the others are
	// still tried in order when the first fails.
	ordered := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if a.Unmap().Is4() {
			ordered = append(ordered, a.Unmap())
		}
	}
	for _, a := range addrs {
		if !a.Unmap().Is4() {
			ordered = append(ordered, a)
		}
	}
	if c.cfg.DNSTTL > 0 {
		if len(c.dns) >= maxTargets {
			clear(c.dns)
		}
		if c.dns == nil {
			c.dns = make(map[string]dnsEntry)
		}
		c.dns[t.hostname] = dnsEntry{addrs: ordered, expires: now.Add(c.cfg.DNSTTL)}
	}
	return ordered, nil
}

// dnsEntry is one cached resolution.
type dnsEntry struct {
	addrs   []netip.Addr
	expires time.Time
}

// dial opens a new connection to t: resolve, TCP connect, TLS handshake. The
// connect timeout bounds all three; deadline (the request's) may cut it
// shorter. It returns the phase that failed for error classification.
func (c *Client) dial(ctx context.Context, t *target, deadline time.Time) (*conn, phase, error) {
	cdl := deadline
	if c.cfg.ConnectTimeout > 0 {
		if d := time.Now().Add(c.cfg.ConnectTimeout); cdl.IsZero() || d.Before(cdl) {
			cdl = d
		}
	}
	if !cdl.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, cdl)
		defer cancel()
	}
	dt := t // where the TCP connection goes: the target or the proxy
	if c.cfg.Proxy != nil {
		if c.proxyT == nil {
			pt, err := parseTarget(c.cfg.Proxy.String())
			if err != nil {
				return nil, phaseConnect, fmt.Errorf("proxy: %w", err)
			}
			c.proxyT = pt
		}
		dt = c.proxyT
	}
	addrs, err := c.resolve(ctx, dt)
	if err != nil {
		return nil, phaseDNS, fmt.Errorf("resolving %s: %w", dt.hostname, err)
	}
	var tc *net.TCPConn
	for _, a := range addrs {
		// Not Dialer.DialTCP: given the zero AddrPort as local address it
		// binds the socket to port 0 before connecting, which takes the
		// ephemeral port from one range shared by every destination
		// (about 28,000 connections in all, and binds slowing to a crawl
		// near that), where connect alone picks a port per destination.
		var nc net.Conn
		nc, err = c.dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a, dt.port).String())
		if err == nil {
			tc = nc.(*net.TCPConn)
		}
		if err == nil || ctx.Err() != nil {
			break
		}
	}
	if err != nil {
		return nil, phaseConnect, fmt.Errorf("connecting to %s: %w", dt.key, err)
	}
	if c.cfg.Proxy != nil && t.https {
		if dl, ok := ctx.Deadline(); ok {
			_ = tc.SetDeadline(dl)
		}
		if err := Tunnel(tc, net.JoinHostPort(t.hostname, strconv.Itoa(int(t.port))), c.cfg.Proxy); err != nil {
			_ = tc.Close()
			return nil, phaseConnect, err
		}
		_ = tc.SetDeadline(time.Time{})
	}
	// The connection reads and writes with raw system calls (sockio),
	// under TLS too.
	sc := sockio.Wrap(tc)
	cn := c.newConn(sc)
	if raw, err := tc.SyscallConn(); err == nil {
		cn.raw = raw
	}
	if t.https {
		tlc := tls.Client(sc, t.tlsConfig)
		if err := tlc.HandshakeContext(ctx); err != nil {
			_ = tc.Close()
			return nil, phaseTLS, &handshakeError{addr: t.key, err: err}
		}
		cn.nc = tlc
		cn.cnt.nc = tlc
		cn.tls = true
	}
	return cn, phaseNone, nil
}

// newConn wraps nc, reusing the conn (and its buffers, without a Buffers
// pool) of the last connection this client closed (per-user mode): a user
// that reconnects for every request (keep-alive off) then allocates only
// what the network stack does.
func (c *Client) newConn(nc net.Conn) *conn {
	cn := c.spare
	c.spare = nil
	if cn == nil || c.pool != nil {
		cn = &conn{}
	}
	cn.nc = nc
	cn.cnt = counter{nc: nc}
	cn.bw.out = &cn.cnt
	if cn.br != nil {
		cn.br.Reset(&cn.cnt)
	}
	return cn
}

// Buffers lends connection buffers to Clients for the duration of a
// request (Config.Buffers). Safe for concurrent use.
type Buffers struct {
	r, w sync.Pool
}

// NewBuffers returns an empty buffer pool.
func NewBuffers() *Buffers {
	b := &Buffers{}
	b.r.New = func() any { return bufio.NewReaderSize(nil, readBufSize) }
	b.w.New = func() any { return new([writeBufSize]byte) }
	return b
}

// borrowWriter gives cn a write buffer (from the pool, or its own).
func (c *Client) borrowWriter(cn *conn) {
	w := &cn.bw
	w.out, w.err = &cn.cnt, nil
	if w.arr == nil {
		if c.cfg.Buffers != nil {
			w.arr = c.cfg.Buffers.w.Get().(*[writeBufSize]byte)
		} else {
			w.arr = new([writeBufSize]byte)
		}
	}
	w.buf = w.arr[:0]
}

// giveBackWriter returns an emptied write buffer to the pool.
func (c *Client) giveBackWriter(cn *conn) {
	w := &cn.bw
	if c.cfg.Buffers == nil || w.arr == nil || len(w.buf) > 0 {
		return
	}
	c.cfg.Buffers.w.Put(w.arr)
	w.arr, w.buf = nil, nil
}

// borrowReader gives cn a read buffer for a response, unless it still has
// one.
func (c *Client) borrowReader(cn *conn) {
	switch {
	case cn.br != nil:
	case c.cfg.Buffers != nil:
		cn.br = c.cfg.Buffers.r.Get().(*bufio.Reader)
		cn.br.Reset(&cn.cnt)
	default:
		cn.br = bufio.NewReaderSize(&cn.cnt, readBufSize)
	}
}

// giveBack returns an idle connection's buffers to the pool. Only when
// nothing is buffered: a kept-alive connection between requests has read
// its whole response and flushed its whole request.
func (c *Client) giveBack(cn *conn) {
	c.giveBackWriter(cn)
	if c.cfg.Buffers == nil || cn.br == nil || cn.br.Buffered() > 0 {
		return
	}
	cn.br.Reset(nil)
	c.cfg.Buffers.r.Put(cn.br)
	cn.br = nil
}

// closeConn closes cn and keeps its buffers for the next dial.
func (c *Client) closeConn(cn *conn) {
	_ = cn.nc.Close()
	cn.bw.buf, cn.bw.err = cn.bw.buf[:0], nil
	if cn.br != nil {
		cn.br.Reset(nil)
	}
	c.giveBack(cn)
	if cn.ph != nil {
		cn.ph.release()
		return
	}
	*cn = conn{br: cn.br, bw: reqWriter{arr: cn.bw.arr}}
	c.spare = cn
}

// ProxyError is a proxy's refusal to open a CONNECT tunnel.
type ProxyError struct {
	Status string // the proxy's status line, e.g. "407 Proxy Authentication Required"
}

func (e *ProxyError) Error() string { return "proxy CONNECT: " + e.Status }

// Tunnel asks the HTTP proxy at the other end of nc to open a CONNECT
// tunnel to addr (host:port). On success nc carries the tunnel.
func Tunnel(nc net.Conn, addr string, proxy *url.URL) error {
	req := "CONNECT " + addr + " HTTP/1.1\r\nHost: " + addr + "\r\n"
	if u := proxy.User; u != nil {
		pw, _ := u.Password()
		req += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pw)) + "\r\n"
	}
	if _, err := io.WriteString(nc, req+"\r\n"); err != nil {
		return fmt.Errorf("proxy CONNECT: %w", err)
	}
	// Read the reply byte by byte up to the blank line: nothing of the
	// tunnel may be consumed.
	var head []byte
	var b [1]byte
	for !bytes.HasSuffix(head, []byte("\r\n\r\n")) {
		if len(head) > 16<<10 {
			return &ProtocolError{Msg: "proxy CONNECT reply head too long"}
		}
		if _, err := io.ReadFull(nc, b[:]); err != nil {
			return fmt.Errorf("proxy CONNECT: %w", err)
		}
		head = append(head, b[0])
	}
	line, _, _ := bytes.Cut(head, []byte("\r\n"))
	_, status, ok := bytes.Cut(line, []byte(" "))
	if !ok || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return &ProtocolError{Msg: "proxy CONNECT: bad reply " + strconv.Quote(string(line))}
	}
	if !bytes.HasPrefix(status, []byte("200")) {
		return &ProxyError{Status: string(status)}
	}
	return nil
}
