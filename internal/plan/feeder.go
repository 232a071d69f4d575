package plan

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// DefaultFeederInMemory is the largest CSV file a feeder reads into memory
// whole (Options.FeederInMemory); a larger one is indexed: Load checks
// every row as before, but keeps only each row's offset (8 bytes a row)
// and reads a row from the file when a user takes it (RowIndex).
const DefaultFeederInMemory = 16 << 20

// MaxLineBytes bounds one line of a data file: a file without line ends
// (a binary, /dev/zero) stops there with an error naming the line instead
// of filling memory.
const MaxLineBytes = 1 << 20

// openRegular opens a data file, refusing what is not a regular file
// before reading a byte: a FIFO would block the load until a writer comes,
// a device (/dev/zero, /dev/urandom) never ends. The error has no File, so
// the caller points at the plan line naming the file.
func openRegular(path string) (*os.File, os.FileInfo, *Error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, &Error{Msg: fmt.Sprintf("cannot read %s: %s", path, errText(err)), Err: err}
	}
	if !st.Mode().IsRegular() {
		return nil, nil, notRegular(path, st)
	}
	// O_NONBLOCK: if the path became a FIFO since the Stat, opening it
	// must not wait for a writer (the Stat below then refuses it).
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, &Error{Msg: fmt.Sprintf("cannot read %s: %s", path, errText(err)), Err: err}
	}
	if st, err = f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, nil, &Error{Msg: fmt.Sprintf("cannot read %s: %s", path, errText(err)), Err: err}
		}
		return nil, nil, notRegular(path, st)
	}
	return f, st, nil
}

func notRegular(path string, st os.FileInfo) *Error {
	what := "not a regular file"
	switch m := st.Mode(); {
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a device"
	case m&os.ModeSocket != 0:
		what = "a socket"
	}
	return &Error{Msg: fmt.Sprintf("%s is %s, not a regular file; a feeder reads a file (write the data to one first)", path, what)}
}

// lineTooLong is the error of a line longer than MaxLineBytes.
type lineTooLong struct{ line int64 }

func (e lineTooLong) Error() string {
	return fmt.Sprintf("line longer than %d MiB (not a text file?)", MaxLineBytes>>20)
}

// lineLimit passes r through, failing at the first line longer than
// MaxLineBytes.
type lineLimit struct {
	r    io.Reader
	cur  int   // bytes of the current line so far
	line int64 // 1-based line of the next byte
}

func (l *lineLimit) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	b := p[:n]
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			l.cur += len(b)
			break
		}
		if l.cur+i > MaxLineBytes {
			return 0, lineTooLong{l.line}
		}
		l.cur = 0
		l.line++
		b = b[i+1:]
	}
	if l.cur > MaxLineBytes {
		return 0, lineTooLong{l.line}
	}
	return n, err
}

// RowIndex is a large CSV feeder's rows: their offsets in the file, which
// stays open, and how to parse them. Row reads one row with one pread;
// safe for concurrent use.
type RowIndex struct {
	f      *os.File
	path   string
	delim  rune
	fields int
	offs   []int64 // offs[i] is where row i starts; offs[Len()] where the last ends
}

// Len is the number of data rows.
func (x *RowIndex) Len() int64 { return int64(len(x.offs) - 1) }

// Row reads data row i (0-based).
func (x *RowIndex) Row(i int64) ([]string, error) {
	from, to := x.offs[i], x.offs[i+1]
	buf := make([]byte, to-from)
	if _, err := x.f.ReadAt(buf, from); err != nil {
		return nil, fmt.Errorf("data %s: reading row %d: %w", x.path, i+1, err)
	}
	if bytes.IndexByte(buf, '"') < 0 { // no quoting: split as the CSV reader would
		buf = bytes.TrimLeft(buf, "\r\n") // blank lines before the row, which the reader skipped
		buf = bytes.TrimSuffix(buf, []byte("\n"))
		buf = bytes.TrimSuffix(buf, []byte("\r"))
		row := strings.Split(string(buf), string(x.delim))
		if len(row) == x.fields {
			return row, nil
		}
	}
	r := csv.NewReader(bytes.NewReader(buf))
	r.Comma = x.delim
	r.FieldsPerRecord = x.fields
	row, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("data %s: row %d changed since the plan was loaded: %w", x.path, i+1, err)
	}
	return row, nil
}

// Len is the number of the feeder's data rows.
func (f *Feeder) Len() int64 {
	if f.Index != nil {
		return f.Index.Len()
	}
	return int64(len(f.Rows))
}

