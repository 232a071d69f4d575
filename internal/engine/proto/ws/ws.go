// Package ws is the engine's WebSocket client. Framing, masking and the
// close handshake are github.com/coder/websocket's; this package adds what
// a load generator needs on top of them:
//
//   - a Dialer shared by every user with the same transport settings (TLS,
//     proxy, timeouts) that times the opening handshake and classifies its
//     failures like an HTTP request's (refused, tls, timeout, http_4xx…);
//   - a Conn whose messages are read by one goroutine into a small queue,
//     each stamped with its arrival time, so that waiting for a message
//     can time out without breaking the connection (coder/websocket
//     closes a connection whose read is cancelled) and a round trip is
//     measured from the send to the arrival, not to when the user looked;
//   - the two WebSocket failure classes: ws_timeout (no matching message
//     in time, the connection stays up) and ws_closed (the connection
//     ended abnormally, or closed while a message was still awaited).
//
// A Conn is used by one virtual user at a time; only its reader goroutine
// runs beside it.
package ws

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/sockio"
)

// DefaultMaxMessage is the bytes of a received message kept when
// Config.MaxMessage is 0; longer messages are read whole, counted and
// truncated.
const DefaultMaxMessage = 1 << 20

// queueLen is how many received messages wait for the user before the
// reader stops reading (and TCP flow control slows the server).
const queueLen = 16

// Config tunes a Dialer and the connections it opens.
type Config struct {
	// ConnectTimeout bounds TCP connect and the TLS handshake; 0:
	// httpc.DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Timeout bounds the whole opening handshake (connect, TLS, HTTP
	// upgrade); 0: httpc.DefaultTimeout.
	Timeout            time.Duration
	InsecureSkipVerify bool
	TLSConfig          *tls.Config // base (roots, client certificate, SNI); cloned
	// Proxy, when set, is an HTTP proxy: wss:// goes through a CONNECT
	// tunnel, ws:// is sent to the proxy in absolute form.
	Proxy *url.URL
	// MaxMessage is the bytes kept of each received message (0:
	// DefaultMaxMessage).
	MaxMessage int
	UserAgent  string
}

// Dialer opens WebSocket connections. It is safe for concurrent use; the
// engine keeps one per distinct transport setting.
type Dialer struct {
	cfg    Config
	client *http.Client
}

