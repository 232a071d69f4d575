package knee

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/quick"
	"time"
)

// uslPoints samples a known USL curve at loads 2, 4, …, 60 with relative
// Gaussian noise on throughput; mean latency follows Little's law.
func uslPoints(truth USL, noise float64, seed uint64) []Point {
	rng := rand.New(rand.NewPCG(seed, 1))
	var ps []Point
	for n := 2.0; n <= 60; n += 2 {
		x := truth.Throughput(n) * (1 + noise*rng.NormFloat64())
		ps = append(ps, Point{Load: n, ThroughputRPS: x, MeanMs: 1000 * n / x, P95Ms: 2000 * n / x, SLAMet: true})
	}
	return ps
}

func TestUSLRecovered(t *testing.T) {
	t.Parallel()
	truth := USL{Lambda: 100, Sigma: 0.05, Kappa: 0.001}
	wantPeak := math.Sqrt((1 - truth.Sigma) / truth.Kappa) // ≈ 30.8 users
	wantX := truth.Throughput(wantPeak)
	const seeds = 30
	var worstS, worstK, worstN float64
	for seed := range uint64(seeds) {
		r, err := Analyze(uslPoints(truth, 0.03, seed), Options{})
		if err != nil {
			t.Fatal(err)
		}
		u := r.USL
		if u == nil {
			t.Fatalf("seed %d: no USL: %+v", seed, r.USLSkip)
		}
		dS := math.Abs(u.Sigma - truth.Sigma)
		dK := math.Abs(u.Kappa-truth.Kappa) / truth.Kappa
		dN := math.Abs(u.PeakLoad-wantPeak) / wantPeak
		worstS, worstK, worstN = max(worstS, dS), max(worstK, dK), max(worstN, dN)
		if dS > 0.03 || dK > 0.25 || dN > 0.1 {
			t.Errorf("seed %d: σ=%.4f κ=%.5f N*=%.1f, want %.2f, %.4f, %.1f", seed, u.Sigma, u.Kappa, u.PeakLoad, truth.Sigma, truth.Kappa, wantPeak)
		}
		if math.Abs(u.PeakThroughputRPS-wantX)/wantX > 0.05 {
			t.Errorf("seed %d: peak throughput %.0f, want %.0f ± 5%%", seed, u.PeakThroughputRPS, wantX)
		}
		if u.R2 < 0.9 {
			t.Errorf("seed %d: R² %.3f", seed, u.R2)
		}
		if r.Knee == nil {
			t.Errorf("seed %d: no knee on a curve that peaks inside the range: %+v", seed, r.NoKnee)
		}
	}
	t.Logf("3%% noise, %d seeds: worst |Δσ| %.4f, |Δκ|/κ %.3f, |ΔN*|/N* %.3f", seeds, worstS, worstK, worstN)
}

func TestUSLExactCurve(t *testing.T) {
	t.Parallel()
	// Without noise the fit must land on the truth; also with repeats and
	// loads in any order.
	truth := USL{Lambda: 250, Sigma: 0.12, Kappa: 0.0004}
	var l, x []float64
	for _, n := range []float64{40, 1, 8, 16, 24, 32, 48, 64, 80, 8} {
		l = append(l, n)
		x = append(x, truth.Throughput(n))
	}
	u, err := FitUSL(l, x)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(u.Sigma-truth.Sigma) > 1e-4 || math.Abs(u.Kappa-truth.Kappa) > 1e-6 || math.Abs(u.Lambda-truth.Lambda) > 0.1 {
		t.Errorf("fit %+v, want λ=250 σ=0.12 κ=0.0004", u)
	}
	if u.R2 < 0.999999 {
		t.Errorf("R² = %v on an exact curve", u.R2)
	}
}

