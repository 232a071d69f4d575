package jtl

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"sync"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
)

// csvChunkSize is the size of the pieces a CSV JTL is cut into. Each
// piece's samples are aggregated where they are decoded, so the memory in
// flight is the pieces and their partial aggregates: half a megabyte (about
// 4,000 rows) keeps both small and the pipeline's start and end short,
// while the cost per piece stays negligible (1M rows: peak RSS 74 → 31 MB
// in BenchmarkImportJTL against 4 MB pieces, and no slower).
const csvChunkSize = 512 << 10

// batch is the decoded content of one chunk: its samples aggregated in
// part, or listed in recs when there is no part.
type batch struct {
	part     *importer.Partial
	recs     []importer.Rec
	probs    importer.ChunkProblems
	empty    int64 // empty Transaction Controller samples skipped
	headers  int64 // repeated header lines skipped
	timeErr  error // a clock-format error that stops the import
	noStatus bool
}

// csvDecoder decodes lines of one CSV JTL. Each goroutine has its own.
type csvDecoder struct {
	l      layout
	labels *importer.Cache
	tp     importer.TimeParser
	tpSet  bool
	cfg    *Config
	fields [][]byte
	fa     [32][]byte // split's fields
	masks  [8]uint64  // splitMask's delimiter bits, 64 bytes a word
	spans  []span     // splitQuoted's fields
	lc     [1 << 6]struct {
		name []byte
		id   int32
	} // label cache
	scr  []byte // unescaped quoted fields
	keep bool   // fill the fields only the raw sample copy needs
	slow bool   // split every line as a quoted record (tests: the reference)
	part *importer.Partial
}

func (s *Source) importCSV(ctx context.Context, run *importer.Run, src io.Reader, head []byte) error {
	l, hasHeader, err := s.layoutOf(head)
	if err != nil {
		return err
	}
	// Decide the clock format from the first data line so every chunk uses
	// the same one, and an ambiguous one fails before any work.
	tp, err := s.timeParser(head, l, hasHeader, run.Clock())
	if err != nil {
		return err
	}
	if l.idx[colResponseMessage] < 0 {
		run.Note("%s: no responseMessage column, so Transaction Controller samples cannot be told from requests", s.cfg.Path)
	}
	if l.idx[colSuccess] < 0 {
		run.Note("%s: no success column; samples with an HTTP status of 400 or more count as failures", s.cfg.Path)
	}
	agg := run.Requests(s.cfg.Workload)
	agg.CollectFigures(importer.JMeterFigures)
	pool := sync.Pool{New: func() any {
		return &csvDecoder{l: l, labels: agg.Labels().NewCache(), tp: tp, tpSet: true, cfg: &s.cfg, keep: run.KeepSamples()}
	}}
	// Each chunk's samples are aggregated on the goroutine that decodes
	// it; the in-order consumer merges the partial aggregates. A chunk
	// holding a sample too far out of order for that merge to be exact is
	// decoded again on the consumer and added sample by sample.
	parts := sync.Pool{New: func() any { return agg.NewPartial() }}
	var empty, headers int64
	probs := run.Problems()
	chunk := s.cfg.ChunkSize
	if chunk <= 0 {
		chunk = csvChunkSize
	}
	err = importer.Parallel(ctx, src, run.Workers(), chunk, importer.CutCSV('"'),
		func(c *importer.Chunk) (*batch, error) {
			d := pool.Get().(*csvDecoder)
			defer pool.Put(d)
			b := &batch{}
			if !s.perSample {
				b.part = parts.Get().(*importer.Partial)
			}
			b.probs.File = s.cfg.Path
			d.decode(c, hasHeader, b)
			if b.timeErr != nil {
				return nil, b.timeErr
			}
			if b.part != nil {
				b.part.Seal()
			}
			return b, nil
		},
		func(c *importer.Chunk, b *batch) error {
			probs.Merge(&b.probs)
			empty += b.empty
			headers += b.headers
			if b.part != nil {
				ok, err := agg.AddPartial(b.part)
				parts.Put(b.part)
				if err != nil || ok {
					s.merged++
					return err
				}
				s.redone++
				d := pool.Get().(*csvDecoder)
				defer pool.Put(d)
				b = &batch{} // problems and counts are already merged
				d.decode(c, hasHeader, b)
			}
			for i := range b.recs {
				if err := agg.Add(&b.recs[i]); err != nil {
					return err
				}
			}
			return nil
		})
	if cerr := agg.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	if empty > 0 {
		run.Note("%s: %d empty Transaction Controller samples (no sampler ran) skipped, as JMeter's dashboard does", s.cfg.Path, empty)
	}
	if headers > 0 {
		run.Note("%s: %d repeated header lines skipped (concatenated files)", s.cfg.Path, headers)
	}
	run.Logf("%s: %d samples, %d failed, %d labels, %d malformed lines", s.cfg.Path, agg.Count(), agg.Errors(),
		agg.Labels().Len(), probs.Count(s.cfg.Path))
	if agg.Count() == 0 {
		return probs.NoSamples(s.cfg.Path)
	}
	return nil
}

