// Package jstat imports jstat output (-gc, -gcutil, -gccapacity, -gcnew,
// -gcold and the like; any option whose output is one table of numbers) as
// JVM series named after jstat's own columns, the names the live jvm
// monitor uses. Times come from the -t column (seconds since the JVM
// started) plus the JVM start or the first sample's time, or without -t
// from the first sample's time and the interval.
package jstat

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Config describes one jstat log.
type Config struct {
	Path string
	// Target names the JVM in the report (default: the file name).
	Target string
	// JVMStart is when the JVM started: with -t, sample time = JVMStart +
	// Timestamp.
	JVMStart time.Time
	// Start is the time of the first sample: with -t it fixes JVMStart;
	// without -t, sample k is at Start + k × Interval.
	Start    time.Time
	Interval time.Duration
}

// Source imports one jstat log.
type Source struct{ cfg Config }

// New returns a source for cfg.
func New(cfg Config) *Source {
	if cfg.Target == "" {
		cfg.Target = importer.FileStem(cfg.Path)
	}
	return &Source{cfg: cfg}
}

// Describe says what the source is.
func (s *Source) Describe() string { return "jstat " + s.cfg.Path + " (JVM " + s.cfg.Target + ")" }

var _ importer.Source = (*Source)(nil)

// knownColumns lists every column jstat's table options print, to
// recognise a header line.
const knownColumns = `S0C S1C S0U S1U EC EU OC OU MC MU CCSC CCSU YGC YGCT FGC FGCT CGC CGCT GCT
		S0 S1 E O M CCS NGCMN NGCMX NGC OGCMN OGCMX OGC MCMN MCMX CCSMN CCSMX TT MTT DSS PGCMN PGCMX PGC PC PU P
		LGCC GCC Timestamp`

// unitOf returns the unit of a jstat column.
func unitOf(col string, util bool) string {
	switch {
	case col == "YGC" || col == "FGC" || col == "CGC" || col == "TT" || col == "MTT":
		return ""
	case strings.HasSuffix(col, "T"):
		return "s"
	case util:
		return "%"
	}
	return "KB"
}

// Import reads the log into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	f, err := os.Open(s.cfg.Path)
	if err != nil {
		return fmt.Errorf("opening jstat log: %w", err)
	}
	defer f.Close()
	return s.read(ctx, run, f)
}

