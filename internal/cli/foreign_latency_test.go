package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/output/promtest"
)

// BenchmarkLiveLatency measures issue 36's second performance goal: how
// long after a foreign tool writes a request's row to its results file
// the request is counted on /metrics (the live panel is fed by the same
// publication, once a second). The tool runs at its peak against a
// loopback server — k6 with 8 VUs and no think time on a server answering
// "ok", JMeter with 8 threads and no timers on the importer tests' plan —
// and plateau with --listen; a watcher reads the file's new bytes and
// scrapes /metrics every 20 ms. For each reading of the file, the latency
// is the time until a scrape counts at least the requests the file then
// held; ms-p50, ms-p99 and ms-max are over the readings of the run (a
// reading is up to 20 ms after the tool's write, a scrape up to 20 ms
// after the publication). Run with
//
//	go test ./internal/cli -run '^$' -bench LiveLatency -benchtime 1x
func BenchmarkLiveLatency(b *testing.B) {
	b.Run("k6", func(b *testing.B) {
		_, ok := k6Installed()
		foreignTool(b, "k6", ok)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) }))
		defer srv.Close()
		script := filepath.Join(b.TempDir(), "peak.js")
		if err := os.WriteFile(script, []byte("import http from 'k6/http';\nexport default function () { http.get(`${__ENV.BASE}/`); }\n"), 0o644); err != nil {
			b.Fatal(err)
		}
		row := []byte("\nhttp_req_duration,")
		reportLatencies(b, func() []time.Duration {
			return liveLatencies(b, []string{script, "-e", "BASE=" + srv.URL, "--set", "users=8", "--set", "duration=10s"},
				"k6.csv", func(data []byte) int64 { return int64(bytes.Count(data, row)) })
		})
	})
	b.Run("jmeter", func(b *testing.B) {
		_, ok := jmeterInstalled()
		foreignTool(b, "JMeter", ok)
		srv := shopServer()
		defer srv.Close()
		port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
		plan := filepath.Join(b.TempDir(), "plan.jmx")
		text, err := os.ReadFile("../importer/jtl/testdata/plan.jmx")
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(plan, text, 0o644); err != nil {
			b.Fatal(err)
		}
		// Requests: the JTL's lines but the header and the Transaction
		// Controller's samples.
		tx := []byte("Number of samples in transaction")
		reportLatencies(b, func() []time.Duration {
			return liveLatencies(b, []string{plan, "-J", "port=" + port, "--set", "users=8", "--set", "duration=15"},
				"results.jtl", func(data []byte) int64 {
					return int64(bytes.Count(data, []byte{'\n'}) - bytes.Count(data, []byte("\ntimeStamp,")) - bytes.Count(data, tx))
				})
		})
	})
}

// reportLatencies runs run once per iteration and reports the quantiles
// of the latencies it returns.
func reportLatencies(b *testing.B, run func() []time.Duration) {
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, run()...)
	}
	if len(lat) < 10 {
		b.Fatalf("%d readings of the tool's file", len(lat))
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(ms(0.5), "ms-p50")
	b.ReportMetric(ms(0.99), "ms-p99")
	b.ReportMetric(ms(1), "ms-max")
	b.ReportMetric(float64(len(lat)), "readings")
}

// liveLatencies runs args (a script or plan and its settings) under
// plateau and returns, for each reading of the tool's results file (name
// in tool/) while plateau still ran, how long until /metrics counted the
// requests in it; count counts them in whole lines, each after a line end.
func liveLatencies(b *testing.B, args []string, name string, count func(data []byte) int64) []time.Duration {
	addr := promtest.FreePort(b)
	dir := filepath.Join(b.TempDir(), "run")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	done := make(chan runOutcome, 1)
	go func() {
		var o runOutcome
		o.code, o.stdout, o.stderr = runCLICtx(ctx, append(append([]string{"run"}, args...), "--listen", addr, "-o", dir, "-q")...)
		done <- o
	}()
	type reading struct {
		at time.Time
		n  int64
	}
	var written []reading // the file's request count, when it grew
	var scraped []reading // /metrics' count, when it grew
	var f *os.File
	var pending []byte // bytes after the last line end read
	var rows int64
	buf := make([]byte, 4<<20)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case o := <-done:
			if f != nil {
				f.Close()
			}
			if o.code != ExitOK {
				b.Fatalf("exit %d\n%s\n%s", o.code, o.stdout, o.stderr)
			}
			var out []time.Duration
			j := 0
			for _, w := range written {
				for j < len(scraped) && (scraped[j].at.Before(w.at) || scraped[j].n < w.n) {
					j++
				}
				if j == len(scraped) {
					break // counted only in the final publication, after the run
				}
				out = append(out, scraped[j].at.Sub(w.at))
			}
			return out
		case <-tick.C:
		}
		if f == nil {
			var err error
			if f, err = os.Open(filepath.Join(dir, "tool", name)); err != nil {
				continue
			}
			pending = append(pending, '\n') // the first row has no line end before it
		}
		for {
			n, err := f.Read(buf)
			if n > 0 {
				pending = append(pending, buf[:n]...)
				end := bytes.LastIndexByte(pending, '\n')
				rows += count(pending[:end])
				// Keep the last line end: a row's count starts with it.
				pending = append(pending[:0], pending[end:]...)
			}
			if err == io.EOF || n == 0 {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		now := time.Now()
		if len(written) == 0 || rows > written[len(written)-1].n {
			written = append(written, reading{now, rows})
		}
		if v, ok := scrapeRequests(addr); ok && (len(scraped) == 0 || int64(v) > scraped[len(scraped)-1].n) {
			scraped = append(scraped, reading{time.Now(), int64(v)})
		}
	}
}
