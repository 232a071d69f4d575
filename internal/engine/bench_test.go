package engine

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// fixedServer answers every request on a kept-alive connection with the same
// small response, as fast as it can: the benchmark measures the client side.
func fixedServer(tb testing.TB) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					// Read one request head (no bodies in this benchmark).
					for {
						l, err := br.ReadSlice('\n')
						if err != nil {
							return
						}
						if len(l) <= 2 {
							break
						}
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	return "http://" + ln.Addr().String()
}

// benchVU builds an engine and one user for a one-request scenario.
func benchVU(b *testing.B, src string) (*vu, *rundir.Writer) {
	return benchVUAt(b, src, fixedServer(b))
}

// benchVUAt is benchVU against the server at target.
func benchVUAt(b *testing.B, src, target string) (*vu, *rundir.Writer) {
	dir := b.TempDir()
	pf := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(pf, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := plan.LoadFile(pf, plan.Options{Overrides: []string{"target=" + target}})
	if err != nil {
		b.Fatal(err)
	}
	w, err := rundir.Create(filepath.Join(dir, "run"), &rundir.Info{}, nil, true)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { w.Close() })
	e := &Engine{plan: p, info: &rundir.Info{}, clientCfg: newClientConfig(p.HTTP), seed: 1,
		cfg: Config{Segments: 1, Writer: w}}
	e.clientCfg.Buffers = httpc.NewBuffers()
	e.rec = newRecorderForBench()
	e.trs = &transports{settings: &tlsSettings{list: []plan.TLS{p.HTTP.TLS}}}
	prog, err := compile(p, p.Workloads[0], 0, map[string]*feeder{}, nil, e.trs.settings)
	if err != nil {
		b.Fatal(err)
	}
	wl := &workload{e: e, spec: p.Workloads[0], prog: prog}
	e.workloads = []*workload{wl}
	return newVU(1, wl, e), w
}

// runIterations runs b.N iterations of v, rotating the recorder every
// 4096 requests as the collector would; w (the run's writer) stays open
// throughout.
func runIterations(b *testing.B, v *vu, w *rundir.Writer) {
	ctx := context.Background()
	var iv = v.w.e.rec.Rotate(nil)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := v.iteration(ctx, zeroTime); err != nil {
			b.Fatal(err)
		}
		if i%4096 == 4095 {
			iv = v.w.e.rec.Rotate(iv)
			_ = w
		}
	}
	if v.res.Err != nil {
		b.Fatal(v.res.Err)
	}
}

// BenchmarkIteration is the whole per-request hot path: render, send,
// receive, judge, record into the sharded HDR recorder and the raw JTL
// buffer. The recorder is rotated every 4096 requests as the collector would.
func BenchmarkIteration(b *testing.B) {
	v, w := benchVU(b, "name: b\ntarget: http://x\nworkloads:\n  w:\n    scenario:\n      - request: {name: get, url: /}\n    load: {users: 1, duration: 1s}\n")
	runIterations(b, v, w)
}

// TestIterationAllocs guards the steady-state hot path against allocations.
func TestIterationAllocs(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts are meaningless under -short and -race")
	}
	res := testing.Benchmark(BenchmarkIteration)
	if a := res.AllocsPerOp(); a > 0 {
		t.Errorf("per-request hot path allocates %d times per request, want 0", a)
	}
	t.Logf("%s, %d allocs/op", res, res.AllocsPerOp())
	res = testing.Benchmark(BenchmarkIterationPostman)
	if a := res.AllocsPerOp(); a > 0 {
		t.Errorf("a constant encode: postman URL allocates %d times per request, want 0", a)
	}
	t.Logf("encode: postman: %s, %d allocs/op", res, res.AllocsPerOp())
	res = testing.Benchmark(BenchmarkUserThink)
	if a := res.AllocsPerOp(); a > 0 {
		t.Errorf("a closed-model user's request and think allocate %d times per iteration, want 0", a)
	}
	t.Logf("user loop with think: %s, %d allocs/op", res, res.AllocsPerOp())
}

