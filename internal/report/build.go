package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// Section ids, in report order. They are stable anchors for tools.
const (
	SecSummary      = "summary"
	SecRequirements = "requirements"
	SecRuns         = "runs"
	SecResults      = "results"
	SecResources    = "resources"
	SecErrors       = "errors"
	SecCapacity     = "capacity"
	SecTrends       = "trends"
	SecComparison   = "comparison"
	SecConclusions  = "conclusions"
	SecAppendix     = "appendix"
)

// SectionIDs lists every section id in order.
var SectionIDs = []string{SecSummary, SecRequirements, SecRuns, SecResults, SecServer, SecResources, SecErrors,
	SecCapacity, SecTrends, SecComparison, SecConclusions, SecAppendix}

// builder accumulates the document and the facts the summary and the
// conclusions restate.
type builder struct {
	// numbers formats values, and T words messages, in the document's
	// language (in.loc).
	numbers
	in    *input
	d     *analysis.Dataset
	s     *analysis.Summary
	red   *Redactor
	doc   *doc.Document
	extra *doc.Extra

	// findings are collected by the sections in order of importance and
	// become the summary bullets.
	findings []doc.Finding
	// conclusions per aspect, filled by the sections that judge them.
	conclusions map[doc.Aspect]doc.Conclusion
	figN        int
}

func build(in *input) *doc.Document {
	redactSummary(in.s, in.red)
	sortErrors(in.s.Errors.Details)
	b := &builder{numbers: numbers{loc: in.loc}, in: in, d: in.d, s: in.s, red: in.red, conclusions: map[doc.Aspect]doc.Conclusion{}}
	b.extra = &doc.Extra{Generated: in.now.UTC().Truncate(time.Second), Notes: in.notes, Environment: environment(in)}
	b.doc = &doc.Document{
		Lang:      in.loc,
		Title:     b.T("Performance report: %s", in.red.String(nonEmpty(in.d.Info.Name, b.W("unnamed run")))),
		Subtitle:  b.subtitle(),
		Generated: b.extra.Generated,
		Tool:      strings.TrimSpace("plateau " + in.version),
		Summary:   in.s,
		Extra:     b.extra,
	}
	// Sections are built in dependency order; the summary restates what
	// the others found, so it is built last and placed first. One file per
	// section: sec_runs.go, sec_results.go, serverside.go, resources.go,
	// sec_errors.go, sec_capacity.go, sec_trends.go, sec_comparison.go,
	// sections.go (conclusions, appendix); the resource verdicts they share
	// are worded in judge_resources.go and services.go.
	secs := map[string]doc.Section{}
	secs[SecRequirements] = b.requirements()
	secs[SecRuns] = b.runs()
	if cb := ContextBlocksIn(in.d.Info.Context, b.red.String, in.loc); len(cb) > 0 {
		r := secs[SecRuns]
		r.Blocks = append(cb, r.Blocks...)
		secs[SecRuns] = r
	}
	if line := b.commandsLine(); line != nil {
		r := secs[SecRuns]
		r.Blocks = append(append(r.Blocks, line), b.dataVolume()...)
		secs[SecRuns] = r
	}
	secs[SecResults] = b.results()
	secs[SecServer] = b.serverSide()
	secs[SecResources] = b.resources()
	secs[SecErrors] = b.errors()
	secs[SecCapacity] = b.capacity()
	if b.capacitySearch() != nil {
		secs[SecCapacity] = b.capacitySearchSection()
	}
	secs[SecTrends] = b.trends()
	secs[SecComparison] = b.comparison()
	secs[SecConclusions] = b.conclusionsSection()
	secs[SecAppendix] = b.appendix()
	secs[SecSummary] = b.summary()
	for _, id := range SectionIDs {
		b.doc.Sections = append(b.doc.Sections, secs[id])
	}
	return b.doc
}

func nonEmpty(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}

