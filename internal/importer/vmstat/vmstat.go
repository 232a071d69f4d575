// Package vmstat imports vmstat output as host series: with the -t
// timestamp columns, or without them given the time of the first report and
// the interval (reference 000's 10-second logs had none). The first report
// of a vmstat run holds averages since boot, not a measurement, and is left
// out.
package vmstat

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Config describes one vmstat log.
type Config struct {
	Path string
	// Target names the host in the report (default: the file name).
	Target string
	// Start is the time of the first report, for logs without -t.
	Start time.Time
	// Interval is vmstat's delay argument, for logs without -t.
	Interval time.Duration
}

// Source imports one vmstat log.
type Source struct{ cfg Config }

// New returns a source for cfg.
func New(cfg Config) *Source {
	if cfg.Target == "" {
		cfg.Target = importer.FileStem(cfg.Path)
	}
	return &Source{cfg: cfg}
}

// Describe says what the source is.
func (s *Source) Describe() string { return "vmstat " + s.cfg.Path + " (host " + s.cfg.Target + ")" }

var _ importer.Source = (*Source)(nil)

// column is a vmstat column's metric name and unit, in the live host
// monitor's naming (monitor.Metric…), and the factor from vmstat's unit to
// that one: memory and swap are in KiB as vmstat prints them unless -S is
// given, bi/bo in 1 KiB blocks per second.
type column struct {
	metric, unit string
	scale        float64
}

var columns = map[string]column{
	"r": {monitor.MetricProcsRunning, "", 1}, "b": {monitor.MetricProcsBlocked, "", 1},
	"swpd": {monitor.MetricSwapUsedBytes, "bytes", 1024}, "free": {monitor.MetricMemFreeBytes, "bytes", 1024},
	"buff": {monitor.MetricMemBuffersBytes, "bytes", 1024}, "cache": {monitor.MetricMemCachedBytes, "bytes", 1024},
	"inact": {"mem_inactive_bytes", "bytes", 1024}, "active": {"mem_active_bytes", "bytes", 1024},
	"si": {"swap_in_bytes_per_s", "bytes/s", 1024}, "so": {"swap_out_bytes_per_s", "bytes/s", 1024},
	"bi": {monitor.MetricDiskReadPerS, "bytes/s", 1024}, "bo": {monitor.MetricDiskWritePerS, "bytes/s", 1024},
	"in": {monitor.MetricInterruptsPerS, "1/s", 1}, "cs": {monitor.MetricCtxSwitchesPerS, "1/s", 1},
	"us": {monitor.MetricCPUUserPct, "%", 1}, "sy": {monitor.MetricCPUSystemPct, "%", 1}, "id": {monitor.MetricCPUIdlePct, "%", 1},
	"wa": {monitor.MetricCPUIOWaitPct, "%", 1}, "st": {monitor.MetricCPUStealPct, "%", 1}, "gu": {monitor.MetricCPUGuestPct, "%", 1},
}

// Import reads the log into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	f, err := os.Open(s.cfg.Path)
	if err != nil {
		return fmt.Errorf("opening vmstat log: %w", err)
	}
	defer f.Close()
	return s.read(ctx, run, f)
}

