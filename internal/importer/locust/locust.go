// Package locust imports what Locust's --csv option writes: PREFIX_stats.csv
// (whole-run figures per request name), PREFIX_stats_history.csv (a row per
// second with the user count and cumulative counts, per name with
// --csv-full-history, else only the "Aggregated" row) and
// PREFIX_failures.csv (failure messages per name).
//
// Locust keeps no raw samples, so the import rebuilds them, and says so:
//
//   - Counts are exact: per label and in total, and per second as the
//     history has them (per label with --csv-full-history; without it the
//     aggregated per-second counts are split among labels in proportion to
//     their totals, so per-label seconds are approximate).
//   - Each label's response times are rebuilt from Locust's own summary
//     (Shape): count, minimum, maximum and mean exact, the percentiles
//     50 %…100 % equal to Locust's at Locust's ranks, values in between
//     interpolated. Locust's own percentiles are quoted in the notes, marked
//     as such.
//   - Per-second response times are not reconstructed: each second holds a
//     spread of its label's whole-run distribution.
//   - Users per second come from the history's User Count, so phases are
//     derived from user-count changes like JMeter's thread counts.
//
// Without a history file the run has no timeline: its duration is the
// request count over Locust's Requests/s, ending when the stats file was
// last written (or at --start + duration), with requests spread evenly.
package locust

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Config describes one Locust --csv result set.
type Config struct {
	// Path is PREFIX or any of PREFIX_stats.csv, PREFIX_stats_history.csv,
	// PREFIX_failures.csv; the others are found next to it.
	Path string
	// Workload names the samples' workload (default "locust").
	Workload string
	// Start is when the run started, for a result set without a history
	// file (default: the stats file's modification time minus the run's
	// duration).
	Start time.Time
}

// Source imports one Locust result set.
type Source struct {
	cfg                             Config
	stats, history, failures, prefx string
}

// New returns a source for cfg.
func New(cfg Config) *Source {
	if cfg.Workload == "" {
		cfg.Workload = "locust"
	}
	s := &Source{cfg: cfg}
	p := cfg.Path
	for _, suf := range []string{"_stats_history.csv", "_stats.csv", "_failures.csv", "_exceptions.csv"} {
		if strings.HasSuffix(p, suf) {
			p = strings.TrimSuffix(p, suf)
			break
		}
	}
	s.prefx = p
	s.stats, s.history, s.failures = p+"_stats.csv", p+"_stats_history.csv", p+"_failures.csv"
	return s
}

// Key names the result set (its prefix, made absolute): every file of one
// set gives the same key, so the set is imported once (importer.Keyed).
func (s *Source) Key() string {
	if abs, err := filepath.Abs(s.prefx); err == nil {
		return "locust:" + abs
	}
	return "locust:" + s.prefx
}

var _ importer.Keyed = (*Source)(nil)

// Describe says what the source is.
func (s *Source) Describe() string { return "Locust --csv " + s.prefx + "_*.csv" }

var _ importer.Source = (*Source)(nil)

// percentileCols are the percentile columns Locust writes, as fractions.
var percentileCols = []struct {
	name string
	p    float64
}{{"50%", 0.5}, {"66%", 0.66}, {"75%", 0.75}, {"80%", 0.8}, {"90%", 0.9}, {"95%", 0.95}, {"98%", 0.98},
	{"99%", 0.99}, {"99.9%", 0.999}, {"99.99%", 0.9999}, {"100%", 1}}

// label is one request name of the stats file.
type label struct {
	name        string // "GET /cart"
	key         string // Type + "\x00" + Name, as the other files name it
	count, fail int64
	minMs       float64
	maxMs       float64
	avgMs       float64
	pcts        []Knot // Locust's percentiles, µs
	pctText     string
	shape       *Shape
	order       spread
	id          int32
	// emitted so far
	done, doneFail int64
	msgs           []failMsg
	msgUsed        int64
}

// failMsg is one row of the failures file.
type failMsg struct {
	text string
	n    int64
}

// statsFile is a decoded PREFIX_stats.csv.
type statsFile struct {
	labels []*label
	byKey  map[string]*label
	total  *label // the "Aggregated" row
	rps    float64
}

// header maps lower-cased column names (and Locust 1.x aliases) to indexes.
type header map[string]int

