package merge

import (
	"bufio"
	"bytes"
	"container/heap"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// jtlReader pulls records (CSV rows, which may span lines inside quotes) from
// one samples.jtl. A torn last record is dropped and counted.
type jtlReader struct {
	path string
	f    *os.File
	br   *bufio.Reader
	line int // physical line of the record's start
	rec  []byte
	at   int64 // completion time of rec in ms: timeStamp + elapsed
	seg  int   // segment position, breaks ties
	torn bool
}

func openJTL(dir string, seg int) (*jtlReader, error) {
	path := filepath.Join(dir, rundir.SamplesFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r := &jtlReader{path: path, f: f, br: bufio.NewReaderSize(f, 256<<10), seg: seg}
	hdr, err := r.br.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		f.Close()
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	r.line = 1
	if hdr != "" && hdr != rundir.JTLHeader {
		f.Close()
		return nil, fmt.Errorf("%s:1: not plateau's JTL header", path)
	}
	return r, nil
}

// next reads the next record (r.rec nil at the end). The returned bytes are
// valid until the following call.
func (r *jtlReader) next() error {
	r.rec = r.rec[:0]
	start := r.line + 1
	quoted := false
	for {
		b, err := r.br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			r.rec = append(r.rec, b...)
			quoted = scanQuotes(b, quoted)
			continue
		}
		if len(b) > 0 {
			r.line++
			r.rec = append(r.rec, b...)
			quoted = scanQuotes(b, quoted)
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("reading %s: %w", r.path, err)
		}
		complete := len(r.rec) > 0 && r.rec[len(r.rec)-1] == '\n' && !quoted
		if complete {
			at, perr := completion(r.rec)
			if perr != nil {
				return fmt.Errorf("%s:%d: %w", r.path, start, perr)
			}
			r.at = at
			return nil
		}
		if errors.Is(err, io.EOF) {
			if len(r.rec) > 0 {
				r.torn = true // a generator killed mid-write
			}
			r.rec = nil
			return nil
		}
	}
}

// scanQuotes tracks whether a CSV row is inside a quoted field after b
// (doubled quotes toggle twice, so they need no special case).
func scanQuotes(b []byte, quoted bool) bool {
	for _, c := range b {
		if c == '"' {
			quoted = !quoted
		}
	}
	return quoted
}

// completion parses timeStamp and elapsed, the first two fields, which
// plateau writes as plain integers.
func completion(rec []byte) (int64, error) {
	i := bytes.IndexByte(rec, ',')
	if i < 0 {
		return 0, errors.New("not a JTL row")
	}
	rest := rec[i+1:]
	j := bytes.IndexByte(rest, ',')
	if j < 0 {
		return 0, errors.New("not a JTL row")
	}
	ts, err := strconv.ParseInt(string(rec[:i]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("timeStamp %q: not an integer", rec[:i])
	}
	el, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("elapsed %q: not an integer", rest[:j])
	}
	return ts + el, nil
}

// jtlHeap orders readers by their current record's completion time, then
// by segment.
type jtlHeap []*jtlReader

func (h jtlHeap) Len() int { return len(h) }
func (h jtlHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seg < h[j].seg
}
func (h jtlHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jtlHeap) Push(x any)   { *h = append(*h, x.(*jtlReader)) }
func (h *jtlHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// mergeSamples k-way merges the segments' samples.jtl into out by completion
// time (timeStamp + elapsed). Each input is ordered by completion second, so
// the output is too, exactly like a single generator's file; lines are copied
// byte for byte. When a segment kept no raw samples (--no-samples) the merged
// file would silently lack its share, so none is written and a note says so.
func mergeSamples(out string, segs []*Segment, res *Result) ([]string, error) {
	var readers []*jtlReader
	defer func() {
		for _, r := range readers {
			r.f.Close()
		}
	}()
	var without []string
	for i, s := range segs {
		r, err := openJTL(s.Dir, i)
		if errors.Is(err, os.ErrNotExist) {
			without = append(without, s.Segment)
			continue
		}
		if err != nil {
			return nil, err
		}
		readers = append(readers, r)
	}
	if len(readers) == 0 {
		return nil, nil
	}
	if len(without) > 0 {
		return []string{fmt.Sprintf("%s not merged: segment(s) %v kept no raw samples; the interval aggregates hold every statistic",
			rundir.SamplesFile, without)}, nil
	}
	f, err := os.Create(filepath.Join(out, rundir.SamplesFile))
	if err != nil {
		return nil, fmt.Errorf("creating sample log: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	if _, err := bw.WriteString(rundir.JTLHeader); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing sample log: %w", err)
	}
	h := make(jtlHeap, 0, len(readers))
	for _, r := range readers {
		if err := r.next(); err != nil {
			f.Close()
			return nil, err
		}
		if r.rec != nil {
			h = append(h, r)
		}
	}
	heap.Init(&h)
	for h.Len() > 0 {
		r := h[0]
		if _, err := bw.Write(r.rec); err != nil {
			f.Close()
			return nil, fmt.Errorf("writing sample log: %w", err)
		}
		res.Samples++
		if err := r.next(); err != nil {
			f.Close()
			return nil, err
		}
		if r.rec == nil {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing sample log: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("writing sample log: %w", err)
	}
	var notes []string
	for _, r := range readers {
		if r.torn {
			notes = append(notes, fmt.Sprintf("%s: its last sample line was cut off (generator killed mid-write) and left out", r.path))
		}
	}
	return notes, nil
}
