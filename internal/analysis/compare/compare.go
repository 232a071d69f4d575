// Package compare answers "did this release get faster or slower, and is the
// difference real?". It compares two latency distributions stored as HDR
// histograms (values in microseconds), with an allowance for run-to-run
// noise and a minimum practical effect; evaluates --fail-on rules for CI;
// and summarises several runs side by side with their spread.
//
// It is pure: no I/O, no knowledge of run directories. The methods are
// described in docs/analysis-methods.md.
package compare

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
	"gonum.org/v1/gonum/stat/distuv"
)

// Verdict is the one-word outcome of a comparison.
type Verdict string

// Verdicts, as written to summary.json.
const (
	Faster   Verdict = "faster"
	Slower   Verdict = "slower"
	NoChange Verdict = "no significant change"
	// NotEnough is a comparison whose sides hold fewer than MinSamples
	// requests or MinSeconds seconds with requests: no verdict either
	// way, whatever the intervals say.
	NotEnough Verdict = "not enough data"
)

// The least data a comparison verdict rests on, on each side: a few
// requests or a few seconds show neither a change nor its absence.
const (
	MinSamples = 30
	MinSeconds = 10
)

// Interval is one recording interval of a run (the engine's 1-second
// histograms): how many samples it holds and their mean, in milliseconds.
type Interval struct {
	Count  int64
	MeanMs float64
}

// Run is one side of a comparison.
type Run struct {
	// Hist is the latency distribution of the label and phase, values in
	// microseconds. It is only read.
	Hist *hdrhistogram.Histogram
	// Intervals are the per-interval counts and means in time order;
	// optional. With at least MinIntervals on both sides they measure how
	// much the run wandered beyond sampling noise.
	Intervals []Interval
}

// DefaultMinEffectPct is the smallest change, in percent of the baseline,
// called faster or slower by default; the report's sentences read it.
const DefaultMinEffectPct = 3

// Options tunes Latency. The zero value selects every default.
type Options struct {
	// MinEffectPct is the smallest change, in percent of the baseline, that
	// is called faster or slower; default 3. Repeated runs of one build on
	// one environment typically differ by a few per cent (deployment, cache
	// and neighbour effects no within-run statistic can see), so smaller
	// differences are not worth a release engineer's attention even when
	// they are statistically detectable. Set it from the spread of repeats
	// (Summarize) when you have them; a negative value disables it.
	MinEffectPct float64
	// Confidence is the two-sided level of the intervals; default 0.95.
	Confidence float64
	// Resamples is the number of block-bootstrap resamples; default 1000.
	Resamples int
	// Seed makes the bootstrap reproducible; the same inputs and seed give
	// the same result.
	Seed uint64
}

// MinIntervals is the fewest non-empty intervals per run for the block
// bootstrap; with fewer the design effect is taken as 1.
const MinIntervals = 10

func (o Options) withDefaults() Options {
	if o.MinEffectPct == 0 {
		o.MinEffectPct = DefaultMinEffectPct
	}
	if o.MinEffectPct < 0 {
		o.MinEffectPct = 0
	}
	if o.Confidence <= 0 || o.Confidence >= 1 {
		o.Confidence = 0.95
	}
	if o.Resamples <= 0 {
		o.Resamples = 1000
	}
	return o
}

