package report

import (
	"fmt"
	"sort"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
)

// The bottleneck of a capacity analysis: which monitored component ran out
// first as the load rose (resources.FirstSaturated decides; this file only
// gathers the readings and words the answer, for the capacity section, the
// conclusions and the summary alike).

// resourceTargets is the monitor data as the resources package reads it.
func (b *builder) resourceTargets() []resources.Target {
	var out []resources.Target
	for _, t := range b.monTargets() {
		rt := resources.Target{Name: t.name, Kind: t.kind}
		for _, m := range t.metrics {
			if s := t.byMetric[m]; s != nil {
				rt.Series = append(rt.Series, s)
			}
		}
		out = append(out, rt)
	}
	return out
}

// bottleneck reads every monitored component (and the generator's own CPU)
// in each load step and decides which saturated first up to the step after
// the knee (all steps without a knee). Nil when nothing with a capacity was
// read.
func (b *builder) bottleneck(cr *capacityRun) *resources.Bottleneck {
	uses := resources.Uses(b.resourceTargets(), b.d.Info.Host.CPUs)
	gen := map[string]float64{}
	if b.s.Validity != nil {
		for _, pv := range b.s.Validity.Phases {
			gen[pv.Phase] = pv.CPUPct
		}
	}
	pts := append([]capPoint(nil), cr.pts...)
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].p.Load < pts[j].p.Load })
	kneeIdx := -1
	var steps []resources.PhaseReadings
	for i, x := range pts {
		steps = append(steps, resources.PhaseReadings{Phase: x.phase, Load: x.p.Load,
			Readings: resources.Readings(uses, b.phaseByName(x.phase), gen[x.phase])})
		if cr.res.Knee != nil && kneeIdx < 0 && x.p.Load >= cr.res.Knee.Load {
			kneeIdx = i
		}
	}
	bn := resources.FirstSaturated(steps, kneeIdx)
	if bn != nil {
		bn.Component = b.red.String(bn.Component)
		bn.Target = b.red.String(bn.Target)
		bn.Used, bn.Capacity, bn.Utilisation = round3(bn.Used), round3(bn.Capacity), round6(bn.Utilisation)
		for i := range bn.Also {
			r := &bn.Also[i]
			r.Component, r.Target = b.red.String(r.Component), b.red.String(r.Target)
			r.Used, r.Capacity, r.Utilisation = round3(r.Used), round3(r.Capacity), round6(r.Utilisation)
		}
		bn.AlsoPhase = b.red.String(bn.AlsoPhase)
	}
	return bn
}

// readingText words a reading's figure: "CPU 73 % busy", "CPU 1.9 of 2
// cores (97 %)", "connections 35 of 36 (97 %)", "memory 900 MiB of 1 GiB
// (90 %)".
func readingText(r resources.Reading) string {
	share := pct(100 * r.Utilisation)
	what := strings.ToLower(r.Resource)
	switch {
	case r.Component == resources.Generator:
		return fmt.Sprintf("CPU %s of its cores", pct(r.Used))
	case r.Unit == "%" && r.Resource == "CPU" && r.Capacity == 100:
		return fmt.Sprintf("CPU %s busy", pct(r.Used))
	case r.Unit == "%" && r.Capacity == 100:
		return fmt.Sprintf("%s %s used", what, pct(r.Used))
	case r.Unit == "%" && r.Resource == "CPU": // % of one core, of the machine's cores
		return fmt.Sprintf("CPU %s of %s cores (%s)", num3(r.Used/100), num3(r.Capacity/100), share)
	case r.Unit == "cores":
		return fmt.Sprintf("CPU %s of %s cores (%s)", num3(r.Used), num3(r.Capacity), share)
	case r.Unit == "bytes":
		return fmt.Sprintf("%s %s of %s (%s)", what, bytesU(r.Used), bytesU(r.Capacity), share)
	case r.Unit == "bytes/s":
		return fmt.Sprintf("%s %s/s of a %s/s link (%s)", what, bytesU(r.Used), bytesU(r.Capacity), share)
	case r.Unit == "KB":
		return fmt.Sprintf("%s %s of %s (%s)", what, bytesU(1024*r.Used), bytesU(1024*r.Capacity), share)
	}
	return fmt.Sprintf("%s %s of %s (%s)", what, num3(r.Used), num3(r.Capacity), share)
}

// bottleneckClause states the bottleneck: the component that saturated
// first with its figure, or plainly that none did — at the knee, meaning
// the limit lies outside what was monitored.
func bottleneckClause(bn *resources.Bottleneck, kind knee.LoadKind, atKnee bool) string {
	switch {
	case bn == nil:
		return "no monitor recorded a component with a known capacity (CPU cores, a memory or connection limit), so the report cannot name the component that ran out"
	case bn.Saturated:
		out := fmt.Sprintf("the first monitored component to saturate was %s, with %s on average in %s (%s)", bn.Component, readingText(bn.Reading), bn.Phase, loadU(bn.Load, kind))
		for i, r := range bn.Also {
			if i == 2 {
				out += fmt.Sprintf("; %s more were saturated by %s", count(int64(len(bn.Also)-2)), bn.AlsoPhase)
				break
			}
			out += fmt.Sprintf("; %s was saturated too by %s, with %s", r.Component, bn.AlsoPhase, readingText(r))
		}
		return out
	case !atKnee:
		return fmt.Sprintf("no monitored component saturated: the busiest of %s read was %s, with %s on average in %s",
			plural(int64(bn.Components), "component resource"), bn.Component, readingText(bn.Reading), bn.Phase)
	}
	return fmt.Sprintf("no monitored component saturated (the busiest of %s read was %s, with %s on average in %s), so the limit is outside what was monitored",
		plural(int64(bn.Components), "component resource"), bn.Component, readingText(bn.Reading), bn.Phase)
}
