package compare

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// newHist is the engine's geometry: 1 µs … 1 h, 3 significant digits.
func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(1, 3_600_000_000, 3) }

// run simulates one load-test run: intervals of perInterval log-normal
// latencies (median medianMs, shape sigma), scaled by factor, and, when
// wander > 0, by a slowly wandering per-interval level (AR(1), φ = 0.9,
// marginal sd wander on the log scale) as real runs do. It records into an
// HDR histogram in µs and keeps the per-interval means.
func run(rng *rand.Rand, intervals, perInterval int, medianMs, sigma, factor, wander float64) Run {
	h := newHist()
	iv := make([]Interval, intervals)
	w := rng.NormFloat64() * wander
	mu := math.Log(medianMs * 1000 * factor)
	for i := range iv {
		w = 0.9*w + rng.NormFloat64()*wander*math.Sqrt(1-0.81)
		var sum float64
		for range perInterval {
			v := math.Exp(mu + w + sigma*rng.NormFloat64())
			if err := h.RecordValue(int64(v)); err != nil {
				panic(err)
			}
			sum += v / 1000
		}
		iv[i] = Interval{Count: int64(perInterval), MeanMs: sum / float64(perInterval)}
	}
	return Run{Hist: h, Intervals: iv}
}

// TestPlantedSlowdown: 20k samples per run (400 one-second intervals of 50),
// log-normal latencies around 100 ms, either pure sampling noise or with a
// 3 % wander between intervals (AR(1), φ = 0.9) as real runs show. A 5 %
// slowdown must be called slower; an unchanged build must not be called
// anything, over many seeds.
func TestPlantedSlowdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		wander    float64
		seeds     int
		minDetect int // percent
	}{
		{"sampling-only", 0, 40, 95},
		{"wander", 0.03, 60, 90},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var detected, falsePos, falsePosStat, falsePosIID int
			for seed := range uint64(tc.seeds) {
				rng := rand.New(rand.NewPCG(seed, 42))
				base := run(rng, 400, 50, 100, 0.5, 1, tc.wander)
				slow := run(rng, 400, 50, 100, 0.5, 1.05, tc.wander)
				same := run(rng, 400, 50, 100, 0.5, 1, tc.wander)

				r, err := Latency(base, slow, Options{Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict == Slower && r.MeanSignificant {
					detected++
				} else {
					t.Logf("seed %d: 5%% slowdown: %s, mean %+.2f%% [%.2f, %.2f] ms, deff %.2f", seed, r.Verdict, r.DeltaPct, r.MeanCILowMs, r.MeanCIHighMs, r.DesignEffect)
				}
				if r.CliffsDelta <= 0 || r.CommonLanguage <= 0.5 {
					t.Errorf("seed %d: slowdown with Cliff's δ %.3f, CLES %.3f", seed, r.CliffsDelta, r.CommonLanguage)
				}

				r, err = Latency(base, same, Options{Seed: seed})
				if err != nil {
					t.Fatal(err)
				}
				if r.Significant {
					falsePos++
				}
				// The statistical layer alone, with and without the
				// run-to-run allowance.
				r, _ = Latency(base, same, Options{Seed: seed, MinEffectPct: -1})
				if r.MeanSignificant {
					falsePosStat++
				}
				r, _ = Latency(Run{Hist: base.Hist}, Run{Hist: same.Hist}, Options{MinEffectPct: -1})
				if r.MeanSignificant {
					falsePosIID++
				}
			}
			n := tc.seeds
			t.Logf("5%% slowdown detected %d/%d; 0%% change flagged %d/%d (default), %d/%d (no minimum effect), %d/%d (no minimum effect, no interval data)",
				detected, n, falsePos, n, falsePosStat, n, falsePosIID, n)
			if detected*100 < tc.minDetect*n {
				t.Errorf("5%% slowdown detected in %d/%d seeds, want ≥ %d%%", detected, n, tc.minDetect)
			}
			if falsePos*100 >= 5*n {
				t.Errorf("0%% change flagged in %d/%d seeds, want < 5%%", falsePos, n)
			}
			if falsePosStat*100 > 10*n {
				t.Errorf("mean test alone flagged %d/%d unchanged runs, want ≤ 10%% at a 5%% level", falsePosStat, n)
			}
		})
	}
}

