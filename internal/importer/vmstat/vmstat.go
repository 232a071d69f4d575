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

// column is a vmstat column's metric name and unit. Memory is in KiB, as
// vmstat prints it unless -S is given.
type column struct{ metric, unit string }

var columns = map[string]column{
	"r": {"procs_running", ""}, "b": {"procs_blocked", ""},
	"swpd": {"swap_used", "KB"}, "free": {"mem_free", "KB"}, "buff": {"mem_buffers", "KB"},
	"cache": {"mem_cache", "KB"}, "inact": {"mem_inactive", "KB"}, "active": {"mem_active", "KB"},
	"si": {"swap_in", "KB/s"}, "so": {"swap_out", "KB/s"}, "bi": {"blocks_in", "1/s"}, "bo": {"blocks_out", "1/s"},
	"in": {"interrupts", "1/s"}, "cs": {"context_switches", "1/s"},
	"us": {"cpu_user", "%"}, "sy": {"cpu_system", "%"}, "id": {"cpu_idle", "%"}, "wa": {"cpu_iowait", "%"},
	"st": {"cpu_steal", "%"}, "gu": {"cpu_guest", "%"},
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
			w.Add(t, c.metric, c.unit, vals[i])
		}
		if c := cpuBusy(cols, vals); c >= 0 {
			w.Add(t, "cpu_busy", "%", c)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", s.cfg.Path, err)
	}
	if w == nil {
		return fmt.Errorf("%s: no vmstat reports", s.cfg.Path)
	}
	run.AddSource(s.Describe())
	run.Note("%s: the first report (averages since boot) left out", s.cfg.Path)
	if !stamped {
		run.Note("%s: no timestamps; report k placed at %s + k × %s", s.cfg.Path, s.cfg.Start.UTC().Format(time.RFC3339), interval)
	}
	run.Logf("%s: %d reports", s.cfg.Path, w.Samples())
	return nil
}

func cpuBusy(cols []column, vals []float64) float64 {
	for i, c := range cols {
		if c.metric == "cpu_idle" {
			return 100 - vals[i]
		}
	}
	return -1
}

func clockErr(run *importer.Run) error {
	_, err := run.Clock().Zone("vmstat timestamps")
	if err == nil {
		err = errors.New("no zone")
	}
	return err
}
