// Package converttest runs converted plans in tests: it writes a plan and
// its report, loads the plan with plateau's loader and runs it with the
// engine, returning the run's dataset.
package converttest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/engine/enginetest"
	"github.com/plateau-perf/plateau/internal/plan"
)

// Write writes the plan and its report into dir and returns the plan path
// and the plan text.
func Write(t testing.TB, dir string, p *convert.Plan, rep *convert.Report) (string, string) {
	t.Helper()
	src, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	pf := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(pf, src, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "plan.convert.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rep.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return pf, string(src)
}

// Run loads the plan file (with env as the environment and the overrides)
// and runs it to its end, bounded by timeout.
func Run(t testing.TB, pf string, env map[string]string, timeout time.Duration, sets ...string) (*analysis.Dataset, *engine.Result) {
	t.Helper()
	p, err := plan.LoadFile(pf, plan.Options{Overrides: sets, Env: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}})
	if err != nil {
		t.Fatalf("converted plan does not load: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	d, res := enginetest.Run(t, ctx, p, filepath.Join(filepath.Dir(pf), "run"))
	return d, res
}
