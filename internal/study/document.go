package study

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/chart"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/html"
	"github.com/plateau-perf/plateau/internal/report/markdown"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// File names written by Write.
const (
	HTMLFile     = "study.html"
	MarkdownFile = "study.md"
	ChartDir     = "study-charts"
	JSONFile     = "study.json"
	JUnitFile    = "study-junit.xml"
)

// Document lays the study out for the report's writers: the status and
// one answer per question first, the validity banner, the causes, then
// the tables the answers stand on.
func Document(s *Study, now time.Time, tool string) *doc.Document {
	wd := s.words()
	d := &doc.Document{Lang: wd.loc, Title: s.Title, Generated: now.UTC().Truncate(time.Second), Tool: tool,
		Subtitle: wd.T("%d runs · %d questions · baseline %s", len(s.Runs), len(s.Answers), s.Baseline)}
	d.Status = doc.Verdict{Level: outcomeLevel(s.Status), Text: report.Sentence(wd.outcome(s.Status) + ": " + s.StatusWhy)}
	d.Sections = append(d.Sections, wd.answersSection(s))
	if v := wd.validitySection(s); v != nil {
		d.Sections = append(d.Sections, *v)
	}
	ctx := doc.Section{ID: "context", Title: wd.W("Context")}
	for _, p := range []struct{ lead, text string }{{"", s.Description}, {"Method", s.Method}, {"Hypothesis", s.Hypothesis}} {
		if p.text != "" {
			t := report.Sentence(p.text)
			if p.lead != "" {
				t = p.lead + ": " + t
			}
			ctx.Blocks = append(ctx.Blocks, &doc.Para{Text: t})
		}
	}
	for _, kt := range []struct {
		cap string
		kv  []KV
	}{{wd.W("System under test"), s.System}, {"Environment", s.Environment}} {
		if len(kt.kv) == 0 {
			continue
		}
		t := &doc.Table{Caption: kt.cap, Columns: []doc.Column{{Name: wd.W("Item")}, {Name: wd.W("Value")}}}
		for _, kv := range kt.kv {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: kv.Name}, {Text: kv.Value}}})
		}
		ctx.Blocks = append(ctx.Blocks, t)
	}
	if len(s.Limits) > 0 {
		t := &doc.Table{Caption: wd.W("Configured limits"), Columns: []doc.Column{{Name: wd.W("Limit")}, {Name: wd.W("Value"), Align: doc.Right}}}
		for _, l := range s.Limits {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: l.Name}, {Text: wd.num(l.Value)}}})
		}
		ctx.Blocks = append(ctx.Blocks, t)
	}
	if len(ctx.Blocks) > 0 {
		d.Sections = append(d.Sections, ctx)
	}
	d.Sections = append(d.Sections, wd.evidenceSection(s))
	if c := wd.causesSection(s); c != nil {
		d.Sections = append(d.Sections, *c)
	}

	flagged := map[string]bool{}
	for _, v := range s.Validity {
		flagged[v.Run] = true
	}
	mark := func(name string) string {
		if flagged[name] {
			return name + " " + wd.text.BannerMark
		}
		return name
	}
	runs := doc.Section{ID: report.SecRuns, Title: wd.W("Runs")}
	// A study whose runs hold several workloads gives each workload's
	// average and p95, never one of all requests (which would mix
	// requests that are different things).
	var workloads []string
	for _, r := range s.Runs {
		for _, w := range r.Workloads {
			if !slices.Contains(workloads, w.Workload) {
				workloads = append(workloads, w.Workload)
			}
		}
	}
	cols := []doc.Column{{Name: wd.W("Run")}, {Name: wd.W("Role")}, {Name: wd.W("Group")}, {Name: wd.W("Compared with")}, {Name: wd.W("Duration (s)"), Align: doc.Right},
		{Name: wd.W("Requests"), Align: doc.Right}, {Name: wd.W("Throughput (req/s)"), Align: doc.Right}, {Name: wd.W("Error %"), Align: doc.Right}}
	if len(workloads) == 0 {
		cols = append(cols, doc.Column{Name: wd.W("Average (ms)"), Align: doc.Right}, doc.Column{Name: wd.W("p95 (ms)"), Align: doc.Right})
	}
	for _, w := range workloads {
		cols = append(cols, doc.Column{Name: wd.T("%s average (ms)", w), Align: doc.Right}, doc.Column{Name: wd.T("%s p95 (ms)", w), Align: doc.Right})
	}
	rt := &doc.Table{Columns: append(cols, doc.Column{Name: wd.W("Verdict")})}
	// A run others of its group are compared with is their reference,
	// whatever the file's default role says (001: the previous release at
	// 20 users read "candidate" though the current release is the one
	// compared with it).
	referenced := map[string]bool{}
	for _, r := range s.Runs {
		if r.ComparedWith != "" {
			referenced[r.ComparedWith] = true
		}
	}
	for _, r := range s.Runs {
		cw := r.ComparedWith
		if cw == "" {
			cw = "—"
		}
		role := r.Role
		if role == Candidate && referenced[r.Name] {
			role = wd.W("group reference")
		}
		c := []doc.Cell{{Text: mark(r.Name)}, {Text: role}, {Text: r.Group}, {Text: cw}, {Text: wd.f1(r.DurationS)},
			{Text: strconv.FormatInt(r.Requests, 10)}, {Text: wd.f2(r.ThroughputRPS)}, {Text: wd.f2(r.ErrorPct)}}
		if len(workloads) == 0 {
			c = append(c, doc.Cell{Text: wd.msCell(r.MeanMs)}, doc.Cell{Text: wd.msCell(r.P95Ms)})
		}
		for _, w := range workloads {
			j := slices.IndexFunc(r.Workloads, func(x RunWorkload) bool { return x.Workload == w })
			if j < 0 {
				c = append(c, doc.Cell{Text: "—"}, doc.Cell{Text: "—"})
				continue
			}
			c = append(c, doc.Cell{Text: wd.msCell(r.Workloads[j].MeanMs)}, doc.Cell{Text: wd.msCell(r.Workloads[j].P95Ms)})
		}
		rt.Rows = append(rt.Rows, doc.Row{Cells: append(c, doc.Cell{Text: r.Verdict})})
	}
	if len(workloads) > 0 {
		runs.Blocks = append(runs.Blocks, &doc.Para{Note: true, Text: report.Sentence(wd.T("the runs hold several workloads (%s), whose requests are different things: each workload's average and 95th percentile are given, from its own requests, and none of all requests, which would weigh them by how many of each a run happened to send", wd.list(workloads)))})
	}
	runs.Blocks = append(runs.Blocks, rt)
	if len(flagged) > 0 {
		runs.Blocks = append(runs.Blocks, &doc.Para{Note: true, Text: report.Sentence(wd.text.BannerMark + wd.text.NoteMarkRun)})
	}
	d.Sections = append(d.Sections, runs)
	for i, sr := range s.Series {
		var rs []compare.RunStats
		for _, j := range sr.idx {
			r := s.Runs[j]
			rs = append(rs, compare.RunStats{Name: mark(r.Name), Load: r.Load, Users: r.users, Rate: r.rate,
				Stats: core.LabelStats{MeanMs: r.MeanMs, P95Ms: r.P95Ms, ThroughputRPS: r.ThroughputRPS, ErrorPct: r.ErrorPct}})
		}
		if sp, err := compare.Summarize(rs); err == nil {
			sec := report.SeriesSectionIn(&sp, wd.loc)
			sec.ID = fmt.Sprintf("series-%d", i+1)
			sec.Title = wd.W("Load series: ") + sr.Name
			// One page may hold several series: each chart gets its own
			// name (its Markdown file) and clip-path id.
			for _, b := range sec.Blocks {
				if f, ok := b.(*doc.Figure); ok {
					id := fmt.Sprintf("study-series-%d", i+1)
					f.SVG = bytes.ReplaceAll(f.SVG, []byte(f.Name), []byte(id))
					f.Name = id
				}
			}
			d.Sections = append(d.Sections, sec)
		}
	}
	if sec := wd.capacitySection(s); sec != nil {
		d.Sections = append(d.Sections, *sec)
	}
	res := doc.Section{ID: report.SecResults, Title: wd.W("Per label, all runs")}
	res.Blocks = append(res.Blocks, &doc.Para{Note: true, Text: report.Sentences(wd.text.NoteCompared, fmt.Sprintf(wd.text.NoteSignificance, float64(compare.DefaultMinEffectPct)))})
	cols = []doc.Column{{Name: wd.W("Label")}}
	for _, r := range s.Runs {
		cols = append(cols, doc.Column{Name: mark(r.Name) + wd.W(" avg / p95 (ms)"), Align: doc.Right}, doc.Column{Name: r.Name + " Δ"})
	}
	lt := &doc.Table{Columns: cols}
	for _, l := range s.Labels {
		name := l.Label
		if name == core.TotalLabel {
			name = wd.W("all requests")
			if l.Workload != "" {
				name = wd.T("%s: all requests", l.Workload)
			}
		}
		row := doc.Row{Total: l.Label == core.TotalLabel, Cells: []doc.Cell{{Text: name}}}
		for _, c := range l.Cells {
			if !c.Present {
				row.Cells = append(row.Cells, doc.Cell{Text: "—"}, doc.Cell{Text: ""})
				continue
			}
			v := doc.Cell{Text: "—"}
			if c.Verdict != "" {
				v = doc.Cell{Text: wd.signed(c.DeltaPct) + " " + wd.verdictWords(c.Verdict) + wd.W(" (vs ") + c.Against + ")"}
				switch c.Verdict {
				case compare.Faster:
					v.Level = doc.OK
				case compare.Slower:
					v.Level = doc.Fail
				}
			}
			row.Cells = append(row.Cells, doc.Cell{Text: wd.msCell(c.MeanMs) + " / " + wd.msCell(c.P95Ms)}, v)
		}
		lt.Rows = append(lt.Rows, row)
	}
	res.Blocks = append(res.Blocks, lt)
	d.Sections = append(d.Sections, res)

	rsec := doc.Section{ID: report.SecResources, Title: wd.W("Resources across runs")}
	if len(s.Resources) == 0 {
		rsec.Blocks = append(rsec.Blocks, &doc.Para{Note: true, Text: report.Sentence(wd.text.NoteNoMonitor)})
	}
	for _, t := range s.Resources {
		cap := t.Target
		if t.Role == "generator" {
			cap += wd.W(" (the load generator)")
		}
		tt := &doc.Table{Caption: cap, Columns: []doc.Column{{Name: wd.W("Run")}, {Name: wd.W("CPU mean %"), Align: doc.Right}, {Name: wd.W("CPU max %"), Align: doc.Right},
			{Name: wd.W("Memory mean (MB)"), Align: doc.Right}, {Name: wd.W("Memory max (MB)"), Align: doc.Right}}}
		for _, r := range t.Runs {
			c := []doc.Cell{{Text: mark(r.Run)}, {Text: "—"}, {Text: "—"}, {Text: "—"}, {Text: "—"}}
			if r.HasCPU {
				c[1].Text, c[2].Text = wd.f1(r.CPUMeanPct), wd.f1(r.CPUMaxPct)
			}
			if r.HasMem {
				c[3].Text, c[4].Text = wd.f1(r.MemMeanMB), wd.f1(r.MemMaxMB)
			}
			tt.Rows = append(tt.Rows, doc.Row{Cells: c})
		}
		rsec.Blocks = append(rsec.Blocks, tt)
	}
	for i, rc := range s.charts {
		rsec.Blocks = append(rsec.Blocks, rc.figure(i, wd))
	}
	d.Sections = append(d.Sections, rsec)

	if len(s.Repeats) > 0 {
		sec := doc.Section{ID: "repeats", Title: wd.W("Repeat spread")}
		perWorkload := s.Repeats[0].Workload != ""
		cols := []doc.Column{{Name: wd.W("Runs")}, {Name: wd.W("Mean ± sd (ms)"), Align: doc.Right}, {Name: wd.W("CV %"), Align: doc.Right}, {Name: wd.W("Outliers")}}
		caption := wd.W("Average response time of all requests")
		if perWorkload {
			cols = append([]doc.Column{{Name: wd.W("Workload")}}, cols...)
			caption = wd.W("Average response time of each workload's requests")
		}
		t := &doc.Table{Caption: caption, Columns: cols}
		for _, sp := range s.Repeats {
			// The answer's precision: "8.2 ± 0.74 ms" there is not "8.2 ± 0.7" here.
			c := []doc.Cell{{Text: strings.Join(sp.Runs, ", ")}, {Text: wd.fms(sp.MeanMs) + " ± " + wd.fms(sp.SDMs)}, {Text: wd.f1(sp.CVPct)}, {Text: wd.outlierClause(sp.Outliers)}}
			if perWorkload {
				c = append([]doc.Cell{{Text: sp.Workload}}, c...)
			}
			t.Rows = append(t.Rows, doc.Row{Cells: c})
		}
		sec.Blocks = append(sec.Blocks, t, &doc.Para{Note: true, Text: report.Sentence(wd.text.NoteOutlier)})
		d.Sections = append(d.Sections, sec)
	}

	con := doc.Section{ID: report.SecConclusions, Title: wd.W("Conclusions")}
	l := &doc.List{}
	for _, c := range s.Conclusions {
		l.Items = append(l.Items, doc.Item{Text: c})
	}
	con.Blocks = append(con.Blocks, l)
	for _, n := range []struct {
		title string
		items []string
	}{{"Findings", s.Findings}, {"Recommendations", s.Recommendations}} {
		if len(n.items) == 0 {
			continue
		}
		nl := &doc.List{}
		for _, it := range n.items {
			nl.Items = append(nl.Items, doc.Item{Text: report.Sentence(it)})
		}
		con.Blocks = append(con.Blocks, &doc.Heading{Text: n.title}, nl)
	}
	d.Sections = append(d.Sections, con)
	return d
}

