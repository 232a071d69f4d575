package knee

import (
	"errors"
	"fmt"
	"math"
)

// USL is a fitted Universal Scalability Law curve,
//
//	X(N) = λ·N / (1 + σ·(N−1) + κ·N·(N−1)),
//
// where N is concurrency, λ the throughput of one user without contention,
// σ the contention (serialised share of the work, 0 ≤ σ ≤ 1) and κ the
// coherency penalty (cost of keeping N workers consistent with each other,
// κ ≥ 0). With κ > 0 the curve peaks at N* = √((1−σ)/κ) and then falls.
type USL struct {
	Lambda float64 // requests per second per unit of N at N → 0
	Sigma  float64 // contention, in [0, 1]
	Kappa  float64 // coherency, ≥ 0
	// R2 is 1 − SSE/SST of the fit on throughput.
	R2 float64
	// PeakLoad is N* (+Inf when κ = 0) and PeakThroughputRPS is X(N*)
	// (λ/σ, the asymptote, when κ = 0 and σ > 0; +Inf for a straight line).
	PeakLoad, PeakThroughputRPS float64
}

// Throughput evaluates the fitted curve at concurrency n.
func (u USL) Throughput(n float64) float64 {
	return u.Lambda * n / (1 + u.Sigma*(n-1) + u.Kappa*n*(n-1))
}

// ErrFit is returned by FitUSL when the data cannot be fitted at all.
var ErrFit = errors.New("usl fit")

// FitUSL fits the Universal Scalability Law to (load, throughput) pairs by
// nonlinear least squares on throughput, with λ > 0, 0 ≤ σ ≤ 1 and κ ≥ 0.
// Repeated loads are welcome: each pair is one observation.
//
// For fixed σ and κ the model is linear in λ, so λ is solved in closed form
// and only (σ, κ) are searched: first on a grid (σ on a square-root scale
// so small contention is resolved; κ on a log scale relative to 1/max(N)²,
// plus κ = 0), then refined by compass search in the unconstrained
// coordinates σ = sin²a, κ = b²/max(N)², which keep the bounds without
// penalties. The grid makes the result independent of a starting guess; the
// sum of squares has long flat valleys between σ and κ, where a local method
// alone stops wherever it lands. (gonum's optimize package would pull in
// golang.org/x/tools through its CMA-ES code; two parameters do not need it.)
//
// FitUSL makes no judgement about whether the data support the fit; Analyze
// does that.
func FitUSL(loads, throughput []float64) (USL, error) {
	if len(loads) != len(throughput) {
		return USL{}, fmt.Errorf("%w: %d loads but %d throughputs", ErrFit, len(loads), len(throughput))
	}
	if len(loads) < 3 {
		return USL{}, fmt.Errorf("%w: %d points, need at least 3", ErrFit, len(loads))
	}
	var nmax, sx2, sx, n float64
	for i, l := range loads {
		x := throughput[i]
		if !(l > 0) || math.IsInf(l, 0) || !(x >= 0) || math.IsInf(x, 0) {
			return USL{}, fmt.Errorf("%w: point %d has load %v, throughput %v", ErrFit, i, l, x)
		}
		nmax = math.Max(nmax, l)
		sx2 += x * x
		sx += x
		n++
	}
	if sx2 == 0 {
		return USL{}, fmt.Errorf("%w: all throughputs are zero", ErrFit)
	}
	// sse returns the residual sum of squares with λ profiled out, scaled
	// by Σx² so the optimiser sees numbers near 1, and the best λ.
	sse := func(sigma, kappa float64) (float64, float64) {
		var sgx, sgg float64
		for i, l := range loads {
			d := 1 + sigma*(l-1) + kappa*l*(l-1)
			if !(d > 0) {
				return math.Inf(1), 0
			}
			g := l / d
			sgx += g * throughput[i]
			sgg += g * g
		}
		if sgg == 0 {
			return math.Inf(1), 0
		}
		return (sx2 - sgx*sgx/sgg) / sx2, sgx / sgg
	}
	bestS, bestK, bestF := 0.0, 0.0, math.Inf(1)
	for i := 0; i <= 100; i++ {
		sigma := float64(i*i) / 1e4
		for j := -1; j <= 80; j++ {
			kappa := 0.0
			if j >= 0 {
				kappa = math.Pow(10, -4+float64(j)*0.1) / (nmax * nmax) // 1e-4 … 1e4 / N²
			}
			if f, _ := sse(sigma, kappa); f < bestF {
				bestS, bestK, bestF = sigma, kappa, f
			}
		}
	}
	if math.IsInf(bestF, 1) {
		return USL{}, fmt.Errorf("%w: no admissible parameters", ErrFit)
	}
	toParams := func(p [2]float64) (float64, float64) {
		s := math.Sin(p[0])
		return s * s, p[1] * p[1] / (nmax * nmax)
	}
	p := [2]float64{math.Asin(math.Sqrt(bestS)), math.Sqrt(bestK) * nmax}
	p, bestF = compass(func(p [2]float64) float64 {
		f, _ := sse(toParams(p))
		return f
	}, p, bestF)
	bestS, bestK = toParams(p)
	f, lambda := sse(bestS, bestK)
	mean := sx / n
	var sst float64
	for _, x := range throughput {
		sst += (x - mean) * (x - mean)
	}
	u := USL{Lambda: lambda, Sigma: bestS, Kappa: bestK, R2: 1}
	if sst > 0 {
		u.R2 = 1 - f*sx2/sst
	}
	switch {
	case bestK > 0:
		u.PeakLoad = math.Sqrt((1 - bestS) / bestK)
		u.PeakThroughputRPS = u.Throughput(u.PeakLoad)
	case bestS > 0:
		u.PeakLoad, u.PeakThroughputRPS = math.Inf(1), lambda/bestS
	default:
		u.PeakLoad, u.PeakThroughputRPS = math.Inf(1), math.Inf(1)
	}
	return u, nil
}

// compass minimises f from p (where f(p) = fp) by compass search: try a
// step along each axis in both directions, move on improvement, halve the
// step when none improves. It stops when the step is below 1e-9 or after
// 10,000 evaluations, and returns the best point and value.
func compass(f func([2]float64) float64, p [2]float64, fp float64) ([2]float64, float64) {
	step := 0.1
	for evals := 0; step > 1e-9 && evals < 10000; {
		moved := false
		for axis := range 2 {
			for _, dir := range []float64{1, -1} {
				q := p
				q[axis] += dir * step
				evals++
				if fq := f(q); fq < fp {
					p, fp, moved = q, fq, true
					break
				}
			}
		}
		if !moved {
			step /= 2
		}
	}
	return p, fp
}
