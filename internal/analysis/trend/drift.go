package trend

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"gonum.org/v1/gonum/stat"
)

// DriftOptions tunes Drift. The zero value selects every default.
type DriftOptions struct {
	// Confidence is the two-sided level of the slope interval; default 0.95.
	Confidence float64
	// Alpha is the false-alarm probability of each change-point test on a
	// series with no change; default 0.01. A soak is judged once per label and
	// statistic, so a low level keeps a report of twenty labels quiet.
	Alpha float64
	// MinChangePct is the smallest shift worth reporting, in percent of the
	// series mean: a change point needs |delta| at least this large, and the
	// slope needs |slope × span| at least this large to count as Significant.
	// Default 5; a negative value disables the practical threshold.
	MinChangePct float64
	// MinSegment is the fewest points on each side of a change; default
	// max(5, ⌈n/50⌉) (12 minutes of a 10-hour per-minute series).
	MinSegment int
	// MaxChanges bounds how many change points are searched for; default 5.
	MaxChanges int
}

func (o DriftOptions) withDefaults(n int) DriftOptions {
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = 0.01
	}
	if o.MinChangePct == 0 {
		o.MinChangePct = 5
	}
	if o.MinChangePct < 0 {
		o.MinChangePct = 0
	}
	if o.MinSegment <= 0 {
		o.MinSegment = max(5, (n+49)/50)
	}
	if o.MaxChanges <= 0 {
		o.MaxChanges = 5
	}
	return o
}

// Change is one detected shift in the level of a series.
type Change struct {
	// At is the time of the first point of the new level.
	At time.Time
	// Index is the position of that point among the finite points of the
	// series, in time order.
	Index int
	// Before and After are the means of the neighbouring segments, in the
	// unit of the series; Delta is After − Before.
	Before, After, Delta float64
	// P is the p-value of the test that found it (within its segment).
	P float64
}

// DriftResult describes how a series moved over a run.
type DriftResult struct {
	N          int       // finite points used
	Start, End time.Time // first and last point
	Mean       float64   // mean of the series
	// SlopePerHour is the OLS slope in series units per hour; CILow and
	// CIHigh bound it at the requested confidence, widened for
	// autocorrelation (AR(1) effective sample size).
	SlopePerHour, CILow, CIHigh float64
	// Rho is the lag-1 autocorrelation of the residuals used to widen the
	// interval (0 for independent noise).
	Rho float64
	// ChangeAt is the start of the largest detected shift, nil when none was
	// found; ChangeDelta is its size (after − before) in series units.
	ChangeAt    *time.Time
	ChangeDelta float64
	// Changes lists every detected shift in time order.
	Changes []Change
	// Significant is true when a change point was found, or when the slope
	// differs from zero at level Alpha and the fitted drift over the whole
	// span is at least MinChangePct of the mean.
	Significant bool
}

// Drift fits a line to a per-interval series (per-minute mean or p95
// latency, for instance) and looks for shifts in its level.
//
// The slope has a confidence interval that stays honest under
// autocorrelation (see fitSlope). Change points come from binary
// segmentation with a rank CUSUM test whose variance is a long-run estimate
// (AR(1) approximation, so autocorrelation is not mistaken for a shift),
// compared with the Kolmogorov distribution of the supremum of a Brownian
// bridge; see docs/analysis-methods.md. Points are taken in time order and
// are assumed roughly evenly spaced; NaN values are skipped.
func Drift(points []core.Point, opt DriftOptions) (DriftResult, error) {
	ps := clean(points)
	n := len(ps)
	if n < 3 {
		return DriftResult{N: n}, fmt.Errorf("drift: %d finite points, need at least 3: %w", n, ErrTooFewPoints)
	}
	o := opt.withDefaults(n)
	x := hours(ps, ps[0].T)
	y := values(ps)
	r := DriftResult{N: n, Start: ps[0].T, End: ps[n-1].T, Mean: stat.Mean(y, nil)}
	f := fitSlope(x, y)
	r.SlopePerHour, r.Rho = f.slope, f.rho
	r.CILow, r.CIHigh = f.ci(o.Confidence)

	minAbs := o.MinChangePct / 100 * math.Abs(r.Mean)
	r.Changes = changePoints(ps, y, o, minAbs)
	if len(r.Changes) > 0 {
		big := 0
		for i, c := range r.Changes {
			if math.Abs(c.Delta) > math.Abs(r.Changes[big].Delta) {
				big = i
			}
		}
		at := r.Changes[big].At
		r.ChangeAt, r.ChangeDelta = &at, r.Changes[big].Delta
	}
	span := x[n-1] - x[0]
	// The alarm uses the test level Alpha, not the display level: a 95 %
	// interval excludes a zero slope in one flat soak out of twenty.
	lo, hi := f.ci(1 - o.Alpha)
	slopeSig := (lo > 0 || hi < 0) && math.Abs(f.slope)*span >= minAbs
	r.Significant = len(r.Changes) > 0 || slopeSig
	return r, nil
}