// timeParser picks the timeStamp format: the configured one, or the one
// importer.DetectTimeFormat finds in the first data rows' timeStamp values
// (epoch milliseconds, ISO 8601, or one of JMeter's common
// timestamp_format patterns), whatever the rows' quoting. Anything else
// needs --time-format, and the error quotes the first value.
func (s *Source) timeParser(head []byte, l layout, hasHeader bool, clock importer.Clock) (importer.TimeParser, error) {
	if s.cfg.TimeFormat != "" {
		return importer.NewTimeParser(s.cfg.TimeFormat, clock)
	}
	d := &csvDecoder{l: l}
	rest := bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	if hasHeader {
		_, rest, _ = bytes.Cut(rest, []byte{'\n'})
	}
	var vals [][]byte
	for len(rest) > 0 && len(vals) < 50 {
		var fields [][]byte
		line, after, _ := bytes.Cut(rest, []byte{'\n'})
		if f, _, ok := d.split(bytes.TrimSuffix(line, []byte{'\r'})); ok {
			fields, rest = f, after
		} else {
			f, next, bad := d.splitQuoted(rest)
			if bad != "" {
				fields, rest = nil, after // malformed: counted later
			} else {
				fields, rest = f, next
			}
		}
		if i := l.idx[colTimeStamp]; i < len(fields) && len(fields) > 1 {
			v := bytes.TrimSpace(fields[i])
			if len(v) > 0 && !bytes.EqualFold(v, []byte("timeStamp")) {
				vals = append(vals, append([]byte(nil), v...))
			}
		}
	}
	if len(vals) > 1 && !full(head) {
		vals = vals[:len(vals)-1] // the last value may be cut by the end of the head
	}
	if len(vals) == 0 {
		return importer.NewTimeParser("ms", clock) // no readable row; lines are counted later
	}
	p, _, err := importer.DetectTimeFormat(vals, clock)
	if err != nil {
		return p, fmt.Errorf("%s: timeStamp: %w", s.cfg.Path, err)
	}
	if p.Kind != importer.EpochMs && p.Kind != importer.ISO8601 && p.Kind != importer.Layout {
		return importer.TimeParser{}, fmt.Errorf("%s: timeStamp %q is not epoch milliseconds as JMeter writes them; give %s", s.cfg.Path, importer.Quote(vals[0]), importer.TimeFormatFlag)
	}
	return p, nil
}

// full reports whether head ends at a line end (the whole head is lines).
func full(head []byte) bool { return len(head) > 0 && head[len(head)-1] == '\n' }

// split splits one line with no quote into fields. It reports false when
// the line has a quote (the caller then uses splitQuoted).
func (d *csvDecoder) split(line []byte) ([][]byte, []byte, bool) {
	f, n, ok := d.splitN(line, len(d.fa))
	switch {
	case !ok:
		return nil, nil, false
	case n > len(f):
		return d.splitLong(line)
	}
	return f, nil, true
}

