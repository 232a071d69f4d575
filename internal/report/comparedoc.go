package report

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/html"
	"github.com/plateau-perf/plateau/internal/report/markdown"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Comparison file names written by WriteCompare.
const (
	CompareHTML     = "compare.html"
	CompareMarkdown = "compare.md"
	CompareCharts   = "compare-charts"
)

// CompareOptions configures CompareRuns.
type CompareOptions struct {
	// Rules are --fail-on rules; each is checked on every label (and the
	// all-requests row) over the whole run and in every matched phase.
	Rules []compare.Rule
	Now   func() time.Time
	// Version is the tool version shown in the document.
	Version string
	// Lang is the document's language ("en", "da"; --lang); "" is the
	// baseline run's own (its plan's lang), else English.
	Lang string
}

// RunComparison is one candidate run compared with the baseline.
type RunComparison struct {
	Dir string
	// Name is the run's role or distinguishing setting (compare.Names).
	Name string
	// Load is the run's load level ("20 users"), "" when unknown.
	Load string
	// SamePhases is true when the run has the baseline's phases, so its
	// whole-run delta compares like with like.
	SamePhases bool
	Rows       []compare.Row
	Outcomes   []RuleOutcome
}

// RuleOutcome is one fail-on rule checked on one row.
type RuleOutcome struct {
	Label, Phase string
	compare.Outcome
}

// CompareResult is plateau compare's result.
type CompareResult struct {
	BaseDir, BaseName string
	Runs              []RunComparison
	// Failed is true when a fail-on rule tripped.
	Failed bool
	// Doc is the comparison as a document (compare.html, compare.md).
	Doc *doc.Document
	// Spreads are the side-by-side summaries of all runs over the whole
	// run: one of all requests, or, when a run holds several workloads,
	// one per workload (Summary.Workload, its requests' merged histogram)
	// — an average of all requests would move with the mix of workloads
	// with nothing slower. Empty for two runs.
	Spreads []compare.Summary
	// Kind is series when the runs' load levels differ (a curve against
	// load, not repeats), else repeats.
	Kind compare.Kind
}

// CompareRuns compares each of dirs[1:] with dirs[0].
func CompareRuns(dirs []string, opt CompareOptions) (*CompareResult, error) {
	if len(dirs) < 2 {
		return nil, errors.New("compare needs a baseline and at least one other run")
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	sets := make([]*analysis.Dataset, len(dirs))
	reds := make([]*Redactor, len(dirs))
	for i, dir := range dirs {
		d, err := analysis.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", dir, err)
		}
		sets[i] = d
		var values []string
		if src, err := analysis.PlanCopy(dir); err == nil && src != nil {
			_, values = RedactPlan(src, d.Info.Secrets)
		}
		reds[i] = NewRedactor(d.Info.Secrets, values)
	}
	// One redactor for everything: a secret of any run is masked in all.
	var names, values []string
	for i, d := range sets {
		names = append(names, d.Info.Secrets...)
		values = append(values, reds[i].Values()...)
	}
	red := NewRedactor(names, values)
	facts := make([]compare.RunFacts, len(sets))
	for i, d := range sets {
		facts[i] = Facts(d, dirs[i], "")
	}
	// The document's language is known before the runs are named: their
	// load levels and ordinals are words of it.
	loc, err := Lang(opt.Lang, sets[0].Info.Context)
	if err != nil {
		return nil, err
	}
	named := compare.NamesWith(facts, RunNaming(loc))
	runName := func(i int) string { return red.String(named[i]) }
	res := &CompareResult{BaseDir: dirs[0], BaseName: runName(0), Kind: compare.Classify(facts)}
	base := sets[0]
	for i := 1; i < len(sets); i++ {
		rc := RunComparison{Dir: dirs[i], Name: runName(i), Rows: analysis.Compare(base, sets[i], red.String), Load: facts[i].Load(),
			SamePhases: compare.SamePhases(facts[0], facts[i])}
		comparisonWords(rc.Rows)
		for _, r := range rc.Rows {
			if len(opt.Rules) == 0 {
				break
			}
			outs, failed := compare.CheckAll(opt.Rules, r.Base, r.Cand)
			label := r.Label
			if r.Workload != "" {
				label = r.Workload + ": " + label
			}
			for _, o := range outs {
				rc.Outcomes = append(rc.Outcomes, RuleOutcome{Label: label, Phase: r.Phase, Outcome: o})
			}
			res.Failed = res.Failed || failed
		}
		res.Runs = append(res.Runs, rc)
	}
	if len(sets) > 2 {
		res.Spreads = spreads(sets, facts, runName)
	}
	res.Doc = compareDoc(res, sets, runName, red, now(), opt, loc)
	return res, nil
}

