package report

import (
	"fmt"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- comparison -----------------------------------------------------------------

func (b *builder) comparison() doc.Section {
	sec := doc.Section{ID: SecComparison, Title: b.W("Comparison")}
	if b.in.base == nil {
		msg := b.W("No comparison: no baseline run was given (plateau report RUN --baseline OTHER_RUN, or plateau compare BASE NEW).")
		if b.in.baseErr != nil {
			msg = b.W("No comparison: ") + b.red.String(b.T("baseline %s unreadable: %v", b.in.baseDir, b.in.baseErr))
		}
		sec.Blocks = append(sec.Blocks, noData(msg))
		return sec
	}
	rows := analysis.Compare(b.in.base, b.d, b.red.String)
	comparisonWords(rows)
	b.s.Comparison = rows
	baseName := b.red.String(nonEmpty(b.in.base.Info.Name, b.in.baseDir))
	sec.Blocks = append(sec.Blocks, &doc.Para{Text: b.T("Baseline: %s (%s, %s). Deltas are this run minus the baseline; a difference is called faster or slower only when it is beyond run-to-run noise (rank test and confidence intervals over the latency histograms, widened by the variation between seconds) and at least %s of the baseline.",
		baseName, b.clock(b.in.base.Start), b.red.String(b.in.baseDir), b.pct(compare.DefaultMinEffectPct))})
	sec.Blocks = append(sec.Blocks, b.comparisonTables(rows, b.T("baseline"), b.T("this run"))...)
	// Headline: the all-requests row of the whole run.
	for _, r := range rows {
		if r.Label == core.TotalLabel && r.Phase == "run" {
			lvl := verdictLevel(r.Verdict)
			baseName := baseName
			if r.Workload != "" { // runs of several workloads: one headline each
				baseName = b.T("%s, workload %s", baseName, b.red.String(r.Workload))
			}
			text := b.T("Compared with %s: %s — average %s → %s (%+.1f %%), p95 %s → %s (%+.1f %%)", baseName, b.verdictWord(r.Verdict),
				b.msU(r.BaseMeanMs), b.msU(r.NewMeanMs), r.DeltaPct, b.msU(r.BaseP95Ms), b.msU(r.NewP95Ms), r.P95DeltaPct)
			if r.Verdict == compare.NotEnough {
				text = b.T("Compared with %s: %s", baseName, b.notEnoughClause(r))
			}
			sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: lvl, Text: sentence(text)})
			b.finding(doc.FindComparison, lvl, text)
		}
	}
	return sec
}

// ComparisonTables renders comparison rows, one table per phase.
func ComparisonTables(rows []compare.Row, baseName, newName string) []doc.Block {
	return numbers{}.comparisonTables(rows, baseName, newName)
}

// comparisonTables is ComparisonTables in the document's language.
func (b numbers) comparisonTables(rows []compare.Row, baseName, newName string) []doc.Block {
	var blocks []doc.Block
	var phases []string
	byPhase := map[string][]compare.Row{}
	for _, r := range rows {
		if _, ok := byPhase[r.Phase]; !ok {
			phases = append(phases, r.Phase)
		}
		byPhase[r.Phase] = append(byPhase[r.Phase], r)
	}
	for _, p := range phases {
		cap := b.W("Whole run")
		if p != "run" {
			cap = b.W("Phase ") + p
			if bp := byPhase[p][0].BasePhase; bp != "" {
				cap += b.W(" (baseline: ") + bp + ")"
			}
		}
		t := &doc.Table{Caption: cap, Columns: []doc.Column{{Name: b.W("Label")},
			{Name: b.W("Average ") + baseName + b.W(" (ms)"), Align: doc.Right}, {Name: b.W("Average ") + newName + b.W(" (ms)"), Align: doc.Right},
			{Name: b.W("Delta (ms)"), Align: doc.Right}, {Name: b.W("Delta %"), Align: doc.Right},
			{Name: b.W("p95 ") + baseName, Align: doc.Right}, {Name: b.W("p95 ") + newName, Align: doc.Right}, {Name: b.W("p95 delta %"), Align: doc.Right},
			{Name: b.W("Throughput (req/s)"), Align: doc.Right}, {Name: b.W("Error %"), Align: doc.Right}, {Name: b.W("Verdict")}}}
		for _, r := range byPhase[p] {
			v := doc.Cell{Text: b.verdictWord(r.Verdict), Level: verdictLevel(r.Verdict)}
			label := r.Label
			if r.Workload != "" {
				label = r.Workload + ": " + label
			}
			t.Rows = append(t.Rows, doc.Row{Total: r.Label == core.TotalLabel, Cells: []doc.Cell{{Text: label},
				{Text: b.ms(r.BaseMeanMs)}, {Text: b.ms(r.NewMeanMs)}, {Text: b.loc.Num(fmt.Sprintf("%+.1f", r.DeltaMs))}, {Text: b.loc.Num(fmt.Sprintf("%+.1f %%", r.DeltaPct))},
				{Text: b.ms(r.BaseP95Ms)}, {Text: b.ms(r.NewP95Ms)}, {Text: b.loc.Num(fmt.Sprintf("%+.1f %%", r.P95DeltaPct))},
				{Text: b.rate(r.BaseTputRPS) + " → " + b.rate(r.NewTputRPS)}, {Text: b.pct(r.BaseErrPct) + " → " + b.pct(r.NewErrPct)}, v}})
		}
		blocks = append(blocks, t)
	}
	return blocks
}
