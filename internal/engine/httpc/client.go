package httpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultTimeout        = 30 * time.Second
	DefaultDNSTTL         = time.Minute
	DefaultUserAgent      = "plateau"
	maxSlots              = 64 // distinct hosts a per-user client keeps idle connections to
)

// Config tunes a Client. The zero value is usable: New fills in defaults.
type Config struct {
	// ConnectTimeout bounds DNS, TCP connect and TLS handshake together.
	// 0 means DefaultConnectTimeout; negative means only Timeout applies.
	ConnectTimeout time.Duration
	// Timeout bounds a whole request from Result.Start to the last body
	// byte, connection set-up, retry and redirects included. It fires up to
	// Timeout/64 late (see conn.setDeadline); a context deadline is exact.
	// 0 means DefaultTimeout; negative means no limit.
	Timeout time.Duration
	// InsecureSkipVerify accepts any server certificate.
	InsecureSkipVerify bool
	// TLSConfig is the base TLS configuration (roots, client certificates,
	// versions); it is cloned per host and never modified.
	TLSConfig *tls.Config
	// FollowRedirects is the maximum number of redirects followed; 0 returns
	// the 3xx response itself.
	FollowRedirects int
	// Compression sends "Accept-Encoding: gzip" (unless the request sets
	// Accept-Encoding) and decodes gzip bodies into Result.Body.
	Compression bool
	// DisableKeepAlives sends "Connection: close" and opens a connection per
	// request.
	DisableKeepAlives bool
	// MaxBody is how many bytes of body are kept in Result.Body (after gzip
	// decoding); the rest is read, counted and discarded. 0 keeps nothing.
	MaxBody int
	// Cookies gives the client its own cookie jar (net/http/cookiejar rules,
	// without a public suffix list).
	Cookies bool
	// UserAgent is sent unless the request sets User-Agent. Empty means
	// DefaultUserAgent.
	UserAgent string
	// DNSTTL is how long a resolved host name is reused by this client for
	// new connections. 0 means DefaultDNSTTL; negative disables the cache.
	DNSTTL time.Duration
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver *net.Resolver
	// Pool, when set, shares connections with the other Clients using the
	// same Pool instead of giving this client its own.
	Pool *Pool
	// Proxy, when set, is an HTTP proxy (http://host:port) every
	// connection goes through: https:// requests through a CONNECT tunnel
	// (user:password in the proxy URL is sent as Proxy-Authorization
	// Basic), http:// requests sent to the proxy with the absolute URL on
	// the request line.
	Proxy *url.URL
	// Buffers, when set, lends connection buffers (2 KiB each way) only
	// while a request is written and while its response is read: an idle
	// kept-alive connection, and one waiting for the server, holds none. Thousands of users that think between requests then
	// share a few buffers instead of holding their own.
	Buffers *Buffers
}

// Header is one request header field. Names are sent as written.
type Header struct {
	Name, Value string
}

// Request is one HTTP request. The client only reads it, so one Request may
// be reused for every call.
type Request struct {
	Method string // "" means GET
	URL    string // absolute http:// or https:// URL
	// Header holds extra header fields. Host overrides the Host header;
	// Content-Length and Transfer-Encoding are ignored (the client frames
	// the body itself); "Connection: close" closes the connection after the
	// response.
	Header []Header
	// Body is sent with a Content-Length. POST, PUT and PATCH always carry
	// one, even when empty, because many servers refuse them without it.
	Body []byte
	// Stream, when set, is the body instead of Body: written while the
	// request is sent (a file, a multipart form with files), never held
	// whole in memory.
	Stream Stream
	// Timeout, when positive, replaces Config.Timeout for this request.
	// Prefer it to a per-request context.WithTimeout, which allocates.
	Timeout time.Duration
	// Redirects, when positive, replaces Config.FollowRedirects for this
	// request; negative follows none. Zero keeps the Config's.
	Redirects int
	// Verbatim sends the URL's path and query on the request line exactly
	// as written (the caller encoded them, as Postman's runtime does):
	// only the scheme, host and port are parsed. Without it they go
	// through net/url, which re-encodes a path holding | ^ or a bare %.
	// A space, control or non-ASCII byte in them is an error.
	Verbatim bool
}

