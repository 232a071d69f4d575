package host

import (
	"context"
	"io"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// TestCollectRealHost samples this machine twice around known loopback
// traffic and checks the figures hang together.
func TestCollectRealHost(t *testing.T) {
	c, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	var b monitor.Batch
	b.Reset(time.Now(), time.Now())
	if err := c.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	first := toMap(b.Readings())
	if _, ok := first["cpu_user_pct"]; ok {
		t.Errorf("first sample has a rate; it has no previous counters")
	}
	if first["mem_total_bytes"] <= 0 || first["cpus"] < 1 {
		t.Fatalf("mem_total_bytes=%v cpus=%v", first["mem_total_bytes"], first["cpus"])
	}

	// Push a known number of bytes over loopback between the two samples.
	const payload = 4 << 20
	sent := loopbackTraffic(t, payload)
	start := b.Mono
	time.Sleep(200 * time.Millisecond)
	b.Reset(time.Now(), time.Now())
	if err := c.Collect(context.Background(), &b); err != nil {
		t.Fatal(err)
	}
	dt := b.Mono.Sub(start).Seconds()
	m := toMap(b.Readings())
	sum := m["cpu_user_pct"] + m["cpu_system_pct"] + m["cpu_idle_pct"] + m["cpu_iowait_pct"] + m["cpu_steal_pct"]
	if math.Abs(sum-100) > 0.01 {
		t.Errorf("cpu shares add up to %.3f, want 100", sum)
	}
	if m["mem_used_bytes"]+m["mem_available_bytes"] != m["mem_total_bytes"] {
		t.Errorf("used %v + available %v != total %v", m["mem_used_bytes"], m["mem_available_bytes"], m["mem_total_bytes"])
	}
	lo, ok := m["net_rx_bytes_per_s{iface=lo}"]
	if !ok {
		t.Fatalf("no loopback series; have %v", keys(m))
	}
	if want := float64(sent) / dt; lo < want {
		t.Errorf("lo rx %.0f B/s < %.0f B/s sent over it", lo, want)
	}
	if _, ok := m["load1"]; !ok {
		t.Error("no load1")
	}
	if _, ok := m["disk_read_bytes_per_s"]; !ok {
		t.Error("no disk total")
	}
}

func loopbackTraffic(t *testing.T, n int) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	done := make(chan int64)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			done <- 0
			return
		}
		defer conn.Close()
		got, _ := io.Copy(io.Discard, conn)
		done <- got
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, n)
	if _, err := conn.Write(buf); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	return int(<-done)
}

func toMap(rs []monitor.Reading) map[string]float64 {
	m := map[string]float64{}
	for _, r := range rs {
		m[r.Metric] = r.Value
	}
	return m
}

func keys(m map[string]float64) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

func TestParsers(t *testing.T) {
	t.Parallel()
	stat := "cpu  10 2 30 400 5 6 7 8 0 0\ncpu0 5 1 15 200 2 3 3 4 0 0\ncpu1 5 1 15 200 3 3 4 4 0 0\nintr 1234 5 6\nctxt 999\nprocs_running 3\nprocs_blocked 1\n"
	s, err := parseStat([]byte(stat))
	if err != nil {
		t.Fatal(err)
	}
	if s.cpus != 2 || s.cpu.steal != 8 || s.cpu.total() != 468 || s.intr != 1234 || s.ctxt != 999 || s.running != 3 || s.blocked != 1 {
		t.Errorf("parseStat = %+v", s)
	}
	if _, err := parseStat([]byte("ctxt 1\n")); err == nil {
		t.Error("stat without cpu line accepted")
	}
	disks := map[string]ioCounters{}
	parseDiskstats([]byte("   7       0 loop0 9 0 9 0 0 0 0 0 0 0 0\n 252 0 vda 10 0 20 0 30 0 40 0 0 0 0\n 252 1 vda1 10 0 20 0 30 0 40 0 0 0 0\n"), disks, nil)
	if len(disks) != 1 || disks["vda"].rxBytes != 20*512 || disks["vda"].txPackets != 30 || disks["vda"].txBytes != 40*512 {
		t.Errorf("parseDiskstats = %+v", disks)
	}
	for name, want := range map[string]bool{"sda": false, "sda1": true, "nvme0n1": false, "nvme0n1p2": true, "dm-0": false, "md0": false} {
		if got := isPartition([]byte(name)); got != want {
			t.Errorf("isPartition(%s) = %v", name, got)
		}
	}
}

func BenchmarkCollect(b *testing.B) {
	c, err := New("")
	if err != nil {
		b.Fatal(err)
	}
	var batch monitor.Batch
	b.ReportAllocs()
	for b.Loop() {
		batch.Reset(time.Now(), time.Now())
		if err := c.Collect(context.Background(), &batch); err != nil {
			b.Fatal(err)
		}
	}
}
