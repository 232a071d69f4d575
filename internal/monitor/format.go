package monitor

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/mondata"
)

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

// ErrNothingToRequery is what a monitor kind's Requery returns for a run
// that has no target of that kind (plateau report --requery asks each).
var ErrNothingToRequery = errors.New("no target of this kind to query again")

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

func writeAtomic(path string, b []byte) error { return mondata.WriteAtomic(path, b) }

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

// WriteHints writes a target's hints file in dir (the session's monitor
// directory).
func WriteHints(dir, stem string, h Hints) error {
	b, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("encoding hints: %w", err)
	}
	return writeAtomic(filepath.Join(dir, stem+HintsSuffix), append(b, '\n'))
}
