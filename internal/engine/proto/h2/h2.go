// Package h2 sends the engine's requests over HTTP/2: over TLS negotiated
// by ALPN, or cleartext (h2c) with prior knowledge. Frames are read and
// written with golang.org/x/net/http2's Framer and header blocks coded with
// its hpack package; the connection itself is this package's, built for a
// load generator rather than a browser:
//
//   - a pool that puts at most MaxConcurrentStreams streams on one
//     connection (and never more than the server's
//     SETTINGS_MAX_CONCURRENT_STREAMS) and opens another when all are full;
//   - per connection one reader goroutine, which dispatches frames to the
//     waiting request by stream id, and one writer goroutine, which sends
//     all frames queued since its last write in one write: the requests of
//     many users share a TLS record and a system call;
//   - one HPACK encoder per connection, so repeated headers are sent as
//     table indexes; large receive windows (2^30-1, like h2load) returned
//     in batches; a request refused unprocessed (GOAWAY above its stream,
//     REFUSED_STREAM) is sent once more on another connection;
//   - a Client that fills the same httpc.Result as the HTTP/1.1 client, so
//     the engine times, checks and extracts an HTTP/2 response exactly like
//     an HTTP/1.1 one, reusing its stream, header and body buffers.
//
// Mode Auto offers h2 and http/1.1 by ALPN and falls back to HTTP/1.1
// (net/http's transport) when a TLS server does not choose h2.
package h2

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/sockio"
)

// DefaultMaxConcurrentStreams is the streams per connection when
// Config.MaxConcurrentStreams is 0 (the value most servers announce).
const DefaultMaxConcurrentStreams = 100

// Config tunes a Pool and its Clients.
type Config struct {
	// Auto offers both h2 and http/1.1 over TLS and uses whichever the
	// server picks; without it a TLS server that does not pick h2 fails
	// the request (class protocol).
	Auto bool
	// MaxConcurrentStreams bounds the streams in flight on one connection
	// (the server's own SETTINGS limit also applies). 0: the default.
	MaxConcurrentStreams int
	ConnectTimeout       time.Duration // dial and TLS handshake; 0: httpc's default
	Timeout              time.Duration // whole request; 0: httpc's default
	InsecureSkipVerify   bool
	TLSConfig            *tls.Config // base (roots, client certificates); cloned
	FollowRedirects      int
	MaxBody              int // bytes of body kept in Result.Body
	UserAgent            string
	// Proxy, when set, is an HTTP proxy: every connection (TLS or h2c)
	// goes through a CONNECT tunnel.
	Proxy *url.URL
}

// Pool holds HTTP/2 connections, shared by every Client made from it.
type Pool struct {
	cfg    Config
	h1     *http.Transport // Auto's HTTP/1.1 fallback
	dialer net.Dialer

	mu      sync.Mutex
	conns   map[string][]*conn // by scheme://host:port
	h1Hosts map[string]bool    // Auto: TLS hosts that did not pick h2
}

// NewPool returns an empty pool.
func NewPool(cfg Config) *Pool {
	if cfg.MaxConcurrentStreams <= 0 {
		cfg.MaxConcurrentStreams = DefaultMaxConcurrentStreams
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = httpc.DefaultConnectTimeout
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = httpc.DefaultTimeout
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = httpc.DefaultUserAgent
	}
	if cfg.MaxBody < 0 {
		cfg.MaxBody = 0
	}
	p := &Pool{cfg: cfg, conns: map[string][]*conn{}, h1Hosts: map[string]bool{}}
	p.dialer.Timeout = max(cfg.ConnectTimeout, 0)
	if cfg.Auto {
		p.h1 = &http.Transport{TLSClientConfig: p.tlsConfig("", []string{"http/1.1"}), Proxy: http.ProxyURL(cfg.Proxy),
			DialContext: p.dialer.DialContext, DisableCompression: true, MaxIdleConnsPerHost: 1024}
	}
	return p
}

