// Package dockerstats imports what `docker stats` and the Docker Engine
// API record about containers, in three forms:
//
//   - The CLI's table (`docker stats --no-stream` run again and again and
//     appended to a log, or the redrawing TTY output with its ANSI clear
//     codes captured by `script` or `tee`). It has neither times nor a fixed
//     interval, so — as reference 000 says of its docker stats logs — it
//     gives whole-run figures per container only (readings, min/mean/max of
//     CPU %, memory, memory %, PIDs; the increase of the cumulative network
//     and block I/O counters), which go into the run's notes.
//   - `docker stats --format '{{json .}}'` lines: the same human-readable
//     figures ("5.629MiB / 1.952GiB"), whole-run figures too — unless every
//     line starts with a time stamp (a wrapper script's `date -Iseconds`),
//     in which case they are time series.
//   - The Engine API stats stream (GET /containers/{id}/stats: JSON objects
//     one after another, each with its `read` time), which becomes real time
//     series (kind cgroup, the live cgroup monitor's metric names) computed
//     with the docker CLI's formulas: CPU % = Δcpu_usage.total_usage /
//     Δsystem_cpu_usage × online_cpus × 100 against the object's own
//     precpu_stats; memory = usage − total_inactive_file (cgroup v1) or
//     − inactive_file (v2); network summed over interfaces; block I/O
//     summed by operation (read, write).
package dockerstats

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Config describes one docker stats file.
type Config struct {
	Path string
	// Target names the container in the report (default: the container's
	// own name). With several containers in one file it prefixes them:
	// "Target/name".
	Target string
	// Start and Interval place the CLI table's screens in time when the
	// table was written by `docker stats --no-stream` run at a fixed
	// interval (or redrawn every Interval): screen k (from 0) is at Start +
	// k × Interval, and the table becomes time series (charts and per-phase
	// figures) instead of whole-run figures. Both or neither.
	Start    time.Time
	Interval time.Duration
}

// Source imports one docker stats file.
type Source struct{ cfg Config }

// New returns a source for cfg.
func New(cfg Config) *Source { return &Source{cfg: cfg} }

// Describe says what the source is.
func (s *Source) Describe() string { return "docker stats " + s.cfg.Path }

var _ importer.Source = (*Source)(nil)

// format is a kind of docker stats file.
type format int

const (
	formatUnknown format = iota
	formatTable          // the CLI's table
	formatCLIJSON        // --format '{{json .}}'
	formatEngine         // the Engine API stream
)

// detect tells the format from the first bytes of a file.
func detect(head []byte) format {
	text := stripANSI(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), nil)
	for len(text) > 0 {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if i := bytes.IndexByte(line, '{'); i >= 0 && (i == 0 || looksLikeTime(bytes.TrimSpace(line[:i]))) {
			switch {
			case bytes.Contains(head, []byte(`"cpu_stats"`)):
				return formatEngine
			case bytes.Contains(line, []byte(`"CPUPerc"`)) || bytes.Contains(line, []byte(`"MemUsage"`)):
				return formatCLIJSON
			}
			return formatUnknown
		}
		if bytes.Contains(line, []byte("CPU %")) && (bytes.Contains(line, []byte("CONTAINER")) || bytes.Contains(line, []byte("NAME"))) {
			return formatTable
		}
		return formatUnknown
	}
	return formatUnknown
}

func looksLikeTime(b []byte) bool {
	return len(b) >= 19 && b[4] == '-' && b[7] == '-' && (b[10] == 'T' || b[10] == ' ')
}

// stripANSI appends b without terminal escape sequences (CSI "ESC [ … final"
// and two-byte "ESC x") to dst.
func stripANSI(b, dst []byte) []byte {
	if bytes.IndexByte(b, 0x1b) < 0 {
		return append(dst, b...)
	}
	for i := 0; i < len(b); i++ {
		if b[i] != 0x1b {
			dst = append(dst, b[i])
			continue
		}
		if i+1 < len(b) && b[i+1] == '[' {
			j := i + 2
			for j < len(b) && (b[j] >= 0x20 && b[j] <= 0x3f) {
				j++
			}
			i = j // the final byte (0x40–0x7e), or the end
			continue
		}
		i++ // ESC and one byte
	}
	return dst
}

// Import reads the file into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	f, err := os.Open(s.cfg.Path)
	if err != nil {
		return fmt.Errorf("opening docker stats: %w", err)
	}
	defer f.Close()
	k, err := s.read(ctx, run, f)
	if err != nil {
		return err
	}
	return k.finish(s.cfg.Path)
}

