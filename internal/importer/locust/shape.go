package locust

import (
	"math"
	"sort"
)

// Shape rebuilds the response times of a label that only Locust's summary
// describes: its count, minimum, maximum, mean and a few percentiles. It
// yields n values whose count, minimum and maximum are exact, whose sum is
// the mean × n to the µs when the percentiles allow it, and whose value at
// each percentile's rank is Locust's percentile, to Locust's rounding.
//
// Ranks: Locust's own (⌊p·n⌋+1, see KnotRank), so the rebuilt values are
// what Locust described; plateau reads a percentile at hdrhistogram's rank
// ⌊p·n + 0.5⌋, the same rank or the one below, so a report's percentile of
// an imported label is Locust's or its lower neighbour.
//
// Rounding: Locust computes percentiles from response times rounded to
// about two significant digits (1 ms below 100 ms, 10 ms below 1 s, …; see
// Slack), so a percentile of 5 ms stands for a value in [4.5, 5.5]. The
// fit first moves every percentile by the same fraction λ ∈ [−1, 1] of its
// rounding interval, values between percentiles on straight lines.
// Only when that cannot reach the mean do the values between two
// percentiles bend, following v = a + (b−a)·w^γ of the position w ∈ (0,1)
// between them, with one exponent γ for the label. Values are computed per
// rank, so n may be large without memory to match.
type Shape struct {
	n          int64
	minV, maxV float64
	ranks      []int64   // 1-based ranks of the knots, increasing; first 1, last n
	base       []float64 // Locust's values at the ranks (first min, last max)
	lo, hi     []float64 // their rounding slack below and above
	vals       []float64 // the values used: base moved by λ, clamped, non-decreasing
	gamma      float64
	adjust     int64 // ± µs added to the first |adjust| interior ranks
	adjTo      int64 // rank below which interior ranks are adjusted
	// SumError is the part of the wanted sum (µs) the shape could not
	// reach because the percentiles do not allow it (0 normally).
	SumError int64
}

// Knot is one known point of a label's distribution: Locust's percentile P
// (a fraction, 0.5 for the median) has value V (µs).
type Knot struct {
	P float64
	V float64
}

// Slack is how far below and above a percentile Locust reports (µs) the
// response time it stands for may lie: Locust buckets response times by
// rounding them to 1 ms below 100 ms, 10 ms below 1 s, 100 ms below 10 s
// and 1 s above (locust/stats.py, bucket_response_time).
func Slack(v float64) (below, above float64) {
	unit := func(ms float64) float64 {
		switch {
		case ms < 100:
			return 1
		case ms < 1000:
			return 10
		case ms < 10000:
			return 100
		}
		return 1000
	}
	ms := v / 1000
	return unit(ms-1e-9) * 500, unit(ms) * 500
}

// NewShape builds the shape of n values with the given minimum, maximum,
// sum (all µs; sum < 0 leaves the percentiles as given and γ at 1) and
// percentile knots. Knots are kept within [min, max] (rounding can put
// Locust's percentiles a little outside the exact extremes) and
// non-decreasing.
func NewShape(n int64, minV, maxV, sum float64, knots []Knot) *Shape {
	s := &Shape{n: n, gamma: 1}
	if n <= 0 {
		return s
	}
	if maxV < minV {
		maxV = minV
	}
	s.minV, s.maxV = minV, maxV
	ks := append([]Knot(nil), knots...)
	sort.SliceStable(ks, func(i, j int) bool { return ks[i].P < ks[j].P })
	s.ranks, s.base, s.lo, s.hi = append(s.ranks, 1), append(s.base, minV), append(s.lo, 0), append(s.hi, 0)
	for _, k := range ks {
		if math.IsNaN(k.V) || math.IsInf(k.V, 0) || math.IsNaN(k.P) || k.P <= 0 || k.P > 1 {
			continue
		}
		r := KnotRank(k.P, n)
		if r == 1 || r == n {
			continue // the extremes are exact
		}
		lo, hi := Slack(k.V)
		if last := len(s.ranks) - 1; r == s.ranks[last] {
			// Two percentiles on one rank: the higher wins.
			s.base[last], s.lo[last], s.hi[last] = k.V, lo, hi
			continue
		}
		s.ranks, s.base, s.lo, s.hi = append(s.ranks, r), append(s.base, k.V), append(s.lo, lo), append(s.hi, hi)
	}
	if n > 1 {
		s.ranks, s.base, s.lo, s.hi = append(s.ranks, n), append(s.base, maxV), append(s.lo, 0), append(s.hi, 0)
	}
	s.vals = make([]float64, len(s.base))
	s.setLambda(0)
	if sum >= 0 {
		s.fit(sum)
	}
	return s
}

// setLambda moves every interior knot by λ of its slack (λ < 0 down).
func (s *Shape) setLambda(l float64) {
	for i, b := range s.base {
		v := b
		switch {
		case i == 0:
			v = s.minV
		case i == len(s.base)-1 && s.ranks[i] == s.n:
			v = s.maxV
		case l > 0:
			v += l * s.hi[i]
		case l < 0:
			v += l * s.lo[i]
		}
		v = math.Min(math.Max(v, s.minV), s.maxV)
		if i > 0 {
			v = math.Max(v, s.vals[i-1])
		}
		s.vals[i] = v
	}
}