// Close closes every connection of the pool.
func (p *Pool) Close() {
	p.mu.Lock()
	var all []*conn
	for k, cs := range p.conns {
		all = append(all, cs...)
		delete(p.conns, k)
	}
	p.mu.Unlock()
	for _, cn := range all {
		cn.close()
	}
	if p.h1 != nil {
		p.h1.CloseIdleConnections()
	}
}

func (p *Pool) tlsConfig(serverName string, protos []string) *tls.Config {
	var c *tls.Config
	if p.cfg.TLSConfig != nil {
		c = p.cfg.TLSConfig.Clone()
	} else {
		c = &tls.Config{}
	}
	c.InsecureSkipVerify = c.InsecureSkipVerify || p.cfg.InsecureSkipVerify
	if c.ServerName == "" {
		c.ServerName = serverName
	}
	c.NextProtos = protos
	return c
}

// errNotH2 marks a TLS server that did not choose h2 by ALPN.
type errNotH2 struct{ alpn string }

func (e errNotH2) Error() string {
	if e.alpn == "" {
		return "server does not offer HTTP/2 by ALPN (no_application_protocol)"
	}
	return fmt.Sprintf("server did not negotiate HTTP/2 by ALPN (chose %q)", e.alpn)
}

// errUseH1 sends a request of an Auto pool to the HTTP/1.1 fallback.
var errUseH1 = errors.New("use HTTP/1.1")

// isH1 says whether an Auto pool already knows key speaks only HTTP/1.1.
func (p *Pool) isH1(key string) bool {
	if !p.cfg.Auto {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.h1Hosts[key]
}

// pick returns a connection to key with a stream slot taken (a pending
// dial counts: its waiters take its slots), or nil when a new connection
// is needed. Connections that take no new streams and have none left are
// closed and dropped. p.mu is held.
func (p *Pool) pick(key string) *conn {
	cs := p.conns[key]
	live := cs[:0]
	var got *conn
	for _, cn := range cs {
		cn.mu.Lock()
		pending := !cn.dialed
		ok := pending || cn.usable()
		if !ok && cn.reserved <= 0 {
			cn.mu.Unlock()
			cn.close()
			continue
		}
		limit := cn.limit
		if !pending {
			limit = cn.maxStreams()
		}
		if got == nil && ok && cn.reserved < limit {
			cn.reserved++
			got = cn
		}
		cn.mu.Unlock()
		live = append(live, cn)
	}
	clear(cs[len(live):])
	p.conns[key] = live
	return got
}

// Conns returns the number of open connections of the pool (for tests and
// the trace).
func (p *Pool) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, cs := range p.conns {
		n += len(cs)
	}
	return n
}

// dialConn opens cn's connection to t: TCP (through the proxy when one is
// set), TLS with ALPN for https, then HTTP/2's preface and SETTINGS.
func (p *Pool) dialConn(ctx context.Context, cn *conn, t *target, deadline time.Time) error {
	if p.cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.ConnectTimeout)
		defer cancel()
	}
	if dl, ok := ctx.Deadline(); ok && (deadline.IsZero() || dl.Before(deadline)) {
		deadline = dl
	}
	nc, err := p.dial(ctx, t.addr)
	if err != nil {
		return err
	}
	nc = sockio.Wrap(nc) // raw system calls, under TLS too
	if t.scheme == "https" {
		if nc, err = p.handshakeTLS(ctx, nc, t.host); err != nil {
			return err
		}
	}
	if err := cn.handshake(nc, deadline); err != nil {
		_ = nc.Close()
		return err
	}
	return nil
}

