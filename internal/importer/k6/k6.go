// Package k6 imports what k6 records: the `--out json` stream (one JSON
// object per line, plain or gzipped as k6 writes it for a .gz file name),
// the `--out csv` file (one row per point, the same metrics and tags in
// columns; plain or gzipped) and, as a side summary, the
// `--summary-export` file.
//
// Every http_req_duration point is one request sample: its time is when the
// request ended (k6 stamps all of a request's metrics with its end), its
// value is k6's response time (sending + waiting + receiving; connection
// set-up is in http_req_connecting, not in it), and its tags give the label
// (name, method), the status and whether k6 counted it as failed
// (expected_response, the same flag http_req_failed counts). group_duration
// points become transaction labels (the group path, "::shop"), left out of
// the total like JMeter's transactions. vus points give the active users per
// second, from which phases are derived. checks, iterations and
// http_req_failed are tallied into notes; the other metrics are skipped.
//
// The stream is decoded in parallel chunks, so an import uses every core it
// is given and memory that does not depend on the file's size.
package k6

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/accesslog"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Config describes one k6 JSON stream.
type Config struct {
	// Path is the --out json file (gzipped when it starts with gzip's magic).
	Path string
	// Workload names the samples' workload (default "k6").
	Workload string
	// Summary is the --summary-export file of the same run (optional): its
	// whole-run figures are quoted in the notes next to the import's own.
	Summary string
	// ChunkSize overrides importer.DefaultChunkSize (tests).
	ChunkSize int
	// Follow, when set, makes the import follow the file while k6 is
	// still writing it, until Follow is closed (k6 has exited): the
	// requests reach the run as they are written (importer.Follower). A
	// Summary that does not exist when the stream ends is then left out.
	Follow <-chan struct{}
	// FirstVUs, when set, is called once with the time (Unix ns) of the
	// file's first vus row the import reads (k6 writes it a second after
	// it starts), from the goroutine that consumes rows in file order.
	FirstVUs func(t int64)
}

// Source imports one k6 JSON stream.
type Source struct{ cfg Config }

// New returns a source for cfg.
func New(cfg Config) *Source {
	if cfg.Workload == "" {
		cfg.Workload = "k6"
	}
	return &Source{cfg: cfg}
}

// Describe says what the source is.
func (s *Source) Describe() string {
	d := "k6 output " + s.cfg.Path
	if s.cfg.Summary != "" {
		d += " with summary export " + s.cfg.Summary
	}
	return d
}

var _ importer.Source = (*Source)(nil)

const (
	kindStream  = "a k6 JSON output stream (--out json)"
	kindSummary = "a k6 summary export (--summary-export)"
	kindCSV     = "a k6 CSV output (--out csv)"
)

