package jtl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"golang.org/x/text/encoding/ianaindex"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
)

// An XML JTL is <testResults> holding one element per sample: <httpSample>
// for HTTP samplers, <sample> for the others and for Transaction
// Controllers. Attributes carry what the CSV columns carry:
//
//	t elapsed (ms)   it idle time   lt latency   ct connect   ts timeStamp (epoch ms)
//	s success        lb label       rc code      rm message   tn thread name
//	dt data type     by bytes       sby sent bytes            ng/na group/all threads
//
// Children: <assertionResult> (with <failureMessage>), <java.net.URL>,
// optional <responseData>, <samplerData>, headers … and nested samples:
// the requests of a Transaction Controller in parent mode and the
// sub-results of a sampler (a followed redirect is "GET /a" holding
// "GET /a-0" and "GET /a-1").
//
// Every sample element at any depth becomes one sample, exactly as JMeter
// writes the same results to a CSV JTL (one line per sample and sub-result),
// which is what its dashboard reads: the import of an XML JTL equals the
// import of the CSV JTL of the same run.

// xmlFrame is a sample element whose end tag has not been read yet: its
// record waits for the failure message and URL held by its children.
type xmlFrame struct {
	rec     importer.Rec
	depth   int
	code    string
	msg     string
	success bool
	fm      []byte // first <failureMessage> of its own assertion results
	fmSet   bool
	empty   bool // an empty Transaction Controller sample
	bad     string
	tag     string // the start tag, rebuilt for a problem report
	line    int64
}

// xmlDecoder streams one XML JTL with encoding/xml's token reader: memory
// holds the open elements (a sample and its children), never the file. Not
// safe for concurrent use.
type xmlDecoder struct {
	path    string
	cfg     *Config
	tp      importer.TimeParser
	labels  *importer.Cache
	keep    bool
	probs   importer.ChunkProblems
	emit    func(*importer.Rec) error
	stack   []*xmlFrame
	free    []*xmlFrame
	depth   int
	capture int // what character data is being collected
	capDep  int
	text    []byte
	empty   int64
	root    bool // <testResults> seen
	noRoot  bool // a chunk after the first: no <testResults> to expect
	closed  bool // </testResults> seen
	samples int64
	ctx     context.Context
}

const (
	capNone = iota
	capFailure
	capURL
)

// maxCapture bounds a failure message or URL kept from the file.
const maxCapture = 4 << 10

func (s *Source) importXML(ctx context.Context, run *importer.Run, r io.Reader) error {
	format := s.cfg.TimeFormat
	if format == "" {
		format = "ms" // SampleResultConverter always writes ts in epoch ms
	}
	tp, err := importer.NewTimeParser(format, run.Clock())
	if err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	agg := run.Requests(s.cfg.Workload)
	agg.CollectFigures(importer.JMeterFigures)
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, 1<<20)
	}
	newDecoder := func() *xmlDecoder {
		d := &xmlDecoder{path: s.cfg.Path, cfg: &s.cfg, tp: tp, labels: agg.Labels().NewCache(), keep: run.KeepSamples(), ctx: ctx}
		d.probs.File = s.cfg.Path
		return d
	}
	var empty, bad int64
	closed := false
	head, _ := br.Peek(64 << 10)
	if run.Workers() > 1 && prettyPrinted(head) {
		err = s.parallelXML(ctx, run, br, agg, newDecoder, &empty, &bad, &closed)
	} else {
		d := newDecoder()
		d.emit = agg.Add
		err = d.run(br, 1)
		run.Problems().Merge(&d.probs)
		empty, bad, closed = d.empty, d.probs.Count, d.closed
	}
	if cerr := agg.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	if empty > 0 {
		run.Note("%s: %d empty Transaction Controller samples (no sampler ran) skipped, as JMeter's dashboard does", s.cfg.Path, empty)
	}
	if !closed {
		run.Note("%s: the file does not end with </testResults> (JMeter was stopped before closing it, or was still writing it); every complete sample was read", s.cfg.Path)
	}
	run.Logf("%s: %d samples, %d failed, %d labels, %d malformed samples", s.cfg.Path, agg.Count(), agg.Errors(),
		agg.Labels().Len(), bad)
	if agg.Count() == 0 {
		return fmt.Errorf("%s: no samples", s.cfg.Path)
	}
	return nil
}

