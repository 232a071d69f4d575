package trend

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

const mb = 1e6

// heap simulates a JVM old generation sampled every 10 s: live data of base
// bytes growing by leak bytes/hour, garbage piling up at 1–3 MB/min, and a
// collection every 10–20 min that drops usage back to the live data (± 3 MB
// of noise). It returns used memory and the cumulative collection count.
func heap(seed uint64, d time.Duration, base, leakPerHour float64) (mem, gc []core.Point) {
	rng := rand.New(rand.NewPCG(seed, 0xbeef))
	step := 10 * time.Second
	garbage := 0.0
	next := time.Duration(10+rng.IntN(11)) * time.Minute
	count := 0.0
	for el := time.Duration(0); el <= d; el += step {
		live := base + leakPerHour*el.Hours()
		if el >= next {
			count++
			garbage = 0
			next = el + time.Duration(10+rng.IntN(11))*time.Minute
		} else {
			garbage += (1 + 2*rng.Float64()) * mb / 6 // per 10 s
		}
		t := t0.Add(el)
		mem = append(mem, core.Point{T: t, V: live + garbage + rng.NormFloat64()*3*mb})
		gc = append(gc, core.Point{T: t, V: count})
	}
	return mem, gc
}

func TestMemoryLeakDetected(t *testing.T) {
	t.Parallel()
	for _, withGC := range []bool{true, false} {
		name := "drops"
		if withGC {
			name = "gc-counter"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const seeds = 20
			for seed := range uint64(seeds) {
				mem, gc := heap(seed, 4*time.Hour, 400*mb, 10*mb)
				if !withGC {
					gc = nil
				}
				r, err := Memory(mem, gc, MemoryOptions{Limit: 1000 * mb})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict != Growing {
					t.Errorf("seed %d: verdict %s (%+v), want growing", seed, r.Verdict, r.Why)
				}
				if math.Abs(r.SlopePerHour-10*mb) > 3*mb {
					t.Errorf("seed %d: slope %.2f MB/h, want 10 ± 3 (%+v)", seed, r.SlopePerHour/mb, r.Basis)
				}
				if r.CILow > 10*mb || r.CIHigh < 10*mb {
					t.Logf("seed %d: CI %.2f–%.2f MB/h misses 10", seed, r.CILow/mb, r.CIHigh/mb)
				}
				// 1000 MB limit, ~440 MB after GC at 4 h, 10 MB/h → ~56 h.
				if r.TimeToLimit == nil {
					t.Errorf("seed %d: no time to limit", seed)
				} else if h := r.TimeToLimit.Hours(); h < 40 || h > 80 {
					t.Errorf("seed %d: time to limit %.1f h, want ≈ 56 h", seed, h)
				}
				if seed == 0 {
					t.Logf("%+v: %+v", r.Basis, r.Why)
				}
			}
		})
	}
}

// TestMemoryFlatSawtoothStable measures how often a leak-free sawtooth is
// called growing, with and without the GC counter.
func TestMemoryFlatSawtoothStable(t *testing.T) {
	t.Parallel()
	const seeds = 100
	// growing[method][threshold]: method 0 uses the GC counter, 1 finds the
	// drops; threshold 0 is the default, 1 is the statistical test alone.
	var growing [2][2]int
	var stable [2]int
	for seed := range uint64(seeds) {
		mem, gc := heap(seed+500, 4*time.Hour, 400*mb, 0)
		for i, g := range [][]core.Point{gc, nil} {
			for j, minPct := range []float64{0, -1} {
				r, err := Memory(mem, g, MemoryOptions{Limit: 1000 * mb, MinGrowthPct: minPct})
				if err != nil {
					t.Fatal(err)
				}
				if r.Verdict == Growing {
					growing[i][j]++
				}
				if r.Verdict == Stable && j == 0 {
					stable[i]++
					if r.GrowthHighPct >= 2 {
						t.Errorf("seed %d: stable with an interval reaching %.2f%% growth", seed, r.GrowthHighPct)
					}
				}
				if r.Verdict == Growing && r.TimeToLimit == nil {
					t.Error("growing with a limit but no time to limit")
				}
				if r.Verdict != Growing && r.TimeToLimit != nil {
					t.Error("time to limit set on a stable verdict")
				}
			}
		}
	}
	t.Logf("flat sawtooth called growing (default / statistical test alone): GC counter %d/%d, %d/%d; drops %d/%d, %d/%d",
		growing[0][0], seeds, growing[0][1], seeds, growing[1][0], seeds, growing[1][1], seeds)
	t.Logf("called stable (the rest not enough data): GC counter %d/%d, drops %d/%d", stable[0], seeds, stable[1], seeds)
	if stable[0] < seeds/2 || stable[1] < seeds/2 {
		t.Errorf("a 4-hour flat sawtooth is called stable only %d/%d, %d/%d times", stable[0], seeds, stable[1], seeds)
	}
	for i := range growing {
		for j, g := range growing[i] {
			if g*100 >= 5*seeds {
				t.Errorf("method %d threshold %d: false 'growing' rate %d/%d ≥ 5%%", i, j, g, seeds)
			}
		}
	}
}

