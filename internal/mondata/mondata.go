// Package mondata is the on-disk format of a run's monitor data under
// <run dir>/monitor/: the file names, the kinds of target, the target
// statuses replayed from events.jsonl, the notes and hints files, and the
// reader of them all. The monitors (package monitor) write it; the report
// and the study read it through this package alone, so they never depend on
// the collectors themselves.
package mondata

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// Kind names, as used in plans, files and summary.json.
const (
	KindHost       = "host"
	KindProcess    = "process"
	KindJVM        = "jvm"
	KindCgroup     = "cgroup"
	KindPostgres   = "postgres"
	KindPrometheus = "prometheus"
	KindPromQL     = "promql"
	KindRecipe     = "recipe"
	KindMySQL      = "mysql"
	KindCloudWatch = "cloudwatch"
)

// Role is what a monitored target is to the test: the report judges CPU,
// memory and network on the system under test and states the load
// generator's health on a line of its own.
type Role string

// Roles, as written in a plan (monitor target role:) and events.jsonl.
const (
	// RoleUnknown is a target whose role was not recorded (an older run,
	// an imported series): the report treats it as part of the system
	// under test.
	RoleUnknown   Role = ""
	RoleSUT       Role = "system_under_test"
	RoleGenerator Role = "generator" // the load generator's own host or process
	RoleDatabase  Role = "database"
	RoleBalancer  Role = "balancer"
)

// Roles lists the roles a plan may state.
var Roles = []Role{RoleSUT, RoleGenerator, RoleDatabase, RoleBalancer}

// ParseRole reads a role as a plan writes it ("sut" is short for
// system_under_test).
func ParseRole(s string) (Role, bool) {
	if s == "sut" {
		return RoleSUT, true
	}
	for _, r := range Roles {
		if string(r) == s {
			return r, true
		}
	}
	return RoleUnknown, false
}

// UnderTest reports whether the role is (or is taken as) part of the
// system under test: everything but the load generator.
func (r Role) UnderTest() bool { return r != RoleGenerator }

// TargetStatus is the state of one target, as shown at start and in
// summary.json.
type TargetStatus struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// Role is what the target is to the test; omitted when not recorded.
	Role Role `json:"role,omitempty"`
	// Started is false when the target could not be opened; Error says why.
	Started bool   `json:"started"`
	Error   string `json:"error,omitempty"`
	// Method is how the target was read when there is a choice
	// ("hsperfdata" or "jstat" for a JVM).
	Method string `json:"method,omitempty"`
	// Interval is the sampling interval in effect.
	IntervalS float64 `json:"interval_s"`
	// Samples counts successful samples.
	Samples int `json:"samples"`
	// Gaps are the spans during which the target was lost.
	Gaps []Gap `json:"gaps,omitempty"`
	// CPUSeconds is the monitor's own CPU cost: the sampling thread's CPU
	// time plus helper child processes.
	CPUSeconds float64 `json:"cpu_seconds"`
}

// Gap is a span during which a started target could not be read.
type Gap struct {
	Start time.Time `json:"start"`
	// End is nil while the target is still lost; Stop closes open gaps at
	// the stop time.
	End   *time.Time `json:"end"`
	Error string     `json:"error,omitempty"`
}

// SubDir is the directory under the run directory that a session owns.
const SubDir = "monitor"

// EventsFile is the append-only JSON-lines log of target events.
const EventsFile = "events.jsonl"

// CSVHeader is the first line of every series file. The layout is long: one
// reading per line, so targets whose metric set changes over time (network
// interfaces, Prometheus series) need no schema change, and
// `read_csv('monitor/*.csv')` in DuckDB or pandas.concat over the files
// gives one table for the whole run.
const CSVHeader = "time,target,kind,metric,unit,value\n"

// Event kinds in events.jsonl.
const (
	EventStarted = "started" // target opened; method and interval set
	EventFailed  = "failed"  // target could not start; error set
	EventLost    = "lost"    // gap starts; error set
	EventResumed = "resumed" // gap ends
	EventMethod  = "method"  // read method changed (e.g. hsperfdata → jstat)
	EventStopped = "stopped" // final sample taken; samples and cpu_seconds set
)

