package engine

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/h2"
	"github.com/plateau-perf/plateau/internal/engine/proto/ws"
	"github.com/plateau-perf/plateau/internal/plan"
)

// tlsSettings are the distinct TLS settings of a run's requests and
// websockets: index 0 is http.tls, the others come from a request's or
// websocket's own tls: merged over it. Steps hold the index, so that
// steps with equal settings share connections (one transport each) and a
// request without its own tls — the hot path — costs nothing more.
// Compilation fills it, before any user runs.
type tlsSettings struct {
	list []plan.TLS
}

// index returns the index of http.tls with over's fields laid over it.
func (t *tlsSettings) index(over *plan.TLS) int {
	if over == nil {
		return 0
	}
	m := t.list[0]
	if over.CA != "" {
		m.CA = over.CA
	}
	if over.Cert != "" {
		m.Cert, m.Key = over.Cert, over.Key
	}
	if over.ServerName != "" {
		m.ServerName = over.ServerName
	}
	for i, s := range t.list {
		if s == m {
			return i
		}
	}
	t.list = append(t.list, m)
	return len(t.list) - 1
}

// transport is what one TLS setting needs: the HTTP/1.1 client
// configuration, the HTTP/2 one (with the shared pool under connections:
// shared) and the WebSocket dialer.
type transport struct {
	client httpc.Config
	h2     h2.Config
	h2Pool *h2.Pool
	ws     *ws.Dialer
	err    error
}

// transports makes each setting's transport on first use.
type transports struct {
	mu       sync.Mutex
	settings *tlsSettings
	made     []*transport
}

// get returns the transport of setting i; e's configuration is setting
// 0's.
func (ts *transports) get(e *Engine, i int) *transport {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for len(ts.made) <= i {
		ts.made = append(ts.made, nil)
	}
	if t := ts.made[i]; t != nil {
		return t
	}
	t := &transport{client: e.clientCfg, h2: e.h2Cfg, h2Pool: e.h2Pool}
	if i > 0 {
		tc, err := ts.settings.list[i].TLSConfig()
		t.err = err
		t.client.TLSConfig, t.h2.TLSConfig = tc, tc
		// Cookies live in the user's main client's jar (see vu.clientFor).
		t.client.Cookies = false
		if e.clientCfg.Pool != nil {
			t.client.Pool = httpc.NewPool(0)
		}
		if e.h2Pool != nil {
			t.h2Pool = h2.NewPool(t.h2)
		}
	}
	t.ws = ws.NewDialer(ws.Config{ConnectTimeout: t.client.ConnectTimeout, Timeout: t.client.Timeout,
		InsecureSkipVerify: t.client.InsecureSkipVerify, TLSConfig: t.client.TLSConfig, Proxy: t.client.Proxy,
		MaxMessage: e.plan.HTTP.MaxBody, UserAgent: t.client.UserAgent})
	ts.made[i] = t
	return t
}

// close closes the shared pools of the settings other than http.tls's
// (the engine closes that one).
func (ts *transports) close() {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for i, t := range ts.made {
		if i > 0 && t != nil && t.h2Pool != nil {
			t.h2Pool.Close()
		}
	}
}

// userTransport is a user's clients for one TLS setting other than
// http.tls's.
type userTransport struct {
	client *httpc.Client
	h2     *h2.Client
	h2Own  *h2.Pool
}

// clientFor returns the user's HTTP/1.1 client for setting i (0: the
// main one). The others keep no cookies of their own: the request's
// cookies come from, and its Set-Cookie go to, the main client's jar
// (sendCookies, keepCookies).
func (v *vu) clientFor(i int) (*httpc.Client, error) {
	if i == 0 {
		return v.client, nil
	}
	u, err := v.userTransport(i)
	if err != nil {
		return nil, err
	}
	return u.client, nil
}

