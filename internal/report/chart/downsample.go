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

// ReduceCounts is Reduce over a per-second count series in which every
// second without a point counts as zero (a second without completions had
// none, not a gap): the seconds are floor(from), floor(from)+1, … up to
// ceil(to−from) of them, and those before from or past the last bucket are
// dropped, as Reduce drops them. x holds whole seconds in ascending order
// (points with equal x are summed). Memory and time are O(len(x) + buckets),
// never O(to − from): a run stamped over decades still costs at most its
// buckets, where spelling the zeros out would cost one value per second.
func ReduceCounts(x, y []float64, from, to, w float64) Reduced {
	n := int(math.Ceil((to - from) / w))
	if n < 1 {
		n = 1
	}
	r := Reduced{X: make([]float64, n), Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n), Bucket: w}
	sum := make([]float64, n)
	have := make([]int, n) // seconds of the bucket with a point
	for i := range r.Lo {
		r.Lo[i], r.Hi[i] = math.Inf(1), math.Inf(-1)
		r.X[i] = from + (float64(i)+0.5)*w
	}
	first := math.Floor(from)
	last := first + math.Ceil(to-from) - 1 // the last second of the grid
	lowest := math.Max(first, math.Ceil(from))
	for i := 0; i < len(x) && i < len(y); {
		sec := x[i]
		v := 0.0
		for i < len(x) && i < len(y) && x[i] == sec {
			if finite(y[i]) {
				v += y[i]
			}
			i++
		}
		if sec != math.Floor(sec) || sec < lowest || sec > last {
			continue
		}
		b := int((sec - from) / w)
		if b < 0 || b >= n {
			continue
		}
		sum[b] += v
		have[b]++
		r.Lo[b] = math.Min(r.Lo[b], v)
		r.Hi[b] = math.Max(r.Hi[b], v)
	}
	for b := range n {
		// The grid's seconds that fall in bucket b: lo ≤ s < hi, s whole,
		// lowest ≤ s ≤ last.
		lo := math.Max(math.Ceil(from+float64(b)*w), lowest)
		hi := math.Min(math.Ceil(from+float64(b+1)*w)-1, last)
		secs := math.Max(hi-lo+1, 0)
		zeros := secs - float64(have[b])
		if zeros > 0 {
			r.Lo[b] = math.Min(r.Lo[b], 0)
			r.Hi[b] = math.Max(r.Hi[b], 0)
		}
		if secs <= 0 {
			r.Mean[b], r.Lo[b], r.Hi[b] = math.NaN(), math.NaN(), math.NaN()
		} else {
			r.Mean[b] = sum[b] / secs
		}
		if secs > 1 {
			r.Reduced = true
		}
	}
	return r
}
