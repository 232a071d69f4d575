//go:build linux

package engine_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/nginxtest"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// BenchmarkLoad runs the peer harness's two CPU shapes in this process
// against nginx on loopback (one worker, `return 200 'ok'`) and records what
// the load generator costs: the process's CPU time (user+sys, getrusage)
// per request while the engine runs, the rate it held and, for the open
// model, the iterations it dropped.
//
//   - rate5000: the open model, 5,000 req/s, max_users 10, 5 s (issue 21's
//     "CPU µs per request at 5,000 req/s").
//   - closed50: 50 users in a closed loop, 5 s (the harness's max
//     throughput; compare req/s and CPU per request with wrk -c50).
//   - latency100: 100 req/s for 10 s to a server (a child process) that
//     answers after 10 ms: the p50 over those 10 ms, counted from each
//     request's intended start (issue 21's "p50 overhead").
//   - paced100: the same 100 req/s from 2 closed-model users paced at
//     20 ms, whose latency also counts from each iteration's intended
//     start (package wake's Queue wakes them).
//
// Run it as the harness does, the generator on one core and nginx on
// another: pin the benchmark (taskset), and it moves nginx to a CPU outside
// its own set, as the harness does.
//
//	taskset -c 0 go test -run '^$' -bench BenchmarkLoad -benchtime 1x -cpu 1 ./internal/engine
//
// Where the server runs matters on a VM: with nginx on the generator's own
// CPU, waking it costs no inter-processor interrupt, and the generator's
// CPU per request at 5,000 req/s was 28–29 µs instead of 37–41 (measured
// with plateau run against nginx pinned to CPU 0 and to CPU 1).
// The figures are the result; nothing is asserted about time.
func BenchmarkLoad(b *testing.B) {
	if raceOn {
		b.Skip("CPU per request means nothing under -race")
	}
	// plateau run's collector setting (internal/cli, runPlan), unless GOGC
	// is set.
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(25))
	}
	ng := nginxtest.Start(b, nginxtest.Config{
		HTTP:   "access_log off; keepalive_requests 1000000000; keepalive_timeout 300s;",
		Server: "location / { default_type text/plain; return 200 'ok'; }",
	})
	// The harness's delay server: a child process answering after 10 ms.
	delayURL, delayPID := startChild(b, "PLATEAU_TEST_SERVE_DELAY=10ms")
	if cpu, ok := otherCPU(); ok {
		var set unix.CPUSet
		set.Set(cpu)
		for _, pid := range []int{ng.PID(), delayPID} {
			if err := unix.SchedSetaffinity(pid, &set); err != nil {
				b.Fatal(err)
			}
		}
		b.Logf("the servers on CPU %d, outside the benchmark's CPUs", cpu)
	} else {
		b.Logf("the servers share the benchmark's CPUs (pin the benchmark with taskset to keep them apart)")
	}
	shapes := []struct{ name, target, load string }{
		{"rate5000", "http://" + ng.Addr, "{rate: 5000/s, duration: 5s, max_users: 10}"},
		{"closed50", "http://" + ng.Addr, "{users: 50, duration: 5s}"},
		{"latency100", delayURL, "{rate: 100/s, duration: 10s, max_users: 10}"},
		{"paced100", delayURL, "{users: 2, pace: 20ms, duration: 10s}"},
	}
	for _, sh := range shapes {
		b.Run(sh.name, func(b *testing.B) {
			src := fmt.Sprintf("name: load\ntarget: %s\nworkloads:\n  w:\n    scenario:\n"+
				"      - request: {name: get, url: /}\n    load: %s\n", sh.target, sh.load)
			dir := b.TempDir()
			pf := filepath.Join(dir, "plan.yaml")
			if err := os.WriteFile(pf, []byte(src), 0o644); err != nil {
				b.Fatal(err)
			}
			p, err := plan.LoadFile(pf, plan.Options{Env: func(string) (string, bool) { return "", false }})
			if err != nil {
				b.Fatal(err)
			}
			var cpu time.Duration
			var requests, dropped int64
			var wall time.Duration
			var p50 float64 // summed over runs
			for i := range b.N {
				out := filepath.Join(dir, fmt.Sprintf("run%d", i))
				info := &rundir.Info{Tool: "plateau", Name: p.Name, Status: rundir.StatusRunning}
				w, err := rundir.Create(out, info, p.Source, true)
				if err != nil {
					b.Fatal(err)
				}
				c0, t0 := processCPU(b), time.Now()
				res, err := engine.Run(context.Background(), engine.Config{Plan: p, Writer: w, Info: info,
					SaveInfo: func(in *rundir.Info) error { return rundir.WriteInfo(out, in) }, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
				cpu += processCPU(b) - c0
				wall += time.Since(t0)
				requests += res.Samples
				for _, n := range res.Dropped {
					dropped += n
				}
				if strings.HasPrefix(sh.name, "latency") || strings.HasPrefix(sh.name, "paced") {
					d, err := analysis.Load(out)
					if err != nil {
						b.Fatal(err)
					}
					p50 += d.Total.QuantileMs(50) - 10 // the server's own 10 ms
				}
			}
			if requests == 0 {
				b.Fatal("no requests were made")
			}
			b.ReportMetric(float64(cpu.Microseconds())/float64(requests), "cpu-µs/req")
			b.ReportMetric(float64(requests)/wall.Seconds(), "req/s")
			b.ReportMetric(float64(dropped)/float64(b.N), "dropped/run")
			if strings.HasPrefix(sh.name, "latency") || strings.HasPrefix(sh.name, "paced") {
				// From the intended start: coordinated-omission correct.
				b.ReportMetric(p50/float64(b.N), "p50-overhead-ms")
			}
		})
	}
}

// otherCPU is a CPU this process may not run on (it was pinned), for the
// server.
func otherCPU() (int, bool) {
	var mine unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mine); err != nil {
		return 0, false
	}
	for cpu := range 1024 { // unix.CPUSet's size
		if !mine.IsSet(cpu) && cpuOnline(cpu) {
			return cpu, true
		}
	}
	return 0, false
}

// cpuOnline reports whether Linux has the CPU and it is online.
func cpuOnline(cpu int) bool {
	dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d", cpu)
	if _, err := os.Stat(dir); err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(dir, "online")) // absent for a CPU that cannot go offline
	return err != nil || strings.TrimSpace(string(b)) == "1"
}

// processCPU is the CPU time (user + system) this process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