func (v *vu) userTransport(i int) (*userTransport, error) {
	for len(v.transports) <= i {
		v.transports = append(v.transports, nil)
	}
	if u := v.transports[i]; u != nil {
		return u, nil
	}
	t := v.w.e.trs.get(v.w.e, i)
	if t.err != nil {
		return nil, t.err
	}
	u := &userTransport{client: httpc.New(t.client)}
	v.transports[i] = u
	return u, nil
}

// h2ClientFor returns the user's HTTP/2 client for setting i.
func (v *vu) h2ClientFor(i int) (*h2.Client, error) {
	if i == 0 {
		return v.h2Client(), nil
	}
	u, err := v.userTransport(i)
	if err != nil {
		return nil, err
	}
	if u.h2 == nil {
		t := v.w.e.trs.get(v.w.e, i)
		p := t.h2Pool
		if p == nil {
			u.h2Own = h2.NewPool(t.h2)
			p = u.h2Own
		}
		u.h2 = h2.NewClient(p, v.client.CookieJar())
	}
	return u.h2, nil
}

// sendCookies adds the main jar's cookies for rawURL to hdrs (a request
// on a client of another TLS setting).
func (v *vu) sendCookies(rawURL string, hdrs []httpc.Header) []httpc.Header {
	jar := v.client.CookieJar()
	if jar == nil {
		return hdrs
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return hdrs
	}
	cs := jar.Cookies(u)
	if len(cs) == 0 {
		return hdrs
	}
	val := ""
	for i, c := range cs {
		if i > 0 {
			val += "; "
		}
		val += c.Name + "=" + c.Value
	}
	return append(hdrs, httpc.Header{Name: "Cookie", Value: val})
}

// keepCookies stores the response's Set-Cookie fields in the main jar.
func (v *vu) keepCookies(rawURL string) {
	jar := v.client.CookieJar()
	if jar == nil {
		return
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	var cs []*http.Cookie
	for k, val := range v.res.Headers() {
		if len(k) == len("Set-Cookie") && http.CanonicalHeaderKey(string(k)) == "Set-Cookie" {
			if c, err := http.ParseSetCookie(string(val)); err == nil {
				cs = append(cs, c)
			}
		}
	}
	if len(cs) > 0 {
		jar.SetCookies(u, cs)
	}
}

// closeTransports closes the user's clients of other TLS settings.
func (v *vu) closeTransports() {
	for _, u := range v.transports {
		if u == nil {
			continue
		}
		u.client.Close()
		if u.h2Own != nil {
			u.h2Own.Close()
		}
	}
}

// wsDial opens a websocket with setting i's dialer.
func (v *vu) wsDial(ctx context.Context, i int, rawURL string, hdr http.Header) (*ws.Conn, ws.DialResult) {
	return v.w.e.trs.get(v.w.e, i).ws.Dial(ctx, rawURL, hdr)
}

// doOtherTLS sends a request with its own tls on the user's clients of
// that setting (off the hot path: requests without tls: never come here).
func (v *vu) doOtherTLS(ctx context.Context, q *request) {
	if q.proto == protoH1 || q.proto == protoAuto && !strings.HasPrefix(v.req.URL, "https:") {
		c, err := v.clientFor(q.tr)
		if err != nil {
			v.failTransport(err)
			return
		}
		v.req.Header = v.sendCookies(v.req.URL, v.req.Header)
		_ = c.Do(ctx, &v.req, &v.res)
		if v.res.Err == nil || v.res.Status != 0 {
			v.keepCookies(v.res.URL)
		}
		return
	}
	c, err := v.h2ClientFor(q.tr)
	if err != nil {
		v.failTransport(err)
		return
	}
	_ = c.Do(ctx, &v.req, &v.res)
}

// failTransport fills the result of a request whose TLS setting could not
// be built (its files changed since the plan loaded).
func (v *vu) failTransport(err error) {
	v.res.Status, v.res.Body, v.res.BodySize = 0, nil, 0
	v.res.Start, v.res.Total, v.res.Connect, v.res.TTFB = time.Now(), 0, 0, 0
	v.res.BytesSent, v.res.BytesRecv = 0, 0
	v.res.Class, v.res.Err = core.ErrTLS, err
}
