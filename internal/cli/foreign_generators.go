package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/plateau-perf/plateau/internal/executor"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/merge"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// foreignGens is a foreign run split across N local generators (plateau
// run SCRIPT --generators N): each is `plateau run … --segment i/N` of this
// binary, running the tool on its share of the load from one common start
// instant; the parent runs the monitors, prepare and cleanup once, and
// then reads the union of the generators' raw result files with the
// tool's importer (executor.Union), so the merged figures are the tool's
// own definitions over every sample — not a merge of figures.
type foreignGens struct {
	n     int
	start time.Time
	dirs  []string
	// args is generator i's command line (without the binary).
	args func(i int) []string
	// flags are the command's own (the generators' live outputs).
	flags runFlags
}

// gatlingLead is how far ahead Gatling's generators are told to start:
// each compiles the simulation first (javac, 5–20 s on a busy machine). A
// generator that is later than that starts at once and says so in its
// notes.
const gatlingLead = 20 * time.Second

// segmentOf reads --segment and --start-at into spec (a generator's run);
// it refuses a tool whose load plateau cannot split.
func segmentOf(spec *executor.Spec, tool executor.Tool, f runFlags) error {
	if f.segment == "" {
		if f.startAt != "" {
			return errors.New("--start-at is for a generator's segment (--segment i/N)")
		}
		return nil
	}
	if f.generators > 0 {
		return errors.New("--generators and --segment exclude each other: --generators starts the segments itself")
	}
	i, n, err := merge.ParseSegment(f.segment)
	if err != nil {
		return fmt.Errorf("--segment: %w", err)
	}
	if n > 1 {
		if err := executor.Segmented(tool); err != nil {
			return fmt.Errorf("--segment with %s: %w", tool.Name(), err)
		}
	}
	spec.Segment, spec.Segments = i, n
	if f.startAt != "" {
		if spec.StartAt, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return fmt.Errorf("--start-at: %w", err)
		}
	}
	return nil
}

// splitForeign prepares `--generators N` for a foreign run: it checks the
// tool can be split, fixes the start instant and the generators' run
// directories, and returns the flags the parent itself runs with (the
// live outputs go to the generators, as with plateau's own).
func splitForeign(st *State, tool executor.Tool, spec *executor.Spec, target string, f runFlags, dir string, extra []string) (*foreignGens, runFlags, error) {
	n := f.generators
	switch {
	case n > 256:
		return nil, f, fmt.Errorf("--generators %d: at most 256 local generators", n)
	case st.Exe == "":
		return nil, f, errors.New("--generators: cannot find the plateau binary to start")
	case f.segment != "":
		return nil, f, errors.New("--generators and --segment exclude each other: --generators starts the segments itself")
	}
	if err := executor.CheckSegments(tool, spec, n); err != nil {
		return nil, f, fmt.Errorf("--generators with %s: %w", tool.Name(), err)
	}
	if len(f.attach) > 0 {
		return nil, f, errors.New("--attach is not supported with --generators for a foreign tool's script yet")
	}
	if f.listen != "" {
		for i := 0; i < n; i++ {
			if _, err := generatorListen(f.listen, i); err != nil {
				return nil, f, err
			}
		}
	} else if f.listenToken != "" {
		return nil, f, errors.New("--listen-token needs --listen")
	}
	lead := generatorLead
	if tool.Name() == "gatling" {
		// Each generator compiles the simulation before the start.
		lead = gatlingLead
	}
	g := &foreignGens{n: n, flags: f, start: time.Now().Add(lead).Truncate(time.Second).Add(time.Second)}
	if f.startAt != "" {
		var err error
		if g.start, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return nil, f, fmt.Errorf("--start-at: %w", err)
		}
	}
	for i := 0; i < n; i++ {
		g.dirs = append(g.dirs, filepath.Join(dir, SegmentsDir, strconv.Itoa(i)))
	}
	child := f
	g.args = func(i int) []string {
		args := []string{"run", target, "--segment", fmt.Sprintf("%d/%d", i, n),
			"--start-at", g.start.UTC().Format(time.RFC3339Nano), "-o", g.dirs[i], "-q"}
		args = append(args, extra...)
		for _, p := range child.props {
			args = append(args, "-J", p)
		}
		for _, e := range child.env {
			args = append(args, "-e", e)
		}
		for _, s := range child.set {
			args = append(args, "--set", s)
		}
		if child.listen != "" {
			addr, _ := generatorListen(child.listen, i)
			args = append(args, "--listen", addr)
		}
		for _, o := range child.outputs {
			args = append(args, "--out", o)
		}
		return args
	}
	parent := f
	parent.listen, parent.outputs = "", nil
	return g, parent, nil
}