func (p *Pool) dial(ctx context.Context, addr string) (net.Conn, error) {
	if p.cfg.Proxy == nil {
		return p.dialer.DialContext(ctx, "tcp", addr)
	}
	paddr := p.cfg.Proxy.Host
	if p.cfg.Proxy.Port() == "" {
		paddr = net.JoinHostPort(p.cfg.Proxy.Hostname(), "80")
	}
	nc, err := p.dialer.DialContext(ctx, "tcp", paddr)
	if err != nil {
		return nil, err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	if err := httpc.Tunnel(nc, addr, p.cfg.Proxy); err != nil {
		_ = nc.Close()
		return nil, err
	}
	_ = nc.SetDeadline(time.Time{})
	return nc, nil
}

// handshakeTLS runs the TLS handshake offering h2 by ALPN (and http/1.1
// in Auto mode).
func (p *Pool) handshakeTLS(ctx context.Context, nc net.Conn, host string) (net.Conn, error) {
	protos := []string{"h2"}
	if p.cfg.Auto {
		protos = []string{"h2", "http/1.1"}
	}
	tc := tls.Client(nc, p.tlsConfig(host, protos))
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		if noALPN(err) {
			return nil, errNotH2{}
		}
		return nil, err
	}
	if got := tc.ConnectionState().NegotiatedProtocol; got != "h2" {
		_ = tc.Close()
		return nil, errNotH2{alpn: got}
	}
	return tc, nil
}

// noALPN reports whether a handshake failed on the server's
// no_application_protocol alert (it does not speak h2). crypto/tls
// returns a received alert as a *net.OpError "remote error" around an
// unexported uint8 alert type.
func noALPN(err error) bool {
	var alert tls.AlertError
	if errors.As(err, &alert) {
		return alert == 120
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil {
		v := reflect.ValueOf(op.Err)
		return v.Kind() == reflect.Uint8 && v.Uint() == 120
	}
	return false
}

// Client sends one virtual user's requests through a Pool. Like
// httpc.Client it is not safe for concurrent use.
type Client struct {
	p       *Pool
	jar     http.CookieJar
	hc      http.Client // Auto's HTTP/1.1 fallback
	st      stream      // the current request's stream, reused
	timer   *time.Timer
	last    *conn // connection of the last request: tried first
	targets map[string]*target
	lower   map[string]string // header names in lower case
	hdr     []hpack.HeaderField
	cookies []*http.Cookie
	body    []byte
	heads   httpc.HeaderStore // the last response's header fields
	hops    int
	clen    string // the last content-length sent, and its value
	clenN   int64
}

// target is a request URL, parsed once per Client.
type target struct {
	u                             *url.URL
	raw                           string // as given
	scheme, authority, path, host string
	addr, key                     string // host:port and scheme://host:port
}

// maxTargets bounds a Client's URL cache (URLs made per user or per
// iteration would grow it without end).
const maxTargets = 256

// NewClient returns a client on p; jar (may be nil) is the user's cookie
// jar, shared with its HTTP/1.1 client.
func NewClient(p *Pool, jar http.CookieJar) *Client {
	c := &Client{p: p, jar: jar, targets: map[string]*target{}, lower: map[string]string{}}
	c.st.done = make(chan struct{}, 1)
	if p.h1 != nil {
		c.hc = http.Client{Transport: p.h1, Jar: jar, CheckRedirect: c.checkRedirect}
	}
	return c
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.hops {
		return http.ErrUseLastResponse
	}
	return nil
}

func (c *Client) target(raw string) (*target, error) {
	if t := c.targets[raw]; t != nil {
		return t, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, unwrapURL(err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("unsupported protocol scheme %q", u.Scheme)
	}
	if u.Host == "" {
		return nil, errors.New("no host in request URL")
	}
	t := &target{raw: raw, u: u, scheme: u.Scheme, authority: u.Host, path: u.RequestURI(), host: u.Hostname()}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	t.addr = net.JoinHostPort(t.host, port)
	t.key = t.scheme + "://" + t.addr
	if len(c.targets) >= maxTargets {
		clear(c.targets)
	}
	c.targets[raw] = t
	return t, nil
}

// lowerName returns name in lower case (HTTP/2 requires it), cached.
func (c *Client) lowerName(name string) string {
	if l, ok := c.lower[name]; ok {
		return l
	}
	l := strings.ToLower(name)
	if len(c.lower) < maxTargets {
		c.lower[name] = l
	}
	return l
}

// Do sends req and fills res as httpc.Client.Do does: Start, Connect,
// TTFB, Total, status, headers, the first MaxBody bytes of the body, and
// the error class.
func (c *Client) Do(ctx context.Context, req *httpc.Request, res *httpc.Result) error {
	start := time.Now()
	*res = httpc.Result{Start: start, URL: req.URL}
	err := c.do(ctx, req, res, start)
	if errors.Is(err, errUseH1) {
		*res = httpc.Result{Start: start, URL: req.URL, Connect: res.Connect}
		err = c.doH1(ctx, req, res, start)
	}
	res.Total = time.Since(start)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err)
		}
		res.Err = err
		res.Class = Classify(err)
	}
	return err
}

