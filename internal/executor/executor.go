// Package executor runs a load test in its own tool — JMeter, k6, Locust
// or Gatling — under plateau: it finds the tool, starts it non-interactively
// with the user's overrides mapped onto the tool's own load settings, keeps
// its exit code and log, stops it cleanly on Ctrl-C, and says which of the
// importers reads the result files it had the tool write, so that the run
// directory holds the same figures the tool itself reports.
//
// The package starts processes and builds command lines only; the run
// directory, the monitors and the report are the CLI's (internal/cli
// runForeign), and the decoding is the importers', reused as they are.
package executor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
)

// Spec is one foreign run.
type Spec struct {
	// Script is the tool's script: plan.jmx, script.js, locustfile.py.
	Script string
	// Dir is the run directory; the tool's outputs, its log and the
	// script as run go to Dir/tool.
	Dir string
	// Props are JMeter properties (-J name=value); the other tools refuse
	// them.
	Props []string
	// Env is the script's environment (-e NAME=value): k6's -e, an
	// environment variable for JMeter (${__env(NAME)} … ) and Locust.
	Env []string
	// Set are the load overrides: target, users, ramp_up, duration, rate
	// (see each tool's Apply).
	Set map[string]string
	// Grace is how long the tool has to stop after Ctrl-C before it is
	// killed (default 30 s).
	Grace time.Duration
	// Getenv reads plateau's environment (tool locations); nil: os.Getenv.
	Getenv func(string) string

	// Exited, when set, is closed by Run once the tool has exited (or
	// could not start): a followed result file is then complete.
	Exited chan struct{}
	// Start, when set, is where the import of the followed result file
	// leaves the tool's start as it reads it, for Started (k6's first vus
	// row): the file is then not read from its top for it again.
	Start *StartSeen

	// Segment of Segments (0-based) is this generator's share when the
	// load is split across generators (plateau run --generators N,
	// --segment i/N, plateau k8s); Segments ≤ 1 is the whole load. Each
	// tool's Command gives the tool its share (see Segmented).
	Segment, Segments int
	// Workers > 1 runs Locust in its own distributed mode on this
	// machine: a master that computes the whole-run statistics and that
	// many worker processes (plateau run locustfile.py --generators N).
	Workers int
	// Master, when set, runs Locust's master alone, bound to this
	// HOST:PORT, expecting Workers workers that run elsewhere (plateau k8s
	// locustfile.py: the worker pods connect to the master pod's
	// Service), waiting at most MasterWait (default 5m) for them.
	Master     string
	MasterWait time.Duration
	// StartAt, when set, is when the tool is started: its command is
	// built first (Gatling's compilation), then Run waits for the
	// instant, so that every generator's tool starts together.
	StartAt time.Time

	temp []string // files Command wrote outside the run directory, removed by Run
}

// Streams says whether tool's results are read while it writes them (the
// importer follows its result file: JMeter's CSV JTL, k6's CSV output);
// otherwise they are read when it has ended.
func Streams(tool Tool) bool {
	s, ok := tool.(interface{ streams() bool })
	return ok && s.streams()
}

func (jmeter) streams() bool { return true }
func (k6) streams() bool     { return true }

// Tool is one foreign load-test tool.
type Tool interface {
	// Name is the tool's name: "jmeter", "k6", "locust".
	Name() string
	// Command builds the tool's command line for spec, writing its
	// outputs under out (Spec.Dir/tool).
	Command(spec *Spec, out string) (*exec.Cmd, error)
	// Source is the importer that reads what the command wrote. With
	// follow set it reads the results while the tool writes them, until
	// follow is closed (the tool has exited), where the tool's results
	// allow it (Streams).
	Source(spec *Spec, out string, follow <-chan struct{}) importer.Source
	// Notes says what the tool's exit code and files mean beyond the
	// samples (its own thresholds, assertions); called after the run.
	Notes(spec *Spec, out string, exit int) Notes
}

// Note is a note on a run: an English format and its arguments, which
// the run records as a message (rundir.NewMessage) so that a report words
// it in its own language.
type Note struct {
	Format string
	Args   []any
}

// String is the note in English.
func (n Note) String() string { return fmt.Sprintf(n.Format, n.Args...) }

// Notes are notes in the order they were made.
type Notes []Note

// Note adds a note.
func (ns *Notes) Note(format string, args ...any) {
	*ns = append(*ns, Note{Format: format, Args: args})
}