// prettyPrinted reports whether the file is laid out as JMeter's XStream
// writer lays it out: every top-level sample starts a line at column 0 and
// everything inside it is indented. Such a file can be cut before any
// line that starts with a sample tag and the pieces decoded apart.
func prettyPrinted(head []byte) bool {
	starts := 0
	for len(head) > 0 {
		line := head
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			break // an incomplete last line says nothing
		}
		line, head = head[:i], head[i+1:]
		if len(line) == 0 || line[0] != '<' {
			continue
		}
		switch {
		case sampleLine(line):
			starts++
		case bytes.HasPrefix(line, []byte("</httpSample>")), bytes.HasPrefix(line, []byte("</sample>")),
			bytes.HasPrefix(line, []byte("<?xml")), bytes.HasPrefix(line, []byte("<testResults")),
			bytes.HasPrefix(line, []byte("</testResults>")):
		default:
			return false // a child element at column 0: not XStream's layout
		}
	}
	return starts > 0
}

// sampleLine reports whether a line starts with a sample start tag.
func sampleLine(line []byte) bool {
	for _, t := range [...]string{"<httpSample", "<sample"} {
		if bytes.HasPrefix(line, []byte(t)) && len(line) > len(t) && (line[len(t)] == ' ' || line[len(t)] == '>' || line[len(t)] == '/') {
			return true
		}
	}
	return false
}

// cutXML cuts a pretty-printed XML JTL before its last line that starts a
// top-level sample.
func cutXML(b []byte) int {
	end := len(b)
	for end > 0 {
		i := bytes.LastIndexByte(b[:end], '\n')
		if i < 0 {
			return 0
		}
		if sampleLine(b[i+1:]) {
			return i + 1
		}
		end = i
	}
	return 0
}

// xmlBatch is what one chunk of an XML JTL decodes to.
type xmlBatch struct {
	recs   []importer.Rec
	probs  importer.ChunkProblems
	empty  int64
	closed bool
}

// parallelXML decodes a pretty-printed XML JTL in chunks on every worker,
// each with its own token reader, and aggregates the samples in file order.
func (s *Source) parallelXML(ctx context.Context, run *importer.Run, br *bufio.Reader, agg *importer.Aggregator,
	newDecoder func() *xmlDecoder, empty, bad *int64, closed *bool) error {
	pool := sync.Pool{New: func() any { return newDecoder() }}
	probs := run.Problems()
	return importer.Parallel(ctx, br, run.Workers(), s.cfg.ChunkSize, cutXML,
		func(c *importer.Chunk) (*xmlBatch, error) {
			d := pool.Get().(*xmlDecoder)
			defer pool.Put(d)
			b := &xmlBatch{}
			d.reset()
			d.noRoot = c.Seq > 0 // only the first chunk holds <testResults>
			d.emit = func(r *importer.Rec) error {
				b.recs = append(b.recs, *r)
				return nil
			}
			err := d.run(bufio.NewReaderSize(bytes.NewReader(c.Data), 64<<10), c.Line)
			b.probs, b.empty, b.closed = d.probs, d.empty, d.closed
			b.probs.First = append([]importer.Problem(nil), d.probs.First...)
			return b, err
		},
		func(c *importer.Chunk, b *xmlBatch) error {
			probs.Merge(&b.probs)
			*empty += b.empty
			*bad += b.probs.Count
			*closed = *closed || b.closed
			for i := range b.recs {
				if err := agg.Add(&b.recs[i]); err != nil {
					return err
				}
			}
			return nil
		})
}

// reset readies a pooled decoder for another chunk.
func (d *xmlDecoder) reset() {
	d.resetStack()
	d.probs.Reset(d.path)
	d.empty, d.root, d.closed, d.samples = 0, false, false, 0
}

