package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Attaching server-side files to a live run: the plan's server_side
// sources and `plateau run --attach TYPE:[NAME=]PATH[,key=value…]` name
// files the servers write during the run (access logs with their
// external-call logs, vmstat, jstat, docker stats). They are checked with
// the importers' own rules when the plan loads, and read after the load
// into RUN/server (rundir.ServerDir) by `plateau import`'s code, with the
// live run's phases (so one phase-membership rule, core.PhaseOf, splits
// both views) and only what completed within the run. The report of the
// run then has the servers' view beside the client's.

// serverKinds are the import types a live run can attach: files the
// servers write. (jmeter, k6 and locust are client-side results.)
var serverKinds = []string{"accesslog", "dockerstats", "jstat", "vmstat"}

// serverPathOpts are options whose values are files, resolved like the
// source's own path.
var serverPathOpts = map[string]bool{"external": true}

// serverInput turns a server_side source into an import input, with paths
// relative to dir resolved; it checks the kind and options by building the
// import source (which reads no file) with clock.
func serverInput(s *plan.ServerSource, dir string, clock importer.Clock) (importInput, error) {
	types := importTypes()
	t, ok := types[s.Kind]
	if !ok || !slices.Contains(serverKinds, s.Kind) {
		return importInput{}, fmt.Errorf("unknown server_side kind %q (kinds: %s)", s.Kind, strings.Join(serverKinds, ", "))
	}
	resolve := func(p string) string {
		if dir == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	in := importInput{typ: s.Kind, name: s.Name, path: resolve(s.Path), opts: map[string]string{}}
	for k, v := range s.Options {
		if !hasOpt(t, k) {
			keys := make([]string, 0, len(t.opts))
			for _, o := range t.opts {
				keys = append(keys, o.key)
			}
			return in, fmt.Errorf("unknown option %q (options of %s: name, path, %s)", k, s.Kind, strings.Join(keys, ", "))
		}
		if serverPathOpts[k] {
			v = resolve(v)
		}
		in.opts[k] = v
	}
	if s.Kind == "accesslog" {
		// The server-side table splits every server's calls by HTTP
		// status, so an attached access log is always read by status.
		if v, set := in.opts["by-status"]; set && v != "true" {
			return in, fmt.Errorf("by-status: an attached access log is always read by status (the server-side table splits calls by HTTP status)")
		}
		in.opts["by-status"] = "true"
	}
	if in.name == "" {
		in.name = importer.FileStem(in.path)
	}
	if _, err := t.build(in, clock); err != nil {
		return in, err
	}
	return in, nil
}

// checkServerSource is the plan loader's check of one server_side source:
// its kind, options and formats. Times without a zone are checked by
// serverInputs, with the plan's server_side.tz.
func checkServerSource(s *plan.ServerSource) error {
	_, err := serverInput(s, "", importer.Clock{Loc: time.UTC})
	return err
}

// addAttachFlags appends the --attach sources to the plan's server_side
// sources; their paths are relative to the working directory.
func addAttachFlags(p *plan.Plan, attach []string) error {
	types := importTypes()
	for _, a := range attach {
		in, err := parseImportInput(a, types)
		if err != nil {
			return fmt.Errorf("--attach: %w", err)
		}
		abs, err := filepath.Abs(in.path)
		if err != nil {
			return fmt.Errorf("--attach %s: %w", a, err)
		}
		s := plan.ServerSource{Kind: in.typ, Name: in.name, Path: abs, Options: in.opts}
		if ext := s.Options["external"]; ext != "" {
			if s.Options["external"], err = filepath.Abs(ext); err != nil {
				return fmt.Errorf("--attach %s: %w", a, err)
			}
		}
		if err := checkServerSource(&s); err != nil {
			return fmt.Errorf("--attach %s: %w", a, err)
		}
		s.Pos = plan.Pos{} // from the command line
		p.ServerSide.Sources = append(p.ServerSide.Sources, s)
	}
	return nil
}

// serverInputs are the plan's server_side sources as import inputs, each
// checked with the plan's server_side.tz; a problem names the source's
// line in the plan (or its --attach flag).
func serverInputs(p *plan.Plan) ([]importInput, error) {
	var ins []importInput
	var errs plan.Errors
	clock, err := importer.LoadClock(p.ServerSide.TZ)
	if err != nil {
		return nil, fmt.Errorf("server_side: tz: %w", err)
	}
	for i := range p.ServerSide.Sources {
		s := &p.ServerSide.Sources[i]
		dir := p.Dir
		if s.Pos.Line == 0 {
			dir = "" // --attach: already absolute
		}
		in, err := serverInput(s, dir, clock)
		if err != nil {
			if s.Pos.Line == 0 {
				return nil, fmt.Errorf("--attach %s:%s: %w", s.Kind, s.Path, err)
			}
			// The importers name their flags; a plan names its keys.
			msg := strings.ReplaceAll(err.Error(), "give --tz", "set server_side: tz:")
			errs = append(errs, plan.Error{File: p.File, Pos: s.Pos, Msg: s.Kind + " source: " + msg})
			continue
		}
		ins = append(ins, in)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("the plan has %d problem(s):\n%w", len(errs), errs)
	}
	return ins, nil
}

// attachedServers maps the server of every access log the plan attaches
// to whether it is joined with an external-call log: what server_time
// requirements may select.
func attachedServers(p *plan.Plan) map[string]bool {
	out := map[string]bool{}
	for i := range p.ServerSide.Sources {
		s := &p.ServerSide.Sources[i]
		if s.Kind != "accesslog" {
			continue
		}
		name := s.Name
		if name == "" {
			name = importer.FileStem(s.Path)
		}
		out[name] = out[name] || s.Options["external"] != ""
	}
	return out
}

// attachServerSide waits settle for the servers to flush their files,
// then imports them into dir/server with the run's phases, keeping what
// completed within the run. A file that is missing or cannot be read is a
// note in run.json (info) and on stderr: the run and its client-side
// report stand without it.
func attachServerSide(ctx context.Context, st *State, dir string, info *rundir.Info, ins []importInput, side plan.ServerSide, loc *locale.Locale) {
	settle := side.Settle
	if len(ins) == 0 {
		return
	}
	// A note is in run.json in English with its message, so a report
	// words it in its language; the console says it in the run's.
	note := func(format string, args ...any) {
		text, m := rundir.NewMessage(format, args...)
		msg, mm := rundir.NewMessage("server side: "+format, args...)
		info.Notes = append(info.Notes, msg)
		info.AddMessage(msg, mm)
		info.ServerNotes = append(info.ServerNotes, text)
		info.AddMessage(text, m)
		fmt.Fprintf(st.Stderr, "plateau: %s\n", info.Worded(msg, loc.T))
	}
	if settle > 0 {
		t := time.NewTimer(settle)
		select {
		case <-t.C:
		case <-ctx.Done(): // interrupted: read what is there now
			t.Stop()
		}
	}
	var use []importInput
	for _, in := range ins {
		if _, err := os.Stat(in.path); err != nil {
			note("%s %s not read: %v", in.typ, in.path, err)
			continue
		}
		if ext := in.opts["external"]; ext != "" {
			if _, err := os.Stat(ext); err != nil {
				note("%s %s not read: its external-call log: %v", in.typ, in.path, err)
				continue
			}
		}
		use = append(use, in)
	}
	if len(use) == 0 {
		return
	}
	end := time.Now()
	if info.End != nil {
		end = *info.End
	}
	out := filepath.Join(dir, rundir.ServerDir)
	quiet := *st
	quiet.Stderr = io.Discard
	err := runImport(context.WithoutCancel(ctx), &quiet, importFlags{out: out, name: info.Name + " (server side)",
		tz: side.TZ, phaseList: info.CorePhases(end), from: info.Start, to: end}, use, importTypes())
	if err != nil {
		note("not attached: %v", err)
		return
	}
	var names []string
	for _, in := range use {
		names = append(names, in.typ+" "+in.name)
	}
	fmt.Fprint(st.Stderr, loc.T("plateau: server side: %s read into %s\n", strings.Join(names, ", "), out))
}
