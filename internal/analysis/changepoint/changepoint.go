// Package changepoint finds the points in a series of runs where a figure
// (a label's p95, throughput, error %, capacity, a service's CPU per
// request …) moved to a new level and stayed there.
//
// The detector is E-Divisive means (Matteson & James 2014, "A Nonparametric
// Approach for Multiple Change Point Analysis of Multivariate Data"), the
// method of MongoDB's signal-processing-algorithms and of Apache Otava
// (formerly DataStax's Hunter): the series is split recursively where the
// energy distance between the part before and the part after is largest,
// each split is kept only when a permutation test finds it significant, and
// a minimum effect (relative change in mean) drops changes too small to
// matter. The method and its parameters are described in
// docs/analysis-methods.md.
//
// It is pure: no I/O, no clock, no global state. Randomness comes from the
// *rand.Rand the caller passes, so a seed reproduces a result exactly.
package changepoint

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
)

// Options tunes Detect. The zero value selects every default.
type Options struct {
	// Alpha is the largest permutation p-value at which a split is kept
	// (Otava's max_pvalue, MongoDB's pvalue), a probability in (0, 1).
	// Default 0.01.
	Alpha float64
	// Permutations is how many random permutations each significance test
	// draws. The smallest p-value a test can give is 1/(Permutations+1),
	// so it must be at least 1/Alpha − 1. Default 199.
	Permutations int
	// MinChangePct is the minimum effect, in percent [0, 100+]: a change
	// point whose magnitude (see Point.MagnitudePct) is below it is
	// dropped, smallest first, and its neighbours are judged again.
	// Default 0: every significant change is kept, including a change of
	// spread alone. A series of thousands of samples per run usually wants
	// a few percent here, or it reports every real but tiny shift.
	MinChangePct float64
	// MinSegment is the fewest points a segment may have on either side of
	// a change point. Default 3; at least 2 (a segment of one point has no
	// spread, and one outlier would be a "segment").
	MinSegment int
}

// Defaults of Options.
const (
	DefaultAlpha        = 0.01
	DefaultPermutations = 199
	DefaultMinSegment   = 3
)

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if o.Permutations == 0 {
		o.Permutations = DefaultPermutations
	}
	if o.MinSegment == 0 {
		o.MinSegment = DefaultMinSegment
	}
	return o
}

func (o Options) validate() error {
	var errs []error
	if !(o.Alpha > 0 && o.Alpha < 1) {
		errs = append(errs, fmt.Errorf("alpha %v is not a probability in (0, 1)", o.Alpha))
	}
	if o.Permutations < 1 {
		errs = append(errs, fmt.Errorf("permutations %d is below 1", o.Permutations))
	} else if 1/float64(o.Permutations+1) > o.Alpha {
		errs = append(errs, fmt.Errorf("permutations %d cannot reach alpha %v: the smallest p-value is 1/%d", o.Permutations, o.Alpha, o.Permutations+1))
	}
	if o.MinChangePct < 0 || math.IsNaN(o.MinChangePct) {
		errs = append(errs, fmt.Errorf("min change %v %% is negative", o.MinChangePct))
	}
	if o.MinSegment < 2 {
		errs = append(errs, fmt.Errorf("min segment %d is below 2", o.MinSegment))
	}
	return errors.Join(errs...)
}

// Segment is a run of points between change points: the half-open index
// range [Start, End) of the series and its figures, in the series' unit.
type Segment struct {
	Start  int     `json:"start"`
	End    int     `json:"end"`
	Mean   float64 `json:"mean"`
	StdDev float64 `json:"stddev"` // sample standard deviation (n − 1); 0 for one point
}

// Len is the number of points in the segment.
func (s Segment) Len() int { return s.End - s.Start }

