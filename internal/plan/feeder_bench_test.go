package plan

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
)

// peakRSS resets the process's peak resident set (Linux: clear_refs 5)
// when reset, else returns it in MB (VmHWM); 0 where /proc has neither.
func peakRSS(reset bool) float64 {
	if reset {
		_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
		return 0
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range bytes.Split(b, []byte("\n")) {
		if f := bytes.Fields(l); len(f) == 3 && string(f[0]) == "VmHWM:" {
			kb, _ := strconv.ParseFloat(string(f[1]), 64)
			return kb / 1024
		}
	}
	return 0
}

// BenchmarkFeeder200MB loads a plan whose CSV feeder is a generated 200 MB
// file (2.9 M rows), indexed (the default above 16 MiB) and, for
// comparison, read into memory as every feeder was before; it reports the
// process's peak RSS during the load (docs/performance.md). Run with
// -benchtime=1x: one load is the figure.
func BenchmarkFeeder200MB(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "big.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("id,name,email,city\n")
	var n int64
	for i := 0; n < 200<<20; i++ {
		k, _ := fmt.Fprintf(w, "%010d,user %d,user%d@example.com,\"Copenhagen, DK\"\n", i, i, i)
		n += int64(k)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		name  string
		inMem int64
	}{{"indexed", 0}, {"in-memory", 1 << 40}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var rss float64
			for b.Loop() {
				runtime.GC()
				peakRSS(true)
				p, err := Parse("f.yaml", []byte(feederPlan("big.csv", ", order: random")), dir, Options{FeederInMemory: c.inMem})
				if err != nil {
					b.Fatal(err)
				}
				rss = max(rss, peakRSS(false))
				if p.Data["d"].Len() < 2_000_000 {
					b.Fatalf("%d rows", p.Data["d"].Len())
				}
				runtime.KeepAlive(p)
			}
			b.ReportMetric(rss, "peak-RSS-MB")
		})
	}
}

// BenchmarkIndexedRow is the cost of one row of an indexed feeder, random
// order (one pread and a split), against a row from memory.
func BenchmarkIndexedRow(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "d.csv")
	var buf bytes.Buffer
	buf.WriteString("id,name,email\n")
	for i := range 100000 {
		fmt.Fprintf(&buf, "%010d,user %d,user%d@example.com\n", i, i, i)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		inMem int64
	}{{"indexed", 1}, {"in-memory", 0}} {
		b.Run(c.name, func(b *testing.B) {
			p, err := Parse("f.yaml", []byte(feederPlan("d.csv", "")), dir, Options{FeederInMemory: c.inMem})
			if err != nil {
				b.Fatal(err)
			}
			f := p.Data["d"]
			b.ReportAllocs()
			i := int64(0)
			for b.Loop() {
				i = (i*7919 + 1) % f.Len()
				if _, err := f.Row(i); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