// exchange is one request and response of Do (a redirect makes more).
type exchange struct {
	method string
	t      *target
	body   []byte
	stream httpc.Stream
	// content-length for a body, "" without one
	clen string
}

func (c *Client) do(ctx context.Context, req *httpc.Request, res *httpc.Result, start time.Time) error {
	timeout := c.p.cfg.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = start.Add(timeout)
	}
	c.hops = c.p.cfg.FollowRedirects
	if req.Redirects > 0 {
		c.hops = req.Redirects
	} else if req.Redirects < 0 {
		c.hops = 0
	}
	ex := exchange{method: req.Method, body: req.Body, stream: req.Stream}
	if ex.method == "" {
		ex.method = http.MethodGet
	}
	t, err := c.target(req.URL)
	if err != nil {
		return err
	}
	ex.t = t
	for {
		if ex.stream != nil {
			size, err := ex.stream.Size()
			if err != nil {
				return err
			}
			ex.clen = c.contentLength(size)
		} else if ex.body != nil || ex.method == http.MethodPost || ex.method == http.MethodPut || ex.method == http.MethodPatch {
			ex.clen = c.contentLength(int64(len(ex.body)))
		} else {
			ex.clen = ""
		}
		if err := c.exchange(ctx, &ex, req.Header, res, start, deadline); err != nil {
			return err
		}
		s := &c.st
		loc := ""
		if c.hops > 0 && isRedirect(s.status) {
			for _, f := range s.hdr {
				if f.Name == "location" {
					loc = f.Value
					break
				}
			}
		}
		if loc == "" {
			res.Status, res.Proto = s.status, "HTTP/2.0"
			res.URL = ex.t.raw
			c.heads.Reset()
			for _, f := range s.hdr {
				c.heads.Add(f.Name, f.Value)
			}
			res.SetHeaders(&c.heads)
			res.Body = s.body
			res.BodySize = s.size
			return nil
		}
		u, err := ex.t.u.Parse(loc)
		if err != nil {
			return fmt.Errorf("redirect to a bad Location %q: %w", loc, unwrapURL(err))
		}
		if ex.t, err = c.target(u.String()); err != nil {
			return err
		}
		c.hops--
		res.Redirects++
		switch s.status {
		case http.StatusSeeOther:
			if ex.method != http.MethodHead {
				ex.method, ex.body, ex.stream = http.MethodGet, nil, nil
			}
		case http.StatusMovedPermanently, http.StatusFound:
			if ex.method == http.MethodPost {
				ex.method, ex.body, ex.stream = http.MethodGet, nil, nil
			}
		}
		if c.p.isH1(ex.t.key) {
			return errUseH1
		}
	}
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// contentLength formats n, reusing the last string when n repeats.
func (c *Client) contentLength(n int64) string {
	if c.clen == "" || c.clenN != n {
		c.clen, c.clenN = strconv.FormatInt(n, 10), n
	}
	return c.clen
}

