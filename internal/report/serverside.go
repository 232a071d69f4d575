package report

import (
	"slices"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/report/doc"
)

// SecServer is the servers' view of a live run: the access logs (and
// vmstat, jstat, docker stats) attached to it with the plan's server_side
// or plateau run --attach.
const SecServer = "server"

// serverSide is the server-side section: reference 000's access-log
// table — per server, per step and per HTTP status: calls, calls per
// second, and the time with and without the downstream calls — then the
// client's and the servers' view side by side per step.
func (b *builder) serverSide() doc.Section {
	sec := doc.Section{ID: SecServer, Title: b.W("Server side")}
	t := b.s.ServerSide
	if t == nil {
		msg := b.W("No server-side data: no access log was attached to this run (plan key server_side, or plateau run --attach).")
		switch {
		case b.d.ServerErr != nil:
			msg = b.W("No server-side data: ") + b.red.String(b.d.ServerErr.Error()) + "."
		case b.d.Server == nil && len(b.d.Info.AttachNotes()) > 0:
			msg = b.W("No server-side data: ") + b.red.String(b.d.Info.AttachNotes()[0]) + "."
		case b.d.Server != nil:
			msg = b.W("No access log was attached to this run: the attached files (") + b.red.String(strings.Join(b.d.Server.Info.Source, "; ")) + b.W(") are monitor series, shown under Resources.")
		}
		sec.Blocks = append(sec.Blocks, noData(msg))
		return sec
	}
	srv := b.d.Server
	var files []string
	for _, s := range srv.Info.Source {
		// An external-call log is named in its access log's entry.
		if !slices.ContainsFunc(srv.Info.Source, func(o string) bool { return o != s && strings.Contains(o, s) }) {
			files = append(files, b.red.String(b.worded(srv.Info, s)))
		}
	}
	joined := false
	for _, r := range t.Rows {
		joined = joined || r.NetMeanMs != nil
	}
	intro := []string{b.T("From the servers' own files, read after the load with this run's phases: %s", strings.Join(files, "; ")),
		b.W("each call counts in the step that holds its completion time in the server's log (the rule the client's view uses), and only calls that completed within the run count")}
	if joined {
		intro = append(intro, b.W("the time without downstream calls is the logged time minus the calls joined from the server's external-call log by message id (calls made one after another add up, concurrent calls count once)"))
	}
	sec.Blocks = append(sec.Blocks, &doc.Para{Text: sentences(intro...)})
	if len(t.Rows) == 0 {
		sec.Blocks = append(sec.Blocks, noData(b.W("The attached files hold no calls within the run's steps.")))
	} else {
		sec.Blocks = append(sec.Blocks, b.serverTable(t, joined))
	}
	if c := b.clientServerTable(t); c != nil {
		sec.Blocks = append(sec.Blocks, c)
	}
	var notes []string
	for _, n := range srv.Info.Notes {
		notes = append(notes, b.red.String(b.worded(srv.Info, n)))
	}
	if len(notes) > 0 {
		sec.Blocks = append(sec.Blocks, &doc.Para{Note: true, Text: b.W("Import notes: ") + strings.Join(notes, "; ")})
	}
	return sec
}

