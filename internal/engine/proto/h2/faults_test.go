package h2

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/faulttest"
)

// TestFaultClassesAndMessages: the HTTP/2 fault server's resets and
// GOAWAYs fail with the class docs/plan.md gives and one message per
// fault, whatever the stream id: the server's code and debug data kept, no
// id (issue 31 item 10: x/net's texts carried the id, so every reset was a
// distinct message and a failed run's reason read "(other messages)", and
// a GOAWAY with an error code read "EOF", class reset).
func TestFaultClassesAndMessages(t *testing.T) {
	url, streams := faulttest.H2(t)
	debug := strconv.Quote(faulttest.GoAwayDebug)
	cases := []struct {
		path    string
		class   core.ErrorClass
		message string
		streams int64 // requests the server saw per request sent
	}{
		{"/rst", core.ErrH2StreamReset, "stream reset by the server: INTERNAL_ERROR", 1},
		{"/goaway-calm", core.ErrProtocol, "server sent GOAWAY ENHANCE_YOUR_CALM and closed the connection before the response ended (debug data " + debug + ")", 1},
		{"/goaway", core.ErrReset, "server sent GOAWAY NO_ERROR and closed the connection before the response ended", 1},
		{"/refuse", core.ErrProtocol, "server sent GOAWAY ENHANCE_YOUR_CALM, request refused unprocessed (debug data " + debug + ")", 1 + maxRetries},
	}
	p := NewPool(Config{Timeout: 10 * time.Second})
	defer p.Close()
	c := NewClient(p, nil)
	for _, tc := range cases {
		t.Run(tc.path[1:], func(t *testing.T) {
			before := streams.Load()
			const n = 5
			for i := range n {
				var res httpc.Result
				err := c.Do(context.Background(), &httpc.Request{URL: url + tc.path}, &res)
				if err == nil || res.Class != tc.class || err.Error() != tc.message {
					t.Fatalf("request %d: class %s, message %q; want %s, %q", i, res.Class, err, tc.class, tc.message)
				}
				if strings.Contains(err.Error(), "stream ID") || strings.Contains(err.Error(), "LastStreamID") {
					t.Fatalf("message keeps a stream id: %q", err)
				}
				// A request that had to go again says so, as HTTP/1.1's retry.
				if res.Retried != (tc.streams > 1) {
					t.Fatalf("request %d: retried %v", i, res.Retried)
				}
			}
			if got := streams.Load() - before; got != n*tc.streams {
				t.Fatalf("server saw %d requests for %d sent, want %d", got, n, n*tc.streams)
			}
			// The pool is still usable: the next request succeeds.
			var res httpc.Result
			if err := c.Do(context.Background(), &httpc.Request{URL: url + "/ok"}, &res); err != nil || res.Status != 200 {
				t.Fatalf("after the faults: %v, status %d", err, res.Status)
			}
		})
	}
}
