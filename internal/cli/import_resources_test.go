package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestImportedSystemStatisticsReachReport imports each system-statistics
// format next to a JTL and finds its charts and numbers in the report
// (issue 13 item 9: imported vmstat wrote cpu_user where the report reads
// cpu_user_pct, so the host section was an empty heading and the
// conclusions said "CPU: not measured"; jstat wrote heap_used in KB where
// the chart wants heap_used_bytes). The metric names are the live
// monitors' (monitor.Metric…); this test is what keeps them one naming.
func TestImportedSystemStatisticsReachReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	var vm, js, jtl strings.Builder
	vm.WriteString("procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu----- -----timestamp-----\n")
	vm.WriteString(" r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st                 UTC\n")
	js.WriteString("Timestamp        S0C    S1C    S0U    S1U      EC       EU        OC         OU       MC     MU    CCSC   CCSU   YGC     YGCT    FGC    FGCT     CGC    CGCT     GCT\n")
	for i := range 13 {
		fmt.Fprintf(&vm, " 2  0      0 20436436 108260 3792588    0    0   448  1427 1354 3333 %d  8 %d  2  0 %s\n",
			40+i, 50-i, t0.Add(time.Duration(10*i)*time.Second).Format("2006-01-02 15:04:05"))
		fmt.Fprintf(&js, "%10.1f 0.0 4096.0 0.0 4096.0 61440.0 %.1f 196608.0 %.1f 30000.0 29000.0 4000.0 3500.0 %d %.3f 0 0.000 0 0.000 %.3f\n",
			10*float64(i)+5, 20480+float64(i)*1000, 50000+float64(i)*500, i, 0.01*float64(i), 0.01*float64(i))
	}
	jtl.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,bytes,grpThreads,allThreads\n")
	for s := range 120 {
		for k := range 5 {
			fmt.Fprintf(&jtl, "%d,%d,GET /a,200,OK,t 1-1,true,100,5,5\n", t0.UnixMilli()+int64(s*1000+k*100), 20+k)
		}
	}
	for name, text := range map[string]string{"cpu.log": vm.String(), "jstat.log": js.String(), "r.jtl": jtl.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := filepath.Join(dir, "run")
	code, _, errOut := runCLI(t, "import", "-o", run, "jmeter:"+filepath.Join(dir, "r.jtl"), "vmstat:host1="+filepath.Join(dir, "cpu.log"),
		"jstat:app="+filepath.Join(dir, "jstat.log")+",jvm-start="+t0.Add(-5*time.Second).Format(time.RFC3339),
		"dockerstats:../importer/dockerstats/testdata/engine-v2-stream.json",
		"dockerstats:tbl=../importer/dockerstats/testdata/cli-table.log,start="+t0.Format(time.RFC3339)+",interval=15s")
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "report", run, "--format", "md"); code != 0 {
		t.Fatalf("report: %d %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	for _, want := range []string{
		"![host1 — CPU]", "![host1 — Memory]", "![host1 — Disk]", // vmstat
		"![app — JVM heap]",               // jstat
		"![lar — CPU]", "![lar — Memory]", // docker Engine stream
		"![tbl — CPU]", "![tbl/cave — Memory]", // docker CLI table at a fixed interval (first container named by the target alone)
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks the chart %s", want)
		}
	}
	// Numbers, computed from the files: vmstat busy = 100 − id − wa over
	// the whole run (id 50−i, wa 2: busy 48+i; the first report, since boot, is left out: mean 54.5, max 60);
	// jstat heap used = (S0U+S1U+EU+OU) KiB.
	for _, re := range []string{
		`\| \*\*Whole run\*\* \| \*\*54\.5\*\* \| \*\*60\*\* \|`,
		`\| \*\*Whole run\*\* \| \*\*[0-9.]+ MiB\*\* \| \*\*90\.4 MiB\*\* \|`,
		`CPU:\*\* never near the ceiling — busiest: host1`,
		`\*\*tbl/cave per phase\*\*`,
	} {
		if !regexp.MustCompile(re).MatchString(md) {
			t.Errorf("report lacks %s", re)
		}
	}
	if regexp.MustCompile(`CPU:?(\*\*)? not measured`).MatchString(md) {
		t.Errorf("report says CPU was not measured")
	}
}
