package rundir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
)

// IntervalRecord is one line of intervals.ndjson: either the aggregate of one
// label (of one workload, in one phase) over one second, or — when Users is
// set — the active users per workload at the end of that second.
//
// Seconds are Unix seconds of sample completion.
type IntervalRecord struct {
	T        int64  `json:"t"`
	Workload string `json:"w,omitempty"`
	Phase    int    `json:"ph"`
	Label    string `json:"label,omitempty"`
	Tx       bool   `json:"tx,omitempty"`
	// Derived marks a label computed from other samples (an imported
	// request's time net of its downstream calls): shown, never counted in
	// totals, which would count the request twice.
	Derived bool             `json:"dv,omitempty"`
	Count   int64            `json:"n,omitempty"`
	Errors  int64            `json:"err,omitempty"`
	SumUs   int64            `json:"sum_us,omitempty"`
	MinUs   int64            `json:"min_us,omitempty"`
	MaxUs   int64            `json:"max_us,omitempty"`
	SvcUs   int64            `json:"svc_us,omitempty"`
	Sent    int64            `json:"sent,omitempty"`
	Recv    int64            `json:"recv,omitempty"`
	Errs    []ErrRecord      `json:"errs,omitempty"`
	Hist    string           `json:"hist,omitempty"`
	Users   map[string]int   `json:"users,omitempty"`
	Dropped map[string]int64 `json:"dropped,omitempty"` // open-model iterations not started (max_users reached or late)
}

// ErrRecord is one failure kind within an interval record.
type ErrRecord struct {
	Class   string `json:"class"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"msg,omitempty"`
	Count   int64  `json:"n"`
}

// Key returns the aggregation key of a label record.
func (r *IntervalRecord) Key() metrics.Key {
	return metrics.Key{Workload: r.Workload, Phase: r.Phase, Label: r.Label, Tx: r.Tx, Derived: r.Derived}
}

// Agg decodes the record into an aggregate.
func (r *IntervalRecord) Agg() (*metrics.Agg, error) {
	a := metrics.NewAgg()
	if r.Hist != "" {
		h, err := metrics.DecodeHist(r.Hist)
		if err != nil {
			return nil, err
		}
		a.Hist = h
	}
	a.Count, a.SumUs, a.Sent, a.Recv = r.Count, r.SumUs, r.Sent, r.Recv
	a.SumServiceUs = r.SvcUs
	if r.Count > 0 {
		a.MinUs, a.MaxUs = r.MinUs, r.MaxUs
	}
	for _, e := range r.Errs {
		c, _ := core.ParseErrorClass(e.Class)
		a.AddError(metrics.ErrKey{Class: c, Status: e.Status, Message: e.Message}, e.Count)
	}
	if d := r.Errors - a.Errors; d > 0 {
		a.Errors += d
	}
	return a, nil
}

// AddTo adds the record into a. It returns the decoded histogram (empty
// without samples) for callers that also want this second's percentiles.
func (r *IntervalRecord) AddTo(a *metrics.Agg) (*metrics.Sparse, error) {
	var dec metrics.HistDecoder
	sp := &metrics.Sparse{}
	if r.Hist != "" {
		if err := dec.Decode(r.Hist, sp); err != nil {
			return nil, err
		}
	}
	r.AddDecoded(a, sp)
	return sp, nil
}

// AddDecoded adds the record into a, its histogram already decoded into sp.
func (r *IntervalRecord) AddDecoded(a *metrics.Agg, sp *metrics.Sparse) {
	sp.AddTo(a.Hist)
	r.AddScalars(a)
}

// AddScalars adds all of the record but its histogram into a: counts,
// sums, extremes, bytes and failures.
func (r *IntervalRecord) AddScalars(a *metrics.Agg) {
	a.Count += r.Count
	a.SumUs += r.SumUs
	a.SumServiceUs += r.SvcUs
	a.Sent += r.Sent
	a.Recv += r.Recv
	if r.Count > 0 {
		a.MinUs = min(a.MinUs, r.MinUs)
		a.MaxUs = max(a.MaxUs, r.MaxUs)
	}
	detailed := int64(0)
	for _, e := range r.Errs {
		c, _ := core.ParseErrorClass(e.Class)
		a.AddError(metrics.ErrKey{Class: c, Status: e.Status, Message: e.Message}, e.Count)
		detailed += e.Count
	}
	if d := r.Errors - detailed; d > 0 {
		a.Errors += d // failures recorded without detail (imports)
	}
}

