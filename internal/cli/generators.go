package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/merge"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// generatorLead is how far ahead of now local generators are told to start:
// enough for N processes to start and load the plan on a busy machine. The
// instant is then rounded up to a whole second so that the load's seconds
// line up with the per-second intervals.
const generatorLead = 1500 * time.Millisecond

// SegmentsDir is where `plateau run --generators N` keeps each generator's
// own run directory, inside the merged one.
const SegmentsDir = "segments"

// runGenerators is `plateau run PLAN --generators N`: N generator processes
// of this binary, each running segment i/N of the plan from one common
// start instant, then the merge into the run directory and its reports.
// The parent runs the plan's monitors once (the generators share its host),
// so the children run without them.
func runGenerators(ctx context.Context, st *State, planPath string, f runFlags) error {
	n := f.generators
	if f.segment != "" {
		return errors.New("--generators and --segment exclude each other: --generators starts the segments itself")
	}
	if n > 256 {
		return fmt.Errorf("--generators %d: at most 256 local generators", n)
	}
	if st.Exe == "" {
		return errors.New("--generators: cannot find the plateau binary to start")
	}
	p, err := loadPlan(st, planPath, f.set)
	if err != nil {
		return err
	}
	if engineOf(p) != "" {
		// A plan whose workload runs in a foreign tool: each generator
		// runs the tool on its share (foreign_generators.go).
		return runPlan(ctx, st, planPath, f)
	}
	if err := checkSLANames(p); err != nil {
		return err
	}
	if f.listen != "" {
		// Every generator's address is checked before anything is
		// created; each child warns in its log, the parent here.
		for i := 0; i < n; i++ {
			if _, err := generatorListen(f.listen, i); err != nil {
				return err
			}
		}
		if listenBeyond(f.listen) {
			fmt.Fprintf(st.Stderr, "plateau: warning: --listen %s binds beyond loopback: anyone who can reach this machine can watch the generators and stop them; use 127.0.0.1:PORT, or set --listen-token (or %s)\n", f.listen, listenTokenEnv)
		}
	} else if f.listenToken != "" {
		return errors.New("--listen-token needs --listen")
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", safeName(p.Name)+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.InfoFile)); err == nil {
		return fmt.Errorf("run directory %s already holds a run", dir)
	}
	start := time.Now().Add(generatorLead).Truncate(time.Second).Add(time.Second)
	if f.startAt != "" {
		if start, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return fmt.Errorf("--start-at: %w", err)
		}
	}
	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(dir, SegmentsDir, strconv.Itoa(i))
		if err := os.MkdirAll(dirs[i], 0o755); err != nil {
			return fmt.Errorf("creating run directory: %w", err)
		}
	}
	fmt.Fprintf(st.Stderr, "plateau: running %s on %d local generators from %s → %s\n", p.Name, n,
		start.Format("15:04:05.000"), dir)

	// The plan's prepare and cleanup commands run once, here; the
	// generators run the plan without them.
	cmds := newPlanCommands(st, p, dir, false)
	var info rundir.Info
	if err := cmds.prepare(ctx, &info); err != nil {
		cmds.cleanup(ctx, &info)
		return fmt.Errorf("the run could not start: %w", err)
	}
	if f.startAt == "" {
		// The lead counted from before the prepare commands.
		start = time.Now().Add(generatorLead).Truncate(time.Second).Add(time.Second)
	}
	mon := startMonitors(ctx, st, p, dir)
	began := time.Now()
	procs, err := startGenerators(st, planPath, f, n, start, dirs)
	if err != nil {
		_ = mon.stop()
		cmds.cleanup(ctx, &info)
		return err
	}
	failures := waitGenerators(ctx, procs)
	loadDone := time.Now()
	monErr := mon.stop()
	cmds.cleanup(ctx, &info)
	failures = append(failures, info.Notes...)
	for _, msg := range failures {
		fmt.Fprintf(st.Stderr, "plateau: %s\n", msg)
	}

	err = mergeAndReport(ctx, st, merge.Options{Dirs: dirs, Out: dir, Segments: n, NoMonitors: true,
		Command: redactArgs(append([]string{"plateau"}, st.Args...)),
		// The parent's plan copy: the children's has their monitors
		// switched off.
		Plan:    p.RedactedSource(),
		Prepare: info.Prepare, Cleanup: info.Cleanup,
		Notes: append(failures, noteOf(monErr)...)}, nil)
	fmt.Fprint(st.Stderr, planLoc(p.Lang, "").T("plateau: %d generators: load %.1f s from launch (start lead %.1f s), merge and reports %.1f s\n",
		n, loadDone.Sub(began).Seconds(), start.Sub(began).Seconds(), time.Since(loadDone).Seconds()))
	if _, serr := os.Stat(filepath.Join(dir, rundir.SummaryFile)); serr == nil {
		// The merged run is remembered, not the segments (they skip it).
		addToHistory(ctx, st, dir, f.history, p.History, planLoc(p.Lang, ""))
	}
	return err
}