// splitN splits one line with no quote: it returns its first need fields
// (all when it has fewer) and the number of fields it has, or false when the
// line has a quote. need is at most len(d.fa).
func (d *csvDecoder) splitN(line []byte, need int) ([][]byte, int, bool) {
	if bytes.IndexByte(line, '"') >= 0 {
		return nil, 0, false
	}
	f, n := d.splitFast(line, need)
	return f, n, true
}

// splitFast is splitN for a line the caller knows has no quote. It looks at
// eight bytes at a time for the delimiter, and past the fields it needs
// only counts delimiters.
func (d *csvDecoder) splitFast(line []byte, need int) ([][]byte, int) {
	if len(line) <= 64*len(d.masks) {
		return d.splitMask(line, need)
	}
	return d.splitEvents(line, need)
}

// splitMask is splitFast for lines of up to 64 × len(d.masks) bytes. It
// first makes a bit mask of the line's delimiters, eight bytes at a time
// without a branch (the high bit of each byte that matches, gathered into
// one byte by a multiplication), then reads the fields' ends off the mask:
// the processor mispredicts a branch a few times a line instead of at
// every delimiter, and the common line costs a third of the instructions.
func (d *csvDecoder) splitMask(line []byte, need int) ([][]byte, int) {
	masks := &d.masks
	dl := uint64(d.l.delim) * ones
	i := 0
	for ; i+64 <= len(line); i += 64 { // whole 64-byte words of the mask
		b := line[i : i+64 : i+64]
		masks[i>>6&7] = delimBits(binary.LittleEndian.Uint64(b[0:]), dl) |
			delimBits(binary.LittleEndian.Uint64(b[8:]), dl)<<8 |
			delimBits(binary.LittleEndian.Uint64(b[16:]), dl)<<16 |
			delimBits(binary.LittleEndian.Uint64(b[24:]), dl)<<24 |
			delimBits(binary.LittleEndian.Uint64(b[32:]), dl)<<32 |
			delimBits(binary.LittleEndian.Uint64(b[40:]), dl)<<40 |
			delimBits(binary.LittleEndian.Uint64(b[48:]), dl)<<48 |
			delimBits(binary.LittleEndian.Uint64(b[56:]), dl)<<56
	}
	words := i >> 6
	if i < len(line) { // the last, partial word
		var acc uint64
		k := 0
		for ; i+8 <= len(line); i, k = i+8, k+8 {
			acc |= delimBits(binary.LittleEndian.Uint64(line[i:]), dl) << k
		}
		if r := len(line) - i; r > 0 && len(line) >= 8 {
			// The line's last eight bytes, of which the first 8 − r were
			// seen already: their bits are shifted out.
			acc |= delimBits(binary.LittleEndian.Uint64(line[len(line)-8:]), dl) >> (8 - r) << k
		} else {
			for ; i < len(line); i, k = i+1, k+1 {
				if line[i] == d.l.delim {
					acc |= 1 << k
				}
			}
		}
		masks[words&7] = acc
		words++
	}
	fs := d.fa[:need]
	n, start := 0, 0
	w := 0
	for ; w < words && n < need; w++ {
		m := masks[w&7]
		for ; m != 0 && n < need; m &= m - 1 {
			j := w*64 + bits.TrailingZeros64(m)
			fs[n] = line[start:j]
			n++
			start = j + 1
		}
		if m != 0 { // the fields needed end in this word: count the rest
			n += bits.OnesCount64(m)
		}
	}
	for ; w < words; w++ {
		n += bits.OnesCount64(masks[w&7])
	}
	if n < need {
		fs[n] = line[start:]
	}
	n++
	return fs[:min(n, need)], n
}

// delimBits returns, for eight bytes x, the delimiter bits: bit k set when
// byte k is the delimiter (dl is the delimiter in every byte).
func delimBits(x, dl uint64) uint64 {
	return zeroBytes(x^dl) >> 7 * gather >> 56
}