// spreads lines the runs up side by side over the whole run: all their
// requests, or where any run holds several workloads, each workload's
// requests among the runs that sent it (two or more runs).
func spreads(sets []*analysis.Dataset, facts []compare.RunFacts, runName func(int) string) []compare.Summary {
	row := func(i int, st core.LabelStats) compare.RunStats {
		return compare.RunStats{Name: runName(i), Load: facts[i].Load(), Users: facts[i].Users, Rate: facts[i].Rate, Stats: st}
	}
	var ws []string
	for _, d := range sets {
		if !d.Mixed() {
			continue
		}
		for _, d := range sets {
			for _, w := range d.RequestWorkloads() {
				if !slices.Contains(ws, w) {
					ws = append(ws, w)
				}
			}
		}
		break
	}
	if len(ws) == 0 {
		var rs []compare.RunStats
		for i, d := range sets {
			rs = append(rs, row(i, d.Total.Stats(core.TotalLabel, false, d.Span())))
		}
		if sp, err := compare.Summarize(rs); err == nil {
			return []compare.Summary{sp}
		}
		return nil
	}
	var out []compare.Summary
	for _, w := range ws {
		var rs []compare.RunStats
		for i, d := range sets {
			if a, _ := d.WorkloadTotal(w); a.Count > 0 {
				rs = append(rs, row(i, a.Stats(core.TotalLabel, false, d.Span())))
			}
		}
		if len(rs) < 2 {
			continue
		}
		if sp, err := compare.Summarize(rs); err == nil {
			sp.Workload = w
			out = append(out, sp)
		}
	}
	return out
}