func (b *builder) subtitle() string {
	d := b.d
	parts := []string{}
	if d.Info.Target != "" {
		parts = append(parts, b.T("target %s", b.red.String(d.Info.Target)))
	}
	parts = append(parts, fmt.Sprintf("%s – %s (%s)", b.clock(d.Start), b.hms(d.End), zoneName(d.Start)))
	parts = append(parts, b.T("duration %s", dur(d.Span())))
	switch d.Info.Status {
	case "", "completed":
	default:
		parts = append(parts, b.W("run status: ")+d.Info.Status)
	}
	return strings.Join(parts, " · ")
}

func zoneName(t time.Time) string {
	name, off := t.Zone()
	if name != "" && !strings.HasPrefix(name, "+") && !strings.HasPrefix(name, "-") {
		return name
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, off/3600, off%3600/60)
}

// finding adds a summary bullet of kind k, one sentence from its clauses.
func (b *builder) finding(k doc.FindingKind, l doc.Level, cs ...string) {
	if text := sentence(cs...); text != "" {
		b.findings = append(b.findings, doc.Finding{Kind: k, Level: l, Text: text})
	}
}

// dropFindings removes the findings of kind k.
func (b *builder) dropFindings(k doc.FindingKind) {
	b.findings = slices.DeleteFunc(b.findings, func(f doc.Finding) bool { return f.Kind == k })
}

// conclude records the verdict on one aspect; its evidence is built from
// clauses.
func (b *builder) conclude(aspect doc.Aspect, l doc.Level, verdict string, evidence ...string) {
	b.conclusions[aspect] = doc.Conclusion{Aspect: aspect, Level: l, Verdict: clause(verdict), Evidence: clauses(evidence...)}
}

// noData is the one-line statement a section gives when it has nothing.
func noData(text string) *doc.Verdict { return &doc.Verdict{Level: doc.NoData, Text: text} }

// ---- summary ------------------------------------------------------------

func (b *builder) summary() doc.Section {
	sec := doc.Section{ID: SecSummary, Title: b.W("Summary")}
	st := b.status()
	b.doc.Status = st
	sec.Blocks = append(sec.Blocks, &st)
	sec.Blocks = append(sec.Blocks, b.searchLead()...)
	sec.Blocks = append(sec.Blocks, b.validityBlocks()...)
	// Keep 3–8 bullets: the most important first; pad with the load
	// statement when a run has little to say.
	items := append([]doc.Finding(nil), b.findings...)
	sort.SliceStable(items, func(i, j int) bool { return items[i].Kind.Rank() < items[j].Kind.Rank() })
	if len(items) > 8 {
		items = items[:8]
	}
	b.extra.Findings = items
	l := &doc.List{}
	for _, f := range items {
		l.Items = append(l.Items, doc.Item{Level: f.Level, Text: f.Text})
	}
	if len(l.Items) > 0 {
		sec.Blocks = append(sec.Blocks, l)
	}
	sec.Blocks = append(sec.Blocks, b.validityTable()...)
	return sec
}

// status is the one-line test status (validity.go).
func (b *builder) status() doc.Verdict { return b.testStatus() }