// RecordOf encodes an aggregate as an interval record.
func RecordOf(t int64, k metrics.Key, a *metrics.Agg) (IntervalRecord, error) {
	var enc metrics.HistEncoder
	return recordWith(&enc, t, k, a)
}

// recordWith is RecordOf with the caller's histogram encoder.
func recordWith(enc *metrics.HistEncoder, t int64, k metrics.Key, a *metrics.Agg) (IntervalRecord, error) {
	// Names keep bytes that are not UTF-8 as \xNN text: JSON would turn
	// them into U+FFFD and lose them.
	r := IntervalRecord{T: t, Workload: core.EscapeBytes(k.Workload), Phase: k.Phase, Label: core.EscapeBytes(k.Label), Tx: k.Tx, Derived: k.Derived,
		Count: a.Count, Errors: a.Errors, SumUs: a.SumUs, SvcUs: a.SumServiceUs, Sent: a.Sent, Recv: a.Recv}
	if a.Count > 0 {
		r.MinUs, r.MaxUs = a.MinUs, a.MaxUs
		h, err := enc.EncodeStored(a.Hist)
		if err != nil {
			return r, err
		}
		r.Hist = h
	}
	for _, e := range a.SortedErrors() {
		r.Errs = append(r.Errs, ErrRecord{Class: e.Class.String(), Status: e.Status, Message: core.EscapeBytes(e.Message), Count: e.Count})
	}
	return r, nil
}

// Writer appends samples and interval records to a run directory.
type Writer struct {
	dir       string
	samples   *os.File
	intervals *os.File
	iw        *bufio.Writer
	line      []byte              // a record's JSON line
	henc      metrics.HistEncoder // reused for every second's histograms
	failed    error               // the first failed write; nothing is written after it
}

// SpareFile is room a live run's directory holds in reserve while the
// run writes (Reserve): SpareSize bytes, given back (the file removed) at the first
// failed write and when the writer closes, so that run.json can still be
// finalised on a disk the results filled. A run killed outright leaves it.
const (
	SpareFile = ".spare"
	SpareSize = 64 << 10
)

// Create makes dir (it may exist but must not hold a run) and writes the
// plan, run.json and the sample log header.
func Create(dir string, info *Info, planSource []byte, rawSamples bool) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating run directory: %w", err)
	}
	if _, err := os.Stat(filepath.Join(dir, InfoFile)); err == nil {
		return nil, fmt.Errorf("run directory %s already holds a run", dir)
	}
	if info.ID == "" {
		info.ID = NewID()
	}
	if planSource != nil {
		if err := os.WriteFile(filepath.Join(dir, PlanFile), planSource, 0o644); err != nil {
			return nil, fmt.Errorf("writing plan copy: %w", err)
		}
	}
	if err := WriteInfo(dir, info); err != nil {
		return nil, err
	}
	w := &Writer{dir: dir}
	var err error
	if rawSamples {
		if w.samples, err = os.Create(filepath.Join(dir, SamplesFile)); err != nil {
			return nil, fmt.Errorf("creating sample log: %w", err)
		}
		if _, err := w.samples.WriteString(JTLHeader); err != nil {
			return nil, fmt.Errorf("writing sample log: %w", err)
		}
	}
	if w.intervals, err = os.Create(filepath.Join(dir, IntervalsFile)); err != nil {
		return nil, fmt.Errorf("creating interval log: %w", err)
	}
	w.iw = bufio.NewWriterSize(w.intervals, 64<<10)
	return w, nil
}

// Reserve writes the spare room (SpareFile) a live run keeps for its last
// run.json.
func (w *Writer) Reserve() error {
	if err := os.WriteFile(filepath.Join(w.dir, SpareFile), make([]byte, SpareSize), 0o644); err != nil {
		return fmt.Errorf("reserving room for run.json in %s: %w", w.dir, err)
	}
	return nil
}