// serverTable is reference 000's table: per server its steps and
// statuses and a total row; then every server together per step and
// status.
func (b *builder) serverTable(t *analysis.ServerSide, joined bool) *doc.Table {
	cols := []doc.Column{{Name: b.W("Server")}, {Name: b.W("Step")}, {Name: b.W("HTTP status"), Align: doc.Right},
		{Name: b.W("Calls"), Align: doc.Right}, {Name: b.W("Calls/s"), Align: doc.Right}, {Name: b.W("Time with downstream (ms)"), Align: doc.Right}}
	if joined {
		cols = append(cols, doc.Column{Name: b.W("Time without downstream (ms)"), Align: doc.Right})
	}
	cols = append(cols, doc.Column{Name: b.W("p95 with (ms)"), Align: doc.Right})
	if joined {
		cols = append(cols, doc.Column{Name: b.W("p95 without (ms)"), Align: doc.Right})
	}
	tab := &doc.Table{ID: "server-side", Caption: b.W("Calls per server, step and HTTP status (as the servers logged them)"), Columns: cols}
	lastServer, lastPhase := "\x00", "\x00"
	for _, r := range t.Rows {
		server, phase := b.red.String(r.Server), b.red.String(r.Phase)
		if r.Server == "" {
			server = b.W("All servers")
		}
		total := r.Phase == ""
		if total {
			phase = "Total"
		}
		showServer, showPhase := server, phase
		if r.Server == lastServer {
			showServer = ""
			if r.Phase == lastPhase {
				showPhase = ""
			}
		}
		lastServer, lastPhase = r.Server, r.Phase
		status := strconv.Itoa(r.Status)
		if r.Status == 0 {
			status = "–"
		}
		lvl := doc.Info
		if r.Status >= 500 || r.Status == 0 {
			lvl = doc.Fail
		} else if r.Status >= 400 {
			lvl = doc.Warn
		}
		cells := []doc.Cell{{Text: showServer}, {Text: showPhase}, {Text: status, Level: lvl}, {Text: b.count(r.Count)},
			{Text: b.rate(r.RatePerS)}, {Text: b.ms(r.MeanMs)}}
		if joined {
			cells = append(cells, doc.Cell{Text: b.optMs(r.NetMeanMs)})
		}
		cells = append(cells, doc.Cell{Text: b.ms(r.P95Ms)})
		if joined {
			cells = append(cells, doc.Cell{Text: b.optMs(r.NetP95Ms)})
		}
		tab.Rows = append(tab.Rows, doc.Row{Cells: cells, Total: total})
	}
	note := b.W("Calls/s is the step's calls over the step's duration. A server's Total rows count every call that completed within the run, over the run's duration")
	if t.OutsidePhases > 0 {
		note += b.T("; %s of them completed in no step (setup, or between steps)", b.plural(t.OutsidePhases, "call"))
	}
	note += "."
	tab.Note = note
	return tab
}

// clientServerTable puts the client's view and the servers' view of each
// step side by side: calls and mean time as the load generator measured
// them and as every server logged them. The difference in time is the
// network and whatever sits between the client and the servers (a
// balancer, queues).
func (b *builder) clientServerTable(t *analysis.ServerSide) *doc.Table {
	type agg struct {
		calls  int64
		sum    float64
		netSum float64
		net    bool
	}
	byPhase := map[string]*agg{}
	for _, r := range t.Rows {
		if r.Server != "" || r.Phase == "" {
			continue
		}
		a := byPhase[r.Phase]
		if a == nil {
			a = &agg{}
			byPhase[r.Phase] = a
		}
		a.calls += r.Count
		a.sum += r.MeanMs * float64(r.Count)
		if r.NetMeanMs != nil {
			a.net = true
			a.netSum += *r.NetMeanMs * float64(r.Count)
		}
	}
	if len(byPhase) == 0 || len(b.s.Phases) == 0 {
		return nil
	}
	tab := &doc.Table{ID: "client-server", Caption: b.W("Per step: the client's view and the servers' view"),
		Columns: []doc.Column{{Name: b.W("Step")}, {Name: b.W("Client calls"), Align: doc.Right}, {Name: b.W("Server calls"), Align: doc.Right},
			{Name: b.W("Client mean (ms)"), Align: doc.Right}, {Name: b.W("Server mean (ms)"), Align: doc.Right},
			{Name: b.W("Server mean without downstream (ms)"), Align: doc.Right}, {Name: b.W("Client − server (ms)"), Align: doc.Right}}}
	for _, p := range b.s.Phases {
		a := byPhase[p.Name]
		if a == nil || a.calls == 0 || len(p.Labels) == 0 {
			continue
		}
		c := p.Labels[len(p.Labels)-1]
		srvMean := a.sum / float64(a.calls)
		net := "–"
		if a.net {
			net = b.ms(a.netSum / float64(a.calls))
		}
		tab.Rows = append(tab.Rows, doc.Row{Cells: []doc.Cell{{Text: b.red.String(p.Name)}, {Text: b.count(c.Samples)}, {Text: b.count(a.calls)},
			{Text: b.ms(c.MeanMs)}, {Text: b.ms(srvMean)}, {Text: net}, {Text: b.signedMs(c.MeanMs - srvMean)}}})
	}
	if len(tab.Rows) == 0 {
		return nil
	}
	tab.Note = b.W("Client calls are the requests the load generator completed in the step, server calls every call the attached access logs hold in it: the servers also log what the client keeps out of its results (setup requests such as a login), a call that passes two attached tiers counts once per tier, and a call completing at a step's end may fall in the next step on one side only.")
	return tab
}

func (b numbers) optMs(v *float64) string {
	if v == nil {
		return "–"
	}
	return b.ms(*v)
}