// runForeignGens starts the generators, waits for them (Ctrl-C: each is
// sent SIGINT and stops its tool cleanly), then writes the union of their
// raw results into out, the parent run's tool/. It returns the tool's
// result as the parent sees it, and notes on the generators.
func runForeignGens(ctx context.Context, st *State, tool executor.Tool, g *foreignGens, out string) (*executor.Result, []string, bool, error) {
	for _, d := range g.dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, nil, false, fmt.Errorf("creating run directory: %w", err)
		}
	}
	fmt.Fprintf(st.Stderr, "plateau: %s on %d local generators from %s\n", tool.Name(), g.n, g.start.Format("15:04:05.000"))
	res := &executor.Result{Tool: tool.Name(), Start: g.start,
		Command: redactArgs(append([]string{"plateau"}, g.args(0)...))}
	procs, err := startGeneratorsWith(st, g.flags, g.n, g.dirs, g.args)
	if err != nil {
		return nil, nil, false, err
	}
	notes := waitGenerators(ctx, procs)
	res.End = time.Now()
	res.Interrupted = ctx.Err() != nil
	var ins []string
	incomplete := len(notes) > 0
	for i, d := range g.dirs {
		ins = append(ins, filepath.Join(d, "tool"))
		info, err := rundir.ReadInfo(d)
		if err != nil {
			incomplete = true
			notes = append(notes, fmt.Sprintf("generator %d/%d left no run (%v): its share of the load is missing", i, g.n, err))
			continue
		}
		switch info.Status {
		case rundir.StatusCompleted:
		case rundir.StatusInterrupted:
			res.Interrupted = true
		default:
			incomplete = true
			notes = append(notes, fmt.Sprintf("generator %d/%d's run is %s: its share of the load is missing in part", i, g.n, info.Status))
		}
		for _, n := range info.Notes {
			notes = append(notes, fmt.Sprintf("generator %d/%d: %s", i, g.n, n))
		}
	}
	rows, missing, err := executor.Union(tool, ins, out)
	for _, m := range missing {
		incomplete = true
		notes = append(notes, fmt.Sprintf("%s: missing; that generator's results are not in the run", m))
	}
	if err != nil {
		return res, notes, incomplete, fmt.Errorf("joining the generators' results: %w", err)
	}
	notes = append(notes, fmt.Sprintf("%d generators: the union of their raw results (%d records, in time order) is tool/%s, read as one %s result file; the user count in it is the sum of each generator's",
		g.n, rows, executor.ResultFile(tool), tool.Name()))
	return res, notes, incomplete, nil
}

// locustWorkers is `--generators N` for a locustfile: Locust's own master
// and N worker processes on this machine (executor.Spec.Workers), one
// run whose statistics are the master's, as Locust computes them across
// machines; plateau's monitors and live outputs run beside it as for one
// Locust.
func locustWorkers(spec *executor.Spec, f runFlags) (runFlags, error) {
	switch {
	case f.generators > 256:
		return f, fmt.Errorf("--generators %d: at most 256 local Locust workers", f.generators)
	case f.segment != "":
		return f, errors.New("--generators and --segment exclude each other: --generators starts the segments itself")
	}
	spec.Workers = f.generators
	f.generators = 0
	return f, nil
}

// locustMaster is --locust-master HOST:PORT --locust-workers N: Locust's
// master alone in this run, its N workers elsewhere (plateau k8s
// locustfile.py: the worker pods connect to the master pod's Service).
// The run is one Locust run whose statistics are the master's.
func locustMaster(spec *executor.Spec, tool executor.Tool, f runFlags) error {
	if f.locustMaster == "" {
		if f.locustWorkers != 0 {
			return errors.New("--locust-workers goes with --locust-master")
		}
		return nil
	}
	switch {
	case tool.Name() != "locust":
		return fmt.Errorf("--locust-master is for a locustfile, not a %s script", tool.Name())
	case f.generators > 0 || f.segment != "":
		return errors.New("--locust-master excludes --generators and --segment: its workers run elsewhere")
	case f.locustWorkers < 1 || f.locustWorkers > 10000:
		return fmt.Errorf("--locust-master: give --locust-workers N (1 to 10000), the workers that will connect; got %d", f.locustWorkers)
	}
	spec.Master, spec.Workers, spec.MasterWait = f.locustMaster, f.locustWorkers, f.locustWait
	return nil
}

