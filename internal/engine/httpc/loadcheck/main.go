//go:build unix

// Command loadcheck measures httpc against a live server the way the peer
// benchmark harness (shared/bench) measures load generators: closed loop
// with N connections, or open loop at a fixed rate, reporting requests per
// second, whole-process CPU per request and latency percentiles. It is a
// development tool for tuning the client, not part of the plateau binary.
//
//	GOMAXPROCS=1 taskset -c 0 go run ./internal/engine/httpc/loadcheck -url http://127.0.0.1:24680/ -c 50 -d 10s
//	GOMAXPROCS=1 taskset -c 0 go run ./internal/engine/httpc/loadcheck -url http://127.0.0.1:24680/ -c 10 -rate 5000
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:24680/", "target URL")
	conns := flag.Int("c", 50, "connections (one client and goroutine each)")
	dur := flag.Duration("d", 10*time.Second, "duration")
	rate := flag.Float64("rate", 0, "total requests per second (0: closed loop)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here")
	nethttp := flag.Bool("nethttp", false, "use net/http's Client instead of httpc (for comparison)")
	flag.Parse()
	if err := run(*url, *conns, *dur, *rate, *cpuprofile, *nethttp); err != nil {
		fmt.Fprintln(os.Stderr, "loadcheck:", err)
		os.Exit(1)
	}
}

// worker is one user's tally; latencies are kept raw because this tool runs
// for seconds, not hours.
type worker struct {
	n, errs int64
	lat     []time.Duration // from the intended start (open loop) or Result.Total
	svc     []time.Duration // Result.Total (open loop only)
}

func run(url string, conns int, dur time.Duration, rate float64, profile string, nethttp bool) error {
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return fmt.Errorf("creating profile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("starting profile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tr := &http.Transport{MaxIdleConnsPerHost: conns}
	defer tr.CloseIdleConnections()
	std := &http.Client{Transport: tr}
	workers := make([]worker, conns)
	capHint := 1 << 20
	if rate > 0 {
		capHint = int(rate*dur.Seconds())/conns + 16
	}
	start := time.Now()
	end := start.Add(dur)
	cpu0 := cpuTime()
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		w.lat = make([]time.Duration, 0, capHint)
		if rate > 0 {
			w.svc = make([]time.Duration, 0, capHint)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := httpc.New(httpc.Config{})
			defer c.Close()
			req := &httpc.Request{URL: url}
			var res httpc.Result
			var interval time.Duration
			next := start
			if rate > 0 {
				interval = time.Duration(float64(conns) / rate * float64(time.Second))
				next = start.Add(interval * time.Duration(i) / time.Duration(conns)) // staggered
			}
			for {
				if rate > 0 {
					if d := time.Until(next); d > 0 {
						time.Sleep(d)
					}
				}
				now := time.Now()
				if now.After(end) {
					return
				}
				if nethttp {
					res.Status, res.Total, res.Err = stdGet(ctx, std, url)
				} else {
					c.Do(ctx, req, &res)
				}
				w.n++
				if res.Err != nil || res.Status != 200 {
					w.errs++
				}
				if rate > 0 {
					w.lat = append(w.lat, time.Since(next)) // from the intended start
					w.svc = append(w.svc, res.Total)
					next = next.Add(interval)
				} else if len(w.lat) < cap(w.lat) {
					w.lat = append(w.lat, res.Total)
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpuRun := cpuTime() - cpu0
	var n, errs int64
	var lat, svc []time.Duration
	for _, w := range workers {
		n, errs = n+w.n, errs+w.errs
		lat = append(lat, w.lat...)
		svc = append(svc, w.svc...)
	}
	slices.Sort(lat)
	slices.Sort(svc)
	pct := func(q float64) time.Duration { return quantile(lat, q) }
	fmt.Printf("requests %d errors %d in %.2fs: %.0f req/s\n", n, errs, elapsed.Seconds(), float64(n)/elapsed.Seconds())
	fmt.Printf("cpu during run %.2fs: %.1f µs/req; whole process so far %.1f µs/req\n",
		cpuRun.Seconds(), float64(cpuRun.Microseconds())/float64(max(n, 1)), float64(cpuTime().Microseconds())/float64(max(n, 1)))
	fmt.Printf("latency p50 %v p90 %v p99 %v max %v\n", pct(0.5), pct(0.9), pct(0.99), pct(1))
	if len(svc) > 0 {
		fmt.Printf("service time (Result.Total) p50 %v p99 %v\n", quantile(svc, 0.5), quantile(svc, 0.99))
	}
	return nil
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stdGet does one GET with net/http, discarding the body.
func stdGet(ctx context.Context, c *http.Client, url string) (int, time.Duration, error) {
	t0 := time.Now()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, time.Since(t0), err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, time.Since(t0), err
}

// quantile reads the q quantile of sorted durations.
func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(q*float64(len(d))))]
}
