package report

import (
	"fmt"
	"strings"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- runs -------------------------------------------------------------------

func (b *builder) runs() doc.Section {
	sec := doc.Section{ID: SecRuns, Title: b.W("Test runs")}
	d := b.d
	if len(d.Phases) == 0 {
		sec.Blocks = append(sec.Blocks, noData(b.W("run.json records no phases: the run is reported as one span.")))
		return sec
	}
	multiW := len(d.Info.Workloads) > 1
	cols := []doc.Column{{Name: b.W("#"), Align: doc.Right}, {Name: b.W("Phase")}}
	if multiW {
		cols = append(cols, doc.Column{Name: b.W("Workload")})
	}
	cols = append(cols, []doc.Column{{Name: b.W("Users"), Align: doc.Right}, {Name: b.W("Rate (req/s)"), Align: doc.Right},
		{Name: b.W("Ramp-up"), Align: doc.Right}, {Name: b.W("Start")}, {Name: b.W("End")}, {Name: b.W("Duration"), Align: doc.Right},
		{Name: b.W("Samples"), Align: doc.Right}, {Name: b.W("Throughput (req/s)"), Align: doc.Right}, {Name: b.W("Error %"), Align: doc.Right},
		{Name: b.W("Note")}}...)
	t := &doc.Table{Caption: b.W("One row per phase: load, time span, throughput and error rate of all requests"), Columns: cols}
	for i, p := range d.Phases {
		tot := phaseTotal(b.s, i)
		row := []doc.Cell{{Text: fmt.Sprint(i + 1)}, {Text: b.red.String(p.Name)}}
		if multiW {
			row = append(row, doc.Cell{Text: b.red.String(nonEmpty(p.Workload, "–"))})
		}
		ramp := "–"
		if p.RampUp > 0 {
			ramp = dur(p.RampUp)
		}
		note := b.red.String(b.phaseNote(p))
		if i < len(d.Info.Phases) && d.Info.Phases[i].End == nil {
			note = strings.TrimPrefix(note+"; "+b.W("still open (run killed?)"), "; ")
		}
		if i < len(d.RecordedEnd) && !d.RecordedEnd[i].IsZero() {
			note = strings.TrimPrefix(note+"; "+b.T("run.json has it end at %s, after the run's end: clipped to the run", b.clock(d.RecordedEnd[i])), "; ")
		}
		errCell := doc.Cell{Text: b.pct(tot.ErrorPct)}
		if tot.Errors > 0 {
			errCell.Level = doc.Warn
		}
		row = append(row, doc.Cell{Text: b.intOrDash(p.Users)}, doc.Cell{Text: b.floatOrDash(p.Rate)}, doc.Cell{Text: ramp},
			doc.Cell{Text: b.clock(p.Start)}, doc.Cell{Text: b.clock(p.End)}, doc.Cell{Text: dur(p.Duration())},
			doc.Cell{Text: b.count(tot.Samples)}, doc.Cell{Text: b.rate(tot.ThroughputRPS)}, errCell, doc.Cell{Text: nonEmpty(note, "")})
		t.Rows = append(t.Rows, doc.Row{Cells: row})
	}
	all := b.s.Labels[len(b.s.Labels)-1]
	tr := []doc.Cell{{Text: ""}, {Text: b.W("Whole run")}}
	if multiW {
		tr = append(tr, doc.Cell{})
	}
	tr = append(tr, doc.Cell{Text: b.intOrDash(b.peakUsers())}, doc.Cell{}, doc.Cell{}, doc.Cell{Text: b.clock(d.Start)}, doc.Cell{Text: b.clock(d.End)},
		doc.Cell{Text: dur(d.Span())}, doc.Cell{Text: b.count(all.Samples)}, doc.Cell{Text: b.rate(all.ThroughputRPS)}, doc.Cell{Text: b.pct(all.ErrorPct)}, doc.Cell{})
	t.Rows = append(t.Rows, doc.Row{Cells: tr, Total: true})
	sec.Blocks = append(sec.Blocks, t)
	if f := b.usersChart(); f != nil {
		sec.Blocks = append(sec.Blocks, f)
	}
	if n := len(d.Dropped); n > 0 {
		var parts []string
		for _, w := range sortedKeys(d.Dropped) {
			parts = append(parts, fmt.Sprintf("%s: %s", b.red.String(nonEmpty(w, "default")), b.count(d.Dropped[w])))
		}
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.Warn, Text: sentences(b.W("The generator could not start every scheduled iteration (open model; max users reached or late): ")+strings.Join(parts, ", ")+b.W(" dropped"), b.W("the offered load was lower than planned"))})
		b.finding(doc.FindLoad, doc.Warn, b.T("The generator dropped %s scheduled iterations: the offered load was lower than planned", b.count(sumValues(d.Dropped))))
	}
	return sec
}

func (b *builder) peakUsers() int {
	peak := 0
	for _, u := range b.d.Users {
		peak = max(peak, u.Total)
	}
	if peak == 0 {
		for _, p := range b.d.Phases {
			peak = max(peak, p.Users)
		}
	}
	return peak
}

// phaseNote says why a phase ended early: a stop rule from its figures, in
// the document's words and numbers; any other reason as the run recorded
// it.
func (b numbers) phaseNote(p core.Phase) string {
	if r := p.StopRule; r != nil {
		return b.T("stop rule: throughput gain %s %% below %s %% (%s → %s)",
			b.signed1(r.GainPct), b.num3(r.ThresholdPct), b.rate(r.FromRPS), b.rps(r.ToRPS))
	}
	return p.Stopped
}