// gather moves the high bits of a word's eight bytes, shifted down to the
// bytes' low bits, into its top byte (bit k for byte k).
const gather = 0x0102040810204080

// splitEvents is splitFast for long lines: it looks at eight bytes at a
// time and visits each delimiter.
func (d *csvDecoder) splitEvents(line []byte, need int) ([][]byte, int) {
	fs := d.fa[:need]
	n := 0
	dl := uint64(d.l.delim) * ones
	start, i := 0, 0
	for ; i+8 <= len(line); i += 8 {
		m := zeroBytes(binary.LittleEndian.Uint64(line[i:]) ^ dl)
		if n >= need {
			n += bits.OnesCount64(m)
			continue
		}
		for ; m != 0; m &= m - 1 {
			j := i + bits.TrailingZeros64(m)>>3
			fs[n] = line[start:j]
			n++
			start = j + 1
			if n == need {
				n += bits.OnesCount64(m & (m - 1))
				break
			}
		}
	}
	for ; i < len(line); i++ {
		if line[i] == d.l.delim {
			if n < need {
				fs[n] = line[start:i]
			}
			n++
			start = i + 1
		}
	}
	if n < need {
		fs[n] = line[start:]
	}
	n++
	return fs[:min(n, need)], n
}

// needed is how many leading fields record reads: up to the last column
// it uses (len(d.fa) at most; 0 when a column it uses is beyond that).
func (d *csvDecoder) needed() int {
	cols := []int{colTimeStamp, colElapsed, colLabel, colResponseCode, colResponseMessage, colSuccess,
		colFailureMessage, colBytes, colSentBytes, colAllThreads}
	if d.keep {
		cols = append(cols, colThreadName, colURL, colLatency, colConnect)
	}
	n := 0
	for _, c := range cols {
		n = max(n, d.l.idx[c]+1)
	}
	if n > len(d.fa) {
		return 0
	}
	return n
}

// splitLong is split for a line of more fields than csvDecoder.fa holds.
func (d *csvDecoder) splitLong(line []byte) ([][]byte, []byte, bool) {
	if bytes.IndexByte(line, '"') >= 0 {
		return nil, nil, false
	}
	d.fields = d.fields[:0]
	for {
		i := bytes.IndexByte(line, d.l.delim)
		if i < 0 {
			d.fields = append(d.fields, line)
			return d.fields, nil, true
		}
		d.fields = append(d.fields, line[:i])
		line = line[i+1:]
	}
}

const (
	ones = 0x0101010101010101
	low7 = 0x7f7f7f7f7f7f7f7f
)

// zeroBytes has the high bit set in exactly the bytes of x that are zero.
func zeroBytes(x uint64) uint64 {
	return ^(((x & low7) + low7) | x | low7)
}

// splitQuoted splits one RFC 4180 record starting at data, whose quoted
// fields may hold delimiters, doubled quotes and newlines. It returns the
// fields, the rest of data after the record, and an error text for a
// malformed record (the rest then starts after the current line).
func (d *csvDecoder) splitQuoted(data []byte) ([][]byte, []byte, string) {
	d.fields = d.fields[:0]
	d.scr = d.scr[:0]
	spans := d.spans[:0]
	defer func() { d.spans = spans[:0] }()
	i := 0
	for {
		if i < len(data) && data[i] == '"' {
			start := len(d.scr)
			i++
			for {
				j := bytes.IndexByte(data[i:], '"')
				if j < 0 {
					return nil, nil, "unterminated quoted field"
				}
				d.scr = append(d.scr, data[i:i+j]...)
				i += j + 1
				if i < len(data) && data[i] == '"' {
					d.scr = append(d.scr, '"')
					i++
					continue
				}
				break
			}
			spans = append(spans, span{1, start, len(d.scr)})
			switch {
			case i >= len(data):
				return d.resolve(spans, data), nil, ""
			case data[i] == d.l.delim:
				i++
				continue
			case data[i] == '\n':
				return d.resolve(spans, data), data[i+1:], ""
			case data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n':
				return d.resolve(spans, data), data[i+2:], ""
			default:
				return nil, nil, "text after a closing quote"
			}
		}
		start := i
		for i < len(data) && data[i] != d.l.delim && data[i] != '\n' {
			if data[i] == '"' {
				return nil, nil, "quote inside an unquoted field"
			}
			i++
		}
		end := i
		if i < len(data) && data[i] == '\n' && end > start && data[end-1] == '\r' {
			end--
		}
		spans = append(spans, span{0, start, end})
		if i >= len(data) {
			return d.resolve(spans, data), nil, ""
		}
		if data[i] == '\n' {
			return d.resolve(spans, data), data[i+1:], ""
		}
		i++ // delimiter
	}
}