// Import reads the stream into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	var f io.ReadCloser
	var err error
	if s.cfg.Follow != nil {
		f, err = importer.Follow(s.cfg.Path, s.cfg.Follow, streamHead)
	} else {
		f, err = os.Open(s.cfg.Path)
	}
	if err != nil {
		return fmt.Errorf("opening k6 output: %w", err)
	}
	defer f.Close()
	// The buffer holds the head the format is told by; past it the chunk
	// reader reads the file itself (below), not through a second copy.
	var src io.Reader = bufio.NewReaderSize(f, 64<<10)
	magic, _ := src.(*bufio.Reader).Peek(2)
	gz := bytes.Equal(magic, []byte{0x1f, 0x8b})
	if gz {
		zr, err := gzip.NewReader(src)
		if err != nil {
			return fmt.Errorf("%s: reading gzip: %w", s.cfg.Path, err)
		}
		defer zr.Close()
		src = bufio.NewReaderSize(zr, 1<<20)
	}
	br := src.(*bufio.Reader)
	head, _ := br.Peek(64 << 10)
	csvOut := false
	switch importer.Sniff(head) {
	case kindStream:
	case kindCSV:
		csvOut = true
	case kindSummary:
		return fmt.Errorf("%s is a k6 summary export: it holds whole-run figures only (no times, no requests), "+
			"so it cannot be a run by itself; import the --out json stream of the same run and give this file "+
			"with --summary (k6:out.json,summary=%s)", s.cfg.Path, s.cfg.Path)
	default:
		return importer.Refuse(s.cfg.Path, "a k6 --out json stream or --out csv file", head)
	}
	how := ""
	if gz {
		how = " (gzip)"
	}
	var cols *csvColumns
	host := ""
	if csvOut {
		if cols, err = readCSVHeader(head); err != nil {
			return fmt.Errorf("%s: %w", s.cfg.Path, err)
		}
		host = cols.primaryHost(head)
		run.AddSource("k6 CSV output " + s.cfg.Path + how)
	} else {
		host = primaryHost(head)
		run.AddSource("k6 JSON stream " + s.cfg.Path + how)
	}
	run.SetOrigin(rundir.SourceK6, rundir.HoldsOf(rundir.SourceK6))

	agg := run.Requests(s.cfg.Workload)
	agg.CollectFigures(importer.K6Figures)
	if cols != nil && cols.wholeSeconds {
		// k6's default CSV time format (unix) writes whole seconds.
		agg.SetTimeResolution(time.Second)
	}
	var tot tally
	var vus timeline
	var lines int64 // whole lines consumed
	probs := run.Problems()
	tp, _ := importer.NewTimeParser("iso8601", run.Clock())
	var quote byte // records are lines
	if csvOut {
		quote = '"'
	}
	// Decoders and batches are reused from chunk to chunk: a batch's
	// records were most of the import's allocations (docs/performance.md).
	decoders := sync.Pool{New: func() any {
		return &decoder{labels: agg.Labels().NewCache(), tp: tp, host: host, keep: run.KeepSamples()}
	}}
	batches := sync.Pool{New: func() any { return &batch{} }}
	next := int64(1) // the file's number of the next chunk's first line
	chunk := s.cfg.ChunkSize
	if chunk <= 0 {
		chunk = chunkSize
	}
	// An uncompressed file is read straight into the chunk reader's
	// pieces after the bytes the head left buffered: through the buffer,
	// each piece was copied twice (the kernel's copy, then bufio's: 12 %
	// of plateau's CPU beside k6 at its peak, docs/performance.md).
	var in io.Reader = br
	if !gz {
		rest, _ := br.Peek(br.Buffered())
		in = io.MultiReader(bytes.NewReader(rest), f)
	}
	err = importer.ParallelUncounted(ctx, in, run.Workers(), chunk, quote,
		func(c *importer.Chunk) (*batch, error) {
			d := decoders.Get().(*decoder)
			defer decoders.Put(d)
			b := batches.Get().(*batch)
			b.probs.File = s.cfg.Path
			switch {
			case cols != nil && c.NoQuote:
				b.next = d.decodeCSVRows(c.Data, firstLine(c), cols, b, -1)
			case cols != nil:
				b.next = d.decodeCSVFast(c.Data, firstLine(c), cols, b)
			default:
				b.next = d.decode(c.Data, firstLine(c), b)
			}
			return b, nil
		},
		func(c *importer.Chunk, b *batch) error {
			defer func() {
				b.reset()
				batches.Put(b)
			}()
			// The chunk's lines were numbered from firstLine; the lines
			// before it are known now, in file order.
			off := next - firstLine(c)
			for i := range b.probs.First {
				b.probs.First[i].Line += off
			}
			next = b.next + off
			lines = next - 1 // whole lines, for the message of a cut gzip stream
			probs.Merge(&b.probs)
			tot.add(&b.tally)
			for _, p := range b.vus {
				if s.cfg.FirstVUs != nil && vus.seen == 0 {
					s.cfg.FirstVUs(p.t)
				}
				vus.add(p)
				agg.AddUsers(p.t, p.n) // users per second from k6's own readings, not only where a request completed
			}
			for i := 0; i < len(b.iters); {
				// one call a second: iterations end in time order within a batch
				sec, n := b.iters[i].t/1e9, int64(0)
				j := i
				for ; j < len(b.iters) && b.iters[j].t/1e9 == sec; j++ {
					n += int64(b.iters[j].n)
				}
				agg.AddArrivals(b.iters[i].t, n)
				i = j
			}
			for i := range b.recs {
				r := &b.recs[i]
				if !r.Tx {
					r.Threads = vus.at(r.End)
				}
				if err := agg.Add(r); err != nil {
					return err
				}
			}
			return nil
		})
	if cerr := agg.Close(); err == nil {
		err = cerr
	}
	if gz && errors.Is(err, io.ErrUnexpectedEOF) {
		// A cut stream (k6 killed before it closed the file, a copy cut
		// short) is an error, not a run: imported it would pass off the
		// part before the cut as the whole test. The message says how much
		// there was and how to import that part knowingly.
		return importer.TruncatedGzip(s.cfg.Path, err, fmt.Sprintf("%d lines, %d requests (%d failed)", lines, tot.requests, tot.failed))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	tot.noVUs = vus.seen == 0
	if cols != nil && cols.wholeSeconds {
		run.Note("%s: k6's CSV times are whole seconds (its default time format, unix): each request is placed in the second it ended, "+
			"and spans and phase bounds are known to the second (K6_CSV_TIME_FORMAT=unix_milli writes milliseconds)", s.cfg.Path)
	}
	s.notes(run, &tot, agg)
	if agg.Count() == 0 {
		return fmt.Errorf("%s: no http_req_duration points: nothing to import", s.cfg.Path)
	}
	if s.cfg.Summary != "" {
		if _, err := os.Stat(s.cfg.Summary); err != nil && s.cfg.Follow != nil {
			return nil // k6 wrote none (it was killed)
		}
		return s.sideSummary(run, &tot)
	}
	return nil
}