// Point is one change point.
type Point struct {
	// Index is the first point at the new level: series[Index] belongs to
	// After, series[Index−1] to Before (Otava's and MongoDB's convention).
	Index int `json:"index"`
	// Before and After are the segments on either side, bounded by the
	// neighbouring change points or the ends of the series.
	Before Segment `json:"before"`
	After  Segment `json:"after"`
	// ChangePct is the relative change in mean, in percent:
	// (After.Mean/Before.Mean − 1) × 100. It is 0 when Before.Mean is 0.
	ChangePct float64 `json:"change_pct"`
	// MagnitudePct is the size of the change as the minimum effect judges
	// it, in percent: the larger of |After/Before − 1| and |Before/After − 1|
	// (Otava's change magnitude), so a halving and a doubling are the same
	// effect. A mean of 0 on one side leaves the other direction.
	MagnitudePct float64 `json:"magnitude_pct"`
	// PValue is the permutation p-value of the split, (k+1)/(R+1) for k of
	// R permutations at least as extreme: from the test that found it, or,
	// when a neighbour was dropped, from the test of the split within its
	// new neighbours.
	PValue float64 `json:"p_value"`
}

// Result is what Detect found.
type Result struct {
	// Points are the change points in index order; empty (not nil) when
	// the series has none.
	Points []Point `json:"change_points"`
	// Segments are the stretches between them, len(Points)+1 of them, in
	// order (none for an empty series); the last is the current level
	// ("the last stable segment").
	Segments []Segment `json:"segments"`
}

// Detect finds the change points of series with E-Divisive means and a
// permutation test, drawing permutations from rng. Series values must be
// finite; a series shorter than 2×MinSegment has no change point. Detect
// neither keeps nor modifies series.
func Detect(series []float64, opt Options, rng *rand.Rand) (Result, error) {
	o := opt.withDefaults()
	if err := o.validate(); err != nil {
		return Result{}, fmt.Errorf("change points: %w", err)
	}
	if rng == nil {
		return Result{}, errors.New("change points: no random source")
	}
	for i, v := range series {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Result{}, fmt.Errorf("change points: value %d is %v", i, v)
		}
	}
	d := newDetector(series, o, rng)
	idx, pv := d.divide()
	idx, pv = d.prune(idx, pv)
	return describe(series, idx, pv), nil
}

// detector holds one series and its scratch space; the permutation tests
// shuffle vals and rnk together.
type detector struct {
	o      Options
	rng    *rand.Rand
	series []float64 // as given, read only
	x      []float64 // the series, centred and scaled (the statistic is invariant)
	rank   []int32   // rank of x[i] among all values (1-based, ties broken by index)
	vals   []float64 // working copy permuted by the tests
	rnk    []int32
	tree   []node    // Fenwick tree over ranks
	tot    []float64 // tot[rank]: Σ|z − z'| from that value to all others of its window
	sorted []int32   // sorted[s:e]: the ranks of window [s, e) in order (totals)
	byRank []float64 // x by rank

	// the (τ, κ) search's scratch (search.go)
	pre, wpre, tpre, h              []float64
	bnd                             []int
	gram, drift, ub, blockMax, bsum []float64
	gmax, hmax, bcnt, tbar          []float64
	inv                             []float64 // inv[k] = 1/k
	dm, wb                          []float64
	order, blockOf                  []int32
	bestTau                         int
	bestQ                           float64
}

// node is one Fenwick-tree cell: how many inserted values, and their sum.
type node struct{ c, s float64 }

func newDetector(series []float64, o Options, rng *rand.Rand) *detector {
	n := len(series)
	d := &detector{o: o, rng: rng, series: series,
		x: make([]float64, n), rank: make([]int32, n), vals: make([]float64, n), rnk: make([]int32, n),
		tree: make([]node, n+1), tot: make([]float64, n+1), sorted: make([]int32, n), blockOf: make([]int32, n+1),
		pre: make([]float64, n), wpre: make([]float64, n+1), tpre: make([]float64, n+1), h: make([]float64, n), inv: make([]float64, n+1)}
	for k := 1; k <= n; k++ {
		d.inv[k] = 1 / float64(k)
	}
	// Centre and scale, so the sums below stay well-conditioned whatever
	// the series' unit and offset (10⁹ ns or 0.001 s) and cannot overflow
	// (values near 10³⁰⁸): the statistic does not change.
	m := maxAbs(series)
	for i, v := range series {
		d.x[i] = v / m
	}
	mean, sd := meanSD(d.x)
	if sd == 0 {
		sd = 1
	}
	order := make([]int, n)
	for i := range d.x {
		d.x[i] = (d.x[i] - mean) / sd
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return d.x[order[a]] < d.x[order[b]] })
	byRank := make([]float64, n+1)
	for r, i := range order {
		d.rank[i] = int32(r + 1) // Fenwick indices start at 1
		byRank[r+1] = d.x[i]
	}
	d.byRank = byRank
	return d
}

