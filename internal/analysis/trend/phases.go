package trend

import (
	"math"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// Level is the mean of a series over a span and how many finite readings it
// rests on. Mean is NaN when N is 0.
type Level struct {
	Mean float64
	N    int
}

// PhaseLevels is a series' level before, during and after a window, as in
// "mod-inventory used 36 % CPU before check-in/out started, 27 % during and
// 24 % after".
type PhaseLevels struct {
	Before, During, After Level
}

// Phases averages a series before [first reading, start), during
// [start, end) and after [end, last reading] a window, such as the active
// time of a second workload. Readings within settle after start or after
// end are left out of During and After, so the ramp of a workload starting
// or stopping does not blur the level it settles at; settle may be 0.
func Phases(points []core.Point, start, end time.Time, settle time.Duration) PhaseLevels {
	var sum [3]float64
	var n [3]int
	for _, p := range points {
		if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
			continue
		}
		var i int
		switch {
		case p.T.Before(start):
			i = 0
		case p.T.Before(end):
			if p.T.Before(start.Add(settle)) {
				continue
			}
			i = 1
		default:
			if p.T.Before(end.Add(settle)) {
				continue
			}
			i = 2
		}
		sum[i] += p.V
		n[i]++
	}
	lv := func(i int) Level {
		if n[i] == 0 {
			return Level{Mean: math.NaN()}
		}
		return Level{Mean: sum[i] / float64(n[i]), N: n[i]}
	}
	return PhaseLevels{Before: lv(0), During: lv(1), After: lv(2)}
}