func stopReason(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

func (b numbers) reqCount(n int, all bool) string {
	switch {
	case n == 1 && all:
		return b.W("the one requirement")
	case n == 1:
		return b.W("1 requirement")
	case all:
		return b.T("all %d requirements", n)
	}
	return b.T("%d requirements", n)
}

// ---- requirements ---------------------------------------------------------

func (b *builder) requirements() doc.Section {
	sec := doc.Section{ID: SecRequirements, Title: b.W("Scope and requirements")}
	info := b.d.Info
	kv := &doc.Table{Caption: b.W("Scope"), Columns: []doc.Column{{Name: b.W("Item")}, {Name: b.W("Value")}}}
	add := func(k, v string) {
		if v != "" {
			kv.Rows = append(kv.Rows, doc.Row{Cells: []doc.Cell{{Text: k}, {Text: b.red.String(v)}}})
		}
	}
	add(b.W("Plan"), nonEmpty(info.Name, "–"))
	add(b.W("Plan file"), info.PlanFile)
	add(b.W("Target"), info.Target)
	add(b.W("Run status"), b.statusWord(info.Status))
	if len(info.Source) > 0 {
		var src []string
		for _, x := range info.Source {
			src = append(src, b.worded(info, x))
		}
		add(b.W("Imported from"), strings.Join(src, ", "))
	}
	add(b.W("Time span"), fmt.Sprintf("%s – %s (%s)", b.clock(b.d.Start), b.clock(b.d.End), dur(b.d.Span())))
	sec.Blocks = append(sec.Blocks, kv)

	if len(info.Workloads) > 0 {
		t := &doc.Table{Caption: b.W("Workloads"), Columns: []doc.Column{{Name: b.W("Workload")}, {Name: b.W("Model")},
			{Name: b.W("Users"), Align: doc.Right}, {Name: b.W("Rate (req/s)"), Align: doc.Right}, {Name: b.W("Think time")}, {Name: b.W("Load")}}}
		for _, w := range info.Workloads {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: b.red.String(w.Name)}, {Text: b.modelWord(w.Model)},
				{Text: b.intOrDash(w.Users)}, {Text: b.floatOrDash(w.Rate)}, {Text: nonEmpty(w.Think, "–")}, {Text: b.red.String(b.shapeText(w))}}})
		}
		sec.Blocks = append(sec.Blocks, t)
	}

	if len(b.s.SLA) == 0 {
		sec.Blocks = append(sec.Blocks, noData(b.W("No requirements (SLA) in the plan: nothing to judge. Add an `sla:` list to the plan to get a verdict and an exit code.")))
		return sec
	}
	t := &doc.Table{Caption: b.W("Requirements, judged over the run and per phase"),
		Columns: []doc.Column{{Name: b.W("Requirement")}, {Name: b.W("Verdict")}, {Name: b.W("Observed"), Align: doc.Right},
			{Name: b.W("Measured over")}, {Name: b.W("Per phase")}}}
	for _, r := range b.s.SLA {
		verdict := doc.Cell{Text: b.W("held"), Level: doc.OK}
		switch {
		case r.Error != "" && !r.NoData:
			verdict = doc.Cell{Text: b.W("invalid"), Level: doc.Fail}
		case r.NoData:
			verdict = doc.Cell{Text: b.W("no data"), Level: doc.Fail}
		case !r.Passed:
			verdict = doc.Cell{Text: b.W("broken"), Level: doc.Fail}
		}
		obs := "–"
		if !r.NoData && r.Error == "" {
			obs = b.obsU(r.Observed, r.Unit)
		}
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: r.Expr}, verdict, {Text: obs},
			{Text: b.scopeText(r)}, {Text: b.perPhaseText(r)}}})
		b.slaFinding(r)
	}
	sec.Blocks = append(sec.Blocks, t)
	if m := b.slaMatrix(); m != nil {
		sec.Blocks = append(sec.Blocks, m)
	}
	return sec
}

func (b numbers) intOrDash(n int) string {
	if n == 0 {
		return "–"
	}
	return b.count(int64(n))
}

func (b numbers) floatOrDash(v float64) string {
	if v == 0 {
		return "–"
	}
	return b.rate(v)
}

// obsU formats an observed SLA value in its unit.
func (b numbers) obsU(v float64, unit string) string {
	switch unit {
	case "ms":
		return b.msU(v)
	case "%":
		return b.pct(v)
	case "/s":
		return b.rps(v)
	}
	return b.num3(v) + " " + unit
}

func (b *builder) scopeText(r analysis.SLAResult) string {
	what := b.W("all requests")
	if e, err := sla.Parse(r.Expr); err == nil {
		switch {
		case e.IsServer() && e.Server != "":
			what = b.W("server ") + e.Server + b.W("'s access log")
		case e.IsServer():
			what = b.W("the attached access logs")
		case e.Label != "":
			what = b.W("label ") + e.Label
		}
	}
	if r.Scope != "run" && r.Scope != "" {
		return what + b.W(" in ") + r.Scope
	}
	return what + b.W(", whole run")
}

// phaseRate is the throughput of all requests in phase name.
func (b *builder) phaseRate(name string) (float64, bool) {
	for _, p := range b.s.Phases {
		if p.Name == name && len(p.Labels) > 0 {
			return p.Labels[len(p.Labels)-1].ThroughputRPS, true
		}
	}
	return 0, false
}

