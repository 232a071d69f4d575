package monitor

import (
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
)

// The on-disk format lives in package mondata, so that readers (report,
// study) need not import the collectors; these names keep it reachable
// from here for the monitors and their tests.

// Kind names, as used in plans, files and summary.json.
const (
	KindHost       = mondata.KindHost
	KindProcess    = mondata.KindProcess
	KindJVM        = mondata.KindJVM
	KindCgroup     = mondata.KindCgroup
	KindPostgres   = mondata.KindPostgres
	KindPrometheus = mondata.KindPrometheus
	KindPromQL     = mondata.KindPromQL
	KindRecipe     = mondata.KindRecipe
	KindMySQL      = mondata.KindMySQL
	KindCloudWatch = mondata.KindCloudWatch
)

// File names and suffixes under <run dir>/monitor/.
const (
	SubDir      = mondata.SubDir
	EventsFile  = mondata.EventsFile
	CSVHeader   = mondata.CSVHeader
	RangeSuffix = mondata.RangeSuffix
	NotesSuffix = mondata.NotesSuffix
	HintsSuffix = mondata.HintsSuffix
)

// Event kinds in events.jsonl.
const (
	EventStarted = mondata.EventStarted
	EventFailed  = mondata.EventFailed
	EventLost    = mondata.EventLost
	EventResumed = mondata.EventResumed
	EventMethod  = mondata.EventMethod
	EventStopped = mondata.EventStopped
)

// Note levels.
const (
	NoteError = mondata.NoteError
	NoteEmpty = mondata.NoteEmpty
	NoteInfo  = mondata.NoteInfo
)

type (
	// TargetStatus is mondata.TargetStatus.
	TargetStatus = mondata.TargetStatus
	// Gap is mondata.Gap.
	Gap = mondata.Gap
	// Note is mondata.Note.
	Note = mondata.Note
	// Hints is mondata.Hints.
	Hints = mondata.Hints
	event = mondata.Event
)

// Read is mondata.Read.
func Read(dir string) ([]core.Series, []TargetStatus, error) { return mondata.Read(dir) }

// ReadNotes is mondata.ReadNotes.
func ReadNotes(runDir string) ([]Note, error) { return mondata.ReadNotes(runDir) }

// ReadHints is mondata.ReadHints.
func ReadHints(runDir string) (map[string]Hints, error) { return mondata.ReadHints(runDir) }

// Statement files: see package mondata.
const (
	StatementsSuffix   = mondata.StatementsSuffix
	StatementLogSuffix = mondata.StatementLogSuffix
	StatementEvery     = mondata.StatementEvery
	TopStatements      = mondata.TopStatements
	QueryChars         = mondata.QueryChars
)

type (
	// Statement is mondata.Statement.
	Statement = mondata.Statement
	// Statements is mondata.Statements.
	Statements = mondata.Statements
	// StatementCounters is mondata.StatementCounters.
	StatementCounters = mondata.StatementCounters
	// StatementLog is mondata.StatementLog.
	StatementLog = mondata.StatementLog
	// StatementHistory is mondata.StatementHistory.
	StatementHistory = mondata.StatementHistory
)

// TopOf is mondata.TopOf.
func TopOf(target string, start, end time.Time, a, b map[string]StatementCounters, n int) Statements {
	return mondata.TopOf(target, start, end, a, b, n)
}

// CutQuery is mondata.CutQuery.
func CutQuery(q string, n int) string { return mondata.CutQuery(q, n) }

// WriteStatements is mondata.WriteStatements.
func WriteStatements(dir, stem string, rep Statements) error {
	return mondata.WriteStatements(dir, stem, rep)
}

// ReadStatements is mondata.ReadStatements.
func ReadStatements(runDir string) ([]Statements, error) { return mondata.ReadStatements(runDir) }

// OpenStatementLog is mondata.OpenStatementLog.
func OpenStatementLog(dir, stem, target string) (*StatementLog, error) {
	return mondata.OpenStatementLog(dir, stem, target)
}

// ReadStatementLogs is mondata.ReadStatementLogs.
func ReadStatementLogs(runDir string) ([]*StatementHistory, error) {
	return mondata.ReadStatementLogs(runDir)
}

// Role is mondata.Role.
type Role = mondata.Role

// DefaultRole is a target's role: the plan's, else the load generator for
// a host target reading this machine's /proc (plateau runs there), a
// database for postgres and mysql, and the system under test otherwise.
func DefaultRole(c TargetConfig) Role {
	if c.Role != mondata.RoleUnknown {
		return c.Role
	}
	switch c.Kind {
	case KindHost:
		if c.Path == "" || c.Path == "/proc" {
			return mondata.RoleGenerator
		}
	case KindPostgres, KindMySQL:
		return mondata.RoleDatabase
	}
	return mondata.RoleSUT
}