// For picks the tool of a script by its name: .jmx → JMeter, .js/.mjs/.ts
// → k6, .py → Locust, .java (.scala, .kt) → Gatling.
func For(script string) (Tool, error) {
	switch strings.ToLower(filepath.Ext(script)) {
	case ".jmx":
		return jmeter{}, nil
	case ".js", ".mjs", ".ts", ".cjs":
		return k6{}, nil
	case ".py":
		return locust{}, nil
	case ".scala", ".java", ".kt":
		return gatling{}, nil
	}
	return nil, fmt.Errorf("%s: not a script plateau can run (a JMeter .jmx, a k6 .js, a Locust .py or a Gatling .java simulation), nor a plan (.yaml)", script)
}

// IsScript says whether path names a foreign tool's script rather than a
// plateau plan.
func IsScript(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jmx", ".js", ".mjs", ".ts", ".cjs", ".py", ".scala", ".java", ".kt":
		return true
	}
	return false
}

// Result is what the tool left.
type Result struct {
	Tool        string
	ExitCode    int  // the tool's exit code (−1 when it was killed)
	Interrupted bool // stopped by Ctrl-C (the context)
	Killed      bool // did not stop within the grace period
	Log         string
	Start, End  time.Time
	// Late is how long after Spec.StartAt the tool started, when building
	// its command (Gatling's compilation) took past that instant.
	Late time.Duration
	// ToolCPU is the CPU time (user + system) the tool's process used.
	ToolCPU time.Duration
	Command []string
}

// Segmented says whether tool can run one generator's share of a load
// split across generators, and if not, why and what to do instead.
func Segmented(tool Tool) error {
	if s, ok := tool.(interface{ segmented() error }); ok {
		return s.segmented()
	}
	return nil
}

// CheckSegments says, before any generator starts, whether spec's load
// can be split across n generators: what a generator's tool would refuse
// (a tool that cannot be split, fewer users than generators, a JMeter
// Thread Group whose thread count is not a number).
func CheckSegments(tool Tool, spec *Spec, n int) error {
	if err := Segmented(tool); err != nil {
		return err
	}
	switch tool.(type) {
	case jmeter:
		if err := checkSet("JMeter", spec.Set, "users", "ramp_up", "duration"); err != nil {
			return err
		}
	case k6:
		if len(spec.Props) > 0 {
			return fmt.Errorf("-J sets JMeter properties; a k6 script takes -e NAME=value")
		}
		if err := checkSet("k6", spec.Set, "users", "ramp_up", "duration", "rate"); err != nil {
			return err
		}
	}
	for _, k := range []string{"users", "rate"} {
		if v, ok := spec.Set[k]; ok {
			if u, err := positive(k, v); err != nil {
				return err
			} else if err := checkShare(k, u, n); err != nil {
				return err
			}
		}
	}
	if _, ok := tool.(gatling); ok {
		src, err := os.ReadFile(spec.Script)
		if err != nil {
			return err
		}
		s := *spec
		s.Segments = n
		if _, err := gatlingLoad(&s, src); err != nil {
			return err
		}
	}
	if _, ok := tool.(jmeter); ok {
		b, err := os.ReadFile(spec.Script)
		if err != nil {
			return err
		}
		if _, users := spec.Set["users"]; !users {
			if b, err = splitThreads(b, 0, n, propMap(spec.Props)); err != nil {
				return fmt.Errorf("%s: %w", spec.Script, err)
			}
		}
		if _, err := overridePlan(b, spec.Set); err != nil {
			return fmt.Errorf("%s: %w", spec.Script, err)
		}
	}
	return nil
}

// share is how many of total users (or requests a second) fall to segment
// seg of n: total ÷ n, the remainder spread over the first segments, as
// plateau's own generators stripe their users (user v to segment v mod n).
func share(total, seg, n int) int {
	if n <= 1 {
		return total
	}
	if total <= seg {
		return 0
	}
	return (total-seg-1)/n + 1
}

// checkShare refuses a split that would leave a segment without load.
func checkShare(key string, total, n int) error {
	if n > 1 && total < n {
		return fmt.Errorf("--set %s=%d on %d generators: each generator needs at least one; give %s=%d or more, or fewer generators", key, total, n, key, n)
	}
	return nil
}

// checkSet refuses override keys a tool does not take, naming those it
// does.
func checkSet(tool string, set map[string]string, allowed ...string) error {
	var bad []string
	for k := range set {
		ok := false
		for _, a := range allowed {
			ok = ok || k == a
		}
		if !ok {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("%s takes --set %s; not %s (see docs/run-foreign.md)", tool, strings.Join(allowed, ", "), strings.Join(bad, ", "))
}

// seconds reads a duration override ("90s", "2m", "45") as whole seconds.
func seconds(key, v string) (int, error) {
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("--set %s=%s: negative", key, v)
		}
		return int(d.Round(time.Second) / time.Second), nil
	}
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil || fmt.Sprint(n) != v || n < 0 {
		return 0, fmt.Errorf("--set %s=%s: want a duration such as 90s or 2m", key, v)
	}
	return n, nil
}

