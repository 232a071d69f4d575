package h2

import (
	"context"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/nginxtest"
)

// startNginx runs nginx (one worker) serving `return 200 'ok'` over HTTP/2:
// over TLS with a certificate made here, or cleartext with prior knowledge
// (h2c). It returns the base URL.
func startNginx(tb testing.TB, tls bool) string {
	s := nginxtest.Start(tb, nginxtest.Config{TLS: tls, H2C: !tls,
		HTTP:   "access_log off;\n  http2_max_concurrent_streams 128;\n  keepalive_requests 10000000;",
		Server: "location / { return 200 'ok'; }"})
	if tls {
		return "https://" + s.Addr + "/"
	}
	return "http://" + s.Addr + "/"
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkH2VsH2load: 50 streams on one HTTP/2 connection to nginx, over
// TLS and h2c, plateau's client (GOMAXPROCS 1) against h2load -c1 -m50
// (one thread). Reports req/s and CPU µs per request of both.
func BenchmarkH2VsH2load(b *testing.B) {
	for _, tls := range []bool{true, false} {
		name := map[bool]string{true: "tls", false: "h2c"}[tls]
		b.Run(name, func(b *testing.B) { benchVsH2load(b, startNginx(b, tls)) })
	}
}

func benchVsH2load(b *testing.B, url string) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := NewPool(Config{InsecureSkipVerify: true, MaxConcurrentStreams: 50, MaxBody: 64})
	defer p.Close()
	var next sync.WaitGroup
	per := (b.N + 49) / 50
	b.ReportAllocs()
	b.ResetTimer()
	cpu0, t0 := cpuTime(), time.Now()
	for range 50 {
		next.Add(1)
		go func() {
			defer next.Done()
			c := NewClient(p, nil)
			req := httpc.Request{URL: url}
			var res httpc.Result
			for range per {
				if err := c.Do(context.Background(), &req, &res); err != nil || res.Status != 200 {
					b.Error(err, res.Status)
					return
				}
			}
		}()
	}
	next.Wait()
	el, cpu := time.Since(t0), cpuTime()-cpu0
	b.StopTimer()
	total := float64(per * 50)
	b.ReportMetric(total/el.Seconds(), "req/s")
	b.ReportMetric(float64(cpu.Microseconds())/total, "cpu-µs/req")
	if p.Conns() != 1 {
		b.Fatalf("%d connections, want 1", p.Conns())
	}
	h2load, err := exec.LookPath("h2load")
	if err != nil {
		b.Logf("h2load not installed (internal/engine/proto/h2/testdata/install-deps.sh): no peer figure")
		return
	}
	reqs := max(int(total), 1000)
	cmd := exec.Command(h2load, "-n", strconv.Itoa(reqs), "-c", "1", "-m", "50", "-t", "1", url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("h2load: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`finished in ([0-9.]+)(m?s), ([0-9.]+) req/s`).FindSubmatch(out)
	if m == nil {
		b.Fatalf("h2load output not understood:\n%s", out)
	}
	if ok := regexp.MustCompile(`requests: \d+ total, \d+ started, \d+ done, (\d+) succeeded`).FindSubmatch(out); ok == nil || string(ok[1]) != strconv.Itoa(reqs) {
		b.Fatalf("h2load did not succeed on every request:\n%s", out)
	}
	rps, _ := strconv.ParseFloat(string(m[3]), 64)
	ps := cmd.ProcessState
	hcpu := ps.UserTime() + ps.SystemTime()
	b.ReportMetric(rps, "h2load-req/s")
	b.ReportMetric(float64(hcpu.Microseconds())/float64(reqs), "h2load-cpu-µs/req")
}

// BenchmarkH2Do is one user sending requests one after the other on a
// kept-alive HTTP/2 connection to nginx (h2c): the client's cost per
// request without concurrency, and its allocations.
func BenchmarkH2Do(b *testing.B) {
	url := startNginx(b, false)
	p := NewPool(Config{MaxBody: 64})
	defer p.Close()
	c := NewClient(p, nil)
	req := httpc.Request{URL: url}
	var res httpc.Result
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Do(context.Background(), &req, &res); err != nil || res.Status != 200 {
			b.Fatal(err, res.Status)
		}
	}
}