// msCell is a time in a table cell: whole ms from 100 ms, as the
// references print them; finer below, where whole ms would read 0 or 1.
func (wd *words) msCell(v float64) string { return wd.fms(v) }

func outcomeLevel(o Outcome) doc.Level {
	switch o {
	case Passed:
		return doc.OK
	case Failed:
		return doc.Fail
	}
	return doc.Warn
}

// answersSection is the first screen: one line per question.
func (wd *words) answersSection(s *Study) doc.Section {
	sec := doc.Section{ID: "answers", Title: wd.W("Answers")}
	sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: outcomeLevel(s.Status), Text: fmt.Sprintf(wd.text.StatusLine, wd.outcome(s.Status), report.Sentence(s.StatusWhy))})
	l := &doc.List{}
	for _, a := range s.Answers {
		t := report.Sentence(a.Line)
		if a.Confidence != wd.text.ConfHigh {
			t += " " + report.Sentence(fmt.Sprintf(wd.text.ConfidenceLine, a.Confidence, a.ConfidenceWhy))
		}
		k := wd.kind(a.Question.Kind)
		l.Items = append(l.Items, doc.Item{Level: outcomeLevel(a.Outcome), Lead: wd.outcome(a.Outcome) + " — " + strings.ToUpper(k[:1]) + k[1:], Text: t})
	}
	if len(s.Answers) == 0 {
		l.Items = append(l.Items, doc.Item{Level: doc.Warn, Text: report.Sentence(wd.text.NoQuestions)})
	}
	sec.Blocks = append(sec.Blocks, l)
	return sec
}

