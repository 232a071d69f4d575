package analysis

import (
	"math"
	"sort"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// CapacitySkip says why a run has no capacity analysis.
type CapacitySkip int

// Reasons for no capacity analysis.
const (
	CapacityDone           CapacitySkip = iota // the analysis ran
	CapacityTooFewPhases                       // fewer than two phases
	CapacityConcurrentOnly                     // the phases are concurrent workloads, each at one load
	CapacitySameLoad                           // every phase ran at the same load
)

// CapacityStep is one phase as a point of the capacity analysis.
type CapacityStep struct {
	// Phase is the phase's index in Dataset.Phases; Name its name.
	Phase int
	Name  string
	Point knee.Point
}

// CapacityRun is the capacity analysis of one run, computed once: every
// statement about scaling (summary, results verdict, capacity section,
// conclusions, study) reads this one, so they all name the same knee.
type CapacityRun struct {
	// Skip is CapacityDone when the analysis ran; else why not, with the
	// run's number of phases and of workloads with phases.
	Skip              CapacitySkip
	Phases, Workloads int
	Workload          string
	Kind              knee.LoadKind
	Steps             []CapacityStep // in order of load, lowest first
	Knee              knee.Result
	Err               error
	CheckLittle       bool
	ServerTimes       bool
	Bottleneck        *resources.Bottleneck
	// Result is summary.json's capacity member; nil when skipped or failed.
	Result *capacity.Result
}

// Capacity runs the capacity analysis over the phases of the first
// workload that has at least two distinct loads (two concurrent workloads
// are not load steps of one another). s is the run's summary (phase
// totals, requirements per phase, validity); targets the monitored data,
// for the component that saturated first.
func Capacity(d *Dataset, s *Summary, targets []resources.Target) *CapacityRun {
	kind, holds := d.Info.Origin()
	cr := &CapacityRun{Kind: knee.Users, Phases: len(d.Phases), ServerTimes: kind == rundir.SourceAccessLog}
	byWorkload := map[string][]CapacityStep{}
	kinds := map[string]knee.LoadKind{}
	var order []string
	for i, p := range d.Phases {
		var tot core.LabelStats
		if i < len(s.Phases) && len(s.Phases[i].Labels) > 0 {
			tot = s.Phases[i].Labels[len(s.Phases[i].Labels)-1]
		}
		load, k := float64(p.Users), knee.Users
		if p.Rate > 0 {
			load, k = p.Rate, knee.Rate
		}
		if tot.Samples == 0 || load <= 0 {
			continue
		}
		met := true
		for _, r := range s.SLA {
			for _, pc := range r.PerPhase {
				if pc.Phase == p.Name && !pc.Passed {
					met = false
				}
			}
		}
		if _, ok := byWorkload[p.Workload]; !ok {
			order = append(order, p.Workload)
		}
		kinds[p.Workload] = k
		byWorkload[p.Workload] = append(byWorkload[p.Workload], CapacityStep{Phase: i, Name: p.Name,
			Point: knee.Point{Load: load, ThroughputRPS: tot.ThroughputRPS, MeanMs: tot.MeanMs, P95Ms: tot.P95Ms, SLAMet: met,
				Samples: tot.Samples, Seconds: p.Duration().Seconds()}})
	}
	cr.Workloads = len(order)
	for _, w := range order {
		loads := map[float64]bool{}
		for _, x := range byWorkload[w] {
			loads[x.Point.Load] = true
		}
		if len(loads) >= 2 {
			cr.Steps, cr.Kind, cr.Workload = byWorkload[w], kinds[w], w
			// In order of load, so "from … to …" reads from the lowest
			// load to the highest whatever order the phases ran in (a
			// Locust run that went down from 10 users to 1).
			sort.SliceStable(cr.Steps, func(i, j int) bool { return cr.Steps[i].Point.Load < cr.Steps[j].Point.Load })
			break
		}
	}
	if len(cr.Steps) < 2 {
		switch {
		case len(d.Phases) < 2:
			cr.Skip = CapacityTooFewPhases
		case len(order) > 1:
			cr.Skip = CapacityConcurrentOnly
		default:
			cr.Skip = CapacitySameLoad
		}
		return cr
	}
	var kps []knee.Point
	for _, x := range cr.Steps {
		kps = append(kps, x.Point)
	}
	// Little's law needs the time each user spends between requests; it is
	// only checked when that is known to be zero (no think time, no
	// pacing) and the asked load is known: an import says neither. Times
	// taken at the servers say nothing about how many of the generator's
	// users were busy.
	cr.CheckLittle = holds.PlannedLoad && (cr.Kind == knee.Rate || holds.ThinkTime && noThinkTime(d.Info.Workloads)) && !cr.ServerTimes
	cr.Knee, cr.Err = knee.Analyze(kps, knee.Options{Kind: cr.Kind, MinGain: stopGain(d.Info.Workloads, cr.Workload), ServerTimes: cr.ServerTimes})
	if cr.Err != nil {
		return cr
	}
	cr.Bottleneck = cr.bottleneck(d, s, targets)
	cr.Result = cr.result(len(s.SLA) > 0)
	return cr
}

// result is summary.json's capacity member.
func (cr *CapacityRun) result(hasSLA bool) *capacity.Result {
	res := cr.Knee
	unit := "users"
	if cr.Kind == knee.Rate {
		unit = "req/s"
	}
	cj := &capacity.Result{NoKnee: res.NoKnee, USLSkip: res.USLSkip, LoadUnit: unit, Points: []capacity.Point{}, Bottleneck: cr.Bottleneck}
	if res.MaxLoadMeetingSLA != nil && hasSLA {
		v := *res.MaxLoadMeetingSLA
		cj.MaxLoadMeetingSLA = &v
	}
	for _, x := range cr.Steps {
		cp := capacity.Point{Phase: x.Name, Load: x.Point.Load, ThroughputRPS: x.Point.ThroughputRPS, MeanMs: x.Point.MeanMs, P95Ms: x.Point.P95Ms}
		if hasSLA {
			met := x.Point.SLAMet
			cp.SLAMet = &met
		}
		for _, l := range res.Little {
			if cr.CheckLittle && l.Load == x.Point.Load {
				cp.LittleRatio = round3(l.Ratio)
				cp.LittleFlag = l.Flag
			}
		}
		cj.Points = append(cj.Points, cp)
	}
	if res.USL != nil {
		u := *res.USL
		cj.USL = &capacity.USL{Sigma: round6(u.Sigma), Kappa: round6(u.Kappa), Lambda: round6(u.Lambda), PeakLoad: finitePtr(u.PeakLoad), PeakThroughputRPS: finitePtr(u.PeakThroughputRPS), R2: round6(u.R2)}
	}
	if res.Knee != nil {
		k := res.Knee
		cj.Knee = &capacity.Knee{Load: k.Load, ThroughputRPS: round3(k.ThroughputRPS), MeanMs: round3(k.MeanMs),
			Gain: round6(k.Gain), MinGain: k.MinGain, MaxLoad: k.MaxLoad, MaxMeanMs: round3(k.MaxMeanMs)}
	}
	return cj
}

// bottleneck reads every monitored component (and the generator's own CPU)
// in each load step and decides which saturated first up to the step after
// the knee (all steps without a knee). Nil when nothing with a capacity was
// read.
func (cr *CapacityRun) bottleneck(d *Dataset, s *Summary, targets []resources.Target) *resources.Bottleneck {
	uses := resources.Uses(targets, d.Info.Host.CPUs)
	gen := map[string]float64{}
	if s.Validity != nil {
		for _, pv := range s.Validity.Phases {
			gen[pv.Phase] = pv.CPUPct
		}
	}
	kneeIdx := -1
	var steps []resources.PhaseReadings
	for i, x := range cr.Steps {
		steps = append(steps, resources.PhaseReadings{Phase: x.Name, Load: x.Point.Load,
			Readings: resources.Readings(uses, d.Phases[x.Phase], gen[x.Name])})
		if cr.Knee.Knee != nil && kneeIdx < 0 && x.Point.Load >= cr.Knee.Knee.Load {
			kneeIdx = i
		}
	}
	bn := resources.FirstSaturated(steps, kneeIdx)
	if bn != nil {
		bn.Used, bn.Capacity, bn.Utilisation = round3(bn.Used), round3(bn.Capacity), round6(bn.Utilisation)
		for i := range bn.Also {
			r := &bn.Also[i]
			r.Used, r.Capacity, r.Utilisation = round3(r.Used), round3(r.Capacity), round6(r.Utilisation)
		}
	}
	return bn
}

// stopGain is the stop rule's threshold of the workload (a fraction), or 0
// when the plan had none: the knee uses it as its own threshold.
func stopGain(ws []rundir.WorkloadInfo, workload string) float64 {
	for _, w := range ws {
		if w.Name == workload && w.StopGainPct > 0 {
			return w.StopGainPct / 100
		}
	}
	return 0
}

// noThinkTime reports whether every workload sends its next request as soon
// as the last one completed.
func noThinkTime(ws []rundir.WorkloadInfo) bool {
	for _, w := range ws {
		switch strings.TrimSpace(strings.ToLower(w.Think)) {
		case "", "0", "0s", "none":
		default:
			return false
		}
	}
	return true
}

func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

func finitePtr(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	v = math.Round(v*1000) / 1000
	return &v
}