// Event is one line of events.jsonl.
type Event struct {
	Time       time.Time `json:"time"`
	Target     string    `json:"target"`
	Kind       string    `json:"kind"`
	Role       Role      `json:"role,omitempty"`
	Event      string    `json:"event"`
	Error      string    `json:"error,omitempty"`
	Method     string    `json:"method,omitempty"`
	File       string    `json:"file,omitempty"`
	IntervalS  float64   `json:"interval_s,omitempty"`
	Samples    int       `json:"samples,omitempty"`
	CPUSeconds float64   `json:"cpu_seconds,omitempty"`
}

// Read loads a monitor directory written by a session: dir is the run
// directory (the one given as Options.Dir). It returns every series, with
// gaps as NaN points, and the target statuses replayed from events.jsonl. A
// torn last line (a run killed mid-write) is ignored; any other malformed
// line is an error naming file and line. A run without a monitor directory
// yields no series and no error.
func Read(dir string) ([]core.Series, []TargetStatus, error) {
	mdir := filepath.Join(dir, SubDir)
	statuses, files, err := readEvents(filepath.Join(mdir, EventsFile))
	if err != nil {
		return nil, nil, err
	}
	// Series files are read in the order targets started, then any other
	// CSV files found (e.g. written by an older version) by name.
	found, err := filepath.Glob(filepath.Join(mdir, "*.csv"))
	if err != nil {
		return nil, nil, fmt.Errorf("listing %s: %w", mdir, err)
	}
	sort.Strings(found)
	seen := map[string]bool{}
	var order []string
	for _, f := range files {
		p := filepath.Join(mdir, f)
		if !seen[p] && fileExists(p) {
			seen[p] = true
			order = append(order, p)
		}
	}
	for _, p := range found {
		if !seen[p] {
			seen[p] = true
			order = append(order, p)
		}
	}
	var out, ranged []core.Series
	replaced := map[string]bool{}
	for _, p := range order {
		ss, err := readSeriesFile(p)
		if err != nil {
			return nil, nil, err
		}
		if strings.HasSuffix(p, RangeSuffix) {
			for _, s := range ss {
				replaced[s.Target] = true
			}
			ranged = append(ranged, ss...)
			continue
		}
		out = append(out, ss...)
	}
	if len(replaced) > 0 {
		// Series recomputed after the run replace the live samples of
		// their target.
		out = slices.DeleteFunc(out, func(s core.Series) bool { return replaced[s.Target] })
		out = append(out, ranged...)
	}
	return out, statuses, nil
}

// RangeSuffix ends the name of a file of series computed after the run
// (PromQL query_range, CloudWatch GetMetricData) in the series-file format.
// Read gives them in place of the live samples of the same target.
const RangeSuffix = ".range.csv"

// NotesSuffix ends the name of a target's notes file.
const NotesSuffix = ".notes.json"

// Note levels.
const (
	NoteError = "error" // a query or read failed
	NoteEmpty = "empty" // a query answered with no data
	NoteInfo  = "info"
)

// Note is one named remark of a monitor about its data, shown in the
// report so that a query error, an unreachable server or an empty result
// is never a silent gap.
type Note struct {
	Target string `json:"target"`
	Kind   string `json:"kind"`
	// Subject names what the note is about within the target (a query).
	Subject string `json:"subject,omitempty"`
	Level   string `json:"level"`
	Text    string `json:"text"`
}

// ReadNotes reads every notes file of a run directory, in file-name order.
func ReadNotes(runDir string) ([]Note, error) {
	files, err := filepath.Glob(filepath.Join(runDir, SubDir, "*"+NotesSuffix))
	if err != nil {
		return nil, fmt.Errorf("listing notes: %w", err)
	}
	sort.Strings(files)
	var out []Note
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading notes: %w", err)
		}
		var ns []Note
		if err := json.Unmarshal(b, &ns); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		out = append(out, ns...)
	}
	return out, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// CompleteLines returns a reader over f up to and including its last
// newline, so a torn last line is never parsed, and how many bytes were cut.
func CompleteLines(f *os.File) (io.Reader, int64, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := st.Size()
	end := size
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	for end > 0 {
		start := end - chunk
		if start < 0 {
			start = 0
		}
		n, err := f.ReadAt(buf[:end-start], start)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = start + int64(i) + 1
			break
		}
		end = start
	}
	return bufio.NewReaderSize(io.NewSectionReader(f, 0, end), 64<<10), size - end, nil
}