// exchange sends one request on a connection of the pool and waits for
// its response in c.st. A request the server refused unprocessed (GOAWAY,
// REFUSED_STREAM, a connection that closed before the stream started) is
// sent again on another connection, up to maxRetries times (never a Stream
// body, which may not be replayable).
func (c *Client) exchange(ctx context.Context, ex *exchange, hdr []httpc.Header, res *httpc.Result, start, deadline time.Time) error {
	rq := request{method: ex.method, scheme: ex.t.scheme, authority: ex.t.authority, path: ex.t.path,
		contentLength: ex.clen, body: ex.body, stream: ex.stream}
	c.hdr = c.hdr[:0]
	ua := true
	sent := int64(len(ex.method) + len(ex.t.path) + len(ex.t.authority) + len(ex.body))
	for _, h := range hdr {
		name := c.lowerName(h.Name)
		sent += int64(len(h.Name) + len(h.Value) + 4)
		switch name {
		case "host":
			rq.authority = h.Value
			continue
		case "content-length", "transfer-encoding", "connection", "keep-alive", "proxy-connection", "upgrade":
			continue
		case "te":
			if h.Value != "trailers" {
				continue
			}
		case "user-agent":
			ua = false
		}
		c.hdr = append(c.hdr, hpack.HeaderField{Name: name, Value: h.Value})
	}
	if ua {
		c.hdr = append(c.hdr, hpack.HeaderField{Name: "user-agent", Value: c.p.cfg.UserAgent})
	}
	if c.jar != nil {
		if cks := c.jar.Cookies(ex.t.u); len(cks) > 0 {
			var b strings.Builder
			for i, ck := range cks {
				if i > 0 {
					b.WriteString("; ")
				}
				b.WriteString(ck.Name + "=" + ck.Value)
			}
			c.hdr = append(c.hdr, hpack.HeaderField{Name: "cookie", Value: b.String()})
		}
	}
	rq.header = c.hdr
	res.BytesSent += sent
	for try := 0; ; try++ {
		err := c.roundTrip(ctx, ex.t, &rq, res, start, deadline)
		if retry, ok := err.(errRetry); ok {
			if try < maxRetries && ex.stream == nil {
				res.Retried = true
				continue
			}
			err = retry.err
		}
		if err != nil {
			return err
		}
		break
	}
	s := &c.st
	res.TTFB = s.head.Sub(start)
	res.BytesRecv += s.hdrSize + s.size
	c.body = s.body
	if c.jar != nil {
		c.cookies = c.cookies[:0]
		for _, f := range s.hdr {
			if f.Name == "set-cookie" {
				if ck, err := http.ParseSetCookie(f.Value); err == nil {
					c.cookies = append(c.cookies, ck)
				}
			}
		}
		if len(c.cookies) > 0 {
			c.jar.SetCookies(ex.t.u, c.cookies)
			clear(c.cookies)
		}
	}
	return nil
}

// maxRetries bounds how often a request the server refused unprocessed is
// sent again (each time on a connection that still takes streams).
const maxRetries = 4

// roundTrip takes a stream slot, sends rq on it and waits for the
// response or the deadline.
func (c *Client) roundTrip(ctx context.Context, t *target, rq *request, res *httpc.Result, start, deadline time.Time) error {
	cn, connect, reused, err := c.acquire(ctx, t, deadline)
	res.Connect += connect
	if err != nil {
		return err
	}
	res.Reused = reused
	s := &c.st
	if rq.stream != nil {
		// A Stream body is written by its own goroutine, which may
		// outlive a cancelled request (blocked in the Stream's own
		// reads): it gets a stream of its own.
		s = &stream{done: make(chan struct{}, 1)}
	}
	s.status, s.hdr, s.hdrSize, s.size, s.err = 0, c.st.hdr[:0], 0, 0, nil
	s.body, s.maxBody = c.body[:0], c.p.cfg.MaxBody
	s.gotHead, s.ended, s.retry, s.unacked = false, false, false, 0
	more, err := cn.start(s, rq)
	if err != nil {
		return err
	}
	var bodySent chan struct{}
	if more {
		// The rest of the body goes as the server's windows allow, while
		// this goroutine waits for the response or the deadline.
		bodySent = make(chan struct{})
		go func(s *stream, rq request) {
			cn.sendBody(s, &rq)
			close(bodySent)
		}(s, *rq)
	}
	if err := c.wait(ctx, s.done, deadline); err != nil {
		cn.cancel(s, err)
	}
	if bodySent != nil && rq.stream == nil {
		<-bodySent // ends at once after cancel: it only waits on the windows
	}
	if s != &c.st {
		c.st.status, c.st.hdr, c.st.hdrSize, c.st.size, c.st.body = s.status, s.hdr, s.hdrSize, s.size, s.body
		c.st.head, c.st.err, c.st.retry = s.head, s.err, s.retry
	}
	s = &c.st
	if s.err != nil {
		if s.retry {
			return errRetry{s.err}
		}
		return s.err
	}
	c.last = cn
	return nil
}

