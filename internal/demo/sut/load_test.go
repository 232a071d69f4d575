package sut

import (
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestStackLoad drives the whole stack (default external latencies, two
// backs) at a paced 50 requests/s and checks that every request is served
// with at least the external calls' latency; it reports the throughput,
// the latency and the CPU the stack and this client used together.
func TestStackLoad(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("3 s paced load; timing bounds do not hold under -race")
	}
	services := DefaultServices()
	for i := range services {
		services[i].FailurePercent = 0 // keep the error assertion exact
	}
	st := startStack(t, stackOpts{backs: 2, patients: 10000, services: services})
	tok := getToken(t, st.front.URL)
	const (
		rate = 50
		dur  = 3 * time.Second
	)
	n := int(rate * dur / time.Second)
	cprs := CPRs(DefaultSeed, n)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()

	var (
		mu       sync.Mutex
		total    time.Duration
		maxLat   time.Duration
		failures int
		first    time.Time // first and last completion
		last     time.Time
		wg       sync.WaitGroup
	)
	cpu0 := cpuTime(t)
	start := time.Now()
	for i := range n {
		// Absolute send times from the start: no drift.
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / rate)))
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodGet, st.front.URL+"/allergies?cpr="+cprs[i], nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			t0 := time.Now()
			resp, err := client.Do(req)
			lat := time.Since(t0)
			ok := err == nil && resp.StatusCode == http.StatusOK
			if err == nil {
				resp.Body.Close()
			}
			done := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if first.IsZero() {
				first = done
			}
			last = done
			total += lat
			maxLat = max(maxLat, lat)
			if !ok {
				failures++
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := cpuTime(t) - cpu0

	mean := total / time.Duration(n)
	// Completions per second between the first and the last completion: the
	// served rate, not diluted by the first request's latency.
	throughput := float64(n-1) / last.Sub(first).Seconds()
	cores := cpu.Seconds() / wall.Seconds()
	t.Logf("%d requests in %v: %.1f req/s, mean %v, max %v, %d failures; CPU %.2f s = %.2f cores (%.2f ms per request, stack + client)",
		n, wall.Round(time.Millisecond), throughput, mean.Round(time.Millisecond), maxLat.Round(time.Millisecond),
		failures, cpu.Seconds(), cores, cpu.Seconds()*1000/float64(n))
	// What the stack counts is asserted; how fast it went on a machine
	// other work shares is reported above, not judged (a loaded machine
	// put the mean at 254 ms once, past a 250 ms bound).
	if failures > 0 {
		t.Errorf("%d of %d requests failed", failures, n)
	}
	// Three sequential calls with medians 25, 35 and 40 ms average about
	// 115 ms: the external calls' own waits are a floor no load lowers.
	if mean < 80*time.Millisecond {
		t.Errorf("mean latency %v, below the 80 ms the external calls take", mean)
	}
}

// cpuTime is this process's user + system CPU time so far.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