// NewDialer returns a Dialer for cfg.
func NewDialer(cfg Config) *Dialer {
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = httpc.DefaultConnectTimeout
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = httpc.DefaultTimeout
	}
	if cfg.MaxMessage <= 0 {
		cfg.MaxMessage = DefaultMaxMessage
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = httpc.DefaultUserAgent
	}
	tc := &tls.Config{}
	if cfg.TLSConfig != nil {
		tc = cfg.TLSConfig.Clone()
	}
	tc.InsecureSkipVerify = tc.InsecureSkipVerify || cfg.InsecureSkipVerify
	// The upgrade is an HTTP/1.1 exchange: offer nothing else by ALPN.
	tc.NextProtos = []string{"http/1.1"}
	dialer := &net.Dialer{Timeout: max(cfg.ConnectTimeout, 0)}
	t := &http.Transport{
		// Raw system calls on the socket (sockio), under TLS too.
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return sockio.Wrap(c), nil
		},
		TLSClientConfig:     tc,
		TLSHandshakeTimeout: max(cfg.ConnectTimeout, 0),
		DisableCompression:  true,
		// An upgraded connection leaves the transport; nothing is kept
		// idle, and HTTP/2 is never attempted.
		DisableKeepAlives: true,
		TLSNextProto:      map[string]func(string, *tls.Conn) http.RoundTripper{},
	}
	if cfg.Proxy != nil {
		t.Proxy = http.ProxyURL(cfg.Proxy)
	}
	return &Dialer{cfg: cfg, client: &http.Client{Transport: t,
		// Redirects of the handshake are not followed: a 3xx is the answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// DialResult is the outcome of an opening handshake.
type DialResult struct {
	Start time.Time
	// Connect is from Start to the end of the handshake (TCP connect, TLS,
	// HTTP upgrade) or to the failure.
	Connect time.Duration
	// Status is the handshake's HTTP status (101 on success); 0 when no
	// response arrived.
	Status int
	Class  core.ErrorClass
	Err    error
	// Body is the start of the body of a refused handshake (for messages).
	Body []byte
}

// Dial opens a connection to rawURL (ws://, wss://, http:// or https://)
// with header sent in the handshake. On failure the Conn is nil and the
// result says why.
func (d *Dialer) Dial(ctx context.Context, rawURL string, header http.Header) (*Conn, DialResult) {
	res := DialResult{Start: time.Now()}
	if header.Get("User-Agent") == "" {
		header.Set("User-Agent", d.cfg.UserAgent)
	}
	dctx, cancel := ctx, context.CancelFunc(func() {})
	if d.cfg.Timeout > 0 {
		dctx, cancel = context.WithTimeout(ctx, d.cfg.Timeout)
	}
	defer cancel()
	c, resp, err := websocket.Dial(dctx, rawURL, &websocket.DialOptions{HTTPClient: d.client, HTTPHeader: header,
		Host: header.Get("Host")})
	res.Connect = time.Since(res.Start)
	if resp != nil {
		res.Status = resp.StatusCode
	}
	if err != nil {
		res.Err = err
		res.Class = classifyDial(err, res.Status)
		if resp != nil && resp.Body != nil {
			res.Body, _ = io.ReadAll(io.LimitReader(resp.Body, 1024))
		}
		if res.Status != 0 && res.Status != http.StatusSwitchingProtocols {
			res.Err = fmt.Errorf("handshake answered HTTP %d, not 101", res.Status)
		}
		return nil, res
	}
	c.SetReadLimit(-1) // messages over MaxMessage are read, counted and truncated
	conn := &Conn{c: c, in: make(chan Message, queueLen), done: make(chan struct{}), max: d.cfg.MaxMessage}
	conn.wctx, conn.wcancel = context.WithCancel(ctx)
	conn.wtimer = time.AfterFunc(time.Hour, conn.wcancel)
	conn.wtimer.Stop()
	go conn.read()
	return conn, res
}

// classifyDial is the class of a failed handshake: the HTTP status when
// the server answered something else than 101, else the transport error.
func classifyDial(err error, status int) core.ErrorClass {
	switch {
	case status >= 400:
		return core.StatusClass(status)
	case status != 0 && status != http.StatusSwitchingProtocols:
		return core.ErrProtocol // a 2xx or 3xx is no upgrade
	}
	return Classify(err)
}

// Message is one received message. Data is owned by the receiver.
type Message struct {
	Binary bool
	Data   []byte
	Size   int       // bytes received (Data may be truncated to MaxMessage)
	At     time.Time // arrival of the message's last frame
}

// Conn is an open WebSocket connection.
type Conn struct {
	c   *websocket.Conn
	in  chan Message
	max int

	done    chan struct{} // closed when the reader ends
	readErr error         // why the reader ended; read after done
	closing atomic.Bool   // Close was called: the reader's end is expected
	once    sync.Once

	// wctx bounds writes: the Dial's context, cancelled by wtimer when a
	// write outlasts its timeout.
	wctx    context.Context
	wcancel context.CancelFunc
	wtimer  *time.Timer

	// Counters: messages and payload bytes each way. The reader adds the
	// received ones, the user the sent ones.
	sent, sentBytes atomic.Int64
	recv, recvBytes atomic.Int64
}

// read is the connection's reader: every message is read whole and
// queued with its arrival time until the connection ends.
func (c *Conn) read() {
	defer close(c.done)
	ctx := context.Background()
	for {
		typ, r, err := c.c.Reader(ctx)
		if err != nil {
			c.readErr = err
			return
		}
		m := Message{Binary: typ == websocket.MessageBinary}
		m.Data, m.Size, err = readBounded(r, c.max)
		if err != nil {
			c.readErr = err
			return
		}
		m.At = time.Now()
		c.recv.Add(1)
		c.recvBytes.Add(int64(m.Size))
		// Blocks while the queue is full (the server is then slowed by TCP
		// flow control); Close drains it.
		c.in <- m
	}
}

// readBounded reads a whole message, keeping at most max bytes; n counts
// them all.
func readBounded(r io.Reader, max int) (buf []byte, n int, err error) {
	buf = make([]byte, 0, min(512, max))
	var scratch []byte
	for {
		var k int
		switch {
		case len(buf) < cap(buf):
			k, err = r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+k]
		case cap(buf) < max:
			nb := make([]byte, len(buf), min(2*cap(buf), max))
			copy(nb, buf)
			buf = nb
			continue
		default:
			// Over max: count and discard the rest.
			if scratch == nil {
				scratch = make([]byte, 4096)
			}
			k, err = r.Read(scratch)
		}
		n += k
		if err == io.EOF {
			return buf, n, nil
		}
		if err != nil {
			return buf, n, err
		}
	}
}

// Send writes one message (binary or text). timeout bounds the write (0:
// none); a write that does not finish in time, or that the Dial's context
// ends, closes the connection (coder/websocket closes a connection whose
// write is cancelled). The bound is one timer per connection, reset per
// message, not a context per message.
func (c *Conn) Send(binary bool, p []byte, timeout time.Duration) error {
	if err := c.ended(); err != nil {
		return err
	}
	typ := websocket.MessageText
	if binary {
		typ = websocket.MessageBinary
	}
	if timeout > 0 {
		c.wtimer.Reset(timeout)
	}
	err := c.c.Write(c.wctx, typ, p)
	if timeout > 0 {
		c.wtimer.Stop()
	}
	if err != nil {
		if e := c.ended(); e != nil {
			return e
		}
		return &ClosedError{Code: -1, Err: err}
	}
	c.sent.Add(1)
	c.sentBytes.Add(int64(len(p)))
	return nil
}

// ended returns a *ClosedError once the reader has stopped (the
// connection is gone), else nil.
func (c *Conn) ended() error {
	select {
	case <-c.done:
		return closedError(c.readErr)
	default:
		return nil
	}
}

// ErrTimeout is Next's error when no message arrived in time.
var ErrTimeout = errors.New("no message in time")

// Next returns the next received message, waiting until deadline (zero:
// no limit) or ctx's end. It fails with ErrTimeout, ctx's error, or a
// *ClosedError once the connection has ended and every message queued
// before was returned.
func (c *Conn) Next(ctx context.Context, t *time.Timer) (Message, error) {
	select {
	case m := <-c.in:
		return m, nil
	default:
	}
	var tc <-chan time.Time
	if t != nil {
		tc = t.C
	}
	select {
	case m := <-c.in:
		return m, nil
	case <-c.done:
		select {
		case m := <-c.in:
			return m, nil
		default:
		}
		return Message{}, closedError(c.readErr)
	case <-tc:
		return Message{}, ErrTimeout
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Close ends the connection: the close handshake with status 1000 (up to
// coder/websocket's 5 s), then the TCP connection. It returns the
// abnormal end the connection had before (a *ClosedError), or nil when it
// was open or closed normally by the server.
func (c *Conn) Close() error {
	var before error
	select {
	case <-c.done:
		before = closedError(c.readErr)
	default:
	}
	c.once.Do(func() {
		c.closing.Store(true)
		// Empty the queue so a reader blocked on it can see the close.
		go func() {
			for {
				select {
				case <-c.in:
				case <-c.done:
					return
				}
			}
		}()
		_ = c.c.Close(websocket.StatusNormalClosure, "")
		<-c.done
		c.wtimer.Stop()
		c.wcancel()
	})
	var ce *ClosedError
	if errors.As(before, &ce) && !ce.Abnormal() {
		return nil
	}
	return before
}

// Counts returns the messages and payload bytes sent and received so far.
func (c *Conn) Counts() (sent, sentBytes, recv, recvBytes int64) {
	return c.sent.Load(), c.sentBytes.Load(), c.recv.Load(), c.recvBytes.Load()
}

// ClosedError is the end of a connection: the close status the server
// sent (Code; 1006 when the connection was lost without a close frame,
// −1 when a send failed) and its reason.
type ClosedError struct {
	Code   int
	Reason string
	Err    error
}

func (e *ClosedError) Error() string {
	switch {
	case e.Code == -1:
		return "websocket send failed: " + e.Err.Error()
	case e.Code == int(websocket.StatusAbnormalClosure):
		return "websocket connection lost (1006, no close frame)"
	}
	s := "websocket closed by the server: status " + strconv.Itoa(e.Code)
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s
}

func (e *ClosedError) Unwrap() error { return e.Err }

// Abnormal reports whether the end was not a normal closure (1000) or
// the server going away (1001).
func (e *ClosedError) Abnormal() bool {
	return e.Code != int(websocket.StatusNormalClosure) && e.Code != int(websocket.StatusGoingAway)
}

func closedError(err error) error {
	if err == nil {
		err = net.ErrClosed
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		return &ClosedError{Code: int(ce.Code), Reason: ce.Reason, Err: err}
	}
	return &ClosedError{Code: int(websocket.StatusAbnormalClosure), Err: err}
}

// Classify maps a WebSocket failure to its class: ErrTimeout is
// ws_timeout, a *ClosedError ws_closed, a handshake failure as for an
// HTTP request.
func Classify(err error) core.ErrorClass {
	var ce *ClosedError
	switch {
	case err == nil:
		return core.ErrNone
	case errors.Is(err, ErrTimeout):
		return core.ErrWSTimeout
	case errors.As(err, &ce):
		return core.ErrWSClosed
	}
	return httpc.Classify(err)
}
