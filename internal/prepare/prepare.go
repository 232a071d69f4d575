// Package prepare runs a plan's prepare and cleanup commands: programs run
// outside the measurement, before the first request (load the data set,
// reset a database) and after the last (remove what the test created).
// Each command runs in its own process group with a timeout; its stdout
// and stderr go, interleaved and with secrets masked, to a log file in the
// run directory, and its duration and exit status to a
// rundir.CommandResult.
//
// Nothing here is on the request path or counted in any load figure.
package prepare

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Options say where and how commands run.
type Options struct {
	// RunDir is the run directory; logs go to RunDir/commands/.
	RunDir string
	// Env is the environment every command starts from (the CLI passes
	// its own, plus PLATEAU_* variables); a command's env: is added.
	Env []string
	// Mask hides secret values in a command line or a line of output.
	// Nil: nothing is masked.
	Mask func(string) string
	// Log receives one line per command start and end (may be nil).
	Log io.Writer
	// T words Log's lines in the run's language (a catalogue's T; nil:
	// English, fmt.Sprintf) and Outcome how a command ended (nil:
	// CommandResult.Describe, English).
	T       func(format string, args ...any) string
	Outcome func(*rundir.CommandResult) string
	// KillGrace is how long a command has between SIGTERM (timeout or
	// interrupt) and SIGKILL; default 5 s.
	KillGrace time.Duration
}

// tailLines is how many lines of output a result keeps.
const tailLines = 10

// Prepare runs cmds in order and stops at the first that fails: the run
// cannot start on data that was not prepared. The results list every
// command (those after a failure as skipped); the error names the failure.
func Prepare(ctx context.Context, cmds []plan.Command, o Options) ([]rundir.CommandResult, error) {
	return run(ctx, "prepare", cmds, o, true)
}

// Cleanup runs every command of cmds in order, whatever each one's
// outcome, and returns an error naming the failures. Callers pass a
// context that an interrupted run has not cancelled: cleanup is what must
// still happen then.
func Cleanup(ctx context.Context, cmds []plan.Command, o Options) ([]rundir.CommandResult, error) {
	return run(ctx, "cleanup", cmds, o, false)
}

func run(ctx context.Context, phase string, cmds []plan.Command, o Options, stopAtFailure bool) ([]rundir.CommandResult, error) {
	if o.Mask == nil {
		o.Mask = func(s string) string { return s }
	}
	if o.KillGrace <= 0 {
		o.KillGrace = 5 * time.Second
	}
	if o.T == nil {
		o.T = fmt.Sprintf
	}
	if o.Outcome == nil {
		o.Outcome = (*rundir.CommandResult).Describe
	}
	out := make([]rundir.CommandResult, 0, len(cmds))
	var errs []error
	for i := range cmds {
		c := &cmds[i]
		if stopAtFailure && len(errs) > 0 {
			out = append(out, rundir.CommandResult{Name: c.Name, Command: o.Mask(c.String()), ExitCode: -1,
				Status: rundir.CommandSkipped})
			continue
		}
		if o.Log != nil {
			fmt.Fprint(o.Log, o.T("plateau: %s %d/%d %q: %s\n", o.T(phase), i+1, len(cmds), c.Name, o.Mask(c.String())))
		}
		r := one(ctx, phase, i, c, o)
		if o.Log != nil {
			fmt.Fprint(o.Log, o.T("plateau: %s %q: %s\n", o.T(phase), c.Name, o.Outcome(&r)))
		}
		if r.Status != rundir.CommandOK {
			errs = append(errs, fmt.Errorf("%s %q %s", phase, c.Name, r.Describe()))
		}
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// one runs command i of a phase.
func one(ctx context.Context, phase string, i int, c *plan.Command, o Options) rundir.CommandResult {
	r := rundir.CommandResult{Name: c.Name, Command: o.Mask(c.String()), ExitCode: -1, Start: time.Now()}
	base := fmt.Sprintf("%s-%d", phase, i+1)
	if c.Name != fmt.Sprintf("%s %d", phase, i+1) { // a name of its own
		base += "-" + fileName(c.Name)
	}
	rel := filepath.Join(rundir.CommandDir, base+".log")
	path := filepath.Join(o.RunDir, rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		r.Status, r.Error = rundir.CommandFailed, "log: "+err.Error()
		return r
	}
	f, err := os.Create(path)
	if err != nil {
		r.Status, r.Error = rundir.CommandFailed, "log: "+err.Error()
		return r
	}
	r.Log = rel
	lw := newLogWriter(f, o.Mask, rundir.MaxCommandLog)

	cctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	var cmd *exec.Cmd
	if c.Shell != "" {
		cmd = exec.Command("/bin/sh", "-c", c.Shell)
	} else {
		cmd = exec.Command(c.Args[0], c.Args[1:]...)
	}
	cmd.Dir = c.Dir
	cmd.Env = append(append([]string(nil), o.Env...), envList(c.Env)...)
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = lw, lw // the same writer: exec serialises the writes
	cmd.SysProcAttr = groupAttr()
	// A process the command leaves in the background (a service it
	// started) may hold the output pipe open; stop reading it shortly
	// after the command itself exits rather than wait for it.
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	r.Start = start
	if err := cmd.Start(); err != nil {
		r.Status, r.Error = rundir.CommandFailed, o.Mask(err.Error())
		_ = lw.Close()
		r.OutputBytes = lw.total
		return r
	}
	done := make(chan struct{})
	go func() {
		// Stop the whole group on timeout or interrupt: a shell's children
		// would otherwise keep the output pipe (and the data load) going.
		select {
		case <-cctx.Done():
			stopGroup(cmd.Process.Pid, false)
			select {
			case <-time.After(o.KillGrace):
				stopGroup(cmd.Process.Pid, true)
			case <-done:
			}
		case <-done:
		}
	}()
	werr := cmd.Wait()
	close(done)
	if errors.Is(werr, exec.ErrWaitDelay) {
		werr = nil // exited with status 0; a background child kept the output open
	}
	r.DurationS = time.Since(start).Seconds()
	if err := lw.Close(); err != nil && werr == nil {
		werr = fmt.Errorf("writing its output: %w", err)
	}
	r.OutputBytes = lw.total
	r.Tail = lw.tail()
	if ps := cmd.ProcessState; ps != nil && ps.Exited() {
		r.ExitCode = ps.ExitCode()
	}
	switch {
	case cctx.Err() != nil && ctx.Err() != nil:
		r.Status, r.Error = rundir.CommandInterrupted, "the run was interrupted"
	case cctx.Err() != nil:
		r.Status, r.Error = rundir.CommandTimeout, fmt.Sprintf("killed after its timeout of %v", c.Timeout)
	case werr != nil:
		r.Status = rundir.CommandFailed
		var ee *exec.ExitError
		if !errors.As(werr, &ee) {
			r.Error = o.Mask(werr.Error())
		} else if r.ExitCode < 0 {
			r.Error = o.Mask(werr.Error()) // "signal: killed"
		}
	default:
		r.Status = rundir.CommandOK
	}
	return r
}

// fileName makes a command name safe as part of a file name.
func fileName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '-'
	}, s)
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

func envList(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	// Sorted, so the environment a command sees does not depend on map
	// order (a later duplicate wins in exec).
	slices.Sort(out)
	return out
}
