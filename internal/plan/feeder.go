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
)

// readCSV reads a feeder file: the header row gives the columns, every
// other row is data. An error with an empty File could not open the file
// (the caller points at the plan's csv: line); otherwise File names the CSV
// and Pos the bad line in it.
// With declared columns the file has no header row: every row is data and
// must have that many fields.
func readCSV(path string, delim rune, declared []string) (cols []string, rows [][]string, ferr *Error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, &Error{Msg: fmt.Sprintf("cannot read %s: %s", path, errText(err)), Err: err}
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 64<<10))
	r.Comma = delim
	r.ReuseRecord = false // rows are kept
	fail := func(err error) *Error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return &Error{File: path, Pos: Pos{max(pe.Line, 1), max(pe.Column, 1)}, Msg: pe.Err.Error(), Err: err}
		}
		return &Error{File: path, Pos: Pos{1, 1}, Msg: errText(err), Err: err}
	}
	if len(declared) > 0 {
		r.FieldsPerRecord = len(declared)
		if rows, ferr = readRows(r, fail); ferr != nil {
			return nil, nil, ferr
		}
		if len(rows) == 0 {
			return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "no data rows"}
		}
		return declared, rows, nil
	}
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "empty file; the first row must name the columns"}
	}
	if err != nil {
		return nil, nil, fail(err)
	}
	seen := map[string]int{}
	for i, c := range header {
		c = strings.TrimSpace(c)
		if i == 0 {
			c = strings.TrimPrefix(c, "\uFEFF") // byte-order mark from spreadsheet exports
		}
		if c == "" || strings.ContainsAny(c, "}") {
			return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: fmt.Sprintf("header column %d is empty or holds }", i+1)}
		}
		if j, dup := seen[c]; dup {
			return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: fmt.Sprintf("header names column %q twice (columns %d and %d)", c, j+1, i+1)}
		}
		seen[c] = i
		header[i] = c
	}
	if rows, ferr = readRows(r, fail); ferr != nil {
		return nil, nil, ferr
	}
	if len(rows) == 0 {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "no data rows after the header"}
	}
	return header, rows, nil
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
	src, err := os.ReadFile(path)
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
