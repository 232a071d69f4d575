package har

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/plateau-perf/plateau/internal/convert"
)

// ConvertFile converts the HAR file at path without holding it in memory:
// a first pass streams log.entries one entry at a time (encoding/json's
// Decoder, token by token down to the array) and keeps only what ordering,
// the target, pages and think times need, with each entry's place in the
// file; the second reads each kept entry back from its place as its turn
// comes. Memory is bounded by that per-entry summary, the largest entry,
// the response bodies kept for correlation (corrBudget) and the plan
// itself. path must be a regular file.
func ConvertFile(path string, opt Options) (*convert.Plan, *convert.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, nil, err
	} else if !st.Mode().IsRegular() {
		return nil, nil, errors.New("not a regular file")
	}
	metas, pages, err := scan(f)
	var oe *offsetError
	if errors.As(err, &oe) {
		return nil, nil, fmt.Errorf("HAR line %d: %w", lineAt(f, oe.off), oe.err)
	}
	if err != nil {
		return nil, nil, err
	}
	var buf []byte
	load := func(i int) (*Entry, error) {
		m := &metas[i]
		n := int(m.to - m.from)
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		b := buf[:n]
		if _, err := f.ReadAt(b, m.from); err != nil {
			return nil, fmt.Errorf("reading HAR: %w", err)
		}
		b = bytes.TrimLeft(b, ", \t\r\n")
		var e Entry
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("HAR changed while converting: %w", err)
		}
		return &e, nil
	}
	return convertFrom(metas, pages, load, opt)
}

// scan reads a HAR document from r one entry at a time.
func scan(r io.Reader) ([]meta, []Page, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	var (
		metas   []meta
		pages   []Page
		entries bool
	)
	fail := func(err error) ([]meta, []Page, error) {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, nil, &offsetError{se.Offset, err}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil, &offsetError{dec.InputOffset(), fmt.Errorf("ends early: %w", io.ErrUnexpectedEOF)}
		}
		return nil, nil, &offsetError{dec.InputOffset(), err}
	}
	if err := expect(dec, '{'); err != nil {
		return fail(err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		if key != "log" {
			if err := skip(dec); err != nil {
				return fail(err)
			}
			continue
		}
		if err := expect(dec, '{'); err != nil {
			return fail(err)
		}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return fail(err)
			}
			switch k {
			case "pages":
				if err := dec.Decode(&pages); err != nil {
					return fail(err)
				}
			case "entries":
				if err := expect(dec, '['); err != nil {
					return fail(err)
				}
				entries = true
				for dec.More() {
					from := dec.InputOffset()
					var e Entry
					if err := dec.Decode(&e); err != nil {
						return fail(fmt.Errorf("entry %d: %w", len(metas)+1, err))
					}
					m := metaOf(&e)
					m.from, m.to = from, dec.InputOffset()
					metas = append(metas, m)
				}
				if err := expect(dec, ']'); err != nil {
					return fail(err)
				}
			default:
				if err := skip(dec); err != nil {
					return fail(err)
				}
			}
		}
		if err := expect(dec, '}'); err != nil {
			return fail(err)
		}
	}
	if !entries {
		return nil, nil, errors.New("not a HAR file: no log.entries")
	}
	return metas, pages, nil
}

// expect reads one delimiter token.
func expect(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("want %q, found %v", d, t)
	}
	return nil
}

// skip reads and discards one value, token by token (no copy of it is
// kept, however large).
func skip(dec *json.Decoder) error {
	depth := 0
	for {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}

// offsetError is a HAR error at a byte offset.
type offsetError struct {
	off int64
	err error
}

func (e *offsetError) Error() string { return fmt.Sprintf("HAR byte %d: %v", e.off, e.err) }
func (e *offsetError) Unwrap() error { return e.err }

// lineAt is the line of byte offset off of f, counted in one pass.
func lineAt(f io.ReaderAt, off int64) int {
	line := 1
	buf := make([]byte, 64<<10)
	for pos := int64(0); pos < off; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), off-pos)], pos)
		line += bytes.Count(buf[:n], []byte{'\n'})
		pos += int64(n)
		if err != nil || n == 0 {
			break
		}
	}
	return line
}
