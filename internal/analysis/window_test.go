package analysis

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// tickOf is a second's or minute's Tick from the metrics.Agg its records
// add up to: the reference windowAgg.tick is held to.
func tickOf(t time.Time, a *metrics.Agg) Tick {
	return Tick{T: t, Count: a.Count, Errors: a.Errors, MeanMs: a.MeanMs(), P95Ms: a.QuantileMs(95), MaxMs: float64(a.MaxUs) / 1000}
}

// TestWindowAggIsAgg adds random records — with and without samples,
// histograms, detailed and undetailed failures — into a windowAgg and
// into a metrics.Agg, resetting between rounds, and compares their ticks.
func TestWindowAggIsAgg(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 2))
	w := newWindowAgg()
	var dec metrics.HistDecoder
	var sp metrics.Sparse
	for round := range 60 {
		a := metrics.NewAgg()
		w.reset()
		for range r.IntN(12) {
			src := metrics.NewAgg()
			for range r.IntN(300) {
				src.AddValue(int64(r.ExpFloat64() * []float64{80, 8000, 2e6}[r.IntN(3)]))
			}
			if r.IntN(3) == 0 {
				src.AddError(metrics.ErrKey{Status: 500, Message: "HTTP 500"}, 1+r.Int64N(4))
			}
			rec, err := rundir.RecordOf(1700000000, metrics.Key{Label: "x"}, src)
			if err != nil {
				t.Fatal(err)
			}
			if r.IntN(4) == 0 {
				rec.Errors += r.Int64N(3) // failures without detail (imports)
			}
			sp = metrics.Sparse{}
			if rec.Hist != "" {
				if err := dec.Decode(rec.Hist, &sp); err != nil {
					t.Fatal(err)
				}
			}
			rec.AddDecoded(a, &sp)
			w.add(&rec, &sp)
		}
		at := time.Unix(1700000000, 0)
		if got, want := w.tick(at), tickOf(at, a); got != want {
			t.Fatalf("round %d:\n got %+v\nwant %+v", round, got, want)
		}
	}
}