// Result compares a baseline run with a candidate. Times are milliseconds;
// deltas are candidate − baseline, percentages relative to the baseline.
type Result struct {
	// BaseCount and NewCount are the samples in each histogram.
	BaseCount, NewCount int64

	BaseMeanMs, NewMeanMs float64
	DeltaMs, DeltaPct     float64
	// MeanCILowMs and MeanCIHighMs bound DeltaMs.
	MeanCILowMs, MeanCIHighMs float64
	MeanSignificant           bool

	BaseP95Ms, NewP95Ms     float64
	P95DeltaMs, P95DeltaPct float64
	// P95CILowMs and P95CIHighMs bound P95DeltaMs.
	P95CILowMs, P95CIHighMs float64
	P95Significant          bool

	// CommonLanguage is P(new > base) + ½·P(tie): the chance that a random
	// request of the candidate is slower than a random request of the
	// baseline (0.5 = no shift). CliffsDelta is P(new > base) −
	// P(new < base), in [−1, 1]; |δ| < 0.147 is conventionally negligible,
	// < 0.33 small, < 0.474 medium.
	CommonLanguage, CliffsDelta float64
	// RankZ and RankP are the Mann–Whitney test (ties corrected), with the
	// variance scaled by DesignEffect.
	RankZ, RankP float64

	// DesignEffect is how much run-to-run (between-interval) variation
	// inflates the variance of the mean beyond independent sampling, from
	// a block bootstrap over the intervals; 1 when no intervals were given.
	// All three tests use it.
	DesignEffect float64
	// Bootstrap says the noise model is the block bootstrap over the
	// intervals (BaseSeconds + NewSeconds of them); false: independent
	// samples (no or too few per-interval data).
	Bootstrap bool

	// BaseSeconds and NewSeconds are the intervals with samples on each
	// side; 0 when none were given.
	BaseSeconds, NewSeconds int

	// Significant is true when Verdict is Faster or Slower.
	Significant bool
	Verdict     Verdict
	// Mixed: the mean and the p95 moved apart, one significantly slower
	// and the other significantly faster (the verdict is Slower: a
	// regression in either counts).
	Mixed bool
}

// ErrEmpty is returned when a histogram is missing or holds no samples.
var ErrEmpty = errors.New("empty histogram")