// validitySection is the banner naming the runs to read with care.
func (wd *words) validitySection(s *Study) *doc.Section {
	if len(s.Validity) == 0 {
		return nil
	}
	runs := map[string]bool{}
	for _, v := range s.Validity {
		runs[v.Run] = true
	}
	sec := doc.Section{ID: "validity", Title: wd.W("Validity")}
	sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: report.Sentence(fmt.Sprintf(wd.text.BannerTitle, len(runs), len(s.Runs)))})
	l := &doc.List{}
	for _, v := range s.Validity {
		var t string
		switch v.Kind {
		case IssueGenerator:
			t = fmt.Sprintf(wd.text.BannerGenerator, v.Run, v.Text)
		case IssueLoad:
			t = fmt.Sprintf(wd.text.BannerLoad, v.Run, v.Text)
		default:
			t = fmt.Sprintf(wd.text.BannerOutlier, v.Run, v.Text)
		}
		switch {
		case v.More == 1:
			t += wd.text.BannerMoreOne
		case v.More > 1:
			t += fmt.Sprintf(wd.text.BannerMore, v.More)
		}
		l.Items = append(l.Items, doc.Item{Level: doc.Warn, Text: report.Sentence(t)})
	}
	sec.Blocks = append(sec.Blocks, l)
	return &sec
}

