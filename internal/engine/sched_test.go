package engine

import (
	"math"
	"math/rand/v2"
	"testing"
	"testing/quick"
	"time"

	"github.com/plateau-perf/plateau/internal/plan"
)

// The schedule is a pure function: tested like vegeta's pacer, with rows
// and a property, no clock.

func TestArrivalsAtAndDue(t *testing.T) {
	t.Parallel()
	ramp := newArrivals(0, 0, []plan.Stage{{Rate: 10, Duration: 2 * time.Second}, {Rate: 10, Duration: time.Second, Hold: true}})
	for _, c := range []struct {
		name  string
		a     *arrivals
		count int64
		t     time.Duration
		due   int64 // iterations with At(k) ≤ t
	}{
		{"10/s at 0", newArrivals(10, time.Second, nil), 10, 0, 1}, // k=0 starts at 0
		{"10/s just before 100ms", newArrivals(10, time.Second, nil), 10, 99 * time.Millisecond, 1},
		{"10/s at 100ms", newArrivals(10, time.Second, nil), 10, 100 * time.Millisecond, 2},
		{"10/s past the end", newArrivals(10, time.Second, nil), 10, time.Hour, 10},
		{"10/s before the start", newArrivals(10, time.Second, nil), 10, -time.Second, 0},
		// 0 → 10/s over 2 s: N(t) = 2.5 t², N(1s) = 2.5, so k = 0, 1, 2 are due.
		{"ramp at 1s", ramp, 20, time.Second, 3},
		{"ramp at 2s", ramp, 20, 2 * time.Second, 11},
		{"2.5 arrivals start three", newArrivals(2.5, time.Second, nil), 3, time.Second, 3},
		{"1e12/s at the end", newArrivals(1e12, time.Second, nil), 1e12, time.Second, 1e12},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if n := c.a.Count(); n != c.count {
				t.Errorf("Count %d, want %d", n, c.count)
			}
			if got := c.a.Due(c.t); got != c.due {
				t.Errorf("Due(%v) = %d, want %d", c.t, got, c.due)
			}
		})
	}
}

// Due is exact against At: every iteration before Due(t) starts by t, the
// one at Due(t) after it, for any schedule of stages and any instant.
func TestArrivalsDueProperty(t *testing.T) {
	t.Parallel()
	prop := func(seed uint64, tFrac float64) bool {
		r := rand.New(rand.NewPCG(seed, 7))
		var stages []plan.Stage
		for range 1 + r.IntN(4) {
			// Rates up to 10¹²/s: the loop's bulk drop relies on Due at
			// rates no machine sends.
			rate := math.Pow(10, r.Float64()*12)
			if r.IntN(5) == 0 {
				rate = 0
			}
			stages = append(stages, plan.Stage{Rate: plan.Rate(rate), Duration: time.Duration(1+r.IntN(5000)) * time.Millisecond, Hold: r.IntN(2) == 0})
		}
		a := newArrivals(0, 0, stages)
		at := time.Duration(math.Abs(math.Mod(tFrac, 1.2)) * float64(a.Duration()))
		k := a.Due(at)
		if k < 0 || k > a.Count() {
			t.Logf("Due(%v) = %d of %d", at, k, a.Count())
			return false
		}
		if k > 0 {
			if prev, ok := a.At(k - 1); !ok || prev > at {
				t.Logf("At(%d) = %v after t = %v", k-1, prev, at)
				return false
			}
		}
		if next, ok := a.At(k); ok && next <= at {
			t.Logf("At(%d) = %v not after t = %v", k, next, at)
			return false
		}
		return true
	}
	if err := quick.Check(prop, &quick.Config{MaxCount: 2000}); err != nil {
		t.Error(err)
	}
}

// A generator's stripe (k = seg, seg+n, …): count is what walking it counts.
func TestStripeCount(t *testing.T) {
	t.Parallel()
	prop := func(seg, n uint8, from, to uint16) bool {
		s := stripe{seg: int64(seg) % (int64(n)%5 + 1), n: int64(n)%5 + 1}
		var walked int64
		for k := s.next(int64(from)); k < int64(to); k += s.n {
			if k%s.n != s.seg {
				return false
			}
			walked++
		}
		return s.count(int64(from), int64(to)) == walked
	}
	if err := quick.Check(prop, nil); err != nil {
		t.Error(err)
	}
}