func newHeader(rec []string) header {
	h := header{}
	for i, c := range rec {
		c = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(c, "\ufeff")))
		switch c {
		case "# requests":
			c = "request count"
		case "# failures":
			c = "failure count"
		case "method":
			c = "type"
		}
		if _, dup := h[c]; !dup {
			h[c] = i
		}
	}
	return h
}

func (h header) get(rec []string, col string) string {
	i, ok := h[col]
	if !ok || i >= len(rec) {
		return ""
	}
	return strings.TrimSpace(rec[i])
}

func (h header) has(cols ...string) bool {
	for _, c := range cols {
		if _, ok := h[c]; !ok {
			return false
		}
	}
	return true
}

// num parses a figure; Locust writes "N/A" for names without requests.
func num(s string) (float64, bool) {
	if s == "" || s == "N/A" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func readHead(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 4096)
	n, err := io.ReadFull(f, b)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b[:n], nil
}

// readStats reads the stats file; malformed rows are counted in probs.
func readStats(r io.Reader, path string, probs *importer.Problems) (*statsFile, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: reading header: %w", path, err)
	}
	h := newHeader(rec)
	if !h.has("name", "request count", "failure count", "min response time", "max response time", "average response time") {
		return nil, fmt.Errorf("%s: header lacks Locust's stats columns (Name, Request Count, Failure Count, Min/Max/Average Response Time)", path)
	}
	st := &statsFile{byKey: map[string]*label{}}
	for line := int64(2); ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		bad := func(reason string) {
			probs.Add(importer.Problem{File: path, Line: line, Reason: reason, Text: importer.Quote([]byte(strings.Join(rec, ",")))})
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				probs.Add(importer.Problem{File: path, Line: int64(pe.Line), Reason: pe.Err.Error()})
				continue
			}
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		typ, name := h.get(rec, "type"), h.get(rec, "name")
		l := &label{key: typ + "\x00" + name, name: importer.MethodLabel(typ, name)}
		cnt, ok1 := num(h.get(rec, "request count"))
		fl, ok2 := num(h.get(rec, "failure count"))
		if !ok1 || !ok2 || cnt < 0 || fl < 0 || fl > cnt || cnt != math.Trunc(cnt) || fl != math.Trunc(fl) {
			bad("request or failure count is not a count")
			continue
		}
		l.count, l.fail = int64(cnt), int64(fl)
		if typ == "" && name == "Aggregated" {
			st.total = l
			st.rps, _ = num(h.get(rec, "requests/s"))
			for _, pc := range percentileCols {
				if v, ok := num(h.get(rec, strings.ToLower(pc.name))); ok {
					l.pcts = append(l.pcts, Knot{P: pc.p, V: v * 1000})
				}
			}
			continue
		}
		if l.count == 0 {
			continue
		}
		var ok3, ok4, ok5 bool
		l.minMs, ok3 = num(h.get(rec, "min response time"))
		l.maxMs, ok4 = num(h.get(rec, "max response time"))
		l.avgMs, ok5 = num(h.get(rec, "average response time"))
		if !ok3 || !ok4 || !ok5 || l.minMs < 0 || l.maxMs < l.minMs || l.avgMs < l.minMs-1e-9 || l.avgMs > l.maxMs+1e-9 {
			bad("min, average and max response times are not numbers with min ≤ average ≤ max")
			continue
		}
		var txt []string
		for _, pc := range percentileCols {
			if v, ok := num(h.get(rec, strings.ToLower(pc.name))); ok {
				l.pcts = append(l.pcts, Knot{P: pc.p, V: v * 1000})
				txt = append(txt, pc.name+"="+strconv.FormatFloat(v, 'f', -1, 64))
			}
		}
		l.pctText = strings.Join(txt, " ")
		if _, dup := st.byKey[l.key]; dup {
			bad("the same request name twice")
			continue
		}
		st.byKey[l.key] = l
		st.labels = append(st.labels, l)
	}
	if len(st.labels) == 0 {
		return nil, fmt.Errorf("%s: no requests", path)
	}
	return st, nil
}

