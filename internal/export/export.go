// Package export writes a run directory's results as tables for analysts:
// Parquet (github.com/parquet-go/parquet-go) or CSV, one file per table.
//
//	intervals  one row per second per workload, phase and label: count, errors,
//	           min/max/mean/p50/p90/p95/p99 ms, the exact sum of response times
//	load       one row per second per workload: active users, dropped iterations
//	samples    one row per request or transaction (only when samples.jtl was kept)
//	monitor    one row per monitor reading (only when the run had monitors)
//
// The columns are documented in docs/export.md; they are the struct tags
// below, so the documentation test keeps them in step.
package export

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Format is an output file format.
type Format string

// Formats.
const (
	Parquet Format = "parquet"
	CSV     Format = "csv"
)

// IntervalRow is one second of one label of one workload in one phase. Times
// are milliseconds; Time is the start of the second (UTC).
type IntervalRow struct {
	Time        time.Time `parquet:"time,timestamp(millisecond)"`
	Workload    string    `parquet:"workload"`
	Phase       string    `parquet:"phase"`
	Label       string    `parquet:"label"`
	Transaction bool      `parquet:"transaction"`
	Derived     bool      `parquet:"derived"`
	Count       int64     `parquet:"count"`
	Errors      int64     `parquet:"errors"`
	SumMs       float64   `parquet:"sum_ms"`
	MinMs       float64   `parquet:"min_ms"`
	MaxMs       float64   `parquet:"max_ms"`
	MeanMs      float64   `parquet:"mean_ms"`
	P50Ms       float64   `parquet:"p50_ms"`
	P90Ms       float64   `parquet:"p90_ms"`
	P95Ms       float64   `parquet:"p95_ms"`
	P99Ms       float64   `parquet:"p99_ms"`
	ServiceMs   float64   `parquet:"service_sum_ms"`
	BytesRecv   int64     `parquet:"bytes_received"`
	BytesSent   int64     `parquet:"bytes_sent"`
}

// LoadRow is one workload's load at the end of one second.
type LoadRow struct {
	Time     time.Time `parquet:"time,timestamp(millisecond)"`
	Workload string    `parquet:"workload"`
	Users    int64     `parquet:"users"`
	Dropped  int64     `parquet:"dropped_iterations"`
}

// SampleRow is one line of samples.jtl. Times are milliseconds as the
// sample log holds them.
type SampleRow struct {
	Time      time.Time `parquet:"time,timestamp(millisecond)"` // intended start
	Label     string    `parquet:"label"`
	ElapsedMs int64     `parquet:"elapsed_ms"` // from the intended start
	ServiceMs int64     `parquet:"service_ms"` // from the actual send
	LatencyMs int64     `parquet:"latency_ms"` // time to first byte
	ConnectMs int64     `parquet:"connect_ms"`
	Code      string    `parquet:"response_code"` // HTTP status or error class
	Success   bool      `parquet:"success"`
	Failure   string    `parquet:"failure_message"`
	Thread    string    `parquet:"thread"`
	BytesRecv int64     `parquet:"bytes_received"`
	BytesSent int64     `parquet:"bytes_sent"`
	URL       string    `parquet:"url"`
}

// MonitorRow is one monitor reading; a gap (target lost) has a null value.
type MonitorRow struct {
	Time   time.Time `parquet:"time,timestamp(millisecond)"`
	Target string    `parquet:"target"`
	Kind   string    `parquet:"kind"`
	Metric string    `parquet:"metric"`
	Unit   string    `parquet:"unit"`
	Value  *float64  `parquet:"value,optional"`
}

// File is one written table.
type File struct {
	Table string
	Path  string
	Rows  int64
}