// changePoints runs binary segmentation: it tests every segment not yet
// split, splits the one with the smallest p-value below Alpha, and repeats.
// Only the first test guards a series with no change at all, so the
// false-alarm rate on a flat series is Alpha (asymptotically); later tests
// refine a series already known to move. Shifts smaller than minAbs are then
// dropped, smallest first, recomputing the neighbours' means each time.
func changePoints(ps []core.Point, y []float64, o DriftOptions, minAbs float64) []Change {
	n := len(y)
	type seg struct{ lo, hi int }
	segs := []seg{{0, n}}
	splits := []int{}
	pv := map[int]float64{}
	for len(splits) < o.MaxChanges {
		best, bestK, bestP := -1, 0, 1.0
		for i, s := range segs {
			if s.hi-s.lo < 2*o.MinSegment {
				continue
			}
			k, p := cusumTest(y[s.lo:s.hi], o.MinSegment)
			if k > 0 && p < o.Alpha && p < bestP {
				best, bestK, bestP = i, s.lo+k, p
			}
		}
		if best < 0 {
			break
		}
		s := segs[best]
		segs = append(segs[:best], append([]seg{{s.lo, bestK}, {bestK, s.hi}}, segs[best+1:]...)...)
		splits = append(splits, bestK)
		pv[bestK] = bestP
	}
	sort.Ints(splits)
	for {
		cs := describe(ps, y, splits, pv)
		small := -1
		for i, c := range cs {
			if math.Abs(c.Delta) < minAbs && (small < 0 || math.Abs(c.Delta) < math.Abs(cs[small].Delta)) {
				small = i
			}
		}
		if small < 0 {
			return cs
		}
		splits = append(splits[:small], splits[small+1:]...)
	}
}

// describe turns sorted split indices into Changes with segment means.
func describe(ps []core.Point, y []float64, splits []int, pv map[int]float64) []Change {
	if len(splits) == 0 {
		return nil
	}
	bounds := append(append([]int{0}, splits...), len(y))
	cs := make([]Change, len(splits))
	for i, k := range splits {
		before := stat.Mean(y[bounds[i]:k], nil)
		after := stat.Mean(y[k:bounds[i+2]], nil)
		cs[i] = Change{At: ps[k].T, Index: k, Before: before, After: after, Delta: after - before, P: pv[k]}
	}
	return cs
}

// cusumTest looks for one shift in the level of y. It works on ranks, so a
// single spike minute (a GC pause, a network blip) moves the statistic by at
// most one rank instead of by its size. With u the centred ranks scaled to
// (−½, ½), S_k = Σ_{t≤k} u_t is a bridge (S_n = 0). Under no change and weak
// dependence, max|S_k| / √(n·σ²_LR) converges to the supremum of a Brownian
// bridge, whose tail is the Kolmogorov distribution. σ²_LR is the long-run
// variance of u (AR(1) approximation, see ar1LRV) measured around the two
// segment means at the candidate split, so a real shift does not inflate it
// and hide itself. A Bartlett-kernel estimate was tried first; it let 7 % of
// flat AR(1) φ=0.8 series through at a nominal 1 %.
//
// It returns the split k (the new level starts at y[k]; 0 when no candidate
// fits the minimum segment) and the p-value.
func cusumTest(y []float64, minSeg int) (k int, p float64) {
	m := len(y)
	if m < 2*minSeg || minSeg < 1 {
		return 0, 1
	}
	u := midRanks(y)
	for i := range u {
		u[i] = u[i]/float64(m+1) - 0.5
	}
	var s, best float64
	for i := 0; i < m-1; i++ {
		s += u[i]
		if i+1 >= minSeg && m-(i+1) >= minSeg && math.Abs(s) > best {
			best, k = math.Abs(s), i+1
		}
	}
	if k == 0 {
		return 0, 1
	}
	e := make([]float64, m)
	m1 := stat.Mean(u[:k], nil)
	m2 := stat.Mean(u[k:], nil)
	for i := range u {
		if i < k {
			e[i] = u[i] - m1
		} else {
			e[i] = u[i] - m2
		}
	}
	lrv := ar1LRV(e)
	if lrv <= 0 {
		// All ranks equal within each segment: a clean step (or a constant
		// series, which has no candidate because best would be 0).
		if best == 0 {
			return 0, 1
		}
		return k, 0
	}
	return k, kolmogorovQ(best / math.Sqrt(float64(m)*lrv))
}

// midRanks returns the 1-based ranks of y, ties sharing their mean rank.
func midRanks(y []float64) []float64 {
	idx := make([]int, len(y))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return y[idx[a]] < y[idx[b]] })
	r := make([]float64, len(y))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && y[idx[j+1]] == y[idx[i]] {
			j++
		}
		mid := float64(i+j)/2 + 1
		for t := i; t <= j; t++ {
			r[idx[t]] = mid
		}
		i = j + 1
	}
	return r
}

// kolmogorovQ is P(sup|B(t)| > x) for a Brownian bridge B, the survival
// function of the Kolmogorov distribution. For small x the alternating series
// converges slowly, so the dual (theta-function) form is used there.
func kolmogorovQ(x float64) float64 {
	switch {
	case x <= 0:
		return 1
	case x < 1:
		// P(K ≤ x) = √(2π)/x · Σ_{j≥1} exp(−(2j−1)²π²/(8x²))
		var s float64
		for j := 1; j <= 20; j++ {
			t := float64(2*j - 1)
			s += math.Exp(-t * t * math.Pi * math.Pi / (8 * x * x))
		}
		return math.Min(1, math.Max(0, 1-math.Sqrt(2*math.Pi)/x*s))
	default:
		var s float64
		for j := 1; j <= 100; j++ {
			term := math.Exp(-2 * float64(j*j) * x * x)
			if j%2 == 1 {
				s += term
			} else {
				s -= term
			}
			if term < 1e-17 {
				break
			}
		}
		return math.Min(1, math.Max(0, 2*s))
	}
}