// perPhaseText says where a requirement held and where it broke: "held up
// to step 3 at 25.1 req/s; broke at step 4 (231 ms)".
func (b *builder) perPhaseText(r analysis.SLAResult) string {
	if len(r.PerPhase) == 0 {
		return "–"
	}
	if len(r.PerPhase) == 1 && len(b.d.Phases) <= 1 {
		return "–"
	}
	at := func(name string) string {
		if v, ok := b.phaseRate(name); ok {
			return name + b.W(" at ") + b.rps(v)
		}
		return name
	}
	var broken *analysis.PhaseCheck
	nBroken := 0
	for i := range r.PerPhase {
		if !r.PerPhase[i].Passed {
			if broken == nil {
				broken = &r.PerPhase[i]
			}
			nBroken++
		}
	}
	switch {
	case broken == nil:
		return b.T("held in all %d phases, up to %s", len(r.PerPhase), at(r.PerPhase[len(r.PerPhase)-1].Phase))
	case r.HeldUpTo == "":
		return b.T("broke from the first phase, %s (%s); broken in %d of %d phases", at(broken.Phase), b.obsU(broken.Observed, r.Unit), nBroken, len(r.PerPhase))
	}
	s := b.T("held up to %s; broke at %s (%s)", at(r.HeldUpTo), broken.Phase, b.obsU(broken.Observed, r.Unit))
	if later := nBroken - 1; later > 0 {
		if later == 1 {
			s += b.W(" and in 1 later phase")
		} else {
			s += b.T(" and in %d later phases", later)
		}
	}
	return s
}

// slaFinding adds the summary bullet of one requirement.
func (b *builder) slaFinding(r analysis.SLAResult) {
	e, err := sla.Parse(r.Expr)
	if err != nil || r.Error != "" && !r.NoData {
		b.finding(doc.FindRequirement, doc.Fail, b.T("Requirement %q could not be judged: %s", r.Expr, nonEmpty(r.Error, b.W("invalid expression"))))
		return
	}
	if r.NoData {
		b.finding(doc.FindRequirement, doc.Fail, b.T("Requirement %q had no samples to judge it on", r.Expr))
		return
	}
	desc := b.subjectText(e.Subject())
	what := upperFirst(desc)
	where := b.W("over the run")
	if r.Scope != "run" {
		where = b.W("in ") + r.Scope
	}
	load := ""
	switch {
	case e.Metric == sla.Throughput:
		// The observed value is the throughput: "at" it would repeat it.
	case r.Scope == "run":
		load = b.W(" at ") + b.rps(b.runRate())
	default:
		if v, ok := b.phaseRate(r.Scope); ok {
			load = b.W(" at ") + b.rps(v)
		}
	}
	lim := b.obsU(e.Value, r.Unit)
	rel := b.W("within")
	if !r.Passed {
		rel = b.W("outside")
	}
	text := b.T("%s %s %s%s: %s the requirement %s %s", what, b.obsU(r.Observed, r.Unit), where, load, rel, e.Op, lim)
	lvl := doc.OK
	if !r.Passed {
		lvl = doc.Fail
	}
	perPhase := ""
	if r.FirstBroken != "" && len(r.PerPhase) > 1 {
		perPhase = b.perPhaseText(r)
		if lvl == doc.OK {
			lvl = doc.Warn
		}
	}
	b.finding(doc.FindRequirement, lvl, text, perPhase)
}

// runRate is the throughput of all requests over the run.
func (b *builder) runRate() float64 {
	if n := len(b.s.Labels); n > 0 {
		return b.s.Labels[n-1].ThroughputRPS
	}
	return 0
}

