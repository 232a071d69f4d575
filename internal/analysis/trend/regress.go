// Package trend finds slow changes over a long run: latency drift with the
// time a shift started, memory growth after garbage collection, and the level
// of a resource before, during and after a window.
//
// Every function is pure: it takes core.Point series (NaN marks a gap and is
// skipped) and returns a plain result struct. Nothing here reads files or
// knows how runs are stored. The methods, their assumptions and their limits
// are described in docs/analysis-methods.md.
package trend

import (
	"errors"
	"math"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ErrTooFewPoints is returned when a series has too few finite values for the
// requested analysis.
var ErrTooFewPoints = errors.New("too few points")

// clean returns the finite points of ps sorted by time. It copies, so the
// caller's slice is never reordered.
func clean(ps []core.Point) []core.Point {
	out := make([]core.Point, 0, len(ps))
	for _, p := range ps {
		if math.IsNaN(p.V) || math.IsInf(p.V, 0) || p.T.IsZero() {
			continue
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].T.Before(out[j].T) })
	return out
}

// hours returns the time of each point in hours since t0.
func hours(ps []core.Point, t0 time.Time) []float64 {
	x := make([]float64, len(ps))
	for i, p := range ps {
		x[i] = p.T.Sub(t0).Hours()
	}
	return x
}

func values(ps []core.Point) []float64 {
	y := make([]float64, len(ps))
	for i, p := range ps {
		y[i] = p.V
	}
	return y
}

// slopeFit is an OLS line with a heteroskedasticity- and
// autocorrelation-consistent (HAC) confidence interval for its slope.
type slopeFit struct {
	intercept, slope float64
	lo, hi           float64 // CI for slope
	se               float64
	lag              int // Bartlett bandwidth actually used
}

// fitSlope fits y = a + b·x by ordinary least squares and bounds b with a
// Newey–West standard error. Per-minute latencies are autocorrelated (a slow
// minute is followed by another), so the textbook OLS interval, which assumes
// independent residuals, is too narrow and would call noise a trend. The
// Newey–West estimator adds the residual autocovariances up to a lag chosen
// from the data (Andrews' AR(1) plug-in rule for the Bartlett kernel), and the
// interval uses Student's t with n−2 degrees of freedom.
func fitSlope(x, y []float64, confidence float64) slopeFit {
	n := len(x)
	a, b := stat.LinearRegression(x, y, nil, false)
	f := slopeFit{intercept: a, slope: b}
	xm := stat.Mean(x, nil)
	var sxx float64
	u := make([]float64, n)
	for i := range x {
		d := x[i] - xm
		sxx += d * d
		u[i] = y[i] - a - b*x[i]
	}
	if n < 3 || sxx == 0 {
		f.lo, f.hi = math.Inf(-1), math.Inf(1)
		f.se = math.Inf(1)
		return f
	}
	f.lag = andrewsLag(u)
	// Score series of the slope: (x−x̄)·u.
	s := make([]float64, n)
	for i := range x {
		s[i] = (x[i] - xm) * u[i]
	}
	v := bartlettLRV(s, f.lag) * float64(n) // Σ_t Σ_s w·s_t·s_s
	// Small-sample correction for the two fitted parameters.
	v *= float64(n) / float64(n-2)
	f.se = math.Sqrt(v) / sxx
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 2)}.Quantile(0.5 + confidence/2)
	f.lo, f.hi = b-t*f.se, b+t*f.se
	return f
}

// andrewsLag is Andrews' (1991) data-dependent bandwidth for the Bartlett
// kernel under an AR(1) approximation of e: 1.1447·(α·n)^(1/3) with
// α = 4ρ²/((1−ρ)²(1+ρ)²). The first-order autocorrelation is clamped to ±0.97
// so a near-unit-root series cannot ask for a bandwidth beyond the data.
func andrewsLag(e []float64) int {
	n := len(e)
	if n < 3 {
		return 0
	}
	rho := lag1(e)
	rho = math.Max(-0.97, math.Min(0.97, rho))
	alpha := 4 * rho * rho / ((1 - rho) * (1 - rho) * (1 + rho) * (1 + rho))
	l := int(math.Ceil(1.1447 * math.Cbrt(alpha*float64(n))))
	return min(max(l, 0), n-1)
}

// lag1 is the first-order autocorrelation of e (about its mean).
func lag1(e []float64) float64 {
	m := stat.Mean(e, nil)
	var num, den float64
	for i := range e {
		d := e[i] - m
		den += d * d
		if i > 0 {
			num += d * (e[i-1] - m)
		}
	}
	if den == 0 {
		return 0
	}
	return num / den
}

// bartlettLRV is the long-run variance of the mean-zero series s (already
// centred by construction), Σ_{|l|≤L} (1−|l|/(L+1))·γ_l with γ_l the lag-l
// autocovariance divided by n. It is never negative: Bartlett weights keep
// the estimate positive semi-definite.
func bartlettLRV(s []float64, lag int) float64 {
	n := len(s)
	var v float64
	for i := range s {
		v += s[i] * s[i]
	}
	for l := 1; l <= lag; l++ {
		var g float64
		for i := l; i < n; i++ {
			g += s[i] * s[i-l]
		}
		v += 2 * (1 - float64(l)/float64(lag+1)) * g
	}
	return math.Max(v/float64(n), 0)
}