// Latency compares the baseline's and the candidate's latency distributions.
//
// The mean difference gets a normal-theory interval from the histograms'
// means and variances (n is large: the central limit theorem holds even for
// skewed latencies), the p95 difference a distribution-free one from the
// order statistics around the 95th percentile of each histogram, and the
// Mann–Whitney U test is computed exactly from the bucket counts, ties and
// all. All three assume independent samples, which a load test is not: a
// run wanders (a slow minute, a GC storm), so the same build measured
// twice differs by more than sampling noise. When per-interval means are
// given, a circular block bootstrap over intervals measures that wander,
// every variance is multiplied by the resulting design effect, and the
// reference distribution becomes Student's t (see blockBootstrapSE).
//
// A statistic is significant when its interval excludes zero and its change
// is at least MinEffectPct of the baseline. The verdict is slower when the
// mean or the p95 is significantly slower, faster when one is significantly
// faster and neither is slower, and no significant change otherwise.
func Latency(base, cand Run, opt Options) (Result, error) {
	o := opt.withDefaults()
	if base.Hist == nil || base.Hist.TotalCount() == 0 {
		return Result{}, fmt.Errorf("compare: baseline: %w", ErrEmpty)
	}
	if cand.Hist == nil || cand.Hist.TotalCount() == 0 {
		return Result{}, fmt.Errorf("compare: candidate: %w", ErrEmpty)
	}
	r := Result{BaseCount: base.Hist.TotalCount(), NewCount: cand.Hist.TotalCount()}
	n1, n2 := float64(r.BaseCount), float64(r.NewCount)

	r.BaseMeanMs, r.NewMeanMs = base.Hist.Mean()/1000, cand.Hist.Mean()/1000
	r.DeltaMs = r.NewMeanMs - r.BaseMeanMs
	r.DeltaPct = pct(r.DeltaMs, r.BaseMeanMs)
	sd1, sd2 := base.Hist.StdDev()/1000, cand.Hist.StdDev()/1000
	seIID := math.Sqrt(sd1*sd1/n1 + sd2*sd2/n2)

	// ref is the reference distribution of every standardised difference:
	// normal for independent samples, Student's t when the noise comes
	// from a handful of bootstrap blocks.
	var ref interface {
		Quantile(float64) float64
		Survival(float64) float64
	} = distuv.UnitNormal
	r.DesignEffect = 1
	if b, df, ok := blockBootstrapSE(base.Intervals, cand.Intervals, o); ok {
		r.Bootstrap = true
		if seIID > 0 {
			r.DesignEffect = math.Max(1, b*b/(seIID*seIID))
		}
		ref = distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	}
	z := ref.Quantile(0.5 + o.Confidence/2)
	infl := math.Sqrt(r.DesignEffect)

	se := seIID * infl
	r.MeanCILowMs, r.MeanCIHighMs = r.DeltaMs-z*se, r.DeltaMs+z*se
	r.MeanSignificant = excludesZero(r.MeanCILowMs, r.MeanCIHighMs) && math.Abs(r.DeltaPct) >= o.MinEffectPct

	r.BaseP95Ms = float64(base.Hist.ValueAtQuantile(95)) / 1000
	r.NewP95Ms = float64(cand.Hist.ValueAtQuantile(95)) / 1000
	r.P95DeltaMs = r.NewP95Ms - r.BaseP95Ms
	r.P95DeltaPct = pct(r.P95DeltaMs, r.BaseP95Ms)
	se95 := math.Hypot(quantileSE(base.Hist, 0.95), quantileSE(cand.Hist, 0.95)) * infl
	r.P95CILowMs, r.P95CIHighMs = r.P95DeltaMs-z*se95, r.P95DeltaMs+z*se95
	r.P95Significant = excludesZero(r.P95CILowMs, r.P95CIHighMs) && math.Abs(r.P95DeltaPct) >= o.MinEffectPct

	mw := mannWhitney(base.Hist, cand.Hist)
	r.CommonLanguage, r.CliffsDelta = mw.cles, 2*mw.cles-1
	if mw.sd > 0 {
		r.RankZ = (mw.u - n1*n2/2) / (mw.sd * infl)
		r.RankP = 2 * ref.Survival(math.Abs(r.RankZ))
	} else {
		r.RankP = 1
	}

	r.BaseSeconds, r.NewSeconds = nonEmpty(base.Intervals), nonEmpty(cand.Intervals)
	if r.BaseCount < MinSamples || r.NewCount < MinSamples ||
		(base.Intervals != nil && r.BaseSeconds < MinSeconds) || (cand.Intervals != nil && r.NewSeconds < MinSeconds) {
		r.MeanSignificant, r.P95Significant = false, false
		r.Verdict = NotEnough
		return r, nil
	}
	slower := (r.MeanSignificant && r.DeltaMs > 0) || (r.P95Significant && r.P95DeltaMs > 0)
	faster := (r.MeanSignificant && r.DeltaMs < 0) || (r.P95Significant && r.P95DeltaMs < 0)
	switch {
	case slower:
		r.Verdict = Slower
		r.Mixed = faster
	case faster:
		r.Verdict = Faster
	default:
		r.Verdict = NoChange
	}
	r.Significant = r.Verdict == Slower || r.Verdict == Faster
	return r, nil
}

func excludesZero(lo, hi float64) bool { return lo > 0 || hi < 0 }

// pct is 100·d/base, +Inf (or −Inf) when base is 0 and d is not.
func pct(d, base float64) float64 {
	if base == 0 {
		if d == 0 {
			return 0
		}
		return math.Copysign(math.Inf(1), d)
	}
	return 100 * d / base
}

// quantileSE is the standard error of the p-quantile of h, in ms, without
// assuming a shape: the ranks n·p ± z·√(n·p(1−p)) bound the quantile with
// probability ≈ 95 % (binomial order statistics), so the distance between
// the values at those ranks is about 2·1.96 standard errors.
func quantileSE(h *hdrhistogram.Histogram, p float64) float64 {
	const z = 1.959964
	n := float64(h.TotalCount())
	d := z * math.Sqrt(p*(1-p)/n)
	lo := float64(h.ValueAtQuantile(100 * math.Max(0, p-d)))
	hi := float64(h.ValueAtQuantile(100 * math.Min(1, p+d)))
	return (hi - lo) / (2 * z) / 1000
}

