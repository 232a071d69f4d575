package report

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// The report of a capacity search (`plateau capacity`): its summary opens
// with the answer and its capacity section shows the probes; the other
// sections are those of the shown probe's run (capacity.Search.Shown).

// capacitySearch is the run's capacity search; nil for any other run.
func (b *builder) capacitySearch() *capacity.Search {
	if b.s.Capacity == nil {
		return nil
	}
	return b.s.Capacity.Search
}

func searchKind(cs *capacity.Search) knee.LoadKind {
	if cs.Unit == "req/s" {
		return knee.Rate
	}
	return knee.Users
}

// searchLoad is a load in the searched unit: "157 req/s", "20 users".
func (b numbers) searchLoad(cs *capacity.Search, v float64) string {
	if cs.Unit == "req/s" {
		return b.rps(v)
	}
	return b.plural(int64(math.Round(v)), "user")
}

// searchLimit words what limited the search.
func searchLimit(cs *capacity.Search) string {
	switch cs.LimitedBy {
	case search.RequirementBroke:
		if cs.Marginal {
			return "the requirement " + cs.Requirement + " (it stayed marginal after its repeats)"
		}
		return "the requirement " + cs.Requirement
	case search.LoadNotHeld:
		return "the load: the planned load was not applied above it"
	case search.ThroughputFlat:
		return "the throughput, which stopped growing"
	case search.Shortfall:
		return "the throughput, which fell behind the arrival rate above it"
	case search.ErrorGuard:
		return "the error rate, above the search's guard"
	case search.Generator:
		return "the load generator"
	}
	return ""
}

// SearchAnswer is a capacity search's answer in one sentence, in loc's
// language — the capacity in its unit, the interval it lies in, what
// limited it, whether it reaches the capacity required — with its level:
// the search's report opens with it, and a study quotes it for the
// capacity question the search answers.
func SearchAnswer(cs *capacity.Search, loc *locale.Locale) (doc.Level, string) {
	return numbers{loc}.searchAnswer(cs)
}

// searchAnswer is the answer in one sentence, with its level.
func (b numbers) searchAnswer(cs *capacity.Search) (doc.Level, string) {
	l := func(v float64) string { return b.searchLoad(cs, v) }
	var lead string
	level := doc.OK
	switch cs.Outcome {
	case search.GeneratorLimited:
		level = doc.Warn
		lead = b.W("No capacity: limited by the load generator at ") + l(cs.At) + b.W(", so that probe says nothing about the system")
		if cs.Load > 0 {
			lead += b.W("; the system held at least ") + l(cs.Load)
		}
	case search.Collapsing:
		level = doc.Fail
		lead = b.W("No capacity: the system was collapsing at ") + l(cs.At) + b.W(" (the error rate passed the guard at a load it had handled, or at the first)")
	case search.BelowMin:
		level = doc.Fail
		lead = b.W("No capacity: no load probed was good, down to the lowest the search probes")
		if cs.UpperBound > 0 {
			lead += b.T(" (%s, limited by %s)", l(cs.UpperBound), searchLimit(cs))
		}
	case search.AboveMax:
		level = doc.Warn
		lead = b.W("Capacity at least ") + l(cs.Load) + b.W(": every probe up to the search's maximum was good")
	default:
		if cs.Load == 0 {
			level = doc.Fail
			lead = b.W("No capacity: no load probed was shown good")
			if ls := unconfirmed(cs); len(ls) > 0 {
				// The probe table shows "good" at these loads: say why
				// they do not count.
				var ws []string
				for _, v := range ls {
					ws = append(ws, l(v))
				}
				lead += b.T(" (%s probed good, but a later probe at the same load did not, so none is counted)", b.joinAnd(ws))
			}
			break
		}
		lead = b.W("Capacity: ") + l(cs.Load)
		if cs.UpperBound > 0 {
			lead += b.T(", between %s and %s (the search's resolution %s)", l(cs.Load), l(cs.UpperBound), cs.Resolution)
		} else if cs.Outcome == search.Budget {
			lead = b.W("Capacity at least ") + l(cs.Load)
		}
		if cs.Below > 0 {
			lead += b.T("; the knee lies between %s and %s", l(cs.Below), l(cs.Load))
		}
		if lim := searchLimit(cs); lim != "" {
			lead += b.W(", limited by ") + lim
		}
		if cs.Outcome == search.Budget {
			level = doc.Warn
			lead += b.W(" — not to the resolution: the probe or time budget ran out")
		}
	}
	if cs.FailBelow > 0 {
		switch {
		case cs.Load >= cs.FailBelow:
			lead += b.T("; at least the %s required", l(cs.FailBelow))
		case cs.Outcome == search.GeneratorLimited || cs.Outcome == search.Budget && cs.UpperBound == 0:
			level = doc.Warn
			lead += b.T("; whether it reaches the %s required is not known", l(cs.FailBelow))
		default:
			level = doc.Fail
			lead += b.T(" — below the %s required", l(cs.FailBelow))
		}
	}
	if cs.Interrupted {
		if level != doc.Fail {
			level = doc.Warn
		}
		lead += b.W(" (the search was interrupted: as far as the probes before it show)")
	}
	if n, m, worst := cs.Starved(); n > 0 {
		if level == doc.OK {
			level = doc.Warn
		}
		lead += b.T(" — uncertain: the load generator waited for a CPU during %d of %d probes (up to %.0f %% of its runnable time), so their response times include its own waits", n, m, worst)
	}
	return level, lead
}

