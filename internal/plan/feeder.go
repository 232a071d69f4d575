package plan

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// readCSV reads a feeder file: the header row gives the columns, every
// other row is data. An error with an empty File could not open the file
// (the caller points at the plan's csv: line); otherwise File names the CSV
// and Pos the bad line in it.
func readCSV(path string, delim rune) (cols []string, rows [][]string, ferr *Error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, &Error{Msg: fmt.Sprintf("cannot read %s: %s", path, errText(err)), Err: err}
	}
	defer f.Close()
	r := csv.NewReader(bufio.NewReaderSize(f, 64<<10))
	r.Comma = delim
	r.ReuseRecord = false // rows are kept
	fail := func(err error) (cols []string, rows [][]string, ferr *Error) {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return nil, nil, &Error{File: path, Pos: Pos{max(pe.Line, 1), max(pe.Column, 1)}, Msg: pe.Err.Error(), Err: err}
		}
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: errText(err), Err: err}
	}
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "empty file; the first row must name the columns"}
	}
	if err != nil {
		return fail(err)
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
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err)
		}
		rows = append(rows, rec)
	}
	if len(rows) == 0 {
		return nil, nil, &Error{File: path, Pos: Pos{1, 1}, Msg: "no data rows after the header"}
	}
	return header, rows, nil
}
