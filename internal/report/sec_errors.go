package report

import (
	"fmt"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// ---- errors -----------------------------------------------------------------

func (b *builder) errors() doc.Section {
	sec := doc.Section{ID: SecErrors, Title: b.W("Errors")}
	es := b.s.Errors
	all := b.s.Labels[len(b.s.Labels)-1]
	if es.Total == 0 {
		sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: doc.OK, Text: b.T("No errors in %s.", b.plural(all.Samples, "request"))})
		if all.Samples > 0 {
			b.finding(doc.FindNoErrors, doc.OK, b.W("No errors in ")+b.plural(all.Samples, "request"))
			b.conclude(doc.AspectErrors, doc.OK, b.W("none"), b.T("0 of %s failed", b.plural(all.Samples, "request")))
		}
		return sec
	}
	share := func(n int64) string {
		if all.Samples == 0 {
			return "–"
		}
		return b.pct(100 * float64(n) / float64(all.Samples))
	}
	ofErr := func(n int64) string { return b.pct(100 * float64(n) / float64(es.Total)) }

	t := &doc.Table{Caption: b.W("By class"), Columns: []doc.Column{{Name: b.W("Class")}, {Name: b.W("Errors"), Align: doc.Right},
		{Name: b.W("% of requests"), Align: doc.Right}, {Name: b.W("% of errors"), Align: doc.Right}}}
	for _, k := range sortedByValue(es.ByClass) {
		t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: k}, {Text: b.count(es.ByClass[k])}, {Text: share(es.ByClass[k])}, {Text: ofErr(es.ByClass[k])}}})
	}
	t.Rows = append(t.Rows, doc.Row{Total: true, Cells: []doc.Cell{{Text: b.W("all")}, {Text: b.count(es.Total)}, {Text: share(es.Total)}, {Text: "100 %"}}})
	sec.Blocks = append(sec.Blocks, t)
	if len(es.ByStatus) > 0 {
		t := &doc.Table{Caption: b.W("By HTTP status"), Columns: []doc.Column{{Name: b.W("Status")}, {Name: b.W("Errors"), Align: doc.Right},
			{Name: b.W("% of requests"), Align: doc.Right}, {Name: b.W("% of errors"), Align: doc.Right}}}
		for _, k := range sortedByValue(es.ByStatus) {
			t.Rows = append(t.Rows, doc.Row{Cells: []doc.Cell{{Text: k + " " + statusText(k)}, {Text: b.count(es.ByStatus[k])}, {Text: share(es.ByStatus[k])}, {Text: ofErr(es.ByStatus[k])}}})
		}
		sec.Blocks = append(sec.Blocks, t)
	}
	const maxRows = 50
	dt := &doc.Table{Caption: b.W("By message, with when and where they were seen"), Columns: []doc.Column{{Name: b.W("Class")}, {Name: b.W("Status"), Align: doc.Right},
		{Name: b.W("Message")}, {Name: b.W("Label")}, {Name: b.W("Count"), Align: doc.Right}, {Name: b.W("% of requests"), Align: doc.Right},
		{Name: b.W("First seen")}, {Name: b.W("Last seen")}, {Name: b.W("Phases")}}}
	// A failed request also fails its transaction; the table lists the
	// requests' errors and shows a transaction's only when none of its
	// requests carries it (an imported log of transactions alone).
	details := b.requestErrors()
	for i, e := range details {
		if i == maxRows {
			dt.Note = b.T("%d more kinds of error not shown; summary.json lists them all.", len(details)-maxRows)
			break
		}
		st := "–"
		if e.Status > 0 {
			st = fmt.Sprint(e.Status)
		}
		label := e.Label
		if len(b.d.Info.Workloads) > 1 && e.Workload != "" {
			label = b.red.String(e.Workload) + ": " + label
		}
		dt.Rows = append(dt.Rows, doc.Row{Cells: []doc.Cell{{Text: e.Class}, {Text: st}, {Text: nonEmpty(e.Message, "–")},
			{Text: label}, {Text: b.count(e.Count)}, {Text: share(e.Count)},
			{Text: b.hms(e.First) + " (+" + offset(e.First, b.d.Start) + ")"}, {Text: b.hms(e.Last) + " (+" + offset(e.Last, b.d.Start) + ")"},
			{Text: nonEmpty(strings.Join(e.Phases, ", "), "–")}}})
	}
	if len(dt.Rows) > 0 {
		sec.Blocks = append(sec.Blocks, dt)
	}
	if f := b.errorChart(); f != nil {
		sec.Blocks = append(sec.Blocks, f)
	}
	where := b.errorPlacement()
	lvl := doc.Warn
	for _, r := range b.s.SLA {
		if e, err := sla.Parse(r.Expr); err == nil && e.Metric == sla.ErrorRate && !r.Passed {
			lvl = doc.Fail
		}
	}
	top := ""
	if len(details) > 0 {
		e := details[0]
		top = b.W("most frequent: ") + describeErr(e.Class, e.Status, e.Message)
	}
	head := b.T("%s in %s (%s)", b.plural(es.Total, "error"), b.plural(all.Samples, "request"), share(es.Total))
	sec.Blocks = append(sec.Blocks, &doc.Verdict{Level: lvl, Text: sentence(b.W("Verdict: ")+head, top, where)})
	b.finding(doc.FindErrors, lvl, head, top, where)
	b.conclude(doc.AspectErrors, lvl, fmt.Sprintf("%s (%s)", b.plural(es.Total, "error"), share(es.Total)), top, where)
	return sec
}

