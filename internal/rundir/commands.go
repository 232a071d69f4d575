package rundir

import (
	"fmt"
	"strings"
	"time"
)

// CommandDir is the run directory's folder for the output of the plan's
// prepare and cleanup commands (one log file per command).
const CommandDir = "commands"

// Outcomes of a prepare or cleanup command (CommandResult.Status).
const (
	CommandOK          = "ok"          // exited with status 0
	CommandFailed      = "failed"      // exited with another status, or could not be started
	CommandTimeout     = "timeout"     // killed when its timeout passed
	CommandInterrupted = "interrupted" // killed because the run was interrupted (Ctrl-C)
	CommandSkipped     = "skipped"     // not started: an earlier prepare command failed
)

// CommandResult is what one prepare or cleanup command did; run.json and
// summary.json list them under "prepare" and "cleanup". None of it is part
// of any load figure.
type CommandResult struct {
	Name string `json:"name"`
	// Command is the command line as written in the plan, with secret
	// values and URL/DSN passwords masked.
	Command string    `json:"command"`
	Start   time.Time `json:"start"`
	// DurationS is the wall-clock time from start to exit, in seconds.
	DurationS float64 `json:"duration_s"`
	// ExitCode is the process's exit status; -1 when it did not exit by
	// itself (not started, killed by a signal, skipped).
	ExitCode int    `json:"exit_code"`
	Status   string `json:"status"`
	Error    string `json:"error,omitempty"`
	// Log is the file holding its stdout and stderr (interleaved, secrets
	// masked), relative to the run directory; OutputBytes its size before
	// any cut (logs keep at most the first MaxCommandLog bytes).
	Log         string `json:"log,omitempty"`
	OutputBytes int64  `json:"output_bytes"`
	// Tail is the last lines of the output (masked), for a failure's
	// reason in the console and the report.
	Tail []string `json:"output_tail,omitempty"`
}

// DatagenDir is the run directory's folder where `plateau datagen`, run
// by a prepare command, leaves a copy of its datagen.json (one file per
// generation), so the report can state the data volume the test ran on.
const DatagenDir = "datagen"

// MaxCommandLog bounds a command's saved output; the rest is counted in
// OutputBytes, not kept.
const MaxCommandLog = 64 << 20

// Describe says in a few words how a command ended: "ok in 1.2 s",
// "failed with exit status 3 after 0.4 s (output in commands/…; last line:
// …)".
func (r *CommandResult) Describe() string {
	d := fmt.Sprintf("%.1f s", r.DurationS)
	var s string
	switch r.Status {
	case CommandOK:
		return "ok in " + d
	case CommandSkipped:
		return "skipped (an earlier prepare command failed)"
	case CommandTimeout:
		s = "timed out after " + d
	case CommandInterrupted:
		s = "interrupted after " + d
	default:
		switch {
		case r.ExitCode >= 0:
			s = fmt.Sprintf("failed with exit status %d after %s", r.ExitCode, d)
		case r.Error != "":
			s = "failed: " + r.Error
		default:
			s = "failed after " + d
		}
	}
	var more []string
	if r.Log != "" && r.OutputBytes > 0 {
		more = append(more, "output in "+r.Log)
	}
	if n := len(r.Tail); n > 0 {
		more = append(more, fmt.Sprintf("last line: %q", r.Tail[n-1]))
	}
	if len(more) > 0 {
		s += " (" + strings.Join(more, "; ") + ")"
	}
	return s
}
