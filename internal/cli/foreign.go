package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
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
	if err := segmentOf(spec, tool, f); err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	fr := foreignRun{tool: tool, spec: spec, name: name, monitors: extra}
	if err := locustMaster(spec, tool, f); err != nil {
		return fmt.Errorf("%s: %w", script, err)
	}
	if f.generators > 0 && tool.Name() == "locust" {
		if f, err = locustWorkers(spec, f); err != nil {
			return fmt.Errorf("%s: %w", script, err)
		}
	}
	if f.generators > 0 {
		if fr.gens, f, err = splitForeign(st, tool, spec, script, f, dir, nil); err != nil {
			return fmt.Errorf("%s: %w", script, err)
		}
	}
	return execForeign(ctx, st, fr, f)
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
	// gens, when set, runs the tool on several local generators.
	gens *foreignGens
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
	set := engineSet(p, w, tool)
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
	if err := segmentOf(spec, tool, f); err != nil {
		return fmt.Errorf("%s: %w", p.File, err)
	}
	fr := foreignRun{tool: tool, spec: spec, name: p.Name,
		monitors: append(append([]plan.MonitorTarget(nil), p.Monitor.Targets...), extra...), plan: p, server: serverIns}
	if err := locustMaster(spec, tool, f); err != nil {
		return fmt.Errorf("%s: %w", p.File, err)
	}
	if f.generators > 0 && tool.Name() == "locust" {
		if f, err = locustWorkers(spec, f); err != nil {
			return fmt.Errorf("%s: %w", p.File, err)
		}
	}
	if f.generators > 0 {
		// The generators run the plan without its monitors, prepare and
		// cleanup: the parent runs those once.
		if fr.gens, f, err = splitForeign(st, tool, spec, p.File, f, dir,
			[]string{"--set", "monitor.targets=[]", "--set", "prepare=[]", "--set", "cleanup=[]"}); err != nil {
			return fmt.Errorf("%s: %w", p.File, err)
		}
	}
	return execForeign(ctx, st, fr, f)
}

