package jtl

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

type labelTotals struct{ count, errors, sum, min, max int64 }

// intervalTotals sums a run directory's interval records per label.
func intervalTotals(t *testing.T, dir string) map[string]labelTotals {
	t.Helper()
	out := map[string]labelTotals{}
	err := rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
		if r.Label == "" {
			return nil
		}
		k := r.Label
		if r.Tx {
			k = "tx:" + k
		}
		x, ok := out[k]
		if !ok {
			x.min = r.MinUs
		}
		x.count += r.Count
		x.errors += r.Errors
		x.sum += r.SumUs
		x.min = min(x.min, r.MinUs)
		x.max = max(x.max, r.MaxUs)
		out[k] = x
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFollowWhileWritten imports a JMeter JTL while it is being written,
// in pieces cut anywhere (mid-line included) with pauses between them, as
// JMeter writes its results during a run: the run directory equals an
// import of the finished file, and the live collector saw every sample
// exactly once, as it was read.
func TestFollowWhileWritten(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(filepath.Join(fixtures, "results.jtl"))
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	path := filepath.Join(tmp, "results.jtl")
	done := make(chan struct{})
	rng := rand.New(rand.NewPCG(36, 1))
	go func() {
		defer close(done)
		time.Sleep(50 * time.Millisecond) // the file does not exist yet when the import starts
		f, err := os.Create(path)
		if err != nil {
			t.Error(err)
			return
		}
		defer f.Close()
		for b := src; len(b) > 0; {
			n := min(len(b), 1+rng.IntN(6000))
			if _, err := f.Write(b[:n]); err != nil {
				t.Error(err)
				return
			}
			b = b[n:]
			if rng.IntN(3) == 0 {
				time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
			}
		}
	}()
	live := importer.NewLive()
	liveDir := filepath.Join(tmp, "followed")
	run, err := importer.NewRun(importer.Options{Dir: liveDir, Live: live})
	if err != nil {
		t.Fatal(err)
	}
	// Rotations while the import runs, as the CLI does once a second.
	stop := make(chan struct{})
	rotated := make(chan map[string]labelTotals)
	go func() {
		sum := map[string]labelTotals{}
		var iv *metrics.Interval
		for {
			select {
			case <-stop:
				iv, _ = live.Rotate(iv)
				addLive(sum, iv)
				rotated <- sum
				return
			case <-time.After(20 * time.Millisecond):
				iv, _ = live.Rotate(iv)
				addLive(sum, iv)
			}
		}
	}()
	ierr := New(Config{Path: path, ChunkSize: 4096, Follow: done}).Import(context.Background(), run)
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	close(stop)
	liveSum := <-rotated
	if ierr != nil {
		t.Fatal(ierr)
	}
	whole := filepath.Join(tmp, "whole.jtl")
	if err := os.WriteFile(whole, src, 0o644); err != nil {
		t.Fatal(err)
	}
	plainDir := filepath.Join(tmp, "plain")
	prun, err := importer.NewRun(importer.Options{Dir: plainDir})
	if err != nil {
		t.Fatal(err)
	}
	if err := New(Config{Path: whole}).Import(context.Background(), prun); err != nil {
		t.Fatal(err)
	}
	if err := prun.Close(); err != nil {
		t.Fatal(err)
	}
	got, want := intervalTotals(t, liveDir), intervalTotals(t, plainDir)
	if len(want) < 3 {
		t.Fatalf("fixture has %d labels", len(want))
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: followed %+v, whole file %+v", k, got[k], w)
		}
		if l := liveSum[k]; l != w {
			t.Errorf("%s: live %+v, whole file %+v", k, l, w)
		}
	}
	if len(got) != len(want) || len(liveSum) != len(want) {
		t.Errorf("labels: followed %d, live %d, whole file %d", len(got), len(liveSum), len(want))
	}
}

func addLive(sum map[string]labelTotals, iv *metrics.Interval) {
	for k, a := range iv.Aggs {
		if a.Count == 0 && a.Errors == 0 {
			continue
		}
		n := k.Label
		if k.Tx {
			n = "tx:" + n
		}
		x, ok := sum[n]
		if !ok {
			x.min = a.MinUs
		}
		x.count += a.Count
		x.errors += a.Errors
		x.sum += a.SumUs
		x.min = min(x.min, a.MinUs)
		x.max = max(x.max, a.MaxUs)
		sum[n] = x
	}
}
