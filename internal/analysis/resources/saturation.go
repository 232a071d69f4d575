package resources

import (
	"math"
	"sort"

	"github.com/plateau-perf/plateau/internal/core"
)

// SaturatedFrac is the utilisation (used ÷ capacity, over a phase) from
// which a component counts as saturated: SaturatedCPUPct for every kind of
// capacity, as a resource in use 85 % of a phase leaves no headroom for the
// bursts within it (the utilisation law; see SaturatedCPUPct).
const SaturatedFrac = SaturatedCPUPct / 100

// Generator is the component name of the load generator's own CPU.
const Generator = "the load generator"

// Reading is one component's mean use of one resource over a phase against
// its capacity.
type Reading struct {
	Component string  `json:"component"`
	Target    string  `json:"target,omitempty"`
	Resource  string  `json:"resource"`
	Unit      string  `json:"unit"`
	Used      float64 `json:"used"`
	Capacity  float64 `json:"capacity"`
	// Utilisation is Used ÷ Capacity (1 = at capacity).
	Utilisation float64 `json:"utilisation"`
}

// Over is a use's reading over phase p; false without a sample in it.
func (u Use) Over(p core.Phase) (Reading, bool) {
	st, ok := summarize(u.Series.Points, &p)
	if !ok || !(u.Capacity > 0) {
		return Reading{}, false
	}
	return Reading{Component: u.Component, Target: u.Target, Resource: u.Resource, Unit: u.Unit, Used: st.Mean,
		Capacity: u.Capacity, Utilisation: st.Mean / u.Capacity}, true
}

// GeneratorCPU is the load generator's reading in a phase from its own CPU
// use (validity's generator_cpu_pct, percent of all its cores).
func GeneratorCPU(pct float64) Reading {
	return Reading{Component: Generator, Resource: CPU, Unit: "%", Used: pct, Capacity: 100, Utilisation: pct / 100}
}

// PhaseReadings are the readings of every monitored component in one load
// step, in load order.
type PhaseReadings struct {
	Phase    string
	Load     float64
	Readings []Reading
}

// Readings reads every use over phase p, adding the generator's CPU when
// known (genCPUPct > 0); sorted by utilisation, highest first.
func Readings(uses []Use, p core.Phase, genCPUPct float64) []Reading {
	var out []Reading
	for _, u := range uses {
		if r, ok := u.Over(p); ok {
			out = append(out, r)
		}
	}
	if genCPUPct > 0 {
		out = append(out, GeneratorCPU(genCPUPct))
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Utilisation > out[j].Utilisation })
	return out
}

// Bottleneck is the capacity analysis's answer to "what ran out": the
// component that saturated first as the load rose to the knee, or, when
// none did, the busiest one.
type Bottleneck struct {
	// Saturated says whether any monitored component reached
	// SaturatedFrac by the step after the knee; false means the limit lies
	// outside what was monitored.
	Saturated bool `json:"saturated"`
	// Phase is the step in which the named component was read (the first
	// one where something saturated, else where the busiest was busiest).
	Phase string  `json:"phase"`
	Load  float64 `json:"load"`
	Reading
	// Components is how many component resources were read in all.
	Components int `json:"components"`
	// Also lists the other components saturated in AlsoPhase, the last step
	// looked at (the one after the knee): a full pool behind a full CPU is
	// worth knowing too. Highest utilisation first.
	Also      []Reading `json:"also_saturated"`
	AlsoPhase string    `json:"also_phase,omitempty"`
}

// FirstSaturated decides which component saturated first: over the steps
// in load order up to and including the one after the knee (index knee
// into steps; the step after it is where throughput stopped growing), the
// first step in which a component's mean use reached SaturatedFrac of its
// capacity, and in it the component with the highest utilisation. When
// none did, it returns the highest utilisation seen over those steps with
// Saturated false. Nil when nothing was read.
func FirstSaturated(steps []PhaseReadings, knee int) *Bottleneck {
	last := min(knee+1, len(steps)-1)
	if knee < 0 {
		last = len(steps) - 1
	}
	seen := map[[2]string]bool{}
	for i := 0; i <= last && i < len(steps); i++ {
		for _, r := range steps[i].Readings {
			seen[[2]string{r.Component, r.Resource}] = true
		}
	}
	var best *Bottleneck
	for i := 0; i <= last && i < len(steps); i++ {
		s := steps[i]
		if len(s.Readings) == 0 {
			continue
		}
		top := s.Readings[0]
		for _, r := range s.Readings[1:] {
			if r.Utilisation > top.Utilisation {
				top = r
			}
		}
		if math.IsNaN(top.Utilisation) {
			continue
		}
		if top.Utilisation >= SaturatedFrac {
			bn := &Bottleneck{Saturated: true, Phase: s.Phase, Load: s.Load, Reading: top, Components: len(seen), Also: []Reading{}}
			{
				l := steps[min(last, len(steps)-1)]
				for _, r := range l.Readings {
					if r.Utilisation >= SaturatedFrac && (r.Component != top.Component || r.Resource != top.Resource) {
						bn.Also = append(bn.Also, r)
					}
				}
				sort.SliceStable(bn.Also, func(i, j int) bool { return bn.Also[i].Utilisation > bn.Also[j].Utilisation })
				if len(bn.Also) > 0 {
					bn.AlsoPhase = l.Phase
				}
			}
			return bn
		}
		if best == nil || top.Utilisation > best.Utilisation {
			best = &Bottleneck{Phase: s.Phase, Load: s.Load, Reading: top}
		}
	}
	if best != nil {
		best.Components = len(seen)
		best.Also = []Reading{}
	}
	return best
}
