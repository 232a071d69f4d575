package engine

import (
	"math"
	"time"

	"github.com/plateau-perf/plateau/internal/plan"
)

// arrivals is a pure open-model schedule: the intended start of global
// iteration k, measured from the start of the schedule. It is a function of k
// alone, so segmented generators taking k = i, i+N, … together reproduce the
// single-generator schedule exactly.
type arrivals struct {
	segs  []rateSeg
	total float64 // iterations in the whole schedule
}

type rateSeg struct {
	start    time.Duration
	dur      time.Duration
	r0, r1   float64 // rate per second at the start and end of the segment
	before   float64 // iterations scheduled before this segment
	inside   float64 // iterations scheduled in this segment
	duration float64 // seconds
}

// newArrivals builds a schedule. A constant rate is one stage with r0 = r1;
// ramping stages move linearly from the previous rate (0 at first) to their
// target.
func newArrivals(constant float64, dur time.Duration, stages []plan.Stage) *arrivals {
	a := &arrivals{}
	if len(stages) == 0 {
		a.add(constant, constant, dur)
		return a
	}
	prev := 0.0
	for _, st := range stages {
		from := prev
		if st.Hold {
			from = float64(st.Rate) // constant at the stage's rate
		}
		a.add(from, float64(st.Rate), st.Duration)
		prev = float64(st.Rate)
	}
	return a
}

// rampDown appends a segment lowering the rate linearly from the
// schedule's last rate to 0 over d (the open model's ramp_down).
func (a *arrivals) rampDown(d time.Duration) {
	if n := len(a.segs); n > 0 && d > 0 {
		a.add(a.segs[n-1].r1, 0, d)
	}
}

func (a *arrivals) add(r0, r1 float64, d time.Duration) {
	var start time.Duration
	if n := len(a.segs); n > 0 {
		start = a.segs[n-1].start + a.segs[n-1].dur
	}
	s := d.Seconds()
	in := (r0 + r1) / 2 * s
	a.segs = append(a.segs, rateSeg{start: start, dur: d, r0: r0, r1: r1, before: a.total, inside: in, duration: s})
	a.total += in
}

// Count is the number of iterations in the schedule: those At starts (k
// with k < N(end); 2.5 planned arrivals start k = 0, 1 and 2).
func (a *arrivals) Count() int64 { return max(int64(math.Ceil(a.total-1e-9)), 0) }

// Duration is the schedule's length.
func (a *arrivals) Duration() time.Duration {
	if len(a.segs) == 0 {
		return 0
	}
	l := a.segs[len(a.segs)-1]
	return l.start + l.dur
}

// At returns the intended start of iteration k (0-based); false past the end.
// Iteration k starts when the cumulative arrivals N(t) reach k.
func (a *arrivals) At(k int64) (time.Duration, bool) {
	x := float64(k)
	if k < 0 || x >= a.total-1e-9 {
		return 0, false
	}
	for _, s := range a.segs {
		if x >= s.before+s.inside {
			continue
		}
		y := x - s.before // iterations into this segment
		var t float64
		slope := (s.r1 - s.r0) / s.duration
		switch {
		case math.Abs(slope) < 1e-12:
			t = y / s.r0
		default:
			// N(t) = r0 t + slope t²/2 = y  →  t = (−r0 + √(r0² + 2 slope y)) / slope
			disc := s.r0*s.r0 + 2*slope*y
			t = (-s.r0 + math.Sqrt(max(disc, 0))) / slope
		}
		return s.start + time.Duration(t*float64(time.Second)), true
	}
	return 0, false
}

// cumulative is N(t), the arrivals scheduled in [0, t] as a real number:
// iteration k starts when N reaches k (At is its inverse).
func (a *arrivals) cumulative(t time.Duration) float64 {
	if t < 0 {
		return 0
	}
	for _, s := range a.segs {
		if t >= s.start+s.dur {
			continue
		}
		tau := (t - s.start).Seconds()
		slope := (s.r1 - s.r0) / s.duration
		return s.before + s.r0*tau + slope*tau*tau/2
	}
	return a.total
}

// Due is how many iterations are due by t: the first k with At(k) > t
// (Count when none). It is exact against At, so the iterations [k, Due(t))
// are precisely those of k onwards due by t: a loop that fell behind drops
// them in one step, counted, instead of walking them one by one.
func (a *arrivals) Due(t time.Duration) int64 {
	n := a.Count()
	if t < 0 || n == 0 {
		return 0
	}
	k := int64(math.Floor(a.cumulative(t))) + 1
	k = min(max(k, 0), n)
	// N(t) and At round differently: step to the exact boundary (a step
	// or two at most).
	for k > 0 {
		if at, _ := a.At(k - 1); at <= t {
			break
		}
		k--
	}
	for k < n {
		if at, _ := a.At(k); at > t {
			break
		}
		k++
	}
	return k
}

// stripe is this generator's share of the global iterations: k = seg,
// seg+n, seg+2n, … (several generators share a plan).
type stripe struct{ seg, n int64 }

// next is the first of this generator's iterations at or after k.
func (s stripe) next(k int64) int64 {
	if s.n <= 1 {
		return k
	}
	return k + ((s.seg-k)%s.n+s.n)%s.n
}

// count is how many of this generator's iterations lie in [from, to).
func (s stripe) count(from, to int64) int64 {
	from = s.next(from)
	if to <= from {
		return 0
	}
	return (to-from-1)/max(s.n, 1) + 1
}

// PeakRate is the highest rate in the schedule.
func (a *arrivals) PeakRate() float64 {
	p := 0.0
	for _, s := range a.segs {
		p = max(p, s.r0, s.r1)
	}
	return p
}

// shareOf returns how many of total global items (users, rows) fall to
// segment seg of n under striping (item v goes to v mod n).
func shareOf(total, seg, n int) int {
	if n <= 1 {
		return total
	}
	if total <= seg {
		return 0
	}
	return (total-seg-1)/n + 1
}