// acquire returns a connection to t with a stream slot taken, dialling one
// when every connection to the host is full. Requests that come while a
// dial runs wait for it rather than dialling too.
func (c *Client) acquire(ctx context.Context, t *target, deadline time.Time) (*conn, time.Duration, bool, error) {
	if cn := c.last; cn != nil && cn.key == t.key && cn.tryReserve() {
		return cn, 0, true, nil
	}
	p := c.p
	for {
		p.mu.Lock()
		if p.h1Hosts[t.key] {
			p.mu.Unlock()
			return nil, 0, false, errUseH1
		}
		cn := p.pick(t.key)
		if cn == nil {
			cn = newConn(t.key, p.cfg.MaxConcurrentStreams)
			cn.writeTimeout = p.cfg.Timeout
			p.conns[t.key] = append(p.conns[t.key], cn)
			p.mu.Unlock()
			start := time.Now()
			err := p.dialConn(ctx, cn, t, deadline)
			connect := time.Since(start)
			var notH2 errNotH2
			useH1 := errors.As(err, &notH2) && p.cfg.Auto && notH2.alpn == "http/1.1"
			if useH1 {
				p.mu.Lock()
				p.h1Hosts[t.key] = true
				p.mu.Unlock()
			}
			cn.mu.Lock()
			cn.dialed, cn.dialErr = true, err
			if err != nil {
				cn.closed, cn.err = true, err
				cn.reserved--
				close(cn.quit)
			}
			cn.mu.Unlock()
			close(cn.ready)
			if useH1 {
				return nil, connect, false, errUseH1
			}
			if err != nil {
				return nil, connect, false, err
			}
			return cn, connect, false, nil
		}
		p.mu.Unlock()
		select {
		case <-cn.ready:
			return cn, 0, true, nil
		default:
		}
		// Wait for the dial, then take a slot within the limit the
		// server announced.
		err := c.wait(ctx, cn.ready, deadline)
		cn.release()
		if err != nil {
			return nil, 0, false, err
		}
		cn.mu.Lock()
		derr := cn.dialErr
		cn.mu.Unlock()
		if derr != nil {
			var notH2 errNotH2
			if errors.As(derr, &notH2) && p.cfg.Auto && notH2.alpn == "http/1.1" {
				return nil, 0, false, errUseH1
			}
			return nil, 0, false, derr
		}
		if cn.tryReserve() {
			return cn, 0, true, nil
		}
	}
}

// wait returns when ch is ready, ctx is done or the deadline passed.
func (c *Client) wait(ctx context.Context, ch <-chan struct{}, deadline time.Time) error {
	select {
	case <-ch:
		return nil
	default:
	}
	var tc <-chan time.Time
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if c.timer == nil {
			c.timer = time.NewTimer(d)
		} else {
			c.timer.Reset(d)
		}
		defer c.timer.Stop()
		tc = c.timer.C
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-tc:
		return context.DeadlineExceeded
	}
}