func describeErr(class string, status int, msg string) string {
	s := class
	if status > 0 {
		s = fmt.Sprintf("HTTP %d", status)
		if t := statusText(fmt.Sprint(status)); t != "" {
			s += " " + t
		}
		switch class {
		case "http_4xx", "http_5xx", "check", "":
		default:
			// The status line arrived, then the exchange failed (a reset
			// mid-body): the class says what happened.
			s = class + " after " + s
		}
	}
	if msg != "" {
		if len(msg) > 80 {
			msg = msg[:77] + "…"
		}
		s += " “" + msg + "”"
	}
	return s
}

// requestErrors are the error details without transaction rows that
// repeat a request's error.
func (b *builder) requestErrors() []analysis.ErrorDetail {
	type kind struct {
		class, msg string
		status     int
	}
	onRequest := map[kind]bool{}
	is := func(e analysis.ErrorDetail, want func(analysis.LabelKey) bool) bool {
		for k := range b.d.Run {
			if want(k) && k.Workload == e.Workload && b.red.String(k.Label) == e.Label {
				return true
			}
		}
		return false
	}
	isTx := func(e analysis.ErrorDetail) bool { return is(e, func(k analysis.LabelKey) bool { return k.Tx }) }
	isDerived := func(e analysis.ErrorDetail) bool { return is(e, func(k analysis.LabelKey) bool { return k.Derived }) }
	var out []analysis.ErrorDetail
	var txs []analysis.ErrorDetail
	for _, e := range b.s.Errors.Details {
		if isDerived(e) {
			continue // the same failures as the request it was derived from
		}
		if isTx(e) {
			txs = append(txs, e)
			continue
		}
		onRequest[kind{e.Class, e.Message, e.Status}] = true
		out = append(out, e)
	}
	for _, e := range txs {
		if !onRequest[kind{e.Class, e.Message, e.Status}] {
			out = append(out, e)
		}
	}
	return out
}

// errorPlacement says when errors happened: only during ramp-up, only in
// some phases, or throughout.
func (b *builder) errorPlacement() string {
	var inRamp, total int64
	type span struct{ s, e int64 }
	var ramps []span
	for _, p := range b.d.Phases {
		if p.RampUp > 0 {
			ramps = append(ramps, span{p.Start.Unix(), p.Start.Add(p.RampUp).Unix()})
		}
	}
	for _, t := range b.d.TotalTicks {
		if t.Errors == 0 {
			continue
		}
		total += t.Errors
		for _, r := range ramps {
			if sec := t.T.Unix(); sec >= r.s && sec <= r.e {
				inRamp += t.Errors
				break
			}
		}
	}
	if total > 0 && len(ramps) > 0 {
		switch {
		case inRamp == total:
			return b.W("errors only during ramp-up")
		case inRamp > 0:
			return b.T("%s of them during ramp-up", b.pct(100*float64(inRamp)/float64(total)))
		}
	}
	phases := map[string]bool{}
	for _, e := range b.s.Errors.Details {
		for _, p := range e.Phases {
			phases[p] = true
		}
	}
	if len(phases) > 0 && len(phases) < len(b.d.Phases) {
		return b.W("only in ") + b.joinAnd(sortedKeys(phases))
	}
	return ""
}

var statusTexts = map[string]string{"400": "Bad Request", "401": "Unauthorized", "403": "Forbidden", "404": "Not Found",
	"408": "Request Timeout", "409": "Conflict", "422": "Unprocessable Entity", "429": "Too Many Requests",
	"500": "Internal Server Error", "502": "Bad Gateway", "503": "Service Unavailable", "504": "Gateway Timeout"}

func statusText(code string) string { return statusTexts[code] }
