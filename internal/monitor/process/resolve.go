package process

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// Ref identifies one process: a pid and its start time, so that a pid
// reused by another process after an exit is not mistaken for the target.
type Ref struct {
	Pid       int
	StartTime uint64
}

// Resolver finds the process a target designates, by pid, pid file or a
// regular expression over the command line. It is used from one goroutine.
type Resolver struct {
	root    string
	pid     int
	pidFile string
	match   *regexp.Regexp
	self    int
	buf     []byte
}

// ValidateSelector checks that cfg designates a process in exactly one way.
func ValidateSelector(cfg monitor.TargetConfig) error {
	n := 0
	if cfg.Pid != 0 {
		n++
		if cfg.Pid < 0 {
			return fmt.Errorf("pid %d is not positive", cfg.Pid)
		}
	}
	if cfg.PidFile != "" {
		n++
	}
	if cfg.Match != "" {
		n++
		if _, err := regexp.Compile(cfg.Match); err != nil {
			return fmt.Errorf("match: %w", err)
		}
	}
	if n != 1 {
		return errors.New("exactly one of pid, pid_file or match is required")
	}
	return nil
}

// NewResolver builds a resolver for cfg's pid, pid file or match pattern,
// reading processes under root ("/proc" normally).
func NewResolver(root string, cfg monitor.TargetConfig) (*Resolver, error) {
	if err := ValidateSelector(cfg); err != nil {
		return nil, err
	}
	r := &Resolver{root: root, pid: cfg.Pid, pidFile: cfg.PidFile, self: os.Getpid()}
	if cfg.Match != "" {
		r.match = regexp.MustCompile(cfg.Match) // validated above
	}
	return r, nil
}

// Follows reports whether the target may move to another process (pid file
// or pattern), as opposed to one fixed pid.
func (r *Resolver) Follows() bool { return r.pid == 0 }

// PidFile reports whether the target is given by a pid file, which is worth
// re-reading every few seconds even while its process lives.
func (r *Resolver) PidFile() bool { return r.pidFile != "" }

// String describes the selector for error messages.
func (r *Resolver) String() string {
	switch {
	case r.pid != 0:
		return "pid " + strconv.Itoa(r.pid)
	case r.pidFile != "":
		return "pid file " + r.pidFile
	default:
		return "match " + strconv.Quote(r.match.String())
	}
}

// Resolve finds the target process now. With a pattern, the oldest matching
// process wins (the master of a forking server starts before its workers),
// and plateau itself and its ancestors are never matched: their command
// lines may contain the pattern.
func (r *Resolver) Resolve() (Ref, error) {
	switch {
	case r.pid != 0:
		return r.ref(r.pid)
	case r.pidFile != "":
		b, err := os.ReadFile(r.pidFile)
		if err != nil {
			return Ref{}, fmt.Errorf("reading pid file: %w", err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			return Ref{}, fmt.Errorf("pid file %s: no pid in %q", r.pidFile, truncate(string(b), 40))
		}
		return r.ref(pid)
	}
	return r.scan()
}

func (r *Resolver) ref(pid int) (Ref, error) {
	var (
		st  Stat
		err error
	)
	st, r.buf, err = ReadStat(r.root, pid, r.buf)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return Ref{}, fmt.Errorf("no process with pid %d", pid)
		}
		return Ref{}, fmt.Errorf("reading pid %d: %w", pid, err)
	}
	if st.State == 'Z' || st.State == 'X' {
		return Ref{}, fmt.Errorf("pid %d has exited (state %c)", pid, st.State)
	}
	return Ref{Pid: pid, StartTime: st.StartTime}, nil
}

func (r *Resolver) scan() (Ref, error) {
	d, err := os.Open(r.root)
	if err != nil {
		return Ref{}, fmt.Errorf("listing processes: %w", err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return Ref{}, fmt.Errorf("listing processes: %w", err)
	}
	excluded := r.ancestry()
	best := Ref{}
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || excluded[pid] {
			continue
		}
		if !r.matches(pid) {
			continue
		}
		ref, err := r.ref(pid)
		if err != nil {
			continue
		}
		if best.Pid == 0 || ref.StartTime < best.StartTime || (ref.StartTime == best.StartTime && ref.Pid < best.Pid) {
			best = ref
		}
	}
	if best.Pid == 0 {
		return Ref{}, fmt.Errorf("no process matches %q", r.match.String())
	}
	return best, nil
}

// matches tests the pattern against the command line (NUL separators made
// spaces) and, for kernel threads and processes that cleared their command
// line, the comm name.
func (r *Resolver) matches(pid int) bool {
	var err error
	base := r.root + "/" + strconv.Itoa(pid)
	r.buf, err = ReadFile(base+"/cmdline", r.buf)
	if err != nil {
		return false
	}
	cmd := bytes.TrimRight(r.buf, "\x00")
	for i, c := range cmd {
		if c == 0 {
			cmd[i] = ' '
		}
	}
	if len(cmd) > 0 && r.match.Match(cmd) {
		return true
	}
	r.buf, err = ReadFile(base+"/comm", r.buf)
	if err != nil {
		return false
	}
	return r.match.Match(bytes.TrimSpace(r.buf))
}

// ancestry returns plateau's own pid and those of its ancestors.
func (r *Resolver) ancestry() map[int]bool {
	out := map[int]bool{}
	for pid := r.self; pid > 1 && !out[pid]; {
		out[pid] = true
		st, buf, err := ReadStat(r.root, pid, r.buf)
		r.buf = buf
		if err != nil {
			break
		}
		pid = st.PPid
	}
	return out
}

// Alive reports whether ref still designates the same running process.
func (r *Resolver) Alive(ref Ref) bool {
	st, buf, err := ReadStat(r.root, ref.Pid, r.buf)
	r.buf = buf
	return err == nil && st.StartTime == ref.StartTime && st.State != 'Z' && st.State != 'X'
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