// compareDoc lays the comparison out as a document.
func compareDoc(res *CompareResult, sets []*analysis.Dataset, runName func(int) string, red *Redactor, now time.Time, opt CompareOptions, loc *locale.Locale) *doc.Document {
	b := numbers{loc}
	names := make([]string, len(sets))
	for i := range sets {
		names[i] = runName(i)
	}
	d := &doc.Document{Title: b.T("Comparison: %s", strings.Join(names, b.W(" vs "))), Generated: now.UTC().Truncate(time.Second),
		Tool:     strings.TrimSpace("plateau " + opt.Version),
		Subtitle: b.T("baseline %s (%s) · %d other run(s)", res.BaseName, red.String(res.BaseDir), len(res.Runs)), Lang: loc}
	sum := doc.Section{ID: SecSummary, Title: b.W("Summary")}
	l := &doc.List{}
	for _, rc := range res.Runs {
		for _, r := range rc.Rows {
			if r.Label == core.TotalLabel && r.Phase == "run" {
				lvl := verdictLevel(r.Verdict)
				lead := rc.Name
				if r.Workload != "" { // runs of several workloads: one line each
					lead = b.T("%s, workload %s", rc.Name, red.String(r.Workload))
				}
				l.Items = append(l.Items, doc.Item{Level: lvl, Lead: lead, Text: sentences(
					clauses(b.T("%s %s — average %s → %s (%s), p95 %s → %s (%s), throughput %s → %s",
						b.verdictPhrase(r.Verdict), res.BaseName, b.msU(r.BaseMeanMs), b.msU(r.NewMeanMs), b.loc.Num(fmt.Sprintf("%+.1f %%", r.DeltaPct)),
						b.msU(r.BaseP95Ms), b.msU(r.NewP95Ms), b.loc.Num(fmt.Sprintf("%+.1f %%", r.P95DeltaPct)), b.rps(r.BaseTputRPS), b.rps(r.NewTputRPS))),
					b.phaseMixWarning(rc))})
			}
		}
	}
	d.Status = doc.Verdict{Level: doc.OK, Text: b.W("Comparison: no fail-on rule tripped.")}
	if len(opt.Rules) == 0 {
		d.Status = doc.Verdict{Level: doc.Info, Text: b.W("Comparison (no --fail-on rules given).")}
	}
	var tripped []string
	for _, rc := range res.Runs {
		for _, o := range rc.Outcomes {
			if o.Failed {
				tripped = append(tripped, fmt.Sprintf("%s, %s, %s: %s", rc.Name, o.Label, o.Phase, b.ruleOutcomeText(o.Outcome)))
			}
		}
	}
	if len(tripped) > 0 {
		d.Status = doc.Verdict{Level: doc.Fail, Text: b.T("Comparison FAILED: %d fail-on check(s) tripped.", len(tripped))}
	}
	sum.Blocks = append(sum.Blocks, &d.Status, l)
	if len(tripped) > 0 {
		tl := &doc.List{}
		for _, t := range tripped {
			tl.Items = append(tl.Items, doc.Item{Level: doc.Fail, Text: t})
		}
		sum.Blocks = append(sum.Blocks, &doc.Heading{Text: b.W("Fail-on rules tripped")}, tl)
	}
	cmp := doc.Section{ID: SecComparison, Title: b.W("Comparison")}
	cmp.Blocks = append(cmp.Blocks, &doc.Para{Text: b.T("Deltas are the run minus the baseline. A difference is called faster or slower only when it is beyond run-to-run noise (rank test and confidence intervals over the latency histograms, widened by the variation between seconds) and at least %s of the baseline; see docs/analysis-methods.md.", b.pct(compare.DefaultMinEffectPct))})
	for _, rc := range res.Runs {
		cmp.Blocks = append(cmp.Blocks, &doc.Heading{Text: rc.Name + b.W(" vs ") + res.BaseName})
		cmp.Blocks = append(cmp.Blocks, b.comparisonTables(rc.Rows, b.W("base"), b.W("new"))...)
	}
	if f := distributionOverlay(sets, names, loc); f != nil {
		cmp.Blocks = append(cmp.Blocks, f)
	}
	d.Sections = append(d.Sections, sum, cmp)
	if len(res.Spreads) > 0 && res.Kind == compare.Series {
		sec := doc.Section{ID: SecRuns, Title: b.W("Load series")}
		for i, sp := range res.Spreads {
			sec.Blocks = append(sec.Blocks, seriesBlocks(&res.Spreads[i], loc, b.spreadCaption(sp.Workload, true), i)...)
		}
		d.Sections = append(d.Sections, sec)
	} else if len(res.Spreads) > 0 {
		runs := doc.Section{ID: SecRuns, Title: b.W("Runs side by side")}
		for _, sp := range res.Spreads {
			t := &doc.Table{Caption: b.spreadCaption(sp.Workload, false), Columns: []doc.Column{{Name: b.W("Run")}, {Name: b.W("Average (ms)"), Align: doc.Right},
				{Name: b.W("p95 (ms)"), Align: doc.Right}, {Name: b.W("Throughput (req/s)"), Align: doc.Right}, {Name: b.W("Error %"), Align: doc.Right}}}
			for _, r := range sp.Runs {
				t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: r.Name}, {Text: b.ms(r.Stats.MeanMs)}, {Text: b.ms(r.Stats.P95Ms)}, {Text: b.rate(r.Stats.ThroughputRPS)}, {Text: b.pct(r.Stats.ErrorPct)}}})
			}
			sprd := func(s compare.Spread, f func(float64) string) string {
				return fmt.Sprintf("%s – %s (CV %s)", f(s.Min), f(s.Max), b.pct(100*s.CV))
			}
			t.Rows = append(t.Rows, doc.Row{Total: true, Cells: []doc.Cell{{Text: b.W("spread")}, {Text: sprd(sp.MeanMs, b.ms)}, {Text: sprd(sp.P95Ms, b.ms)},
				{Text: sprd(sp.ThroughputRPS, b.rate)}, {Text: fmt.Sprintf("%s – %s", b.pct(sp.ErrorPct.Min), b.pct(sp.ErrorPct.Max))}}})
			runs.Blocks = append(runs.Blocks, t)
		}
		runs.Blocks = append(runs.Blocks, &doc.Para{Note: true, Text: b.W("CV is the coefficient of variation (standard deviation / mean). For repeats of one build it is the run-to-run noise a real change has to exceed.")})
		d.Sections = append(d.Sections, runs)
	}
	return d
}