// evidenceSection gives each question its evidence, one sentence each.
func (wd *words) evidenceSection(s *Study) doc.Section {
	sec := doc.Section{ID: "evidence", Title: wd.W("How each question was answered")}
	for _, a := range s.Answers {
		sec.Blocks = append(sec.Blocks, &doc.Heading{Text: a.Question.Text})
		l := &doc.List{}
		for _, e := range a.Evidence {
			l.Items = append(l.Items, doc.Item{Text: report.Sentence(e)})
		}
		if len(a.Evidence) == 0 {
			l.Items = append(l.Items, doc.Item{Text: report.Sentence(a.Line)})
		}
		sec.Blocks = append(sec.Blocks, l)
		if a.Question.Inferred {
			sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: report.Sentence(wd.text.NoteInferred)})
		}
		if t := wd.releaseTable(a); t != nil {
			sec.Blocks = append(sec.Blocks, t)
		}
		if t := wd.interferenceTable(a); t != nil {
			sec.Blocks = append(sec.Blocks, t)
		}
	}
	return sec
}

// releaseTable is a release answer's rows: each matching level, its
// averages and Δ.
func (wd *words) releaseTable(a Answer) *doc.Table {
	if len(a.Release) == 0 {
		return nil
	}
	t := &doc.Table{Caption: wd.W("Release comparison per matching workload and load (average response time, ms)"), Columns: []doc.Column{{Name: wd.W("Group")}, {Name: wd.W("Label")},
		{Name: wd.W("Baseline run")}, {Name: wd.W("Average"), Align: doc.Right}, {Name: wd.W("Candidate run")}, {Name: wd.W("Average"), Align: doc.Right},
		{Name: wd.W("Delta, ms"), Align: doc.Right}, {Name: wd.W("Delta, %"), Align: doc.Right}, {Name: wd.W("Verdict")}}}
	for _, r := range a.Release {
		for _, row := range append(slices.Clone(r.Labels), r.Total) {
			label := row.Label
			if label == core.TotalLabel {
				label = wd.W("all requests")
			}
			v := doc.Cell{Text: wd.verdictWords(row.Verdict)}
			switch row.Verdict {
			case compare.Faster:
				v.Level = doc.OK
			case compare.Slower:
				v.Level = doc.Fail
			}
			t.Rows = append(t.Rows, doc.Row{Total: row.Label == core.TotalLabel, Cells: []doc.Cell{{Text: r.Group}, {Text: label}, {Text: r.Base},
				{Text: wd.msCell(row.BaseMeanMs)}, {Text: r.Cand}, {Text: wd.msCell(row.NewMeanMs)}, {Text: wd.signedMs(row.DeltaMs)}, {Text: wd.signed(row.DeltaPct)}, v}})
		}
	}
	return t
}

