// Package rundir reads and writes plateau's run directory: the plan as run,
// run.json, the raw sample log (JMeter CSV JTL layout), the per-second
// interval aggregates and the derived outputs. Everything the run produces is
// appended while it runs and flushed every second, so a run killed outright
// leaves a directory that `plateau report` can still read.
package rundir

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// File names inside a run directory.
const (
	PlanFile      = "plan.yaml"
	InfoFile      = "run.json"
	SamplesFile   = "samples.jtl"
	IntervalsFile = "intervals.ndjson"
	SummaryFile   = "summary.json"
	MonitorDir    = "monitor"
	ImportLogFile = "import.log"
	// ServerDir holds the server-side files attached to a live run
	// (access logs, vmstat, jstat, docker stats), imported after the load
	// as a run directory of its own with the live run's phases.
	ServerDir = "server"
)

// Run states recorded in run.json.
const (
	StatusRunning     = "running"     // still running, or killed outright
	StatusCompleted   = "completed"   // ran to the end of its load
	StatusInterrupted = "interrupted" // stopped by Ctrl-C or a signal
	StatusFailed      = "failed"      // the run could not be done
	StatusImported    = "imported"    // built by plateau import
)

// Info is run.json: what ran, where, when, and its phases.
type Info struct {
	// ID identifies the run wherever its directory goes (the results
	// history keys runs on it): random, given by Create; empty in run.json
	// files written before ids existed (RunID derives one for those).
	ID       string     `json:"id,omitempty"`
	Tool     string     `json:"tool"`
	Version  string     `json:"version"`
	Name     string     `json:"name"`
	PlanFile string     `json:"plan_file,omitempty"`
	Target   string     `json:"target,omitempty"`
	Command  []string   `json:"command,omitempty"`
	Host     Host       `json:"host"`
	Start    time.Time  `json:"start"`
	End      *time.Time `json:"end,omitempty"`
	Status   string     `json:"status"`
	Stopped  string     `json:"stopped,omitempty"` // why it ended early
	// Skipped counts, per workload, the iterations a plan's on_fail ended
	// early (next_iteration, stop_user, stop_run).
	Skipped map[string]int64 `json:"skipped_iterations,omitempty"`
	// AbortedBy is set when an abort_on_fail requirement stopped the run:
	// why (the requirement and what was observed). The test status is
	// then failed whatever the final judgement says.
	AbortedBy string `json:"aborted_by,omitempty"`
	// Checks counts the outcomes of the plan's checks over the run, by
	// check name (its name:, else the request's label).
	Checks    map[string]CheckCount `json:"checks,omitempty"`
	Phases    []PhaseInfo           `json:"phases"`
	Workloads []WorkloadInfo        `json:"workloads,omitempty"`
	SLA       []string              `json:"sla,omitempty"`     // requirement expressions from the plan
	Secrets   []string              `json:"secrets,omitempty"` // names of secret headers/variables (never values)
	Segment   string                `json:"segment,omitempty"` // "i/N" for a distributed generator
	Source    []string              `json:"source,omitempty"`  // imported files
	// SourceKind is where the request samples came from (live, merged,
	// imported from jmeter, k6, locust, accesslog …) and Holds what the
	// data holds; read them with Origin, which also answers for run.json
	// files written before these fields.
	SourceKind SourceKind `json:"source_kind,omitempty"`
	Holds      *Holds     `json:"holds,omitempty"`
	Notes      []string   `json:"notes,omitempty"`
	// ServerNotes are the notes of the attachment of server-side files (a
	// file missing after the run, an import that failed), also among
	// Notes with the prefix "server side: "; read them with
	// AttachNotes, which also answers for run.json files written before
	// this field.
	ServerNotes []string `json:"server_notes,omitempty"`
	// Messages are the notes' and the sources' sentences as messages of
	// the catalogue, by their English text (Notes and Source keep the
	// English): a report in another language words a note from its
	// message and shows the English of one without.
	Messages map[string]Message `json:"messages,omitempty"`
	// Figures holds an imported run's whole-run figures as the tool that
	// wrote the files defines them (percentiles, throughput denominators);
	// the summary and report show these for the run as a whole. Nil for
	// live runs and for sources without such definitions.
	Figures *SourceFigures `json:"source_figures,omitempty"`
	// Outputs are the live outputs of the run (--listen, --out) and what
	// each delivered.
	Outputs []OutputInfo `json:"outputs,omitempty"`
	// Context is the plan's description, system, environment, method and
	// hypothesis; nil when the plan gives none.
	Context *Context `json:"context,omitempty"`
	// Prepare and Cleanup are the plan's prepare and cleanup commands as
	// they ran (commands.go); omitted when the plan has none.
	Prepare []CommandResult `json:"prepare,omitempty"`
	Cleanup []CommandResult `json:"cleanup,omitempty"`
}