// readFailures reads PREFIX_failures.csv into the labels' message lists.
func readFailures(r io.Reader, path string, st *statsFile, probs *importer.Problems) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	rec, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: reading header: %w", path, err)
	}
	h := newHeader(rec)
	if !h.has("name", "error", "occurrences") {
		return fmt.Errorf("%s: header lacks Locust's failures columns (Method, Name, Error, Occurrences)", path)
	}
	for line := int64(2); ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				probs.Add(importer.Problem{File: path, Line: int64(pe.Line), Reason: pe.Err.Error()})
				continue
			}
			return fmt.Errorf("%s:%d: %w", path, line, err)
		}
		n, ok := num(h.get(rec, "occurrences"))
		l := st.byKey[h.get(rec, "type")+"\x00"+h.get(rec, "name")]
		if !ok || n < 0 || l == nil {
			probs.Add(importer.Problem{File: path, Line: line, Reason: "occurrences is not a count, or the name is not in the stats file",
				Text: importer.Quote([]byte(strings.Join(rec, ",")))})
			continue
		}
		l.msgs = append(l.msgs, failMsg{text: h.get(rec, "error"), n: int64(n)})
	}
}

// classify maps a Locust error text (the repr of the exception) to an
// error class and status.
func classify(text string) (core.ErrorClass, int32) {
	if i := strings.Index(text, "HTTPError('"); i >= 0 {
		rest := text[i+len("HTTPError('"):]
		if len(rest) >= 3 {
			if st, err := strconv.Atoi(rest[:3]); err == nil {
				return core.StatusClass(st), int32(st)
			}
		}
	}
	switch {
	case strings.Contains(text, "ConnectionRefused"):
		return core.ErrRefused, 0
	case strings.Contains(text, "Timeout") || strings.Contains(text, "timed out"):
		return core.ErrTimeout, 0
	case strings.Contains(text, "ConnectionReset") || strings.Contains(text, "RemoteDisconnected") || strings.Contains(text, "BrokenPipe"):
		return core.ErrReset, 0
	case strings.Contains(text, "NameResolution") || strings.Contains(text, "gaierror") || strings.Contains(text, "Name or service not known"):
		return core.ErrDNS, 0
	case strings.Contains(text, "SSLError") || strings.Contains(text, "CERTIFICATE"):
		return core.ErrTLS, 0
	case strings.Contains(text, "CatchResponseError"):
		return core.ErrCheck, 0
	}
	return core.ErrOther, 0
}

// nextMessage is the failure message of a label's next failed sample: the
// failures file's messages in order, each as often as it occurred.
func (l *label) nextMessage() (string, core.ErrorClass, int32) {
	k := l.msgUsed
	l.msgUsed++
	for _, m := range l.msgs {
		if k < m.n {
			c, st := classify(m.text)
			return m.text, c, st
		}
		k -= m.n
	}
	return "failed (no message in Locust's failures file)", core.ErrOther, 0
}

// Import reads the result set into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	head, err := readHead(s.stats)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%s: no stats file %s next to it (Locust --csv writes PREFIX_stats.csv; it is needed for the per-name figures)", s.cfg.Path, s.stats)
		}
		return fmt.Errorf("opening Locust stats: %w", err)
	}
	if k := importer.Sniff(head); k != "a Locust --csv stats file" {
		h := newHeader(strings.Split(strings.SplitN(string(head), "\n", 2)[0], ","))
		if !h.has("name", "request count") {
			return importer.Refuse(s.stats, "a Locust --csv stats file", head)
		}
	}
	probs := run.Problems()
	f, err := os.Open(s.stats)
	if err != nil {
		return fmt.Errorf("opening Locust stats: %w", err)
	}
	st, err := readStats(f, s.stats, probs)
	f.Close()
	if err != nil {
		return err
	}
	run.AddSourcef("Locust stats %s (whole-run figures per name)", s.stats)
	run.SetOrigin(rundir.SourceLocust, rundir.HoldsOf(rundir.SourceLocust))
	if ff, err := os.Open(s.failures); err == nil {
		err = readFailures(ff, s.failures, st, probs)
		ff.Close()
		if err != nil {
			return err
		}
		run.AddSourcef("Locust failures %s (failure messages per name)", s.failures)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("opening Locust failures: %w", err)
	}

	agg := run.Requests(s.cfg.Workload)
	var total, totalFail int64
	for _, l := range st.labels {
		l.id = agg.Labels().ID([]byte(l.name))
		l.shape = NewShape(l.count, l.minMs*1000, l.maxMs*1000, l.avgMs*1000*float64(l.count), l.pcts)
		l.order = newSpread(l.count)
		total += l.count
		totalFail += l.fail
		// SumError is the part of Locust's sum the shape could not
		// reach: positive leaves the rebuilt mean below Locust's average.
		// A difference that rounds to 0.000 ms is no problem to note.
		if off := float64(l.shape.SumError) / 1000 / float64(l.count); math.Abs(off) >= 0.0005 {
			side := "below"
			if off < 0 {
				side = "above"
			}
			run.Note("%s: %s: Locust's average %.3f ms cannot be reached with its percentiles; the rebuilt mean is %.3f ms %s it",
				s.stats, l.name, l.avgMs, math.Abs(off), side)
		}
	}
	if st.total != nil && (st.total.count != total || st.total.fail != totalFail) {
		run.Note("%s: the Aggregated row counts %d requests and %d failures, the names add up to %d and %d",
			s.stats, st.total.count, st.total.fail, total, totalFail)
	}
	g := &gen{agg: agg, st: st, total: total, totalFail: totalFail}

	hf, err := os.Open(s.history)
	switch {
	case err == nil:
		err = s.readHistory(ctx, run, hf, g)
		hf.Close()
	case errors.Is(err, os.ErrNotExist):
		err = s.noHistory(run, g)
	default:
		err = fmt.Errorf("opening Locust history: %w", err)
	}
	if cerr := agg.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	s.notes(run, st)
	run.AddFigures(s.figures(st))
	run.Logf("%s: %d requests, %d failed, %d labels", s.prefx, agg.Count(), agg.Errors(), len(st.labels))
	return nil
}