// span is a field of a quoted record: bytes start:end of d.scr when scr is
// 1, of the record's data otherwise.
type span struct{ scr, start, end int }

func (d *csvDecoder) resolve(spans []span, data []byte) [][]byte {
	for _, s := range spans {
		if s.scr == 1 {
			d.fields = append(d.fields, d.scr[s.start:s.end:s.end])
		} else {
			d.fields = append(d.fields, data[s.start:s.end:s.end])
		}
	}
	return d.fields
}

// decode turns a chunk into records.
func (d *csvDecoder) decode(c *importer.Chunk, hasHeader bool, b *batch) {
	data := c.Data
	line := c.Line
	if c.Seq == 0 {
		data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
		if hasHeader {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				return
			}
			data = data[i+1:]
			line++
		}
	}
	d.part = b.part
	defer func() { d.part = nil }()
	if d.part == nil {
		b.recs = make([]importer.Rec, 0, bytes.Count(data, []byte{'\n'})+1)
	}
	need := d.needed()
	// How far the next quote is from the start of data (len(data) when
	// there is none): a line that ends before it has none and is split
	// without looking for one.
	quote := -1 // negative: to be looked for from here
	for len(data) > 0 {
		if quote < 0 {
			if quote = bytes.IndexByte(data, '"'); quote < 0 {
				quote = len(data)
			}
		}
		nl := bytes.IndexByte(data, '\n')
		var raw, rest []byte
		if nl < 0 {
			raw, rest = data, nil
		} else {
			raw, rest = data[:nl], data[nl+1:]
		}
		lineNo := line
		if len(raw) > 0 && raw[len(raw)-1] == '\r' {
			raw = raw[:len(raw)-1]
		}
		var fields [][]byte
		var nf int
		ok := false
		switch {
		case quote < len(raw) || d.slow:
		case need > 0:
			fields, nf = d.splitFast(raw, need)
			ok = true
		default:
			fields, _, ok = d.split(raw)
			nf = len(fields)
		}
		if !ok {
			var bad string
			var after []byte
			fields, after, bad = d.splitQuoted(data)
			if bad != "" {
				b.probs.Add(lineNo, bad, raw)
			} else {
				// The record may have spanned several lines.
				consumed := data[:len(data)-len(after)]
				raw = bytes.TrimSuffix(bytes.TrimSuffix(consumed, []byte{'\n'}), []byte{'\r'})
				line += int64(bytes.Count(consumed, []byte{'\n'}))
				quote -= len(consumed)
				data = after
				d.record(fields, len(fields), raw, lineNo, b)
				continue
			}
		} else {
			d.record(fields, nf, raw, lineNo, b)
		}
		line++
		quote -= len(data) - len(rest)
		data = rest
	}
}

// label returns the id of a label, from a small cache of the labels seen
// last (no hashing of the name when it hits).
func (d *csvDecoder) label(name []byte) int32 {
	if len(name) == 0 {
		return d.labels.ID(name)
	}
	// The slot is a hash of the length and the last eight bytes, where
	// labels like "GET /api/items/07" differ.
	var x uint64
	if len(name) >= 8 {
		x = binary.LittleEndian.Uint64(name[len(name)-8:])
	} else {
		for _, c := range name {
			x = x<<8 | uint64(c)
		}
	}
	x = (x ^ uint64(len(name))) * 0x9e3779b97f4a7c15
	e := &d.lc[x>>(64-6)] // 64 slots
	if e.name != nil && string(e.name) == string(name) {
		return e.id
	}
	e.id = d.labels.ID(name)
	e.name = append(e.name[:0], name...)
	return e.id
}

