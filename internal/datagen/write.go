package datagen

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"unicode/utf8"
)

// rowWriter writes an entity's rows to a temporary file, renamed to its
// final name by commit.
type rowWriter interface {
	write(row []value) error
	close() (bytes int64, err error) // flush and close the temporary file
	commit() error                   // rename it to the final name
	abort()                          // remove it
}

// countWriter counts the bytes that reach the file.
type countWriter struct {
	f *os.File
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	c.n += int64(n)
	return n, err
}

type fileBase struct {
	path, tmp string
	f         *os.File
	cw        *countWriter
	bw        *bufio.Writer
	closed    bool
}

func openBase(path string) (*fileBase, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("datagen: %w", err)
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return nil, fmt.Errorf("datagen: %w", err)
	}
	cw := &countWriter{f: f}
	return &fileBase{path: path, tmp: tmp, f: f, cw: cw, bw: bufio.NewWriterSize(cw, 256<<10)}, nil
}

func (b *fileBase) closeFile() (int64, error) {
	if b.closed {
		return b.cw.n, nil
	}
	b.closed = true
	if err := b.bw.Flush(); err != nil {
		b.f.Close()
		return b.cw.n, err
	}
	return b.cw.n, b.f.Close()
}

func (b *fileBase) commit() error { return os.Rename(b.tmp, b.path) }

func (b *fileBase) abort() {
	if !b.closed {
		b.closed = true
		b.f.Close()
	}
	os.Remove(b.tmp)
}

func newRowWriter(path string, e *Entity) (rowWriter, error) {
	base, err := openBase(path)
	if err != nil {
		return nil, err
	}
	switch e.Format {
	case "csv":
		w := &csvWriter{fileBase: base, cw: csv.NewWriter(base.bw), e: e, rec: make([]string, len(e.Fields))}
		head := make([]string, len(e.Fields))
		for i, f := range e.Fields {
			head[i] = f.Name
		}
		if err := w.cw.Write(head); err != nil {
			base.abort()
			return nil, err
		}
		return w, nil
	default:
		w := &jsonWriter{fileBase: base, e: e, array: e.Format == "json"}
		for _, f := range e.Fields {
			k, _ := json.Marshal(f.Name)
			w.keys = append(w.keys, string(k)+":")
		}
		if w.array {
			if _, err := base.bw.WriteString("["); err != nil {
				base.abort()
				return nil, err
			}
		}
		return w, nil
	}
}

// memWriter keeps an entity's rows as text in memory (Table).
type memWriter struct {
	e    *Entity
	rows [][]string
}

func (m *memWriter) write(row []value) error {
	rec := make([]string, len(row))
	for i := range row {
		rec[i] = cellText(&row[i], m.e.Fields[i])
	}
	m.rows = append(m.rows, rec)
	return nil
}
func (m *memWriter) close() (int64, error) { return 0, nil }
func (m *memWriter) commit() error         { return nil }
func (m *memWriter) abort()                {}

// discard drops an entity's rows (Table makes them for their children).
type discard struct{}

func (discard) write([]value) error   { return nil }
func (discard) close() (int64, error) { return 0, nil }
func (discard) commit() error         { return nil }
func (discard) abort()                {}

// csvWriter writes RFC 4180 CSV with a header row; a null is an empty
// cell.
type csvWriter struct {
	*fileBase
	cw  *csv.Writer
	e   *Entity
	rec []string
}

func (w *csvWriter) write(row []value) error {
	for i := range row {
		w.rec[i] = cellText(&row[i], w.e.Fields[i])
	}
	return w.cw.Write(w.rec)
}

// cellText is a cell as CSV text; a null is empty.
func cellText(v *value, f *Field) string {
	if v.null {
		return ""
	}
	switch v.kind {
	case kInt:
		return strconv.FormatInt(v.i, 10)
	case kFloat:
		return strconv.FormatFloat(v.f, 'f', f.Decimals, 64)
	case kBool:
		return strconv.FormatBool(v.i != 0)
	}
	return v.s
}

func (w *csvWriter) close() (int64, error) {
	w.cw.Flush()
	if err := w.cw.Error(); err != nil {
		w.abort()
		return 0, err
	}
	return w.closeFile()
}

// jsonWriter writes one object per row: NDJSON (one a line) or a JSON
// array. Numbers and booleans are JSON numbers and booleans, a null is
// null.
type jsonWriter struct {
	*fileBase
	e     *Entity
	keys  []string
	array bool
	rows  int64
	buf   []byte
}

func (w *jsonWriter) write(row []value) error {
	b := w.buf[:0]
	if w.array {
		if w.rows > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
	}
	b = append(b, '{')
	for i := range row {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, w.keys[i]...)
		v := &row[i]
		switch {
		case v.null:
			b = append(b, "null"...)
		case v.kind == kInt:
			b = strconv.AppendInt(b, v.i, 10)
		case v.kind == kFloat:
			b = strconv.AppendFloat(b, v.f, 'f', w.e.Fields[i].Decimals, 64)
		case v.kind == kBool:
			b = strconv.AppendBool(b, v.i != 0)
		default:
			b = appendJSONString(b, v.s)
		}
	}
	b = append(b, '}')
	if !w.array {
		b = append(b, '\n')
	}
	w.buf = b
	w.rows++
	_, err := w.bw.Write(b)
	return err
}

func (w *jsonWriter) close() (int64, error) {
	if w.array {
		end := "\n]\n"
		if w.rows == 0 {
			end = "]\n"
		}
		if _, err := w.bw.WriteString(end); err != nil {
			w.abort()
			return 0, err
		}
	}
	return w.closeFile()
}

// appendJSONString appends s as a JSON string: quotes, backslashes and
// control characters escaped, invalid UTF-8 replaced by U+FFFD, as
// encoding/json does (without its HTML escaping).
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

func writeManifest(path string, r *Result) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("datagen: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("datagen: %w", err)
	}
	return nil
}