func (s *Source) read(ctx context.Context, run *importer.Run, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4096)
	if !bytes.Contains(head, []byte(" us ")) && !bytes.Contains(head, []byte(" us\n")) || !bytes.Contains(head, []byte(" id ")) && !bytes.Contains(head, []byte(" id\n")) {
		return importer.Refuse(s.cfg.Path, "vmstat output (a header with r b … us sy id)", head)
	}
	var (
		cols     []column
		stamped  bool
		loc      = run.Clock().Loc
		row      int
		w        *importer.SeriesWriter
		since    = true
		probs    = run.Problems()
		sc       = bufio.NewScanner(br)
		lineNo   int64
		interval = s.cfg.Interval
	)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		if lineNo%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0, strings.HasPrefix(strings.TrimSpace(line), "procs"):
			continue
		case fields[0] == "r" && len(fields) > 2 && fields[1] == "b":
			cols = cols[:0]
			stamped = false
			for _, h := range fields {
				c, ok := columns[h]
				if !ok {
					// The timestamp column's header is the zone name.
					stamped = true
					zone := h
					if zone == "UTC" || zone == "GMT" {
						if loc == nil {
							loc = time.UTC
						}
					} else if loc == nil {
						return fmt.Errorf("%s:%d: vmstat wrote times in zone %q, which is ambiguous as an abbreviation: %w", s.cfg.Path, lineNo,
							zone, clockErr(run))
					}
					break
				}
				cols = append(cols, c)
			}
			continue
		}
		if cols == nil {
			probs.Add(importer.Problem{File: s.cfg.Path, Line: lineNo, Reason: "data before the column header", Text: importer.Quote([]byte(line))})
			continue
		}
		want := len(cols)
		if stamped {
			want += 2
		}
		if len(fields) != want {
			probs.Add(importer.Problem{File: s.cfg.Path, Line: lineNo, Reason: fmt.Sprintf("%d fields, want %d", len(fields), want), Text: importer.Quote([]byte(line))})
			continue
		}
		var t time.Time
		if stamped {
			var err error
			t, err = time.ParseInLocation("2006-01-02 15:04:05", fields[len(cols)]+" "+fields[len(cols)+1], loc)
			if err != nil {
				probs.Add(importer.Problem{File: s.cfg.Path, Line: lineNo, Reason: "bad timestamp", Text: importer.Quote([]byte(line))})
				continue
			}
		} else {
			if s.cfg.Start.IsZero() || interval <= 0 {
				return fmt.Errorf("%s: vmstat output without timestamps (-t): give --start (time of the first report) and --interval (vmstat's delay)", s.cfg.Path)
			}
			t = s.cfg.Start.Add(time.Duration(row) * interval)
		}
		row++
		vals := make([]float64, len(cols))
		ok := true
		for i := range cols {
			v, err := strconv.ParseFloat(fields[i], 64)
			if err != nil {
				ok = false
				break
			}
			vals[i] = v
		}
		if !ok {
			probs.Add(importer.Problem{File: s.cfg.Path, Line: lineNo, Reason: "a value is not a number", Text: importer.Quote([]byte(line))})
			continue
		}
		if since {
			since = false // the since-boot report
			continue
		}
		if w == nil {
			var err error
			if w, err = run.Series(s.cfg.Target, importer.KindHost, "import: vmstat", interval); err != nil {
				return err
			}
		}
		for i, c := range cols {
			w.Add(t, c.metric, c.unit, vals[i]*c.scale)
		}
		if c := cpuBusy(cols, vals); c >= 0 {
			w.Add(t, monitor.MetricCPUBusyPct, "%", c)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", s.cfg.Path, err)
	}
	if w == nil {
		return fmt.Errorf("%s: no vmstat reports", s.cfg.Path)
	}
	run.AddSource(s.Describe())
	run.SetOrigin(rundir.SourceSystem, rundir.Holds{})
	run.Note("%s: the first report (averages since boot) left out", s.cfg.Path)
	if !stamped {
		run.Note("%s: no timestamps; report k placed at %s + k × %s", s.cfg.Path, s.cfg.Start.UTC().Format(time.RFC3339), interval)
	}
	run.Logf("%s: %d reports", s.cfg.Path, w.Samples())
	return nil
}

// cpuBusy is the share of CPU time neither idle nor waiting for I/O, as the
// live host monitor defines cpu_busy_pct; −1 without an idle column.
func cpuBusy(cols []column, vals []float64) float64 {
	busy := -1.0
	for i, c := range cols {
		if c.metric == monitor.MetricCPUIdlePct {
			busy = 100 - vals[i]
		}
	}
	for i, c := range cols {
		if c.metric == monitor.MetricCPUIOWaitPct && busy >= 0 {
			busy -= vals[i]
		}
	}
	return busy
}

func clockErr(run *importer.Run) error {
	_, err := run.Clock().Zone("vmstat timestamps")
	if err == nil {
		err = errors.New("no zone")
	}
	return err
}