// BenchmarkUserThink is a closed-model user's whole iteration — a request,
// then a think step at the top level of the scenario, during which the user
// is parked on its timer without a goroutine and continues on the timer's —
// for b.N iterations. The think is 20 µs, so the op is mostly the park and
// the wake-up; the user's one-time state (its vu, client, timer) is made
// once and amortised.
func BenchmarkUserThink(b *testing.B) {
	v, w := benchVU(b, "name: b\ntarget: http://x\nworkloads:\n  w:\n    scenario:\n      - request: {name: get, url: /}\n      - think: 20us\n    load: {users: 1, duration: 1s}\n")
	wl := v.w
	v.close()
	// The collector's rotation, as in runIterations (the raw JTL buffer
	// is recycled, not grown).
	stop := make(chan struct{})
	rotated := make(chan struct{})
	go func() {
		defer close(rotated)
		iv := wl.e.rec.Rotate(nil)
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Second):
				iv = wl.e.rec.Rotate(iv)
			}
		}
	}()
	defer func() { close(stop); <-rotated; _ = w }()
	g := wl.newGroup(context.Background())
	b.ReportAllocs()
	b.ResetTimer()
	g.add(1, 0, 0, b.N)
	g.wait(0, true)
	b.StopTimer()
	g.stop()
	if n := wl.e.samples.Load(); n != int64(b.N) {
		b.Fatalf("%d requests, want %d", n, b.N)
	}
}

// BenchmarkIterationFlow is BenchmarkIteration's one request inside an if
// and a choose, with a function in its URL: the cost of the issue 15
// constructs on the hot path (the limit is 20 % over BenchmarkIterationVar,
// which renders a new URL per iteration too).
func BenchmarkIterationFlow(b *testing.B) {
	v, w := benchVU(b, `name: b
target: http://x
vars: {cart: "c-1"}
workloads:
  w:
    scenario:
      - if:
          cond: '${status} != 500 && ${cart} != ""'
          steps:
            - choose:
                - {weight: 1, steps: [{request: {name: get, url: "/a/${counter()}"}}]}
                - {weight: 1, steps: [{request: {name: get, url: "/b/${counter()}"}}]}
    load: {users: 1, duration: 1s}
`)
	runIterations(b, v, w)
}

// BenchmarkIterationVar is the reference for BenchmarkIterationFlow: the
// same request with a plain variable in its URL that changes every
// iteration (so both render a new URL each time).
func BenchmarkIterationVar(b *testing.B) {
	v, w := benchVU(b, `name: b
target: http://x
vars: {cart: "c-1"}
workloads:
  w:
    scenario:
      - request: {name: get, url: "/a/${__iteration}"}
    load: {users: 1, duration: 1s}
`)
	runIterations(b, v, w)
}

// BenchmarkIterationURLVar is BenchmarkIteration with variables in the
// path and query, percent-encoded as plateau does by default; …Postman the
// same URL with encode: postman (the whole URL encoded as Postman's runtime
// does once the values are in). The two should cost alike: the rendered
// URL becomes a string once either way.
func BenchmarkIterationURLVar(b *testing.B) {
	v, w := benchVU(b, "name: b\ntarget: http://x\nvars: {x: \"a b&c\"}\nworkloads:\n  w:\n    scenario:\n      - request: {name: get, url: \"/u/${x}?q=${x}&r=1\"}\n    load: {users: 1, duration: 1s}\n")
	runIterations(b, v, w)
}

func BenchmarkIterationURLVarPostman(b *testing.B) {
	v, w := benchVU(b, "name: b\ntarget: http://x\nvars: {x: \"a b&c\"}\nworkloads:\n  w:\n    scenario:\n      - request: {name: get, url: \"/u/${x}?q=${x}&r=1\", encode: postman}\n    load: {users: 1, duration: 1s}\n")
	runIterations(b, v, w)
}

// BenchmarkIterationPostman: a constant URL under encode: postman is
// encoded once, when the plan is compiled.
func BenchmarkIterationPostman(b *testing.B) {
	v, w := benchVU(b, "name: b\ntarget: http://x\nworkloads:\n  w:\n    scenario:\n      - request: {name: get, url: \"/a|b?q=1 2\", encode: postman}\n    load: {users: 1, duration: 1s}\n")
	runIterations(b, v, w)
}
