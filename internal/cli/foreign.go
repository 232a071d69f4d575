package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/executor"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// runForeign is `plateau run plan.jmx | script.js | locustfile.py`: the
// script runs in its own tool (internal/executor) while plateau's monitors
// watch the system under test on the same clock; the tool's result files,
// written into the run directory, are then read by the importer of that
// tool — the same decoders and figures as `plateau import` — and the
// report is written as for plateau's own runs. See docs/run-foreign.md.
func runForeign(ctx context.Context, st *State, script string, f runFlags) error {
	tool, err := executor.For(script)
	if err != nil {
		return err
	}
	switch {
	case f.generators > 0 || f.segment != "":
		return fmt.Errorf("%s: %w", script, notDistributed(tool.Name(), "--generators"))
	case f.trace > 0:
		return fmt.Errorf("%s: --trace is plateau's own engine's; %s has its own debugging", script, tool.Name())
	case len(f.attach) > 0:
		return fmt.Errorf("%s: --attach is not supported for %s scripts yet; import the servers' files into the run with plateau import", script, tool.Name())
	}
	if err := locale.Check(f.lang); err != nil {
		return fmt.Errorf("--lang: %w", err)
	}
	set := map[string]string{}
	for _, kv := range f.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("--set %q: want key=value (target, users, ramp_up, duration, rate)", kv)
		}
		set[k] = v
	}
	extra, err := parseMonitorFlags(f.monitors)
	if err != nil {
		return err
	}
	name := strings.TrimSuffix(filepath.Base(script), filepath.Ext(script))
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", safeName(name)+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	spec := &executor.Spec{Script: script, Dir: dir, Props: f.props, Env: f.env, Set: set,
		Getenv: func(k string) string { v, _ := st.Getenv(k); return v }}
	return execForeign(ctx, st, foreignRun{tool: tool, spec: spec, name: name, monitors: extra}, f)
}

// foreignMinPhase is the shortest steady user count that is a phase of a
// foreign run, live and in the report (importer.Options.MinPhase).
const foreignMinPhase = 30 * time.Second

// foreignRun is one run of a foreign tool: from a script given on the
// command line, or from a plan's engine workload (plan set).
type foreignRun struct {
	tool     executor.Tool
	spec     *executor.Spec
	name     string
	monitors []plan.MonitorTarget
	plan     *plan.Plan
	server   []importInput
}

// runPlanForeign runs a plan whose workload names an engine: the plan's
// monitors, SLA, context, server_side, prepare and cleanup apply as to
// plateau's own runs.
func runPlanForeign(ctx context.Context, st *State, p *plan.Plan, f runFlags) error {
	var w *plan.Workload
	for _, x := range p.Workloads {
		switch {
		case x.Engine == "":
			return fmt.Errorf("%s: workload %q runs in plateau's engine and another in %s: a plan with an engine workload has only that one (yet)", p.File, x.Name, engineOf(p))
		case w != nil:
			return fmt.Errorf("%s: two engine workloads (%q, %q): one tool per run (yet)", p.File, w.Name, x.Name)
		}
		w = x
	}
	switch {
	case f.generators > 0 || f.segment != "":
		return fmt.Errorf("%s: %w", p.File, notDistributed(w.Engine, "--generators"))
	case f.trace > 0:
		return fmt.Errorf("%s: --trace is plateau's own engine's; %s has its own debugging", p.File, w.Engine)
	case len(f.props) > 0 || len(f.env) > 0:
		return fmt.Errorf("%s: a plan gives JMeter properties and the script's environment in the workload (properties:, env:)", p.File)
	}
	script := w.Script
	if !filepath.IsAbs(script) && p.File != "" {
		script = filepath.Join(filepath.Dir(p.File), script)
	}
	tool, err := executor.For(script)
	if err != nil {
		return err
	}
	if tool.Name() != w.Engine {
		return fmt.Errorf("%s: workload %q: engine %s, but %s is a %s script", p.File, w.Name, w.Engine, w.Script, tool.Name())
	}
	set := map[string]string{}
	if w.Load.Users > 0 {
		set["users"] = fmt.Sprint(w.Load.Users)
	}
	if w.Load.RampUp > 0 {
		set["ramp_up"] = w.Load.RampUp.String()
	}
	if w.Load.Duration > 0 {
		set["duration"] = w.Load.Duration.String()
	}
	if w.Load.Rate > 0 {
		set["rate"] = fmt.Sprint(int(math.Round(float64(w.Load.Rate))))
	}
	if p.Target != "" && tool.Name() == "locust" {
		set["target"] = p.Target
	}
	var props, env []string
	for _, k := range sortedKeys(w.Properties) {
		props = append(props, k+"="+w.Properties[k])
	}
	for _, k := range sortedKeys(w.Env) {
		env = append(env, k+"="+w.Env[k])
	}
	extra, err := parseMonitorFlags(f.monitors)
	if err != nil {
		return err
	}
	serverIns, err := serverInputs(p)
	if err != nil {
		return err
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", safeName(p.Name)+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	spec := &executor.Spec{Script: script, Dir: dir, Props: props, Env: env, Set: set,
		Getenv: func(k string) string { v, _ := st.Getenv(k); return v }}
	return execForeign(ctx, st, foreignRun{tool: tool, spec: spec, name: p.Name,
		monitors: append(append([]plan.MonitorTarget(nil), p.Monitor.Targets...), extra...), plan: p, server: serverIns}, f)
}