// streamHead says whether a followed stream's head is whole: it holds the
// first request, whole (primaryHost reads its host, and readCSVHeader the
// time format of a CSV's first row). k6 writes its vus readings from the
// start, so a first flush may hold no request yet; labels would then keep
// the host that an import of the finished file strips.
func streamHead(b []byte) bool {
	if bytes.HasPrefix(b, []byte("metric_name,")) {
		i := bytes.Index(b, []byte("\nhttp_req_duration,"))
		return i >= 0 && bytes.IndexByte(b[i+1:], '\n') >= 0
	}
	i := bytes.Index(b, []byte(`{"metric":"http_req_duration"`))
	return i >= 0 && bytes.IndexByte(b[i:], '\n') >= 0
}

func (s *Source) notes(run *importer.Run, tot *tally, agg *importer.Aggregator) {
	run.Logf("%s: %d requests, %d failed, %d group samples, %d labels, %d malformed lines", s.cfg.Path, tot.requests, tot.failed,
		tot.groups, agg.Labels().Len(), run.Problems().Count(s.cfg.Path))
	if tot.failedPoints > 0 && tot.failedTrue != tot.failed {
		run.Note("%s: http_req_failed counts %d failed requests, the import %d (requests without an expected_response tag are judged by their status)",
			s.cfg.Path, tot.failedTrue, tot.failed)
	}
	if tot.iterations > 0 {
		run.Note("%s: %d iterations", s.cfg.Path, tot.iterations)
	}
	if len(tot.checks) > 0 {
		names := make([]string, 0, len(tot.checks))
		for n := range tot.checks {
			names = append(names, n)
		}
		sort.Strings(names)
		var b strings.Builder
		for i, n := range names {
			if i > 0 {
				b.WriteString("; ")
			}
			c := tot.checks[n]
			fmt.Fprintf(&b, "%q %d passed, %d failed", n, c[0], c[1])
		}
		run.Note("%s: checks (k6 counts them apart from requests): %s", s.cfg.Path, b.String())
	}
	if tot.noVUs {
		run.Note("%s: no vus points, so there are no users per second and no derived phases", s.cfg.Path)
	}
}

// tally is what the stream holds besides request samples.
type tally struct {
	requests, failed, groups int64
	failedPoints, failedTrue int64
	iterations               int64
	checks                   map[string][2]int64 // passes, fails
	noVUs                    bool
	// sumUs, minUs and maxUs are over the requests' durations (valid when
	// requests > 0).
	sumUs, minUs, maxUs int64
}

func (t *tally) add(o *tally) {
	if o.requests > 0 {
		if t.requests == 0 {
			t.minUs, t.maxUs = o.minUs, o.maxUs
		}
		t.minUs, t.maxUs = min(t.minUs, o.minUs), max(t.maxUs, o.maxUs)
		t.sumUs += o.sumUs
	}
	t.requests += o.requests
	t.failed += o.failed
	t.groups += o.groups
	t.failedPoints += o.failedPoints
	t.failedTrue += o.failedTrue
	t.iterations += o.iterations
	for n, c := range o.checks {
		if t.checks == nil {
			t.checks = map[string][2]int64{}
		}
		v := t.checks[n]
		t.checks[n] = [2]int64{v[0] + c[0], v[1] + c[1]}
	}
}