// Stream is a request body produced while it is sent. Size is its exact
// length (sent as Content-Length); WriteTo writes exactly that many bytes
// and may be called again (a retry on a stale connection, a 307 redirect).
type Stream interface {
	Size() (int64, error)
	WriteTo(w io.Writer) (int64, error)
}

// Result is the outcome of one Do. The caller owns it and reuses it: Do
// overwrites every field. Body and the header accessors point into buffers
// of the Client and stay valid only until the next Do on that Client.
type Result struct {
	Status int    // final HTTP status; 0 when no response head arrived
	Proto  string // "HTTP/1.1" or "HTTP/1.0"
	// Body holds the first Config.MaxBody bytes of the final response body,
	// gzip-decoded when Config.Compression is on.
	Body []byte
	// BodySize is the length of the final body as received: after chunk
	// framing is removed, before gzip decoding, including discarded bytes.
	BodySize int64
	// BytesSent and BytesRecv count HTTP bytes (heads, bodies, chunk framing)
	// of every exchange of the request; TLS records and handshakes are not
	// counted.
	BytesSent, BytesRecv int64
	// Start is when Do began: the actual send start before any connection
	// set-up.
	Start time.Time
	// Connect is the time spent opening connections (DNS when not cached,
	// TCP connect, TLS handshake) for this request; 0 when a kept-alive
	// connection was reused.
	Connect time.Duration
	// TTFB is from Start to the arrival of the first response byte of the
	// final exchange (so it includes Connect and any redirect hops).
	TTFB time.Duration
	// Total is from Start to the last body byte (or the failure).
	Total time.Duration
	// Class is ErrNone or why the request failed. HTTP status classes are the
	// caller's to decide.
	Class core.ErrorClass
	// Err is the failure, nil on success; the same value Do returns.
	Err error
	// Reused says the final exchange ran on a kept-alive connection.
	Reused bool
	// Retried says a stale kept-alive connection failed and the request was
	// sent again on a new one (see the package doc for the rule).
	Retried bool
	// Redirects is the number of redirects followed.
	Redirects int
	// URL is the URL of the final exchange: the request URL unless a
	// redirect was followed.
	URL string

	raw    []byte  // response head bytes (Client-owned)
	fields []field // header field offsets into raw
}

// Client sends requests for one virtual user. It keeps at most one idle
// connection per host (or borrows from Config.Pool), a URL and DNS cache, an
// optional cookie jar and the buffers Results point into. A Client is not
// safe for concurrent use; give each goroutine its own.
type Client struct {
	cfg      Config
	pool     *Pool
	dialer   net.Dialer
	resolver *net.Resolver
	sessions tls.ClientSessionCache

	// The caches are made on demand: most users send to one URL of one
	// host, which last and slot0 hold without a map (an empty map and its
	// first entry are ~250 bytes each, per user).
	targets map[string]*target // with last, once a user sent to two URLs
	last    *target
	slot0   hostSlot             // the first host's idle connection
	slot0At string               // its key; "" until the first connection
	slots   map[string]*hostSlot // every other host's
	dns     map[string]dnsEntry
	oneAddr [1]netip.Addr
	spare   *conn // buffers of the last closed connection

	jar      *cookiejar.Jar
	jarUsed  bool
	cookies  []*http.Cookie
	cookieLn []byte

	p        parser
	num      [20]byte
	redirHdr []Header
	cancel   canceler

	idleProbe time.Duration // idleProbeAfter; tests shorten it
	stream    Stream        // the current request's Request.Stream
	proxyT    *target       // Config.Proxy, parsed on first dial
}

// hostSlot holds a per-user client's idle connection to one host.
type hostSlot struct{ idle *conn }