// figures are Locust's own whole-run figures from the stats file: its
// percentiles (over response times rounded to about two significant
// digits) and its Requests/s denominator, the run's span.
func (s *Source) figures(st *statsFile) *rundir.SourceFigures {
	sf := &rundir.SourceFigures{Tool: "Locust", PercentileMethod: "locust-rounded",
		PercentileRule: "Locust's own figures from its stats file: response times rounded to about two significant digits, percentile p at rank ⌊p·n⌋+1",
		ThroughputRule: "Locust's: a name's count over the run's span (start to last request), the same for every name"}
	span := 0.0
	if st.rps > 0 && st.total != nil && st.total.count > 0 {
		span = float64(st.total.count) / st.rps
	}
	add := func(l *label, total bool) {
		out := rundir.SourceLabel{Workload: s.cfg.Workload, Label: l.name, Total: total, Count: l.count, SpanS: span}
		if total {
			out.Label = ""
		}
		for _, k := range l.pcts {
			v := k.V / 1000
			switch k.P {
			case 0.5:
				out.P50Ms = &v
			case 0.9:
				out.P90Ms = &v
			case 0.95:
				out.P95Ms = &v
			case 0.99:
				out.P99Ms = &v
			}
		}
		sf.Labels = append(sf.Labels, out)
	}
	for _, l := range st.labels {
		add(l, false)
	}
	if st.total != nil {
		add(st.total, true)
	}
	return sf
}

func (s *Source) notes(run *importer.Run, st *statsFile) {
	run.Note("%s: Locust keeps no raw samples: each label's response times are rebuilt from Locust's own summary "+
		"(count, failures, min, max and mean exact; percentiles equal Locust's at Locust's ranks, values between them interpolated); "+
		"per-second response times are not reconstructed (every second holds a spread of its label's whole-run distribution)", s.prefx)
	var b strings.Builder
	for i, l := range st.labels {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s %s", l.name, l.pctText)
	}
	run.Note("%s: percentiles from Locust's own summary (ms, Locust's definition over response times rounded to 2 significant digits): %s", s.stats, b.String())
}

// gen turns counts into rebuilt samples.
type gen struct {
	agg              *importer.Aggregator
	st               *statsFile
	total, totalFail int64
	rec              importer.Rec
}