// record turns the fields of one line into a Rec, or counts it malformed.
// The line has nf fields; fields holds at least those up to the last column
// record reads (csvDecoder.needed).
func (d *csvDecoder) record(fields [][]byte, nf int, raw []byte, lineNo int64, b *batch) {
	if len(raw) == 0 {
		return
	}
	if bytes.Equal(raw, d.l.header) {
		b.headers++
		return
	}
	if nf != d.l.fields {
		b.probs.Add(lineNo, fmt.Sprintf("%d fields, the header has %d", nf, d.l.fields), raw)
		return
	}
	get := func(c int) []byte {
		if i := d.l.idx[c]; i >= 0 {
			return fields[i]
		}
		return nil
	}
	ts, err := d.tp.Parse(get(colTimeStamp))
	if err != nil {
		b.probs.Add(lineNo, "timeStamp: "+err.Error(), raw)
		return
	}
	el, ok := importer.ParseInt(get(colElapsed))
	if !ok || el < 0 {
		b.probs.Add(lineNo, "elapsed is not a number of milliseconds", raw)
		return
	}
	msg := get(colResponseMessage)
	if bytes.HasPrefix(msg, []byte(emptyController)) {
		b.empty++
		return
	}
	r := importer.Rec{Elapsed: el * 1000, Threads: -1, Tx: bytes.HasPrefix(msg, []byte(controllerPrefix))}
	if d.cfg.TimestampEnd {
		r.End = ts
	} else {
		r.End = ts + el*1e6
	}
	r.Label = d.label(get(colLabel))
	code := get(colResponseCode)
	success := true
	if sf := get(colSuccess); d.l.idx[colSuccess] >= 0 {
		switch string(sf) {
		case "true", "TRUE", "True":
		case "false", "FALSE", "False":
			success = false
		default:
			b.probs.Add(lineNo, "success is neither true nor false", raw)
			return
		}
	}
	st, stOK := importer.ParseInt(code)
	if d.l.idx[colSuccess] < 0 && stOK && core.StatusFails(int(st)) {
		success = false
	}
	if stOK && st >= 100 && st <= 999 {
		r.Status = int32(st)
	}
	if !success {
		fm := get(colFailureMessage)
		r.Class, r.Status = classify(code, append(append([]byte(nil), msg...), fm...))
		switch {
		case len(fm) > 0:
			r.Message = string(fm)
		case len(msg) > 0:
			r.Message = string(msg)
		default:
			r.Message = string(code)
		}
		if r.Tx {
			r.Class = core.ErrCheck
		}
	}
	if v := get(colBytes); v != nil {
		r.Recv, _ = importer.ParseInt(v)
	}
	if v := get(colSentBytes); v != nil {
		r.Sent, _ = importer.ParseInt(v)
	}
	if v := get(colAllThreads); v != nil {
		if n, ok := importer.ParseInt(v); ok && n >= 0 && n < 1<<31 {
			r.Threads = int32(n)
		}
	}
	if d.keep {
		r.Thread = string(get(colThreadName))
		r.URL = string(get(colURL))
	}
	if d.keep && d.l.idx[colLatency] >= 0 { // only the raw sample copy has them
		if v, ok := importer.ParseInt(get(colLatency)); ok {
			r.TTFB = v * 1000
		}
	}
	if d.keep && d.l.idx[colConnect] >= 0 {
		if v, ok := importer.ParseInt(get(colConnect)); ok {
			r.Connect = v * 1000
		}
	}
	if d.part != nil {
		d.part.Add(&r)
		return
	}
	b.recs = append(b.recs, r)
}