func nonEmpty(iv []Interval) int {
	n := 0
	for _, i := range iv {
		if i.Count > 0 && !math.IsNaN(i.MeanMs) {
			n++
		}
	}
	return n
}

// blockBootstrapSE returns the standard error of (mean of cand − mean of
// base) from a circular block bootstrap over each run's intervals, the
// degrees of freedom that standard error carries, and false when either run
// has fewer than MinIntervals non-empty intervals.
//
// Each resample draws blocks of b = ⌈n/10⌉ consecutive intervals (wrapping
// at the end) until it has n intervals, and recomputes the count-weighted
// mean. Blocks keep the slow wander of a run inside each resample, so they
// must be long compared with it: latency wanders on the scale of tens of
// seconds to minutes, and on synthetic runs with a 10-second wander blocks
// of √n intervals let 8.5 % of unchanged runs through at a nominal 5 %,
// blocks of n/10 6 %. With only about ten independent blocks per run the
// variance estimate is itself uncertain, so intervals use Student's t with
// (blocks₁ − 1) + (blocks₂ − 1) degrees of freedom, as batch means do.
func blockBootstrapSE(base, cand []Interval, o Options) (se, df float64, ok bool) {
	a, b := compact(base), compact(cand)
	if len(a) < MinIntervals || len(b) < MinIntervals {
		return 0, 0, false
	}
	k := func(n int) float64 { return math.Ceil(float64(n) / float64(blockLen(n))) }
	df = k(len(a)) + k(len(b)) - 2
	rng := rand.New(rand.NewPCG(o.Seed, 0x0c0ffee))
	pa, pb := newCircular(a), newCircular(b)
	var sum, sum2 float64
	for range o.Resamples {
		d := pb.resampleMean(rng) - pa.resampleMean(rng)
		sum += d
		sum2 += d * d
	}
	m := sum / float64(o.Resamples)
	v := (sum2 - float64(o.Resamples)*m*m) / float64(o.Resamples-1)
	return math.Sqrt(math.Max(v, 0)), df, true
}

func compact(iv []Interval) []Interval {
	out := make([]Interval, 0, len(iv))
	for _, i := range iv {
		if i.Count > 0 && !math.IsNaN(i.MeanMs) && !math.IsInf(i.MeanMs, 0) {
			out = append(out, i)
		}
	}
	return out
}

// circular holds prefix sums of a run's intervals laid out twice, so the
// count and the latency sum of any wrapped block are two subtractions.
type circular struct {
	n, bl      int
	cnt, total []float64 // prefix sums over 2n intervals, with a leading 0
}

func newCircular(iv []Interval) circular {
	n := len(iv)
	c := circular{n: n, bl: blockLen(n), cnt: make([]float64, 2*n+1), total: make([]float64, 2*n+1)}
	for k := range 2 * n {
		i := iv[k%n]
		c.cnt[k+1] = c.cnt[k] + float64(i.Count)
		c.total[k+1] = c.total[k] + float64(i.Count)*i.MeanMs
	}
	return c
}

// resampleMean draws blocks of bl consecutive intervals from random starts
// until n intervals are taken and returns their count-weighted mean.
func (c circular) resampleMean(rng *rand.Rand) float64 {
	var cnt, sum float64
	for taken := 0; taken < c.n; {
		s := rng.IntN(c.n)
		l := min(c.bl, c.n-taken)
		cnt += c.cnt[s+l] - c.cnt[s]
		sum += c.total[s+l] - c.total[s]
		taken += l
	}
	return sum / cnt
}

// blocks is how many blocks a run's intervals are cut into for the
// bootstrap.
const blocks = 10

// blockLen is ⌈n/blocks⌉.
func blockLen(n int) int { return (n + blocks - 1) / blocks }
