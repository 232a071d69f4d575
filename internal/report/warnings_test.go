package report

import (
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
)

// TestStarvedPhasesOneWarning: a generator starved in four phases is one
// warning naming the four phases, with the largest share and the total
// wait; in one phase it is that phase's own sentence; other warnings stay.
func TestStarvedPhasesOneWarning(t *testing.T) {
	v := &analysis.Validity{Verdict: "valid"}
	for i, name := range []string{"step 1", "step 2", "step 3", "step 4"} {
		v.Phases = append(v.Phases, analysis.PhaseValidity{Phase: name, Held: true, Starved: true, RunQueuePct: float64(21 + 5*i), RunQueueMs: 1000})
		v.Findings = append(v.Findings, analysis.Finding{Kind: analysis.ReasonStarved, Phase: name, Text: "the generator in " + name + " was starved of CPU"})
	}
	v.Findings = append(v.Findings, analysis.Finding{Kind: "other", Text: "something else"})
	ws := Warnings(v)
	if len(ws) != 2 {
		t.Fatalf("got %d warnings, want 2: %+v", len(ws), ws)
	}
	var starved Warning
	for _, w := range ws {
		if w.Kind == analysis.ReasonStarved {
			starved = w
		}
	}
	for _, want := range []string{"4 phases", "step 1, step 2, step 3 and step 4", "36 %", "4,000 ms"} {
		if !strings.Contains(starved.Text, want) {
			t.Errorf("starved warning %q lacks %q", starved.Text, want)
		}
	}
	v.Findings = v.Findings[3:]
	ws = Warnings(v)
	if len(ws) != 2 || ws[0].Text != "the generator in step 4 was starved of CPU" {
		t.Errorf("one starved phase: %+v, want its own sentence", ws)
	}
}

// TestSLASkipWorded: a requirement analysis could not judge carries a
// kind; the report words it, naming the check and the phase.
func TestSLASkipWorded(t *testing.T) {
	s := &analysis.Summary{SLA: []analysis.SLAResult{
		{Expr: "avg(server_time) < 1s", Scope: "run", NoData: true, Skip: analysis.SkipNoServerData, SkipNote: "accesslog a.log not read: gone"},
		{Expr: "avg(server_time) < 1s", Scope: "run", NoData: true, Skip: analysis.SkipNoServerData},
		{Expr: `checks > 99% during "step 2"`, Scope: "step 2", NoData: true, Skip: analysis.SkipNoChecks, SkipCheck: "status is 200"},
		{Expr: "p95(response_time) < 1s", Scope: "run", NoData: true, Skip: analysis.SkipNoSamples},
	}}
	Words(s)
	want := []string{"no server-side data: accesslog a.log not read: gone", "no server-side data: no access log was attached to this run",
		`no outcomes of a check named "status is 200" in step 2`, "no samples for this requirement"}
	for i, w := range want {
		if s.SLA[i].Error != w {
			t.Errorf("requirement %d: %q, want %q", i, s.SLA[i].Error, w)
		}
	}
}