func TestLinearHasNoKneeAndNoFit(t *testing.T) {
	t.Parallel()
	// 3 % throughput noise on 2-user steps is harsher than a real sweep.
	for seed := range uint64(100) {
		rng := rand.New(rand.NewPCG(seed, 2))
		var ps []Point
		for n := 2.0; n <= 60; n += 2 {
			x := 100 * n * (1 + 0.03*rng.NormFloat64())
			ps = append(ps, Point{Load: n, ThroughputRPS: x, MeanMs: 10 * (1 + 0.03*rng.NormFloat64()), SLAMet: true})
		}
		r, err := Analyze(ps, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Knee != nil {
			t.Errorf("seed %d: knee %+v on a straight line", seed, *r.Knee)
		}
		if nk := r.NoKnee; nk == nil || nk.Outcome != Scaling || nk.Load != 60 {
			t.Errorf("seed %d: no knee %+v, want scaling up to 60 users", seed, nk)
		}
		if r.USL != nil {
			t.Errorf("seed %d: USL %+v on a straight line", seed, *r.USL)
		}
		if r.USLSkip == nil || r.USLSkip.Kind != USLNoSaturation {
			t.Errorf("seed %d: USL skip %+v, want no saturation", seed, r.USLSkip)
		}
		if r.MaxLoadMeetingSLA == nil || *r.MaxLoadMeetingSLA != 60 {
			t.Errorf("seed %d: max load meeting SLA %v, want 60", seed, r.MaxLoadMeetingSLA)
		}
	}
}

func TestAmdahlPlateauHasKneeButNoPeak(t *testing.T) {
	t.Parallel()
	// Pure contention (κ = 0): throughput approaches λ/σ = 1000 req/s and
	// never falls, so there is a knee but no USL peak.
	truth := USL{Lambda: 100, Sigma: 0.1}
	r, err := Analyze(uslPoints(truth, 0.01, 4), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Knee == nil {
		t.Fatalf("no knee: %+v", r.NoKnee)
	}
	if r.USL != nil {
		t.Errorf("USL %+v, want none (κ = 0)", *r.USL)
	}
	if w := r.USLSkip; w == nil || w.Kind != USLPeakBeyond || w.PeakThroughputRPS < 900 {
		t.Errorf("USL skip %+v, want the peak beyond the range, near 1000 req/s", w)
	}
}

// reference003 is the ServiceComb sweep: linear to ~1000 req/s at 15 users,
// flat after, average response time from 14 ms to 190 ms.
var reference003 = []Point{
	{Load: 1, ThroughputRPS: 71, MeanMs: 14, SLAMet: true},
	{Load: 5, ThroughputRPS: 357, MeanMs: 14, SLAMet: true},
	{Load: 10, ThroughputRPS: 714, MeanMs: 14, SLAMet: true},
	{Load: 15, ThroughputRPS: 1003, MeanMs: 14, SLAMet: true},
	{Load: 20, ThroughputRPS: 1010, MeanMs: 19.8, SLAMet: true},
	{Load: 50, ThroughputRPS: 1020, MeanMs: 49, SLAMet: true},
	{Load: 100, ThroughputRPS: 1030, MeanMs: 97, SLAMet: false},
	{Load: 200, ThroughputRPS: 1050, MeanMs: 190, SLAMet: false},
}

func TestKneeReference003(t *testing.T) {
	t.Parallel()
	r, err := Analyze(reference003, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if k := r.Knee; k == nil || k.Load != 15 || k.ThroughputRPS != 1003 || k.MeanMs != 14 || k.MaxLoad != 200 || k.MaxMeanMs != 190 ||
		math.Abs(k.Gain-(1050.0/1003-1)) > 1e-9 || k.MinGain != 0.05 {
		t.Fatalf("knee %+v", r.Knee)
	}
	if r.Knee.NextLoad != 20 || r.Knee.Gain >= 0.05 {
		t.Errorf("knee %+v", *r.Knee)
	}
	if r.MaxLoadMeetingSLA == nil || *r.MaxLoadMeetingSLA != 50 {
		t.Errorf("max load meeting SLA = %v, want 50", r.MaxLoadMeetingSLA)
	}
	for _, c := range r.Little {
		if c.Short {
			t.Errorf("load %v flagged short: %s", c.Load, c.Flag)
		}
	}
}

// TestKneeOnCleanUSLCurve is issue 14's case: on a clean USL curve (σ 0.1,
// κ 0.002, peak near N = 21) swept at 1/2/4/8/16/32 users, throughput still
// grows 78 % from 4 users to the peak, so the knee is not at 4: it is at
// 16, beyond which no load adds 5 %. The USL peak stays its own figure.
func TestKneeOnCleanUSLCurve(t *testing.T) {
	t.Parallel()
	u := USL{Lambda: 100, Sigma: 0.1, Kappa: 0.002}
	var ps []Point
	for _, n := range []float64{1, 2, 4, 8, 16, 32} {
		x := u.Throughput(n)
		ps = append(ps, Point{Load: n, ThroughputRPS: x, MeanMs: 1000 * n / x})
	}
	r, err := Analyze(ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Knee == nil || r.Knee.Load != 16 {
		t.Fatalf("knee %+v (%+v), want at 16 users", r.Knee, r.NoKnee)
	}
	if r.USL == nil || math.Abs(r.USL.PeakLoad-21.2) > 0.5 {
		t.Errorf("USL %+v, want its peak near 21 users", r.USL)
	}
}

// TestNeverStoppedWhileGrowing is the wording's promise as a property: on
// random sweeps, whenever a knee is named, no higher tested load added
// MinGain or more to its throughput.
func TestNeverStoppedWhileGrowing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 2000 {
		var ps []Point
		x, n := 10+rng.Float64()*100, 1.0
		for range 3 + rng.IntN(6) {
			n *= 1 + 0.2*float64(1+rng.IntN(5))
			x *= 1 + 0.3*rng.NormFloat64()
			x = math.Abs(x) + 1
			ps = append(ps, Point{Load: math.Round(n), ThroughputRPS: x, MeanMs: 1000 * n / x})
		}
		opt := Options{MinGain: 0.01 + 0.2*rng.Float64()}
		r, err := Analyze(ps, opt)
		if err != nil || r.Knee == nil {
			continue
		}
		for _, p := range r.Points {
			if p.Load > r.Knee.Load && p.ThroughputRPS >= r.Knee.ThroughputRPS*(1+opt.MinGain) {
				t.Fatalf("trial %d: knee at %v (%.1f req/s) but %v gives %.1f req/s (> +%.0f %%)", trial, r.Knee.Load, r.Knee.ThroughputRPS, p.Load, p.ThroughputRPS, 100*opt.MinGain)
			}
		}
	}
}

func TestKneeFineSweepSharpPlateau(t *testing.T) {
	t.Parallel()
	// 2-user steps, linear at 50 req/s per user up to 30 users, flat after;
	// closed model without think time, so latency = users / throughput.
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 5))
		var ps []Point
		for n := 2.0; n <= 60; n += 2 {
			x := 50 * math.Min(n, 30) * (1 + 0.01*rng.NormFloat64())
			ps = append(ps, Point{Load: n, ThroughputRPS: x, MeanMs: 1000 * n / x})
		}
		r, err := Analyze(ps, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Knee == nil || r.Knee.Load < 28 || r.Knee.Load > 32 {
			t.Errorf("seed %d: knee %+v (%+v), want at 30 ± 2", seed, r.Knee, r.NoKnee)
		}
	}
	// A stepped run stopped by its rule one step after the plateau.
	ps := []Point{
		{Load: 10, ThroughputRPS: 100, MeanMs: 100},
		{Load: 20, ThroughputRPS: 198, MeanMs: 101},
		{Load: 30, ThroughputRPS: 290, MeanMs: 103},
		{Load: 40, ThroughputRPS: 296, MeanMs: 135},
	}
	r, err := Analyze(ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Knee == nil || r.Knee.Load != 30 {
		t.Errorf("stepped run: knee %+v (%+v), want at 30", r.Knee, r.NoKnee)
	}
}

func TestKneeIgnoresRecoveredDip(t *testing.T) {
	t.Parallel()
	// Throughput dips at 20 users (noise) but scales again after: the knee
	// is at 40, where scaling really stops.
	ps := []Point{
		{Load: 10, ThroughputRPS: 500, MeanMs: 20},
		{Load: 20, ThroughputRPS: 560, MeanMs: 35},
		{Load: 30, ThroughputRPS: 1500, MeanMs: 20},
		{Load: 40, ThroughputRPS: 2000, MeanMs: 20},
		{Load: 50, ThroughputRPS: 2050, MeanMs: 24},
		{Load: 60, ThroughputRPS: 2040, MeanMs: 29},
	}
	r, err := Analyze(ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Knee == nil || r.Knee.Load != 40 {
		t.Fatalf("knee %+v (%+v), want at 40", r.Knee, r.NoKnee)
	}
	if r.MaxLoadMeetingSLA != nil {
		t.Errorf("no point met the SLA, got %v", *r.MaxLoadMeetingSLA)
	}
}

func TestGeneratorLimitIsNotAKnee(t *testing.T) {
	t.Parallel()
	// Throughput flat at 500 req/s from 20 users on, latency flat at 20 ms:
	// by Little's law only 10 users were ever busy.
	ps := []Point{
		{Load: 5, ThroughputRPS: 250, MeanMs: 20, SLAMet: true},
		{Load: 10, ThroughputRPS: 500, MeanMs: 20, SLAMet: true},
		{Load: 20, ThroughputRPS: 505, MeanMs: 20, SLAMet: true},
		{Load: 40, ThroughputRPS: 500, MeanMs: 20.5, SLAMet: true},
	}
	r, err := Analyze(ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Knee != nil {
		t.Errorf("knee %+v, want none", *r.Knee)
	}
	if nk := r.NoKnee; nk == nil || nk.Outcome != Stalled || nk.Stall != StallGenerator {
		t.Errorf("no knee %+v should blame the generator", nk)
	}
	short := 0
	for _, c := range r.Little {
		if c.Short {
			short++
			if c.Flag != LittleShortUsers {
				t.Errorf("short point flagged %q", c.Flag)
			}
		}
	}
	if short != 2 || !r.Little[2].Short || r.Little[2].Ratio > 0.51 || r.Little[2].Ratio < 0.49 {
		t.Errorf("Little: %+v, want loads 20 and 40 short, 20 at ratio 0.5", r.Little)
	}
}

func TestLittleWithThinkTime(t *testing.T) {
	t.Parallel()
	// 10 users, 1 s think time, 100 ms responses → 10/1.1 ≈ 9.09 req/s.
	ps := []Point{{Load: 10, ThroughputRPS: 10 / 1.1, MeanMs: 100}, {Load: 20, ThroughputRPS: 10, MeanMs: 100}}
	r, err := Analyze(ps, Options{ThinkTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if c := r.Little[0]; math.Abs(c.Expected-10) > 1e-9 || c.Short {
		t.Errorf("load 10: %+v, want 10 busy users, not short", c)
	}
	if c := r.Little[1]; !c.Short {
		t.Errorf("load 20 delivering 11 users: %+v, want short", c)
	}
	// Without the think time the same points look like massive
	// over-delivery... the other way round: only 1 user busy.
	r, _ = Analyze(ps, Options{})
	if !r.Little[0].Short {
		t.Errorf("without think time 10 users at 9 req/s × 0.1 s should be short: %+v", r.Little[0])
	}
}

func TestRepeatsAndSLA(t *testing.T) {
	t.Parallel()
	ps := []Point{
		{Load: 20, ThroughputRPS: 200, MeanMs: 100, SLAMet: true},
		{Load: 10, ThroughputRPS: 100, MeanMs: 100, SLAMet: true},
		{Load: 20, ThroughputRPS: 220, MeanMs: 90, SLAMet: false},
		{Load: 30, ThroughputRPS: 300, MeanMs: 100, SLAMet: true},
	}
	r, err := Analyze(ps, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Points) != 3 || r.Points[1].ThroughputRPS != 210 || r.Points[1].MeanMs != 95 || r.Points[1].SLAMet {
		t.Errorf("merged points %+v", r.Points)
	}
	if r.MaxLoadMeetingSLA == nil || *r.MaxLoadMeetingSLA != 10 {
		t.Errorf("max load meeting SLA %v, want 10 (a repeat at 20 failed)", r.MaxLoadMeetingSLA)
	}
	if w := r.USLSkip; w == nil || w.Kind != USLTooFewLoads || w.Loads != 3 || w.Need != 4 {
		t.Errorf("USL skip %+v, want too few loads, 3 of 4", w)
	}
}

func TestAnalyzeBadInput(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		p    Point
		want string
	}{
		{"nan", Point{Load: 1, ThroughputRPS: math.NaN()}, "point 1: throughput is NaN"},
		{"zero-load", Point{Load: 0, ThroughputRPS: 1}, "point 1: load is 0"},
		{"negative", Point{Load: 2, MeanMs: -1}, "point 1: mean is -1"},
		{"inf", Point{Load: math.Inf(1)}, "point 1: load is +Inf"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Analyze([]Point{{Load: 1, ThroughputRPS: 1}, tc.p}, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	r, err := Analyze(nil, Options{})
	if err != nil || r.Knee != nil || r.USL != nil || r.NoKnee == nil || r.NoKnee.Outcome != TooFewLoads || r.USLSkip == nil || r.USLSkip.Kind != USLTooFewLoads {
		t.Errorf("no points: %+v, %v", r, err)
	}
	if _, err := FitUSL([]float64{1, 2, 3}, []float64{0, 0, 0}); err == nil {
		t.Error("all-zero throughput: want an error")
	}
}

// TestKneeScaleInvariant: the knee is about shares, so scaling throughput
// and latency by positive constants must not move it.
func TestKneeScaleInvariant(t *testing.T) {
	t.Parallel()
	f := func(seed uint64, cx, cr uint8) bool {
		rng := rand.New(rand.NewPCG(seed, 3))
		var ps []Point
		x, m := 0.0, 10.0
		for i := 1; i <= 10; i++ {
			x += rng.Float64() * 100
			m *= 1 + rng.Float64()*0.3
			ps = append(ps, Point{Load: float64(i * 5), ThroughputRPS: x, MeanMs: m})
		}
		a, _ := Analyze(ps, Options{})
		kx, kr := 0.5+float64(cx)/16, 0.5+float64(cr)/16
		for i := range ps {
			ps[i].ThroughputRPS *= kx
			ps[i].MeanMs *= kr
		}
		b, _ := Analyze(ps, Options{})
		if (a.Knee == nil) != (b.Knee == nil) {
			return false
		}
		return a.Knee == nil || a.Knee.Load == b.Knee.Load
	}
	if err := quick.Check(f, &quick.Config{MaxCount: 200}); err != nil {
		t.Error(err)
	}
}

func TestOpenModelKnee(t *testing.T) {
	t.Parallel()
	// Arrival rate 100…1000 req/s; the service tops out at 600 req/s and
	// queues beyond it.
	var ps []Point
	for rate := 100.0; rate <= 1000; rate += 100 {
		x := math.Min(rate, 600)
		mean := 20.0
		if rate > 600 {
			mean = 20 * rate / 600 * 4
		}
		ps = append(ps, Point{Load: rate, ThroughputRPS: x, MeanMs: mean, SLAMet: mean < 50})
	}
	r, err := Analyze(ps, Options{Kind: Rate})
	if err != nil {
		t.Fatal(err)
	}
	if r.Knee == nil || r.Knee.Load != 600 {
		t.Fatalf("knee %+v (%+v), want at 600 req/s", r.Knee, r.NoKnee)
	}
	for _, c := range r.Little {
		if want := c.Load > 600*1.11; c.Short != want {
			t.Errorf("rate %v: short %v, want %v (%s)", c.Load, c.Short, want, c.Flag)
		}
	}
	if r.MaxLoadMeetingSLA == nil || *r.MaxLoadMeetingSLA != 600 {
		t.Errorf("max load meeting SLA %v, want 600", r.MaxLoadMeetingSLA)
	}
}