func (wd *words) signedMs(v float64) string {
	s := wd.fms(math.Abs(v))
	if s == "0.00" {
		return "0"
	}
	if v < 0 {
		return "−" + s
	}
	return "+" + s
}

// interferenceTable is an interference answer's windows per run.
func (wd *words) interferenceTable(a Answer) *doc.Table {
	if len(a.Interference) == 0 {
		return nil
	}
	t := &doc.Table{Caption: wd.W("The disturbed workload before, during and after the other"), Columns: []doc.Column{{Name: wd.W("Run")}, {Name: wd.W("Window")},
		{Name: wd.W("Requests"), Align: doc.Right}, {Name: wd.W("Average (ms)"), Align: doc.Right}, {Name: wd.W("Error %"), Align: doc.Right}}}
	names := []string{"before", "during", "after"}
	for _, ir := range a.Interference {
		for i, w := range ir.Windows {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: ir.Run}, {Text: names[i] + " " + ir.Other}, {Text: strconv.FormatInt(w.Requests, 10)},
				{Text: wd.msCell(w.MeanMs)}, {Text: wd.f2(w.ErrorPct)}}})
		}
	}
	return t
}

// causesSection is each run's bottleneck by role and its top errors per
// call.
func (wd *words) causesSection(s *Study) *doc.Section {
	if len(s.Causes) == 0 {
		return nil
	}
	sec := doc.Section{ID: "causes", Title: wd.W("Causes")}
	t := &doc.Table{Caption: wd.W("What each run's own analysis found behind its figures"), Columns: []doc.Column{{Name: wd.W("Run")}, {Name: wd.W("Busiest or saturated component")}, {Name: wd.W("Role")}, {Name: wd.W("Top errors per call")}}}
	for _, c := range s.Causes {
		bn := "—"
		if b := c.Bottleneck; b != nil {
			state := wd.W("busiest, not saturated")
			if b.Saturated {
				state = "saturated"
			}
			bn = wd.T("%s %s at %s of capacity (%s, %s)", b.Component, b.Resource, wd.pctWords(100*b.Utilisation), b.Phase, state)
		}
		var errs []string
		for _, e := range c.Errors {
			errs = append(errs, fmt.Sprintf("%s: %s", e.Label, wd.errorsWords(e)))
		}
		et := strings.Join(errs, "; ")
		if et == "" {
			et = "none"
		}
		role := c.Role
		if role == "" {
			role = "—"
		}
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: c.Run}, {Text: bn}, {Text: role}, {Text: et}}})
	}
	sec.Blocks = append(sec.Blocks, t)
	return &sec
}

