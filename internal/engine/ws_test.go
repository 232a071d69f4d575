package engine_test

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/proto/ws/wstest"
)

// classCount counts a label's failures of one class.
func classCount(d *analysis.Dataset, label string, class core.ErrorClass) int64 {
	var n int64
	for k, a := range d.Run {
		if k.Label != label {
			continue
		}
		for ek, c := range a.Errs {
			if ek.Class == class {
				n += c
			}
		}
	}
	return n
}

// minMs is a label's shortest time in ms.
func minMs(d *analysis.Dataset, label string) float64 {
	best := -1.0
	for k, a := range d.Run {
		if k.Label == label && a.Count > 0 {
			if v := float64(a.MinUs) / 1000; best < 0 || v < best {
				best = v
			}
		}
	}
	return best
}

const chatPlan = `name: chat
target: http://127.0.0.1:1
workloads:
  chat:
    scenario:
      - websocket:
          name: chat
          url: /chat?user=${__user}
          headers: {X-Token: tok-123}
          steps:
            - receive:
                name: welcome
                check: {json: {$.type: welcome}}
                extract: {token: {json: $.token}}
            - loop:
                count: 5
                steps:
                  - send:
                      name: echo
                      text: 'hello ${token} ${__iteration}'
                      reply: {check: {regex: '^hello abc123 '}, timeout: 2s}
            - send: {name: fire, binary: 'bin-${__user}'}
            - receive: {name: bin echo, check: {body: bin-}, timeout: 2s}
    load: {users: 3, iterations: 2}
`

// A chat over WebSocket: every count the plan's labels show matches the
// server's own counters, the round trip includes the server's reply
// delay, and the handshake carries the plan's header.
func TestWebSocketChatCountsMatchServer(t *testing.T) {
	t.Parallel()
	srv := wstest.NewChat(t, nil, 10*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, chatPlan, srv.URL)
	want := map[string]int64{"chat connect": 6, "welcome": 6, "echo": 30, "fire": 6, "bin echo": 6}
	for label, n := range want {
		if got, errs := labelAgg(d, label); got != n || errs != 0 {
			t.Errorf("%s: %d samples, %d errors; want %d and 0", label, got, errs, n)
		}
	}
	if got, errs := labelAgg(d, "chat"); got != 6 || errs != 0 {
		t.Errorf("chat sessions: %d, %d errors; want 6 and 0", got, errs)
	}
	if srv.Conns.Load() != 6 || srv.BadToken.Load() != 0 {
		t.Errorf("server: %d connections, %d without the header; want 6 and 0", srv.Conns.Load(), srv.BadToken.Load())
	}
	// The server received 5 texts and 1 binary per session and sent a
	// welcome and an echo of each.
	if srv.Recv.Load() != 36 || srv.Binary.Load() != 6 || srv.Sent.Load() != 42 {
		t.Errorf("server received %d (%d binary), sent %d; want 36 (6), 42", srv.Recv.Load(), srv.Binary.Load(), srv.Sent.Load())
	}
	if ms := minMs(d, "echo"); ms < float64(srv.ReplyDelay.Milliseconds()) {
		t.Errorf("echo round trip min %.3f ms is shorter than the server's reply delay %v", ms, srv.ReplyDelay)
	}
}