// emit adds c samples of l, f of them failed, completing evenly in (from,
// to) (Unix ns) with threads users. A history row written at second t
// covers the second before it, so its samples fall in second t−1.
func (g *gen) emit(l *label, c, f int64, from, to int64, threads int32) error {
	c = min(c, l.count-l.done)
	// Failures left over must fit in the samples left over: when the
	// proportional split of aggregated counts lags, the label's last
	// samples take its remaining failures.
	f = max(f, (l.fail-l.doneFail)-(l.count-l.done-c))
	f = max(min(f, l.fail-l.doneFail, c), 0)
	for k := range c {
		r := &g.rec
		*r = importer.Rec{Label: l.id, Threads: threads}
		r.End = from + int64(float64(to-from)*(float64(2*k+1)/float64(2*c))) // midpoints: all inside (from, to)
		r.Elapsed = l.shape.At(l.order.at(l.done) + 1)
		if k < f {
			r.Message, r.Class, r.Status = l.nextMessage()
			l.doneFail++
		}
		l.done++
		if err := g.agg.Add(r); err != nil {
			return err
		}
	}
	return nil
}

// finish emits what the history did not account for at its last interval.
func (g *gen) finish(from, to int64, threads int32) error {
	for _, l := range g.st.labels {
		if err := g.emit(l, l.count-l.done, l.fail-l.doneFail, from, to, threads); err != nil {
			return err
		}
	}
	return nil
}

func (s *Source) noHistory(run *importer.Run, g *gen) error {
	dur := time.Second
	how := "the run's duration is unknown (no Requests/s in the Aggregated row), taken as 1 s"
	if g.st.rps > 0 {
		dur = time.Duration(float64(g.total) / g.st.rps * 1e9)
		how = fmt.Sprintf("the run's duration, %s, is the request count over Locust's Requests/s", dur.Round(time.Millisecond))
	}
	var end time.Time
	if !s.cfg.Start.IsZero() {
		end = s.cfg.Start.Add(dur)
		how += "; it starts at --start"
	} else {
		fi, err := os.Stat(s.stats)
		if err != nil {
			return fmt.Errorf("opening Locust stats: %w", err)
		}
		end = fi.ModTime()
		how += "; it ends when the stats file was last written (give --start to place it)"
	}
	run.Note("%s: no stats history (%s): the run has no timeline; %s, and requests are spread evenly over it", s.prefx, s.history, how)
	g.agg.SetSpan(end.Add(-dur).UnixNano(), end.UnixNano())
	return g.finish(end.Add(-dur).UnixNano(), end.UnixNano(), -1)
}

// histRow is the part of a history row the import uses.
type histRow struct {
	t           int64 // Unix ns
	users       int32
	key         string
	cum, cumErr int64
}