// New returns a Client for cfg, with defaults filled in.
func New(cfg Config) *Client {
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.DNSTTL == 0 {
		cfg.DNSTTL = DefaultDNSTTL
	}
	if cfg.MaxBody < 0 {
		cfg.MaxBody = 0
	}
	if cfg.FollowRedirects < 0 {
		cfg.FollowRedirects = 0
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = DefaultUserAgent
	}
	c := &Client{
		cfg:       cfg,
		pool:      cfg.Pool,
		resolver:  cfg.Resolver,
		idleProbe: idleProbeAfter,
	}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	c.dialer.Resolver = c.resolver
	if cfg.Cookies {
		c.jar, _ = cookiejar.New(nil) // never fails without options
	}
	return c
}

// Close closes the client's idle connections and stops watching the last
// context. The Client can still be used afterwards; it simply dials again.
func (c *Client) Close() error {
	err := c.closeIdle()
	if c.cancel.stop != nil {
		c.cancel.stop()
		c.cancel.stop = nil
		c.cancel.mu.Lock()
		c.cancel.done = nil
		c.cancel.mu.Unlock()
	}
	return err
}

// closeIdle closes the idle connections of a per-user client.
func (c *Client) closeIdle() error {
	var errs []error
	if c.slot0.idle != nil {
		errs = append(errs, c.slot0.idle.nc.Close())
		c.slot0.idle = nil
	}
	for _, s := range c.slots {
		if s.idle != nil {
			errs = append(errs, s.idle.nc.Close())
			s.idle = nil
		}
	}
	return errors.Join(errs...)
}

// Do sends req and reads the response into res, following redirects and
// retrying a stale connection as Config and the package doc describe. It
// returns res.Err. ctx may cancel the request at any point; pass a
// long-lived context (the run's), not one per request: watching a new
// context costs an allocation, and per-request deadlines belong in
// Config.Timeout.
func (c *Client) Do(ctx context.Context, req *Request, res *Result) error {
	start := time.Now()
	*res = Result{Start: start, URL: req.URL}
	ph, err := c.do(ctx, req, res, start)
	if err != nil {
		res.Total = time.Since(start)
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err) // a cancel shows as a deadline on the socket
		}
		res.Err = err
		res.Class = classify(err, ph)
	}
	return err
}

func (c *Client) do(ctx context.Context, req *Request, res *Result, start time.Time) (phase, error) {
	var deadline time.Time
	timeout := c.cfg.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	if timeout > 0 {
		deadline = start.Add(timeout)
	}
	exact := false
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline, exact = d, true
	}
	done := ctx.Done()
	if done != nil {
		select {
		case <-done:
			return phaseNone, ctx.Err()
		default:
		}
	}
	if done != c.cancel.done {
		c.watch(ctx, done)
	}
	t, err := c.target(req.URL, req.Verbatim)
	if err != nil {
		return phaseNone, err
	}
	method := req.Method
	if method == "" {
		method = "GET"
	}
	if !validHeader(method, "") {
		return phaseNone, fmt.Errorf("invalid method %q", method)
	}
	for i := range req.Header {
		if h := &req.Header[i]; !validHeader(h.Name, h.Value) {
			return phaseNone, fmt.Errorf("invalid request header %q", h.Name)
		}
	}
	hdrs, body := req.Header, req.Body
	c.stream = req.Stream
	maxHops := c.cfg.FollowRedirects
	switch {
	case req.Redirects > 0:
		maxHops = req.Redirects
	case req.Redirects < 0:
		maxHops = 0
	}
	for hop := 0; ; hop++ {
		if ph, err := c.exchange(ctx, done, t, method, hdrs, body, deadline, timeout/64, exact, res); err != nil {
			return ph, err
		}
		if hop >= maxHops || !isRedirect(res.Status) || c.p.location < 0 {
			return phaseNone, nil
		}
		f := c.p.fields[c.p.location]
		loc := string(c.p.hdr[f.vs:f.ve])
		next, err := t.u.Parse(loc)
		if err != nil {
			return phaseRead, &ProtocolError{Msg: "bad Location " + strconv.Quote(loc), Err: err}
		}
		nt, err := c.target(next.String(), false)
		if err != nil {
			return phaseNone, fmt.Errorf("redirect: %w", err)
		}
		switch res.Status {
		case 301, 302, 303:
			// What browsers do (and net/http): a non-GET becomes a GET
			// without body; 303 always does.
			if method != "GET" && method != "HEAD" {
				method, body, c.stream = "GET", nil, nil
			}
		}
		if !foldEqString(nt.hostname, t.hostname) {
			hdrs = c.stripCredentials(hdrs)
		}
		res.Redirects++
		res.URL = nt.raw
		t = nt
	}
}

