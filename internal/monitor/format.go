package monitor

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

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

// timeLayout is RFC 3339 with milliseconds, always UTC ("Z").
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// seriesFile appends the readings of one target to <stem>.csv. Every sample
// is written with a single write call, so a killed run leaves at most one
// torn last line, which Read drops.
type seriesFile struct {
	f      *os.File
	path   string
	prefix []byte // ",target,kind," already quoted
	buf    []byte
}

func createSeriesFile(path, target, kind string) (*seriesFile, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating series file: %w", err)
	}
	st, err := f.Stat()
	if err == nil && st.Size() == 0 {
		_, err = f.WriteString(CSVHeader)
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("writing series header: %w", err)
	}
	return &seriesFile{f: f, path: path, prefix: LinePrefix(target, kind)}, nil
}

// LinePrefix is the ",target,kind," part of every line of one target's
// series file, quoted once; pass it to AppendLine.
func LinePrefix(target, kind string) []byte {
	p := []byte{','}
	p = appendCSVField(p, target)
	p = append(p, ',')
	p = appendCSVField(p, kind)
	return append(p, ',')
}

// AppendLine appends one reading as a line of a series file. Importers that
// write monitor data (vmstat, jstat, docker stats) use it, so there is one
// encoder of the format.
func AppendLine(dst []byte, t time.Time, prefix []byte, metric, unit string, v float64) []byte {
	dst = t.UTC().AppendFormat(dst, timeLayout)
	dst = append(dst, prefix...)
	dst = appendCSVField(dst, metric)
	dst = append(dst, ',')
	dst = appendCSVField(dst, unit)
	dst = append(dst, ',')
	dst = appendValue(dst, v)
	return append(dst, '\n')
}

// write appends one line per reading, all stamped t, in one write call.
func (w *seriesFile) write(t time.Time, rs []Reading) error {
	if len(rs) == 0 {
		return nil
	}
	w.buf = w.buf[:0]
	for _, r := range rs {
		w.buf = AppendLine(w.buf, t, w.prefix, r.Metric, r.Unit, r.Value)
	}
	if _, err := w.f.Write(w.buf); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(w.path), err)
	}
	return nil
}

func (w *seriesFile) close() error {
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", filepath.Base(w.path), err)
	}
	return nil
}

// appendCSVField quotes s the way RFC 4180 wants when it holds a comma, a
// quote, a line break or leading space.
func appendCSVField(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ",\"\r\n") && (s == "" || (s[0] != ' ' && s[0] != '\t')) {
		return append(dst, s...)
	}
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		if s[i] == '"' {
			dst = append(dst, '"')
		}
		dst = append(dst, s[i])
	}
	return append(dst, '"')
}

// appendValue writes integers without a fraction and other values with at
// most six significant decimals after the point, which is more than any
// monitor measures, without exponents for ordinary magnitudes so the files
// stay readable in a terminal.
func appendValue(dst []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(dst, "NaN"...)
	case math.IsInf(v, 1):
		return append(dst, "Inf"...)
	case math.IsInf(v, -1):
		return append(dst, "-Inf"...)
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.AppendInt(dst, int64(v), 10)
	case math.Abs(v) >= 1e15 || math.Abs(v) < 1e-4:
		return strconv.AppendFloat(dst, v, 'g', 10, 64)
	}
	dec := 6 - int(math.Floor(math.Log10(math.Abs(v)))) - 1
	if dec < 1 {
		dec = 1
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', dec, 64)
	// Trim trailing zeros (and a bare point) that the fixed precision left.
	for len(dst) > n && dst[len(dst)-1] == '0' {
		dst = dst[:len(dst)-1]
	}
	if len(dst) > n && dst[len(dst)-1] == '.' {
		dst = dst[:len(dst)-1]
	}
	return dst
}

// Event kinds in events.jsonl.
const (
	EventStarted = "started" // target opened; method and interval set
	EventFailed  = "failed"  // target could not start; error set
	EventLost    = "lost"    // gap starts; error set
	EventResumed = "resumed" // gap ends
	EventMethod  = "method"  // read method changed (e.g. hsperfdata → jstat)
	EventStopped = "stopped" // final sample taken; samples and cpu_seconds set
)

// event is one line of events.jsonl.
type event struct {
	Time       time.Time `json:"time"`
	Target     string    `json:"target"`
	Kind       string    `json:"kind"`
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

// ErrNothingToRequery is what a monitor kind's Requery returns for a run
// that has no target of that kind (plateau report --requery asks each).
var ErrNothingToRequery = errors.New("no target of this kind to query again")

// RangeSuffix ends the name of a file of series computed after the run
// (PromQL query_range, CloudWatch GetMetricData) in the series-file format.
// Read gives them in place of the live samples of the same target.
const RangeSuffix = ".range.csv"

// WriteRange writes a target's after-the-run series to <stem>.range.csv
// in dir (the session's monitor directory), atomically (temporary file and
// rename), replacing an earlier one.
func WriteRange(dir, stem, target, kind string, series []core.Series) error {
	buf := []byte(CSVHeader)
	prefix := LinePrefix(target, kind)
	for _, s := range series {
		for _, p := range s.Points {
			buf = AppendLine(buf, p.T, prefix, s.Metric, s.Unit, p.V)
		}
	}
	return writeAtomic(filepath.Join(dir, stem+RangeSuffix), buf)
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Base(path), err)
	}
	return nil
}

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

// WriteNotes replaces a target's notes file in dir (the session's monitor
// directory); no notes removes it.
func WriteNotes(dir, stem string, notes []Note) error {
	path := filepath.Join(dir, stem+NotesSuffix)
	if len(notes) == 0 {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", filepath.Base(path), err)
		}
		return nil
	}
	b, err := json.MarshalIndent(notes, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding notes: %w", err)
	}
	return writeAtomic(path, append(b, '\n'))
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

// completeLines returns a reader over f up to and including its last
// newline, so a torn last line is never parsed, and how many bytes were cut.
func completeLines(f *os.File) (io.Reader, int64, error) {
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
	r, _, err := completeLines(f)
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
	r, _, err := completeLines(f)
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
		var e event
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

// eventLog appends events, one write per line.
type eventLog struct {
	f *os.File
}

func openEventLog(path string) (*eventLog, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening monitor events: %w", err)
	}
	return &eventLog{f: f}, nil
}

func (l *eventLog) write(e event) error {
	e.Time = e.Time.UTC().Truncate(time.Millisecond)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding monitor event: %w", err)
	}
	b = append(b, '\n')
	if _, err := l.f.Write(b); err != nil {
		return fmt.Errorf("writing monitor event: %w", err)
	}
	return nil
}

func (l *eventLog) close() error {
	if err := l.f.Close(); err != nil {
		return fmt.Errorf("closing monitor events: %w", err)
	}
	return nil
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

// WriteHints writes a target's hints file in dir (the session's monitor
// directory).
func WriteHints(dir, stem string, h Hints) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encoding hints: %w", err)
	}
	return writeAtomic(filepath.Join(dir, stem+HintsSuffix), append(b, '\n'))
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
