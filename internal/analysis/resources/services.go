package resources

import (
	"math"
	"slices"
	"time"
)

// HighFrac is the utilisation from which a service's busiest phase counts
// as high (worth a look), as HighCPUPct is for a host; SaturatedFrac is the
// saturated one. Both grade every capacity alike.
const HighFrac = HighCPUPct / 100

// Span is a named stretch of the run (a phase, or the whole run).
type Span struct {
	Name     string
	From, To time.Time // [From, To)
}

// ServiceGrade grades the busiest service of one resource.
type ServiceGrade int

// Service grades. Without a limit for every service there is nothing to
// grade against: Measured.
const (
	ServiceMeasured ServiceGrade = iota
	ServiceWellBelow
	ServiceHigh
	ServiceSaturated
)

// GradeFrac grades a utilisation (used ÷ limit).
func GradeFrac(frac float64) ServiceGrade {
	switch {
	case frac >= SaturatedFrac:
		return ServiceSaturated
	case frac >= HighFrac:
		return ServiceHigh
	}
	return ServiceWellBelow
}

// ServicePeak is one service's busiest span of one resource.
type ServicePeak struct {
	Use  Use
	Span string  // name of the busiest span
	Mean float64 // mean use over it, rounded to 3 decimals
	Frac float64 // Mean ÷ Use.Capacity; NaN without a limit
}

// ServiceAspect is the answer for one resource over the services that
// report it: every service's busiest span, busiest service first.
type ServiceAspect struct {
	Rule Rule
	// Peaks are sorted busiest first: by share of the limit when every
	// service has one (WithLimit), else by mean use.
	Peaks     []ServicePeak
	WithLimit bool
	Grade     ServiceGrade
}

// Services states, for each resource of the ServiceRules (the first rule
// of an aspect that matches any series), the busiest service and span.
func Services(ts []Target, spans []Span) []ServiceAspect {
	var out []ServiceAspect
	done := map[string]bool{}
	for _, rk := range ServiceRules {
		if done[rk.Aspect] {
			continue
		}
		us := ServiceUses(ts, rk)
		if len(us) == 0 {
			continue
		}
		done[rk.Aspect] = true
		var peaks []ServicePeak
		for _, u := range us {
			best := ServicePeak{Use: u, Mean: math.NaN()}
			for _, sp := range spans {
				st, ok := statIn(u.Series.Points, sp.From, sp.To)
				if ok && (math.IsNaN(best.Mean) || st.Mean > best.Mean) {
					best.Mean, best.Span = st.Mean, sp.Name
				}
			}
			if math.IsNaN(best.Mean) {
				continue
			}
			best.Frac = math.NaN()
			if u.Capacity > 0 {
				best.Frac = best.Mean / u.Capacity
			}
			peaks = append(peaks, best)
		}
		if len(peaks) == 0 {
			continue
		}
		a := ServiceAspect{Rule: rk, WithLimit: true}
		for _, p := range peaks {
			a.WithLimit = a.WithLimit && !math.IsNaN(p.Frac)
		}
		key := func(p ServicePeak) float64 {
			if a.WithLimit {
				return p.Frac
			}
			return p.Mean
		}
		slices.SortStableFunc(peaks, func(x, y ServicePeak) int {
			switch {
			case key(x) > key(y):
				return -1
			case key(x) < key(y):
				return 1
			}
			return 0
		})
		a.Peaks = peaks
		if a.WithLimit {
			a.Grade = GradeFrac(peaks[0].Frac)
		}
		out = append(out, a)
	}
	return out
}