// capacitySection is the capacity answers' rows side by side, and the
// stepped runs' own knee analyses.
func (wd *words) capacitySection(s *Study) *doc.Section {
	var rows []CapacityRow
	seen := map[string]bool{}
	for _, a := range s.Answers {
		for _, r := range a.Capacity {
			if !seen[r.Workload] {
				seen[r.Workload] = true
				rows = append(rows, r)
			}
		}
	}
	if len(rows) == 0 && len(s.Capacity) == 0 {
		return nil
	}
	sec := doc.Section{ID: report.SecCapacity, Title: wd.W("Capacity side by side")}
	if len(rows) > 0 {
		t := &doc.Table{Caption: wd.W("Per workload and variant, from its own runs or steps only"), Columns: []doc.Column{{Name: wd.W("Workload")}, {Name: wd.W("Measured by")}, {Name: wd.W("Loads tested")},
			{Name: wd.W("Highest load within the requirements"), Align: doc.Right}, {Name: wd.W("Knee"), Align: doc.Right}, {Name: wd.W("Throughput at the knee (req/s)"), Align: doc.Right}, {Name: wd.W("Peak throughput (req/s)"), Align: doc.Right}, {Name: wd.W("Limited by")}}}
		for _, r := range rows {
			var loads []string
			for _, p := range r.Points {
				l := wd.num(p.Load)
				if p.Generator || p.Invalid || p.OffTrend {
					l += " " + wd.text.BannerMark
				}
				loads = append(loads, l)
			}
			within := "—"
			switch {
			case r.MaxLoadMeetingSLA != nil:
				within = wd.num(*r.MaxLoadMeetingSLA) + " " + r.Unit
			case r.WithinFrom != nil && *r.WithinFrom == *r.WithinTo:
				within = wd.num(*r.WithinFrom) + " " + r.Unit + wd.W(" only (not the lowest)")
			case r.WithinFrom != nil:
				within = wd.num(*r.WithinFrom) + "–" + wd.num(*r.WithinTo) + " " + r.Unit + wd.W(" (not the lowest)")
			case r.HasSLA:
				within = "none"
			}
			kn := "none"
			switch {
			case r.KneeFrom > 0:
				// The search brackets the knee, and the answer says so.
				kn = wd.num(r.KneeFrom) + "–" + wd.num(r.KneeLoad) + " " + r.Unit
			case r.KneeLoad > 0:
				kn = wd.num(r.KneeLoad) + " " + r.Unit
			}
			knRPS := "—" // the figure the answer quotes
			if r.KneeRPS > 0 {
				knRPS = wd.rps(r.KneeRPS)
			}
			lim := wd.limiterWords(r)
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: r.Workload}, {Text: wd.measuredBy(r)}, {Text: strings.Join(loads, ", ") + " " + r.Unit}, {Text: within}, {Text: kn}, {Text: knRPS}, {Text: wd.rps(r.PeakRPS)}, {Text: lim}}})
		}
		sec.Blocks = append(sec.Blocks, t, &doc.Para{Note: true, Text: report.Sentence(wd.text.BannerMark + wd.text.NoteMarkLoad)})
		sec.Blocks = append(sec.Blocks, wd.capacityCharts(rows)...)
		// A capacity search's answer and the probes it rests on, as the
		// search's own report shows them.
		for _, r := range rows {
			if r.SearchAnswer == nil {
				continue
			}
			red := r.red
			if red == nil {
				red = report.NewRedactor(nil, nil)
			}
			pt := report.SearchProbesTable(r.SearchAnswer, red, wd.loc)
			pt.Caption = fmt.Sprintf(wd.text.SearchProbes, r.Workload)
			sec.Blocks = append(sec.Blocks, &doc.Para{Text: report.Sentence(r.Sentence)}, pt)
		}
	}
	if len(s.Capacity) > 0 {
		t := &doc.Table{Caption: wd.W("Each stepped run's own capacity analysis"), Columns: []doc.Column{{Name: wd.W("Run")}, {Name: wd.W("Knee load"), Align: doc.Right}, {Name: wd.W("USL peak load"), Align: doc.Right},
			{Name: wd.W("USL peak (req/s)"), Align: doc.Right}, {Name: wd.W("Highest load meeting the SLA"), Align: doc.Right}, {Name: wd.W("Knee")}}}
		n := func(v float64) string {
			if v == 0 {
				return "—"
			}
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
		for _, c := range s.Capacity {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: c.Run}, {Text: n(c.KneeLoad)}, {Text: n(c.USLPeakLoad)}, {Text: n(c.USLPeakRPS)},
				{Text: n(c.MaxLoadMeetingSLA)}, {Text: report.Sentence(c.Knee)}}})
		}
		sec.Blocks = append(sec.Blocks, t)
	}
	return &sec
}

