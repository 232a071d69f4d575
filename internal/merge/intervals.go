package merge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// recordReader pulls interval records from one segment's intervals.ndjson.
// A torn last line (a generator killed mid-write) ends the stream; any other
// malformed line is an error naming file and line.
type recordReader struct {
	path   string
	f      *os.File
	br     *bufio.Reader
	line   int
	phases []int // segment phase index → merged index
	head   *rundir.IntervalRecord
	parser rundir.Parser
}

func openRecords(dir string, phases []int) (*recordReader, error) {
	path := filepath.Join(dir, rundir.IntervalsFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &recordReader{path: path}, nil // a generator that died before its first second
	}
	if err != nil {
		return nil, fmt.Errorf("reading intervals: %w", err)
	}
	return &recordReader{path: path, f: f, br: bufio.NewReaderSize(f, 256<<10), phases: phases}, nil
}

// next reads the next record into r.head (nil at the end).
func (r *recordReader) next() error {
	r.head = nil
	if r.f == nil {
		return nil
	}
	for {
		b, err := r.br.ReadBytes('\n')
		if len(b) > 0 {
			r.line++
			complete := b[len(b)-1] == '\n'
			var rec rundir.IntervalRecord
			if uerr := r.parser.Parse(b, &rec); uerr != nil {
				if !complete && errors.Is(err, io.EOF) {
					return nil
				}
				return fmt.Errorf("%s:%d: %w", r.path, r.line, uerr)
			}
			if rec.Phase >= 0 {
				if rec.Phase >= len(r.phases) {
					return fmt.Errorf("%s:%d: phase %d, but run.json lists %d phases", r.path, r.line, rec.Phase, len(r.phases))
				}
				rec.Phase = r.phases[rec.Phase]
			}
			r.head = &rec
			return nil
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", r.path, err)
		}
	}
}

func (r *recordReader) close() {
	if r.f != nil {
		_ = r.f.Close()
	}
}

// cell is one (second, key) of the merged log: the first segment's record
// as read, and the decoded sum once a second segment adds to it.
type cell struct {
	rec *rundir.IntervalRecord
	agg *metrics.Agg
}

// adder adds records into aggregates, reusing one histogram decoder and the
// aggregates of past seconds: a dense histogram is ~190 KB, and a merge
// visits seconds × labels × generators records.
type adder struct {
	dec  metrics.HistDecoder
	sp   metrics.Sparse
	free []*metrics.Agg
}

func (d *adder) agg() *metrics.Agg {
	if n := len(d.free); n > 0 {
		a := d.free[n-1]
		d.free = d.free[:n-1]
		return a
	}
	return metrics.NewAgg()
}

// release returns a's memory for the next second.
func (d *adder) release(a *metrics.Agg) {
	h := a.Hist
	h.Reset()
	*a = metrics.Agg{MinUs: math.MaxInt64, Hist: h}
	d.free = append(d.free, a)
}

func (d *adder) add(a *metrics.Agg, r *rundir.IntervalRecord) error {
	d.sp = metrics.Sparse{Values: d.sp.Values[:0], High: d.sp.High[:0], Counts: d.sp.Counts[:0]}
	if r.Hist != "" {
		if err := d.dec.Decode(r.Hist, &d.sp); err != nil {
			return err
		}
	}
	r.AddDecoded(a, &d.sp)
	return nil
}

// mergeIntervals adds the segments' interval logs second by second. Each log
// is in second order, so a k-way merge holds one second of every segment in
// memory at a time, never the whole run. A key seen by one segment only is
// copied as recorded (no decode, no re-encode); keys seen by several are
// decoded and added with metrics.Agg.Merge, which is exact for counts, sums,
// extremes and the HDR histogram. A record older than the second being
// merged (a log not in order) is written as one more record of its second:
// readers add records of the same key and second.
func mergeIntervals(w *rundir.Writer, segs []*Segment, maps [][]int, res *Result) error {
	readers := make([]*recordReader, len(segs))
	defer func() {
		for _, r := range readers {
			if r != nil {
				r.close()
			}
		}
	}()
	var ad adder
	for i, s := range segs {
		r, err := openRecords(s.Dir, maps[i])
		if err != nil {
			return err
		}
		readers[i] = r
		if err := r.next(); err != nil {
			return err
		}
	}
	for {
		t, any := int64(0), false
		for _, r := range readers {
			if r.head != nil && (!any || r.head.T < t) {
				t, any = r.head.T, true
			}
		}
		if !any {
			return nil
		}
		cells := map[metrics.Key]*cell{}
		users := map[string]int{}
		dropped := map[string]int64{}
		haveUsers := false
		for i, r := range readers {
			s := segs[i]
			for r.head != nil && r.head.T == t {
				rec := r.head
				if s.first == 0 || rec.T < s.first {
					s.first = rec.T
				}
				s.last = max(s.last, rec.T)
				if rec.Users != nil || rec.Dropped != nil {
					haveUsers = true
					for k, n := range rec.Users {
						users[k] += n
					}
					for k, n := range rec.Dropped {
						dropped[k] += n
						s.Dropped += n
					}
				} else {
					if !rec.Tx {
						s.Samples += rec.Count
					}
					if err := ad.addCell(cells, rec); err != nil {
						return fmt.Errorf("%s: second %d, label %q: %w", r.path, rec.T, rec.Label, err)
					}
				}
				if err := r.next(); err != nil {
					return err
				}
			}
		}
		if err := writeSecond(w, t, cells, users, dropped, haveUsers, res); err != nil {
			return err
		}
		for _, c := range cells {
			if c.agg != nil {
				ad.release(c.agg)
			}
		}
	}
}

func (d *adder) addCell(cells map[metrics.Key]*cell, rec *rundir.IntervalRecord) error {
	k := rec.Key()
	c := cells[k]
	if c == nil {
		cells[k] = &cell{rec: rec}
		return nil
	}
	if c.agg == nil {
		c.agg = d.agg()
		if err := d.add(c.agg, c.rec); err != nil {
			return err
		}
	}
	return d.add(c.agg, rec)
}

// writeSecond writes one merged second in the order the engine writes it:
// label records sorted by key, then the users record.
func writeSecond(w *rundir.Writer, t int64, cells map[metrics.Key]*cell, users map[string]int,
	dropped map[string]int64, haveUsers bool, res *Result) error {
	keys := make([]metrics.Key, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	for _, k := range keys {
		c := cells[k]
		rec := c.rec
		if c.agg != nil {
			r, err := rundir.RecordOf(t, k, c.agg)
			if err != nil {
				return err
			}
			rec = &r
		}
		if err := w.WriteRecord(rec); err != nil {
			return err
		}
		res.Records++
	}
	if haveUsers {
		if len(dropped) == 0 {
			dropped = nil
		}
		if err := w.WriteRecord(&rundir.IntervalRecord{T: t, Phase: -1, Users: users, Dropped: dropped}); err != nil {
			return err
		}
		res.Records++
	}
	return nil
}

// keyLess orders keys like the engine's writer: workload, phase,
// transactions first, label.
func keyLess(a, b metrics.Key) bool {
	if a.Workload != b.Workload {
		return a.Workload < b.Workload
	}
	if a.Phase != b.Phase {
		return a.Phase < b.Phase
	}
	if a.Tx != b.Tx {
		return a.Tx
	}
	return a.Label < b.Label
}