// slaMatrix is a phase × requirement table of observed values.
func (b *builder) slaMatrix() *doc.Table {
	if len(b.d.Phases) < 2 {
		return nil
	}
	t := &doc.Table{Caption: b.W("Requirements per phase"), Columns: []doc.Column{{Name: b.W("Phase")}, {Name: b.W("Load")}, {Name: b.W("Throughput"), Align: doc.Right}}}
	var rs []analysis.SLAResult
	for _, r := range b.s.SLA {
		if len(r.PerPhase) > 0 {
			rs = append(rs, r)
			t.Columns = append(t.Columns, doc.Column{Name: r.Expr, Align: doc.Right})
		}
	}
	if len(rs) == 0 {
		return nil
	}
	for i, p := range b.d.Phases {
		row := doc.Row{Cells: []doc.Cell{{Text: b.red.String(p.Name)}, {Text: b.loadText(p)}, {Text: b.rps(phaseTotal(b.s, i).ThroughputRPS)}}}
		for _, r := range rs {
			c := doc.Cell{Text: "–", Level: doc.NoData}
			for _, pc := range r.PerPhase {
				if pc.Phase == p.Name {
					c = doc.Cell{Text: b.obsU(pc.Observed, r.Unit), Level: doc.OK}
					if !pc.Passed {
						c.Level = doc.Fail
					}
				}
			}
			row.Cells = append(row.Cells, c)
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

// phaseTotal is the TOTAL row of phase i.
func phaseTotal(s *analysis.Summary, i int) core.LabelStats {
	if i < len(s.Phases) && len(s.Phases[i].Labels) > 0 {
		return s.Phases[i].Labels[len(s.Phases[i].Labels)-1]
	}
	return core.LabelStats{}
}

// loadText describes a phase's offered load: "10 users", "25 req/s".
func (b numbers) loadText(p core.Phase) string {
	var parts []string
	if p.Users > 0 {
		parts = append(parts, b.plural(int64(p.Users), "user"))
	}
	if p.Rate > 0 {
		parts = append(parts, b.rps(p.Rate))
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, ", ")
}

// sortErrors orders error details most frequent first, with every field
// as a tie-break so reports of the same run are byte-identical.
func sortErrors(es []analysis.ErrorDetail) {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		switch {
		case a.Count != b.Count:
			return a.Count > b.Count
		case !a.First.Equal(b.First):
			return a.First.Before(b.First)
		case a.Workload != b.Workload:
			return a.Workload < b.Workload
		case a.Label != b.Label:
			return a.Label < b.Label
		case a.Class != b.Class:
			return a.Class < b.Class
		case a.Status != b.Status:
			return a.Status < b.Status
		}
		return a.Message < b.Message
	})
}

// redactSummary masks secrets in every free-text field of the summary.
func redactSummary(s *analysis.Summary, r *Redactor) {
	s.Name = r.String(s.Name)
	for i := range s.Labels {
		s.Labels[i].Label = r.String(s.Labels[i].Label)
	}
	for i := range s.Phases {
		s.Phases[i].Name = r.String(s.Phases[i].Name)
		for j := range s.Phases[i].Labels {
			s.Phases[i].Labels[j].Label = r.String(s.Phases[i].Labels[j].Label)
		}
	}
	for i := range s.SLA {
		s.SLA[i].Expr = r.String(s.SLA[i].Expr)
		s.SLA[i].Error = r.String(s.SLA[i].Error)
	}
	for i := range s.Errors.Details {
		e := &s.Errors.Details[i]
		e.Message = r.String(e.Message)
		e.Label = r.String(e.Label)
	}
	for i := range s.Why {
		w := &s.Why[i]
		w.Subject, w.Target, w.Rule = r.String(w.Subject), r.String(w.Target), r.String(w.Rule)
	}
	if t := s.Trends; t != nil {
		for i := range t.Latency {
			t.Latency[i].Label, t.Latency[i].Phase = r.String(t.Latency[i].Label), r.String(t.Latency[i].Phase)
		}
		for i := range t.Memory {
			t.Memory[i].Target = r.String(t.Memory[i].Target)
		}
	}
	if c := s.Capacity; c != nil {
		for i := range c.Points {
			c.Points[i].Phase = r.String(c.Points[i].Phase)
		}
		// The bottleneck is shared with the capacity analysis the
		// sections word, so they print the masked names too.
		if bn := c.Bottleneck; bn != nil {
			bn.Component, bn.Target = r.String(bn.Component), r.String(bn.Target)
			bn.Phase, bn.AlsoPhase = r.String(bn.Phase), r.String(bn.AlsoPhase)
			for i := range bn.Also {
				bn.Also[i].Component, bn.Also[i].Target = r.String(bn.Also[i].Component), r.String(bn.Also[i].Target)
			}
		}
	}
}
