package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// Series kinds of imported monitor data. They reuse the live monitors' kind
// names where the data is the same (jstat columns are what the jvm monitor
// records), so the report draws imported and live series alike.
const (
	KindHost   = monitor.KindHost   // vmstat
	KindJVM    = monitor.KindJVM    // jstat
	KindCgroup = monitor.KindCgroup // docker stats (a container is a cgroup)
	KindServer = "server"           // per-second figures derived from an access log
)

// seriesDir is <run>/monitor as the import writes it: one CSV file per
// target in the monitor package's long format (monitor.CSVHeader) and an
// events.jsonl with a "started" and a "stopped" event per target, so
// monitor.Read and the report see imported series like live ones.
type seriesDir struct {
	mu      sync.Mutex
	dir     string
	used    map[string]bool
	writers []*SeriesWriter
	events  *os.File
}

// SeriesWriter appends the readings of one imported target. Not safe for
// concurrent use.
type SeriesWriter struct {
	d        *seriesDir
	f        *os.File
	file     string
	target   string
	kind     string
	method   string
	interval time.Duration
	prefix   []byte
	buf      []byte
	samples  int
	lastT    time.Time
	firstT   time.Time
	run      *Run
	err      error
	// implausible counts the readings left out by the outlier rule
	// (outliers.go); skipT is the time of the last one, so its other
	// metrics are not counted again.
	implausible implausible
	skipT       time.Time
	far         int64 // readings outside the bulk (Options.Bulk)
}

// Series opens the series file of target. method names the import
// ("import: vmstat"); interval is the source's sampling interval when it has
// one (0 otherwise).
func (r *Run) Series(target, kind, method string, interval time.Duration) (*SeriesWriter, error) {
	d := r.series
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := os.MkdirAll(d.dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating monitor directory: %w", err)
	}
	stem := monitor.Stem(target)
	for i := 2; d.used[stem]; i++ {
		stem = monitor.Stem(target) + "-" + strconv.Itoa(i)
	}
	d.used[stem] = true
	file := stem + ".csv"
	f, err := os.OpenFile(filepath.Join(d.dir, file), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating series file: %w", err)
	}
	if _, err := f.WriteString(monitor.CSVHeader); err != nil {
		f.Close()
		return nil, fmt.Errorf("writing series header: %w", err)
	}
	w := &SeriesWriter{d: d, f: f, file: file, target: target, kind: kind, method: method, interval: interval, run: r,
		prefix: monitor.LinePrefix(target, kind), implausible: newImplausible()}
	d.writers = append(d.writers, w)
	return w, nil
}

// Add appends one reading.
func (w *SeriesWriter) Add(t time.Time, metric, unit string, v float64) {
	if w.err != nil {
		return
	}
	if !w.skipT.IsZero() && t.Equal(w.skipT) {
		return
	}
	if !t.Equal(w.lastT) && !w.implausible.time(w.run.plausible, saturatedNano(t)) {
		w.skipT = t
		return
	}
	if o := &w.run.opt; o.Bulk && !t.Equal(w.lastT) && (t.Before(o.From) || t.After(o.To)) {
		w.far++
		w.skipT = t
		return
	}
	if !t.Equal(w.lastT) {
		w.samples++
		w.lastT = t
		if w.firstT.IsZero() || t.Before(w.firstT) {
			w.firstT = t
		}
		if w.samples == 1 || len(w.buf) > 64<<10 {
			w.flushBuf()
		}
		w.run.See(t.UnixNano())
	}
	w.buf = monitor.AppendLine(w.buf, t, w.prefix, metric, unit, v)
}

// Samples is the number of distinct times written.
func (w *SeriesWriter) Samples() int { return w.samples }

func (w *SeriesWriter) flushBuf() {
	if len(w.buf) == 0 || w.err != nil {
		return
	}
	if _, err := w.f.Write(w.buf); err != nil {
		w.err = fmt.Errorf("writing %s: %w", w.file, err)
	}
	w.buf = w.buf[:0]
}

func (d *seriesDir) close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var errs []error
	if len(d.writers) == 0 {
		return nil
	}
	ev, err := os.OpenFile(filepath.Join(d.dir, monitor.EventsFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("writing monitor events: %w", err)
	}
	for _, w := range d.writers {
		w.run.noteImplausible(&w.implausible, w.target, "reading")
		if w.far > 0 {
			w.run.noteFar(w.target, "reading", w.far, w.run.opt.From, w.run.opt.To)
		}
		w.flushBuf()
		errs = append(errs, w.err)
		if err := w.f.Close(); err != nil {
			errs = append(errs, fmt.Errorf("closing %s: %w", w.file, err))
		}
		t0, t1 := w.firstT, w.lastT
		if t0.IsZero() {
			t0, t1 = time.Now(), time.Now()
		}
		for _, e := range []map[string]any{
			{"time": t0.UTC(), "target": w.target, "kind": w.kind, "event": monitor.EventStarted,
				"method": w.method, "file": w.file, "interval_s": w.interval.Seconds()},
			{"time": t1.UTC(), "target": w.target, "kind": w.kind, "event": monitor.EventStopped, "samples": w.samples},
		} {
			b, _ := json.Marshal(e)
			if _, err := ev.Write(append(b, '\n')); err != nil {
				errs = append(errs, fmt.Errorf("writing monitor events: %w", err))
			}
		}
	}
	errs = append(errs, ev.Close())
	return errors.Join(errs...)
}
