package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/prepare"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/secret"
)

// planCommands runs a plan's prepare and cleanup commands for one run
// directory (package prepare) and records them in run.json. Cleanup runs
// at most once, whatever path the run ends by.
type planCommands struct {
	st      *State
	p       *plan.Plan
	dir     string
	skip    bool // a segment run: its parent (or the user) prepares
	cleaned bool
}

func newPlanCommands(st *State, p *plan.Plan, dir string, segment bool) *planCommands {
	c := &planCommands{st: st, p: p, dir: dir, skip: segment}
	if segment && (len(p.Prepare) > 0 || len(p.Cleanup) > 0) {
		fmt.Fprintln(st.Stderr, "plateau: a segment run does not run the plan's prepare and cleanup commands; "+
			"plateau run --generators runs them once, or run them before and after the distributed job")
	}
	return c
}

// options builds the commands' environment and secret mask.
func (c *planCommands) options() prepare.Options {
	env := os.Environ()
	abs, _ := filepath.Abs(c.dir)
	planDir, _ := filepath.Abs(c.p.Dir)
	env = append(env, "PLATEAU_RUN_DIR="+abs, "PLATEAU_PLAN_DIR="+planDir, "PLATEAU_TARGET="+c.p.Target)
	if c.st.Exe != "" {
		env = append(env, "PLATEAU="+c.st.Exe)
	}
	loc := planLoc(c.p.Lang, "")
	return prepare.Options{RunDir: c.dir, Env: env, Mask: commandMask(c.p, env), Log: c.st.Stderr, T: loc.T,
		Outcome: func(r *rundir.CommandResult) string { return report.CommandOutcome(loc, r) }}
}

// commandMask hides in command lines and their output the plan's secret
// values, the values of secret-named variables of the commands' env: and
// of plateau's own environment (PGPASSWORD, API_TOKEN…), and URL and DSN
// passwords.
func commandMask(p *plan.Plan, environ []string) func(string) string {
	vals := append([]string(nil), p.SecretSet().Literals...)
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok && p.IsSecret(k) {
			vals = append(vals, v)
		}
	}
	for _, cmds := range [][]plan.Command{p.Prepare, p.Cleanup} {
		for _, cmd := range cmds {
			for k, v := range cmd.Env {
				if p.IsSecret(k) {
					vals = append(vals, v)
				}
			}
		}
	}
	sv := secret.NewValues(vals...)
	return func(s string) string { return p.RedactURL(sv.String(s)) }
}

// prepare runs the prepare commands and records them in info. On an error
// the run must not start.
func (c *planCommands) prepare(ctx context.Context, info *rundir.Info) error {
	if c.skip || len(c.p.Prepare) == 0 {
		return nil
	}
	res, err := prepare.Prepare(ctx, c.p.Prepare, c.options())
	info.Prepare = res
	return err
}

// cleanup runs the cleanup commands once, even after an interrupt (ctx's
// cancellation is not passed on), and records them in info; a failure
// becomes a note of the run, not its status.
func (c *planCommands) cleanup(ctx context.Context, info *rundir.Info) {
	if c.skip || c.cleaned || len(c.p.Cleanup) == 0 {
		return
	}
	c.cleaned = true
	res, err := prepare.Cleanup(context.WithoutCancel(ctx), c.p.Cleanup, c.options())
	info.Cleanup = res
	if err != nil {
		info.Notes = append(info.Notes, err.Error())
	}
}

// failPrepare ends a run whose prepare failed (or whose plan could not be
// loaded after it): cleanup, run.json with status failed, the reports
// (the test status is "could not run": no request was sent), exit 2.
func (c *planCommands) failPrepare(ctx context.Context, info *rundir.Info, w *rundir.Writer, why error) error {
	_ = w.Close()
	c.cleanup(ctx, info)
	end := time.Now()
	info.End = &end
	info.Status = rundir.StatusFailed
	if ctx.Err() != nil {
		// Ctrl-C while preparing: an interrupted run (exit 3), not a
		// broken one.
		info.Status, info.Stopped = rundir.StatusInterrupted, "interrupted"
	}
	info.Notes = append(info.Notes, why.Error())
	if err := rundir.WriteInfo(c.dir, info); err != nil {
		return err
	}
	sum, err := writeReports(c.dir, "")
	if err != nil {
		fmt.Fprint(c.st.Stderr, planLoc(c.p.Lang, "").T("plateau: writing the reports: %v\n", err))
		return fmt.Errorf("the run could not start (see %s): %w", c.dir, why)
	}
	loc := planLoc(c.p.Lang, "")
	printWhere(c.st.Stdout, c.dir, loc)
	printVerdict(c.st.Stdout, sum, loc)
	if sum.Verdict == analysis.VerdictInterrupted {
		return verdictErr(sum)
	}
	return fmt.Errorf("the run could not start (see %s): %w", c.dir, why)
}

// reloadPrepared loads the plan again once the prepare commands have run,
// when some data file did not exist before them (plan.Feeder.Pending):
// now every file must exist and every ${data.column} is checked.
func reloadPrepared(st *State, p *plan.Plan, planPath string, f runFlags) (*plan.Plan, error) {
	pending := false
	for _, fd := range p.Data {
		pending = pending || fd.Pending
	}
	if !pending {
		return p, nil
	}
	np, err := loadPlanWith(st, planPath, f.set, true, f.machine())
	if err != nil {
		return nil, fmt.Errorf("after the prepare commands: %w", err)
	}
	np.Monitor.Targets = p.Monitor.Targets // with the --monitor targets
	for i, w := range np.Workloads {
		w.Load = p.Workloads[i].Load // --trace's one user
	}
	return np, nil
}

// nonEmptyStr returns the first non-empty string.
func nonEmptyStr(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
