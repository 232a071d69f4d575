package grpc_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ggrpc "google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/grpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/grpc/grpctest"
)

// serverEnv makes the test binary a gRPC test server (see TestMain), so
// that a benchmark's server runs in another process and the CPU the
// benchmark reports is the client's alone.
const serverEnv = "PLATEAU_GRPC_BENCH_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(serverEnv) == "1" {
		s, err := grpctest.New(grpctest.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(s.Addr)
		_, _ = io.Copy(io.Discard, os.Stdin) // serve until the parent closes stdin
		s.Stop()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serverProcess starts the test server in a child process on 127.0.0.1.
func serverProcess(b *testing.B) string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	return strings.TrimSpace(line)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

const benchMessage = `{"text":"hello","tags":["a","b"],"inner":{"user_id":"7"}}`

// BenchmarkUnary: unary calls to the test server in another process, one
// at a time (seq) and 32 in flight on one connection (c32). "plateau" is
// Client.Do (the JSON request rendered into a dynamic message, the reply
// turned into its JSON form for checks); "grpc-go" is the bare
// ClientConn.Invoke with ready dynamic messages, the floor plateau's
// client is built on. Reports the client process's CPU µs per call.
func BenchmarkUnary(b *testing.B) {
	addr := serverProcess(b)
	say := method(b, "Say")
	for _, conc := range []int{1, 32} {
		name := "seq"
		if conc > 1 {
			name = "c32"
		}
		b.Run(name+"/plateau", func(b *testing.B) {
			c, err := grpc.Dial(addr, grpc.Config{})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			run(b, conc, func() func() {
				cl := grpc.NewClient(c)
				var res httpc.Result
				call := &grpc.Call{Method: say, Message: []byte(benchMessage)}
				return func() {
					if o := cl.Do(context.Background(), call, &res); o.Code != 0 {
						b.Error(res.Err)
					}
				}
			})
		})
		b.Run(name+"/grpc-go", func(b *testing.B) {
			cc, err := ggrpc.NewClient("passthrough:///"+addr, ggrpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			in := dynamicpb.NewMessage(say.In)
			if err := protojson.Unmarshal([]byte(benchMessage), in); err != nil {
				b.Fatal(err)
			}
			run(b, conc, func() func() {
				return func() {
					out := dynamicpb.NewMessage(say.Out)
					if err := cc.Invoke(context.Background(), say.Path, in, out); err != nil {
						b.Error(err)
					}
				}
			})
		})
	}
}

// BenchmarkStream: server streams of 10 messages, one call at a time;
// CPU per message.
func BenchmarkStream(b *testing.B) {
	addr := serverProcess(b)
	count := method(b, "Count")
	c, err := grpc.Dial(addr, grpc.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	cl := grpc.NewClient(c)
	var res httpc.Result
	call := &grpc.Call{Method: count, Message: []byte(`{"n": 10}`)}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for i := 0; i < b.N; i++ {
		if o := cl.Do(context.Background(), call, &res); o.Messages != 10 {
			b.Fatal(res.Err)
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/float64(b.N*10), "cpu-µs/msg")
}

// run makes b.N calls from conc goroutines, each with its own call
// function, and reports calls/s and client CPU µs per call.
func run(b *testing.B, conc int, newCall func() func()) {
	b.ReportAllocs()
	calls := make([]func(), conc)
	for i := range calls {
		calls[i] = newCall()
	}
	calls[0]() // connect outside the measure
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	var wg sync.WaitGroup
	per := (b.N + conc - 1) / conc
	for _, call := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range per {
				call()
			}
		}()
	}
	wg.Wait()
	n := float64(per * conc)
	b.ReportMetric(n/time.Since(t0).Seconds(), "calls/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Microsecond)/n, "cpu-µs/call")
}
