package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/executor"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/monitor/builtin"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/secret"
)

// runFlags are the flags of `plateau run`.
type runFlags struct {
	out       string
	set       []string
	segment   string
	startAt   string
	quiet     bool
	noSamples bool
	monitors  []string // --monitor KIND:key=value,… added to the plan's targets
	// generators > 0 runs the plan on that many local generator
	// processes (generators.go).
	generators int
	listen     string // --listen ADDR: /metrics and the live view (outputs.go)
	// listenToken, when set, is required on every request to --listen
	// (default $PLATEAU_LISTEN_TOKEN).
	listenToken string
	trace       int      // --trace N: N iterations of one user per workload, traced to trace.txt
	outputs     []string // --out KIND=URL push outputs (outputs.go)
	attach      []string // --attach TYPE:[NAME=]PATH[,key=value…] server-side files (attach.go)
	props       []string // -J name=value: JMeter properties (foreign.go)
	env         []string // -e NAME=value: a foreign script's environment (foreign.go)
	history     string   // --history DB: add the run to this results store as it ends (history.go)
	lang        string   // --lang: the report's language, over the plan's lang:
	// locustMaster (HOST:PORT) runs Locust's master alone, expecting
	// locustWorkers workers from elsewhere for at most locustWait
	// (plateau k8s locustfile.py's master pod; foreign_generators.go).
	locustMaster  string
	locustWorkers int
	locustWait    time.Duration
	// onSummary, when set, receives the run's summary once its reports
	// are written (plateau capacity judges each probe on it).
	onSummary func(*analysis.Summary)
}

