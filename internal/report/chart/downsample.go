package chart

import "math"

// Reduced is a series cut into equal buckets of X: per bucket its centre,
// the (weighted) mean of its values and their minimum and maximum. A bucket
// without values holds NaN, which the chart draws as a gap.
type Reduced struct {
	X, Mean, Lo, Hi []float64
	// Bucket is the bucket width in X units; Reduced reports whether any
	// bucket stood for more than one input point (so Lo/Hi are worth
	// drawing).
	Bucket  float64
	Reduced bool
}

// BucketWidth picks a round bucket width (seconds) so that span is cut into
// at most max buckets, and never below min.
func BucketWidth(span, min float64, max int) float64 {
	for _, w := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600} {
		if w >= min && span/w <= float64(max) {
			return w
		}
	}
	return math.Max(min, span/float64(max))
}

// Reduce buckets points (x ascending or not) over [from, to) into buckets of
// width w. Weights, when not nil, weight the mean (e.g. by sample count, so
// the mean of per-second averages is the exact average); NaN values are
// skipped. Points outside [from, to) are dropped. Memory is O(buckets).
func Reduce(x, y, weights []float64, from, to, w float64) Reduced {
	n := int(math.Ceil((to - from) / w))
	if n < 1 {
		n = 1
	}
	r := Reduced{X: make([]float64, n), Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n), Bucket: w}
	sum := make([]float64, n)
	wsum := make([]float64, n)
	cnt := make([]int, n)
	for i := range r.Lo {
		r.Lo[i], r.Hi[i] = math.Inf(1), math.Inf(-1)
		r.X[i] = from + (float64(i)+0.5)*w
	}
	for i := range y {
		v := y[i]
		if !finite(v) || i >= len(x) {
			continue
		}
		b := int((x[i] - from) / w)
		if b < 0 || b >= n || x[i] < from {
			continue
		}
		wt := 1.0
		if weights != nil {
			wt = weights[i]
		}
		sum[b] += v * wt
		wsum[b] += wt
		cnt[b]++
		r.Lo[b] = math.Min(r.Lo[b], v)
		r.Hi[b] = math.Max(r.Hi[b], v)
	}
	for b := range n {
		switch {
		case cnt[b] == 0:
			r.Mean[b], r.Lo[b], r.Hi[b] = math.NaN(), math.NaN(), math.NaN()
		case wsum[b] > 0:
			r.Mean[b] = sum[b] / wsum[b]
		default:
			r.Mean[b] = (r.Lo[b] + r.Hi[b]) / 2
		}
		if cnt[b] > 1 {
			r.Reduced = true
		}
	}
	return r
}
