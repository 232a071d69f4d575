package report

import (
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/mondata"
)

// The bottleneck of a capacity analysis: which monitored component ran out
// first as the load rose (resources.FirstSaturated decides; this file only
// gathers the readings and words the answer, for the capacity section, the
// conclusions and the summary alike).

// resourceTargets is the monitor data as the resources package reads it.
func (b *builder) resourceTargets() []resources.Target { return resourceTargetsOf(b.monTargets()) }

// resourceTargetsOf converts grouped targets for the resources package.
func resourceTargetsOf(ts []*target) []resources.Target {
	var out []resources.Target
	for _, t := range ts {
		rt := resources.Target{Name: t.name, Kind: t.kind, Generator: t.role() == mondata.RoleGenerator}
		for _, m := range t.metrics {
			if s := t.byMetric[m]; s != nil {
				rt.Series = append(rt.Series, s)
			}
		}
		out = append(out, rt)
	}
	return out
}

// readingText words a reading's figure: "CPU 73 % busy", "CPU 1.9 of 2
// cores (97 %)", "connections 35 of 36 (97 %)", "memory 900 MiB of 1 GiB
// (90 %)".
func (b numbers) readingText(r resources.Reading) string {
	share := b.pct(100 * r.Utilisation)
	what := b.resourceWord(r.Resource)
	switch {
	case r.Component == resources.Generator:
		return b.T("CPU %s of its cores", b.pct(r.Used))
	case r.Unit == "%" && r.Resource == resources.CPU && r.Capacity == 100:
		return b.T("CPU %s busy", b.pct(r.Used))
	case r.Unit == "%" && r.Capacity == 100:
		return b.T("%s %s used", what, b.pct(r.Used))
	case r.Unit == "%" && r.Resource == resources.CPU: // % of one core, of the machine's cores
		return b.T("CPU %s of %s cores (%s)", b.num3(r.Used/100), b.num3(r.Capacity/100), share)
	case r.Unit == "cores":
		return b.T("CPU %s of %s cores (%s)", b.num3(r.Used), b.num3(r.Capacity), share)
	case r.Unit == "bytes":
		return b.T("%s %s of %s (%s)", what, b.bytesU(r.Used), b.bytesU(r.Capacity), share)
	case r.Unit == "bytes/s":
		return b.T("%s %s/s of a %s/s link (%s)", what, b.bytesU(r.Used), b.bytesU(r.Capacity), share)
	case r.Unit == "KB":
		return b.T("%s %s of %s (%s)", what, b.bytesU(1024*r.Used), b.bytesU(1024*r.Capacity), share)
	}
	return b.T("%s %s of %s (%s)", what, b.num3(r.Used), b.num3(r.Capacity), share)
}

// bottleneckClause states the bottleneck: the component that saturated
// first with its figure, or plainly that none did — at the knee, meaning
// the limit lies outside what was monitored.
func (b numbers) bottleneckClause(bn *resources.Bottleneck, kind knee.LoadKind, atKnee bool) string {
	switch {
	case bn == nil:
		return b.W("no monitor recorded a component with a known capacity (CPU cores, a memory or connection limit), so the report cannot name the component that ran out")
	case bn.Saturated:
		out := b.T("the first monitored component to saturate was %s, with %s on average in %s (%s)", b.componentName(bn.Component), b.readingText(bn.Reading), bn.Phase, b.loadU(bn.Load, kind))
		for i, r := range bn.Also {
			if i == 2 {
				out += b.T("; %s more were saturated by %s", b.count(int64(len(bn.Also)-2)), bn.AlsoPhase)
				break
			}
			out += b.T("; %s was saturated too by %s, with %s", b.componentName(r.Component), bn.AlsoPhase, b.readingText(r))
		}
		return out
	case !atKnee:
		return b.T("no monitored component saturated: the busiest of %s read was %s, with %s on average in %s",
			b.plural(int64(bn.Components), b.W("component resource")), b.componentName(bn.Component), b.readingText(bn.Reading), bn.Phase)
	}
	return b.T("no monitored component saturated (the busiest of %s read was %s, with %s on average in %s), so the limit is outside what was monitored",
		b.plural(int64(bn.Components), b.W("component resource")), b.componentName(bn.Component), b.readingText(bn.Reading), bn.Phase)
}