// notDistributed is the refusal of a foreign tool's run on more than one
// generator (--generators, --segment, plateau k8s): each generator would
// have to run the tool on its segment of the load and the merge keep the
// tool's own whole-run figures; until then the run is refused rather than
// run on one generator. docs/run-foreign.md says what to do instead
// (JMeter's own distributed mode, imported).
func notDistributed(engine, what string) error {
	return fmt.Errorf("%s is not supported with engine: %s yet — run the tool's own distributed mode "+
		"(JMeter: jmeter -n -r with remote engines) and import its results with plateau import, "+
		"or run it on one machine (docs/run-foreign.md)", what, engine)
}

func engineOf(p *plan.Plan) string {
	for _, w := range p.Workloads {
		if w.Engine != "" {
			return w.Engine
		}
	}
	return ""
}

// execForeign runs fr: the run directory, the plan's prepare commands,
// the monitors, the tool, the import of its results, the server side,
// cleanup and the report.
func execForeign(ctx context.Context, st *State, fr foreignRun, f runFlags) error {
	tool, spec, dir, name := fr.tool, fr.spec, fr.spec.Dir, fr.name
	_, statErr := os.Stat(dir)
	fresh := errors.Is(statErr, os.ErrNotExist)
	// The listener is bound before the run directory exists: a bad or
	// busy address leaves no run behind.
	ln, err := openListener(st, f)
	if err != nil {
		return err
	}
	if ln != nil {
		defer ln.Close()
	}
	// The tool's results reach the live outputs and the panel as the
	// import reads them (docs/run-foreign.md).
	live := importer.NewLive()
	var runLive *importer.Live
	if executor.Streams(tool) {
		runLive = live
	}
	run, err := importer.NewRun(importer.Options{Dir: dir, Name: name, DerivePhases: true, MinPhase: foreignMinPhase,
		Command: redactArgs(append([]string{"plateau"}, st.Args...)), Version: version(), Live: runLive,
		Logf: func(format string, args ...any) { fmt.Fprintf(st.Stderr, "plateau: "+format+"\n", args...) }})
	if err != nil {
		return err
	}
	fmt.Fprintf(st.Stderr, "plateau: running %s in %s → %s (its own output: %s)\n", spec.Script, tool.Name(), dir,
		filepath.Join(dir, "tool", tool.Name()+".out.log"))
	var pinfo *rundir.Info
	var cmds *planCommands
	interval := time.Second
	lp := &plan.Plan{Name: name, Workloads: []*plan.Workload{{Name: tool.Name()}}}
	if p := fr.plan; p != nil {
		lp.SLA = p.SLA
		pinfo = newInfo(st, p)
		if p.Monitor.Interval > 0 {
			interval = p.Monitor.Interval
		}
		if err := os.WriteFile(filepath.Join(dir, rundir.PlanFile), p.RedactedSource(), 0o644); err != nil {
			_ = run.Close()
			return err
		}
		cmds = newPlanCommands(st, p, dir, false)
		if err := cmds.prepare(ctx, pinfo); err != nil {
			_ = run.Close()
			info, rerr := rundir.ReadInfo(dir)
			if rerr == nil {
				info.Status, info.Prepare = rundir.StatusFailed, pinfo.Prepare
				info.Notes = append(info.Notes, err.Error())
				cmds.cleanup(ctx, info)
				_ = rundir.WriteInfo(dir, info)
			}
			return fmt.Errorf("prepare: %w", err)
		}
	}
	outs, runCtx, err := startOutputs(ctx, st, f, lp, "", ln)
	if err != nil {
		_ = run.Close()
		if fresh {
			_ = os.RemoveAll(dir)
		}
		return err
	}
	defer outs.close()
	mon := startMonitors(ctx, st, &plan.Plan{Name: name, Monitor: plan.Monitor{Interval: interval, Targets: fr.monitors}}, dir)
	prog := newProgressPrinter(st, f.quiet)
	prog.monitors = mon.panelLines
	cpu0, cpuOK := executor.SelfCPU()
	out := filepath.Join(dir, "tool")
	exited := make(chan struct{})
	spec.Exited = exited
	// The import follows the tool's result file while the tool writes
	// it; a tool whose results are not streamed is read when it ends.
	var imported, liveRead chan error
	if runLive != nil {
		imported = make(chan error, 1)
		go func() { imported <- tool.Source(spec, out, exited).Import(context.WithoutCancel(ctx), run) }()
	} else if lr, ok := tool.(executor.LiveReader); ok {
		liveRead = make(chan error, 1)
		go func() { liveRead <- lr.ReadLive(out, exited, live) }()
	}
	// The phases the script declares (docs/run-foreign.md, Phases), read
	// before the tool starts; placed on the clock once the tool's files
	// say when it started.
	var decl executor.Declared
	dec, declares := tool.(executor.Declarer)
	if declares {
		decl = dec.Declare(spec)
	}
	var ld *liveDeclared
	if len(decl.Phases) > 0 {
		ld = newLiveDeclared(decl.Phases, func() (time.Time, bool) { return dec.Started(out, decl) })
	}
	fl := startForeignLive(live, outs, prog, time.Now(), foreignMinPhase, ld)
	res, runErr := executor.Run(runCtx, tool, spec, nil)
	monErr := mon.stop()
	if res == nil {
		// The tool never started (not found, a bad override): leave no
		// run directory behind.
		if imported != nil {
			<-imported
		}
		if liveRead != nil {
			<-liveRead
		}
		fl.finish()
		_ = run.Close()
		if fresh {
			_ = os.RemoveAll(dir)
		}
		return runErr
	}
	var ierr error
	if imported != nil {
		ierr = <-imported
	}
	if runErr == nil {
		run.Note("ran by %s: %s", tool.Name(), strings.Join(res.Command, " "))
		if imported == nil {
			ierr = tool.Source(spec, out, nil).Import(context.WithoutCancel(ctx), run)
		}
		switch {
		case len(decl.Phases) > 0:
			t0, ok := dec.Started(out, decl)
			switch {
			case ok && (t0.Before(res.Start.Add(-time.Second)) || t0.After(res.End)):
				// A start outside the tool's process's life (a log in
				// another time zone) would misplace every phase.
				run.Note("phases: %s's start read from its files (%s) is outside its run (%s – %s); phases come from the user count it reports",
					tool.Name(), t0.UTC().Format(time.RFC3339), res.Start.UTC().Format(time.RFC3339), res.End.UTC().Format(time.RFC3339))
			case ok:
				run.SetDeclared(tool.Name(), decl.Phases, t0)
			default:
				run.Note("phases: %s's script declares %d holds, but its start could not be read from its files; phases come from the user count it reports", tool.Name(), len(decl.Phases))
			}
		case declares:
			run.Note("phases: not from %s's script (%s); they come from the user count it reports", tool.Name(), decl.Why)
		}
		for _, n := range tool.Notes(spec, out, res.ExitCode) {
			run.Note("%s", n)
		}
		// plateau's own work beside the tool: the monitors, the import of
		// its results and the live outputs (docs/run-foreign.md).
		if cpu1, ok := executor.SelfCPU(); ok && cpuOK && res.ToolCPU > 0 {
			own := cpu1 - cpu0
			run.Note("CPU: %s used %.2f s; plateau's monitors, import and live outputs beside it %.2f s (%.1f %% of the tool's)",
				tool.Name(), res.ToolCPU.Seconds(), own.Seconds(), 100*own.Seconds()/res.ToolCPU.Seconds())
		}
		if res.Interrupted {
			how := "stopped it cleanly"
			if res.Killed {
				how = "did not stop within the grace period and was killed; its last results may be missing"
			}
			run.Note("interrupted: plateau sent %s SIGINT and it %s (exit code %d)", tool.Name(), how, res.ExitCode)
		}
	}
	if liveRead != nil {
		if err := <-liveRead; err != nil {
			run.Note("live figures: %v", err)
		}
	}
	fl.finish()
	cerr := run.Close()
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		return errors.Join(runErr, ierr, cerr, err)
	}
	outs.finish(info)
	info.Status = rundir.StatusCompleted
	switch {
	case runErr != nil || ierr != nil:
		info.Status = rundir.StatusFailed
	case res.Interrupted:
		info.Status, info.Stopped = rundir.StatusInterrupted, "interrupted"
	}
	if res != nil {
		end := res.End.UTC()
		if info.Start.IsZero() {
			info.Start = res.Start.UTC()
		}
		info.End = &end
	}
	if monErr != nil {
		info.Notes = append(info.Notes, "monitors: "+monErr.Error())
	}
	if pinfo != nil {
		// The plan's context, requirements and commands, as plateau's own
		// runs record them.
		info.PlanFile, info.Target, info.Context, info.SLA, info.Prepare = pinfo.PlanFile, pinfo.Target, pinfo.Context, pinfo.SLA, pinfo.Prepare
		info.Secrets = pinfo.Secrets
		if runErr == nil && ierr == nil && len(fr.server) > 0 {
			attachServerSide(ctx, st, dir, info, fr.server, fr.plan.ServerSide)
		}
		cmds.cleanup(ctx, info)
	}
	if err := rundir.WriteInfo(dir, info); err != nil {
		return err
	}
	switch {
	case runErr != nil:
		return fmt.Errorf("run failed (what there is is in %s): %w", dir, runErr)
	case ierr != nil:
		return fmt.Errorf("%s exited with code %d and its results could not be read (its output: %s): %w", tool.Name(), res.ExitCode, res.Log, ierr)
	case cerr != nil:
		return fmt.Errorf("writing results: %w", cerr)
	}
	lang := f.lang
	if lang == "" && fr.plan != nil {
		lang = fr.plan.Lang // a plan run by a foreign engine: its lang:
	}
	sum, err := writeReports(dir, lang)
	if err != nil {
		return err
	}
	outs.done(sum.Verdict, sum.Passed, filepath.Join(dir, "report.html"))
	fmt.Fprintf(st.Stdout, "\nrun directory: %s\nreport:        %s\n", dir, filepath.Join(dir, "report.html"))
	addToHistory(ctx, st, dir, f.history, nil)
	printSummary(st.Stdout, sum, nil)
	return verdictErr(sum)
}
