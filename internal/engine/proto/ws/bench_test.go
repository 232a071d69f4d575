package ws

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The benchmarks talk to an echo server in another process (this test
// binary re-executed with echoEnv set), so the CPU they report per
// message is the client's only.
const echoEnv = "PLATEAU_WS_BENCH_ECHO"

func TestMain(m *testing.M) {
	if os.Getenv(echoEnv) == "1" {
		serveEcho()
		return
	}
	os.Exit(m.Run())
}

// serveEcho echoes every message on every connection until stdin closes.
func serveEcho() {
	raiseFileLimit()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(-1)
		ctx := context.Background()
		buf := make([]byte, 0, 512)
		for {
			typ, rd, err := c.Reader(ctx)
			if err != nil {
				return
			}
			buf = buf[:0]
			for {
				if len(buf) == cap(buf) {
					buf = append(buf, 0)[:len(buf)]
				}
				n, err := rd.Read(buf[len(buf):cap(buf)])
				buf = buf[:len(buf)+n]
				if err == io.EOF {
					break
				}
				if err != nil {
					return
				}
			}
			if c.Write(ctx, typ, buf) != nil {
				return
			}
		}
	}))
}

// raiseFileLimit lifts the soft open-files limit to the hard one (10,000
// connections need 10,000 descriptors on each side).
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// startEcho starts the echo server process and returns its ws:// URL.
func startEcho(b *testing.B) string {
	b.Helper()
	raiseFileLimit() // inherited by the server process
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), echoEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); _ = cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return "ws://" + strings.TrimSpace(addr) + "/echo"
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// roundTrips sends n messages on each of conns concurrently, each waiting
// for its echo, and reports messages per second each way and client CPU
// per message.
func roundTrips(b *testing.B, conns []*Conn, total int) {
	msg := []byte(`{"type":"say","text":"hello from the load generator"}`)
	per := (total + len(conns) - 1) / len(conns)
	cpu0, t0 := cpuTime(), time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, len(conns))
	for _, c := range conns {
		wg.Go(func() {
			t := time.NewTimer(time.Hour)
			ctx := context.Background()
			for range per {
				if err := c.Send(false, msg, 10*time.Second); err != nil {
					errs <- err
					return
				}
				t.Reset(10 * time.Second)
				if _, err := c.Next(ctx, t); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	n := float64(per * len(conns))
	b.ReportMetric(n/wall.Seconds(), "msgs/s")
	b.ReportMetric(float64(cpu.Nanoseconds())/n/1000, "cpu-µs/msg")
}

func dialN(b *testing.B, url string, n int) []*Conn {
	b.Helper()
	d := NewDialer(Config{})
	conns := make([]*Conn, n)
	var mu sync.Mutex
	var first error
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range conns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, res := d.Dial(context.Background(), url, http.Header{})
			if c == nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("connection %d: %w", i, res.Err)
				}
				mu.Unlock()
				return
			}
			conns[i] = c
		})
	}
	wg.Wait()
	if first != nil {
		b.Fatal(first)
	}
	return conns
}

func closeAll(conns []*Conn) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256)
	for _, c := range conns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			_ = c.Close()
		})
	}
	wg.Wait()
}

// BenchmarkRoundTrip is one connection, one message in flight: send, wait
// for the echo, again (b.N messages each way).
func BenchmarkRoundTrip(b *testing.B) {
	url := startEcho(b)
	conns := dialN(b, url, 1)
	defer closeAll(conns)
	b.ReportAllocs()
	b.ResetTimer()
	roundTrips(b, conns, b.N)
}

// BenchmarkConnections opens PLATEAU_WS_BENCH_CONNS connections (default
// 1,000; the recorded run used 10,000), reports the client memory each
// idle one holds (heap and stacks: coder/websocket's buffers, the reader
// goroutine and its queue), then runs b.N round trips spread over all of
// them at once.
func BenchmarkConnections(b *testing.B) {
	n := 1000
	if s := os.Getenv("PLATEAU_WS_BENCH_CONNS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			b.Fatalf("PLATEAU_WS_BENCH_CONNS=%q", s)
		}
		n = v
	}
	url := startEcho(b)
	mem := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse + m.StackInuse
	}
	before := mem()
	conns := dialN(b, url, n)
	defer closeAll(conns)
	time.Sleep(100 * time.Millisecond) // handshakes' garbage settles
	after := mem()
	b.ResetTimer() // (it also drops metrics reported before it)
	roundTrips(b, conns, max(b.N, n))
	b.ReportMetric(float64(after-before)/float64(n)/1024, "KiB/idle-conn")
	b.ReportMetric(float64(n), "conns")
}
