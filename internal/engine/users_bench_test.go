//go:build unix

package engine_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/enginetest"
	"github.com/plateau-perf/plateau/internal/nginxtest"
	"github.com/plateau-perf/plateau/internal/plan"
)

// BenchmarkUsers runs 100,000 virtual users with think time in this one
// process against nginx on loopback (PLATEAU_BENCH_USERS and
// PLATEAU_BENCH_THINK change the count and the think time), each user with
// its own kept-alive connection (per_user, one open file per user: skipped
// where the limit cannot be raised that far) and with connections: shared
// (a pool as large as the requests in flight at once), and records what
// they cost: the live heap plus goroutine stacks per user once every user has started and made its
// first request (KiB/user), the process's peak RSS over the run
// (peak-RSS-KiB/user, both above the baseline before the run), the request
// rate held and the errors. The users start over ramp_up (30 s), think a
// minute between requests and run for 60 s in all; the run is bounded by its duration, and memory by what it
// measures (no timed assertion: the figures are the result).
//
//	go test -run '^$' -bench BenchmarkUsers -benchtime 1x ./internal/engine
//
// per_user needs one open file per user (it raises the limit when it may)
// and spreads the users over several nginx ports, as one destination port
// offers only the ~28,000 ephemeral ports of the local range.
func BenchmarkUsers(b *testing.B) {
	b.Run("per_user", func(b *testing.B) { benchUsers(b, "per_user") })
	b.Run("shared", func(b *testing.B) { benchUsers(b, "shared") })
}

func benchUsers(b *testing.B, connections string) {
	if raceOn {
		b.Skip("memory per user means nothing under -race")
	}
	users := 100_000
	if v, err := strconv.Atoi(os.Getenv("PLATEAU_BENCH_USERS")); err == nil && v > 0 {
		users = v
	}
	think := time.Minute
	if v, err := time.ParseDuration(os.Getenv("PLATEAU_BENCH_THINK")); err == nil && v > 0 {
		think = v
	}
	const rampUp, duration = 30 * time.Second, 60 * time.Second
	need := uint64(users + 4096)
	if connections == "shared" {
		need = 16 << 10 // connections as many as requests in flight at once
	}
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		b.Fatal(err)
	}
	if rl.Cur < need {
		hard := rl.Max
		rl.Cur, rl.Max = need, max(rl.Max, need)
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			b.Skipf("%d users with connections: %s need %d open files; the limit (%d) cannot be raised (%v): raise ulimit -n, or set PLATEAU_BENCH_USERS", users, connections, need, hard, err)
		}
	}
	// nginx: one worker, every port of the users' workloads, no log.
	ports := (users + 24_999) / 25_000
	var listen strings.Builder
	addrs := make([]string, ports)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addrs[i] = ln.Addr().String()
		ln.Close()
		fmt.Fprintf(&listen, "listen %s backlog=4096;\n", addrs[i])
	}
	ng := nginxtest.Start(b, nginxtest.Config{
		WorkerConnections: users + 1024,
		HTTP:              "access_log off; keepalive_requests 1000000000; keepalive_timeout 300s;",
		Server:            listen.String() + "location / { default_type text/plain; return 200 'ok'; }",
	})

	// One workload per port, the users split evenly.
	var src bytes.Buffer
	fmt.Fprintf(&src, "name: users\ntarget: http://%s\nhttp: {timeout: 30s, connections: %s}\nworkloads:\n", ng.Addr, connections)
	for i, a := range addrs {
		n := users / ports
		if i == 0 {
			n += users % ports
		}
		fmt.Fprintf(&src, "  w%d:\n    scenario:\n      - request: {name: get, url: \"http://%s/\"}\n      - think: %s\n"+
			"    load: {users: %d, ramp_up: %s, duration: %s}\n", i, a, think, n, rampUp, duration)
	}
	dir := b.TempDir()
	pf := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(pf, src.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	p, err := plan.LoadFile(pf, plan.Options{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		b.Fatal(err)
	}

	for i := range b.N {
		runtime.GC()
		base := liveMem()
		baseRSS := procStatus("VmRSS")
		done := make(chan struct{})
		var requests, errs int64
		go func() {
			defer close(done)
			d, _ := enginetest.Run(b, context.Background(), p, filepath.Join(dir, fmt.Sprintf("run%d", i)))
			requests, errs = labelAgg(d, "get")
			for j, e := range d.Total.SortedErrors() {
				if j < 5 {
					b.Logf("errors: %d × %v %d", e.Count, e.Class, e.Status)
				}
			}
			for j, e := range d.Errors {
				if j < 3 {
					b.Logf("error: %+v", e)
				}
			}
		}()
		// Peak RSS: sampled while the load runs (not while the run
		// directory is read back afterwards).
		start := time.Now()
		var peak, live uint64
		steady := start.Add(rampUp + min(think, duration-rampUp-2*time.Second)/2 + time.Second)
		for now := start; now.Before(start.Add(duration)); now = time.Now() {
			peak = max(peak, procStatus("VmRSS"))
			if live == 0 && now.After(steady) {
				// Every user has started and sent its first request,
				// and most think: the steady state.
				runtime.GC()
				live = liveMem()
			}
			time.Sleep(200 * time.Millisecond)
		}
		<-done
		b.ReportMetric(float64(live-base)/float64(users)/1024, "KiB/user")
		b.ReportMetric(float64(peak-baseRSS)/float64(users), "peak-RSS-KiB/user")
		b.ReportMetric(float64(requests)/duration.Seconds(), "req/s")
		b.ReportMetric(float64(errs), "errors")
		if errs > 0 {
			b.Errorf("%d of %d requests failed", errs, requests)
		}
		if want := int64(users); requests < want {
			b.Errorf("%d requests, fewer than the %d users", requests, users)
		}
	}
}

// liveMem is the heap in use plus the goroutine stacks, in bytes.
func liveMem() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}

// procStatus reads a KiB figure (VmRSS, VmHWM) of this process from
// /proc/self/status; 0 where there is none.
func procStatus(field string) uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			v, _ := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return v
		}
	}
	return 0
}