func TestMemoryRSS(t *testing.T) {
	t.Parallel()
	// A non-collected process sampled every 15 s for 2 h: RSS at 120 MB with
	// 1 MB noise, flat or growing 10 MB/h. No drops, so the lower envelope
	// is used.
	// With 1 MB of noise the flat series' interval holds both no growth
	// and 2 % of growth over the 2 hours: neither verdict is shown.
	for _, tc := range []struct {
		name        string
		leak, noise float64
		want        Verdict
	}{{"flat", 0, 0.2 * mb, Stable}, {"flat-noisy", 0, mb, Unknown}, {"leak", 10 * mb, mb, Growing}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(9, 9))
			var ps []core.Point
			for i := range 480 {
				el := time.Duration(i) * 15 * time.Second
				ps = append(ps, core.Point{T: t0.Add(el), V: 120*mb + tc.leak*el.Hours() + rng.NormFloat64()*tc.noise})
			}
			r, err := Memory(ps, nil, MemoryOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if r.Verdict != tc.want {
				t.Errorf("verdict %s (%+v), want %s", r.Verdict, r.Why, tc.want)
			}
			if r.Readings != 480 || r.Span != 479*15*time.Second || r.MinGrowthPct != 2 {
				t.Errorf("numbers: %d readings over %s, threshold %v%%", r.Readings, r.Span, r.MinGrowthPct)
			}
			switch r.Verdict {
			case Stable:
				if r.GrowthHighPct >= 2 {
					t.Errorf("stable with an interval reaching %.2f%% growth", r.GrowthHighPct)
				}
			case Unknown:
				if lo := 100 * r.CILow * r.Span.Hours() / r.Mean; lo >= 2 || r.GrowthHighPct < 2 || r.CILow > 0 && r.GrowthPct >= 2 {
					t.Errorf("not enough data with an interval of %.2f%% … %.2f%%", lo, r.GrowthHighPct)
				}
			}
			if len(r.Baseline) < 12 || r.Basis.Method != MethodEnvelope || r.Basis.N != len(r.Baseline) {
				t.Errorf("basis %+v with %d points, want a 12-window lower envelope", r.Basis, len(r.Baseline))
			}
			if math.Abs(r.SlopePerHour-tc.leak) > 2*mb {
				t.Errorf("slope %.2f MB/h, want %.0f ± 2", r.SlopePerHour/mb, tc.leak/mb)
			}
		})
	}
}

func TestMemoryTooFew(t *testing.T) {
	t.Parallel()
	if _, err := Memory(nil, nil, MemoryOptions{}); err == nil {
		t.Error("empty series: want error")
	}
	ps := []core.Point{{T: t0, V: 1}, {T: t0.Add(time.Minute), V: 2}, {T: t0.Add(2 * time.Minute), V: 3}}
	r, err := Memory(ps, nil, MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Unknown || r.Why.Kind != MemoryShortSpan || r.Why.SpanS != 120 || r.Why.MinSpanS != 600 || r.Readings != 3 || r.Span != 2*time.Minute {
		t.Errorf("3 points: verdict %q why %+v, want unknown: 120 s observed of 600 s", r.Verdict, r.Why)
	}
	if r, err = Memory(ps, nil, MemoryOptions{MinSpan: -1}); err != nil {
		t.Fatal(err)
	}
	if r.Verdict != Unknown || r.Why.Kind != MemoryFewBaseline || r.Why.Points != 3 || r.Why.Need != 4 {
		t.Errorf("3 points, any span: verdict %q why %+v, want unknown: 3 of 4 after-GC points", r.Verdict, r.Why)
	}
}

func TestAfterGCRestart(t *testing.T) {
	t.Parallel()
	// Counter 0,1,2,0(restart),1: three rises, one reset that is not a GC.
	var mem, gc []core.Point
	for i, c := range []float64{0, 1, 2, 0, 1} {
		tt := t0.Add(time.Duration(i) * time.Minute)
		mem = append(mem, core.Point{T: tt, V: float64(10 + i)})
		gc = append(gc, core.Point{T: tt, V: c})
	}
	base, n := afterGC(mem, gc)
	if n != 3 || len(base) != 3 {
		t.Fatalf("afterGC: %d rises, %d points; want 3, 3", n, len(base))
	}
	if base[2].V != 14 {
		t.Errorf("last after-GC point %v, want the reading at minute 4", base[2])
	}
}

func TestPhases(t *testing.T) {
	t.Parallel()
	// CPU 36 % before a second workload, 27 % during, 24 % after, with a
	// 2-minute transient after each boundary that settle must drop.
	start, end := t0.Add(30*time.Minute), t0.Add(90*time.Minute)
	var ps []core.Point
	for i := range 120 {
		tt := t0.Add(time.Duration(i) * time.Minute)
		v := 36.0
		switch {
		case tt.Before(start):
		case tt.Before(start.Add(2 * time.Minute)):
			v = 90 // transient
		case tt.Before(end):
			v = 27
		case tt.Before(end.Add(2 * time.Minute)):
			v = 90
		default:
			v = 24
		}
		ps = append(ps, core.Point{T: tt, V: v})
	}
	ps = append(ps, core.Point{T: t0.Add(200 * time.Minute), V: math.NaN()})
	got := Phases(ps, start, end, 2*time.Minute)
	want := PhaseLevels{Level{36, 30}, Level{27, 58}, Level{24, 28}}
	if got != want {
		t.Errorf("Phases = %+v, want %+v", got, want)
	}
	if got := Phases(ps, start, end, 0); got.During.Mean <= 27 {
		t.Errorf("without settle the transient should raise During: %+v", got.During)
	}
	if got := Phases(nil, start, end, 0); !math.IsNaN(got.Before.Mean) || got.Before.N != 0 {
		t.Errorf("empty series: %+v", got)
	}
}