// Run exports the run directory dir into out in the given format and returns
// the files written.
func Run(dir, out string, f Format) ([]File, error) {
	if f != Parquet && f != CSV {
		return nil, fmt.Errorf("format %q: want parquet or csv", f)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", out, err)
	}
	var files []File
	add := func(table string, n int64, err error) error {
		if err != nil {
			return fmt.Errorf("exporting %s: %w", table, err)
		}
		files = append(files, File{Table: table, Path: filepath.Join(out, table+"."+string(f)), Rows: n})
		return nil
	}
	// Intervals and load come from one pass over intervals.ndjson.
	iw, err := newTable[IntervalRow](filepath.Join(out, "intervals."+string(f)), f)
	if err != nil {
		return nil, err
	}
	lw, err := newTable[LoadRow](filepath.Join(out, "load."+string(f)), f)
	if err != nil {
		iw.abort()
		return nil, err
	}
	phaseName := func(i int) string {
		if i >= 0 && i < len(info.Phases) {
			return info.Phases[i].Name
		}
		return ""
	}
	var dec metrics.HistDecoder
	var sp metrics.Sparse
	err = rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
		t := time.Unix(r.T, 0).UTC()
		if r.Label == "" {
			for w, u := range r.Users {
				if err := lw.write(LoadRow{Time: t, Workload: w, Users: int64(u), Dropped: r.Dropped[w]}); err != nil {
					return err
				}
			}
			for w, d := range r.Dropped {
				if _, ok := r.Users[w]; !ok {
					if err := lw.write(LoadRow{Time: t, Workload: w, Dropped: d}); err != nil {
						return err
					}
				}
			}
			return nil
		}
		row := IntervalRow{Time: t, Workload: r.Workload, Phase: phaseName(r.Phase), Label: r.Label, Transaction: r.Tx,
			Derived: r.Derived, Count: r.Count, Errors: r.Errors, SumMs: float64(r.SumUs) / 1000,
			ServiceMs: float64(r.SvcUs) / 1000, BytesRecv: r.Recv, BytesSent: r.Sent}
		if r.Count > 0 {
			row.MinMs, row.MaxMs = float64(r.MinUs)/1000, float64(r.MaxUs)/1000
			row.MeanMs = float64(r.SumUs) / float64(r.Count) / 1000
			sp = metrics.Sparse{Values: sp.Values[:0], High: sp.High[:0], Counts: sp.Counts[:0]}
			if r.Hist != "" {
				if err := dec.Decode(r.Hist, &sp); err != nil {
					return fmt.Errorf("second %d, label %q: %w", r.T, r.Label, err)
				}
				q := func(p float64) float64 {
					return float64(min(max(sp.ValueAtPercentile(p), r.MinUs), r.MaxUs)) / 1000
				}
				row.P50Ms, row.P90Ms, row.P95Ms, row.P99Ms = q(50), q(90), q(95), q(99)
			}
		}
		return iw.write(row)
	})
	if err != nil {
		iw.abort()
		lw.abort()
		return nil, err
	}
	if err := add("intervals", iw.n, iw.close()); err != nil {
		lw.abort()
		return nil, err
	}
	if err := add("load", lw.n, lw.close()); err != nil {
		return nil, err
	}
	if n, err := exportSamples(dir, out, f); err != nil || n >= 0 {
		if err := add("samples", n, err); err != nil {
			return nil, err
		}
	}
	series, _, err := monitor.Read(dir)
	if err != nil {
		return nil, err
	}
	if len(series) > 0 {
		mw, err := newTable[MonitorRow](filepath.Join(out, "monitor."+string(f)), f)
		if err != nil {
			return nil, err
		}
		for _, s := range series {
			for _, p := range s.Points {
				row := MonitorRow{Time: p.T.UTC(), Target: s.Target, Kind: s.Kind, Metric: s.Metric, Unit: s.Unit}
				if !math.IsNaN(p.V) {
					v := p.V
					row.Value = &v
				}
				if err := mw.write(row); err != nil {
					mw.abort()
					return nil, err
				}
			}
		}
		if err := add("monitor", mw.n, mw.close()); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// exportSamples converts samples.jtl; it returns −1 when the run kept none.
func exportSamples(dir, out string, f Format) (int64, error) {
	path := filepath.Join(dir, rundir.SamplesFile)
	in, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return -1, nil
	}
	if err != nil {
		return 0, err
	}
	defer in.Close()
	r := csv.NewReader(bufio.NewReaderSize(in, 256<<10))
	r.ReuseRecord = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	for _, need := range []string{"timeStamp", "elapsed", "label", "success"} {
		if _, ok := col[need]; !ok {
			return 0, fmt.Errorf("%s:1: no %s column", path, need)
		}
	}
	w, err := newTable[SampleRow](filepath.Join(out, "samples."+string(f)), f)
	if err != nil {
		return 0, err
	}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && pe.Err == csv.ErrFieldCount {
				// A torn last line of a killed run: only acceptable at the end.
				if _, next := r.Read(); errors.Is(next, io.EOF) {
					break
				}
			}
			w.abort()
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return rec[i]
			}
			return ""
		}
		num := func(name string) (int64, error) {
			s := get(name)
			if s == "" {
				return 0, nil
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s:%d: column %s: %w", path, line, name, err)
			}
			return v, nil
		}
		var row SampleRow
		var ts int64
		for _, c := range []struct {
			name string
			dst  *int64
		}{{"timeStamp", &ts}, {"elapsed", &row.ElapsedMs}, {"serviceTime", &row.ServiceMs}, {"Latency", &row.LatencyMs},
			{"Connect", &row.ConnectMs}, {"bytes", &row.BytesRecv}, {"sentBytes", &row.BytesSent}} {
			if *c.dst, err = num(c.name); err != nil {
				w.abort()
				return 0, err
			}
		}
		row.Time = time.UnixMilli(ts).UTC()
		row.Label, row.Code, row.Failure = get("label"), get("responseCode"), get("failureMessage")
		row.Thread, row.URL = get("threadName"), get("URL")
		row.Success = get("success") == "true"
		if err := w.write(row); err != nil {
			w.abort()
			return 0, err
		}
	}
	return w.n, w.close()
}