// fail records the first failed write and gives back the spare room.
func (w *Writer) fail(err error) error {
	if w.failed == nil {
		w.failed = err
		_ = os.Remove(filepath.Join(w.dir, SpareFile))
	}
	return err
}

// Dir is the run directory.
func (w *Writer) Dir() string { return w.dir }

// WriteInterval appends one second: raw sample lines, one record per key and
// a users record; then flushes both files to the kernel so a SIGKILL loses
// nothing already written.
func (w *Writer) WriteInterval(t time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64) error {
	if w.failed != nil {
		return w.failed
	}
	if err := w.writeInterval(t, iv, users, dropped); err != nil {
		return w.fail(err)
	}
	return nil
}

func (w *Writer) writeInterval(t time.Time, iv *metrics.Interval, users map[string]int, dropped map[string]int64) error {
	for _, raw := range iv.Raw {
		if err := w.WriteSamples(raw); err != nil {
			return err
		}
	}
	sec := t.Unix()
	keys := make([]metrics.Key, 0, len(iv.Aggs))
	for k, a := range iv.Aggs {
		if a.Count > 0 || a.Errors > 0 {
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keyLess(keys[i], keys[j]) })
	for _, k := range keys {
		rec, err := recordWith(&w.henc, sec, k, iv.Aggs[k])
		if err != nil {
			return err
		}
		if err := w.WriteRecord(&rec); err != nil {
			return err
		}
	}
	if len(users) > 0 || len(dropped) > 0 {
		if err := w.WriteRecord(&IntervalRecord{T: sec, Phase: -1, Users: users, Dropped: dropped}); err != nil {
			return err
		}
	}
	if err := w.iw.Flush(); err != nil {
		return fmt.Errorf("writing interval log: %w", err)
	}
	return nil
}

// WriteSamples appends raw samples.jtl lines (whole lines), straight to the
// file: they come in buffers of a second's lines or an import's chunk.
func (w *Writer) WriteSamples(b []byte) error {
	if w.samples == nil || len(b) == 0 {
		return nil
	}
	if _, err := w.samples.Write(b); err != nil {
		return fmt.Errorf("writing sample log: %w", err)
	}
	return nil
}

// WriteRecord appends a prepared record (importers, merge).
func (w *Writer) WriteRecord(r *IntervalRecord) error {
	w.line = append(r.AppendJSON(w.line[:0]), '\n')
	if _, err := w.iw.Write(w.line); err != nil {
		return fmt.Errorf("writing interval log: %w", err)
	}
	return nil
}

// Close flushes and closes the files and gives back the spare room.
func (w *Writer) Close() error {
	var errs []error
	if w.iw != nil && w.failed == nil {
		errs = append(errs, w.iw.Flush())
	}
	if err := os.Remove(filepath.Join(w.dir, SpareFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if w.samples != nil {
		errs = append(errs, w.samples.Close())
	}
	if w.intervals != nil {
		errs = append(errs, w.intervals.Close())
	}
	return errors.Join(errs...)
}

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
	if a.Derived != b.Derived {
		return b.Derived
	}
	return a.Label < b.Label
}

// ReadIntervals streams intervals.ndjson to fn in file order. A torn last line
// (a run killed mid-write) is ignored; any other malformed line is an error
// naming the file and line.
func ReadIntervals(dir string, fn func(*IntervalRecord) error) error {
	path := filepath.Join(dir, IntervalsFile)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading intervals: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 256<<10)
	line := 0
	var p Parser
	for {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 {
			line++
			complete := b[len(b)-1] == '\n'
			var rec IntervalRecord
			if uerr := p.Parse(b, &rec); uerr != nil {
				if !complete && errors.Is(err, io.EOF) {
					return nil // torn tail of a killed run
				}
				return fmt.Errorf("%s:%d: %w", path, line, uerr)
			}
			if ferr := fn(&rec); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", path, err)
		}
	}
}
