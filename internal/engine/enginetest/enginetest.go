// Package enginetest holds what tests that run plans share: running a
// loaded plan to its end into a run directory, as `plateau run` does, and
// loading the result as the report would.
package enginetest

import (
	"context"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Run runs p (seed 1) into the run directory out, marks the run completed
// and loads it with analysis.Load. Any failure stops the test.
func Run(t testing.TB, ctx context.Context, p *plan.Plan, out string) (*analysis.Dataset, *engine.Result) {
	t.Helper()
	info := &rundir.Info{Tool: "plateau", Name: p.Name, Status: rundir.StatusRunning}
	for _, s := range p.SLA {
		info.SLA = append(info.SLA, s.Expr)
	}
	w, err := rundir.Create(out, info, p.Source, true)
	if err != nil {
		t.Fatal(err)
	}
	res, err := engine.Run(ctx, engine.Config{Plan: p, Writer: w, Info: info,
		SaveInfo: func(in *rundir.Info) error { return rundir.WriteInfo(out, in) }, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	info.End, info.Status = &end, rundir.StatusCompleted
	if err := rundir.WriteInfo(out, info); err != nil {
		t.Fatal(err)
	}
	d, err := analysis.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return d, res
}