func readSeriesFile(path string) ([]core.Series, error) {
	name := filepath.Base(path)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading monitor series: %w", err)
	}
	defer f.Close()
	r, _, err := CompleteLines(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 6
	cr.ReuseRecord = true
	index := map[string]int{}
	var out []core.Series
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if line == 1 {
			if strings.Join(rec, ",")+"\n" != CSVHeader {
				return nil, fmt.Errorf("%s:1: header %q, want %q", name, strings.Join(rec, ","), strings.TrimSpace(CSVHeader))
			}
			continue
		}
		t, err := time.Parse(time.RFC3339Nano, rec[0])
		if err != nil {
			return nil, fmt.Errorf("%s:%d: bad time %q", name, line, rec[0])
		}
		v, err := strconv.ParseFloat(rec[5], 64)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: bad value %q", name, line, rec[5])
		}
		key := rec[1] + "\x00" + rec[3]
		i, ok := index[key]
		if !ok {
			i = len(out)
			index[key] = i
			out = append(out, core.Series{Target: rec[1], Kind: rec[2], Metric: rec[3], Unit: rec[4]})
		}
		out[i].Points = append(out[i].Points, core.Point{T: t, V: v})
	}
	for i := range out {
		pts := out[i].Points
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].T.Before(pts[b].T) })
	}
	return out, nil
}

// readEvents replays events.jsonl into target statuses (in the order the
// targets first appear) and lists the series files the session created.
func readEvents(path string) ([]TargetStatus, []string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading monitor events: %w", err)
	}
	defer f.Close()
	r, _, err := CompleteLines(f)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", EventsFile, err)
	}
	var (
		out   []TargetStatus
		files []string
		index = map[string]int{}
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return nil, nil, fmt.Errorf("%s:%d: %w", EventsFile, line, err)
		}
		i, ok := index[e.Target]
		if !ok {
			i = len(out)
			index[e.Target] = i
			out = append(out, TargetStatus{Name: e.Target, Kind: e.Kind})
		}
		st := &out[i]
		if e.Role != RoleUnknown {
			st.Role = e.Role
		}
		switch e.Event {
		case EventStarted:
			st.Started = true
			st.Method = e.Method
			st.IntervalS = e.IntervalS
			if e.File != "" {
				files = append(files, e.File)
			}
		case EventFailed:
			st.Error = e.Error
		case EventLost:
			st.Gaps = append(st.Gaps, Gap{Start: e.Time, Error: e.Error})
		case EventResumed:
			if n := len(st.Gaps); n > 0 && st.Gaps[n-1].End == nil {
				t := e.Time
				st.Gaps[n-1].End = &t
			}
		case EventMethod:
			st.Method = e.Method
		case EventStopped:
			st.Samples = e.Samples
			st.CPUSeconds = e.CPUSeconds
			if n := len(st.Gaps); n > 0 && st.Gaps[n-1].End == nil {
				t := e.Time
				st.Gaps[n-1].End = &t
			}
		default:
			return nil, nil, fmt.Errorf("%s:%d: unknown event %q", EventsFile, line, e.Event)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", EventsFile, err)
	}
	return out, files, nil
}

// HintsSuffix ends the name of a target's report hints file.
const HintsSuffix = ".hints.json"

// Hints are a target's wishes for how the report shows it.
type Hints struct {
	Target string `json:"target"`
	// Top is how many series of each metric a chart draws (0: the
	// report's default).
	Top int `json:"top,omitempty"`
}

// ReadHints reads every hints file of a run directory, by target name.
func ReadHints(runDir string) (map[string]Hints, error) {
	files, err := filepath.Glob(filepath.Join(runDir, SubDir, "*"+HintsSuffix))
	if err != nil {
		return nil, fmt.Errorf("listing hints: %w", err)
	}
	out := map[string]Hints{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading hints: %w", err)
		}
		var h Hints
		if err := json.Unmarshal(b, &h); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		out[h.Target] = h
	}
	return out, nil
}

// WriteAtomic writes b to path through a temporary file and a rename, so a
// reader never sees half a file.
func WriteAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}
