package httpc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"iter"

	"github.com/plateau-perf/plateau/internal/core"
)

// Parser limits. They bound the memory one hostile or broken server can make
// a virtual user hold: a response head (status line, headers, and any 1xx
// heads before it) never exceeds MaxHeaderBytes, and nothing else grows
// without bound except Result.Body, which Config.MaxBody caps.
const (
	// MaxHeaderBytes bounds a response head (status line and header fields);
	// a longer one fails with ErrProtocol. It also bounds chunked trailers.
	MaxHeaderBytes = 64 << 10
	maxFields      = 1024 // header fields per head
	max1xx         = 16   // informational responses skipped before the final one
	maxChunkLine   = readBufSize
)

// ProtocolError reports a response that does not follow HTTP/1.1: a
// malformed status line or header, bad chunk framing, an oversized head, or
// an undecodable gzip body. Its class is core.ErrProtocol.
type ProtocolError struct {
	Msg  string // what was wrong
	Data string // a short quoted excerpt of the offending bytes, if any
	Err  error  // underlying cause (gzip), if any
}

func (e *ProtocolError) Error() string {
	s := "malformed response: " + e.Msg
	if e.Data != "" {
		s += " " + e.Data
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// protoErr builds a ProtocolError quoting at most 64 bytes of data when
// they read as text (core.ReadableExcerpt).
func protoErr(msg string, data []byte) error {
	e := &ProtocolError{Msg: msg}
	if data != nil {
		if len(data) > 64 {
			data = data[:64]
		}
		if len(data) == 0 || core.ReadableExcerpt(data) {
			e.Data = fmt.Sprintf("%q", data)
		} else {
			// Noise differs on every failure: one wording groups them.
			e.Data = "(binary data)"
		}
	}
	return e
}

// field locates one header field in the head buffer.
type field struct{ ns, ne, vs, ve int32 }

// Body framing modes.
const (
	bodyNone    = iota // HEAD, 1xx, 204, 304
	bodyLength         // Content-Length
	bodyChunked        // Transfer-Encoding: chunked
	bodyEOF            // read until the server closes
)

// head is what the client needs from a response head beyond the raw fields.
type head struct {
	status        int
	proto         string
	http10        bool
	contentLength int64 // -1 when absent
	hasTE         bool
	chunked       bool
	close         bool // Connection: close
	keepAlive     bool // Connection: keep-alive (matters for HTTP/1.0)
	gzip          bool // Content-Encoding: gzip
	location      int  // index of the Location field, -1 if none
	setCookie     bool // at least one Set-Cookie field
}

// parser reads responses into buffers it owns and reuses. The Result of the
// last exchange points into them, which is why Result data lives until the
// next Do.
type parser struct {
	hdr    []byte  // head lines, line endings removed, back to back
	fields []field // header fields of the final head
	head
	body bodyReader
	buf  []byte       // kept body bytes (at most MaxBody)
	gz   *gzip.Reader // reused across gzip bodies
}

// readLine appends one line, without its line ending, to p.hdr. total is the
// size budget shared by the whole head.
func (p *parser) readLine(br *bufio.Reader, total *int) (start, end int, err error) {
	start = len(p.hdr)
	for {
		frag, err := br.ReadSlice('\n')
		*total += len(frag)
		if *total > MaxHeaderBytes {
			return 0, 0, protoErr(fmt.Sprintf("head larger than %d bytes", MaxHeaderBytes), nil)
		}
		p.hdr = append(p.hdr, frag...)
		if err == nil {
			break
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF && len(p.hdr) > start {
			err = io.ErrUnexpectedEOF
		}
		return 0, 0, err
	}
	end = len(p.hdr) - 1
	if end > start && p.hdr[end-1] == '\r' {
		end--
	}
	p.hdr = p.hdr[:end]
	return start, end, nil
}

// readHead reads 1xx heads (skipped) and the final response head.
func (p *parser) readHead(br *bufio.Reader) error {
	if done, err := p.readHeadBuffered(br); done {
		return err
	}
	return p.readHeadLines(br)
}

// readHeadBuffered parses a final response head that is already whole in
// br's buffer, as a small response is after its first read: it finds the
// lines in the buffer and discards the head at the end, instead of a
// ReadSlice call and a size check per line. It parses exactly as
// readHeadLines does (the same line, status and field code), and reports
// done = false, having consumed nothing, when the buffer ends inside the
// head or the head is a 1xx (readHeadLines then reads it from the start).
// FuzzHeadBufferedAgrees holds the two to the same results.
func (p *parser) readHeadBuffered(br *bufio.Reader) (done bool, err error) {
	buf, _ := br.Peek(br.Buffered()) // at most readBufSize < MaxHeaderBytes
	p.hdr = p.hdr[:0]
	p.fields = p.fields[:0]
	p.head = head{contentLength: -1, location: -1}
	for off := 0; ; {
		i := bytes.IndexByte(buf[off:], '\n')
		if i < 0 {
			return false, nil
		}
		line := buf[off : off+i]
		off += i + 1
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		s := len(p.hdr)
		p.hdr = append(p.hdr, line...)
		e := len(p.hdr)
		switch {
		case s == 0:
			if err := p.parseStatus(line); err != nil {
				return true, err
			}
			if p.status < 200 && p.status != 101 {
				return false, nil
			}
		case s == e:
			_, _ = br.Discard(off)
			return true, p.interpret()
		default:
			if err := p.addField(s, e); err != nil {
				return true, err
			}
		}
	}
}

// readHeadLines is readHead line by line from the reader: heads longer than
// its buffer, heads arriving in pieces, and 1xx heads.
func (p *parser) readHeadLines(br *bufio.Reader) error {
	total := 0
	for n1xx := 0; ; n1xx++ {
		p.hdr = p.hdr[:0]
		p.fields = p.fields[:0]
		p.head = head{contentLength: -1, location: -1}
		s, e, err := p.readLine(br, &total)
		if err != nil {
			if n1xx == 0 && len(p.hdr) > 0 && !statusPrefix(p.hdr) {
				// The connection ended (or was reset) inside bytes that
				// cannot begin a status line: the server spoke something
				// else, which is a protocol failure, not a reset.
				return protoErr("bad status line", p.hdr)
			}
			return err
		}
		if err := p.parseStatus(p.hdr[s:e]); err != nil {
			return err
		}
		if err := p.readFields(br, &total); err != nil {
			return err
		}
		// 101 would switch protocols, which this client never asks for; it
		// is returned as a final response (and the connection dropped).
		if p.status >= 200 || p.status == 101 {
			return p.interpret()
		}
		if n1xx >= max1xx {
			return protoErr("too many 1xx responses", nil)
		}
	}
}

// statusPrefix reports whether b could be the start of a status line
// "HTTP/1.x NNN" (a response cut short may end anywhere in it).
func statusPrefix(b []byte) bool {
	const pattern = "HTTP/1.d ddd"
	for i := 0; i < len(b) && i < len(pattern); i++ {
		switch want := pattern[i]; {
		case want == 'd':
			if !isDigit(b[i]) {
				return false
			}
		case b[i] != want:
			return false
		}
	}
	return len(b) <= len(pattern) || b[len(pattern)] == ' ' || b[len(pattern)] == '\r'
}

// parseStatus parses "HTTP/1.x NNN reason".
func (p *parser) parseStatus(l []byte) error {
	if len(l) < 12 || string(l[:5]) != "HTTP/" || l[5] != '1' || l[6] != '.' ||
		!isDigit(l[7]) || l[8] != ' ' || !isDigit(l[9]) || !isDigit(l[10]) || !isDigit(l[11]) ||
		(len(l) > 12 && l[12] != ' ') {
		return protoErr("bad status line", l)
	}
	p.status = int(l[9]-'0')*100 + int(l[10]-'0')*10 + int(l[11]-'0')
	if p.status < 100 {
		return protoErr("bad status code", l)
	}
	switch l[7] {
	case '1':
		p.proto = "HTTP/1.1"
	case '0':
		p.proto = "HTTP/1.0"
		p.http10 = true
	default:
		p.proto = string(l[:8]) // a future 1.x: HTTP/1.1 rules apply
	}
	return nil
}

// readFields reads header lines up to the empty line.
func (p *parser) readFields(br *bufio.Reader, total *int) error {
	for {
		s, e, err := p.readLine(br, total)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		if s == e {
			return nil
		}
		if err := p.addField(s, e); err != nil {
			return err
		}
	}
}

// addField adds the header line p.hdr[s:e] (not empty): a field, or the
// continuation of the previous one.
func (p *parser) addField(s, e int) error {
	line := p.hdr[s:e]
	if line[0] == ' ' || line[0] == '\t' {
		// Obsolete line folding: the continuation joins the previous
		// value. Lines are stored back to back, so extending the value's
		// end is enough; the leading blanks separate the parts.
		if len(p.fields) == 0 {
			return protoErr("continuation line before any header", line)
		}
		f := &p.fields[len(p.fields)-1]
		if te := trimRight(p.hdr, s, e); te > s {
			if f.vs == f.ve {
				f.vs = int32(s + (len(line) - len(trimLeftBytes(line))))
			}
			f.ve = int32(te)
		}
		return nil
	}
	colon := -1
	for i, c := range line {
		if c == ':' {
			colon = i
			break
		}
		if !isTokenChar(c) {
			return protoErr("bad header name", line)
		}
	}
	if colon <= 0 {
		return protoErr("bad header line", line)
	}
	if len(p.fields) >= maxFields {
		return protoErr(fmt.Sprintf("more than %d header fields", maxFields), nil)
	}
	vs := s + colon + 1
	for vs < e && (p.hdr[vs] == ' ' || p.hdr[vs] == '\t') {
		vs++
	}
	p.fields = append(p.fields, field{int32(s), int32(s + colon), int32(vs), int32(trimRight(p.hdr, vs, e))})
	return nil
}

// interpret extracts the fields that decide framing, reuse and decoding.
func (p *parser) interpret() error {
	for i, f := range p.fields {
		name, v := p.hdr[f.ns:f.ne], p.hdr[f.vs:f.ve]
		switch len(name) {
		case 8:
			if foldEq(name, "location") {
				p.location = i
			}
		case 10:
			if foldEq(name, "connection") {
				forTokens(v, func(t []byte) {
					if foldEq(t, "close") {
						p.close = true
					} else if foldEq(t, "keep-alive") {
						p.keepAlive = true
					}
				})
			} else if foldEq(name, "set-cookie") {
				p.setCookie = true
			}
		case 14:
			if foldEq(name, "content-length") {
				n, ok := parseLength(v)
				if !ok {
					return protoErr("bad Content-Length", v)
				}
				if p.contentLength >= 0 && p.contentLength != n {
					return protoErr("conflicting Content-Length", v)
				}
				p.contentLength = n
			}
		case 16:
			if foldEq(name, "content-encoding") {
				p.gzip = foldEq(v, "gzip") || foldEq(v, "x-gzip")
			}
		case 17:
			if foldEq(name, "transfer-encoding") {
				// Only the last coding frames the message.
				last := v
				forTokens(v, func(t []byte) { last = t })
				p.hasTE = true
				p.chunked = foldEq(last, "chunked")
			}
		}
	}
	return nil
}

// frame decides how the body is delimited (RFC 9112 §6.3) and resets the
// body reader. It also reports whether the connection can carry another
// request afterwards.
func (p *parser) frame(br *bufio.Reader, method string) (reusable bool) {
	b := &p.body
	sink := b.sink
	*b = bodyReader{br: br, sink: sink}
	reusable = !p.close && (!p.http10 || p.keepAlive)
	switch {
	case method == "HEAD" || p.status == 204 || p.status == 304 || p.status < 200:
		b.mode = bodyNone
		b.done = true
	case p.hasTE && p.http10:
		// RFC 9112 §6.1: Transfer-Encoding in an HTTP/1.0 message means
		// faulty framing. Like net/http, ignore it and close afterwards.
		reusable = false
		if p.contentLength >= 0 {
			b.mode = bodyLength
			b.remain = p.contentLength
		} else {
			b.mode = bodyEOF
		}
	case p.hasTE && p.chunked:
		b.mode = bodyChunked
	case p.hasTE:
		b.mode = bodyEOF // unknown coding: only the close delimits it
	case p.contentLength >= 0:
		b.mode = bodyLength
		b.remain = p.contentLength
	default:
		b.mode = bodyEOF
	}
	if p.status == 101 || b.mode == bodyEOF || (p.hasTE && p.contentLength >= 0) {
		// Both framings at once smell of request smuggling: RFC 9112 says to
		// close after such a response.
		reusable = false
	}
	return reusable
}

// readBody consumes the body, keeping up to maxBody (decoded) bytes in p.buf.
func (p *parser) readBody(maxBody int, gunzip bool) error {
	p.buf = p.buf[:0]
	b := &p.body
	if b.done {
		return nil
	}
	if maxBody > 0 {
		var src io.Reader = b
		if gunzip {
			if p.gz == nil {
				p.gz = new(gzip.Reader)
			}
			// gzip.Reader uses b directly because it implements ReadByte;
			// otherwise it would wrap it in a new bufio.Reader every time.
			if err := p.gz.Reset(b); err != nil {
				if err != io.EOF || b.err != nil {
					return p.bodyErr(err, gunzip)
				}
				return b.discard() // empty body: nothing to decode
			}
			src = p.gz
		}
		want := maxBody
		if !gunzip && b.mode == bodyLength && b.remain < int64(want) {
			want = int(b.remain)
		}
		if cap(p.buf) < want && cap(p.buf) < 4096 {
			p.buf = make([]byte, 0, min(want, 4096))
		}
		for len(p.buf) < maxBody {
			if len(p.buf) == cap(p.buf) {
				p.buf = append(p.buf, 0)[:len(p.buf)] // grow geometrically
			}
			n, err := src.Read(p.buf[len(p.buf):min(cap(p.buf), maxBody)])
			p.buf = p.buf[:len(p.buf)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				return p.bodyErr(err, gunzip)
			}
		}
	}
	return b.discard()
}

// bodyErr prefers the framing (network or protocol) error over what gzip
// made of it; a gzip error on intact framing is a protocol error.
func (p *parser) bodyErr(err error, gunzip bool) error {
	if p.body.err != nil {
		return p.body.err
	}
	if gunzip {
		return &ProtocolError{Msg: "bad gzip body", Err: err}
	}
	return err
}

// bodyReader reads one body through its framing. It is an io.Reader and an
// io.ByteReader (so gzip needs no extra buffer) and records the first error.
type bodyReader struct {
	br       *bufio.Reader
	mode     uint8
	done     bool  // framing fully consumed
	needCRLF bool  // chunked: the CRLF after chunk data is pending
	remain   int64 // bytes left in the body (length) or current chunk (chunked)
	size     int64 // body bytes read so far, framing excluded
	err      error
	sink     []byte // scratch for discarding large bodies, allocated on need
}

// avail makes sure data is available: it returns the number of bytes that
// may be read before the next framing step, or io.EOF at the body's end.
func (b *bodyReader) avail() (int64, error) {
	if b.done {
		return 0, io.EOF
	}
	if b.err != nil {
		return 0, b.err
	}
	switch b.mode {
	case bodyLength:
		if b.remain == 0 {
			b.done = true
			return 0, io.EOF
		}
	case bodyChunked:
		if b.remain == 0 {
			if err := b.nextChunk(); err != nil {
				return 0, err
			}
		}
	case bodyEOF:
		return 1 << 62, nil
	}
	return b.remain, nil
}

// consumed accounts for n body bytes just read.
func (b *bodyReader) consumed(n int, err error) error {
	b.size += int64(n)
	if b.mode == bodyEOF {
		if err == io.EOF {
			b.done = true
		} else if err != nil {
			b.err = err
		}
		return err
	}
	b.remain -= int64(n)
	if b.mode == bodyChunked && b.remain == 0 {
		b.needCRLF = true
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		b.err = err
	}
	return err
}

// Read implements io.Reader.
func (b *bodyReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := b.avail()
	if err != nil {
		return 0, err
	}
	if int64(len(p)) > n {
		p = p[:n]
	}
	m, err := b.br.Read(p)
	return m, b.consumed(m, err)
}

// ReadByte implements io.ByteReader.
func (b *bodyReader) ReadByte() (byte, error) {
	if _, err := b.avail(); err != nil {
		return 0, err
	}
	c, err := b.br.ReadByte()
	n := 1
	if err != nil {
		n = 0
	}
	return c, b.consumed(n, err)
}

// discard reads and drops the rest of the body so the connection can be
// reused. Large remainders bypass the 4 KiB buffer through b.sink.
func (b *bodyReader) discard() error {
	for {
		n, err := b.avail()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n > readBufSize && b.br.Buffered() == 0 {
			if b.sink == nil {
				b.sink = make([]byte, 32<<10)
			}
			m, err := b.br.Read(b.sink[:min(n, int64(len(b.sink)))])
			if err := b.consumed(m, err); err != nil && err != io.EOF {
				return err
			}
			continue
		}
		m, err := b.br.Discard(int(min(n, 1<<30)))
		if err := b.consumed(m, err); err != nil && err != io.EOF {
			return err
		}
	}
}

// nextChunk reads a chunk-size line (after the previous chunk's CRLF). At
// the last chunk it consumes the trailers and returns io.EOF.
func (b *bodyReader) nextChunk() error {
	if b.needCRLF {
		line, err := b.chunkLine()
		if err != nil {
			return err
		}
		if len(line) != 0 {
			return b.fail(protoErr("missing CRLF after chunk", line))
		}
		b.needCRLF = false
	}
	line, err := b.chunkLine()
	if err != nil {
		return err
	}
	if i := indexByte(line, ';'); i >= 0 {
		line = line[:i] // chunk extensions are ignored
	}
	line = trimBytes(line)
	if len(line) == 0 || len(line) > 15 {
		return b.fail(protoErr("bad chunk size", line))
	}
	var n int64
	for _, c := range line {
		d := unhex(c)
		if d < 0 {
			return b.fail(protoErr("bad chunk size", line))
		}
		n = n<<4 | int64(d)
	}
	if n > 0 {
		b.remain = n
		return nil
	}
	// Last chunk: trailers until an empty line, bounded like a head.
	total, lineLen := 0, 0
	for {
		frag, err := b.br.ReadSlice('\n')
		total += len(frag)
		lineLen += len(frag)
		if total > MaxHeaderBytes {
			return b.fail(protoErr("trailers too large", nil))
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil {
			return b.fail(unexpected(err))
		}
		if lineLen == 1 || (lineLen == 2 && frag[0] == '\r') {
			b.done = true
			return io.EOF
		}
		lineLen = 0
	}
}

// chunkLine reads one framing line, without its line ending.
func (b *bodyReader) chunkLine() ([]byte, error) {
	line, err := b.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, b.fail(protoErr("chunk line too long", line))
	}
	if err != nil {
		return nil, b.fail(unexpected(err))
	}
	line = line[:len(line)-1]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, nil
}

// fail records the first framing error.
func (b *bodyReader) fail(err error) error {
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// unexpected turns a clean end of stream inside a message into an error.
func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Header returns the first value of the named response header (any case) as
// a new string, or "" when absent. Use HeaderBytes on the hot path.
func (r *Result) Header(name string) string { return string(r.HeaderBytes(name)) }

// HeaderBytes returns the first value of the named response header (any
// case) without allocating, or nil when absent. The slice is valid until the
// next Do on the Client that filled r and must not be modified.
func (r *Result) HeaderBytes(name string) []byte {
	for _, f := range r.fields {
		if foldEqFold(r.raw[f.ns:f.ne], name) {
			return r.raw[f.vs:f.ve:f.ve]
		}
	}
	return nil
}

// Headers iterates over the response header fields in arrival order (names
// as sent). The slices are valid until the next Do and must not be modified.
func (r *Result) Headers() iter.Seq2[[]byte, []byte] {
	return func(yield func(name, value []byte) bool) {
		for _, f := range r.fields {
			if !yield(r.raw[f.ns:f.ne:f.ne], r.raw[f.vs:f.ve:f.ve]) {
				return
			}
		}
	}
}

// AddHeader appends a response header field to r. It is for clients of
// other protocols (HTTP/2) that fill a Result for the engine; Do itself
// never needs it.
func (r *Result) AddHeader(name, value string) {
	ns := int32(len(r.raw))
	r.raw = append(r.raw, name...)
	vs := int32(len(r.raw))
	r.raw = append(r.raw, value...)
	r.fields = append(r.fields, field{ns: ns, ne: vs, vs: vs, ve: int32(len(r.raw))})
}

// HeaderStore holds response header fields for a client of another
// protocol (HTTP/2) that owns the storage and reuses it from request to
// request, where AddHeader on a new Result would allocate each time.
type HeaderStore struct {
	raw    []byte
	fields []field
}

// Reset empties s and keeps its storage.
func (s *HeaderStore) Reset() { s.raw, s.fields = s.raw[:0], s.fields[:0] }

// Add appends a header field to s.
func (s *HeaderStore) Add(name, value string) {
	ns := int32(len(s.raw))
	s.raw = append(s.raw, name...)
	vs := int32(len(s.raw))
	s.raw = append(s.raw, value...)
	s.fields = append(s.fields, field{ns: ns, ne: vs, vs: vs, ve: int32(len(s.raw))})
}

// SetHeaders makes s's fields r's response header fields. They are shared,
// not copied: valid until s is reset.
func (r *Result) SetHeaders(s *HeaderStore) { r.raw, r.fields = s.raw, s.fields }