// Row returns data row i (0 ≤ i < Len()): from memory, or read from a
// large file through its index.
func (f *Feeder) Row(i int64) ([]string, error) {
	if f.Index != nil {
		return f.Index.Row(i)
	}
	return f.Rows[i], nil
}

// readCSV reads a feeder file: the header row gives the columns, every
// other row is data. An error with an empty File could not open the file
// (the caller points at the plan's csv: line); otherwise File names the CSV
// and Pos the bad line in it.
// With declared columns the file has no header row: every row is data and
// must have that many fields. A file larger than inMemory bytes is checked
// row by row the same way but kept as a RowIndex (idx), not as rows.
func readCSV(path string, delim rune, declared []string, inMemory int64) (cols []string, rows [][]string, idx *RowIndex, ferr *Error) {
	f, st, ferr := openRegular(path)
	if ferr != nil {
		return nil, nil, nil, ferr
	}
	keep := false // the index keeps f open
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	ll := &lineLimit{r: f, line: 1}
	r := csv.NewReader(bufio.NewReaderSize(ll, 64<<10))
	r.Comma = delim
	r.ReuseRecord = false // rows are kept
	fail := func(err error) *Error {
		var pe *csv.ParseError
		var lt lineTooLong
		switch {
		case errors.As(err, &lt):
			return &Error{File: path, Pos: Pos{int(lt.line), 1}, Msg: lt.Error(), Err: err}
		case errors.As(err, &pe):
			return &Error{File: path, Pos: Pos{max(pe.Line, 1), max(pe.Column, 1)}, Msg: pe.Err.Error(), Err: err}
		}
		return &Error{File: path, Pos: Pos{1, 1}, Msg: errText(err), Err: err}
	}
	if inMemory <= 0 {
		inMemory = DefaultFeederInMemory
	}
	large := st.Size() > inMemory
	if len(declared) > 0 {
		r.FieldsPerRecord = len(declared)
		if large {
			idx, ferr = indexRows(r, fail, path, delim, len(declared), 0)
		} else {
			rows, ferr = readRows(r, fail)
		}
		if ferr != nil {
			return nil, nil, nil, ferr
		}
		if len(rows) == 0 && (idx == nil || idx.Len() == 0) {
			return nil, nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "no data rows"}
		}
		if idx != nil {
			idx.f, keep = f, true
		}
		return declared, rows, idx, nil
	}
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "empty file; the first row must name the columns"}
	}
	if err != nil {
		return nil, nil, nil, fail(err)
	}
	seen := map[string]int{}
	for i, c := range header {
		c = strings.TrimSpace(c)
		if i == 0 {
			c = strings.TrimPrefix(c, "\uFEFF") // byte-order mark from spreadsheet exports
		}
		if c == "" || strings.ContainsAny(c, "}") {
			return nil, nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: fmt.Sprintf("header column %d is empty or holds }", i+1)}
		}
		if j, dup := seen[c]; dup {
			return nil, nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: fmt.Sprintf("header names column %q twice (columns %d and %d)", c, j+1, i+1)}
		}
		seen[c] = i
		header[i] = c
	}
	if large {
		idx, ferr = indexRows(r, fail, path, delim, len(header), r.InputOffset())
	} else {
		rows, ferr = readRows(r, fail)
	}
	if ferr != nil {
		return nil, nil, nil, ferr
	}
	if len(rows) == 0 && (idx == nil || idx.Len() == 0) {
		return nil, nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "no data rows after the header"}
	}
	if idx != nil {
		idx.f, keep = f, true
	}
	return header, rows, idx, nil
}

// indexRows reads the data rows left in r, from offset at, checking each
// as readRows does but keeping only where each starts.
func indexRows(r *csv.Reader, fail func(error) *Error, path string, delim rune, fields int, at int64) (*RowIndex, *Error) {
	r.ReuseRecord = true
	x := &RowIndex{path: path, delim: delim, fields: fields, offs: []int64{at}}
	for {
		_, err := r.Read()
		if errors.Is(err, io.EOF) {
			return x, nil
		}
		if err != nil {
			return nil, fail(err)
		}
		x.offs = append(x.offs, r.InputOffset())
	}
}

// readRows reads the data rows left in r; fail turns a read error into
// the feeder's positioned error.
func readRows(r *csv.Reader, fail func(error) *Error) ([][]string, *Error) {
	var rows [][]string
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, fail(err)
		}
		rows = append(rows, rec)
	}
}