// vuPoint is one vus reading: time (Unix ns) and active VUs.
type vuPoint struct {
	t int64
	n int32
}

// timeline holds the recent vus readings in time order. k6 writes one a
// second; readings older than a few minutes before the newest are dropped,
// as samples come at most a flush interval out of order.
type timeline struct {
	pts  []vuPoint
	seen int64
}

const vuKeep = 300e9 // ns

func (tl *timeline) add(p vuPoint) {
	tl.seen++
	i := sort.Search(len(tl.pts), func(i int) bool { return tl.pts[i].t > p.t })
	tl.pts = append(tl.pts, vuPoint{})
	copy(tl.pts[i+1:], tl.pts[i:])
	tl.pts[i] = p
	if newest := tl.pts[len(tl.pts)-1].t; tl.pts[0].t < newest-vuKeep {
		j := sort.Search(len(tl.pts), func(i int) bool { return tl.pts[i].t >= newest-vuKeep })
		if j > 1 {
			tl.pts = append(tl.pts[:0], tl.pts[j-1:]...)
		}
	}
}

// at is the last reading at or before t, or −1 when none is known.
func (tl *timeline) at(t int64) int32 {
	i := sort.Search(len(tl.pts), func(i int) bool { return tl.pts[i].t > t })
	if i == 0 {
		return -1
	}
	return tl.pts[i-1].n
}

// batch is the decoded content of one chunk.
type batch struct {
	recs  []importer.Rec
	vus   []vuPoint
	iters []vuPoint // iterations points: arrivals checked against a declared rate
	probs importer.ChunkProblems
	next  int64 // the decoder's number of the line after the chunk
	tally
}

// reset empties b for another chunk, keeping its slices' memory; every
// other field is zero, as in a new batch.
func (b *batch) reset() {
	*b = batch{recs: b.recs[:0], vus: b.vus[:0], iters: b.iters[:0], probs: importer.ChunkProblems{First: b.probs.First[:0]}}
}

// chunkSize is the size of the pieces a k6 output is read and decoded in:
// small enough that a piece is still in the core's cache when its decoder
// reads what the read copied into it. On a real peak run's CSV (180 MB),
// the import's CPU was 8 % less (median of eight, alternated) than with
// importer.DefaultChunkSize's 4 MB (docs/performance.md).
const chunkSize = 256 << 10

// relStart is the number a decoder gives the first line of a chunk after
// the first: which line of the file it is, is known only when the chunks
// before it have been consumed (importer.ParallelUncounted). Far above
// any file's line count, and not 1, which is the header of a CSV file.
const relStart = 1 << 40

// firstLine is the number c's decoder gives its first line: the file's
// first line is 1.
func firstLine(c *importer.Chunk) int64 {
	if c.Seq == 0 {
		return 1
	}
	return relStart
}

// decoder decodes lines of one chunk. Each goroutine has its own.
type decoder struct {
	labels    *importer.Cache
	tp        importer.TimeParser
	host      string // the first request's scheme://host, stripped from labels
	keep      bool
	pt        point
	val       float64 // fastPoint's value, pointed to by pt
	lb        []byte
	lastLabel labelMemo
	fields    [][]byte    // a CSV row's columns (decodeCSVFast)
	cols      [9]colCache // the last tag values of CSV rows
	tail      tailCache   // the last tagged CSV row's tags
}

// point is a Point line; only the tags the import uses are decoded.
type point struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Data   struct {
		Time  string   `json:"time"`
		Value *float64 `json:"value"`
		Tags  tags     `json:"tags"`
	} `json:"data"`
	// rawTime is data.time as fastPoint found it in the line (valid while
	// the line is; Data.Time is then empty).
	rawTime []byte
}

// tags are the tags of a point the import reads.
type tags struct {
	Name             string `json:"name"`
	URL              string `json:"url"`
	Method           string `json:"method"`
	Status           string `json:"status"`
	ExpectedResponse string `json:"expected_response"`
	Error            string `json:"error"`
	ErrorCode        string `json:"error_code"`
	Group            string `json:"group"`
	Check            string `json:"check"`
}

// wanted are the metrics whose points are decoded; the others are skipped
// without parsing (k6 writes nine points per request, two are used).
var wanted = map[string]bool{"http_req_duration": true, "http_req_failed": true, "vus": true, "iterations": true,
	"group_duration": true, "checks": true}