// totals fills tot for the values of window [s, e): for each, the sum of
// its distances to the window's other values. A permutation within the
// window moves values but keeps this set, so it is computed once per
// window, in O(len·log len), and read by every permutation's scan.
func (d *detector) totals(s, e int) {
	sorted := d.sorted[s:e]
	copy(sorted, d.rank[s:e])
	slices.Sort(sorted) // ranks in order are values in order
	var all float64
	for _, r := range sorted {
		all += d.byRank[r]
	}
	var below float64
	L := float64(len(sorted))
	for j, r := range sorted {
		v := d.byRank[r]
		above := all - below - v
		d.tot[r] = v*float64(j) - below + above - v*(L-float64(j)-1)
		below += v
	}
}

// qTol is the relative precision of Q̂: the sums behind it are computed by
// differences, so a window of equal values gives ±10⁻¹³ instead of 0, and
// two statistics closer than this are taken as equal.
const qTol = 1e-9

// candidate is the best split of one window [start, end).
type candidate struct {
	start, end, tau int
	q               float64
}

// windows returns the bounds [0, cp₁, …, n] for the sorted change points.
func windows(n int, cps []int) []int {
	w := make([]int, 0, len(cps)+2)
	w = append(w, 0)
	w = append(w, cps...)
	return append(w, n)
}

// divide is the E-Divisive phase: repeatedly take the best split over all
// windows between the change points found so far, and keep it while the
// permutation test says it is significant.
func (d *detector) divide() (idx []int, pv []float64) {
	n := len(d.x)
	memo := map[[2]int]candidate{} // a window's best split does not change until it is split
	for {
		w := windows(n, idx)
		best := candidate{tau: -1, q: math.Inf(-1)}
		for i := 0; i+1 < len(w); i++ {
			key := [2]int{w[i], w[i+1]}
			c, ok := memo[key]
			if !ok {
				d.totals(w[i], w[i+1])
				tau, q := d.maxQ(d.x, d.rank, w[i], w[i+1], math.Inf(1))
				c = candidate{w[i], w[i+1], tau, q}
				memo[key] = c
			}
			if c.tau >= 0 && c.q > best.q {
				best = c
			}
		}
		if best.tau < 0 || best.q <= qTol {
			// no split, or only splits whose statistic is rounding noise
			// (a window of equal values).
			return idx, pv
		}
		p, ok := d.permutationTest(w, best.q)
		if !ok {
			return idx, pv
		}
		at, _ := slices.BinarySearch(idx, best.tau)
		idx = slices.Insert(idx, at, best.tau)
		pv = slices.Insert(pv, at, p)
	}
}

// permutationTest shuffles the points within each window of w (the
// clusters found so far), takes the best Q̂ over all windows, and counts
// how often it reaches q. It stops as soon as the p-value can no longer
// reach Alpha; ok says whether it did.
func (d *detector) permutationTest(w []int, q float64) (p float64, ok bool) {
	R := d.o.Permutations
	maxExtreme := int(math.Floor(d.o.Alpha*float64(R+1)+1e-9)) - 1 // (k+1)/(R+1) ≤ α
	extreme := 0
	copy(d.vals, d.x)
	copy(d.rnk, d.rank)
	reach := q - qTol*math.Max(1, math.Abs(q))
	for range R {
		for i := 0; i+1 < len(w); i++ {
			d.shuffle(w[i], w[i+1])
		}
		best := math.Inf(-1)
		for i := 0; i+1 < len(w) && best < reach; i++ {
			_, best = d.maxQ(d.vals, d.rnk, w[i], w[i+1], reach)
		}
		if best >= reach {
			extreme++
			if extreme > maxExtreme {
				return float64(extreme+1) / float64(R+1), false
			}
		}
	}
	return float64(extreme+1) / float64(R+1), true
}

// shuffle permutes vals and rnk together in [s, e) (Fisher–Yates).
func (d *detector) shuffle(s, e int) {
	for i := e - 1; i > s; i-- {
		j := s + d.rng.IntN(i-s+1)
		d.vals[i], d.vals[j] = d.vals[j], d.vals[i]
		d.rnk[i], d.rnk[j] = d.rnk[j], d.rnk[i]
	}
}