func (s *Source) readHistory(ctx context.Context, run *importer.Run, r io.Reader, g *gen) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	rec, err := cr.Read()
	if err != nil {
		return fmt.Errorf("%s: reading header: %w", s.history, err)
	}
	h := newHeader(rec)
	if !h.has("timestamp", "user count", "name", "total request count", "total failure count") {
		head, _ := readHead(s.history)
		return importer.Refuse(s.history, "a Locust --csv stats history file (Timestamp, User Count, … Total Request Count)", head)
	}
	run.AddSourcef("Locust stats history %s (per-second counts and user counts)", s.history)
	probs := run.Problems()
	var (
		group          []histRow
		prevT          int64 = math.MinInt64
		prevUsers      int32 = -1
		full           bool
		prevCum        = map[string]int64{}
		prevErr        = map[string]int64{}
		aggCum, aggErr int64
		unknown        = map[string]int64{}
		epoch          importer.TimeParser
		epochSet       bool
		firstT         int64 = math.MinInt64
		firstCum       int64
	)
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		t, users := group[0].t, group[0].users
		from := prevT
		if from == math.MinInt64 {
			from = t - int64(time.Second)
		}
		for _, row := range group {
			if row.key != "\x00Aggregated" {
				full = true
			}
		}
		if firstT == math.MinInt64 {
			firstT = t
			for _, row := range group {
				if row.key == "\x00Aggregated" {
					firstCum = row.cum
				}
			}
		}
		for _, row := range group {
			if row.key == "\x00Aggregated" {
				aggCum, aggErr = row.cum, row.cumErr
				continue
			}
			l := g.st.byKey[row.key]
			d, de := row.cum-prevCum[row.key], row.cumErr-prevErr[row.key]
			prevCum[row.key], prevErr[row.key] = row.cum, row.cumErr
			if l == nil {
				unknown[row.key] += max(d, 0)
				continue
			}
			if err := g.emit(l, max(d, 0), max(de, 0), from, t, users); err != nil {
				return err
			}
		}
		if !full {
			// Only aggregated counts: split them in proportion to the
			// labels' totals; floors keep every label's count ≤ its total.
			c, e := min(aggCum, g.total), min(aggErr, g.totalFail)
			for _, l := range g.st.labels {
				want := int64(float64(c) * float64(l.count) / float64(max(g.total, 1)))
				wantF := int64(0)
				if g.totalFail > 0 {
					wantF = int64(float64(e) * float64(l.fail) / float64(g.totalFail))
				}
				if err := g.emit(l, max(want-l.done, 0), max(wantF-l.doneFail, 0), from, t, users); err != nil {
					return err
				}
			}
		}
		prevT, prevUsers = t, users
		group = group[:0]
		return nil
	}
	for line := int64(2); ; line++ {
		if line%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				probs.Add(importer.Problem{File: s.history, Line: int64(pe.Line), Reason: pe.Err.Error()})
				continue
			}
			return fmt.Errorf("%s:%d: %w", s.history, line, err)
		}
		bad := func(reason string) {
			probs.Add(importer.Problem{File: s.history, Line: line, Reason: reason, Text: importer.Quote([]byte(strings.Join(rec, ",")))})
		}
		ts := []byte(h.get(rec, "timestamp"))
		if !epochSet {
			k, err := importer.DetectEpoch(ts)
			if err != nil {
				bad("Timestamp: " + err.Error())
				continue
			}
			epoch, epochSet = importer.TimeParser{Kind: k}, true
		}
		t, err := epoch.Parse(ts)
		users, ok1 := num(h.get(rec, "user count"))
		cum, ok2 := num(h.get(rec, "total request count"))
		cumErr, ok3 := num(h.get(rec, "total failure count"))
		if err != nil || !ok1 || !ok2 || !ok3 || users < 0 || cum < 0 || cumErr < 0 || users > math.MaxInt32 {
			bad("Timestamp, User Count or a total count is not a number")
			continue
		}
		if len(group) > 0 && t != group[0].t {
			if t < group[0].t {
				bad("time goes backwards")
				continue
			}
			if err := flush(); err != nil {
				return err
			}
		}
		group = append(group, histRow{t: t, users: int32(users), key: h.get(rec, "type") + "\x00" + h.get(rec, "name"),
			cum: int64(cum), cumErr: int64(cumErr)})
	}
	if err := flush(); err != nil {
		return err
	}
	if prevT == math.MinInt64 {
		run.Note("%s: the stats history has no rows", s.history)
		return s.noHistory(run, g)
	}
	if aggCum > g.total {
		return fmt.Errorf("%s counts %d requests, more than the %d of %s: they are not of the same run", s.history, aggCum, g.total, s.stats)
	}
	// The run's span is Locust's: its Requests/s is the count over
	// (last request − start), so the span is the count over Requests/s,
	// ending at the history's last row; without Requests/s, the history's
	// first to last row.
	end := prevT
	start := firstT
	if firstCum > 0 {
		start -= int64(time.Second) // the first row's requests are placed in the second before it
	}
	how := "the history's first to last row"
	if g.st.rps > 0 && g.total > 0 {
		start = end - int64(float64(g.total)/g.st.rps*1e9)
		how = "the request count over Locust's Requests/s, ending at the history's last row (Locust's own denominator)"
	}
	g.agg.SetSpan(start, end)
	run.Note("%s: run span %s: %s", s.history, time.Duration(end-start).Round(time.Millisecond), how)
	var left int64
	for _, l := range g.st.labels {
		left += l.count - l.done
	}
	if left > 0 {
		run.Note("%s: %d requests of the stats file are later than the history's last row; they are placed in its last second", s.history, left)
	}
	if err := g.finish(prevT-int64(time.Second), prevT, prevUsers); err != nil {
		return err
	}
	if full {
		run.Note("%s: per-second request and failure counts per label from the stats history (--csv-full-history)", s.history)
	} else {
		run.Note("%s: the stats history has only aggregated rows: per-second counts are exact in total and split among labels in proportion to their totals", s.history)
	}
	if len(unknown) > 0 {
		keys := make([]string, 0, len(unknown))
		for k := range unknown {
			keys = append(keys, strings.Replace(k, "\x00", " ", 1))
		}
		sort.Strings(keys)
		run.Note("%s: names in the history but not in the stats file, left out: %s", s.history, strings.Join(keys, ", "))
	}
	return nil
}
