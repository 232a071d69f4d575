package prepare

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
)

// maxLine bounds the bytes held while waiting for a line's end; a longer
// line is masked and written in pieces (secret.Edges masks a secret cut at
// a piece's edge).
const maxLine = 64 << 10

// maxTailLine bounds each line kept in a result's tail.
const maxTailLine = 300

// logWriter masks a command's output line by line into a file, keeps at
// most limit bytes of it, counts all of it and remembers the last lines.
// exec serialises the writes of a command's stdout and stderr when both
// are this one writer, so it needs no lock.
type logWriter struct {
	f       *os.File
	w       *bufio.Writer
	mask    func(string) string
	limit   int64
	total   int64 // bytes received
	written int64 // bytes kept
	cut     bool
	pending []byte
	last    []string // ring of the last lines
	err     error
}

func newLogWriter(f *os.File, mask func(string) string, limit int64) *logWriter {
	return &logWriter{f: f, w: bufio.NewWriter(f), mask: mask, limit: limit}
}

// Write implements io.Writer. It never fails for the command's sake: a
// write error is kept and returned by Close.
func (l *logWriter) Write(p []byte) (int, error) {
	l.total += int64(len(p))
	l.pending = append(l.pending, p...)
	for {
		i := bytes.IndexByte(l.pending, '\n')
		if i < 0 {
			break
		}
		l.line(string(l.pending[:i]), true)
		l.pending = l.pending[i+1:]
	}
	if len(l.pending) >= maxLine {
		l.line(string(l.pending), false)
		l.pending = l.pending[:0]
	}
	if len(l.pending) == 0 {
		l.pending = nil // let a large buffer go
	}
	return len(p), nil
}

// line masks and writes one line (or a piece of a long one).
func (l *logWriter) line(s string, nl bool) {
	s = l.mask(strings.TrimSuffix(s, "\r"))
	t := s
	if len(t) > maxTailLine {
		t = t[:maxTailLine] + "…"
	}
	if strings.TrimSpace(t) != "" {
		if len(l.last) == tailLines {
			copy(l.last, l.last[1:])
			l.last = l.last[:tailLines-1]
		}
		l.last = append(l.last, t)
	}
	if l.cut || l.err != nil {
		return
	}
	if l.written+int64(len(s))+1 > l.limit {
		l.cut = true
		_, l.err = fmt.Fprintf(l.w, "[plateau: output cut here; the command wrote more than %d bytes]\n", l.limit)
		return
	}
	if _, err := l.w.WriteString(s); err != nil {
		l.err = err
		return
	}
	l.written += int64(len(s))
	if nl {
		if err := l.w.WriteByte('\n'); err != nil {
			l.err = err
		}
		l.written++
	}
}

// Close writes a last unterminated line and closes the file.
func (l *logWriter) Close() error {
	if len(l.pending) > 0 {
		l.line(string(l.pending), true)
		l.pending = nil
	}
	if err := l.w.Flush(); err != nil && l.err == nil {
		l.err = err
	}
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	return l.err
}

// tail returns the last non-empty lines, oldest first.
func (l *logWriter) tail() []string { return slices.Clone(l.last) }
