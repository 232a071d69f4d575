package analysis

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// loadServer loads the server-side run directory attached to a live run
// (rundir.ServerDir), when there is one.
func (d *Dataset) loadServer() {
	sd := filepath.Join(d.Dir, rundir.ServerDir)
	if _, err := os.Stat(filepath.Join(sd, rundir.InfoFile)); err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			d.ServerErr = err
		}
		return
	}
	d.Server, d.ServerErr = Load(sd)
}

// observeServer is a server_time requirement's value over the attached
// access logs' aggregates m: the full response times (labels as logged) or,
// for server_time_net, their net-of-downstream twins; every server or the
// selected one.
func observeServer(e *sla.Expr, m map[LabelKey]*metrics.Agg, span time.Duration) (float64, bool) {
	a := metrics.NewAgg()
	for k, v := range m {
		if k.Tx || (e.Server != "" && k.Workload != e.Server) || k.Derived != (e.Metric == sla.ServerTimeNet) {
			continue
		}
		a.Merge(v)
	}
	return statOf(e, a, span)
}

// ServerSide is the servers' view of a live run, from the access logs
// attached to it: reference 000's table of calls per server, per step and
// per HTTP status, with the response time as logged and net of the
// downstream calls. summary.json's server_side.
type ServerSide struct {
	// Servers are the attached access logs' servers, in name order.
	Servers []string `json:"servers"`
	// Rows: per server, per phase (in run order) and per status
	// (ascending), then the server's total rows per status over the whole
	// run (Phase "": every call within the run, in a step or not), then
	// the rows over every server (Server "") per phase and status.
	Rows []ServerRow `json:"rows"`
	// OutsidePhases counts requests of the attached logs that completed
	// within the run but in no phase (setup, ramps, the gaps between
	// steps); they are in no row.
	OutsidePhases int64 `json:"outside_phases"`
}

// ServerRow is one line of the server-side table.
type ServerRow struct {
	Server string `json:"server"` // "" = every server
	Phase  string `json:"phase"`  // "" = the whole run (a server's total)
	Status int    `json:"status"` // HTTP status; 0 = a log line without one
	Count  int64  `json:"count"`
	// RatePerS is Count over the phase's duration (over the run's for a
	// total row).
	RatePerS float64 `json:"rate_per_s"`
	// MeanMs is the mean response time as logged; NetMeanMs net of the
	// downstream calls joined from the external-call log, nil when the
	// server's log was not joined with one.
	MeanMs    float64  `json:"mean_ms"`
	NetMeanMs *float64 `json:"net_mean_ms,omitempty"`
	// P95Ms and NetP95Ms are the 95th percentiles alongside.
	P95Ms    float64  `json:"p95_ms"`
	NetP95Ms *float64 `json:"net_p95_ms,omitempty"`
}

// ServerTable computes the server-side table; nil when no access log is
// attached (attached vmstat, jstat or docker stats files alone are monitor
// series, not calls).
func (d *Dataset) ServerTable() *ServerSide {
	s := d.Server
	if s == nil || len(s.Info.Workloads) == 0 {
		return nil
	}
	out := &ServerSide{Servers: []string{}, Rows: []ServerRow{}}
	for _, w := range s.Info.Workloads {
		out.Servers = append(out.Servers, w.Name)
	}
	sort.Strings(out.Servers)
	type key struct {
		server string
		phase  int // −1: every phase
		status int
	}
	type pair struct{ full, net *metrics.Agg }
	cells := map[key]*pair{}
	add := func(k key, a *metrics.Agg, net bool) {
		p := cells[k]
		if p == nil {
			p = &pair{full: metrics.NewAgg(), net: metrics.NewAgg()}
			cells[k] = p
		}
		if net {
			p.net.Merge(a)
		} else {
			p.full.Merge(a)
		}
	}
	statuses := map[int]bool{}
	var inPhases int64
	for i := range s.Phases {
		for k, a := range s.ByPhase[i] {
			if k.Tx {
				continue
			}
			st, net, ok := core.LabelStatus(k.Label)
			if !ok {
				st = 0
			}
			net = net && k.Derived
			statuses[st] = true
			add(key{k.Workload, i, st}, a, net)
			add(key{"", i, st}, a, net)
			if !net {
				inPhases += a.Count
			}
		}
	}
	for k, a := range s.Run {
		if k.Tx {
			continue
		}
		st, net, ok := core.LabelStatus(k.Label)
		if !ok {
			st = 0
		}
		statuses[st] = true
		add(key{k.Workload, -1, st}, a, net && k.Derived)
	}
	out.OutsidePhases = max(s.Total.Count-inPhases, 0)
	sts := make([]int, 0, len(statuses))
	for st := range statuses {
		sts = append(sts, st)
	}
	sort.Ints(sts)
	all := d.Span()
	row := func(k key, span time.Duration) (ServerRow, bool) {
		p := cells[k]
		if p == nil || p.full.Count == 0 {
			return ServerRow{}, false
		}
		r := ServerRow{Server: k.server, Status: k.status, Count: p.full.Count,
			MeanMs: round3(p.full.MeanMs()), P95Ms: round3(p.full.QuantileMs(95))}
		if k.phase >= 0 {
			r.Phase = s.Phases[k.phase].Name
		}
		if span > 0 {
			r.RatePerS = round3(float64(p.full.Count) / span.Seconds())
		}
		if p.net.Count > 0 {
			m, q := round3(p.net.MeanMs()), round3(p.net.QuantileMs(95))
			r.NetMeanMs, r.NetP95Ms = &m, &q
		}
		return r, true
	}
	for _, srv := range append(append([]string(nil), out.Servers...), "") {
		for i, ph := range s.Phases {
			for _, st := range sts {
				if r, ok := row(key{srv, i, st}, ph.Duration()); ok {
					out.Rows = append(out.Rows, r)
				}
			}
		}
		if srv == "" {
			continue
		}
		for _, st := range sts {
			if r, ok := row(key{srv, -1, st}, all); ok {
				out.Rows = append(out.Rows, r)
			}
		}
	}
	return out
}
