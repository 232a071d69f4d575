// Package wstest runs the WebSocket test server of the websocket step's
// tests and benchmarks on 127.0.0.1: a chat server on
// github.com/coder/websocket that counts what it accepted, received and
// sent, so tests compare plateau's figures with the server's own.
package wstest

import (
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Chat is the server. It greets each connection with the text message
// Welcome, echoes every message after ReplyDelay (binary as binary),
// never answers "silent", closes with status 1011 on "close-abnormal" and
// drops the TCP connection without a close frame on "drop", and answers
// "push N" with N messages "event-1" … "event-N" at once. A request
// that is no upgrade gets 426 with its protocol as the body. Handshakes
// without "X-Token: tok-123" are counted in BadToken (and still served).
type Chat struct {
	*httptest.Server
	// Conns, Recv, Sent, Binary and BadToken are the server's counters:
	// WebSocket connections accepted, messages received and sent, binary
	// messages received, handshakes without the token. TCPConns counts
	// every TCP connection (plain HTTP requests and failed TLS handshakes
	// too).
	Conns, Recv, Sent, Binary, BadToken, TCPConns atomic.Int64
	ReplyDelay                                    time.Duration
}

// Welcome is the message a new connection receives first.
const Welcome = `{"type":"welcome","token":"abc123"}`

// NewChat starts a Chat on 127.0.0.1 (over TLS with cert when not nil),
// closed when the test ends.
func NewChat(t testing.TB, cert *tls.Certificate, replyDelay time.Duration) *Chat {
	t.Helper()
	cs := &Chat{ReplyDelay: replyDelay}
	cs.Server = httptest.NewUnstartedServer(http.HandlerFunc(cs.serve))
	cs.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			cs.TCPConns.Add(1)
		}
	}
	if cert != nil {
		cs.TLS = &tls.Config{Certificates: []tls.Certificate{*cert}}
		cs.EnableHTTP2 = true // for plain requests; handshakes offer only http/1.1
		cs.StartTLS()
	} else {
		cs.Start()
	}
	t.Cleanup(cs.Close)
	return cs
}

func (cs *Chat) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		// A plain request: 426 Upgrade Required, with the protocol it
		// came over (HTTP/1.1, HTTP/2.0) as the body.
		w.WriteHeader(http.StatusUpgradeRequired)
		_, _ = w.Write([]byte(r.Proto))
		return
	}
	if r.Header.Get("X-Token") != "tok-123" {
		cs.BadToken.Add(1)
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer c.CloseNow()
	cs.Conns.Add(1)
	ctx := r.Context()
	if err := c.Write(ctx, websocket.MessageText, []byte(Welcome)); err != nil {
		return
	}
	cs.Sent.Add(1)
	for {
		typ, msg, err := c.Read(ctx)
		if err != nil {
			return
		}
		cs.Recv.Add(1)
		if typ == websocket.MessageBinary {
			cs.Binary.Add(1)
		}
		if n, ok := strings.CutPrefix(string(msg), "push "); ok {
			// Server push: n text messages "event-1" … "event-n" at once.
			k, _ := strconv.Atoi(n)
			for i := 1; i <= k; i++ {
				if c.Write(ctx, websocket.MessageText, []byte("event-"+strconv.Itoa(i))) != nil {
					return
				}
				cs.Sent.Add(1)
			}
			continue
		}
		switch string(msg) {
		case "silent":
			continue
		case "close-abnormal":
			c.Close(websocket.StatusInternalError, "boom")
			return
		case "drop":
			return // CloseNow: no close frame
		}
		if cs.ReplyDelay > 0 {
			time.Sleep(cs.ReplyDelay)
		}
		if err := c.Write(ctx, typ, msg); err != nil {
			return
		}
		cs.Sent.Add(1)
	}
}