// doH1 sends req over HTTP/1.1 with net/http (Auto mode, a TLS server that
// chose http/1.1 by ALPN).
func (c *Client) doH1(ctx context.Context, req *httpc.Request, res *httpc.Result, start time.Time) error {
	timeout := c.p.cfg.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(timeout))
		defer cancel()
	}
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(ctx, method, req.URL, body)
	if err != nil {
		return err
	}
	if req.Stream != nil {
		size, err := req.Stream.Size()
		if err != nil {
			return err
		}
		pr, pw := io.Pipe()
		go func(s httpc.Stream) {
			_, err := s.WriteTo(pw)
			pw.CloseWithError(err)
		}(req.Stream)
		hr.Body, hr.ContentLength = pr, size
		hr.GetBody = nil
	} else if req.Body == nil && (method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch) {
		hr.ContentLength = 0
		hr.Body = http.NoBody
	}
	sent := int64(len(method) + len(hr.URL.RequestURI()) + len(hr.URL.Host) + len(req.Body))
	hr.Header.Set("User-Agent", c.p.cfg.UserAgent)
	for _, h := range req.Header {
		switch {
		case strings.EqualFold(h.Name, "Host"):
			hr.Host = h.Value
		case strings.EqualFold(h.Name, "Content-Length"), strings.EqualFold(h.Name, "Transfer-Encoding"),
			strings.EqualFold(h.Name, "Connection"):
		default:
			hr.Header.Add(h.Name, h.Value)
		}
		sent += int64(len(h.Name) + len(h.Value) + 4)
	}
	c.hops = c.p.cfg.FollowRedirects
	if req.Redirects > 0 {
		c.hops = req.Redirects
	} else if req.Redirects < 0 {
		c.hops = 0
	}
	res.BytesSent = sent
	resp, err := c.hc.Do(hr)
	if err != nil {
		return unwrapURL(err)
	}
	defer resp.Body.Close()
	res.TTFB = time.Since(start)
	res.Status, res.Proto = resp.StatusCode, resp.Proto
	res.URL = resp.Request.URL.String()
	for via := resp.Request; via != nil && via.Response != nil; via = via.Response.Request {
		res.Redirects++
	}
	recv := int64(0)
	for name, vals := range resp.Header {
		for _, v := range vals {
			res.AddHeader(name, v)
			recv += int64(len(name) + len(v) + 4)
		}
	}
	n, err := c.readBody(resp.Body)
	res.BodySize = n
	res.BytesRecv = recv + n
	res.Body = c.body
	return unwrapURL(err)
}

// readBody keeps the first MaxBody bytes in c.body and counts the rest.
func (c *Client) readBody(r io.Reader) (int64, error) {
	c.body = c.body[:0]
	var total int64
	for {
		if len(c.body) == cap(c.body) && len(c.body) < c.p.cfg.MaxBody {
			c.body = append(c.body, 0)[:len(c.body)]
		}
		var n int
		var err error
		if len(c.body) < c.p.cfg.MaxBody {
			free := c.body[len(c.body):min(cap(c.body), c.p.cfg.MaxBody)]
			n, err = r.Read(free)
			c.body = c.body[:len(c.body)+n]
		} else {
			var scratch [4096]byte
			n, err = r.Read(scratch[:])
		}
		total += int64(n)
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// unwrapURL removes net/http's *url.Error wrapper (method and URL in the
// message, which would stop failures from grouping).
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Classify maps an HTTP/2 failure to its class: a stream the server reset
// is h2_stream_reset; a GOAWAY with NO_ERROR that caught the request is
// reset, one with an error code protocol (the server declared a connection
// error); a stream or connection error plateau detected (the server broke
// the protocol) and a TLS server that does not speak h2 are protocol; the
// rest as for HTTP/1.1.
func Classify(err error) core.ErrorClass {
	var (
		re  *ResetError
		se  *StreamError
		xse http2.StreamError
		ga  *GoAwayError
		ce  http2.ConnectionError
		nh  errNotH2
	)
	switch {
	case errors.Is(err, context.Canceled):
		return core.ErrOther
	case errors.As(err, &re):
		return core.ErrH2StreamReset
	case errors.As(err, &ga):
		if ga.Code == http2.ErrCodeNo {
			return core.ErrReset
		}
		return core.ErrProtocol
	case errors.As(err, &se), errors.As(err, &xse), errors.As(err, &ce), errors.As(err, &nh):
		return core.ErrProtocol
	}
	return httpc.Classify(err)
}
