package report

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// writeMemory writes a 30-minute run whose host's memory is flat at 3 GB
// with the given noise (bytes, one reading a second).
func writeMemory(t *testing.T, noise float64) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.WriteLarge(dir, reporttest.Large{Duration: 30 * time.Minute, Rate: 20, Labels: 2, Monitor: true}); err != nil {
		t.Fatal(err)
	}
	// Only the host, its memory alone.
	events := `{"time":"` + reporttest.Start.Format(time.RFC3339Nano) + `","target":"app-host","kind":"host","event":"started","file":"app-host.csv","interval_s":1}` + "\n"
	mdir := filepath.Join(dir, mondata.SubDir)
	if err := os.RemoveAll(mdir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mdir, mondata.EventsFile), []byte(events), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(mdir, "app-host.csv"))
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	bw.WriteString(mondata.CSVHeader)
	rng := rand.New(rand.NewPCG(5, 5))
	for s := range 30 * 60 {
		ts := reporttest.Start.Add(time.Duration(s) * time.Second).UTC().Format("2006-01-02T15:04:05.000Z07:00")
		fmt.Fprintf(bw, "%s,app-host,host,mem_used_bytes,bytes,%.0f\n", ts, 3e9+noise*rng.NormFloat64())
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestMemoryNeedsEnoughData: memory whose trend interval holds both no
// growth and a growth of 2 % over the run is "not enough data to judge",
// said once with its numbers, and never "handled well: no leak signal";
// the same memory with little noise is stable.
func TestMemoryNeedsEnoughData(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		noise float64
		want  trend.Verdict
	}{{"noisy", 2e8, trend.Unknown}, {"quiet", 2e6, trend.Stable}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := writeMemory(t, tc.noise)
			sum, err := Generate(dir, Options{Now: fixedNow, Formats: []string{"json", "md"}})
			if err != nil {
				t.Fatal(err)
			}
			if len(sum.Trends.Memory) != 1 {
				t.Fatalf("%d memory trends, want the host's", len(sum.Trends.Memory))
			}
			m := sum.Trends.Memory[0]
			if trend.Verdict(m.Verdict) != tc.want || m.Readings != 1800 || m.SpanS != 1799 || m.AfterGCPoints < trend.MinBaseline {
				t.Fatalf("verdict %s (%s) on %d readings over %v s, %d after-GC points; want %s", m.Verdict, m.Reason, m.Readings, m.SpanS, m.AfterGCPoints, tc.want)
			}
			b, err := os.ReadFile(filepath.Join(dir, "report.md"))
			if err != nil {
				t.Fatal(err)
			}
			md := string(b)
			note := "Not enough data to judge a memory trend for app-host memory used: a growth of "
			switch tc.want {
			case trend.Unknown:
				if strings.Count(md, note) != 1 || strings.Contains(md, "no leak signal") || !strings.Contains(md, "**Memory:** not enough data to judge") {
					t.Errorf("report.md does not say once that the memory trend cannot be judged:\n%s", section(md, "Memory after garbage collection"))
				}
				// The note's interval is the result's own.
				lo := 100 * m.Result.CILow * m.Result.Span.Hours() / m.Result.Mean
				minus := func(v float64) string { return strings.Replace(pct(v), "-", "−", 1) }
				if want := note + minus(lo) + " … " + minus(m.Result.GrowthHighPct); !strings.Contains(md, want) || lo >= 2 || m.Result.GrowthHighPct < 2 {
					t.Errorf("report.md lacks %q (interval %.2f … %.2f %%)", want, lo, m.Result.GrowthHighPct)
				}
			case trend.Stable:
				if strings.Contains(md, "Not enough data to judge a memory trend") || !strings.Contains(md, "no leak signal") || m.Result.GrowthHighPct >= 2 {
					t.Errorf("a quiet flat memory is not stated stable (interval up to %.2f %%):\n%s", m.Result.GrowthHighPct, section(md, "Memory after garbage collection"))
				}
			}
		})
	}
}

// section is the report's text from a heading or caption on, for messages.
func section(md, from string) string {
	if i := strings.Index(md, from); i >= 0 {
		md = md[i:]
	}
	return md[:min(len(md), 2000)]
}