var pointPrefix = []byte(`{"metric":"`)

// decode decodes the lines of one chunk, the first numbered line, and
// returns the number of the line after it (line plus the line ends).
func (d *decoder) decode(data []byte, line int64, b *batch) int64 {
	for len(data) > 0 {
		raw, whole := data, false
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data, whole = data[:i], data[i+1:], true
		} else {
			data = nil
		}
		for len(raw) > 0 && (raw[len(raw)-1] == '\r' || raw[len(raw)-1] == ' ' || raw[len(raw)-1] == '\t') {
			raw = raw[:len(raw)-1] // bytes.TrimRight builds its cutset for every line
		}
		d.line(raw, line, b)
		if whole {
			line++
		}
	}
	return line
}

func (d *decoder) line(raw []byte, lineNo int64, b *batch) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	// Fast path: k6 writes Point lines as {"metric":"NAME","type":"Point",…}.
	withTags := true
	if bytes.HasPrefix(raw, pointPrefix) {
		rest := raw[len(pointPrefix):]
		if q := bytes.IndexByte(rest, '"'); q >= 0 {
			m := rest[:q]
			if !wanted[string(m)] {
				if raw[len(raw)-1] != '}' {
					b.probs.Add(lineNo, "truncated JSON line", raw)
				}
				return
			}
			// Only these metrics' tags are read (add).
			withTags = string(m) == "http_req_duration" || string(m) == "group_duration" || string(m) == "checks"
		}
	}
	if !fastPoint(raw, &d.pt, &d.val, withTags) {
		d.pt = point{}
		if err := json.Unmarshal(raw, &d.pt); err != nil {
			b.probs.Add(lineNo, "not a JSON object: "+jsonErr(err), raw)
			return
		}
	}
	p := &d.pt
	switch p.Type {
	case "Metric":
		return
	case "Point":
	default:
		b.probs.Add(lineNo, fmt.Sprintf("type %q is neither Point nor Metric", p.Type), raw)
		return
	}
	if !wanted[p.Metric] {
		return
	}
	if p.Data.Value == nil || math.IsNaN(*p.Data.Value) || math.IsInf(*p.Data.Value, 0) {
		b.probs.Add(lineNo, "point without a numeric value", raw)
		return
	}
	tb := p.rawTime
	if tb == nil {
		tb = []byte(p.Data.Time)
	}
	t, err := d.tp.Parse(tb)
	if err != nil {
		b.probs.Add(lineNo, "time: "+err.Error(), raw)
		return
	}
	d.add(p, *p.Data.Value, t, lineNo, raw, b)
}

// add adds one point of a wanted metric, its value v at t (Unix ns), read
// from a JSON line or a CSV row.
func (d *decoder) add(p *point, v float64, t int64, lineNo int64, raw []byte, b *batch) {
	tags := &p.Data.Tags
	switch p.Metric {
	case "http_req_duration":
		if v < 0 {
			b.probs.Add(lineNo, "negative duration", raw)
			return
		}
		r := importer.Rec{End: t, Elapsed: int64(math.Round(v * 1000)), Threads: -1}
		r.Label = d.label(tags.Method, tags.Name, tags.URL)
		st, _ := strconv.Atoi(tags.Status)
		if st >= 100 && st <= 999 {
			r.Status = int32(st)
		}
		failed := tags.ExpectedResponse == "false"
		if tags.ExpectedResponse == "" {
			failed = core.StatusFails(st)
		}
		if failed {
			r.Class = classify(st, tags.ErrorCode)
			r.Message = tags.Error
			if r.Message == "" {
				r.Message = tags.Status
			}
			b.failed++
		}
		if d.keep {
			r.URL = tags.URL
		}
		if b.requests == 0 {
			b.minUs, b.maxUs = r.Elapsed, r.Elapsed
		}
		b.minUs, b.maxUs = min(b.minUs, r.Elapsed), max(b.maxUs, r.Elapsed)
		b.sumUs += r.Elapsed
		b.requests++
		b.recs = append(b.recs, r)
	case "group_duration":
		if v < 0 {
			b.probs.Add(lineNo, "negative duration", raw)
			return
		}
		b.groups++
		b.recs = append(b.recs, importer.Rec{End: t, Elapsed: int64(math.Round(v * 1000)), Threads: -1, Tx: true,
			Label: d.labels.ID([]byte(tags.Group))})
	case "http_req_failed":
		b.failedPoints++
		if v != 0 {
			b.failedTrue++
		}
	case "vus":
		if v >= 0 && v < math.MaxInt32 {
			b.vus = append(b.vus, vuPoint{t: t, n: int32(v)})
		}
	case "iterations":
		b.iterations += int64(v)
		if v > 0 && v < math.MaxInt32 {
			b.iters = append(b.iters, vuPoint{t: t, n: int32(v)})
		}
	case "checks":
		if b.checks == nil {
			b.checks = map[string][2]int64{}
		}
		c := b.checks[tags.Check]
		if v != 0 {
			c[0]++
		} else {
			c[1]++
		}
		b.checks[tags.Check] = c
	}
}

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return se.Error()
	}
	return err.Error()
}

