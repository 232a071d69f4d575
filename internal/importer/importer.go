// Package importer turns files written by other tools (JMeter, Gatling, access logs,
// vmstat, jstat, docker stats, k6, Locust) into a plateau run directory, so
// `plateau report` and `plateau compare` work on them unchanged.
//
// The package holds what every decoder shares: the Run being built (request
// samples aggregated per second, label and phase into intervals.ndjson;
// server-side series written in the monitor package's on-disk format), the
// parallel chunk pipeline that lets a decoder use every core on one file with
// memory that does not grow with the file, malformed-line accounting, phase
// tables, time-zone and clock-format handling, and format sniffing. Each
// decoder lives in a sub-package and depends on this one; the CLI maps source
// type names to decoders.
package importer

import (
	"context"
	"path/filepath"
)

// Source is one configured input. Import reads it to the end and adds what it
// finds to run; it returns an error only when the input as a whole cannot be
// used (wrong format, missing flag, unreadable file). Malformed lines are not
// errors: they are counted and quoted through run.Problem.
type Source interface {
	Import(ctx context.Context, run *Run) error
}

// Describer is implemented by sources that can say, before importing, what
// they are ("JMeter CSV JTL results.jtl"), for import.log and run.json.
type Describer interface {
	Describe() string
}

// FileStem is the file name of path without directories, the default
// server or target name of a source.
func FileStem(path string) string {
	return filepath.Base(path)
}

// Keyed is implemented by sources that read a set of files named by any one
// of them (Locust's PREFIX_stats.csv, _stats_history.csv and _failures.csv
// are one result set). Key names the set; inputs with the same key are
// imported once, so a set given file by file is not counted several times.
type Keyed interface {
	Key() string
}