// mergeForeign is `plateau merge` of a foreign tool's segments (plateau
// k8s with a script): the union of their raw result files is read by the
// tool's importer into the merged run, whose reports are then written.
func mergeForeign(ctx context.Context, st *State, tool executor.Tool, dirs []string, out string, segments int, formats []string) error {
	if _, err := os.Stat(filepath.Join(out, rundir.InfoFile)); err == nil {
		return fmt.Errorf("merge: %s already holds a run", out)
	}
	var first *rundir.Info
	var firstDir string
	var notes []string
	incomplete := false
	interrupted := false
	var start, end time.Time
	seen := map[int]bool{}
	var ins []string
	for _, d := range dirs {
		info, err := rundir.ReadInfo(d)
		if err != nil {
			incomplete = true
			notes = append(notes, fmt.Sprintf("%s: no run (%v): that generator's share of the load is missing", d, err))
			continue
		}
		i, n, err := merge.ParseSegment(info.Segment)
		if err != nil {
			return fmt.Errorf("merge: %s: %w", d, err)
		}
		if segments > 0 && n != segments {
			return fmt.Errorf("merge: %s is segment %s, but %d segments were asked for", d, info.Segment, segments)
		}
		segments = n
		if seen[i] {
			return fmt.Errorf("merge: two runs are segment %s", info.Segment)
		}
		seen[i] = true
		if first == nil {
			first, firstDir = info, d
		} else if info.Name != first.Name || info.SourceKind != first.SourceKind {
			return fmt.Errorf("merge: %s ran %q in %s but %s ran %q in %s", firstDir, first.Name, first.SourceKind, d, info.Name, info.SourceKind)
		}
		switch info.Status {
		case rundir.StatusCompleted:
		case rundir.StatusInterrupted:
			interrupted = true
		default:
			incomplete = true
			notes = append(notes, fmt.Sprintf("segment %s's run is %s: its share of the load is missing in part", info.Segment, info.Status))
		}
		if start.IsZero() || info.Start.Before(start) {
			start = info.Start
		}
		if info.End != nil && info.End.After(end) {
			end = *info.End
		}
		for _, n := range info.Notes {
			notes = append(notes, fmt.Sprintf("segment %s: %s", info.Segment, n))
		}
		ins = append(ins, filepath.Join(d, "tool"))
	}
	if first == nil {
		return fmt.Errorf("merge: none of the %d directories holds a run", len(dirs))
	}
	for i := 0; i < segments; i++ {
		if !seen[i] {
			incomplete = true
			notes = append(notes, fmt.Sprintf("segment %d/%d is missing: no results from that generator", i, segments))
		}
	}
	run, err := importer.NewRun(importer.Options{Dir: out, Name: first.Name, DerivePhases: true, MinPhase: foreignMinPhase,
		Command: redactArgs(append([]string{"plateau"}, st.Args...)), Version: version(),
		Logf: func(format string, args ...any) { fmt.Fprintf(st.Stderr, "plateau merge: "+format+"\n", args...) }})
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	outTool := filepath.Join(out, "tool")
	rows, missing, err := executor.Union(tool, ins, outTool)
	for _, m := range missing {
		incomplete = true
		notes = append(notes, fmt.Sprintf("%s: missing; that generator's results are not in the run", m))
	}
	if err == nil {
		run.Note("%d segments: the union of their raw results (%d records, in time order) is tool/%s, read as one %s result file; the user count in it is the sum of each generator's",
			segments, rows, executor.ResultFile(tool), tool.Name())
		err = tool.Source(&executor.Spec{Dir: out}, outTool, nil).Import(ctx, run)
	}
	cerr := run.Close()
	if err = errors.Join(err, cerr); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	info, err := rundir.ReadInfo(out)
	if err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	// The plan's context and requirements, as the segments recorded them.
	info.PlanFile, info.Target, info.Context, info.SLA, info.Secrets = first.PlanFile, first.Target, first.Context, first.SLA, first.Secrets
	if b, err := os.ReadFile(filepath.Join(firstDir, rundir.PlanFile)); err == nil {
		_ = os.WriteFile(filepath.Join(out, rundir.PlanFile), b, 0o644)
	}
	if !start.IsZero() {
		info.Start = start
	}
	if !end.IsZero() {
		info.End = &end
	}
	info.Notes = append(info.Notes, notes...)
	info.Status = rundir.StatusCompleted
	switch {
	case incomplete:
		info.Status, info.Stopped = rundir.StatusFailed, "incomplete load: a segment lacks data (see the notes)"
	case interrupted:
		info.Status, info.Stopped = rundir.StatusInterrupted, "interrupted"
	}
	if err := rundir.WriteInfo(out, info); err != nil {
		return fmt.Errorf("merge: %w", err)
	}
	res, err := report.Write(out, report.Options{Formats: formats, Version: version()})
	if res == nil {
		return fmt.Errorf("merge: report: %w", err)
	}
	printSummary(st.Stdout, res.Summary, nil)
	fmt.Fprintf(st.Stdout, "\nmerged %d %s segment(s) into %s (%d rows of raw results)\n", len(ins), tool.Name(), out, rows)
	if err != nil {
		return fmt.Errorf("merge: report: %w", err)
	}
	if incomplete {
		return fmt.Errorf("%w: %s", errIncomplete, info.Stopped)
	}
	return verdictErr(res.Summary)
}

// foreignSegmentsTool says whether dirs hold a foreign tool's segments,
// and which tool ran them.
func foreignSegmentsTool(dirs []string) (executor.Tool, bool) {
	for _, d := range dirs {
		info, err := rundir.ReadInfo(d)
		if err != nil {
			continue
		}
		if info.Segment == "" {
			return nil, false
		}
		t, err := executor.ByName(string(info.SourceKind))
		if err != nil || executor.ResultFile(t) == "" {
			return nil, false
		}
		if _, err := os.Stat(filepath.Join(d, "tool")); err != nil {
			return nil, false
		}
		return t, true
	}
	return nil, false
}