func TestSmallChangeBelowPracticalThreshold(t *testing.T) {
	t.Parallel()
	// 2 % slower with 200k samples and no wander: statistically clear, but
	// below the default 3 % practical threshold.
	rng := rand.New(rand.NewPCG(1, 1))
	base := run(rng, 1000, 200, 50, 0.4, 1, 0)
	cand := run(rng, 1000, 200, 50, 0.4, 1.02, 0)
	r, err := Latency(base, cand, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.MeanCILowMs <= 0 {
		t.Errorf("2%% with 200k samples should be statistically clear: CI [%.3f, %.3f]", r.MeanCILowMs, r.MeanCIHighMs)
	}
	if r.Verdict != NoChange || r.Significant {
		t.Errorf("verdict %s, want no significant change below 3%%", r.Verdict)
	}
	r, _ = Latency(base, cand, Options{MinEffectPct: 1})
	if r.Verdict != Slower {
		t.Errorf("with a 1%% threshold: verdict %s, want slower", r.Verdict)
	}
	if math.Abs(r.DeltaPct-2) > 0.5 {
		t.Errorf("delta %.2f%%, want ≈ 2%%", r.DeltaPct)
	}
}

func TestFasterAndMixed(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(2, 2))
	base, fast := newHist(), newHist()
	mixed := newHist()
	for range 20000 {
		_ = base.RecordValue(int64(1000 * (100 + 10*rng.NormFloat64())))
		_ = fast.RecordValue(int64(1000 * (80 + 8*rng.NormFloat64())))
		// A faster body with a slow tail: mean −12 %, p95 +70 %.
		if rng.Float64() < 0.07 {
			_ = mixed.RecordValue(int64(1000 * (200 + 5*rng.NormFloat64())))
		} else {
			_ = mixed.RecordValue(int64(1000 * (80 + 8*rng.NormFloat64())))
		}
	}
	r, err := Latency(Run{Hist: base}, Run{Hist: fast}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Faster || r.CliffsDelta > -0.8 || r.RankP > 1e-6 {
		t.Errorf("faster: verdict %s, δ %.3f, p %.2g", r.Verdict, r.CliffsDelta, r.RankP)
	}
	if math.Abs(r.DeltaPct+20) > 1 || math.Abs(r.P95DeltaPct+20) > 2 {
		t.Errorf("faster: mean %+.1f%%, p95 %+.1f%%, want ≈ −20%%", r.DeltaPct, r.P95DeltaPct)
	}
	r, _ = Latency(Run{Hist: base}, Run{Hist: mixed}, Options{})
	if r.Verdict != Slower || !r.P95Significant || r.DeltaMs >= 0 || !r.Mixed {
		t.Errorf("mixed: verdict %s, mean %+.1f%%, p95 %+.1f%%, mixed %v", r.Verdict, r.DeltaPct, r.P95DeltaPct, r.Mixed)
	}
}

// TestMannWhitneyOracle checks U from bucket counts against the definition
// on raw samples. Values below 2048 µs have their own bucket at 3
// significant digits, so the histogram is exact and ties are real.
func TestMannWhitneyOracle(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 3))
		var xs, ys []int64
		hx, hy := newHist(), newHist()
		for range 1 + rng.IntN(80) {
			v := int64(1 + rng.IntN(30))
			xs = append(xs, v)
			_ = hx.RecordValue(v)
		}
		for range 1 + rng.IntN(80) {
			v := int64(1 + rng.IntN(30) + rng.IntN(3))
			ys = append(ys, v)
			_ = hy.RecordValue(v)
		}
		var u float64
		for _, y := range ys {
			for _, x := range xs {
				switch {
				case y > x:
					u++
				case y == x:
					u += 0.5
				}
			}
		}
		// Tie-corrected variance by definition.
		counts := map[int64]float64{}
		for _, v := range append(append([]int64{}, xs...), ys...) {
			counts[v]++
		}
		n1, n2 := float64(len(xs)), float64(len(ys))
		n := n1 + n2
		var ties float64
		for _, c := range counts {
			ties += c*c*c - c
		}
		sd := math.Sqrt(n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1))))
		got := mannWhitney(hx, hy)
		if got.u != u || math.Abs(got.sd-sd) > 1e-9 || math.Abs(got.cles-u/(n1*n2)) > 1e-12 {
			t.Errorf("seed %d: got U=%v sd=%v, want U=%v sd=%v", seed, got.u, got.sd, u, sd)
		}
	}
}

