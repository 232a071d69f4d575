package engine

import (
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/proto/ws/wstest"
)

// BenchmarkWebSocketMessages is the websocket step's whole per-message
// path in the engine: render, send, wait for the echo, check it, record
// the round trip. One iteration is a session of 100 round trips on one
// connection (plus connect, welcome and close); the echo server
// (wstest.Chat) runs in this process, so CPU is client and server
// together — package proto/ws's benchmarks measure the client alone.
func BenchmarkWebSocketMessages(b *testing.B) {
	srv := wstest.NewChat(b, nil, 0)
	v, w := benchVUAt(b, `name: b
target: http://x
workloads:
  w:
    scenario:
      - websocket:
          name: chat
          url: /chat
          headers: {X-Token: tok-123}
          steps:
            - receive: {name: welcome}
            - loop:
                count: 100
                steps:
                  - send: {name: say, text: 'hello ${__iteration}', reply: {check: {body: hello}}}
    load: {users: 1, duration: 1s}
`, srv.URL)
	t0 := time.Now()
	runIterations(b, v, w)
	el := time.Since(t0)
	b.ReportMetric(float64(100*b.N)/el.Seconds(), "msgs/s")
	b.ReportMetric(float64(el.Nanoseconds())/float64(100*b.N), "ns/msg")
	if srv.Recv.Load() < int64(100*b.N) {
		b.Fatalf("server received %d messages, want %d", srv.Recv.Load(), 100*b.N)
	}
}