func noteOf(err error) []string {
	if err == nil {
		return nil
	}
	return []string{"monitors: " + err.Error()}
}

type generatorProc struct {
	seg int
	cmd *exec.Cmd
	log *os.File
}

// startGenerators starts the N children; on a failure it stops the ones
// already started.
func startGenerators(st *State, planPath string, f runFlags, n int, start time.Time, dirs []string) ([]*generatorProc, error) {
	for i := 0; i < n; i++ {
		if _, err := generatorListen(f.listen, i); f.listen != "" && err != nil {
			return nil, err
		}
	}
	return startGeneratorsWith(st, f, n, dirs, func(i int) []string {
		args := []string{"run", planPath, "--segment", fmt.Sprintf("%d/%d", i, n),
			"--start-at", start.UTC().Format(time.RFC3339Nano), "-o", dirs[i], "-q",
			"--set", "monitor.targets=[]", "--set", "prepare=[]", "--set", "cleanup=[]"}
		for _, s := range f.set {
			args = append(args, "--set", s)
		}
		if f.noSamples {
			args = append(args, "--no-samples")
		}
		// Live outputs run in each generator, labelled generator="i"
		// (outputs.go).
		if f.listen != "" {
			addr, _ := generatorListen(f.listen, i)
			args = append(args, "--listen", addr)
		}
		for _, o := range f.outputs {
			args = append(args, "--out", o)
		}
		return args
	})
}

// startGeneratorsWith starts n children of this binary, child i with
// args(i) and its log in dirs[i]; on a failure it stops the ones already
// started.
func startGeneratorsWith(st *State, f runFlags, n int, dirs []string, argsOf func(int) []string) ([]*generatorProc, error) {
	var procs []*generatorProc
	for i := 0; i < n; i++ {
		args := argsOf(i)
		if f.listen != "" {
			addr, _ := generatorListen(f.listen, i)
			fmt.Fprintf(st.Stderr, "plateau: generator %d/%d serves its live view and /metrics on %s\n", i, n, addr)
		}
		logf, err := os.Create(filepath.Join(dirs[i], "generator.log"))
		if err == nil {
			cmd := exec.Command(st.Exe, args...)
			cmd.Stdout, cmd.Stderr = logf, logf
			if f.listenToken != "" {
				// Through the environment: a command line shows in ps
				// and in each generator's run.json.
				cmd.Env = append(os.Environ(), listenTokenEnv+"="+f.listenToken)
			}
			// Own process group: a Ctrl-C in the terminal reaches the
			// parent only, which stops the children gracefully itself.
			// The child dies with its parent (see childAttr).
			cmd.SysProcAttr = childAttr()
			if err = cmd.Start(); err == nil {
				procs = append(procs, &generatorProc{seg: i, cmd: cmd, log: logf})
				continue
			}
			logf.Close()
		}
		for _, p := range procs {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
			p.log.Close()
		}
		return nil, fmt.Errorf("starting generator %d/%d: %w", i, n, err)
	}
	return procs, nil
}

// waitGenerators waits for the children; when ctx ends (Ctrl-C) it asks
// them to stop gracefully with SIGINT, so each still writes its results.
// It returns a line per child that did not end well. Exit status 1 is not
// one: it only says that the child's share broke a requirement, and
// requirements are judged on the merged run.
func waitGenerators(ctx context.Context, procs []*generatorProc) []string {
	var (
		mu   sync.Mutex
		msgs []string
		wg   sync.WaitGroup
	)
	done := make(chan struct{})
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := p.cmd.Wait()
			p.log.Close()
			var ee *exec.ExitError
			switch {
			case err == nil:
			case errors.As(err, &ee) && (ee.ExitCode() == ExitSLAFailed || ee.ExitCode() == ExitNotHeld):
				// A broken requirement or an interrupt: the merge judges
				// and states both from the segments' run.json.
			default:
				mu.Lock()
				msgs = append(msgs, fmt.Sprintf("generator %d/%d ended badly: %v (see %s)", p.seg, len(procs), err, p.log.Name()))
				mu.Unlock()
			}
		}()
	}
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		for _, p := range procs {
			_ = p.cmd.Process.Signal(os.Interrupt)
		}
		<-done
	}
	sort.Strings(msgs)
	return msgs
}