func (s *Source) read(ctx context.Context, run *importer.Run, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4096)
	first, _, _ := bytes.Cut(head, []byte{'\n'})
	if !isHeader(strings.Fields(string(first))) {
		return importer.Refuse(s.cfg.Path, "jstat output (a header such as S0C S1C … GCT)", head)
	}
	var (
		cols     []string
		util     bool
		tsCol    = -1
		row      int
		w        *importer.SeriesWriter
		probs    = run.Problems()
		sc       = bufio.NewScanner(br)
		lineNo   int64
		jvmStart = s.cfg.JVMStart
		prevT    time.Time // previous sample, for gc_time_pct
		prevGCT  float64
	)
	sc.Buffer(make([]byte, 4096), 1<<20)
	for sc.Scan() {
		if lineNo%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if isHeader(fields) {
			if cols != nil && strings.Join(cols, " ") != strings.Join(fields, " ") {
				return fmt.Errorf("%s:%d: the columns changed (%q after %q): one jstat option per file", s.cfg.Path, lineNo, strings.Join(fields, " "), strings.Join(cols, " "))
			}
			cols = fields
			tsCol = -1
			util = false
			for i, c := range cols {
				switch c {
				case "Timestamp":
					tsCol = i
				case "S0", "E", "O", "M":
					util = true
				}
			}
			continue
		}
		if cols == nil {
			probs.Add(importer.Problem{File: s.cfg.Path, Line: lineNo, Reason: "data before the column header", Text: importer.Quote([]byte(line))})
			continue
		}
		if len(fields) != len(cols) {
			probs.Add(importer.Problem{File: s.cfg.Path, Line: lineNo, Reason: fmt.Sprintf("%d fields, want %d", len(fields), len(cols)), Text: importer.Quote([]byte(line))})
			continue
		}
		vals := make([]float64, len(cols))
		bad := false
		for i, f := range fields {
			if f == "-" {
				vals[i] = math.NaN() // not applicable to this collector
				continue
			}
			// jstat prints numbers in the JVM's locale: "1234,5" in Danish.
			if strings.IndexByte(f, ',') >= 0 && strings.IndexByte(f, '.') < 0 {
				f = strings.Replace(f, ",", ".", 1)
			}
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				bad = true
				break
			}
			vals[i] = v
		}
		if bad {
			probs.Add(importer.Problem{File: s.cfg.Path, Line: lineNo, Reason: "a value is not a number", Text: importer.Quote([]byte(line))})
			continue
		}
		var t time.Time
		switch {
		case tsCol >= 0 && !jvmStart.IsZero():
			t = jvmStart.Add(time.Duration(vals[tsCol] * float64(time.Second)))
		case tsCol >= 0 && !s.cfg.Start.IsZero():
			jvmStart = s.cfg.Start.Add(-time.Duration(vals[tsCol] * float64(time.Second)))
			t = s.cfg.Start
		case tsCol >= 0:
			return fmt.Errorf("%s: jstat -t gives seconds since the JVM started; give --jvm-start, or --start with the time of the first sample", s.cfg.Path)
		case s.cfg.Start.IsZero() || s.cfg.Interval <= 0:
			return fmt.Errorf("%s: jstat output without -t: give --start (time of the first sample) and --interval (jstat's interval)", s.cfg.Path)
		default:
			t = s.cfg.Start.Add(time.Duration(row) * s.cfg.Interval)
		}
		row++
		if w == nil {
			var err error
			if w, err = run.Series(s.cfg.Target, importer.KindJVM, "import: jstat", s.cfg.Interval); err != nil {
				return err
			}
		}
		get := map[string]float64{}
		for i, c := range cols {
			if i == tsCol || math.IsNaN(vals[i]) {
				continue
			}
			w.Add(t, c, unitOf(c, util), vals[i])
			get[c] = vals[i]
		}
		// Reference 000's HeapU and HeapC: the young generation's use and
		// capacity (S0+S1+Eden), and the whole heap's use.
		// Names and units as the live jvm monitor writes them
		// (monitor.MetricHeapUsedBytes …), so the report's heap chart and
		// figures find them.
		if sum, ok := sum(get, "S0U", "S1U", "EU"); ok {
			w.Add(t, "young_used", "KB", sum)
			if ou, ok := get["OU"]; ok {
				w.Add(t, monitor.MetricHeapUsedBytes, "bytes", (sum+ou)*1024)
			}
		}
		if sum, ok := sum(get, "S0C", "S1C", "EC"); ok {
			w.Add(t, "young_capacity", "KB", sum)
			if oc, ok := get["OC"]; ok {
				w.Add(t, monitor.MetricHeapCommittedBytes, "bytes", (sum+oc)*1024)
			}
		}
		if gct, ok := get["GCT"]; ok {
			if !prevT.IsZero() && t.After(prevT) && gct >= prevGCT {
				w.Add(t, monitor.MetricGCTimePct, "%", (gct-prevGCT)/t.Sub(prevT).Seconds()*100)
			}
			prevT, prevGCT = t, gct
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", s.cfg.Path, err)
	}
	if w == nil {
		return fmt.Errorf("%s: no jstat samples", s.cfg.Path)
	}
	run.AddSource(s.Describe())
	run.SetOrigin(rundir.SourceSystem, rundir.Holds{})
	run.Logf("%s: %d samples", s.cfg.Path, w.Samples())
	return nil
}

func sum(m map[string]float64, keys ...string) (float64, bool) {
	var s float64
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			return 0, false
		}
		s += v
	}
	return s, true
}

// isHeader reports whether fields are jstat column names.
func isHeader(fields []string) bool {
	if len(fields) < 2 {
		return false
	}
	for _, f := range fields {
		if !slices.Contains(strings.Fields(knownColumns), f) {
			return false
		}
	}
	return true
}