// resyncReader feeds a decoder the bytes put back after a syntax error,
// then the file. It implements io.ByteReader so that encoding/xml reads
// from it byte by byte instead of buffering ahead: after an error, the rest
// of the file is still here to resume from.
type resyncReader struct {
	pending []byte
	br      *bufio.Reader
}

func (r *resyncReader) ReadByte() (byte, error) {
	if len(r.pending) > 0 {
		c := r.pending[0]
		r.pending = r.pending[1:]
		return c, nil
	}
	return r.br.ReadByte()
}

func (r *resyncReader) Read(p []byte) (int, error) {
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	return r.br.Read(p)
}

// charsetReader lets the decoder read files whose XML declaration names
// another encoding than UTF-8 (jmeter.save.saveservice.xml_pi or a JVM
// default charset).
func charsetReader(label string, in io.Reader) (io.Reader, error) {
	enc, err := ianaindex.IANA.Encoding(label)
	if err != nil || enc == nil {
		return nil, fmt.Errorf("XML encoding %q not supported", label)
	}
	return enc.NewDecoder().Reader(in), nil
}

// run decodes the whole stream. A syntax error is one malformed entry: the
// decoder skips to the next sample start tag and goes on with a fresh
// token reader, so one damaged sample costs that sample only.
func (d *xmlDecoder) run(br *bufio.Reader, base int64) error {
	src := &resyncReader{br: br}
	// base is the file line of the token reader's first byte.
	for {
		dec := xml.NewDecoder(src)
		dec.CharsetReader = charsetReader
		err := d.tokens(dec, base)
		if err == nil {
			return nil
		}
		var syn *xml.SyntaxError
		if !errors.As(err, &syn) {
			return err
		}
		line, _ := dec.InputPos()
		errLine := base + int64(line) - 1
		dropped := len(d.stack)
		d.resetStack()
		if strings.Contains(syn.Msg, "unexpected EOF") {
			reason := "file ends inside an element (truncated)"
			if dropped > 0 {
				reason = fmt.Sprintf("file ends inside a sample (truncated); %d unfinished sample(s) left out", dropped)
			}
			d.probs.Add(errLine, reason, nil)
			return nil
		}
		if strings.Contains(syn.Msg, "CharsetReader") || strings.Contains(syn.Msg, "encoding") {
			return fmt.Errorf("line %d: %s", errLine, syn.Msg)
		}
		reason := "XML syntax error: " + syn.Msg
		if dropped > 0 {
			reason += fmt.Sprintf("; %d unfinished sample(s) left out", dropped)
		}
		d.probs.Add(errLine, reason, nil)
		// Resume at the next sample start tag: first in the rest of the
		// damaged line, then at the start of a later line.
		cur := errLine
		progressed := dec.InputOffset() > 0
		for {
			l, rerr := readLine(src)
			if i := sampleStart(l, !progressed); i >= 0 {
				src.pending = append(append([]byte(nil), l[i:]...), src.pending...)
				base = cur
				break
			}
			progressed = true
			if len(l) > 0 && l[len(l)-1] == '\n' {
				cur++
			}
			if rerr != nil {
				return nil // nothing more to read
			}
		}
		if d.ctx.Err() != nil {
			return d.ctx.Err()
		}
	}
}

