package importer

import (
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkAggregatorAdd adds a peak run's request samples — one label,
// 17,000 a second, 8 users — to an aggregator that collects k6's figures
// and feeds a foreign run's live outputs, as the k6 import's consumer
// does beside a running k6 (docs/performance.md): the per-request part
// of plateau's CPU there that is not decoding.
func BenchmarkAggregatorAdd(b *testing.B) {
	live := NewLive()
	run, err := NewRun(Options{Dir: filepath.Join(b.TempDir(), "run"), Live: live})
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	agg := run.Requests("k6")
	agg.CollectFigures(K6Figures)
	label := agg.Labels().ID([]byte("GET /"))
	end := time.Now().Add(-time.Hour).UnixNano()
	recs := make([]Rec, 4096)
	b.ReportAllocs()
	cpu0 := procCPU()
	n := 0
	for b.Loop() {
		for i := range recs {
			end += 58_823 // 17,000 a second
			recs[i] = Rec{End: end, Elapsed: int64(200 + (i*7919)%900), Label: label, Status: 200, Threads: 8}
		}
		for i := range recs {
			if err := agg.Add(&recs[i]); err != nil {
				b.Fatal(err)
			}
		}
		n += len(recs)
		if n%(1<<16) == 0 {
			live.Rotate(nil)
		}
	}
	b.ReportMetric(float64((procCPU()-cpu0).Nanoseconds())/float64(n), "cpu-ns/request")
}
