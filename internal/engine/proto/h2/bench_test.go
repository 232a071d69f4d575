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

// startNginx runs nginx (one worker) serving HTTP/2 over TLS with a
// certificate made here; it returns the address.
func startNginx(b *testing.B) string {
	return nginxtest.Start(b, nginxtest.Config{TLS: true,
		HTTP:   "access_log off;\n  http2_max_concurrent_streams 128;\n  keepalive_requests 10000000;",
		Server: "location / { return 200 'ok'; }"}).Addr
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkH2VsH2load: 50 streams on one HTTP/2 connection to nginx,
// plateau's client (GOMAXPROCS 1) against h2load -c1 -m50 (one thread).
// Reports req/s and CPU µs per request of both.
func BenchmarkH2VsH2load(b *testing.B) {
	addr := startNginx(b)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := NewPool(Config{InsecureSkipVerify: true, MaxConcurrentStreams: 50, MaxBody: 64})
	defer p.Close()
	url := "https://" + addr + "/"
	var next sync.WaitGroup
	n := b.N
	per := (n + 49) / 50
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
	rps, _ := strconv.ParseFloat(string(m[3]), 64)
	ps := cmd.ProcessState
	hcpu := ps.UserTime() + ps.SystemTime()
	b.ReportMetric(rps, "h2load-req/s")
	b.ReportMetric(float64(hcpu.Microseconds())/float64(reqs), "h2load-cpu-µs/req")
}
