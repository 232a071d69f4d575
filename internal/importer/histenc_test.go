package importer

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// TestLeanHistMatchesHDR records the same values into a lean histogram and
// into hdrhistogram-go with plateau's geometry, and checks that the lean
// encoding decodes to the same counts.
func TestLeanHistMatchesHDR(t *testing.T) {
	t.Parallel()
	var enc histEncoder
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, 1000, 50000} {
		var l lean
		ref := metrics.NewHist()
		for range n {
			v := int64(r.ExpFloat64() * float64([]int64{50, 5000, 500000, 50000000}[r.IntN(4)]))
			if r.IntN(50) == 0 {
				v = []int64{0, 1, 2047, 2048, metrics.HistHighestUs, 2 * metrics.HistHighestUs}[r.IntN(6)]
			}
			l.record(v)
			_ = ref.RecordValue(min(max(v, metrics.HistLowestUs), metrics.HistHighestUs))
		}
		s, err := enc.encode(&l)
		if err != nil {
			t.Fatal(err)
		}
		got, err := metrics.DecodeHist(s)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		if !got.Equals(ref) {
			t.Errorf("n=%d: decoded histogram differs: total %d/%d max %d/%d p50 %d/%d", n, got.TotalCount(), ref.TotalCount(),
				got.Max(), ref.Max(), got.ValueAtQuantile(50), ref.ValueAtQuantile(50))
		}
		l.reset()
	}
}

// TestSortBuckets compares the radix sort with slices.Sort.
func TestSortBuckets(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	var tmp []int32
	for _, n := range []int{0, 1, 63, 64, 65, 100, 1000, 4096, 10000} {
		for _, spread := range []int32{1, 200, 256, 5000, 1<<15 - 1} {
			base := r.Int32N(1<<15 - spread + 1)
			v := make([]int32, n)
			for i := range v {
				v[i] = base + r.Int32N(spread)
			}
			want := slices.Clone(v)
			slices.Sort(want)
			tmp = sortBuckets(v, tmp)
			if !slices.Equal(v, want) {
				t.Fatalf("n=%d spread=%d: not sorted", n, spread)
			}
		}
	}
}

// TestSelectRanks checks that percentiles read after selectRanks equal
// those of fully sorted values, for both tools' definitions.
func TestSelectRanks(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 3, 10, 33, 100, 1000, 20000} {
		for _, distinct := range []int{1, 3, 50, 1 << 30} {
			v := make([]float64, n)
			for i := range v {
				v[i] = float64(r.IntN(distinct)) / 1000
			}
			sorted := slices.Clone(v)
			slices.Sort(sorted)
			for _, spec := range []FigureSpec{JMeterFigures, K6Figures} {
				w := slices.Clone(v)
				selectRanks(w, percentileRanks(spec, n))
				for _, p := range []float64{50, 90, 95, 99} {
					if got, want := spec.Percentile(w, p), spec.Percentile(sorted, p); got != want {
						t.Fatalf("%s n=%d distinct=%d p%v: %v, sorted %v", spec.Tool, n, distinct, p, got, want)
					}
				}
			}
		}
	}
}

// percentileRanks are the ranks spec's p50, p90, p95 and p99 read of n
// values.
func percentileRanks(spec FigureSpec, n int) []int {
	var ranks []int
	for _, p := range []float64{50, 90, 95, 99} {
		lo, hi := spec.Ranks(n, p)
		ranks = append(ranks, lo, hi)
	}
	return ranks
}

// TestCountRanks checks countRanks against sorting, and that it declines
// values it cannot count (fractions, a spread over countSpan, NaN)
// leaving them untouched.
func TestCountRanks(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(9, 10))
	var counts []int32
	for _, n := range []int{256, 1000, 20000} {
		for _, spread := range []int{1, 3, 500, countSpan} {
			for _, base := range []int{0, -7, 100000} {
				v := make([]float64, n)
				for i := range v {
					v[i] = float64(base + r.IntN(spread))
				}
				sorted := slices.Clone(v)
				slices.Sort(sorted)
				for _, spec := range []FigureSpec{JMeterFigures, K6Figures} {
					w := slices.Clone(v)
					ranks := percentileRanks(spec, n)
					ranks = append(ranks, 0, n-1, ranks[0]) // the ends, and a duplicate
					var ok bool
					if counts, ok = countRanks(w, ranks, counts); !ok {
						t.Fatalf("n=%d spread=%d base=%d: declined whole numbers", n, spread, base)
					}
					for _, rk := range ranks {
						if w[rk] != sorted[rk] {
							t.Fatalf("%s n=%d spread=%d base=%d rank %d: %v, sorted %v", spec.Tool, n, spread, base, rk, w[rk], sorted[rk])
						}
					}
					for _, p := range []float64{50, 90, 95, 99} {
						if got, want := spec.Percentile(w, p), spec.Percentile(sorted, p); got != want {
							t.Fatalf("%s n=%d p%v: %v, sorted %v", spec.Tool, n, p, got, want)
						}
					}
				}
			}
		}
	}
	declined := map[string]func(v []float64) []float64{
		"a fraction":       func(v []float64) []float64 { v[17] = 1.5; return v },
		"spread too wide":  func(v []float64) []float64 { v[3] = countSpan + 10; return v },
		"NaN":              func(v []float64) []float64 { v[0] = math.NaN(); return v },
		"infinity":         func(v []float64) []float64 { v[9] = math.Inf(1); return v },
		"too few to count": func(v []float64) []float64 { return v[:100] },
	}
	for name, spoil := range declined {
		v := make([]float64, 1000)
		for i := range v {
			v[i] = float64(r.IntN(100))
		}
		v = spoil(v)
		orig := slices.Clone(v)
		if _, ok := countRanks(v, []int{0, 50, 99}, nil); ok {
			t.Errorf("%s: counted", name)
		}
		for i := range v {
			if v[i] != orig[i] && !(math.IsNaN(v[i]) && math.IsNaN(orig[i])) {
				t.Fatalf("%s: declined but changed v[%d]", name, i)
			}
		}
	}
}

// TestBucketValue: bucketValue inverts countsIndex at every bucket's
// lowest value, over the whole range plateau records.
func TestBucketValue(t *testing.T) {
	t.Parallel()
	for idx := int32(0); ; idx++ {
		v := bucketValue(idx)
		if v > metrics.HistHighestUs {
			break
		}
		if got := countsIndex(v); got != int(idx) {
			t.Fatalf("countsIndex(bucketValue(%d) = %d) = %d", idx, v, got)
		}
		if idx > 0 && countsIndex(v-1) != int(idx-1) {
			t.Fatalf("bucketValue(%d) = %d is not its bucket's lowest value", idx, v)
		}
	}
}