// limiterWords says what limits a capacity row's knee.
func (wd *words) limiterWords(r CapacityRow) string {
	switch r.Limiter {
	case "generator":
		return wd.W("the load generator")
	case "configured limit":
		return wd.T("configured limit %s (%s)", r.Limit.Name, wd.num(r.Limit.Value))
	case "component":
		return fmt.Sprintf("%s %s", r.Bottleneck.Component, strings.ToLower(r.Bottleneck.Resource))
	}
	if cs := r.SearchAnswer; cs != nil && cs.LimitedBy != search.NoLimit {
		if cs.LimitedBy == search.RequirementBroke {
			return wd.W("the requirement ") + cs.Requirement
		}
		return wd.W(cs.LimitedBy.String())
	}
	if r.KneeLoad == 0 {
		return "—"
	}
	return wd.W("not found")
}

func (wd *words) f1(v float64) string { return wd.loc.Num(f1(v)) }
func (wd *words) f2(v float64) string { return wd.loc.Num(f2(v)) }
func f1(v float64) string             { return strconv.FormatFloat(v, 'f', 1, 64) }
func f2(v float64) string             { return strconv.FormatFloat(v, 'f', 2, 64) }

// Write writes the study in the formats asked for (html, md, json, junit)
// into dir and returns the files written.
func Write(dir string, s *Study, d *doc.Document, formats []string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	var files []string
	put := func(name string, b []byte) error {
		p := filepath.Join(dir, name)
		if err := rundir.WriteFileAtomic(p, b); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
		files = append(files, p)
		return nil
	}
	for _, f := range formats {
		switch f {
		case "html":
			b, err := html.Render(d)
			if err != nil {
				return nil, err
			}
			if err := put(HTMLFile, b); err != nil {
				return nil, err
			}
		case "md":
			fs, err := markdown.WriteAs(dir, MarkdownFile, ChartDir, d)
			if err != nil {
				return nil, err
			}
			files = append(files, fs...)
		case "json":
			b, err := json.MarshalIndent(s, "", "  ")
			if err != nil {
				return nil, fmt.Errorf("encoding study: %w", err)
			}
			if err := put(JSONFile, append(b, '\n')); err != nil {
				return nil, err
			}
		case "junit":
			b, err := junit(s)
			if err != nil {
				return nil, err
			}
			if err := put(JUnitFile, b); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown format %q (html, md, json, junit)", f)
		}
	}
	// Mask any literal secret value of a run left in a written file.
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("checking %s for secrets: %w", p, err)
		}
		changed := false
		for _, r := range s.reds {
			var c bool
			if b, c = r.Bytes(b); c {
				changed = true
			}
		}
		if changed {
			if err := rundir.WriteFileAtomic(p, b); err != nil {
				return nil, fmt.Errorf("masking secrets in %s: %w", p, err)
			}
		}
	}
	return files, nil
}

