package history_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// BenchmarkAdd is `history add` per run: read a run directory's run.json
// and summary.json (four load steps, monitored hosts, JVM and database)
// and store it in an SQLite file. Goal ≤ 100 ms per run
// (docs/performance.md).
func BenchmarkAdd(b *testing.B) {
	dir := runDir(b, reporttest.Options{Monitor: true, Steps: []reporttest.Step{{Users: 7, Seconds: 60}, {Users: 10, Seconds: 60},
		{Users: 14, Seconds: 60}, {Users: 20, Seconds: 60}}})
	s, err := history.Open(context.Background(), filepath.Join(b.TempDir(), "h.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	rows := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := history.FromDir(dir, map[string]string{"release": "r1"})
		if err != nil {
			b.Fatal(err)
		}
		r.ID = fmt.Sprintf("bench-%d", i)
		rows = len(r.Labels) + len(r.Resources) + len(r.SLA) + len(r.Phases)
		if added, err := s.Add(context.Background(), r, time.Now()); err != nil || !added {
			b.Fatal(added, err)
		}
	}
	b.ReportMetric(float64(rows), "rows/run")
}

// syntheticRuns makes n runs of 25 labels, so 100 whole-run series (p95,
// mean, error %, throughput per label), with a step in the first label at
// the middle run.
func syntheticRuns(n, labels int) []*history.Run {
	rng := rand.New(rand.NewPCG(1, 1))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := make([]*history.Run, n)
	for i := range runs {
		r := &history.Run{ID: fmt.Sprintf("%032x", i), Plan: "bench", Start: t0.Add(time.Duration(i) * time.Hour),
			Verdict: "passed", Tags: map[string]string{"release": fmt.Sprint("r", i/100)}, Context: map[string]string{}}
		for l := range labels {
			base := 50 + float64(l)
			if l == 0 && i >= n/2 {
				base *= 1.3
			}
			p95 := base * (1 + rng.NormFloat64()*0.02)
			r.Labels = append(r.Labels, history.LabelRow{Label: fmt.Sprintf("label %02d", l), Samples: 10000, Errors: int64(rng.IntN(10)),
				ErrorPct: rng.Float64() * 0.1, MeanMs: p95 / 2, P95Ms: p95, ThroughputRPS: 100 * (1 + rng.NormFloat64()*0.01)})
		}
		runs[i] = r
	}
	return runs
}

// BenchmarkChangePoints: change points and the latest run's judgement
// over 1,000 runs × 100 series. Goal ≤ 1 s.
func BenchmarkChangePoints(b *testing.B) {
	runs := syntheticRuns(1000, 25)
	b.ReportAllocs()
	b.ResetTimer()
	var a *history.Analysis
	for i := 0; i < b.N; i++ {
		var err error
		if a, err = history.Analyze(runs, history.Options{Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if len(a.Series) != 100 {
		b.Fatalf("%d series, want 100", len(a.Series))
	}
	b.ReportMetric(float64(len(a.Series)), "series")
}

// BenchmarkAddAndRefresh is what `plateau run --history` costs on a store
// of 1,000 runs of one plan (100 series): add the run, then recompute and
// store the plan's change points over all its runs.
func BenchmarkAddAndRefresh(b *testing.B) {
	ctx := context.Background()
	s, err := history.Open(ctx, filepath.Join(b.TempDir(), "h.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	runs := syntheticRuns(1000+b.N, 25)
	for _, r := range runs[:1000] {
		if _, err := s.Add(ctx, r, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := s.RefreshChangePoints(ctx, "bench"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	stored := 0
	for i := 0; i < b.N; i++ {
		if _, err := s.Add(ctx, runs[1000+i], time.Now()); err != nil {
			b.Fatal(err)
		}
		done, err := s.RefreshChangePoints(ctx, "bench")
		if err != nil || len(done) != 1 {
			b.Fatal(done, err)
		}
		stored = done["bench"]
	}
	b.ReportMetric(float64(stored), "changepoints")
}
