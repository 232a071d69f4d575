package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestBusiestService: PromQL series per pod with their CPU limits give a
// graded finding naming the busiest pod against its limit and how far below
// the others stayed, and a CPU conclusion.
func TestBusiestService(t *testing.T) {
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{}); err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(dir, monitor.SubDir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	prefix := monitor.LinePrefix("folio", monitor.KindPromQL)
	// Three 60-second steps: pod a's CPU rises to 3.4 of 4 cores in the
	// third; pod b stays at 0.5 of 2 cores.
	for s := 0; s < 180; s += 5 {
		at := reporttest.Start.Add(time.Duration(s) * time.Second)
		a := 1.0
		if s >= 120 {
			a = 3.4
		}
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_cores{pod=mod-circulation}", "cores", a)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_cores{pod=mod-users}", "cores", 0.5)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_limit_cores{pod=mod-circulation}", "cores", 4)
		buf = monitor.AppendLine(buf, at, prefix, "pod_cpu_limit_cores{pod=mod-users}", "cores", 2)
	}
	if err := os.WriteFile(filepath.Join(mdir, "folio.csv"), append([]byte(monitor.CSVHeader), buf...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := strings.ReplaceAll(string(md), `\`, "")
	for _, want := range []string{
		"mod-circulation used 3.40 of 4 cores (85 %) on average in step 3; the other one stayed at or under 25 % of its limit",
		"**CPU:** saturated",
		"folio — pod_cpu_cores per phase",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
}

// TestNetworkFaultsAndRestarts: a node recipe's error rate that rises
// during the run is a warning naming the instance, a drop rate that stays
// zero is not named, and restart counters that did not move give a
// "none" Restarts conclusion; a link's traffic is judged against its speed.
func TestNetworkFaultsAndRestarts(t *testing.T) {
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{}); err != nil {
		t.Fatal(err)
	}
	mdir := filepath.Join(dir, monitor.SubDir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf []byte
	prefix := monitor.LinePrefix("hosts", monitor.KindRecipe)
	// 2 errors a second on 10.0.0.1 from 120 s to 150 s (60 errors); no drops.
	for s := 0; s < 180; s += 5 {
		at := reporttest.Start.Add(time.Duration(s) * time.Second)
		e := 0.0
		if s >= 120 && s < 150 {
			e = 2
		}
		buf = monitor.AppendLine(buf, at, prefix, "net_errors_per_s{instance=10.0.0.1:9100}", "1/s", e)
		buf = monitor.AppendLine(buf, at, prefix, "net_drops_per_s{instance=10.0.0.2:9100}", "1/s", 0)
		buf = monitor.AppendLine(buf, at, prefix, "pod_restarts{container=c,pod=p}", "", 3)
		// 100 MB/s in over a 125 MB/s (1 Gbit/s) link in step 3, 1 MB/s out.
		rx := 1e6
		if s >= 120 {
			rx = 100e6
		}
		buf = monitor.AppendLine(buf, at, prefix, "net_rx_bytes_per_s{instance=10.0.0.1:9100}", "bytes/s", rx)
		buf = monitor.AppendLine(buf, at, prefix, "net_tx_bytes_per_s{instance=10.0.0.1:9100}", "bytes/s", 1e6)
		buf = monitor.AppendLine(buf, at, prefix, "net_speed_bytes_per_s{instance=10.0.0.1:9100}", "bytes/s", 125e6)
	}
	if err := os.WriteFile(filepath.Join(mdir, "hosts.csv"), append([]byte(monitor.CSVHeader), buf...), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	report := strings.ReplaceAll(string(md), `\`, "")
	for _, want := range []string{
		"Network errors on 10.0.0.1:9100 (about 60, at most 2/s) during the run",
		"**Network:** packets lost or refused",
		"was 10.0.0.1:9100 (in), with network 95.4 MiB/s of a 119 MiB/s link (80 %) on average in step 3",
		"Busiest for network: 10.0.0.1:9100 (in) used 95.4 MiB/s of a 119 MiB/s link (80 %) on average in step 3; the other one stayed at or under 0.8 % of its limit",
		"**Restarts:** none — the restart counters of 1 container stayed the same during the run",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if os.Getenv("DUMP") != "" {
		t.Log(report)
	}
	if strings.Contains(report, "10.0.0.2:9100 (about") || strings.Contains(report, "restarted") {
		t.Errorf("report names a fault that did not happen:\n%s", report)
	}
}
