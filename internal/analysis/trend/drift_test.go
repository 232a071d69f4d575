package trend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

var t0 = time.Date(2025, 3, 1, 8, 0, 0, 0, time.UTC)

// series is a synthetic per-minute series: level + slope·t + AR(1) noise with
// marginal standard deviation sd and lag-1 correlation phi, plus a step of
// size step from minute stepAt on (stepAt < 0: no step).
type series struct {
	n            int
	level, sd    float64
	phi          float64
	slopePerHour float64
	stepAt       int
	step         float64
}

func (s series) gen(seed uint64) []core.Point {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ps := make([]core.Point, s.n)
	innov := s.sd * math.Sqrt(1-s.phi*s.phi)
	e := rng.NormFloat64() * s.sd
	for i := range ps {
		if i > 0 {
			e = s.phi*e + rng.NormFloat64()*innov
		}
		v := s.level + s.slopePerHour*float64(i)/60 + e
		if s.stepAt >= 0 && i >= s.stepAt {
			v += s.step
		}
		ps[i] = core.Point{T: t0.Add(time.Duration(i) * time.Minute), V: v}
	}
	return ps
}

func TestDriftStepFoundWithinAMinute(t *testing.T) {
	t.Parallel()
	// A 10-hour soak of per-minute p95: 1000 ms ± 40 ms, +150 ms from 5 h 02 m.
	s := series{n: 600, level: 1000, sd: 40, stepAt: 302, step: 150}
	want := t0.Add(302 * time.Minute)
	const seeds = 50
	hit := 0
	for seed := range uint64(seeds) {
		r, err := Drift(s.gen(seed), DriftOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.ChangeAt == nil {
			t.Errorf("seed %d: no change found", seed)
			continue
		}
		if d := r.ChangeAt.Sub(want); d >= -time.Minute && d <= time.Minute {
			hit++
		} else {
			t.Logf("seed %d: change at %s, want %s", seed, r.ChangeAt.Sub(t0), want.Sub(t0))
		}
		if math.Abs(r.ChangeDelta-s.step) > 0.1*s.step {
			t.Errorf("seed %d: delta %.1f, want %.0f ± 10%%", seed, r.ChangeDelta, s.step)
		}
		if !r.Significant {
			t.Errorf("seed %d: step not significant", seed)
		}
	}
	t.Logf("change located within ±1 min in %d/%d seeds", hit, seeds)
	if hit < seeds*95/100 {
		t.Errorf("located within a minute in %d/%d seeds, want ≥ 95%%", hit, seeds)
	}
}

func TestDriftStepInAutocorrelatedNoise(t *testing.T) {
	t.Parallel()
	s := series{n: 600, level: 1000, sd: 40, phi: 0.5, stepAt: 302, step: 200}
	want := t0.Add(302 * time.Minute)
	const seeds = 50
	hit := 0
	for seed := range uint64(seeds) {
		r, err := Drift(s.gen(seed), DriftOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.ChangeAt != nil && r.ChangeAt.Sub(want).Abs() <= 3*time.Minute {
			hit++
		}
	}
	t.Logf("AR(1) φ=0.5: located within ±3 min in %d/%d seeds", hit, seeds)
	if hit < seeds*9/10 {
		t.Errorf("located in %d/%d seeds, want ≥ 90%%", hit, seeds)
	}
}

// TestDriftFalseAlarms measures how often a flat series raises an alarm, over
// 200 seeds each of white and autocorrelated noise. The change-point test
// alone (practical threshold off) must stay under 5 %, and so must the
// Significant flag with default options.
func TestDriftFalseAlarms(t *testing.T) {
	t.Parallel()
	const seeds = 200
	for _, tc := range []struct {
		name string
		s    series
	}{
		{"white", series{n: 600, level: 1000, sd: 100, stepAt: -1}},
		{"ar1-0.5", series{n: 600, level: 1000, sd: 100, phi: 0.5, stepAt: -1}},
		{"ar1-0.8", series{n: 600, level: 1000, sd: 100, phi: 0.8, stepAt: -1}},
		{"short-white", series{n: 60, level: 200, sd: 30, stepAt: -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var cps, sig, slope int
			for seed := range uint64(seeds) {
				ps := tc.s.gen(seed + 1000)
				raw, err := Drift(ps, DriftOptions{MinChangePct: -1})
				if err != nil {
					t.Fatal(err)
				}
				if raw.ChangeAt != nil {
					cps++
				}
				if raw.CILow > 0 || raw.CIHigh < 0 {
					slope++
				}
				def, err := Drift(ps, DriftOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if def.Significant {
					sig++
				}
			}
			t.Logf("%s: change-point alarms %d/%d, slope CI excluding 0 %d/%d, Significant %d/%d",
				tc.name, cps, seeds, slope, seeds, sig, seeds)
			if cps*100 >= 5*seeds {
				t.Errorf("change-point false-alarm rate %d/%d ≥ 5%%", cps, seeds)
			}
			if sig*100 >= 5*seeds {
				t.Errorf("Significant false-alarm rate %d/%d ≥ 5%%", sig, seeds)
			}
			// Slope CI coverage: a 95 % interval should exclude the true 0
			// about 5 % of the time; allow up to 10 % for the HAC estimator's
			// known small-sample optimism under strong autocorrelation.
			if slope*100 > 10*seeds {
				t.Errorf("slope interval excluded 0 in %d/%d seeds, want ≤ 10%%", slope, seeds)
			}
		})
	}
}

func TestDriftSlopeRecovered(t *testing.T) {
	t.Parallel()
	// +20 ms/h over 10 h in AR(1) noise: the CI must cover the truth in most
	// seeds and the drift must be called significant.
	s := series{n: 600, level: 500, sd: 20, phi: 0.5, slopePerHour: 20, stepAt: -1}
	const seeds = 50
	covered, sig := 0, 0
	for seed := range uint64(seeds) {
		r, err := Drift(s.gen(seed+7), DriftOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.CILow <= s.slopePerHour && s.slopePerHour <= r.CIHigh {
			covered++
		}
		if r.Significant {
			sig++
		}
	}
	t.Logf("slope 20 ms/h: covered %d/%d, significant %d/%d", covered, seeds, sig, seeds)
	if covered < seeds*88/100 {
		t.Errorf("CI covered the true slope in %d/%d seeds, want ≥ 88%%", covered, seeds)
	}
	if sig < seeds*95/100 {
		t.Errorf("drift significant in %d/%d seeds, want ≥ 95%%", sig, seeds)
	}
}

func TestDriftErrorsAndGaps(t *testing.T) {
	t.Parallel()
	if _, err := Drift([]core.Point{{T: t0, V: 1}, {T: t0.Add(time.Minute), V: math.NaN()}}, DriftOptions{}); err == nil {
		t.Error("two points with one NaN: want ErrTooFewPoints")
	}
	// Gaps and shuffled order must not change the answer.
	s := series{n: 120, level: 100, sd: 5, stepAt: 60, step: 40}
	ps := s.gen(3)
	ps[10].V = math.NaN()
	ps[0], ps[119] = ps[119], ps[0]
	r, err := Drift(ps, DriftOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.N != 119 {
		t.Errorf("N = %d, want 119 (one NaN skipped)", r.N)
	}
	if r.ChangeAt == nil || !r.ChangeAt.Equal(t0.Add(60*time.Minute)) {
		t.Errorf("ChangeAt = %v, want minute 60", r.ChangeAt)
	}
	// A constant series has no slope and no change.
	flat := make([]core.Point, 50)
	for i := range flat {
		flat[i] = core.Point{T: t0.Add(time.Duration(i) * time.Minute), V: 7}
	}
	r, err = Drift(flat, DriftOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Significant || r.ChangeAt != nil || r.SlopePerHour != 0 {
		t.Errorf("constant series: %+v", r)
	}
}

func TestKolmogorovQ(t *testing.T) {
	t.Parallel()
	// Tabulated quantiles of the Kolmogorov distribution.
	for _, c := range []struct{ x, p float64 }{
		{1.3581, 0.05}, {1.6276, 0.01}, {1.2238, 0.10}, {0.8276, 0.50},
	} {
		if got := kolmogorovQ(c.x); math.Abs(got-c.p) > 2e-4 {
			t.Errorf("Q(%v) = %.5f, want %.4f", c.x, got, c.p)
		}
	}
	// The two series forms agree where they meet.
	lo, hi := kolmogorovQ(math.Nextafter(1, 0)), kolmogorovQ(1)
	if math.Abs(lo-hi) > 1e-9 {
		t.Errorf("discontinuity at 1: %v vs %v", lo, hi)
	}
}

func TestMidRanks(t *testing.T) {
	t.Parallel()
	y := []float64{3, 1, 3, 2, 3, 0}
	want := []float64{5, 2, 5, 3, 5, 1}
	for i, r := range midRanks(y) {
		if r != want[i] {
			t.Fatalf("midRanks(%v) = %v, want %v", y, midRanks(y), want)
		}
	}
}