// Context is what a test is about, as the plan states it.
type Context struct {
	Description string            `json:"description,omitempty"`
	System      map[string]string `json:"system,omitempty"`
	Environment map[string]string `json:"environment,omitempty"`
	Method      string            `json:"method,omitempty"`
	Hypothesis  string            `json:"hypothesis,omitempty"`
	// Lang is the plan's lang: the language of the run's report ("" is
	// English).
	Lang string `json:"lang,omitempty"`
}

// CheckCount is how often a check passed and failed.
type CheckCount struct {
	Passed int64 `json:"passed"`
	Failed int64 `json:"failed"`
}

// OutputInfo is what one live output did over a run: per-second snapshots
// delivered, dropped because its bounded queue was full (the receiver was too
// slow), or failed to send.
type OutputInfo struct {
	Name      string `json:"name"`   // prometheus, prometheus-rw, otlp, influxdb, live
	Target    string `json:"target"` // listen address or URL (credentials removed)
	Sent      int64  `json:"sent"`
	Dropped   int64  `json:"dropped"`
	Failed    int64  `json:"failed"`
	LastError string `json:"last_error,omitempty"`
}

// PhaseInfo is a phase as stored in run.json. End is nil while it runs.
type PhaseInfo struct {
	Name     string         `json:"name"`
	Workload string         `json:"workload,omitempty"`
	Start    time.Time      `json:"start"`
	End      *time.Time     `json:"end,omitempty"`
	Users    int            `json:"users,omitempty"`
	Rate     float64        `json:"rate_per_s,omitempty"`
	RampUpS  float64        `json:"ramp_up_s,omitempty"`
	Stopped  string         `json:"stopped,omitempty"`
	StopRule *core.StopRule `json:"stop_rule,omitempty"`
	Duration time.Duration  `json:"-"`
	// Open-model phases: iterations the schedule made due (Planned), of
	// which Started began and the rest were dropped; MaxUsers is the cap
	// on concurrent users (this generator's share of it in a segment).
	Planned  int64 `json:"planned_iterations,omitempty"`
	Started  int64 `json:"started_iterations,omitempty"`
	MaxUsers int   `json:"max_users,omitempty"`
	// Paced marks a pacing phase: Planned counts the users' slots due
	// before its end, Started those started (a user late on its pace runs
	// its missed slots one after the other, timed from each slot); the
	// rest were missed, counted with the dropped iterations.
	Paced bool `json:"paced,omitempty"`
	// DroppedLate counts the dropped iterations that the generator's own
	// lateness accounts for: when it handed them out it was already behind
	// the schedule by more than the queue absorbs (max_users iterations at
	// the peak rate), so they came due together however fast the server
	// was. LateMaxMs is the most it was behind at such a drop.
	DroppedLate int64   `json:"dropped_late,omitempty"`
	LateMaxMs   float64 `json:"late_max_ms,omitempty"`
	// PlannedS is the phase's planned length in seconds (0: unknown).
	PlannedS float64 `json:"planned_s,omitempty"`
	// CPUPct is the generator process's own CPU use during the phase, in
	// percent of all its cores (100 = every core busy); CPUBySegment the
	// same per generator in a merged run.
	CPUPct       float64            `json:"generator_cpu_pct,omitempty"`
	CPUBySegment map[string]float64 `json:"generator_cpu_pct_by_segment,omitempty"`
	// RunQueueMs is how long the generator's threads, summed, waited on a
	// run queue for a CPU during the phase (Linux schedstat), and
	// RunQueuePct that wait's share of the time they were runnable (ran +
	// waited): the generator's starvation by other processes, which its
	// own CPU share does not show.
	RunQueueMs  float64 `json:"run_queue_wait_ms,omitempty"`
	RunQueuePct float64 `json:"run_queue_wait_pct,omitempty"`
	// Aborted counts requests cut off in flight (interrupt, graceful_stop
	// reached); they are recorded as samples of class "aborted".
	Aborted int64 `json:"aborted,omitempty"`
	// Checks counts the outcomes of the workload's checks evaluated while
	// the phase ran (the phase rule: the phase running when the response
	// completed), by check name; nil for imports and runs before it.
	Checks map[string]CheckCount `json:"checks,omitempty"`
}