// localTest is the significance of the split at tau within [s, e) alone,
// used when a neighbouring change point is dropped: the observed Q̂(τ) —
// its best over κ — against the best Q̂ of permutations of the window.
func (d *detector) localTest(s, tau, e int) (p float64, ok bool) {
	ms := d.o.MinSegment
	if tau-s < ms || e-tau < ms {
		return 1, false
	}
	d.totals(s, e)
	d.prep(d.x, d.rank, s, e)
	d.bestTau, d.bestQ = -1, math.Inf(-1)
	d.refine(d.x, d.rank, s, tau, tau, tau+ms, e, math.Inf(1))
	q := d.bestQ
	if math.IsInf(q, -1) {
		return 1, false
	}
	return d.permutationTest([]int{s, e}, q)
}

// prune applies the minimum effect, as Otava's merge step does: while a
// change point is not significant any more or its magnitude is below
// MinChangePct, drop the weakest (highest p-value first, then smallest
// magnitude) and judge its neighbours again within their new segments.
func (d *detector) prune(idx []int, pv []float64) ([]int, []float64) {
	minMag := d.o.MinChangePct
	for len(idx) > 0 {
		w := windows(len(d.x), idx)
		drop, worstP := -1, d.o.Alpha
		for i, p := range pv {
			if p > worstP {
				drop, worstP = i, p
			}
		}
		if drop < 0 && minMag > 0 {
			smallest := minMag
			for i := range idx {
				mag := magnitudePct(stats(d.series, w[i], w[i+1]).Mean, stats(d.series, w[i+1], w[i+2]).Mean)
				if mag < smallest {
					drop, smallest = i, mag
				}
			}
		}
		if drop < 0 {
			return idx, pv
		}
		idx = slices.Delete(idx, drop, drop+1)
		pv = slices.Delete(pv, drop, drop+1)
		w = windows(len(d.x), idx)
		for _, i := range []int{drop - 1, drop} {
			if i < 0 || i >= len(idx) {
				continue
			}
			pv[i], _ = d.localTest(w[i], idx[i], w[i+2])
		}
	}
	return idx, pv
}

// stats is the segment [s, e) of the original series.
func stats(series []float64, s, e int) Segment {
	m := maxAbs(series[s:e])
	scaled := make([]float64, e-s)
	for i, v := range series[s:e] {
		scaled[i] = v / m
	}
	mean, sd := meanSD(scaled)
	seg := Segment{Start: s, End: e, Mean: mean * m}
	if e-s > 1 {
		seg.StdDev = sd * math.Sqrt(float64(e-s)/float64(e-s-1)) * m
	}
	return seg
}

// maxAbs is the largest |v|, or 1 when all are 0 (a divisor).
func maxAbs(xs []float64) float64 {
	m := 0.0
	for _, v := range xs {
		m = math.Max(m, math.Abs(v))
	}
	if m == 0 {
		return 1
	}
	return m
}

// meanSD is the mean and the population standard deviation of xs.
func meanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	var ss float64
	for _, v := range xs {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)))
}

// changePct is (after/before − 1) in percent, 0 when before is 0.
func changePct(before, after float64) float64 {
	if before == 0 {
		return 0
	}
	return (after/before - 1) * 100
}

// magnitudePct is the larger of the forward and backward relative
// changes, in percent (Otava's change magnitude).
func magnitudePct(before, after float64) float64 {
	return math.Max(math.Abs(changePct(before, after)), math.Abs(changePct(after, before)))
}

// describe turns the change points' indices into Points and Segments.
func describe(series []float64, idx []int, pv []float64) Result {
	// never nil, so JSON says [] rather than null.
	res := Result{Points: make([]Point, 0, len(idx)), Segments: make([]Segment, 0, len(idx)+1)}
	if len(series) == 0 {
		return res
	}
	w := windows(len(series), idx)
	for i := 0; i+1 < len(w); i++ {
		res.Segments = append(res.Segments, stats(series, w[i], w[i+1]))
	}
	for i, at := range idx {
		b, a := res.Segments[i], res.Segments[i+1]
		res.Points = append(res.Points, Point{Index: at, Before: b, After: a,
			ChangePct: changePct(b.Mean, a.Mean), MagnitudePct: magnitudePct(b.Mean, a.Mean), PValue: pv[i]})
	}
	return res
}
