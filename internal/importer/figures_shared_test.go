package importer

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// The total's figures, whose values are its only label's while it has
// one (figures.shared), are what they are computed from every value the
// total was given: one label throughout, a second label (or a
// transaction) after some samples, with k6's definition (all values) and
// JMeter's (a window of the last values), including a window already full
// when the second label comes.
func TestFiguresTotalSharesItsOnlyLabel(t *testing.T) {
	t.Parallel()
	for _, spec := range []FigureSpec{K6Figures, {Tool: "w", Percentile: LegacyPercentile, Ranks: legacyRanks, Window: 50}} {
		for _, second := range []int{-1, 0, 10, 49, 50, 51, 300, 380} {
			for _, tx := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s-second%d-tx%v", spec.Tool, second, tx), func(t *testing.T) {
					t.Parallel()
					labels := NewLabels()
					a := &Aggregator{workload: "w", labels: labels}
					f := newFigures(spec, "w")
					la, lb := labels.ID([]byte("GET /a")), labels.ID([]byte("GET /b"))
					rng := rand.New(rand.NewPCG(1, uint64(second+2)))
					var want []float64 // the total's values, by the spec's window
					for i := range 400 {
						s := &Rec{End: int64(1e12 + i*1e6), Label: la}
						if second >= 0 && i >= second && i%3 == 0 {
							s.Label, s.Tx = lb, tx
						}
						us := int64(1 + rng.IntN(100000))
						f.add(s, us, a)
						if !s.Tx {
							want = append(want, float64(us)/1000)
						}
					}
					if spec.Window > 0 && len(want) > spec.Window {
						want = want[len(want)-spec.Window:]
					}
					sort.Float64s(want)
					var total *rundir.SourceLabel
					sf := f.result(2)
					for i := range sf.Labels {
						if sf.Labels[i].Total {
							total = &sf.Labels[i]
						}
					}
					if total == nil {
						t.Fatal("no total")
					}
					for _, c := range []struct {
						p   float64
						got *float64
					}{{50, total.P50Ms}, {90, total.P90Ms}, {95, total.P95Ms}, {99, total.P99Ms}} {
						w := math.Round(spec.Percentile(want, c.p)*1e6) / 1e6
						if c.got == nil || *c.got != w {
							t.Errorf("p%v: %v, want %v", c.p, c.got, w)
						}
					}
				})
			}
		}
	}
}