// junit writes one test case per question: a failed answer is a
// failure, an inconclusive one is skipped with why (an expected
// improvement is a pass, not a failure).
func junit(s *Study) ([]byte, error) {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type skipped struct {
		Message string `xml:"message,attr"`
	}
	type tc struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
		Skipped   *skipped `xml:"skipped,omitempty"`
		SystemOut string   `xml:"system-out,omitempty"`
	}
	type suite struct {
		XMLName  xml.Name `xml:"testsuite"`
		Name     string   `xml:"name,attr"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Cases    []tc     `xml:"testcase"`
	}
	st := suite{Name: "plateau study: " + s.Title}
	for _, a := range s.Answers {
		t := tc{Name: a.Question.Text, Classname: "study." + string(a.Question.Kind), SystemOut: strings.Join(append([]string{a.Line}, a.Evidence...), "\n")}
		switch a.Outcome {
		case Failed:
			t.Failure = &failure{Message: a.Line, Text: strings.Join(a.Evidence, "\n")}
			st.Failures++
		case Inconclusive:
			t.Skipped = &skipped{Message: a.Line}
			st.Skipped++
		}
		st.Cases = append(st.Cases, t)
	}
	st.Tests = len(st.Cases)
	b, err := xml.MarshalIndent(st, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding junit: %w", err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

// capacityCharts draw throughput and average response time against load,
// one line per workload and variant (a legend names each), for each load
// unit the rows use.
func (wd *words) capacityCharts(rows []CapacityRow) []doc.Block {
	var out []doc.Block
	for _, unit := range []string{"users", "req/s"} {
		tput := &chart.Chart{ID: "study-capacity-tput-" + unitID(unit), Title: wd.W("Throughput against load"), XKind: chart.Linear, XLabel: wd.W("Load (") + unit + ")",
			Y: chart.Axis{Label: wd.W("Throughput (req/s)"), Unit: "req/s"}}
		avg := &chart.Chart{ID: "study-capacity-avg-" + unitID(unit), Title: wd.W("Average response time against load"), XKind: chart.Linear, XLabel: wd.W("Load (") + unit + ")",
			Y: chart.Axis{Label: wd.W("Average response time (ms)"), Unit: "ms"}}
		for _, r := range rows {
			if r.Unit != unit || len(r.Points) < 2 {
				continue
			}
			var x, t, m []float64
			for _, p := range r.Points {
				x, t, m = append(x, p.Load), append(t, p.ThroughputRPS), append(m, p.MeanMs)
			}
			tput.Series = append(tput.Series, chart.Series{Name: r.Workload, X: x, Y: t, Style: chart.LinePoints})
			avg.Series = append(avg.Series, chart.Series{Name: r.Workload, X: x, Y: m, Style: chart.LinePoints})
		}
		if len(tput.Series) == 0 {
			continue
		}
		out = append(out, &doc.Figure{Name: tput.ID, Title: tput.Title, SVG: tput.SVG()}, &doc.Figure{Name: avg.ID, Title: avg.Title, SVG: avg.SVG()})
	}
	return out
}

func unitID(u string) string {
	if u == "req/s" {
		return "rate"
	}
	return u
}

// measuredBy says what a capacity row's figures are of — a capacity
// search's probes, one stepped run's steps, or runs at fixed loads — so a
// peak here is told apart from another table's peak of the same workload
// (002: "peak 47.0 req/s" of the upload search's probes beside 131.9
// calls/s in the upload run at 160 clients).
func (wd *words) measuredBy(r CapacityRow) string {
	runs := map[string]bool{}
	for _, p := range r.Points {
		runs[p.Run] = true
	}
	switch {
	case r.Search && r.SearchAnswer != nil:
		// Every probe the search ran, repeats included, as its answer
		// counts them ("6 of 6 probes"); the loads column lists each load
		// once.
		return wd.T("its capacity search's %d probes", len(r.SearchAnswer.Probes))
	case r.Search:
		return wd.T("its capacity search's %d probes", len(r.Points))
	case len(runs) == 1 && len(r.Points) > 0:
		return wd.T("the %d steps of %s", len(r.Points), r.Points[0].Run)
	}
	return wd.T("%d runs at fixed loads", len(runs))
}
