package historydoc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/history/historydoc"
)

// BenchmarkReport is `history report` over a store of 1,000 runs × 100
// series (25 labels × p95, mean, error %, throughput, one with a step at
// the middle run) in an SQLite file: read the runs, find the change
// points, build and write history.html, history.md with its 100 charts
// and history.json. Goal ≤ 5 s (docs/performance.md).
func BenchmarkReport(b *testing.B) {
	ctx := context.Background()
	db := filepath.Join(b.TempDir(), "h.db")
	s, err := history.Open(ctx, db)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 1000 {
		r := &history.Run{ID: fmt.Sprintf("%032x", i), Plan: "bench", Start: t0.Add(time.Duration(i) * time.Hour),
			Verdict: "passed", Tags: map[string]string{"release": fmt.Sprint("r", i/100)}, Context: map[string]string{}}
		for l := range 25 {
			base := 50 + float64(l)
			if l == 0 && i >= 500 {
				base *= 1.3
			}
			p95 := base * (1 + rng.NormFloat64()*0.02)
			r.Labels = append(r.Labels, history.LabelRow{Label: fmt.Sprintf("label %02d", l), Samples: 10000, Errors: int64(rng.IntN(10)),
				ErrorPct: rng.Float64() * 0.1, MeanMs: p95 / 2, P95Ms: p95, ThroughputRPS: 100 * (1 + rng.NormFloat64()*0.01)})
		}
		if _, err := s.Add(ctx, r, t0); err != nil {
			b.Fatal(err)
		}
	}
	out := b.TempDir()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		runs, err := s.Runs(ctx, history.Filter{})
		if err != nil {
			b.Fatal(err)
		}
		a, err := history.Analyze(runs, history.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(runs) != 1000 || len(a.Series) != 100 {
			b.Fatalf("%d runs, %d series", len(runs), len(a.Series))
		}
		d := historydoc.Build(a, runs, "plateau bench", t0)
		if _, err := historydoc.Write(out, d, a); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	s.Close()
}
