// Package h2 sends the engine's requests over HTTP/2: over TLS negotiated
// by ALPN, or cleartext (h2c) with prior knowledge. Framing, HPACK and flow
// control are golang.org/x/net/http2's; this package adds what a load
// generator needs on top: a pool that puts at most MaxConcurrentStreams
// streams on one connection and opens another when all are full, and a
// Client that fills the same httpc.Result as the HTTP/1.1 client, so the
// engine times, checks and extracts an HTTP/2 response exactly like an
// HTTP/1.1 one.
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
	"strings"
	"sync"
	"time"

	"golang.org/x/net/http2"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
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
	t2     *http2.Transport
	h1     *http.Transport // Auto's HTTP/1.1 fallback
	dialer net.Dialer

	mu      sync.Mutex
	conns   map[string][]*pconn // by scheme://host:port
	h1Hosts map[string]bool     // Auto: TLS hosts that did not pick h2
	// readErrs keeps each connection's first read error, which x/net does
	// not report.
	readErrs map[*http2.ClientConn]*readErrConn
}

// pconn is one connection; until its dial ends (ready closed) cc and err
// are nil and the streams taken on it wait.
type pconn struct {
	cc       *http2.ClientConn
	err      error
	inflight int
	ready    chan struct{}
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
	p := &Pool{cfg: cfg, conns: map[string][]*pconn{}, h1Hosts: map[string]bool{},
		readErrs: map[*http2.ClientConn]*readErrConn{}}
	p.t2 = &http2.Transport{AllowHTTP: true, DisableCompression: true, StrictMaxConcurrentStreams: true}
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
	defer p.mu.Unlock()
	for k, cs := range p.conns {
		for _, c := range cs {
			if c.cc != nil {
				_ = c.cc.Close()
			}
		}
		delete(p.conns, k)
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

// timing is one request's connection facts, passed to RoundTrip in the
// request's context.
type timing struct {
	connect time.Duration
	reused  bool
	proto   string
}

type timingKey struct{}

// errNotH2 marks a TLS server that did not choose h2 by ALPN.
type errNotH2 struct{ alpn string }

func (e errNotH2) Error() string {
	if e.alpn == "" {
		return "server does not offer HTTP/2 by ALPN (no_application_protocol)"
	}
	return fmt.Sprintf("server did not negotiate HTTP/2 by ALPN (chose %q)", e.alpn)
}

// RoundTrip sends one request on a connection with a free stream, dialling
// one when every connection to the host is full.
func (p *Pool) RoundTrip(req *http.Request) (*http.Response, error) {
	tm, _ := req.Context().Value(timingKey{}).(*timing)
	if tm == nil {
		tm = &timing{}
	}
	addr := req.URL.Host
	if req.URL.Port() == "" {
		if req.URL.Scheme == "https" {
			addr = net.JoinHostPort(req.URL.Hostname(), "443")
		} else {
			addr = net.JoinHostPort(req.URL.Hostname(), "80")
		}
	}
	key := req.URL.Scheme + "://" + addr
	p.mu.Lock()
	if p.h1Hosts[key] {
		p.mu.Unlock()
		tm.proto = "HTTP/1.1"
		return p.h1.RoundTrip(req)
	}
	c := p.pick(key)
	dialer := c == nil
	if dialer {
		// Requests that come while this dial runs take streams on it
		// rather than dialling too.
		c = &pconn{inflight: 1, ready: make(chan struct{})}
		p.conns[key] = append(p.conns[key], c)
	}
	p.mu.Unlock()
	if dialer {
		start := time.Now()
		cc, err := p.dial(req.Context(), req.URL.Scheme, addr, req.URL.Hostname())
		tm.connect = time.Since(start)
		var notH2 errNotH2
		p.mu.Lock()
		c.cc, c.err = cc, err
		if errors.As(err, &notH2) && p.cfg.Auto && notH2.alpn == "http/1.1" {
			p.h1Hosts[key] = true
		}
		p.mu.Unlock()
		close(c.ready)
	} else {
		select {
		case <-c.ready:
		case <-req.Context().Done():
			p.done(c)
			return nil, req.Context().Err()
		}
		tm.reused = true
	}
	if c.err != nil {
		p.done(c)
		var notH2 errNotH2
		if errors.As(c.err, &notH2) && p.cfg.Auto && notH2.alpn == "http/1.1" {
			tm.proto, tm.reused = "HTTP/1.1", false
			return p.h1.RoundTrip(req)
		}
		return nil, c.err
	}
	tm.proto = "HTTP/2.0"
	res, err := c.cc.RoundTrip(req)
	if err != nil {
		p.done(c)
		p.mu.Lock()
		rc := p.readErrs[c.cc]
		p.mu.Unlock()
		if rerr := rc.firstErr(); rerr != nil && !errors.Is(err, rerr) {
			// x/net says "client conn could not be established"; the
			// connection's read error says why (TLS 1.3 sends "certificate
			// required" after the handshake, on the first read).
			err = fmt.Errorf("%w: %w", err, rerr)
		}
		return nil, err
	}
	res.Body = &streamBody{ReadCloser: res.Body, p: p, c: c}
	return res, nil
}

// pick returns a live connection with a free stream (counted as taken),
// dropping dead ones; nil when a new connection is needed. p.mu is held.
func (p *Pool) pick(key string) *pconn {
	cs := p.conns[key]
	live := cs[:0]
	var got *pconn
	for _, c := range cs {
		pending := c.cc == nil && c.err == nil
		ok := pending || c.err == nil && c.cc.CanTakeNewRequest()
		if !ok && c.inflight == 0 {
			if c.cc != nil {
				_ = c.cc.Close()
				delete(p.readErrs, c.cc)
			}
			continue
		}
		live = append(live, c)
		if got == nil && ok && c.inflight < p.cfg.MaxConcurrentStreams {
			got = c
		}
	}
	clear(cs[len(live):])
	p.conns[key] = live
	if got != nil {
		got.inflight++
	}
	return got
}

func (p *Pool) done(c *pconn) {
	p.mu.Lock()
	c.inflight--
	p.mu.Unlock()
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

func (p *Pool) dial(ctx context.Context, scheme, addr, host string) (*http2.ClientConn, error) {
	if p.cfg.ConnectTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.ConnectTimeout)
		defer cancel()
	}
	if p.cfg.Proxy == nil {
		nc, err := p.dialer.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return p.start(ctx, nc, scheme, host)
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
	return p.start(ctx, nc, scheme, host)
}

// start runs the TLS handshake (https) and HTTP/2's connection preface on
// nc.
func (p *Pool) start(ctx context.Context, nc net.Conn, scheme, host string) (*http2.ClientConn, error) {
	if scheme == "https" {
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
		nc = tc
	}
	rc := &readErrConn{Conn: nc}
	cc, err := p.t2.NewClientConn(rc) //nolint:staticcheck // x/net's own connection API; net/http's needs its Transport to dial
	if err != nil {
		_ = nc.Close()
		if rerr := rc.firstErr(); rerr != nil {
			return nil, fmt.Errorf("%w: %w", err, rerr)
		}
		return nil, err
	}
	p.mu.Lock()
	p.readErrs[cc] = rc
	p.mu.Unlock()
	return cc, nil
}

// readErrConn keeps the first read error of a connection.
type readErrConn struct {
	net.Conn
	mu  sync.Mutex
	err error
}

func (c *readErrConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		c.mu.Unlock()
	}
	return n, err
}

func (c *readErrConn) firstErr() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
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

// streamBody gives the stream back to the pool when the body is closed.
type streamBody struct {
	io.ReadCloser
	p    *Pool
	c    *pconn
	once bool
}

func (b *streamBody) Close() error {
	err := b.ReadCloser.Close()
	if !b.once {
		b.once = true
		b.p.done(b.c)
	}
	return err
}

// Client sends one virtual user's requests through a Pool. Like
// httpc.Client it is not safe for concurrent use.
type Client struct {
	p    *Pool
	hc   http.Client
	body []byte
	hops int
}

// NewClient returns a client on p; jar (may be nil) is the user's cookie
// jar, shared with its HTTP/1.1 client.
func NewClient(p *Pool, jar http.CookieJar) *Client {
	c := &Client{p: p}
	c.hc = http.Client{Transport: p, Jar: jar, CheckRedirect: c.checkRedirect}
	return c
}

func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > c.hops {
		return http.ErrUseLastResponse
	}
	return nil
}

