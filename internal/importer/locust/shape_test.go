package locust

import (
	"math"
	"math/rand"
	"sort"
	"testing"
	"testing/quick"
)

// bucket rounds a response time (µs) as Locust does before percentiles.
func bucket(us float64) float64 {
	ms := us / 1000
	switch {
	case ms < 100:
		return math.RoundToEven(ms) * 1000
	case ms < 1000:
		return math.RoundToEven(ms/10) * 10000
	case ms < 10000:
		return math.RoundToEven(ms/100) * 100000
	}
	return math.RoundToEven(ms/1000) * 1e6
}

// TestShapeProperties checks, for random summaries made as Locust makes
// them from random draws, what Shape promises: n values, the exact minimum
// and maximum, the wanted sum to the µs, and Locust's percentile at each
// percentile's rank to Locust's rounding.
func TestShapeProperties(t *testing.T) {
	t.Parallel()
	f := func(seed int64) bool {
		rng := rand.New(rand.NewSource(seed))
		n := int64(1 + rng.Intn(3000))
		if rng.Intn(4) == 0 {
			n = int64(1 + rng.Intn(5))
		}
		minV := float64(rng.Intn(5000))
		maxV := minV + float64(rng.Intn(200000))
		if n == 1 {
			maxV = minV
		}
		// Percentiles from real draws, so the summary is consistent.
		draws := make([]float64, n)
		for i := range draws {
			draws[i] = minV + (maxV-minV)*math.Pow(rng.Float64(), 1+3*rng.Float64())
		}
		draws[0], draws[n-1] = minV, maxV
		sort.Float64s(draws)
		var sum float64
		for _, d := range draws {
			sum += d
		}
		var knots []Knot
		for _, pc := range percentileCols {
			r := KnotRank(pc.p, n)
			knots = append(knots, Knot{P: pc.p, V: bucket(draws[r-1])})
		}
		s := NewShape(n, minV, maxV, sum, knots)
		vals := make([]int64, n)
		var got int64
		for r := int64(1); r <= n; r++ {
			vals[r-1] = s.At(r)
			got += vals[r-1]
		}
		if vals[0] != int64(math.Round(minV)) || vals[n-1] != int64(math.Round(maxV)) && n > 1 {
			t.Logf("seed %d: min %d max %d, want %v %v", seed, vals[0], vals[n-1], minV, maxV)
			return false
		}
		if s.SumError == 0 && got != int64(math.Round(sum)) {
			t.Logf("seed %d: sum %d, want %v", seed, got, math.Round(sum))
			return false
		}
		if s.SumError != 0 {
			t.Logf("seed %d: sum unreachable by %d µs", seed, s.SumError)
			return false // consistent summaries are always reachable
		}
		// Each knot rank holds Locust's value unless a higher percentile
		// shares the rank (then the higher one is kept).
		for i, k := range knots {
			r := KnotRank(k.P, n)
			if r == 1 || r == n || i+1 < len(knots) && KnotRank(knots[i+1].P, n) == r {
				continue
			}
			lo, hi := Slack(k.V)
			if v := float64(vals[r-1]); v < k.V-lo-1 || v > k.V+hi+1 {
				t.Logf("seed %d: rank %d (p %v) = %d, want %v", seed, r, k.P, vals[r-1], k.V)
				return false
			}
		}
		return true
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 300}); err != nil {
		t.Fatal(err)
	}
}

func TestShapeUnreachableMean(t *testing.T) {
	t.Parallel()
	// A mean above what the percentiles allow: γ hits its bound and the
	// shortfall is reported, not hidden.
	s := NewShape(100, 1000, 2000, 1990*100, []Knot{{0.5, 1000}, {0.99, 1000}})
	if s.SumError <= 0 {
		t.Fatalf("SumError %d, want a positive shortfall", s.SumError)
	}
}

func TestSpreadIsPermutation(t *testing.T) {
	t.Parallel()
	for _, n := range []int64{1, 2, 3, 10, 97, 100, 1000, 4096} {
		p := newSpread(n)
		seen := make([]bool, n)
		for j := int64(0); j < n; j++ {
			r := p.at(j)
			if r < 0 || r >= n || seen[r] {
				t.Fatalf("n %d: rank %d twice or out of range", n, r)
			}
			seen[r] = true
		}
		// Every fifth of the run holds ranks from the whole range.
		if n >= 100 {
			lo, hi := n, int64(-1)
			for j := int64(0); j < n/5; j++ {
				lo, hi = min(lo, p.at(j)), max(hi, p.at(j))
			}
			if lo > n/10 || hi < n-n/10 {
				t.Errorf("n %d: first fifth spans ranks %d…%d", n, lo, hi)
			}
		}
	}
	if got := mulMod(1<<61, 1<<61+3, 1<<62-57); got < 0 || got >= 1<<62-57 {
		t.Errorf("mulMod out of range: %d", got)
	}
}
