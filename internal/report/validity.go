package report

import (
	"math"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// The test status and the run's validity (did it apply the planned load?),
// as the summary's first lines and the conclusions' first statement state
// them. The judgement is analysis.Summary.Verdict and .Validity; this file
// only renders it.

// testStatus is the one-line test status from the summary's verdict.
func (b *builder) testStatus() doc.Verdict {
	s := b.s
	failed := 0
	for _, r := range s.SLA {
		if !r.Passed {
			failed++
		}
	}
	incomplete := ""
	switch b.d.Info.Status {
	case "running":
		incomplete = b.W("The run did not finish (run.json still says running): results cover it up to ") + b.hms(b.d.End) + "."
	case "interrupted":
		incomplete = b.W("The run was interrupted") + stopReason(b.d.Info.Stopped) + b.W(": results cover only the time it ran.")
	case "failed":
		incomplete = b.W("The run failed") + stopReason(b.d.Info.Stopped) + "."
	}
	b.extra.Status = s.Verdict
	var v doc.Verdict
	switch s.Verdict {
	case analysis.VerdictPassed:
		v = doc.Verdict{Level: doc.OK, Text: b.T("Test status: PASSED — %s held.", b.reqCount(len(s.SLA), true))}
	case analysis.VerdictFailed:
		v = doc.Verdict{Level: doc.Fail, Text: b.T("Test status: FAILED — %d of %s broken.", failed, b.reqCount(len(s.SLA), false))}
	case analysis.VerdictInvalid:
		v = doc.Verdict{Level: doc.Fail, Text: b.W("Test status: INVALID — the planned load was not applied, so the results do not show the plan's load.")}
	case analysis.VerdictInterrupted:
		v = doc.Verdict{Level: doc.Fail, Text: b.W("Test status: INTERRUPTED.")}
	case analysis.VerdictNotRun:
		v = doc.Verdict{Level: doc.Fail, Text: b.W("Test status: COULD NOT RUN — ") + finish(b.red.String(strings.Join(s.VerdictReasons, "; ")))}
	default:
		v = doc.Verdict{Level: doc.Info, Text: b.W("Test status: NO REQUIREMENTS — the plan states no SLA, so nothing was judged.")}
		if t := b.d.Total; t != nil && t.Count > 0 {
			v.Text += b.T(" Error rate %s (%s of %s requests).", b.pct(100*float64(t.Errors)/float64(t.Count)),
				b.thousands(t.Errors), b.thousands(t.Count))
		}
	}
	v.Text = sentences(v.Text, incomplete)
	return v
}

// validityBlocks states why the planned load was not applied, one item per
// reason; nothing when it was.
// Warnings beside the verdict (a starved generator) follow, one item each.
func (b *builder) validityBlocks() []doc.Block {
	v := b.s.Validity
	if v == nil {
		return nil
	}
	l := &doc.List{}
	if v.Verdict == "invalid" {
		for _, r := range v.Reasons {
			l.Items = append(l.Items, doc.Item{Level: doc.Fail, Lead: b.W("Load not held"), Text: finish(b.red.String(r))})
		}
	}
	for _, w := range b.warnings(v) {
		lead := b.W("Load")
		if w.Kind == analysis.ReasonStarved {
			lead = b.W("Generator starved")
		}
		l.Items = append(l.Items, doc.Item{Level: doc.Warn, Lead: lead, Text: finish(b.red.String(w.Text))})
	}
	if len(l.Items) == 0 {
		return nil
	}
	return []doc.Block{l}
}

// validityTable is the table of planned against achieved load per phase,
// closing the summary, with the response time from the intended start beside
// the service time from the actual send (so generator queueing shows apart
// from server time). Nothing when there are no phases.
func (b *builder) validityTable() []doc.Block {
	v := b.s.Validity
	if v == nil || len(v.Phases) == 0 {
		return nil
	}
	h := b.holds()
	// Each column is shown only when the data holds its quantity: an
	// import has no planned load to judge against and no intended start,
	// and a run where no request succeeded held no load at all.
	notRun := b.s.Verdict == analysis.VerdictNotRun
	type col struct {
		c    doc.Column
		cell func(p analysis.PhaseValidity) doc.Cell
	}
	txt := func(f func(p analysis.PhaseValidity) string) func(p analysis.PhaseValidity) doc.Cell {
		return func(p analysis.PhaseValidity) doc.Cell { return doc.Cell{Text: f(p)} }
	}
	open := func(p analysis.PhaseValidity, s string) string {
		if p.Model != "open" && p.Model != "pacing" {
			return "–"
		}
		return s
	}
	cols := []col{{doc.Column{Name: b.W("Phase")}, txt(func(p analysis.PhaseValidity) string { return b.red.String(p.Phase) })}}
	if h.PlannedLoad {
		cols = append(cols,
			col{doc.Column{Name: b.W("Planned /s"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return open(p, b.rate(p.PlannedRate)) })},
			col{doc.Column{Name: b.W("Achieved /s"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return open(p, b.rate(p.AchievedRate)) })},
			col{doc.Column{Name: b.W("Dropped"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return open(p, b.thousands(p.Dropped)) })})
	}
	cols = append(cols,
		col{doc.Column{Name: b.W("Users (max)"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string {
			users := b.intOrDash(p.PeakUsers)
			if p.MaxUsers > 0 {
				users += " (" + b.thousands(int64(p.MaxUsers)) + ")"
			}
			return users
		})},
		col{doc.Column{Name: b.W("Req/s"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return b.rate(p.RequestsPerS) })})
	if h.Durations && h.COCorrection {
		cols = append(cols,
			col{doc.Column{Name: b.W("Response ms (from intended start)"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return b.ms(p.ResponseMs) })},
			col{doc.Column{Name: b.W("Service ms (from send)"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return b.msOrDash(p.ServiceMs) })})
	} else if h.Durations {
		cols = append(cols, col{doc.Column{Name: b.W("Response ms"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return b.ms(p.ResponseMs) })})
	}
	if h.Durations {
		cols = append(cols, col{doc.Column{Name: b.W("In flight (Little)"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string { return b.num3(p.InFlight) })})
	}
	if h.GeneratorEnv {
		cols = append(cols, col{doc.Column{Name: b.W("Generator process CPU (of all cores)"), Align: doc.Right}, txt(func(p analysis.PhaseValidity) string {
			if p.CPUPct > 0 {
				return b.pct(p.CPUPct)
			}
			return "–"
		})})
	}
	if h.PlannedLoad {
		cols = append(cols, col{doc.Column{Name: b.W("Held")}, func(p analysis.PhaseValidity) doc.Cell {
			switch {
			case notRun || p.NoSuccess:
				return doc.Cell{Text: "–", Level: doc.NoData} // no request succeeded: no load was held
			case !p.Held:
				return doc.Cell{Text: b.W("no"), Level: doc.Fail}
			}
			return doc.Cell{Text: b.W("yes"), Level: doc.OK}
		}})
	}
	caption := b.W("Load applied: planned against achieved, per phase")
	if !h.PlannedLoad {
		caption = b.W("Load recorded per phase (the imported data hold no planned load to judge it against)")
	}
	t := &doc.Table{Caption: caption}
	for _, c := range cols {
		t.Columns = append(t.Columns, c.c)
	}
	for _, p := range v.Phases {
		row := doc.Row{}
		for _, c := range cols {
			row.Cells = append(row.Cells, c.cell(p))
		}
		t.Rows = append(t.Rows, row)
	}
	return []doc.Block{t}
}

// validityConclusion is the conclusions' first statement when the load was
// not held: every other conclusion is about a load the plan did not ask for.
func (b *builder) validityConclusion() []doc.Block {
	v := b.s.Validity
	if v == nil || v.Verdict != "invalid" {
		return nil
	}
	return []doc.Block{&doc.Verdict{Level: doc.Fail,
		Text: sentence(b.W("The planned load was not applied, so these conclusions describe a lighter load than planned"), b.red.String(v.Reasons[0]))}}
}

func (b numbers) msOrDash(v float64) string {
	if v == 0 {
		return "–"
	}
	return b.ms(v)
}

// Warnings are the validity findings that do not make the run invalid,
// worded, one line each: the phases where the generator was starved of CPU
// are named together in one line (the demo's four phases on a busy
// machine are one fact, not four).
func Warnings(v *analysis.Validity) []Warning { return numbers{}.warnings(v) }

// WarningsIn is Warnings in the language loc (nil is English).
func WarningsIn(v *analysis.Validity, loc *locale.Locale) []Warning { return numbers{loc}.warnings(v) }

// warnings is Warnings in the document's language.
func (b numbers) warnings(v *analysis.Validity) []Warning {
	if v == nil {
		return nil
	}
	var out []Warning
	var starved []string
	at := -1 // where the starved line goes: the first one's place
	maxPct, totalMs := 0.0, 0.0
	for _, f := range v.Warnings() {
		if f.Kind != analysis.ReasonStarved {
			out = append(out, Warning{f.Kind, f.Text})
			continue
		}
		if at < 0 {
			at = len(out)
			out = append(out, Warning{f.Kind, f.Text}) // the one phase's own sentence has its figures
		}
		starved = append(starved, f.Phase)
		for _, p := range v.Phases {
			if p.Phase == f.Phase {
				maxPct, totalMs = max(maxPct, p.RunQueuePct), totalMs+p.RunQueueMs
			}
		}
	}
	if len(starved) > 1 {
		out[at].Text = b.T("the generator was starved of CPU in %s (%s): its threads waited up to %s of their runnable time for a CPU held by other processes (%s ms in all), so its response times include its own waiting",
			b.plural(int64(len(starved)), "phase"), b.joinAnd(starved), b.pct(maxPct), b.thousands(int64(math.Round(totalMs))))
	}
	return out
}

// Warning is one worded validity warning and what it is about.
type Warning struct {
	Kind analysis.ReasonKind
	Text string
}