// WorkloadInfo describes a workload's load model for the report.
type WorkloadInfo struct {
	Name  string  `json:"name"`
	Model string  `json:"model"` // closed | open | pacing | steps | imported
	Users int     `json:"users,omitempty"`
	Rate  float64 `json:"rate_per_s,omitempty"`
	Think string  `json:"think,omitempty"`
	Shape string  `json:"shape"` // the load line from the plan, human readable
	// NoTimes marks an imported workload whose source has no response
	// times (an access log without a duration field): its samples count
	// requests, statuses and bytes only.
	NoTimes bool `json:"no_response_times,omitempty"`
	// StopGainPct is the stop rule's threshold (stop_when:
	// throughput_gain < N %), in per cent; 0 without a stop rule. The
	// capacity knee uses the same threshold.
	StopGainPct float64 `json:"stop_gain_pct,omitempty"`
	// Steps are a stepped load's steps as numbers, and StopWhen its stop
	// rule as the plan writes it: a report words the shape from them in
	// its own language (Shape keeps the English).
	Steps    []LoadStep `json:"steps,omitempty"`
	StopWhen string     `json:"stop_when,omitempty"`
}

// LoadStep is one step of a stepped load: users, or a rate, for a
// duration.
type LoadStep struct {
	Users    int           `json:"users,omitempty"`
	Rate     float64       `json:"rate_per_s,omitempty"`
	Duration time.Duration `json:"duration_ns"`
}

// Host describes the machine that generated the load.
type Host struct {
	Hostname  string `json:"hostname"`
	OS        string `json:"os"`
	Kernel    string `json:"kernel,omitempty"`
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model,omitempty"`
	MemBytes  uint64 `json:"mem_bytes,omitempty"`
	GoVersion string `json:"go_version,omitempty"`
}

// CorePhases converts the phases to core.Phase, closing open phases at end
// (a run killed mid-phase).
func (in *Info) CorePhases(end time.Time) []core.Phase {
	out := make([]core.Phase, len(in.Phases))
	for i, p := range in.Phases {
		e := end
		if p.End != nil {
			e = *p.End
		}
		out[i] = core.Phase{Name: p.Name, Workload: p.Workload, Start: p.Start, End: e,
			Users: p.Users, Rate: p.Rate, RampUp: time.Duration(p.RampUpS * float64(time.Second)), Stopped: p.Stopped, StopRule: p.StopRule}
	}
	return out
}

// AttachNotes are the notes of the attachment of server-side files:
// ServerNotes, or in a run.json written before that field the notes
// carrying its "server side: " prefix.
func (in *Info) AttachNotes() []string {
	if len(in.ServerNotes) > 0 {
		return in.ServerNotes
	}
	var out []string
	for _, n := range in.Notes {
		if rest, ok := strings.CutPrefix(n, "server side: "); ok {
			out = append(out, rest)
		}
	}
	return out
}

// ReadInfo reads run.json from dir.
func ReadInfo(dir string) (*Info, error) {
	b, err := os.ReadFile(filepath.Join(dir, InfoFile))
	if err != nil {
		return nil, fmt.Errorf("reading run info: %w", err)
	}
	var in Info
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, InfoFile), err)
	}
	return &in, nil
}

// WriteInfo writes run.json atomically (temp file + rename), so a crash
// leaves either the old or the new version, never a torn one.
func WriteInfo(dir string, in *Info) error {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding run info: %w", err)
	}
	return WriteFileAtomic(filepath.Join(dir, InfoFile), append(b, '\n'))
}

// WriteFileAtomic writes data to path via a temporary file and rename.
func WriteFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// SourceFigures are whole-run figures computed by an importer with the
// source tool's own definitions, so an imported run agrees with the tool
// that made it (JMeter's dashboard, k6's summary, Locust's stats file).
type SourceFigures struct {
	// Tool names the source tool ("JMeter", "k6", "Locust").
	Tool string `json:"tool"`
	// PercentileMethod names the percentile definition (summary.json
	// percentile_method): "jmeter-legacy-window", "k6-linear",
	// "locust-rounded".
	PercentileMethod string `json:"percentile_method"`
	// PercentileRule and ThroughputRule say it in words, for the report.
	PercentileRule string        `json:"percentile_rule"`
	ThroughputRule string        `json:"throughput_rule"`
	Labels         []SourceLabel `json:"labels"`
}

// SourceLabel is one label's (or the total's) figures by the source
// tool's definitions. Percentiles are nil where the tool gives none.
type SourceLabel struct {
	Workload string   `json:"workload,omitempty"`
	Label    string   `json:"label"` // "" for the total
	Tx       bool     `json:"tx,omitempty"`
	Total    bool     `json:"total,omitempty"`
	Count    int64    `json:"count"`
	P50Ms    *float64 `json:"p50_ms,omitempty"`
	P90Ms    *float64 `json:"p90_ms,omitempty"`
	P95Ms    *float64 `json:"p95_ms,omitempty"`
	P99Ms    *float64 `json:"p99_ms,omitempty"`
	// SpanS is the tool's throughput denominator for this label (s):
	// throughput = Count / SpanS. 0 when the run's span is used.
	SpanS float64 `json:"span_s,omitempty"`
}