// distributionOverlay draws the latency distribution of all requests of
// each run on one chart.
func distributionOverlay(sets []*analysis.Dataset, names []string, loc *locale.Locale) *doc.Figure {
	b := numbers{loc}
	var minCount int64 = -1
	for _, d := range sets {
		if d.Total.Count == 0 {
			return nil
		}
		if minCount < 0 || d.Total.Count < minCount {
			minCount = d.Total.Count
		}
	}
	top := maxPercentile(minCount)
	ps := percentileGrid(top)
	c := &chart.Chart{ID: "compare-distribution", Title: b.W("Response time distribution of all requests"), XKind: chart.Nines, XMin: 0, XMax: top,
		XLabel: b.W("Percentile (log scale of the tail)"), Y: chart.Axis{Label: b.W("Response time (ms)"), Unit: "ms"}, Height: 320, Loc: loc}
	for i, d := range sets {
		y := make([]float64, len(ps))
		for j, p := range ps {
			y[j] = d.Total.QuantileMs(p)
		}
		s := chart.Series{Name: truncate(names[i], 30), Color: chart.Palette[i%len(chart.Palette)], X: ps, Y: y, Width: 2}
		if i == 0 {
			s.Dash, s.Color = true, "#222"
		}
		c.Series = append(c.Series, s)
	}
	return &doc.Figure{Name: "compare-distribution", Title: c.Title, Caption: b.W("The baseline is dashed. A curve lower than another is faster at that percentile."), SVG: c.SVG()}
}

// WriteCompare writes compare.html, and compare.md with its charts under
// compare-charts/, into dir.
func WriteCompare(dir string, res *CompareResult) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	b, err := html.Render(res.Doc)
	if err != nil {
		return nil, err
	}
	hp := filepath.Join(dir, CompareHTML)
	if err := rundir.WriteFileAtomic(hp, b); err != nil {
		return nil, fmt.Errorf("writing %s: %w", hp, err)
	}
	files, err := markdown.WriteAs(dir, CompareMarkdown, CompareCharts, res.Doc)
	if err != nil {
		return nil, err
	}
	return append([]string{hp}, files...), nil
}

// Facts gathers what distinguishes a run (compare.Names, compare.Classify):
// plan name, role, load level and phase names.
func Facts(d *analysis.Dataset, dir, role string) compare.RunFacts {
	f := compare.RunFacts{Dir: dir, Role: role}
	if d.Info != nil {
		f.Plan = d.Info.Name
		for _, w := range d.Info.Workloads {
			f.Users = max(f.Users, w.Users)
			f.Rate = max(f.Rate, w.Rate)
		}
	}
	for _, p := range d.Phases {
		f.Users = max(f.Users, p.Users)
		f.Rate = max(f.Rate, p.Rate)
		f.Phases = append(f.Phases, p.Name)
	}
	return f
}

// phaseMixWarning warns when a whole-run delta is between different mixes
// of phases (an interrupted run, a different step plan): the delta may come
// from the mix alone, and the matched phases are the fair comparison.
func (b numbers) phaseMixWarning(rc RunComparison) string {
	if rc.SamePhases {
		return ""
	}
	return b.W("warning: the runs have different phases, so this whole-run delta mixes different loads; compare the matched phases below")
}

// SeriesSection shows runs at different load levels as a curve:
// throughput and response time against load, ordered by load (plateau
// compare and study documents).
func SeriesSection(sp *compare.Summary) doc.Section { return SeriesSectionIn(sp, nil) }

// SeriesSectionIn is SeriesSection in the language loc (nil is English).
func SeriesSectionIn(sp *compare.Summary, loc *locale.Locale) doc.Section {
	b := numbers{loc}
	sec := doc.Section{ID: SecRuns, Title: b.W("Load series")}
	sec.Blocks = seriesBlocks(sp, loc, b.W("All requests, whole run, by load"), 0)
	return sec
}