func TestQuantileSE(t *testing.T) {
	t.Parallel()
	// Normal(100 ms, 10 ms), n = 40000: SE(p95) = √(p(1−p)/n)/φ(z95)·σ.
	rng := rand.New(rand.NewPCG(4, 4))
	h := newHist()
	const n = 40000
	for range n {
		_ = h.RecordValue(int64(1000 * (100 + 10*rng.NormFloat64())))
	}
	z := 1.6448536
	want := math.Sqrt(0.95*0.05/n) / (math.Exp(-z*z/2) / math.Sqrt(2*math.Pi)) * 10
	if got := quantileSE(h, 0.95); math.Abs(got-want)/want > 0.25 {
		t.Errorf("quantileSE = %.4f ms, want %.4f ± 25%%", got, want)
	}
}

func TestLatencyErrorsAndDeterminism(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 5))
	a := run(rng, 50, 20, 10, 0.3, 1, 0.05)
	b := run(rng, 50, 20, 10, 0.3, 1, 0.05)
	if _, err := Latency(Run{}, b, Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("nil baseline: err = %v", err)
	}
	if _, err := Latency(a, Run{Hist: newHist()}, Options{}); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty candidate: err = %v", err)
	}
	r1, _ := Latency(a, b, Options{Seed: 9})
	r2, _ := Latency(a, b, Options{Seed: 9})
	if r1 != r2 {
		t.Errorf("same seed, different results:\n%+v\n%+v", r1, r2)
	}
	if !r1.Bootstrap || r1.BaseSeconds != 50 || r1.NewSeconds != 50 {
		t.Errorf("bootstrap %v over %d + %d intervals, want 50 + 50", r1.Bootstrap, r1.BaseSeconds, r1.NewSeconds)
	}
	// Too few intervals fall back to independent samples.
	r3, _ := Latency(Run{Hist: a.Hist, Intervals: a.Intervals[:5]}, b, Options{})
	if r3.DesignEffect != 1 || r3.Bootstrap {
		t.Errorf("5 intervals: deff %v, bootstrap %v", r3.DesignEffect, r3.Bootstrap)
	}
}

// TestNotEnoughData: a doubling of latency on too few requests, or over
// too few seconds, gets no verdict (NotEnough, nothing significant); the
// same doubling with MinSamples over MinSeconds is slower.
func TestNotEnoughData(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct {
		name                 string
		intervals, perInterv int
		want                 Verdict
	}{
		{"few requests", 20, 1, NotEnough},                                         // 20 < MinSamples
		{"few seconds", MinSeconds - 1, 100, NotEnough},                            // 900 requests in 9 s
		{"enough", MinSeconds, (MinSamples + MinSeconds - 1) / MinSeconds, Slower}, // 30 in 10 s
	} {
		base := run(rng, c.intervals, c.perInterv, 100, 0.2, 1, 0)
		cand := run(rng, c.intervals, c.perInterv, 100, 0.2, 2, 0)
		r, err := Latency(base, cand, Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if r.Verdict != c.want || r.Significant != (c.want == Slower) || (c.want == NotEnough && (r.MeanSignificant || r.P95Significant)) {
			t.Errorf("%s: verdict %q (significant %v, mean %v, p95 %v), want %q", c.name, r.Verdict, r.Significant, r.MeanSignificant, r.P95Significant, c.want)
		}
	}
}
