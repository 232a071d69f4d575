package report

import (
	"fmt"
	"time"

	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// The top-SQL tables (reference 001's "top SQL"): the statements that cost
// the database servers the most execution time, per phase and over the
// whole run, from the database monitors' statements files.

// topSQLRows is how many statements a table lists.
const (
	topSQLRows      = 10
	topSQLPhaseRows = 5
	topSQLMaxPhases = 6
)

// topSQL returns the top-SQL blocks of every database target.
func (b *builder) topSQL() []doc.Block {
	whole, err := b.in.run.Statements, b.in.run.StatementsErr
	if err != nil {
		return []doc.Block{&doc.Verdict{Level: doc.Warn, Text: sentence(b.W("top statements unreadable: ") + b.red.String(err.Error()))}}
	}
	logs, err := b.in.run.StatementLogs, b.in.run.LogsErr
	if err != nil {
		return []doc.Block{&doc.Verdict{Level: doc.Warn, Text: sentence(b.W("statements log unreadable: ") + b.red.String(err.Error()))}}
	}
	byTarget := map[string]*mondata.StatementHistory{}
	for _, h := range logs {
		byTarget[h.Target] = h
	}
	var out []doc.Block
	for _, st := range whole {
		name := b.red.String(st.Target)
		out = append(out, &doc.Heading{Text: b.W("Top SQL — ") + name})
		if len(st.Statements) == 0 {
			out = append(out, noData(sentence(name+b.W(": no statement ran during the run"))))
			continue
		}
		if h := byTarget[st.Target]; h != nil && len(b.d.Phases) > 1 && len(b.d.Phases) <= topSQLMaxPhases {
			for _, p := range b.d.Phases {
				ps := h.Between(p.Start, p.End, topSQLPhaseRows)
				if len(ps.Statements) == 0 {
					continue
				}
				out = append(out, b.statementTable(b.T("%s — top statements in %s (%s – %s)", name, b.red.String(p.Name), b.hms(p.Start), b.hms(p.End)), ps,
					b.W("Statement increments are logged every ")+dur(mondata.StatementEvery)+b.W(", so a phase's figures cover the logging intervals that ended in it.")))
			}
		}
		out = append(out, b.statementTable(b.T("%s — top statements over the whole run (%s – %s)", name, b.hms(st.Start), b.hms(st.End)), st, ""))
	}
	return out
}

// statementTable lists the top statements of one span.
func (b *builder) statementTable(caption string, st mondata.Statements, note string) *doc.Table {
	tb := &doc.Table{Caption: caption, Columns: []doc.Column{{Name: b.W("#"), Align: doc.Right}, {Name: b.W("Statement")},
		{Name: b.W("Calls"), Align: doc.Right}, {Name: b.W("Total time"), Align: doc.Right}, {Name: b.W("Mean (ms)"), Align: doc.Right}, {Name: b.W("Share"), Align: doc.Right}}}
	all := st.AllMs
	listed := 0.0
	for _, s := range st.Statements {
		listed += s.TotalMs
	}
	if all <= 0 {
		all = listed
	}
	for i, s := range st.Statements {
		if i == topSQLRows {
			break
		}
		share := "–"
		if all > 0 {
			share = b.pct(100 * s.TotalMs / all)
		}
		tb.Rows = append(tb.Rows, doc.Row{Cells: []doc.Cell{{Text: fmt.Sprint(i + 1)}, {Text: b.red.String(s.Query)},
			{Text: b.count(s.Calls)}, {Text: b.totalTime(s.TotalMs)}, {Text: b.ms(s.MeanMs)}, {Text: share}}})
	}
	notes := []string{}
	if st.Distinct > len(tb.Rows) {
		notes = append(notes, b.T("%d distinct statements ran; the share is of the execution time of all of them", st.Distinct))
	}
	if note != "" {
		notes = append(notes, note)
	}
	tb.Note = sentences(notes...)
	return tb
}

// totalTime formats a statement's total execution time.
func (b numbers) totalTime(msv float64) string {
	if msv < 10000 {
		return b.msU(msv)
	}
	return dur(time.Duration(msv * float64(time.Millisecond)))
}
