// Package monitor watches the system under test while a run goes on. It owns
// the shared pieces: the target configuration, the Collector interface each
// kind implements (host, process, cgroup, jvm, postgres, prometheus live in
// sub-packages), the sampling loop that stamps every reading with wall-clock
// time, the crash-safe on-disk format under <run dir>/monitor/ and its reader.
//
// A target that cannot start never fails the run: it is recorded in the
// session status. A target lost mid-run is recorded as a gap (NaN rows in its
// file and a "lost" event) and sampling resumes when it comes back.
package monitor

import (
	"context"
	"time"

	"github.com/plateau-perf/plateau/internal/mondata"
)

// DefaultInterval is the sampling interval when neither the target nor the
// session sets one.
const DefaultInterval = time.Second

// MinInterval is the shortest accepted sampling interval: below it the
// monitors' own cost stops being negligible and rates get noisy.
const MinInterval = 50 * time.Millisecond

// TargetConfig describes one monitored target. Which fields apply depends on
// Kind; Validate says which are required.
type TargetConfig struct {
	// Kind is host, process, jvm, cgroup, postgres or prometheus.
	Kind string
	// Name is the user's label for the report; it defaults to Kind and must
	// be unique within a session.
	Name string
	// Pid selects a process (process, jvm, cgroup of a process).
	Pid int
	// PidFile is a file holding a pid; it is re-read every few seconds, so a
	// restarted service is followed (process, jvm).
	PidFile string
	// Match is a regular expression matched against a process's command line
	// (arguments joined by spaces) and its comm name (process, jvm).
	Match string
	// Children sums the whole process tree under the matched process.
	Children bool
	// Path is the cgroup directory (cgroup) or the proc root to read (host,
	// default /proc; e.g. /host/proc inside a container).
	Path string
	// DSN is a PostgreSQL connection string (postgres).
	DSN string
	// URL is a Prometheus text-exposition endpoint (prometheus).
	URL string
	// Endpoints are further exposition endpoints of the same target
	// (prometheus): host:port or URLs; every series of a target with
	// several endpoints gets an instance label naming its endpoint.
	Endpoints []string
	// Series selects Prometheus series: `name` or `name{label="v",l2=~"re"}`.
	// Empty means every series of the endpoint.
	Series []string
	// Interval overrides the session interval; 0 means the session default.
	Interval time.Duration
	// Role is what the target is to the test (plan role:); empty takes
	// DefaultRole.
	Role mondata.Role
	// Options are the fields of kinds that parse their own configuration
	// (promql, recipe, mysql, cloudwatch), as decoded YAML values; the kind
	// reads them with DecodeOptions.
	Options map[string]any
}

// Options configures a monitoring session.
type Options struct {
	// Dir is the run directory; the session writes only under Dir/monitor/.
	Dir string
	// Interval is the default sampling interval (DefaultInterval when 0).
	Interval time.Duration
	// Targets are started in order.
	Targets []TargetConfig
	// Now stamps samples; time.Now when nil. Sampling itself always runs on
	// the real clock.
	Now func() time.Time
	// Kinds maps a kind name to its implementation. The builtin package
	// provides every kind of this repository.
	Kinds map[string]Kind
	// Logf, when set, receives one line per start failure, loss and resume
	// as they happen.
	Logf func(format string, args ...any)
	// Getenv looks up credentials named in target options (bearer tokens,
	// passwords); nil means no environment.
	Getenv func(string) (string, bool)
}

// Kind is one monitor implementation.
type Kind struct {
	// Open connects to or locates the target. An error means the target
	// cannot start; it is recorded, never fatal to the run.
	Open func(ctx context.Context, cfg TargetConfig, env Env) (Collector, error)
	// Validate checks the kind-specific fields of cfg without touching the
	// system (for the plan validator).
	Validate func(cfg TargetConfig) error
}

// Env is what a collector may need from the session besides its config.
type Env struct {
	// Dir is the session's monitor directory (run dir + "/monitor"). A
	// collector that writes extra files names them after Stem.
	Dir string
	// Stem is the target name made safe for file names.
	Stem string
	// Interval is the target's sampling interval.
	Interval time.Duration
	// Now is the session's wall clock.
	Now func() time.Time
	// Getenv looks up credentials named in the target's options; it never
	// returns ok for a nil Options.Getenv.
	Getenv func(string) (string, bool)
}

// Collector samples one target. The session calls Collect from a single
// goroutine, so implementations need no locking; Close is called once, after
// the last Collect.
type Collector interface {
	// Collect adds the current readings to b. An error means the target is
	// lost for this sample (it becomes a gap); the session keeps calling
	// Collect at the interval and a later success ends the gap. Counters are
	// turned into rates against the previous successful Collect, so the first
	// call after Open or after a loss may add gauges only.
	Collect(ctx context.Context, b *Batch) error
	// Close releases connections, files and child processes.
	Close() error
}

// Finisher is implemented by collectors that do extra work once at the end
// of a session, after the final sample (e.g. the PostgreSQL top statements).
type Finisher interface {
	Finish(ctx context.Context) error
}

// MethodReporter is implemented by collectors that can read their target in
// more than one way; Method names the one in use (e.g. "hsperfdata", "jstat").
type MethodReporter interface {
	Method() string
}

// ChildCPUReporter is implemented by collectors that run helper processes;
// ChildCPUSeconds is the CPU those processes used so far, counted in the
// target's own cost.
type ChildCPUReporter interface {
	ChildCPUSeconds() float64
}

// Reading is one metric value of one sample.
type Reading struct {
	Metric string
	Unit   string
	Value  float64
}

// Batch collects the readings of one sample. It is reused between samples:
// a collector must not keep it.
type Batch struct {
	// Time is the wall-clock stamp written with every reading.
	Time time.Time
	// Mono is the real time of the sample with a monotonic reading; use it,
	// not Time, to compute rates.
	Mono     time.Time
	readings []Reading
}

// Add appends one reading. Metric names are lower-case words joined by
// underscores (jstat columns keep their own spelling) with an optional
// {key=value,...} suffix; unit is the short unit string documented in
// docs/monitoring.md ("%", "bytes", "bytes/s", "KB", "s", "1/s", "").
func (b *Batch) Add(metric, unit string, v float64) {
	b.readings = append(b.readings, Reading{Metric: metric, Unit: unit, Value: v})
}

// Readings returns the readings added since the batch was reset. The slice
// is valid until the next sample.
func (b *Batch) Readings() []Reading { return b.readings }

// Reset empties the batch and sets its times.
func (b *Batch) Reset(wall, mono time.Time) {
	b.readings = b.readings[:0]
	b.Time = wall
	b.Mono = mono
}