// KnotRank is the 1-based rank of Locust's percentile p (a fraction) of n
// values: Locust (calculate_response_time_percentile) walks down from the
// largest value until at most ⌊p·n⌋ values remain below it, which is the
// value at rank ⌊p·n⌋+1, within [1, n].
func KnotRank(p float64, n int64) int64 {
	r := math.Floor(p*float64(n)) + 1
	switch {
	case !(r >= 1):
		return 1
	case r >= float64(n):
		return n
	}
	return int64(r)
}

// bisect finds x in [lo, hi] with f(x) = want for an increasing f, or the
// end nearest to it.
func bisect(lo, hi, want float64, f func(float64) float64) float64 {
	switch {
	case f(lo) >= want:
		return lo
	case f(hi) <= want:
		return hi
	}
	for range 60 {
		mid := (lo + hi) / 2
		if f(mid) < want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// fit moves the knots within their rounding (λ), then bends the curves
// (γ) if that is not enough, so the sum of the unrounded values is sum;
// then it spreads the rounding remainder as ±1 µs over interior ranks.
func (s *Shape) fit(sum float64) {
	l := bisect(-1, 1, sum, func(l float64) float64 {
		s.setLambda(l)
		return s.approxSum(1)
	})
	s.setLambda(l)
	// The sum falls as γ grows: bisect on −log2 γ.
	lg := bisect(-12, 12, sum, func(x float64) float64 { return s.approxSum(math.Exp2(-x)) })
	s.gamma = math.Exp2(-lg)
	if math.Abs(lg) < 1e-9 {
		s.gamma = 1
	}
	var got int64
	for r := int64(1); r <= s.n; r++ {
		got += s.raw(r)
	}
	diff := int64(math.Round(sum)) - got
	// Adjust the first |diff| interior ranks by one µs each.
	need := diff
	if need < 0 {
		need = -need
	}
	k := 0
	for r := int64(1); r <= s.n && need > 0; r++ {
		for k < len(s.ranks) && s.ranks[k] < r {
			k++
		}
		if k < len(s.ranks) && s.ranks[k] == r {
			continue
		}
		need--
		s.adjTo = r + 1
	}
	s.adjust = diff
	if need > 0 {
		if diff > 0 {
			s.adjust = diff - need
		} else {
			s.adjust = diff + need
		}
		s.SumError = diff - s.adjust
	}
	if s.adjust == 0 {
		s.adjTo = 0
	}
}

// approxSum is the sum of the unrounded values for γ: exact for short
// segments, by the integral with its end correction for long ones.
func (s *Shape) approxSum(g float64) float64 {
	total := s.vals[0]
	for i := 1; i < len(s.ranks); i++ {
		a, b := s.vals[i-1], s.vals[i]
		m := s.ranks[i] - s.ranks[i-1]
		total += b
		var inner float64 // Σ_{k=1}^{m−1} (k/m)^γ
		if m <= 64 {
			for k := int64(1); k < m; k++ {
				inner += math.Pow(float64(k)/float64(m), g)
			}
		} else {
			inner = float64(m)/(g+1) - 0.5
		}
		total += float64(m-1)*a + (b-a)*inner
	}
	return total
}

// raw is the rounded value at 1-based rank r before the remainder is spread.
func (s *Shape) raw(r int64) int64 {
	i := sort.Search(len(s.ranks), func(i int) bool { return s.ranks[i] >= r })
	if i >= len(s.ranks) {
		i = len(s.ranks) - 1
	}
	if s.ranks[i] == r || i == 0 {
		return int64(math.Round(s.vals[i]))
	}
	a, b := s.vals[i-1], s.vals[i]
	w := float64(r-s.ranks[i-1]) / float64(s.ranks[i]-s.ranks[i-1])
	return int64(math.Round(a + (b-a)*math.Pow(w, s.gamma)))
}

// At is the value (µs) at 1-based rank r of the sorted values.
func (s *Shape) At(r int64) int64 {
	v := s.raw(r)
	if s.adjust != 0 && r < s.adjTo {
		i := sort.Search(len(s.ranks), func(i int) bool { return s.ranks[i] >= r })
		if i >= len(s.ranks) || s.ranks[i] != r {
			if s.adjust > 0 {
				v++
			} else {
				v--
			}
		}
	}
	return max(v, 0)
}

// N is the number of values.
func (s *Shape) N() int64 { return s.n }

// spread is a permutation of 0…n−1 that visits the ranks evenly: the j-th
// sample in time order gets rank spread(j)+1, so every stretch of the run
// holds low, middle and high values alike instead of the sorted order.
type spread struct {
	n, step int64
}

func newSpread(n int64) spread {
	if n <= 2 {
		return spread{n: n, step: 1}
	}
	step := int64(float64(n) * 0.6180339887498949)
	for ; step > 1; step-- {
		if gcd(step, n) == 1 {
			break
		}
	}
	return spread{n: n, step: max(step, 1)}
}

func (p spread) at(j int64) int64 {
	if p.n == 0 {
		return 0
	}
	// (j·step) mod n without overflow for any n < 2^62.
	return mulMod(j%p.n, p.step, p.n)
}

func mulMod(a, b, m int64) int64 {
	var r int64
	a %= m
	for b > 0 {
		if b&1 == 1 {
			r = (r + a) % m
		}
		a = (a * 2) % m
		b >>= 1
	}
	return r
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