// label names a request "METHOD name". A name k6 took from the URL (the
// request was not given a name tag) is templated like an access-log path,
// so /items/17 and /items/18 share "GET /items/{id}"; the scheme and host of
// the first request are dropped from every label, other hosts are kept.
func (d *decoder) label(method, name, rawURL string) int32 {
	// A script's requests come in runs of the same one: the last label is
	// kept (the strings are compared, usually the same ones).
	if m := &d.lastLabel; m.ok && m.method == method && m.name == name && m.url == rawURL {
		return m.id
	}
	id := d.newLabel(method, name, rawURL)
	d.lastLabel = labelMemo{method: method, name: name, url: rawURL, id: id, ok: true}
	return id
}

// labelMemo is the last label a decoder made and what it was made from.
type labelMemo struct {
	method, name, url string
	id                int32
	ok                bool
}

func (d *decoder) newLabel(method, name, rawURL string) int32 {
	if name != "" && name != rawURL && importer.HasMethod(name, method) {
		method = "" // the script's name already holds the method (importer.MethodLabel)
	}
	d.lb = append(d.lb[:0], method...)
	if len(d.lb) > 0 {
		d.lb = append(d.lb, ' ')
	}
	text := name
	if text == "" {
		text = rawURL
	}
	if text == "" {
		return d.labels.ID(bytes.TrimSuffix(d.lb, []byte{' '}))
	}
	templ := text == rawURL
	rest, hostKept := text, false
	if d.host != "" && strings.HasPrefix(text, d.host) && (len(text) == len(d.host) || text[len(d.host)] == '/' || text[len(d.host)] == '?') {
		rest = text[len(d.host):]
	} else if u, err := url.Parse(text); err == nil && u.Scheme != "" && u.Host != "" {
		d.lb = append(d.lb, u.Host...)
		rest, hostKept = u.RequestURI(), true
		if u.RawQuery == "" && !strings.HasSuffix(text, "?") {
			rest = u.EscapedPath()
		}
	} else {
		templ = false // not a URL: a name the script gave
	}
	switch {
	case templ:
		d.lb = accesslog.AppendTemplate(d.lb, []byte(rest))
	case rest == "" && !hostKept:
		d.lb = append(d.lb, '/')
	default:
		d.lb = append(d.lb, rest...)
	}
	return d.labels.ID(d.lb)
}

// primaryHost is scheme://host of the first request in head, or "".
func primaryHost(head []byte) string {
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		if !bytes.HasPrefix(line, []byte(`{"metric":"http_req_duration"`)) {
			continue
		}
		var p point
		if json.Unmarshal(line, &p) != nil {
			continue
		}
		u, err := url.Parse(p.Data.Tags.URL)
		if err != nil || u.Scheme == "" || u.Host == "" {
			return ""
		}
		return u.Scheme + "://" + u.Host
	}
	return ""
}

// classify maps a failed request to an error class from its status and
// k6's error_code (lib/netext/httpext/error_codes.go).
func classify(status int, code string) core.ErrorClass {
	if status > 0 {
		// 4xx/5xx, or a status the script did not expect (a check).
		return core.StatusClass(status)
	}
	c, _ := strconv.Atoi(code)
	switch {
	case c == 1050 || c == 1211:
		return core.ErrTimeout
	case c == 1212:
		return core.ErrRefused
	case c == 1201 || c == 1220:
		return core.ErrReset
	case c >= 1100 && c < 1200:
		return core.ErrDNS
	case c >= 1300 && c < 1400:
		return core.ErrTLS
	case c >= 1600 && c < 1800:
		return core.ErrProtocol
	}
	return core.ErrOther
}
