package promscrape

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

// startExporter starts Debian's prometheus-node-exporter with the
// loopback device's counters on (node_exporter leaves lo out by default;
// the tests send known traffic over it).
func startExporter(t *testing.T) (string, *monitortest.Process) {
	t.Helper()
	return monitortest.StartNodeExporter(t, "--collector.netdev.device-exclude=^$")
}

func TestNodeExporter(t *testing.T) {
	addr, _ := startExporter(t)
	url := "http://" + addr + "/metrics"
	c, err := New(monitor.TargetConfig{URL: url, Series: []string{
		"node_cpu_seconds_total",
		`node_network_receive_bytes_total{device="lo"}`,
		"node_memory_MemAvailable_bytes",
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s0 := time.Now()
	first, t0 := monitortest.Sample(t, c)
	d0 := time.Since(s0)
	for k := range first {
		if strings.HasSuffix(strings.SplitN(k, "{", 2)[0], "_per_s") {
			t.Errorf("rate %s on the first scrape", k)
		}
	}
	const payload = 4 << 20
	sent := loopback(t, payload)
	time.Sleep(300 * time.Millisecond)
	s1 := time.Now()
	m, t1 := monitortest.Sample(t, c)
	d1 := time.Since(s1)
	dt := t1.Sub(t0).Seconds()

	lo := m["node_network_receive_bytes_total_per_s{device=lo}"]
	if lo*dt < float64(sent) {
		t.Errorf("lo receive rate %.0f B/s × %.2f s < %d bytes sent", lo, dt, sent)
	}
	// Every CPU spends exactly one second per second across its modes.
	var cpuSum float64
	cpus := map[string]bool{}
	for k, v := range m {
		if strings.HasPrefix(k, "node_cpu_seconds_total_per_s{") {
			cpuSum += v
			cpus[strings.SplitN(strings.SplitN(k, "cpu=", 2)[1], ",", 2)[0]] = true
		}
	}
	if len(cpus) != runtime.NumCPU() {
		t.Errorf("%d cpus in the series, machine has %d", len(cpus), runtime.NumCPU())
	}
	// The exporter reads /proc/stat somewhere within each scrape, the rate
	// divides by the scrapes' start times: on a loaded machine the counters'
	// own span differs from dt by up to both scrapes' durations.
	slack := max(0.2, (d0+d1).Seconds()/dt+0.05)
	if n := float64(len(cpus)); math.Abs(cpuSum-n) > slack*n {
		t.Errorf("cpu seconds per second sum to %.2f over %v cpus (scrapes took %v and %v over %.2f s)", cpuSum, n, d0, d1, dt)
	}
	avail := m["node_memory_MemAvailable_bytes"]
	if want := memAvailable(t); math.Abs(avail-want) > 0.1*want {
		t.Errorf("MemAvailable %v, /proc/meminfo says %v", avail, want)
	}
	for k := range m {
		if strings.HasPrefix(k, "node_network_receive_bytes_total_per_s{") && k != "node_network_receive_bytes_total_per_s{device=lo}" {
			t.Errorf("selector leaked %s", k)
		}
	}
}

// TestSessionLossAndResume runs the exporter under a session, kills it and
// starts it again on the same port.
func TestSessionLossAndResume(t *testing.T) {
	addr, ex := startExporter(t)
	dir := t.TempDir()
	s, err := monitor.Start(context.Background(), monitor.Options{
		Dir: dir, Interval: 200 * time.Millisecond,
		Targets: []monitor.TargetConfig{
			{Kind: "prometheus", Name: "node", URL: "http://" + addr + "/metrics", Series: []string{"node_cpu_seconds_total", "node_load1"}},
			{Kind: "prometheus", Name: "closed", URL: "http://127.0.0.1:1/metrics"},
		},
		Kinds: map[string]monitor.Kind{"prometheus": Kind()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if st := s.Status(); !st[0].Started || st[1].Started || st[1].Error == "" {
		t.Fatalf("status %+v", st)
	}
	time.Sleep(600 * time.Millisecond)
	ex.Stop()
	waitFor(t, "gap", func() bool { return len(s.Status()[0].Gaps) == 1 })
	ex.Restart(t)
	waitFor(t, "resume", func() bool { return s.Status()[0].Gaps[0].End != nil })
	time.Sleep(600 * time.Millisecond)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	st := s.Status()[0]
	t.Logf("own cost: %.3f ms CPU per scrape over %d scrapes (sampling thread)", st.CPUSeconds/float64(st.Samples)*1e3, st.Samples)
	series, status, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(status[0].Gaps) != 1 || status[0].Gaps[0].End == nil {
		t.Errorf("gaps read back %+v", status[0].Gaps)
	}
	var load, rates int
	for _, s := range series {
		switch {
		case s.Metric == "node_load1":
			load = len(s.Points)
		case strings.HasPrefix(s.Metric, "node_cpu_seconds_total_per_s{"):
			rates++
		}
	}
	if load < 5 || rates == 0 {
		t.Errorf("%d node_load1 points, %d cpu rate series", load, rates)
	}
}

// TestCounterReset serves a counter that goes down (an exporter restart)
// through a real HTTP server and the real parser.
func TestCounterReset(t *testing.T) {
	t.Parallel()
	var value atomic.Int64
	value.Store(1000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "# TYPE reqs_total counter\nreqs_total{path=\"/a b\",code=\"200\"} %d\n", value.Load())
		fmt.Fprint(w, "# TYPE temp gauge\ntemp 21.5\n")
		fmt.Fprint(w, "# TYPE lat_seconds histogram\nlat_seconds_bucket{le=\"0.1\"} 3\nlat_seconds_bucket{le=\"+Inf\"} 4\nlat_seconds_sum 0.5\nlat_seconds_count 4\n")
	}))
	defer srv.Close()
	c, err := New(monitor.TargetConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	name := "reqs_total_per_s{code=200,path=/a_b}"
	var b monitor.Batch
	t0 := time.Now()
	b.Reset(t0, t0)
	if err := c.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	value.Store(1500)
	b.Reset(t0, t0.Add(2*time.Second))
	if err := c.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range b.Readings() {
		got[r.Metric] = r.Value
	}
	if got[name] != 250 {
		t.Errorf("%s = %v, want 250 (500 in 2 s); have %v", name, got[name], got)
	}
	if got["temp"] != 21.5 {
		t.Errorf("gauge temp = %v", got["temp"])
	}
	if _, ok := got["lat_seconds_bucket_per_s{le=+Inf}"]; !ok {
		t.Errorf("no +Inf bucket rate in %v", got)
	}
	value.Store(40) // reset: the counter restarted and counted 40
	b.Reset(t0, t0.Add(4*time.Second))
	if err := c.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.Readings() {
		if r.Metric == name && r.Value != 20 {
			t.Errorf("after reset %s = %v, want 20", name, r.Value)
		}
	}
}

func TestParseSelector(t *testing.T) {
	t.Parallel()
	lbl := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, tc := range []struct {
		sel    string
		name   string
		labels map[string]string
		want   bool
	}{
		{"node_cpu_seconds_total", "node_cpu_seconds_total", nil, true},
		{"node_cpu_seconds_total", "node_load1", nil, false},
		{`node_cpu_seconds_total{mode="idle"}`, "node_cpu_seconds_total", map[string]string{"mode": "idle"}, true},
		{`node_cpu_seconds_total{mode!="idle", cpu=~"0|1"}`, "node_cpu_seconds_total", map[string]string{"mode": "user", "cpu": "1"}, true},
		{`node_cpu_seconds_total{mode!="idle", cpu=~"0|1"}`, "node_cpu_seconds_total", map[string]string{"mode": "user", "cpu": "10"}, false},
		{`{__name__=~"node_load.*"}`, "node_load5", nil, true},
		{`x{missing=""}`, "x", nil, true},
		{`x{l!~"a.*"}`, "x", map[string]string{"l": "abc"}, false},
	} {
		s, err := ParseSelector(tc.sel)
		if err != nil {
			t.Errorf("%s: %v", tc.sel, err)
			continue
		}
		if got := s.Matches(tc.name, lbl(tc.labels)); got != tc.want {
			t.Errorf("%s on %s%v = %v", tc.sel, tc.name, tc.labels, got)
		}
	}
	for _, bad := range []string{"", "x{", `x{a=b}`, `x{a~"b"}`, `{a="b"}`, `x{a=~"("}`, "1x", `x{a="b" c="d"}`} {
		if _, err := ParseSelector(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := Validate(monitor.TargetConfig{URL: "http://127.0.0.1:9100/metrics", Series: []string{"up"}}); err != nil {
		t.Error(err)
	}
	for _, cfg := range []monitor.TargetConfig{{}, {URL: "127.0.0.1:9100"}, {URL: "ftp://h/x"}, {URL: "http://h/m", Series: []string{"a{"}}} {
		if Validate(cfg) == nil {
			t.Errorf("%+v accepted", cfg)
		}
	}
}

func loopback(t *testing.T, n int) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			got <- 0
			return
		}
		defer conn.Close()
		k, _ := io.Copy(io.Discard, conn)
		got <- k
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(make([]byte, n)); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	return int(<-got)
}

func memAvailable(t *testing.T) float64 {
	t.Helper()
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb * 1024
		}
	}
	t.Fatal("no MemAvailable")
	return 0
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestSeveralEndpoints scrapes two real node exporters as one target: every
// series keeps its labels and gains the instance of its endpoint, and
// counters become rates per instance.
func TestSeveralEndpoints(t *testing.T) {
	a, b := monitortest.NodeExporter(t), monitortest.NodeExporter(t)
	c, err := New(monitor.TargetConfig{Endpoints: []string{a, b}, Series: []string{
		`node_cpu_seconds_total{mode="idle"}`, "node_memory_MemTotal_bytes", `node_load1{instance="` + b + `"}`}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	monitortest.Sample(t, c)
	time.Sleep(1100 * time.Millisecond)
	m, _ := monitortest.Sample(t, c)
	for _, inst := range []string{a, b} {
		if m["node_memory_MemTotal_bytes{instance="+inst+"}"] <= 0 {
			t.Errorf("no memory series for %s: %v", inst, m)
		}
		idle, ok := m["node_cpu_seconds_total_per_s{cpu=0,instance="+inst+",mode=idle}"]
		if !ok || idle < 0 || idle > 1.5 {
			t.Errorf("idle rate of cpu 0 on %s: %v (%v)", inst, idle, ok)
		}
	}
	if _, ok := m["node_load1{instance="+b+"}"]; !ok {
		t.Errorf("selector on instance %s did not match", b)
	}
	if _, ok := m["node_load1{instance="+a+"}"]; ok {
		t.Errorf("selector on instance %s matched %s", b, a)
	}
	if err := Validate(monitor.TargetConfig{Endpoints: []string{"ftp://x"}}); err == nil {
		t.Error("ftp endpoint accepted")
	}
}