// table writes rows of T to one file.
type table[T any] struct {
	f    *os.File
	pw   *parquet.GenericWriter[T]
	cw   *csv.Writer
	bw   *bufio.Writer
	n    int64
	buf  []T
	cols []string
}

func newTable[T any](path string, f Format) (*table[T], error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	t := &table[T]{f: fh}
	if f == Parquet {
		t.pw = parquet.NewGenericWriter[T](fh, parquet.Compression(&parquet.Zstd))
		t.buf = make([]T, 0, 1024)
		return t, nil
	}
	t.bw = bufio.NewWriterSize(fh, 256<<10)
	t.cw = csv.NewWriter(t.bw)
	t.cols = Columns[T]()
	if err := t.cw.Write(t.cols); err != nil {
		fh.Close()
		return nil, err
	}
	return t, nil
}

func (t *table[T]) write(row T) error {
	t.n++
	if t.pw != nil {
		t.buf = append(t.buf, row)
		if len(t.buf) == cap(t.buf) {
			return t.flush()
		}
		return nil
	}
	return t.cw.Write(csvRecord(row))
}

func (t *table[T]) flush() error {
	if len(t.buf) == 0 {
		return nil
	}
	_, err := t.pw.Write(t.buf)
	t.buf = t.buf[:0]
	return err
}

func (t *table[T]) close() error {
	var err error
	if t.pw != nil {
		err = t.flush()
		if cerr := t.pw.Close(); err == nil {
			err = cerr
		}
	} else {
		t.cw.Flush()
		err = t.cw.Error()
		if ferr := t.bw.Flush(); err == nil {
			err = ferr
		}
	}
	if cerr := t.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (t *table[T]) abort() {
	t.f.Close()
	os.Remove(t.f.Name())
}

// Columns returns the column names of a row type, in order.
func Columns[T any]() []string {
	rt := reflect.TypeFor[T]()
	out := make([]string, rt.NumField())
	for i := range out {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("parquet"), ",")
		out[i] = name
	}
	return out
}

// csvRecord renders a row: times in RFC 3339 with milliseconds (UTC), floats
// in their shortest exact form, a null as the empty field.
func csvRecord(row any) []string {
	v := reflect.ValueOf(row)
	out := make([]string, v.NumField())
	for i := range out {
		f := v.Field(i)
		switch x := f.Interface().(type) {
		case time.Time:
			out[i] = x.UTC().Format("2006-01-02T15:04:05.000Z")
		case string:
			out[i] = x
		case bool:
			out[i] = strconv.FormatBool(x)
		case int64:
			out[i] = strconv.FormatInt(x, 10)
		case float64:
			out[i] = strconv.FormatFloat(x, 'g', -1, 64)
		case *float64:
			if x != nil {
				out[i] = strconv.FormatFloat(*x, 'g', -1, 64)
			}
		default:
			out[i] = fmt.Sprint(x)
		}
	}
	return out
}