func newRunCmd(st *State) *cobra.Command {
	var f runFlags
	c := &cobra.Command{
		Use:   "run PLAN.yaml | plan.jmx | script.js | locustfile.py",
		Short: "Run a test plan, watch the system under test and write the report",
		Long: `Run a test plan. Writes a run directory (default runs/<name>-<UTC time>) with the plan
as run, run.json, raw samples (samples.jtl), per-second aggregates, monitor data,
summary.json and the reports. Exit code 0 when every SLA holds, 1 when one fails,
2 when the run could not be done. Ctrl-C stops the load and still writes everything.

A JMeter plan (.jmx), a k6 script (.js) or a locustfile (.py) runs in its own tool
under plateau's monitors, with -J name=value (JMeter properties), -e NAME=value (the
script's environment) and --set target=URL|users=N|ramp_up=…|duration=…|rate=N mapped
onto the tool's load settings; its results become the run's (docs/run-foreign.md).
With --generators N, JMeter, k6 and Gatling run on N generators, each on its share
of the load, and the report reads the union of their raw results; Locust runs its
own master and N workers.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if executor.IsScript(args[0]) {
				return runForeign(cmd.Context(), st, args[0], f)
			}
			if len(f.props) > 0 || len(f.env) > 0 {
				return fmt.Errorf("-J and -e are for JMeter, k6 and Locust scripts; a plan takes --set")
			}
			if f.generators > 0 {
				return runGenerators(cmd.Context(), st, args[0], f)
			}
			return runPlan(cmd.Context(), st, args[0], f)
		},
	}
	c.Flags().VarP(outFlag{dir: &f.out, outs: &f.outputs}, "out", "o",
		"run directory to write (default runs/<name>-<UTC timestamp>); or, repeatable, a push output KIND=URL: "+
			"prometheus-rw=URL (remote write), otlp=URL (OTLP/HTTP metrics), influxdb=URL (line protocol)")
	c.Flags().StringVar(&f.listen, "listen", "", "serve /metrics (Prometheus) and the live view (/) on this address while the run goes, e.g. 127.0.0.1:9464")
	c.Flags().StringVar(&f.listenToken, "listen-token", "", "require this bearer token on every request to --listen (default $"+listenTokenEnv+"): Authorization: Bearer TOKEN, or open /?token=TOKEN")
	c.Flags().StringArrayVar(&f.set, "set", nil, "override a plan value, e.g. --set workloads.read.load.users=20 (repeatable)")
	c.Flags().StringVar(&f.segment, "segment", "", "run segment i/N of the plan (0-based i) for distributed generation")
	c.Flags().StringVar(&f.startAt, "start-at", "", "start the load at this RFC 3339 instant (distributed generation)")
	c.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no live progress output")
	c.Flags().BoolVar(&f.noSamples, "no-samples", false, "do not keep the raw sample log (samples.jtl)")
	c.Flags().StringArrayVar(&f.monitors, "monitor", nil,
		"watch a target besides the plan's, e.g. --monitor host, --monitor 'process:name=back,match=demo serve back', --monitor 'postgres:name=db,dsn=postgres://127.0.0.1/app' (repeatable)")
	c.Flags().IntVar(&f.trace, "trace", 0, "debug the plan: run N iterations of one user per workload and write every request, response, extracted variable and branch to trace.txt in the run directory (secrets masked)")
	c.Flags().StringArrayVar(&f.attach, "attach", nil,
		"read a file the servers write into the run directory after the load, with the run's phases (like the plan's server_side), e.g. --attach 'accesslog:web1=/var/log/nginx/access.log,format=combined_rt' (accesslog, vmstat, jstat, dockerstats; repeatable)")
	c.Flags().StringArrayVarP(&f.props, "jmeter-property", "J", nil, "a JMeter property for a .jmx plan, name=value, as JMeter's own -J (repeatable)")
	c.Flags().StringArrayVarP(&f.env, "env", "e", nil, "an environment variable for a k6, JMeter or Locust script, NAME=value, as k6's own -e (repeatable)")
	c.Flags().IntVarP(&f.generators, "generators", "g", 0, "run the plan on N local generator processes (segments i/N), then merge")
	c.Flags().StringVar(&f.locustMaster, "locust-master", "", "a locustfile: run Locust's master alone, bound to HOST:PORT (e.g. '*:5557'), for --locust-workers N workers started elsewhere (locust -f FILE --worker --master-host …)")
	c.Flags().IntVar(&f.locustWorkers, "locust-workers", 0, "with --locust-master: the workers the master waits for before it starts the load")
	c.Flags().DurationVar(&f.locustWait, "locust-wait", 5*time.Minute, "with --locust-master: how long the master waits for its workers")
	c.Flags().StringVar(&f.lang, "lang", "", "language of the report: "+strings.Join(locale.Names(), ", ")+" (default: the plan's lang:, else en)")
	c.Flags().StringVar(&f.history, "history", "", "add the run to this results store as it ends: an SQLite file or a postgres:// URL (as the plan's history: key; see plateau history)")
	return c
}

// loadPlan loads a plan with the CLI's environment and SLA checker, its
// load bounded by what this machine can hold.
func loadPlan(st *State, path string, set []string) (*plan.Plan, error) {
	return loadPlanWith(st, path, set, false, thisMachine(1))
}

// loadPlanWith is loadPlan; prepared says the plan's prepare commands have
// run, so its data files must all exist (plan.Options.Prepared); machine
// bounds its load (nil: it runs elsewhere).
func loadPlanWith(st *State, path string, set []string, prepared bool, machine *plan.Machine) (*plan.Plan, error) {
	p, err := plan.LoadFile(path, plan.Options{Overrides: set, Env: st.Getenv, CheckSLA: sla.Check,
		CheckMonitor:      func(t *plan.MonitorTarget) error { return builtin.Validate(monitorTarget(t)) },
		CheckServerSource: checkServerSource,
		Prepared:          prepared,
		Generate:          generateFeeder,
		Machine:           machine})
	if err != nil {
		var pe plan.Errors
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("the plan has %d problem(s):\n%w", len(pe), err)
		}
		return nil, err
	}
	return p, nil
}

var segmentRE = regexp.MustCompile(`^(\d+)/(\d+)$`)

// machine is what this generator's machine holds; a --segment i/N run
// holds 1/N of the plan (a bad --segment is reported later).
func (f runFlags) machine() *plan.Machine {
	gens := 1
	if m := segmentRE.FindStringSubmatch(f.segment); m != nil {
		gens, _ = strconv.Atoi(m[2])
	}
	return thisMachine(gens)
}

func runPlan(ctx context.Context, st *State, planPath string, f runFlags) error {
	if _, set := st.Getenv("GOGC"); !set {
		// The request path allocates nothing, so collections are rare
		// whatever the setting; a tight target keeps the heap close to the
		// live per-user state. Measured: 17.6 instead of 23.7 KiB per extra
		// user (1,000 users, 1 s think), no CPU change at 5,000 req/s.
		debug.SetGCPercent(25)
	}
	if f.lang != "" {
		// --lang is the plan's lang: overridden, so run.json records the
		// language every later report of the run is written in.
		if err := locale.Check(f.lang); err != nil {
			return fmt.Errorf("--lang: %w", err)
		}
		f.set = append(slices.Clip(f.set), "lang="+f.lang)
	}
	p, err := loadPlanWith(st, planPath, f.set, false, f.machine())
	if err != nil {
		return err
	}
	if searched(p) {
		return runSearchPlan(ctx, st, planPath, f)
	}
	if engineOf(p) != "" {
		if len(f.attach) > 0 {
			return errors.New("--attach is not supported with an engine workload yet; give the plan's server_side")
		}
		return runPlanForeign(ctx, st, p, f)
	}
	if err := addAttachFlags(p, f.attach); err != nil {
		return err
	}
	if err := checkSLANames(p); err != nil {
		return err
	}
	serverIns, err := serverInputs(p)
	if err != nil {
		return err
	}
	extra, err := parseMonitorFlags(f.monitors)
	if err != nil {
		return err
	}
	p.Monitor.Targets = append(p.Monitor.Targets, extra...)
	if f.trace < 0 {
		return fmt.Errorf("--trace %d: want a number of iterations", f.trace)
	}
	if f.trace > 0 {
		if f.generators > 0 || f.segment != "" {
			return errors.New("--trace runs one user; it does not combine with --generators or --segment")
		}
		for _, w := range p.Workloads {
			w.Load = plan.Load{Users: 1, Iterations: f.trace, Pos: w.Load.Pos}
		}
	}
	seg, nseg := 0, 1
	if f.segment != "" {
		m := segmentRE.FindStringSubmatch(f.segment)
		if m == nil {
			return fmt.Errorf("--segment %q: want i/N, e.g. 0/3", f.segment)
		}
		seg, _ = strconv.Atoi(m[1])
		nseg, _ = strconv.Atoi(m[2])
		if nseg < 1 || seg >= nseg {
			return fmt.Errorf("--segment %q: i must be in 0..N-1", f.segment)
		}
	}
	var startAt time.Time
	if f.startAt != "" {
		if startAt, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return fmt.Errorf("--start-at: %w", err)
		}
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", safeName(p.Name)+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	// The listener is bound before the run directory exists: a bad or
	// busy address leaves no run behind.
	ln, err := openListener(st, f)
	if err != nil {
		return err
	}
	if ln != nil {
		defer ln.Close() // Serve owns it once started; a second Close is harmless
	}
	info := newInfo(st, p)
	if nseg > 1 {
		info.Segment = fmt.Sprintf("%d/%d", seg, nseg)
	}
	w, err := rundir.Create(dir, info, p.RedactedSource(), !f.noSamples)
	if err != nil {
		return err
	}
	if err := w.Reserve(); err != nil {
		_ = w.Close()
		info.Status = rundir.StatusFailed
		info.Notes = append(info.Notes, err.Error())
		_ = rundir.WriteInfo(dir, info)
		return err
	}
	fmt.Fprintf(st.Stderr, "plateau: running %s → %s\n", p.Name, dir)
	// The plan's prepare commands run before anything else of the run,
	// its cleanup commands after everything, whatever way the run ends.
	cmds := newPlanCommands(st, p, dir, nseg > 1)
	if err := cmds.prepare(ctx, info); err != nil {
		return cmds.failPrepare(ctx, info, w, err)
	}
	if p, err = reloadPrepared(st, p, planPath, f); err != nil {
		return cmds.failPrepare(ctx, info, w, err)
	}
	// failBeforeLoad ends a run that could not start its load: run.json
	// says failed, with why, never "running".
	failBeforeLoad := func(err error) error {
		_ = w.Close()
		cmds.cleanup(ctx, info)
		end := time.Now()
		info.End, info.Status = &end, rundir.StatusFailed
		info.Notes = append(info.Notes, err.Error())
		_ = rundir.WriteInfo(dir, info)
		return err
	}
	var traceFile *os.File
	if f.trace > 0 {
		if traceFile, err = os.Create(filepath.Join(dir, "trace.txt")); err != nil {
			return failBeforeLoad(fmt.Errorf("trace: %w", err))
		}
	}

	generator := ""
	if nseg > 1 {
		generator = strconv.Itoa(seg)
	}
	outs, runCtx, err := startOutputs(ctx, st, f, p, generator, ln)
	if err != nil {
		if traceFile != nil {
			_ = traceFile.Close()
		}
		return failBeforeLoad(err)
	}
	defer outs.close()
	mon := startMonitors(ctx, st, p, dir)
	prog := newProgressPrinter(st, f.quiet)
	prog.monitors = mon.panelLines
	prog.loc, _ = locale.Parse(p.Lang) // checked when the plan was read
	var judge func(*metrics.Interval, time.Duration) string
	if j := newAbortJudge(p); j != nil {
		judge = j.judge
	}
	res, runErr := engine.Run(runCtx, engine.Config{
		Plan: p, Writer: w, Info: info, SaveInfo: outs.saveInfo(dir),
		Segment: seg, Segments: nseg, StartAt: startAt, Progress: prog.update, Interval: outs.hub.Publish,
		Trace: traceWriter(traceFile),
		Judge: judge,
		StorageFailed: func(err error) {
			prog.say(fmt.Sprintf("plateau: writing results to %s failed, stopping the load now: %v", dir, err))
		},
	})
	storageErr := error(nil)
	if res != nil {
		storageErr = res.StorageErr
	}
	if traceFile != nil {
		if err := traceFile.Close(); err != nil && runErr == nil {
			runErr = fmt.Errorf("trace: %w", err)
		}
		fmt.Fprintf(st.Stderr, "plateau: trace written to %s\n", filepath.Join(dir, "trace.txt"))
	}
	prog.done()
	monErr := mon.stop()
	closeErr := w.Close()
	outs.finish(info)
	end := time.Now()
	info.End = &end
	// The servers' files are read before cleanup, which may stop the
	// servers or remove what they wrote.
	if runErr == nil && storageErr == nil && len(serverIns) > 0 {
		if nseg > 1 {
			fmt.Fprintln(st.Stderr, "plateau: server side: a segment run does not read the servers' files (one generator's share is not the servers' traffic)")
		} else {
			attachServerSide(ctx, st, dir, info, serverIns, p.ServerSide)
		}
	}
	// After the measured span (info.End): cleanup is not part of it.
	cmds.cleanup(ctx, info)
	switch {
	case runErr != nil:
		info.Status = rundir.StatusFailed
		info.Notes = append(info.Notes, runErr.Error())
	case storageErr != nil:
		info.Status, info.Stopped = rundir.StatusFailed, res.Stopped
		info.Notes = append(info.Notes, res.Stopped)
	case res.Stopped == "interrupted":
		info.Status, info.Stopped = rundir.StatusInterrupted, res.Stopped
	case strings.HasPrefix(res.Stopped, abortPrefix):
		// Stopped by an abort_on_fail requirement: the run is done (its
		// report written), and failed.
		info.Status, info.Stopped, info.AbortedBy = rundir.StatusCompleted, res.Stopped, res.Stopped
		fmt.Fprintf(st.Stderr, "plateau: %s: stopping the run\n", res.Stopped)
	default:
		info.Status, info.Stopped = rundir.StatusCompleted, res.Stopped
	}
	if monErr != nil {
		info.Notes = append(info.Notes, "monitors: "+monErr.Error())
	}
	if runErr == nil && res.SetupFailures > 0 {
		note := fmt.Sprintf("%d virtual user(s) failed their setup and sent no measured request; first failure: %s",
			res.SetupFailures, res.SetupError)
		info.Notes = append(info.Notes, note)
		fmt.Fprintf(st.Stderr, "plateau: %s\n", note)
	}
	infoErr := rundir.WriteInfo(dir, info)
	if storageErr != nil {
		// Nothing more fits on the disk: no summary, no report. The
		// results held in memory go to the console instead, and what was
		// written up to the failure stays readable by plateau report.
		printMemoryResults(st.Stdout, res)
		err := fmt.Errorf("writing results to %s failed, the load stopped there (%v after its start): %w; "+
			"the results above are the run's, held in memory; free space and run `plateau report %s` for a report of what was written",
			dir, res.End.Sub(res.Start).Round(time.Second), storageErr, dir)
		if infoErr != nil {
			err = errors.Join(err, fmt.Errorf("finalising run.json: %w", infoErr))
		}
		return err
	}
	if infoErr != nil {
		return infoErr
	}
	if runErr != nil {
		return fmt.Errorf("run failed (results so far are in %s): %w", dir, runErr)
	}
	if closeErr != nil {
		return fmt.Errorf("writing results: %w", closeErr)
	}
	sum, err := writeReports(dir, "")
	if err != nil {
		return err
	}
	if f.onSummary != nil {
		f.onSummary(sum)
	}
	outs.done(sum.Verdict, sum.Passed, filepath.Join(dir, "report.html"))
	fmt.Fprintf(st.Stdout, "\nrun directory: %s\nreport:        %s\n", dir, filepath.Join(dir, "report.html"))
	if nseg <= 1 {
		// A segment is one generator's share: the merged run is the one
		// to remember.
		addToHistory(ctx, st, dir, f.history, p.History)
	}
	// The verdict comes last, so it is what a terminal or CI log shows.
	loc, _ := locale.Parse(p.Lang) // checked when the plan was read
	printSummary(st.Stdout, sum, loc)
	if nseg > 1 && (sum.Verdict == analysis.VerdictFailed || sum.Verdict == analysis.VerdictInvalid) {
		// One generator's share says nothing about the requirement or the
		// load: both are judged once, on the merged run (plateau merge).
		fmt.Fprintln(st.Stdout, "segment run: requirements and load are judged on the merged run, not on one segment")
		return nil
	}
	return verdictErr(sum)
}

func safeName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, s)
	if s == "" {
		return "run"
	}
	return s
}

// planArgs is redactArgs with the plan's secret names (its secrets: list,
// the variables found secret by use) and literal secret values, which
// --set may have given.
func planArgs(p *plan.Plan, args []string) []string {
	set := p.SecretSet()
	isName := func(n string) bool { return p.IsSecret(n) || set.Vars[n] }
	vals := secret.NewValues(set.Literals...)
	out := secret.Args(args, isName)
	for i := range out {
		out[i] = vals.String(out[i])
	}
	return out
}

func newInfo(st *State, p *plan.Plan) *rundir.Info {
	in := &rundir.Info{Tool: "plateau", Version: version(), Name: p.Name, PlanFile: p.File, Target: p.Target,
		Command: planArgs(p, append([]string{"plateau"}, st.Args...)), Host: hostInfo(), Start: time.Now(),
		Status: rundir.StatusRunning, Phases: []rundir.PhaseInfo{}, SourceKind: rundir.SourceLive}
	if p.Description != "" || len(p.System) > 0 || len(p.Environment) > 0 || p.Method != "" || p.Hypothesis != "" || p.Lang != "" {
		in.Context = &rundir.Context{Description: p.Description, System: p.System, Environment: p.Environment, Method: p.Method, Hypothesis: p.Hypothesis, Lang: p.Lang}
	}
	for _, s := range p.SLA {
		in.SLA = append(in.SLA, s.Expr)
	}
	// Names the plan lists, and variables found secret by use (they feed a
	// secret header, cookie, field or parameter): the report masks
	// "name=value" for each.
	in.Secrets = append(in.Secrets, p.Secrets...)
	for _, n := range p.SecretSet().Names() {
		if !slices.Contains(in.Secrets, n) {
			in.Secrets = append(in.Secrets, n)
		}
	}
	for _, w := range p.Workloads {
		in.Workloads = append(in.Workloads, workloadInfo(w))
	}
	return in
}

// redactArgs masks a command line by the secret rule (secret.Args): the
// values of secret flags (--listen-token), of --set keys with a secret
// segment (vars.api_key, pwd …), URL passwords and secret parameters.
func redactArgs(args []string) []string { return secret.Args(args, secret.IsName) }

func workloadInfo(w *plan.Workload) rundir.WorkloadInfo {
	l := &w.Load
	wi := rundir.WorkloadInfo{Name: w.Name}
	switch {
	case len(l.Steps) > 0:
		wi.Model = "steps"
		var parts []string
		for _, s := range l.Steps {
			if float64(s.Rate) > 0 {
				parts = append(parts, fmt.Sprintf("%g/s for %v", float64(s.Rate), s.Duration))
				wi.Steps = append(wi.Steps, rundir.LoadStep{Rate: float64(s.Rate), Duration: s.Duration})
			} else {
				parts = append(parts, fmt.Sprintf("%d users for %v", s.Users, s.Duration))
				wi.Steps = append(wi.Steps, rundir.LoadStep{Users: s.Users, Duration: s.Duration})
			}
		}
		wi.Shape = "steps: " + strings.Join(parts, ", ")
		if l.StopWhen != nil {
			wi.StopWhen = l.StopWhen.Text
			wi.Shape += "; stop when " + l.StopWhen.Text
			wi.StopGainPct = 100 * l.StopWhen.Threshold
		}
	case float64(l.Rate) > 0:
		wi.Model, wi.Rate = "open", float64(l.Rate)
		wi.Shape = fmt.Sprintf("open: %g/s for %v, at most %d users", float64(l.Rate), l.Duration, l.MaxUsers)
	case len(l.Stages) > 0:
		wi.Model = "open"
		var parts []string
		for _, s := range l.Stages {
			parts = append(parts, fmt.Sprintf("→%g/s over %v", float64(s.Rate), s.Duration))
		}
		wi.Shape = "open, ramping: " + strings.Join(parts, ", ")
	case l.Pace > 0:
		wi.Model, wi.Users = "pacing", l.Users
		wi.Shape = fmt.Sprintf("%d users, one iteration each per %v, for %v", l.Users, l.Pace, l.Duration)
	default:
		wi.Model, wi.Users = "closed", l.Users
		if l.Iterations > 0 {
			wi.Shape = fmt.Sprintf("%d users × %d iterations", l.Users, l.Iterations)
		} else {
			wi.Shape = fmt.Sprintf("%d users, ramp-up %v, for %v", l.Users, l.RampUp, l.Duration)
		}
	}
	var think []string
	collectThink(w.Scenario, &think)
	wi.Think = strings.Join(think, " + ")
	return wi
}

func collectThink(steps []plan.Step, out *[]string) {
	for _, s := range steps {
		switch {
		case s.Think != nil && s.Think.Max > 0:
			*out = append(*out, fmt.Sprintf("uniform(%v, %v)", s.Think.Min, s.Think.Max))
		case s.Think != nil:
			*out = append(*out, s.Think.Fixed.String())
		case s.Transaction != nil:
			collectThink(s.Transaction.Steps, out)
		case s.Loop != nil:
			collectThink(s.Loop.Steps, out)
		}
	}
}

func hostInfo() rundir.Host {
	h := rundir.Host{OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				if i := strings.IndexByte(l, ':'); i > 0 {
					h.CPUModel = strings.TrimSpace(l[i+1:])
				}
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb uint64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			h.MemBytes = kb * 1024
		}
	}
	return h
}

// writeReports writes summary.json and the reports for a run directory.
// lang is --lang for a run whose plan has no lang: (a foreign script); ""
// takes the run's own.
func writeReports(dir, lang string) (*analysis.Summary, error) {
	return report.Generate(dir, report.Options{Lang: lang})
}

// printSummary prints the end-of-run table and SLA verdicts, in the
// run's language (loc; nil is English): its words from the catalogue, its
// numbers with the language's decimal separator.
func printSummary(w io.Writer, s *analysis.Summary, loc *locale.Locale) {
	n := func(format string, v ...any) string { return loc.Num(fmt.Sprintf(format, v...)) }
	if len(s.Phases) > 1 {
		fmt.Fprintf(w, "\n%-24s %7s %9s %9s %9s %9s %8s\n", loc.Word("phase"), loc.Word("users"), loc.Word("req/s"), loc.Word("avg ms"), loc.Word("p95 ms"), loc.Word("samples"), loc.Word("errors"))
		for _, p := range s.Phases {
			t := p.Labels[len(p.Labels)-1]
			load := strconv.Itoa(p.Users)
			if p.Rate > 0 {
				load = n("%g/s", p.Rate)
			}
			fmt.Fprintf(w, "%-24s %7s %s %s %s %9d %s\n", trunc(p.Name, 24), load, n("%9.2f", t.ThroughputRPS), n("%9.1f", t.MeanMs), n("%9.1f", t.P95Ms), t.Samples, n("%7.2f%%", t.ErrorPct))
		}
	}
	fmt.Fprintf(w, "\n%-32s %9s %8s %8s %8s %8s %8s %8s %7s %9s\n", loc.Word("label"), loc.Word("samples"), loc.Word("avg"), "p50", "p90", "p95", "p99", loc.Word("max"), loc.Word("err %"), loc.Word("req/s"))
	for _, l := range s.Labels {
		fmt.Fprintf(w, "%-32s %9d %s %s %s %s %s %s %s %s\n", trunc(l.Label, 32), l.Samples,
			n("%8.1f", l.MeanMs), n("%8.1f", l.P50Ms), n("%8.1f", l.P90Ms), n("%8.1f", l.P95Ms), n("%8.1f", l.P99Ms), n("%8.1f", l.MaxMs), n("%7.2f", l.ErrorPct), n("%9.2f", l.ThroughputRPS))
	}
	if len(s.SLA) > 0 {
		fmt.Fprintln(w, "\n"+loc.Word("requirements:"))
		for _, r := range s.SLA {
			verdict := loc.Word("PASS")
			if !r.Passed {
				verdict = loc.Word("FAIL")
			}
			scope := r.Scope
			if scope == "run" && !loc.English() {
				scope = loc.Word("the run")
			}
			line := fmt.Sprintf("  %s  %s  %s", verdict, r.Expr, loc.T("(observed %s%s over %s)", n("%g", r.Observed), r.Unit, scope))
			if r.Error != "" {
				line = fmt.Sprintf("  %s  %s  (%s)", verdict, r.Expr, r.Error)
			}
			fmt.Fprintln(w, line)
		}
	}
	printVerdict(w, s, loc)
}

// printMemoryResults prints the results a run held in memory, by label,
// when they could not all be written (a full disk).
func printMemoryResults(w io.Writer, res *engine.Result) {
	fmt.Fprintf(w, "\nresults held in memory (the run directory has them up to the failure):\n")
	fmt.Fprintf(w, "%-32s %9s %8s %8s %8s %8s %8s %8s %7s\n", "label", "samples", "avg", "p50", "p90", "p95", "p99", "max", "err %")
	row := func(label string, a *metrics.Agg) {
		errPct := 0.0
		if a.Count > 0 {
			errPct = 100 * float64(a.Errors) / float64(a.Count)
		}
		maxMs := 0.0
		if a.Count > 0 {
			maxMs = float64(a.MaxUs) / 1000
		}
		fmt.Fprintf(w, "%-32s %9d %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %7.2f\n", trunc(label, 32), a.Count,
			a.MeanMs(), a.QuantileMs(50), a.QuantileMs(90), a.QuantileMs(95), a.QuantileMs(99), maxMs, errPct)
	}
	names := make([]string, 0, len(res.Labels))
	for n := range res.Labels {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		row(n, res.Labels[n])
	}
	if res.Total != nil {
		row("total", res.Total)
	}
}

func trunc(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-1] + "…"
}

// traceWriter is the trace file as the engine's optional writer: nil when
// not tracing (a nil *os.File in an io.Writer is not nil).
func traceWriter(f *os.File) io.Writer {
	if f == nil {
		return nil
	}
	return f
}