// read decodes r into a sink: series written, whole-run figures gathered.
func (s *Source) read(ctx context.Context, run *importer.Run, r io.Reader) (*sink, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(64 << 10)
	k := &sink{run: run, cfg: &s.cfg, writers: map[string]*importer.SeriesWriter{}, prev: map[string]*reading{},
		whole: map[string]*wholeRun{}, names: map[string]string{}}
	var err error
	switch detect(head) {
	case formatTable:
		run.AddSourcef("docker stats %s (CLI table: no times, whole-run figures only)", s.cfg.Path)
		run.SetOrigin(rundir.SourceSystem, rundir.Holds{})
		k.method = "import: docker stats (CLI table)"
		err = s.readLines(ctx, run, br, k, formatTable)
	case formatCLIJSON:
		run.AddSourcef("docker stats %s (CLI --format '{{json .}}' lines)", s.cfg.Path)
		run.SetOrigin(rundir.SourceSystem, rundir.Holds{})
		k.method = "import: docker stats (CLI JSON lines)"
		err = s.readLines(ctx, run, br, k, formatCLIJSON)
	case formatEngine:
		run.AddSourcef("docker stats %s (Engine API stats stream)", s.cfg.Path)
		run.SetOrigin(rundir.SourceSystem, rundir.Holds{})
		k.method = "import: docker stats (Engine API)"
		err = s.readEngine(ctx, run, br, k)
	default:
		return nil, importer.Refuse(s.cfg.Path, "docker stats output (the CLI's table or --format '{{json .}}' lines, or the Engine API stats stream)", head)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	return k, nil
}

// reading is one container's figures at one moment; NaN marks a figure the
// source did not give. t is Unix ns, 0 when the source has no time.
type reading struct {
	container string
	t         int64
	cpu       float64 // % of one core (200 % = two cores busy)
	cpuUser   float64
	cpuSys    float64
	memRaw    float64 // bytes, the cgroup's usage (page cache included)
	memUsed   float64 // bytes, as the CLI shows it (inactive file pages excluded)
	memLimit  float64
	memPct    float64
	netRx     float64 // bytes since the container started
	netTx     float64
	blkRead   float64
	blkWrite  float64
	pids      float64
}

func newReading() reading {
	n := math.NaN()
	return reading{cpu: n, cpuUser: n, cpuSys: n, memRaw: n, memUsed: n, memLimit: n, memPct: n, netRx: n, netTx: n,
		blkRead: n, blkWrite: n, pids: n}
}

// sink routes readings: those with a time to series, the others to
// whole-run figures.
type sink struct {
	run     *importer.Run
	cfg     *Config
	method  string
	writers map[string]*importer.SeriesWriter
	prev    map[string]*reading
	whole   map[string]*wholeRun
	order   []string          // containers in order of appearance
	names   map[string]string // container → target
	timed   int64
	untimed int64
	noCPU   int64 // Engine readings without a previous CPU reading
	tables  int64 // table headers: one per screen or --no-stream run
}

// target names a container's series or figures.
func (k *sink) target(container string) string {
	container = strings.TrimPrefix(container, "/")
	if t, ok := k.names[container]; ok {
		return t
	}
	t := container
	if k.cfg.Target != "" {
		t = k.cfg.Target
		if len(k.names) > 0 {
			t = k.cfg.Target + "/" + container
		}
	}
	if t == "" {
		t = importer.FileStem(k.cfg.Path)
	}
	k.names[container] = t
	k.order = append(k.order, container)
	return t
}

func (k *sink) add(r *reading) error {
	name := k.target(r.container)
	if r.t == 0 {
		k.untimed++
		w := k.whole[name]
		if w == nil {
			w = &wholeRun{}
			k.whole[name] = w
		}
		w.add(r)
		return nil
	}
	k.timed++
	w := k.writers[name]
	if w == nil {
		var err error
		if w, err = k.run.Series(name, importer.KindCgroup, k.method, 0); err != nil {
			return err
		}
		k.writers[name] = w
	}
	t := time.Unix(0, r.t)
	put := func(metric, unit string, v float64) {
		if !math.IsNaN(v) {
			w.Add(t, metric, unit, v)
		}
	}
	put("cpu_pct", "%", r.cpu)
	put("cpu_user_pct", "%", r.cpuUser)
	put("cpu_system_pct", "%", r.cpuSys)
	put("memory_bytes", "bytes", r.memRaw)
	put("memory_working_set_bytes", "bytes", r.memUsed)
	put("memory_limit_bytes", "bytes", r.memLimit)
	put("memory_pct", "%", r.memPct)
	put("net_rx_bytes", "bytes", r.netRx)
	put("net_tx_bytes", "bytes", r.netTx)
	put("io_read_bytes", "bytes", r.blkRead)
	put("io_write_bytes", "bytes", r.blkWrite)
	put("pids", "", r.pids)
	if p := k.prev[name]; p != nil && r.t > p.t {
		dt := float64(r.t-p.t) / 1e9
		rate := func(metric string, cur, old float64) {
			// A counter that went down was reset (container restarted).
			if !math.IsNaN(cur) && !math.IsNaN(old) && cur >= old {
				w.Add(t, metric, "bytes/s", (cur-old)/dt)
			}
		}
		rate("net_rx_bytes_per_s", r.netRx, p.netRx)
		rate("net_tx_bytes_per_s", r.netTx, p.netTx)
		rate("io_read_bytes_per_s", r.blkRead, p.blkRead)
		rate("io_write_bytes_per_s", r.blkWrite, p.blkWrite)
	}
	if p := k.prev[name]; p == nil || r.t > p.t {
		c := *r
		k.prev[name] = &c
	}
	return nil
}

func (k *sink) finish(path string) error {
	if k.timed+k.untimed == 0 {
		return fmt.Errorf("%s: no container readings", path)
	}
	run := k.run
	if k.noCPU > 0 {
		run.Note("%s: %d readings without a previous CPU reading (the first of each stream, or a one-shot read) have no CPU %%", path, k.noCPU)
	}
	if k.timed > 0 {
		run.Logf("%s: %d timed readings of %d containers", path, k.timed, len(k.writers))
	}
	if k.cfg.Interval > 0 && k.tables > 0 {
		run.Note("%s: CLI table screen k placed at %s + k × %s (--start, --interval)", path, k.cfg.Start.UTC().Format(time.RFC3339), k.cfg.Interval)
	}
	if k.untimed == 0 {
		return nil
	}
	if k.timed > 0 {
		run.Note("%s: %d readings without a time stamp are whole-run figures, not series", path, k.untimed)
	}
	run.Note("%s: docker stats without time stamps and without a fixed interval: the figures below describe the whole test period only, as reference 000 says of such logs; the CLI rounds them to three significant digits (give --start and --interval when the table was written at a fixed interval, to import it as time series)", path)
	names := make([]string, 0, len(k.whole))
	for n := range k.whole {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		run.Note("%s: container %s, whole run: %s", path, n, k.whole[n].String())
	}
	if k.tables > 0 {
		run.Logf("%s: %d tables (screens of the redrawing output, or --no-stream runs)", path, k.tables)
	}
	return nil
}

// stat is min, mean and max of a figure.
type stat struct {
	n             int64
	min, max, sum float64
}

func (s *stat) add(v float64) {
	if math.IsNaN(v) {
		return
	}
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	s.sum += v
}

func (s *stat) mean() float64 { return s.sum / float64(s.n) }

// counter follows a cumulative counter: its increase over the log, resets
// (container restarts) counted and bridged.
type counter struct {
	n                 int64
	first, last, incr float64
	resets            int64
}

func (c *counter) add(v float64) {
	if math.IsNaN(v) {
		return
	}
	switch {
	case c.n == 0:
		c.first = v
	case v >= c.last:
		c.incr += v - c.last
	default:
		c.resets++
		c.incr += v
	}
	c.last = v
	c.n++
}

// wholeRun is one container's figures over a log without times.
type wholeRun struct {
	readings                int64
	cpu, mem, memPct, pids  stat
	limit                   stat
	rx, tx, blkRead, blkWrt counter
}

func (w *wholeRun) add(r *reading) {
	w.readings++
	w.cpu.add(r.cpu)
	w.mem.add(r.memUsed)
	w.limit.add(r.memLimit)
	w.memPct.add(r.memPct)
	w.pids.add(r.pids)
	w.rx.add(r.netRx)
	w.tx.add(r.netTx)
	w.blkRead.add(r.blkRead)
	w.blkWrt.add(r.blkWrite)
}

// String renders the figures for a note.
func (w *wholeRun) String() string {
	var parts []string
	parts = append(parts, fmt.Sprintf("%d readings", w.readings))
	if w.cpu.n > 0 {
		parts = append(parts, fmt.Sprintf("CPU %% min %.2f mean %.2f max %.2f", w.cpu.min, w.cpu.mean(), w.cpu.max))
	}
	if w.mem.n > 0 {
		m := fmt.Sprintf("memory used min %s mean %s max %s", fmtBytes(w.mem.min), fmtBytes(w.mem.mean()), fmtBytes(w.mem.max))
		if w.limit.n > 0 {
			if w.limit.min == w.limit.max {
				m += " of a " + fmtBytes(w.limit.max) + " limit"
			} else {
				m += fmt.Sprintf(" of a limit between %s and %s", fmtBytes(w.limit.min), fmtBytes(w.limit.max))
			}
		}
		parts = append(parts, m)
	}
	if w.memPct.n > 0 {
		parts = append(parts, fmt.Sprintf("memory %% min %.2f mean %.2f max %.2f", w.memPct.min, w.memPct.mean(), w.memPct.max))
	}
	io := func(what string, a, b *counter, an, bn string) {
		if a.n == 0 && b.n == 0 {
			return
		}
		s := fmt.Sprintf("%s %s +%s, %s +%s over the log (%s and %s at the last reading)", what, an, fmtDecimal(a.incr), bn, fmtDecimal(b.incr),
			fmtDecimal(a.last), fmtDecimal(b.last))
		if a.resets+b.resets > 0 {
			s += fmt.Sprintf(", %d counter resets bridged", a.resets+b.resets)
		}
		parts = append(parts, s)
	}
	io("network", &w.rx, &w.tx, "in", "out")
	io("block I/O", &w.blkRead, &w.blkWrt, "read", "written")
	if w.pids.n > 0 {
		parts = append(parts, fmt.Sprintf("PIDs min %.0f mean %.1f max %.0f", w.pids.min, w.pids.mean(), w.pids.max))
	}
	return strings.Join(parts, "; ")
}