// searchLead is the summary's opening: the answer, what saturated first,
// and what the rest of the report shows.
func (b *builder) searchLead() []doc.Block {
	cs := b.capacitySearch()
	if cs == nil {
		return nil
	}
	level, lead := b.searchAnswer(cs)
	bn := b.bottleneckClause(cs.Bottleneck, searchKind(cs), true)
	out := []doc.Block{&doc.Verdict{Level: level, Text: sentence(lead, bn)}}
	out = append(out, &doc.Para{Note: true, Text: b.searchShownNote(cs)})
	return out
}

func (b *builder) searchShownNote(cs *capacity.Search) string {
	n := len(cs.Probes)
	t := b.T("The search ran %s in %s (capacity section).", b.plural(int64(n), "probe"), dur(time.Duration(cs.ElapsedS*float64(time.Second)).Round(time.Second)))
	for _, p := range cs.Probes {
		if p.Dir == cs.Shown {
			t += b.T(" The rest of this report is the run of %s at %s, %s; each probe's own report is in its directory (%s/report.html).",
				b.red.String(p.Dir), b.searchLoad(cs, p.Load), shownWhy(cs, p), b.red.String(p.Dir))
			break
		}
	}
	return t
}

func shownWhy(cs *capacity.Search, p capacity.SearchProbe) string {
	if p.Verdict == capacity.Good && p.Load == cs.Load {
		return "the capacity"
	}
	return "the last probe"
}