// spreadCaption names what a side-by-side table (series: a load series
// table) holds: all requests, or one workload's requests.
func (b numbers) spreadCaption(workload string, series bool) string {
	switch {
	case workload == "" && series:
		return b.W("All requests, whole run, by load")
	case workload == "":
		return b.W("All requests, whole run")
	case series:
		return b.T("Workload %s: its requests, whole run, by load", workload)
	}
	return b.T("Workload %s: its requests, whole run", workload)
}

// seriesBlocks are one load series' table, note and chart; n numbers the
// chart when a section holds several (one per workload).
func seriesBlocks(sp *compare.Summary, loc *locale.Locale, caption string, n int) []doc.Block {
	b := numbers{loc}
	runs := slices.Clone(sp.Runs)
	slices.SortStableFunc(runs, func(a, b compare.RunStats) int {
		if c := cmp.Compare(a.Users, b.Users); c != 0 {
			return c
		}
		return cmp.Compare(a.Rate, b.Rate)
	})
	t := &doc.Table{Caption: caption, Columns: []doc.Column{{Name: b.W("Run")}, {Name: b.W("Load")},
		{Name: b.W("Throughput (req/s)"), Align: doc.Right}, {Name: b.W("Average (ms)"), Align: doc.Right}, {Name: b.W("p95 (ms)"), Align: doc.Right}, {Name: b.W("Error %"), Align: doc.Right}}}
	var x, tput, mean []float64
	for _, r := range runs {
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: r.Name}, {Text: b.runLoadText(r)}, {Text: b.rate(r.Stats.ThroughputRPS)},
			{Text: b.ms(r.Stats.MeanMs)}, {Text: b.ms(r.Stats.P95Ms)}, {Text: b.pct(r.Stats.ErrorPct)}}})
		l := float64(r.Users)
		if l == 0 {
			l = r.Rate
		}
		x, tput, mean = append(x, l), append(tput, r.Stats.ThroughputRPS), append(mean, r.Stats.MeanMs)
	}
	blocks := []doc.Block{t, &doc.Para{Note: true, Text: sentence(b.W("the runs are at different load levels, so they are a series (a curve against load), not repeats; their spread is the effect of load, not run-to-run noise"))}}
	xl := b.W("Users")
	if runs[0].Users == 0 {
		xl = b.W("Arrival rate (/s)")
	}
	id, title := "compare-series", b.W("Throughput and response time against load")
	if n > 0 {
		id = fmt.Sprintf("compare-series-%d", n+1)
	}
	if sp.Workload != "" {
		title = b.T("%s: throughput and response time against load", sp.Workload)
	}
	c := &chart.Chart{ID: id, Title: title, XKind: chart.Linear, XLabel: xl,
		Y: chart.Axis{Label: b.W("Throughput (req/s)"), Unit: "req/s"}, Y2: &chart.Axis{Label: b.W("Average response time (ms)"), Unit: "ms"}, Height: 300, Loc: loc}
	c.Series = append(c.Series, chart.Series{Name: b.W("throughput"), Color: chart.Palette[0], X: x, Y: tput, Width: 2, Style: chart.LinePoints},
		chart.Series{Name: b.W("average response time"), Color: chart.Palette[1], X: x, Y: mean, Width: 2, Style: chart.LinePoints, Right: true})
	return append(blocks, &doc.Figure{Name: id, Title: c.Title, SVG: c.SVG()})
}

// verdictLevel is the one mapping from a comparison verdict to a level,
// for the headline, the summary and the tables alike: slower is a warning
// (only a --fail-on rule makes a comparison fail), faster good news.
func verdictLevel(v compare.Verdict) doc.Level {
	switch v {
	case compare.Faster:
		return doc.OK
	case compare.Slower:
		return doc.Warn
	case compare.NotEnough:
		return doc.NoData
	}
	return doc.Info
}

// notEnoughClause is the one sentence for a comparison row without enough
// data, with its numbers and the rule it missed.
func (b numbers) notEnoughClause(r compare.Row) string {
	return b.T("not enough data to judge: %s and %s over %s and %s; a verdict needs %s or more on each side, over %s or more",
		b.plural(r.BaseSamples, "request"), b.plural(r.NewSamples, "request"), b.plural(int64(r.BaseSeconds), "second"), b.plural(int64(r.NewSeconds), "second"),
		b.count(compare.MinSamples), b.plural(compare.MinSeconds, "second"))
}