// engineSet maps an engine workload's load (and, for Locust, the plan's
// target) onto the tool's overrides, as --set does for a script.
func engineSet(p *plan.Plan, w *plan.Workload, tool executor.Tool) map[string]string {
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
	return set
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
	if fr.gens != nil {
		runLive = nil // the generators' own live outputs serve their shares
	}
	run, err := importer.NewRun(importer.Options{Dir: dir, Name: name, DerivePhases: true, MinPhase: foreignMinPhase,
		Command: redactArgs(append([]string{"plateau"}, st.Args...)), Version: version(), Live: runLive,
		Logf: func(format string, args ...any) { fmt.Fprintf(st.Stderr, "plateau: "+format+"\n", args...) }})
	if err != nil {
		return err
	}
	if spec.Segments > 1 {
		// A generator's run says it is running until it ends, so that
		// plateau merge --wait waits for it (the import's run.json says
		// "imported" until then).
		if info, err := rundir.ReadInfo(dir); err == nil {
			info.Status, info.Segment = rundir.StatusRunning, fmt.Sprintf("%d/%d", spec.Segment, spec.Segments)
			if err := rundir.WriteInfo(dir, info); err != nil {
				_ = run.Close()
				return err
			}
		}
	}
	if fr.gens != nil {
		fmt.Fprintf(st.Stderr, "plateau: running %s in %s on %d generators → %s (each one's run and the tool's output: %s)\n", spec.Script, tool.Name(),
			fr.gens.n, dir, filepath.Join(dir, SegmentsDir, "i"))
	} else {
		fmt.Fprintf(st.Stderr, "plateau: running %s in %s → %s (its own output: %s)\n", spec.Script, tool.Name(), dir,
			filepath.Join(dir, "tool", tool.Name()+".out.log"))
	}
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
	generator := ""
	if spec.Segments > 1 {
		generator = strconv.Itoa(spec.Segment)
	}
	outs, runCtx, err := startOutputs(ctx, st, f, lp, generator, ln)
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
	spec.Start = &executor.StartSeen{} // the followed import reads the tool's start as it goes
	// The import follows the tool's result file while the tool writes
	// it; a tool whose results are not streamed is read when it ends.
	var imported, liveRead chan error
	if runLive != nil {
		imported = make(chan error, 1)
		go func() { imported <- tool.Source(spec, out, exited).Import(context.WithoutCancel(ctx), run) }()
	} else if lr, ok := tool.(executor.LiveReader); ok && fr.gens == nil {
		liveRead = make(chan error, 1)
		go func() { liveRead <- lr.ReadLive(out, exited, live) }()
	}
	// The phases the script declares (docs/run-foreign.md, Phases), read
	// before the tool starts; placed on the clock once the tool's files
	// say when it started.
	var decl executor.Declared
	dec, declares := tool.(executor.Declarer)
	// A generator's share is not what the script declares: its phases
	// come from its user count; the merged run's from the whole script.
	declares = declares && spec.Segments <= 1
	if declares {
		decl = dec.Declare(spec)
	}
	started := func() (time.Time, bool) { return dec.Started(out, decl) }
	if decl.StartOnce {
		started = readOnce(started)
	}
	var ld *liveDeclared
	if len(decl.Phases) > 0 && fr.gens == nil {
		ld = newLiveDeclared(decl.Phases, started)
	}
	fl := startForeignLive(live, outs, prog, time.Now(), foreignMinPhase, ld)
	var (
		res        *executor.Result
		runErr     error
		genNotes   []string
		incomplete bool
	)
	if fr.gens != nil {
		res, genNotes, incomplete, runErr = runForeignGens(runCtx, st, tool, fr.gens, out)
		close(exited)
	} else {
		res, runErr = executor.Run(runCtx, tool, spec, nil)
	}
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
		if res.Late > time.Second {
			run.Note("%s started %.1f s after the generators' common start (building its command took that long): this generator's share of the load began late",
				tool.Name(), res.Late.Seconds())
		}
		if fr.gens != nil {
			run.Note("ran by %s on %d generators, each as %s (i = 0 … %d)", tool.Name(), fr.gens.n, strings.Join(res.Command, " "), fr.gens.n-1)
		} else {
			run.Note("ran by %s: %s", tool.Name(), strings.Join(res.Command, " "))
		}
		if imported == nil {
			ierr = tool.Source(spec, out, nil).Import(context.WithoutCancel(ctx), run)
		}
		switch {
		case len(decl.Phases) > 0:
			t0, ok := started()
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
		if fr.gens == nil {
			for _, n := range tool.Notes(spec, out, res.ExitCode) {
				run.Note("%s", n)
			}
		}
		for _, n := range genNotes {
			run.Note("%s", n)
		}
		// plateau's own work beside the tool: the monitors, the import of
		// its results and the live outputs (docs/run-foreign.md).
		if cpu1, ok := executor.SelfCPU(); ok && cpuOK && res.ToolCPU > 0 {
			own := cpu1 - cpu0
			run.Note("CPU: %s used %.2f s; plateau's monitors, import and live outputs beside it %.2f s (%.1f %% of the tool's)",
				tool.Name(), res.ToolCPU.Seconds(), own.Seconds(), 100*own.Seconds()/res.ToolCPU.Seconds())
		}
		if res.Interrupted && fr.gens != nil {
			run.Note("interrupted: plateau sent its %d generators SIGINT, and each sent its %s SIGINT (how each stopped: the generators' notes)", fr.gens.n, tool.Name())
		} else if res.Interrupted {
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
	if incomplete && info.Status != rundir.StatusFailed {
		info.Status, info.Stopped = rundir.StatusFailed, "incomplete load: a generator's share is missing (see the notes)"
	}
	if spec.Segments > 1 {
		info.Segment = fmt.Sprintf("%d/%d", spec.Segment, spec.Segments)
	}
	if monErr != nil {
		info.Notes = append(info.Notes, "monitors: "+monErr.Error())
	}
	if pinfo != nil {
		// The plan's context, requirements and commands, as plateau's own
		// runs record them.
		info.PlanFile, info.Target, info.Context, info.SLA, info.Prepare = pinfo.PlanFile, pinfo.Target, pinfo.Context, pinfo.SLA, pinfo.Prepare
		info.Secrets = pinfo.Secrets
		if runErr == nil && ierr == nil && len(fr.server) > 0 && spec.Segments <= 1 {
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
	if spec.Segments <= 1 {
		// A segment is one generator's share: the merged run is the
		// one to remember.
		addToHistory(ctx, st, dir, f.history, nil)
	}
	loc, _ := locale.Parse(lang) // checked by writeReports
	printSummary(st.Stdout, sum, loc)
	if spec.Segments > 1 && (sum.Verdict == analysis.VerdictFailed || sum.Verdict == analysis.VerdictInvalid) {
		fmt.Fprintln(st.Stdout, "segment run: requirements are judged on the merged run, not on one segment")
		return nil
	}
	return verdictErr(sum)
}

// readOnce is read until it reports a time, then that time: a tool's
// start that does not change once found (executor.Declared.StartOnce) is
// read once for the live phases and the report, not again from the top of
// a file that has grown by the whole run (beside k6 at its peak, the
// second reading was a tenth of plateau's CPU).
func readOnce(read func() (time.Time, bool)) func() (time.Time, bool) {
	var (
		mu    sync.Mutex
		t     time.Time
		found bool
	)
	return func() (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		if !found {
			t, found = read()
		}
		return t, found
	}
}