// capacitySearchSection is the capacity section of a search's report.
func (b *builder) capacitySearchSection() doc.Section {
	cs := b.capacitySearch()
	sec := doc.Section{ID: SecCapacity, Title: b.W("Capacity")}
	level, lead := b.searchAnswer(cs)
	sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: level, Text: sentence(lead)})
	// The conclusions' throughput is the search's answer, not the shown
	// probe's own rate.
	b.conclude(doc.AspectThroughput, level, strings.TrimSuffix(lead, "."), b.T("a search of %s (capacity section)", b.plural(int64(len(cs.Probes)), "probe")))
	kind := searchKind(cs)
	sec.Blocks = append(sec.Blocks, &doc.Para{Text: sentence(upperFirst(b.bottleneckClause(cs.Bottleneck, kind, true)))})

	// The probes, in the order they ran.
	sec.Blocks = append(sec.Blocks, b.searchProbesTable(cs, b.red))
	if f := b.searchChart(cs); f != nil {
		sec.Blocks = append(sec.Blocks, f)
	}
	// The USL fit, only when the probes support it.
	if u := cs.USL; u != nil {
		peak := b.W("no peak within reach (coherency κ ≈ 0: throughput approaches λ/σ)")
		if u.PeakLoad != nil && u.PeakThroughputRPS != nil {
			at := b.loadU(*u.PeakLoad, knee.Users)
			if kind == knee.Rate {
				at = b.num3(*u.PeakLoad) + b.W(" requests in flight (by Little's law: the open model's fit is over concurrency, not the arrival rate)")
			}
			peak = b.T("predicted peak %s at %s", b.rps(*u.PeakThroughputRPS), at)
		}
		per := b.W("user")
		if kind == knee.Rate {
			per = b.W("request in flight")
		}
		sec.Blocks = append(sec.Blocks, &doc.Para{Text: b.T("Universal Scalability Law fit over the probes: contention σ = %s, coherency κ = %s, λ = %s per %s; %s; fit quality R² = %.3f.",
			b.loc.Num(coef(u.Sigma)), b.loc.Num(coef(u.Kappa)), b.rate(u.Lambda), per, peak, u.R2)})
	} else if why := cs.USLReason; cs.USLSkip != nil || why != "" {
		if cs.USLSkip != nil {
			why = uslSkipText(b.numbers, *cs.USLSkip)
		}
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: sentence(b.W("No USL fit over the probes: ") + why)})
	}
	return sec
}

// SearchProbesTable is a capacity search's probes in the order they ran,
// in loc's language: load, throughput, response times, errors, each
// requirement's statistic (with its interval when it has one) and the
// search's verdict. The search's report shows it in its capacity section,
// a study under the capacity question the search answers; red redacts
// what the plan keeps secret.
func SearchProbesTable(cs *capacity.Search, red *Redactor, loc *locale.Locale) *doc.Table {
	return numbers{loc}.searchProbesTable(cs, red)
}

func (b numbers) searchProbesTable(cs *capacity.Search, red *Redactor) *doc.Table {
	reqs := searchReqNames(cs)
	t := &doc.Table{Caption: b.W("The search's probes, in the order they ran (each judged over its measured part, warm-up excluded)"),
		Columns: []doc.Column{{Name: b.W("Probe")}, {Name: b.W("Step")}, {Name: b.W("Load (") + cs.Unit + ")", Align: doc.Right},
			{Name: b.W("Throughput (req/s)"), Align: doc.Right}, {Name: b.W("Average (ms)"), Align: doc.Right}, {Name: b.W("p95 (ms)"), Align: doc.Right},
			{Name: b.W("Errors"), Align: doc.Right}}}
	for _, r := range reqs {
		t.Columns = append(t.Columns, doc.Column{Name: red.String(r), Align: doc.Right})
	}
	t.Columns = append(t.Columns, doc.Column{Name: b.W("Verdict")})
	intervals := false
	for _, p := range cs.Probes {
		step := p.Phase.String()
		if p.Repeat {
			step += b.W(" (repeat)")
		}
		row := doc.Row{Cells: []doc.Cell{{Text: red.String(p.Dir)}, {Text: step}, {Text: b.num3(p.Load)},
			{Text: b.rate(p.ThroughputRPS)}, {Text: b.ms(p.MeanMs)}, {Text: b.ms(p.P95Ms)}, {Text: b.pct(p.ErrorPct)}}}
		for _, name := range reqs {
			c := doc.Cell{Text: "–"}
			for _, r := range p.Requirements {
				if r.Expr != name {
					continue
				}
				c.Text = b.num3(r.Observed)
				if r.Low != r.High {
					intervals = true
					c.Text += fmt.Sprintf(" [%s, %s]", b.num3(r.Low), b.num3(r.High))
				}
				switch r.Verdict {
				case search.Breaks:
					c.Level = doc.Fail
				case search.Marginal:
					c.Level = doc.Warn
				}
			}
			row.Cells = append(row.Cells, c)
		}
		row.Cells = append(row.Cells, b.probeVerdictCell(p))
		t.Rows = append(t.Rows, row)
	}
	note := b.W("A probe is good when every requirement held, the planned load was applied and the throughput kept up; the search then bisects between the highest good and the lowest bad load.")
	if !intervals && len(reqs) > 0 {
		note += b.W(" No requirement's statistic has a confidence interval here, so each is judged on its value and no probe is marginal.")
	}
	t.Note = note
	return t
}

