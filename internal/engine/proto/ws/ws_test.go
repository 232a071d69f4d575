package ws

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/plateau-perf/plateau/internal/core"
)

// readBounded keeps at most max bytes and counts them all.
func TestReadBounded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		size     int
		max      int
		wantKept int
	}{
		{"empty", 0, 16, 0},
		{"short", 10, 16, 10},
		{"exact", 16, 16, 16},
		{"long", 10000, 16, 16},
		{"grows", 5000, 1 << 20, 5000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := bytes.Repeat([]byte("x"), tc.size)
			got, n, err := readBounded(bytes.NewReader(src), tc.max)
			if err != nil || n != tc.size || len(got) != tc.wantKept {
				t.Fatalf("kept %d of %d (err %v); want %d of %d", len(got), n, err, tc.wantKept, tc.size)
			}
		})
	}
}

// A server that answers messages and closes with 1008 on "bye": the
// client counts both ways, times out without losing the connection, and
// reports the close as ws_closed with its status.
func TestConnTimeoutCountsAndClose(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, msg, err := c.Read(r.Context())
			if err != nil {
				return
			}
			switch string(msg) {
			case "quiet":
				continue
			case "bye":
				c.Close(websocket.StatusPolicyViolation, "bye")
				return
			}
			if c.Write(r.Context(), typ, msg) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	d := NewDialer(Config{MaxMessage: 4})
	ctx := context.Background()
	c, res := d.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), http.Header{})
	if c == nil || res.Status != 101 || res.Connect <= 0 {
		t.Fatalf("dial: %+v", res)
	}
	if err := c.Send(false, []byte("quiet"), time.Second); err != nil {
		t.Fatal(err)
	}
	tm := time.NewTimer(50 * time.Millisecond)
	if _, err := c.Next(ctx, tm); !errors.Is(err, ErrTimeout) || Classify(err) != core.ErrWSTimeout {
		t.Fatalf("quiet: %v, want a timeout", err)
	}
	if err := c.Send(true, []byte("echo-me"), time.Second); err != nil {
		t.Fatal(err)
	}
	tm.Reset(2 * time.Second)
	m, err := c.Next(ctx, tm)
	if err != nil || !m.Binary || string(m.Data) != "echo" || m.Size != 7 {
		t.Fatalf("echo: %+v %v; want the binary message truncated to 4 of 7 bytes", m, err)
	}
	if err := c.Send(false, []byte("bye"), time.Second); err != nil {
		t.Fatal(err)
	}
	tm.Reset(2 * time.Second)
	_, err = c.Next(ctx, tm)
	var ce *ClosedError
	if !errors.As(err, &ce) || ce.Code != 1008 || !ce.Abnormal() || Classify(err) != core.ErrWSClosed {
		t.Fatalf("bye: %v, want ws_closed with status 1008", err)
	}
	if err := c.Close(); err == nil {
		t.Fatal("Close after an abnormal close: nil, want the close")
	}
	sent, sentB, recv, recvB := c.Counts()
	if sent != 3 || sentB != 5+7+3 || recv != 1 || recvB != 7 {
		t.Fatalf("counts %d/%d sent, %d/%d received", sent, sentB, recv, recvB)
	}
}

// A handshake answered with 403 is http_4xx; with no server, refused.
func TestDialFailures(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	d := NewDialer(Config{})
	c, res := d.Dial(context.Background(), srv.URL, http.Header{})
	if c != nil || res.Status != 403 || res.Class != core.ErrHTTP4xx || !strings.Contains(string(res.Body), "no") {
		t.Fatalf("403: %+v", res)
	}
	srv.Close()
	c, res = d.Dial(context.Background(), srv.URL, http.Header{})
	if c != nil || res.Class != core.ErrRefused {
		t.Fatalf("closed server: %+v", res)
	}
}