// stripCredentials drops headers that must not follow a redirect to another
// host (net/http does the same).
func (c *Client) stripCredentials(hdrs []Header) []Header {
	out := c.redirHdr[:0]
	for _, h := range hdrs {
		if foldEqString(h.Name, "authorization") || foldEqString(h.Name, "cookie") ||
			foldEqString(h.Name, "proxy-authorization") || foldEqString(h.Name, "www-authenticate") {
			continue
		}
		out = append(out, h)
	}
	c.redirHdr = out
	return out
}

func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// idempotent reports whether sending method twice has the effect of sending
// it once (RFC 9110 §9.2.2), which makes a blind retry safe.
func idempotent(method string) bool {
	switch method {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// exchange sends one request and reads its response on one connection,
// retrying once on a new connection when a reused one turns out stale.
func (c *Client) exchange(ctx context.Context, done <-chan struct{}, t *target, method string,
	hdrs []Header, body []byte, deadline time.Time, slack time.Duration, exact bool, res *Result) (phase, error) {
	retried, fresh := false, false
	for {
		cn, reused, ph, err := c.acquire(ctx, t, deadline, fresh, res)
		if err != nil {
			return ph, err
		}
		res.Reused, cn.reused = reused, reused
		cn.setDeadline(deadline, slack, exact)
		if done != nil && !c.cancel.set(cn, done) {
			c.closeConn(cn)
			return phaseNone, ctx.Err()
		}
		sent0 := cn.cnt.w
		closeAfter, err := c.writeRequest(cn, t, method, hdrs, body)
		res.BytesSent += cn.cnt.w - sent0
		if err != nil {
			nothingSent := cn.cnt.w == sent0
			c.cancel.clear(done)
			c.closeConn(cn)
			var closed *closedError
			if reused && !fresh && nothingSent && errors.As(err, &closed) && ctx.Err() == nil {
				// Found closed before anything was sent, like an idle
				// connection the probe drops: not a retry.
				fresh = true
				continue
			}
			if reused && !retried && !isTimeout(err) && (nothingSent || idempotent(method)) && ctx.Err() == nil {
				retried, fresh, res.Retried = true, true, true
				continue
			}
			return phaseWrite, fmt.Errorf("sending request: %w", err)
		}
		r0 := cn.readCount()
		reusable, err := c.readResponse(cn, t, method, res)
		got := cn.readCount() - r0
		res.BytesRecv += got
		c.cancel.clear(done)
		if err != nil {
			c.closeConn(cn)
			if reused && !retried && got == 0 && idempotent(method) && connLost(err) && ctx.Err() == nil {
				retried, fresh, res.Retried = true, true, true
				continue
			}
			return phaseRead, err
		}
		end := time.Now()
		res.Total = end.Sub(res.Start)
		if !reusable || closeAfter || c.cfg.DisableKeepAlives || cn.br != nil && cn.br.Buffered() > 0 {
			c.closeConn(cn)
		} else {
			cn.lastUsed = end
			c.release(t, cn)
		}
		return phaseNone, nil
	}
}

// acquire returns an idle connection to t (reused = true) or dials one.
// fresh forces a new connection (the retry after a stale one).
func (c *Client) acquire(ctx context.Context, t *target, deadline time.Time, fresh bool, res *Result) (cn *conn, reused bool, ph phase, err error) {
	if c.pool != nil {
		return c.acquirePooled(ctx, t, deadline, fresh, res)
	}
	slot := t.slot
	if slot == nil {
		slot = c.slotFor(t)
	}
	if cn := slot.idle; cn != nil {
		slot.idle = nil
		if !fresh && (res.Start.Sub(cn.lastUsed) < c.idleProbe || cn.alive()) {
			return cn, true, phaseNone, nil
		}
		c.closeConn(cn)
	}
	t0 := time.Now()
	cn, ph, err = c.dial(ctx, t, deadline)
	res.Connect += time.Since(t0)
	return cn, false, ph, err
}

// release parks a reusable connection for the next request to its host.
func (c *Client) release(t *target, cn *conn) {
	c.giveBack(cn)
	if cn.ph != nil {
		cn.ph.put(cn)
		return
	}
	if old := t.slot.idle; old != nil { // cannot happen with one request at a time
		c.closeConn(old)
	}
	t.slot.idle = cn
}

// slotFor finds or creates the idle slot of t's host. Past maxSlots hosts
// every idle connection is closed and the caches start over, so a user that
// wanders over many hosts holds a bounded number of sockets.
func (c *Client) slotFor(t *target) *hostSlot {
	if c.slot0At == "" {
		c.slot0At = t.key
	}
	if t.key == c.slot0At {
		t.slot = &c.slot0
		return t.slot
	}
	s := c.slots[t.key]
	if s == nil {
		if len(c.slots) >= maxSlots {
			_ = c.closeIdle()
			clear(c.slots)
			clear(c.targets)
			c.last = nil
		}
		if c.slots == nil {
			c.slots = make(map[string]*hostSlot)
		}
		s = &hostSlot{}
		c.slots[t.key] = s
	}
	t.slot = s
	return s
}

// readResponse reads the response to the request just written on cn.
func (c *Client) readResponse(cn *conn, t *target, method string, res *Result) (reusable bool, err error) {
	c.borrowReader(cn)
	if _, err := cn.br.Peek(1); err != nil {
		return false, fmt.Errorf("awaiting response: %w", err)
	}
	res.TTFB = time.Since(res.Start)
	p := &c.p
	err = p.readHead(cn.br)
	res.raw, res.fields = p.hdr, p.fields
	if err != nil {
		// A status line that arrived before the failure is kept: a reset
		// after it is still a reset, with the status the server sent.
		if p.status >= 100 {
			res.Status, res.Proto = p.status, p.proto
		}
		return false, fmt.Errorf("reading response head: %w", err)
	}
	res.Status, res.Proto = p.status, p.proto
	reusable = p.frame(cn.br, method)
	if c.jar != nil && p.setCookie {
		c.storeCookies(t)
	}
	err = p.readBody(c.cfg.MaxBody, c.cfg.Compression && p.gzip)
	res.Body, res.BodySize = p.buf, p.body.size
	if err != nil {
		return false, fmt.Errorf("reading response body: %w", err)
	}
	return reusable, nil
}

// writeRequest writes the request head and body and flushes them. It
// reports whether the request asked to close the connection.
func (c *Client) writeRequest(cn *conn, t *target, method string, hdrs []Header, body []byte) (closeAfter bool, err error) {
	c.borrowWriter(cn)
	w := &cn.bw
	host := t.host
	for i := range hdrs {
		if h := &hdrs[i]; len(h.Name) == 4 && foldEqString(h.Name, "host") {
			host = h.Value
		}
	}
	w.WriteString(method)
	w.WriteByte(' ')
	w.WriteString(t.requestURI)
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(host)
	w.WriteString("\r\n")
	cookies := c.jarCookies(t)
	hasUA, hasAE := false, false
	for i := range hdrs {
		h := &hdrs[i]
		switch len(h.Name) {
		case 4:
			if foldEqString(h.Name, "host") {
				continue
			}
		case 6:
			if foldEqString(h.Name, "cookie") && len(cookies) > 0 {
				// One Cookie field only (RFC 6265 §5.4): the jar's cookies
				// join the caller's.
				w.WriteString(h.Name)
				w.WriteString(": ")
				w.WriteString(h.Value)
				w.WriteString("; ")
				w.Write(cookies)
				w.WriteString("\r\n")
				cookies = nil
				continue
			}
		case 10:
			if foldEqString(h.Name, "user-agent") {
				hasUA = true
			} else if foldEqString(h.Name, "connection") {
				forTokens([]byte(h.Value), func(tok []byte) {
					if foldEq(tok, "close") {
						closeAfter = true
					}
				})
			}
		case 14:
			if foldEqString(h.Name, "content-length") {
				continue
			}
		case 15:
			if foldEqString(h.Name, "accept-encoding") {
				hasAE = true
			}
		case 17:
			if foldEqString(h.Name, "transfer-encoding") {
				continue
			}
		}
		w.WriteString(h.Name)
		w.WriteString(": ")
		w.WriteString(h.Value)
		w.WriteString("\r\n")
	}
	if !hasUA {
		w.WriteString("User-Agent: ")
		w.WriteString(c.cfg.UserAgent)
		w.WriteString("\r\n")
	}
	if c.stream != nil {
		size, err := c.stream.Size()
		if err != nil {
			return false, err
		}
		w.WriteString("Content-Length: ")
		w.Write(strconv.AppendInt(c.num[:0], size, 10))
		w.WriteString("\r\n")
		body = nil
		defer func() {
			if err == nil {
				if n, werr := c.stream.WriteTo(w); werr != nil {
					err = fmt.Errorf("request body: %w", werr)
				} else if n != size {
					err = fmt.Errorf("request body: wrote %d of %d bytes (the file changed?)", n, size)
				}
			}
			if err == nil {
				err = w.Flush()
				c.giveBackWriter(cn)
			}
		}()
	} else if len(body) > 0 || method == "POST" || method == "PUT" || method == "PATCH" {
		w.WriteString("Content-Length: ")
		w.Write(strconv.AppendInt(c.num[:0], int64(len(body)), 10))
		w.WriteString("\r\n")
	}
	if c.cfg.Compression && !hasAE {
		w.WriteString("Accept-Encoding: gzip\r\n")
	}
	if c.cfg.DisableKeepAlives {
		w.WriteString("Connection: close\r\n")
	}
	if len(cookies) > 0 {
		w.WriteString("Cookie: ")
		w.Write(cookies)
		w.WriteString("\r\n")
	}
	w.WriteString("\r\n")
	w.Write(body)
	if c.stream != nil {
		// The streamed body follows the head (deferred above), so the
		// head must not wait for the response.
		return closeAfter, w.Flush()
	}
	return closeAfter, c.sendAwait(cn)
}

// jarCookies renders the jar's cookies for t as a Cookie value, or nil.
func (c *Client) jarCookies(t *target) []byte {
	if !c.jarUsed {
		return nil // nothing stored yet: skip the jar's allocating lookup
	}
	c.cookieLn = c.cookieLn[:0]
	for i, ck := range c.jar.Cookies(t.u) {
		if i > 0 {
			c.cookieLn = append(c.cookieLn, "; "...)
		}
		c.cookieLn = append(c.cookieLn, ck.String()...)
	}
	return c.cookieLn
}

// storeCookies hands the Set-Cookie fields of the current response to the jar.
func (c *Client) storeCookies(t *target) {
	c.cookies = c.cookies[:0]
	for _, f := range c.p.fields {
		if foldEq(c.p.hdr[f.ns:f.ne], "set-cookie") {
			if ck, err := http.ParseSetCookie(string(c.p.hdr[f.vs:f.ve])); err == nil {
				c.cookies = append(c.cookies, ck)
			}
		}
	}
	if len(c.cookies) > 0 {
		c.jar.SetCookies(t.u, c.cookies)
		c.jarUsed = true
	}
}

// Cookie returns the value of the named cookie the jar would send to
// rawURL ("" when none or the client has no jar).
func (c *Client) Cookie(rawURL, name string) string {
	if c.jar == nil || !c.jarUsed {
		return ""
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	for _, ck := range c.jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// CookieValues appends to dst the values of the cookies the jar would send
// to rawURL: credentials a server may echo, to mask in what is written.
func (c *Client) CookieValues(rawURL string, dst []string) []string {
	if c.jar == nil || !c.jarUsed {
		return dst
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return dst
	}
	for _, ck := range c.jar.Cookies(u) {
		dst = append(dst, ck.Value)
	}
	return dst
}

// SetCookie stores a cookie for rawURL's host in the jar, as if the server
// had set it.
func (c *Client) SetCookie(rawURL, name, value string) {
	if c.jar == nil {
		return
	}
	if u, err := url.Parse(rawURL); err == nil {
		c.jar.SetCookies(u, []*http.Cookie{{Name: name, Value: value, Path: "/"}})
		c.jarUsed = true
	}
}

// ClearCookies empties the jar (a new browser session).
func (c *Client) ClearCookies() {
	if c.jar != nil && c.jarUsed {
		c.jar, _ = cookiejar.New(nil)
		c.jarUsed = false
	}
}

// canceler interrupts the exchange in flight when the context passed to Do
// is cancelled, without a goroutine per request: one context.AfterFunc per
// distinct context sets a past deadline on the current connection.
type canceler struct {
	mu    sync.Mutex
	done  <-chan struct{} // Done channel being watched
	stop  func() bool
	cur   *conn // connection in use, nil between exchanges
	fired bool  // a past deadline was set on cur
}

// aLongTimeAgo is a deadline that has always passed.
var aLongTimeAgo = time.Unix(1, 0)

// watch switches the cancellation watch to ctx, whose Done channel is done
// (nil for a context that is never cancelled). The previous context's
// AfterFunc is stopped and, should it run anyway, ignored by fire.
func (c *Client) watch(ctx context.Context, done <-chan struct{}) {
	k := &c.cancel
	if k.stop != nil {
		k.stop()
		k.stop = nil
	}
	k.mu.Lock()
	k.done = done
	k.mu.Unlock()
	if done != nil {
		k.stop = context.AfterFunc(ctx, func() { k.fire(done) })
	}
}

func (k *canceler) fire(done <-chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.done == done && k.cur != nil {
		_ = k.cur.nc.SetDeadline(aLongTimeAgo)
		k.fired = true
	}
}

// set registers cn as the connection in use. It reports false if the
// context is already done (cancelled before the registration could catch it).
func (k *canceler) set(cn *conn, done <-chan struct{}) bool {
	k.mu.Lock()
	k.cur = cn
	k.mu.Unlock()
	select {
	case <-done:
		k.clear(done)
		return false
	default:
		return true
	}
}

// clear unregisters the current connection. A connection whose deadline
// was forced into the past gets it re-armed by the next setDeadline.
func (k *canceler) clear(done <-chan struct{}) {
	if done == nil {
		return
	}
	k.mu.Lock()
	if k.fired && k.cur != nil {
		k.cur.deadline = aLongTimeAgo
	}
	k.fired = false
	k.cur = nil
	k.mu.Unlock()
}

// CookieJar is the client's cookie jar for another protocol's client of
// the same user (HTTP/2), so that both send and keep the same cookies; nil
// when the client has no jar.
func (c *Client) CookieJar() http.CookieJar {
	if c.jar == nil {
		return nil
	}
	return jarView{c}
}

type jarView struct{ c *Client }

func (j jarView) Cookies(u *url.URL) []*http.Cookie {
	if !j.c.jarUsed {
		return nil
	}
	return j.c.jar.Cookies(u)
}

func (j jarView) SetCookies(u *url.URL, cs []*http.Cookie) {
	if len(cs) > 0 {
		j.c.jar.SetCookies(u, cs)
		j.c.jarUsed = true
	}
}