// Do sends req and fills res as httpc.Client.Do does: Start, Connect,
// TTFB, Total, status, headers, the first MaxBody bytes of the body, and
// the error class.
func (c *Client) Do(ctx context.Context, req *httpc.Request, res *httpc.Result) error {
	start := time.Now()
	*res = httpc.Result{Start: start, URL: req.URL}
	err := c.do(ctx, req, res, start)
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

func (c *Client) do(ctx context.Context, req *httpc.Request, res *httpc.Result, start time.Time) error {
	timeout := c.p.cfg.Timeout
	if req.Timeout > 0 {
		timeout = req.Timeout
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, start.Add(timeout))
		defer cancel()
	}
	tm := &timing{}
	ctx = context.WithValue(ctx, timingKey{}, tm)
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
	res.Connect, res.Reused = tm.connect, tm.reused
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

// Classify maps an HTTP/2 failure to its class: a reset stream is
// h2_stream_reset, a connection-level protocol error or a TLS server
// that does not speak h2 is protocol; the rest as for HTTP/1.1.
func Classify(err error) core.ErrorClass {
	var se http2.StreamError
	var ce http2.ConnectionError
	var ga http2.GoAwayError
	var nh errNotH2
	switch {
	case errors.Is(err, context.Canceled):
		return core.ErrOther
	case errors.As(err, &se):
		return core.ErrH2StreamReset
	case errors.As(err, &ga):
		return core.ErrReset
	case errors.As(err, &ce), errors.As(err, &nh):
		return core.ErrProtocol
	}
	return httpc.Classify(err)
}