func (b numbers) probeVerdictCell(p capacity.SearchProbe) doc.Cell {
	c := b.probeVerdict(p)
	if p.GeneratorStarved && p.Verdict != capacity.NotJudged && p.Verdict != capacity.GeneratorLimited {
		c.Text += b.T(" (generator starved: %.0f %% run-queue wait)", p.RunQueuePct)
		if c.Level == doc.OK {
			c.Level = doc.Warn
		}
	}
	return c
}

func (b numbers) probeVerdict(p capacity.SearchProbe) doc.Cell {
	switch p.Verdict {
	case capacity.Good:
		return doc.Cell{Text: b.W("good"), Level: doc.OK}
	case capacity.Bad:
		t := "bad"
		if p.LimitedBy != search.RequirementBroke && p.LimitedBy != search.NoLimit {
			t += ": " + p.LimitedBy.String()
		}
		return doc.Cell{Text: t, Level: doc.Fail}
	case capacity.Marginal:
		return doc.Cell{Text: b.W("marginal"), Level: doc.Warn}
	case capacity.GeneratorLimited:
		return doc.Cell{Text: b.W("generator-limited: not evidence about the system"), Level: doc.Warn}
	}
	if p.Interrupted {
		return doc.Cell{Text: b.W("interrupted: not judged")}
	}
	return doc.Cell{Text: b.W("cut short by the engine: not judged, run again")}
}

// searchReqNames are the requirements the probes measured, in plan order.
func searchReqNames(cs *capacity.Search) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range cs.Probes {
		for _, r := range p.Requirements {
			if !seen[r.Expr] {
				seen[r.Expr] = true
				out = append(out, r.Expr)
			}
		}
	}
	return out
}