// A reply that never comes is ws_timeout and the connection stays usable;
// a server closing with 1011 is ws_closed, on the waiting send and on the
// session, and the steps after it do not run.
func TestWebSocketTimeoutAndAbnormalClose(t *testing.T) {
	t.Parallel()
	srv := wstest.NewChat(t, nil, 10*time.Millisecond)
	plan := `name: chat-fail
target: http://127.0.0.1:1
workloads:
  w:
    scenario:
      - websocket:
          name: s
          url: /chat
          headers: {X-Token: tok-123}
          steps:
            - receive: {name: welcome}
            - send: {name: silent, text: silent, reply: {timeout: 200ms}}
            - send: {name: still up, text: ping, reply: {check: {body: ping}, timeout: 2s}}
            - send: {name: kill, text: close-abnormal, reply: {timeout: 2s}}
            - send: {name: after, text: never}
    load: {users: 2, iterations: 2}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	if n, errs := labelAgg(d, "silent"); n != 4 || errs != 4 || classCount(d, "silent", core.ErrWSTimeout) != 4 {
		t.Errorf("silent: %d samples, %d errors (%d ws_timeout); want 4 ws_timeout", n, errs, classCount(d, "silent", core.ErrWSTimeout))
	}
	if ms := minMs(d, "silent"); ms < 200 {
		t.Errorf("a timed-out reply took %.1f ms, less than its 200ms timeout", ms)
	}
	if n, errs := labelAgg(d, "still up"); n != 4 || errs != 0 {
		t.Errorf("after a timeout the connection must still work: %d samples, %d errors", n, errs)
	}
	if n, _ := labelAgg(d, "kill"); n != 4 || classCount(d, "kill", core.ErrWSClosed) != 4 {
		t.Errorf("kill: %d samples, %d ws_closed; want 4", n, classCount(d, "kill", core.ErrWSClosed))
	}
	if n, _ := labelAgg(d, "after"); n != 0 {
		t.Errorf("%d sends after the connection closed; want none", n)
	}
	if classCount(d, "s", core.ErrWSClosed) != 4 {
		t.Errorf("sessions closed abnormally: %d, want 4", classCount(d, "s", core.ErrWSClosed))
	}
	// The server saw silent, ping and close-abnormal on each connection.
	if srv.Recv.Load() != 12 {
		t.Errorf("server received %d messages, want 12", srv.Recv.Load())
	}
}

// A connection lost without a close frame is ws_closed too, and a refused
// handshake (no server) is counted on the connect label as refused.
func TestWebSocketLostConnectionAndRefused(t *testing.T) {
	t.Parallel()
	srv := wstest.NewChat(t, nil, 10*time.Millisecond)
	plan := `name: chat-lost
target: http://127.0.0.1:1
workloads:
  w:
    scenario:
      - websocket:
          name: s
          url: /chat
          steps:
            - receive: {name: welcome}
            - send: {name: drop, text: drop, reply: {timeout: 2s}}
    load: {users: 1, iterations: 3}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	if got := classCount(d, "drop", core.ErrWSClosed); got != 3 {
		t.Errorf("drop: %d ws_closed, want 3", got)
	}
	if got := classCount(d, "s", core.ErrWSClosed); got != 3 {
		t.Errorf("sessions: %d ws_closed, want 3", got)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	d, _, _ = runPlan(t, ctx, plan, "http://"+addr)
	if n, _ := labelAgg(d, "s connect"); n != 3 || classCount(d, "s connect", core.ErrRefused) != 3 {
		t.Errorf("refused: %d connect samples, %d refused; want 3", n, classCount(d, "s connect", core.ErrRefused))
	}
	if n, _ := labelAgg(d, "welcome"); n != 0 {
		t.Errorf("steps ran without a connection: %d", n)
	}
}

// wss:// with a test CA and SNI name given on the websocket step (tls:),
// and per-request tls: a request with its own tls reaches the same TLS
// server, a request without it fails (the plan's http.tls trusts nothing
// special), and requests with equal settings share one connection per
// user.
func TestWebSocketTLSAndPerRequestTLS(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	srv := wstest.NewChat(t, &pki.server, 0)
	plan := `name: wss
target: https://127.0.0.1:1
workloads:
  w:
    scenario:
      - websocket:
          name: secure
          url: /chat
          headers: {X-Token: tok-123}
          tls: {ca: ` + pki.caPEM + `, server_name: plateau-test.local}
          steps:
            - send: {name: wss echo, text: hi, reply: {check: {body: hi}, timeout: 2s}}
      - request: {name: own tls, url: /x, tls: {ca: ` + pki.caPEM + `, server_name: plateau-test.local}, check: {status: 426}}
      - request: {name: own tls again, url: /y, tls: {ca: ` + pki.caPEM + `, server_name: plateau-test.local}, check: {status: 426, body: HTTP/1.1}}
      - request: {name: own tls h2, url: /h2, http_version: "2", tls: {ca: ` + pki.caPEM + `, server_name: plateau-test.local}, check: {status: 426, body: HTTP/2.0}}
      - request: {name: plan tls, url: /z}
    load: {users: 2, iterations: 3}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, strings.ReplaceAll(plan, "\t", ""), srv.URL)
	for _, label := range []string{"secure connect", "wss echo", "own tls", "own tls again", "own tls h2"} {
		if n, errs := labelAgg(d, label); n != 6 || errs != 0 {
			t.Errorf("%s: %d samples, %d errors; want 6 and 0", label, n, errs)
		}
	}
	if n := classCount(d, "plan tls", core.ErrTLS); n != 6 {
		t.Errorf("plan tls: %d tls failures, want 6 (no CA for the test certificate)", n)
	}
	// 6 websocket connections, 2 for the HTTP/1.1 requests with their own
	// tls (one per user, kept alive across both labels and iterations), 2
	// for the HTTP/2 ones, 6 failed handshakes.
	if got := srv.TCPConns.Load(); got != 6+2+2+6 {
		t.Errorf("server saw %d connections, want 16", got)
	}
}

// Requests with their own tls: run on another transport but keep the
// user's one cookie jar: a cookie set over one transport is sent over
// the other, both ways.
func TestPerRequestTLSSharesCookies(t *testing.T) {
	t.Parallel()
	pki := newTestPKI(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		certs := "0"
		if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
			certs = "1"
		}
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: r.URL.Query().Get("n"), Value: "v", Path: "/"})
		}
		w.Write([]byte("cert=" + certs + " cookies=" + r.Header.Get("Cookie")))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientAuth: tls.RequestClientCert}
	srv.StartTLS()
	defer srv.Close()
	plan := `name: jar
target: https://127.0.0.1:1
http:
  tls: {ca: ` + pki.caPEM + `, server_name: plateau-test.local}
workloads:
  w:
    scenario:
      - request: {name: set a, url: "/set?n=a", check: {body: cert=0}}
      - request: {name: get mtls, url: /get, tls: {cert: ` + pki.clientCert + `, key: ` + pki.clientKey + `}, check: {body: "cert=1 cookies=a=v"}}
      - request: {name: set b mtls, url: "/set?n=b", tls: {cert: ` + pki.clientCert + `, key: ` + pki.clientKey + `}, check: {body: cert=1}}
      - request: {name: get plain, url: /get, check: {regex: "cert=0 cookies=.*b=v"}}
    load: {users: 2, iterations: 2}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	for _, label := range []string{"set a", "get mtls", "set b mtls", "get plain"} {
		if n, errs := labelAgg(d, label); n != 4 || errs != 0 {
			t.Errorf("%s: %d samples, %d errors; want 4 and 0", label, n, errs)
		}
	}
	if t.Failed() {
		for k, a := range d.Run {
			for ek := range a.Errs {
				t.Logf("%s: %v %s", k.Label, ek.Class, ek.Message)
			}
		}
	}
}

// wss:// through http.proxy: each connection is a CONNECT tunnel with the
// proxy's credentials, and the messages go through it.
func TestWebSocketThroughProxy(t *testing.T) {
	t.Parallel()
	proxy := newConnectProxy(t)
	pki := newTestPKI(t)
	srv := wstest.NewChat(t, &pki.server, 0)
	plan := `name: ws-proxy
target: https://127.0.0.1:1
http:
  proxy: ` + strings.Replace(proxy.url, "http://", "http://plateau:secret@", 1) + `
  tls: {ca: ` + pki.caPEM + `, server_name: plateau-test.local}
workloads:
  w:
    scenario:
      - websocket:
          name: via proxy
          url: /chat
          headers: {X-Token: tok-123}
          steps:
            - receive: {name: welcome, check: {json: {$.type: welcome}}}
            - send: {name: echo, text: through, reply: {check: {body: through}, timeout: 2s}}
    load: {users: 2, iterations: 2}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	for _, label := range []string{"via proxy connect", "welcome", "echo"} {
		if n, errs := labelAgg(d, label); n != 4 || errs != 0 {
			t.Errorf("%s: %d samples, %d errors; want 4 and 0", label, n, errs)
		}
	}
	if proxy.tunnels.Load() != 4 || srv.Conns.Load() != 4 || srv.Recv.Load() != 4 {
		t.Errorf("proxy tunnels %d, server connections %d, messages %d; want 4, 4, 4",
			proxy.tunnels.Load(), srv.Conns.Load(), srv.Recv.Load())
	}
}

// A websocket in the run's setup is not measured and its extraction is
// read by every user; one in a workload's setup that cannot connect fails
// that user's setup.
func TestWebSocketInSetup(t *testing.T) {
	t.Parallel()
	srv := wstest.NewChat(t, nil, 0)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	plan := `name: ws-setup
target: http://127.0.0.1:1
setup:
  - websocket:
      name: login socket
      url: /chat
      headers: {X-Token: tok-123}
      steps:
        - receive: {extract: {token: {json: $.token}}}
workloads:
  ok:
    scenario:
      - websocket:
          name: s
          url: /chat
          headers: {X-Token: tok-123}
          steps:
            - send: {name: echo token, text: "t=${token}", reply: {check: {body: t=abc123}, timeout: 2s}}
    load: {users: 2, iterations: 2}
  broken:
    setup:
      - websocket: {url: "ws://` + closed + `/chat", steps: [{receive: {}}]}
    scenario: [{think: 1ms}]
    load: {users: 2, iterations: 1}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, res, _ := runPlan(t, ctx, plan, srv.URL)
	if n, errs := labelAgg(d, "echo token"); n != 4 || errs != 0 {
		t.Errorf("echo token: %d samples, %d errors; want 4 and 0", n, errs)
	}
	for _, label := range []string{"login socket connect", "login socket", "login socket receive"} {
		if n, _ := labelAgg(d, label); n != 0 {
			t.Errorf("setup label %s recorded %d samples", label, n)
		}
	}
	if res.SetupFailures != 2 || !strings.Contains(res.SetupError, "refused") {
		t.Errorf("setup failures %d (%q); want 2, refused", res.SetupFailures, res.SetupError)
	}
	if srv.Conns.Load() != 5 {
		t.Errorf("server connections %d, want 5 (1 setup + 4)", srv.Conns.Load())
	}
}

// Server push: 40 messages sent at once (more than the client's queue
// holds, so the server is held back by flow control meanwhile) are all
// received, in order, one sample each; a receive skips what does not
// match.
func TestWebSocketServerPush(t *testing.T) {
	t.Parallel()
	srv := wstest.NewChat(t, nil, 0)
	plan := `name: ws-push
target: http://127.0.0.1:1
workloads:
  w:
    scenario:
      - websocket:
          name: feed
          url: /feed
          steps:
            - send: {name: subscribe, text: push 40}
            - receive: {name: first event, check: {body: event-1}, extract: {first: {regex: "event-(\\d+)"}}}
            - loop:
                count: 38
                steps:
                  - receive: {name: event, check: {regex: "^event-\\d+$"}, timeout: 2s, extract: {n: {regex: "event-(\\d+)"}}}
            - receive: {name: last event, check: {body: event-40}, timeout: 2s}
            - if:
                cond: '${first} == "1" && ${n} == "39"'
                steps: [{send: {name: in order, text: ok}}]
    load: {users: 2, iterations: 2}
`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	d, _, _ := runPlan(t, ctx, plan, srv.URL)
	want := map[string]int64{"subscribe": 4, "first event": 4, "event": 4 * 38, "last event": 4, "in order": 4}
	for label, n := range want {
		if got, errs := labelAgg(d, label); got != n || errs != 0 {
			t.Errorf("%s: %d samples, %d errors; want %d and 0", label, got, errs, n)
		}
	}
	// Per connection: the welcome, 40 events, and the echo of "ok".
	if srv.Sent.Load() != 4*42 {
		t.Errorf("server sent %d messages, want %d", srv.Sent.Load(), 4*42)
	}
}