// checkColumns checks a headerless CSV's declared column names; it
// returns a problem or "".
func checkColumns(cols []string) string {
	if len(cols) == 0 {
		return "columns is empty"
	}
	seen := map[string]bool{}
	for _, c := range cols {
		switch {
		case c == "" || strings.ContainsAny(c, "}. "):
			return fmt.Sprintf("bad column name %q", c)
		case seen[c]:
			return fmt.Sprintf("column %q is named twice", c)
		}
		seen[c] = true
	}
	return ""
}

// maxDataBytes bounds a JSON or NDJSON data file.
const maxDataBytes = 256 << 20

// readJSONData reads a JSON array of objects, or NDJSON (one object per
// line). The columns are the objects' keys in order of first appearance;
// values are text (strings as they are, other values as JSON). A missing
// key is an empty value.
func readJSONData(path string, ndjson bool) (cols []string, rows [][]string, ferr *Error) {
	f, st, ferr := openRegular(path)
	if ferr != nil {
		return nil, nil, ferr
	}
	defer f.Close()
	if st.Size() > maxDataBytes {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: fmt.Sprintf("larger than %d MiB", maxDataBytes>>20)}
	}
	src, err := io.ReadAll(io.LimitReader(f, maxDataBytes+1))
	if err != nil {
		return nil, nil, &Error{Msg: fmt.Sprintf("cannot read %s: %s", path, errText(err)), Err: err}
	}
	if len(src) > maxDataBytes {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: fmt.Sprintf("larger than %d MiB", maxDataBytes>>20)}
	}
	index := map[string]int{}
	var objs []map[string]json.RawMessage
	lineOf := func(off int64) Pos {
		off = min(max(off, 0), int64(len(src)))
		before := src[:off]
		line := bytes.Count(before, []byte("\n")) + 1
		col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
		return Pos{line, max(col, 1)}
	}
	add := func(obj map[string]json.RawMessage, keys []string) {
		for _, k := range keys {
			if _, ok := index[k]; !ok {
				index[k] = len(cols)
				cols = append(cols, k)
			}
		}
		objs = append(objs, obj)
	}
	if ndjson {
		for i, line := range bytes.Split(src, []byte("\n")) {
			line = bytes.TrimSpace(line)
			if len(line) == 0 {
				continue
			}
			obj, keys, err := decodeObject(line)
			if err != nil {
				return nil, nil, &Error{File: path, Pos: Pos{i + 1, 1}, Msg: err.Error(), Err: err}
			}
			add(obj, keys)
		}
	} else {
		dec := json.NewDecoder(bytes.NewReader(src))
		tok, err := dec.Token()
		if err != nil || tok != json.Delim('[') {
			return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "expected a JSON array of objects ([{…}, …])"}
		}
		for dec.More() {
			start := dec.InputOffset()
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				off := dec.InputOffset()
				var se *json.SyntaxError
				if errors.As(err, &se) {
					off = se.Offset
				}
				return nil, nil, &Error{File: path, Pos: lineOf(off), Msg: "bad JSON: " + err.Error(), Err: err}
			}
			obj, keys, err := decodeObject(raw)
			if err != nil {
				return nil, nil, &Error{File: path, Pos: lineOf(start + int64(len(src[start:dec.InputOffset()])-len(bytes.TrimLeft(src[start:dec.InputOffset()], " \t\r\n,")))), Msg: err.Error(), Err: err}
			}
			add(obj, keys)
		}
		if _, err := dec.Token(); err != nil {
			return nil, nil, &Error{File: path, Pos: lineOf(dec.InputOffset()), Msg: "bad JSON: " + err.Error(), Err: err}
		}
	}
	if len(objs) == 0 {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "no data rows (no objects)"}
	}
	if msg := checkColumns(cols); msg != "" {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: msg + " (object keys are the columns)"}
	}
	for _, o := range objs {
		row := make([]string, len(cols))
		for k, v := range o {
			var x any
			_ = json.Unmarshal(v, &x)
			row[index[k]] = jsonValueText(x)
		}
		rows = append(rows, row)
	}
	return cols, rows, nil
}

// decodeObject decodes one JSON object, keeping its keys in order.
func decodeObject(b []byte) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("expected a JSON object ({…})")
	}
	obj := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("bad JSON: %v", err)
		}
		k, _ := kt.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("bad JSON: %v", err)
		}
		if _, dup := obj[k]; !dup {
			keys = append(keys, k)
		}
		obj[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("bad JSON: %v", err)
	}
	return obj, keys, nil
}

func jsonValueText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