// searchChart draws load against throughput (left axis) and the limiting
// requirement's statistic with its limit (right axis), each probe a point
// coloured by its verdict.
func (b *builder) searchChart(cs *capacity.Search) *doc.Figure {
	var ps []capacity.SearchProbe
	for _, p := range cs.Probes {
		if p.Verdict != capacity.NotJudged {
			ps = append(ps, p)
		}
	}
	if len(ps) == 0 {
		return nil
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Load < ps[j].Load })
	loadName := b.W("Users")
	if cs.Unit == "req/s" {
		loadName = b.W("Offered rate (req/s)")
	}
	// The requirement that limited the search, else the first.
	reqName := cs.Requirement
	if reqName == "" {
		if names := searchReqNames(cs); len(names) > 0 {
			reqName = names[0]
		}
	}
	// The statistic is the requirement's left side: "p50(response_time)".
	stat, unit := b.W("average response time"), "ms"
	if e, err := sla.Parse(reqName); err == nil && reqName != "" {
		if i := strings.Index(e.Text, e.Op); i > 0 {
			stat = b.red.String(strings.TrimSpace(e.Text[:i]))
		}
		unit = e.Unit()
	}
	c := &chart.Chart{Title: b.W("The probes: throughput and ") + stat + b.W(" against load"), XKind: chart.Linear, XLabel: loadName,
		Y: chart.Axis{Label: b.W("Throughput (req/s)"), Unit: "req/s"}, Height: 320}
	c.Y2 = &chart.Axis{Label: stat + " (" + unit + ")", Unit: unit}
	var lx, ly, rx, ry []float64
	limit := math.NaN()
	for _, p := range ps {
		lx, ly = append(lx, p.Load), append(ly, p.ThroughputRPS)
		v := math.NaN()
		if reqName == "" {
			v = p.MeanMs
		}
		for _, r := range p.Requirements {
			if r.Expr == reqName {
				v, limit = r.Observed, r.Limit
			}
		}
		rx, ry = append(rx, p.Load), append(ry, v)
	}
	c.Series = append(c.Series, chart.Series{Name: b.W("throughput"), Color: colTput, X: lx, Y: ly, Style: chart.Line, Width: 1.2},
		chart.Series{Name: stat, Color: colAvg, X: rx, Y: ry, Style: chart.Line, Width: 1.2, Dash: true, Right: true})
	if !math.IsNaN(limit) {
		c.Series = append(c.Series, chart.Series{Name: b.W("its limit, ") + b.num3(limit) + " " + unit, Color: "#e15759", X: []float64{lx[0], lx[len(lx)-1]}, Y: []float64{limit, limit}, Dash: true, Width: 1, Right: true})
	}
	// Markers by verdict, on both curves.
	for _, v := range []struct {
		verdict capacity.ProbeVerdict
		name    string
		color   string
	}{{capacity.Good, b.W("good probe"), "#59a14f"}, {capacity.Bad, b.W("bad probe"), "#e15759"}, {capacity.Marginal, b.W("marginal probe"), "#edc948"},
		{capacity.GeneratorLimited, b.W("generator-limited probe"), "#bab0ac"}} {
		var x, y, y2 []float64
		for i, p := range ps {
			if p.Verdict == v.verdict {
				x, y, y2 = append(x, p.Load), append(y, p.ThroughputRPS), append(y2, ry[i])
			}
		}
		if len(x) == 0 {
			continue
		}
		c.Series = append(c.Series, chart.Series{Name: v.name, Color: v.color, X: x, Y: y, Style: chart.Points},
			chart.Series{Color: v.color, X: x, Y: y2, Style: chart.Points, Right: true})
	}
	if cs.Load > 0 {
		c.Markers = append(c.Markers, chart.Marker{X: cs.Load, Label: "capacity"})
	}
	if u := cs.USL; u != nil && cs.Unit == "users" {
		hi := lx[len(lx)-1]
		var ux, uy []float64
		ul := knee.USL{Lambda: u.Lambda, Sigma: u.Sigma, Kappa: u.Kappa}
		for i := 1; i <= 60; i++ {
			n := hi * float64(i) / 60
			ux, uy = append(ux, n), append(uy, ul.Throughput(n))
		}
		c.Series = append(c.Series, chart.Series{Name: b.W("USL fit"), Color: "#222", X: ux, Y: uy, Dash: true, Width: 1.4})
	}
	caption := sentences(b.W("each probe is a point on both curves, coloured by the search's verdict: the solid curve is its throughput (left axis), the dashed one the requirement's statistic (right axis) with the limit as a red dashed line"),
		strings.TrimSpace(map[bool]string{true: "the vertical line marks the capacity", false: ""}[cs.Load > 0]))
	return b.figure("capacity-search", c, caption)
}

// unconfirmed are the loads, in probe order, that a probe found good and
// the last probe at that load did not: a search without a capacity whose
// probe table nevertheless shows "good" there.
func unconfirmed(cs *capacity.Search) []float64 {
	last := map[float64]capacity.ProbeVerdict{}
	good := map[float64]bool{}
	var order []float64
	for _, p := range cs.Probes {
		if p.Verdict == capacity.NotJudged {
			continue
		}
		if _, seen := last[p.Load]; !seen {
			order = append(order, p.Load)
		}
		last[p.Load] = p.Verdict
		good[p.Load] = good[p.Load] || p.Verdict == capacity.Good
	}
	var out []float64
	for _, v := range order {
		if good[v] && last[v] != capacity.Good {
			out = append(out, v)
		}
	}
	return out
}
