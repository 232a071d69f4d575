package analysis

import (
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Run is a run directory read whole for a report: the dataset and every
// other file a report states, so the report renders what it is handed and
// reads nothing from disk itself. A file that could not be read leaves
// its error here for the report to say; only run.json and the intervals
// are required.
type Run struct {
	Dir  string
	Data *Dataset
	// Plan is the plan copy (plan.yaml); nil when the run has none.
	Plan    []byte
	PlanErr error
	// Series and Targets are the monitor data, the server-side files'
	// (vmstat, jstat, docker stats attached to the run) appended.
	Series  []core.Series
	Targets []mondata.TargetStatus
	MonErr  error
	// ServerMonErr is why the server-side monitor data could not be read.
	ServerMonErr error
	// MonNotes, Hints, Statements and StatementLogs are the monitors'
	// notes, drawing hints and top-SQL files, each with its error.
	MonNotes      []mondata.Note
	MonNotesErr   error
	Hints         map[string]mondata.Hints
	HintsErr      error
	Statements    []mondata.Statements
	StatementsErr error
	StatementLogs []*mondata.StatementHistory
	LogsErr       error
	// Search is the capacity search's answer (capacity.json) of a search's
	// run; nil otherwise. SearchErr is why it could not be read.
	Search    *capacity.Search
	SearchErr error
	// Datagen are the manifests plateau datagen wrote (datagen/*.json),
	// in name order, raw.
	Datagen []File
}

// File is one small file of a run directory: its base name and contents,
// or why it could not be read.
type File struct {
	Name string
	Data []byte
	Err  error
}

// Open reads a run directory for a report.
func Open(dir string) (*Run, error) {
	d, err := Load(dir)
	if err != nil {
		return nil, err
	}
	r := &Run{Dir: dir, Data: d}
	r.Plan, r.PlanErr = PlanCopy(dir)
	r.Series, r.Targets, r.MonErr = mondata.Read(dir)
	sd := filepath.Join(dir, rundir.ServerDir)
	if _, err := os.Stat(filepath.Join(sd, mondata.SubDir)); err == nil {
		series, targets, err := mondata.Read(sd)
		if err != nil {
			r.ServerMonErr = err
		} else {
			r.Series = append(r.Series, series...)
			r.Targets = append(r.Targets, targets...)
		}
	}
	r.MonNotes, r.MonNotesErr = mondata.ReadNotes(dir)
	r.Hints, r.HintsErr = mondata.ReadHints(dir)
	r.Statements, r.StatementsErr = mondata.ReadStatements(dir)
	r.StatementLogs, r.LogsErr = mondata.ReadStatementLogs(dir)
	r.Search, r.SearchErr = LoadSearch(dir)
	paths, _ := filepath.Glob(filepath.Join(dir, rundir.DatagenDir, "*.json"))
	slices.Sort(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		r.Datagen = append(r.Datagen, File{Name: filepath.Base(p), Data: b, Err: err})
	}
	return r, nil
}

// PlanCopy reads the run's plan copy (plan.yaml); nil and no error when
// the run has none.
func PlanCopy(dir string) ([]byte, error) {
	src, err := os.ReadFile(filepath.Join(dir, rundir.PlanFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return src, err
}