func positive(key, v string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(v, "%d", &n); err != nil || fmt.Sprint(n) != v || n < 1 {
		return 0, fmt.Errorf("--set %s=%s: want a whole number of at least 1", key, v)
	}
	return n, nil
}

// Run starts the tool, waits for it, and stops it on ctx's end: SIGINT
// first (each tool's own clean stop: JMeter's and k6's shutdown, Locust's
// quit), SIGKILL after Spec.Grace. The tool's standard output and error go
// to its log file in out and to progress (when not nil).
func Run(ctx context.Context, tool Tool, spec *Spec, progress io.Writer) (*Result, error) {
	if spec.Exited != nil {
		defer close(spec.Exited)
	}
	// Absolute: the tools run in their script's directory, and a run
	// directory given relative to plateau's (-o run) would otherwise be
	// looked for there.
	out, err := filepath.Abs(filepath.Join(spec.Dir, "tool"))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	cmd, err := tool.Command(spec, out)
	defer func() {
		for _, f := range spec.temp {
			_ = os.Remove(f)
		}
		spec.temp = nil
	}()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(out, tool.Name()+".out.log")
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer lf.Close()
	var w io.Writer = lf
	if progress != nil {
		w = io.MultiWriter(lf, progress)
	}
	cmd.Stdout, cmd.Stderr = w, w
	ownGroup(cmd)
	var late time.Duration
	if !spec.StartAt.IsZero() {
		late = time.Since(spec.StartAt)
		t := time.NewTimer(time.Until(spec.StartAt))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%s: stopped before the start instant %s", tool.Name(), spec.StartAt.Format(time.RFC3339Nano))
		}
	}
	res := &Result{Tool: tool.Name(), Log: logPath, Command: redact(cmd.Args), Start: time.Now(), Late: max(late, 0)}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", tool.Name(), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	grace := spec.Grace
	if grace <= 0 {
		grace = 30 * time.Second
	}
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		res.Interrupted = true
		interrupt(cmd)
		select {
		case werr = <-done:
		case <-time.After(grace):
			res.Killed = true
			kill(cmd)
			werr = <-done
		}
	}
	if spec.Workers > 1 {
		// Locust's workers quit when their master tells them; any still
		// there once it has ended are ended with it.
		kill(cmd)
	}
	res.End = time.Now()
	res.ExitCode = cmd.ProcessState.ExitCode()
	res.ToolCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return res, fmt.Errorf("%s: %w", tool.Name(), werr)
	}
	return res, nil
}

// redact masks the values of overrides whose names suggest secrets, for
// the command line kept in run.json.
func redact(args []string) []string {
	out := append([]string(nil), args...)
	for i, a := range out {
		eq := strings.IndexByte(a, '=')
		if eq < 0 {
			continue
		}
		lk := strings.ToLower(a[:eq])
		for _, s := range []string{"pass", "secret", "token", "key", "auth", "cookie", "credential"} {
			if strings.Contains(lk, s) {
				out[i] = a[:eq+1] + "***"
				break
			}
		}
	}
	return out
}

// envList turns NAME=value pairs into an environment added to plateau's.
func envList(env []string) ([]string, error) {
	out := os.Environ()
	for _, e := range env {
		k, _, ok := strings.Cut(e, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-e %q: want NAME=value", e)
		}
		out = append(out, e)
	}
	return out, nil
}

func getenv(spec *Spec, k string) string {
	if spec.Getenv != nil {
		return spec.Getenv(k)
	}
	return os.Getenv(k)
}

// find looks for a program: $ENV, then PATH, then the places the project's
// install scripts put it.
func find(spec *Spec, envVar, name string, places ...string) (string, error) {
	if p := getenv(spec, envVar); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, p := range places {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: set $%s, put it on PATH, or install it with internal/importer/testdata/install-deps.sh %s", name, envVar, name)
}

// propMap is Props as a map, the last of a name winning as on JMeter's
// command line.
func (s *Spec) propMap() map[string]string {
	m := map[string]string{}
	for _, p := range s.Props {
		if k, v, ok := strings.Cut(p, "="); ok {
			m[k] = v
		}
	}
	return m
}