// readLine reads up to and including the next newline, whatever its length
// (the returned slice is a copy).
func readLine(r *resyncReader) ([]byte, error) {
	var out []byte
	if len(r.pending) > 0 {
		i := bytes.IndexByte(r.pending, '\n')
		if i >= 0 {
			out = append(out, r.pending[:i+1]...)
			r.pending = r.pending[i+1:]
			return out, nil
		}
		out = append(out, r.pending...)
		r.pending = nil
	}
	for {
		l, err := r.br.ReadSlice('\n')
		out = append(out, l...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return out, err
	}
}

// sampleStart is the offset of the first sample start tag in l, or −1.
// skipFirst ignores one at offset 0 (the tag the failed reader started
// from), so a resync always makes progress.
func sampleStart(l []byte, skipFirst bool) int {
	best := -1
	for _, tag := range [...]string{"<httpSample", "<sample"} {
		from := 0
		for {
			i := bytes.Index(l[from:], []byte(tag))
			if i < 0 {
				break
			}
			i += from
			end := i + len(tag)
			if (i > 0 || !skipFirst) && end < len(l) && (l[end] == ' ' || l[end] == '>' || l[end] == '/' || l[end] == '\t' || l[end] == '\r' || l[end] == '\n') {
				if best < 0 || i < best {
					best = i
				}
				break
			}
			from = i + 1
		}
	}
	return best
}

func (d *xmlDecoder) resetStack() {
	for _, f := range d.stack {
		d.free = append(d.free, f)
	}
	d.stack = d.stack[:0]
	d.depth, d.capture = 0, capNone
}

// tokens reads tokens until the end of the stream or an error. RawToken
// does not check that end tags match start tags, which lets a reader that
// resumed in the middle of the document end at </testResults> without
// having seen its start.
func (d *xmlDecoder) tokens(dec *xml.Decoder, base int64) error {
	for {
		tok, err := dec.RawToken()
		if errors.Is(err, io.EOF) {
			if n := len(d.stack); n > 0 {
				line, _ := dec.InputPos()
				d.probs.Add(base+int64(line)-1, fmt.Sprintf("file ends inside a sample (truncated); %d unfinished sample(s) left out", n), nil)
				d.resetStack()
			}
			if !d.root && !d.noRoot {
				return errors.New("no <testResults> element: not a JMeter XML JTL")
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			d.depth++
			name := t.Name.Local
			switch {
			case name == "testResults":
				d.root = true
			case name == "httpSample" || name == "sample":
				line, _ := dec.InputPos()
				d.start(t, base+int64(line)-1)
			case d.capture == capNone && len(d.stack) > 0 && name == "failureMessage" && !d.top().fmSet:
				d.capture, d.capDep, d.text = capFailure, d.depth, d.text[:0]
			case d.capture == capNone && len(d.stack) > 0 && name == "java.net.URL" && d.keep && d.depth == d.top().depth+1:
				d.capture, d.capDep, d.text = capURL, d.depth, d.text[:0]
			}
		case xml.CharData:
			if d.capture != capNone && len(d.text) < maxCapture {
				d.text = append(d.text, t[:min(len(t), maxCapture-len(d.text))]...)
			}
		case xml.EndElement:
			if d.capture != capNone && d.depth == d.capDep {
				f := d.top()
				switch d.capture {
				case capFailure:
					f.fm, f.fmSet = append(f.fm[:0], bytes.TrimSpace(d.text)...), true
				case capURL:
					f.rec.URL = string(bytes.TrimSpace(d.text))
				}
				d.capture = capNone
			}
			if n := len(d.stack); n > 0 && d.stack[n-1].depth == d.depth {
				if err := d.finish(); err != nil {
					return err
				}
			}
			if t.Name.Local == "testResults" {
				d.closed = true
			}
			d.depth = max(d.depth-1, 0)
			if d.samples&1023 == 0 && d.ctx.Err() != nil {
				return d.ctx.Err()
			}
		}
	}
}

func (d *xmlDecoder) top() *xmlFrame { return d.stack[len(d.stack)-1] }

// start reads a sample's attributes into a new frame.
func (d *xmlDecoder) start(t xml.StartElement, line int64) {
	var f *xmlFrame
	if n := len(d.free); n > 0 {
		f, d.free = d.free[n-1], d.free[:n-1]
		fm := f.fm[:0]
		*f = xmlFrame{fm: fm}
	} else {
		f = &xmlFrame{}
	}
	f.depth, f.line, f.success = d.depth, line, true
	f.rec = importer.Rec{Threads: -1}
	var ts, el int64
	haveTS, haveT, haveS := false, false, false
	for _, a := range t.Attr {
		v := a.Value
		switch a.Name.Local {
		case "t":
			n, ok := importer.ParseInt([]byte(v))
			if !ok || n < 0 {
				f.bad = "t (elapsed) is not a number of milliseconds"
			}
			el, haveT = n, true
		case "ts":
			n, err := d.tp.Parse([]byte(v))
			if err != nil {
				f.bad = "ts: " + err.Error()
			}
			ts, haveTS = n, true
		case "s":
			switch v {
			case "true", "TRUE", "True":
			case "false", "FALSE", "False":
				f.success = false
			default:
				f.bad = "s (success) is neither true nor false"
			}
			haveS = true
		case "lb":
			f.rec.Label = d.labels.ID([]byte(v))
		case "rc":
			f.code = v
		case "rm":
			f.msg = v
		case "tn":
			if d.keep {
				f.rec.Thread = v
			}
		case "by":
			f.rec.Recv, _ = importer.ParseInt([]byte(v))
		case "sby":
			f.rec.Sent, _ = importer.ParseInt([]byte(v))
		case "na":
			if n, ok := importer.ParseInt([]byte(v)); ok && n >= 0 && n < 1<<31 {
				f.rec.Threads = int32(n)
			}
		case "lt":
			if n, ok := importer.ParseInt([]byte(v)); ok {
				f.rec.TTFB = n * 1000
			}
		case "ct":
			if n, ok := importer.ParseInt([]byte(v)); ok {
				f.rec.Connect = n * 1000
			}
		}
	}
	switch {
	case f.bad != "":
	case !haveT:
		f.bad = "no t (elapsed) attribute"
	case !haveTS:
		f.bad = "no ts (timeStamp) attribute"
	}
	if f.bad != "" {
		f.tag = startTag(t)
	}
	if !haveS {
		if st, ok := importer.ParseInt([]byte(f.code)); ok && core.StatusFails(int(st)) {
			f.success = false
		}
	}
	f.rec.Elapsed = el * 1000
	if d.cfg.TimestampEnd {
		f.rec.End = ts
	} else {
		f.rec.End = ts + el*1e6
	}
	f.empty = strings.HasPrefix(f.msg, emptyController)
	f.rec.Tx = strings.HasPrefix(f.msg, controllerPrefix)
	d.stack = append(d.stack, f)
}

// startTag rebuilds a start tag for a problem report.
func startTag(t xml.StartElement) string {
	var b strings.Builder
	b.WriteString("<" + t.Name.Local)
	for _, a := range t.Attr {
		fmt.Fprintf(&b, " %s=%q", a.Name.Local, a.Value)
	}
	b.WriteString(">")
	return b.String()
}

// finish turns the innermost open sample into a record.
func (d *xmlDecoder) finish() error {
	n := len(d.stack)
	f := d.stack[n-1]
	d.stack = d.stack[:n-1]
	defer func() { d.free = append(d.free, f) }()
	switch {
	case f.bad != "":
		d.probs.Add(f.line, f.bad, []byte(f.tag))
		return nil
	case f.empty:
		d.empty++
		return nil
	}
	r := &f.rec
	if st, ok := importer.ParseInt([]byte(f.code)); ok && st >= 100 && st <= 999 {
		r.Status = int32(st)
	}
	if !f.success {
		r.Class, r.Status, r.Message = failure([]byte(f.code), []byte(f.msg), f.fm, r.Tx)
	}
	d.samples++
	return d.emit(r)
}

// failure classes a failed sample and picks its message the way the CSV
// decoder does: the assertion's failure message, else the response
// message, else the code.
func failure(code, msg, fm []byte, tx bool) (core.ErrorClass, int32, string) {
	class, status := classify(code, append(append([]byte(nil), msg...), fm...))
	var m string
	switch {
	case len(fm) > 0:
		m = string(fm)
	case len(msg) > 0:
		m = string(msg)
	default:
		m = string(code)
	}
	if tx {
		class = core.ErrCheck
	}
	return class, status, m
}
