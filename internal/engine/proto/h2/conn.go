package h2

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strconv"
	"sync"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
)

// Flow control: plateau announces large receive windows (like h2load's
// default of 2^30-1) so a server never waits for a WINDOW_UPDATE on small
// responses, and returns credit in batches of half a window.
const (
	recvWindow      = 1<<30 - 1
	recvUpdateAfter = recvWindow / 2
	maxHeaderList   = 1 << 20          // SETTINGS_MAX_HEADER_LIST_SIZE announced
	settingsTimeout = 10 * time.Second // for the server's first SETTINGS when no other deadline applies
	// Per connection (with connections: per_user, per user): a 4 KiB read
	// buffer like x/net's (it holds ~60 small responses of a shared
	// connection; over TLS, tls.Conn keeps the decrypted record anyway), and
	// a write buffer kept between writes only up to keepWriteBuf. Frames
	// stay at the protocol's default 16 KiB, so the Framer's buffer does too.
	readBufSize  = 4 << 10
	keepWriteBuf = 64 << 10
	maxQueued    = 256 << 10 // request body bytes queued ahead of the writer
)

// errConnClosed is the failure of a stream on a connection closed by Pool.Close.
var errConnClosed = errors.New("http2: connection closed")

// stream is one request on a connection. The fields the reader fills are
// guarded by the connection's mu; the waiting client reads them after done
// fired (or after it removed the stream itself).
type stream struct {
	id   uint32
	done chan struct{} // cap 1: the stream ended (response, reset or failure)

	// response, filled by the reader
	status  int
	hdr     []hpack.HeaderField
	hdrSize int64 // bytes of header fields as counted in BytesRecv
	body    []byte
	maxBody int
	size    int64
	head    time.Time // arrival of the final response head
	end     time.Time
	err     error
	retry   bool // refused before the server processed it (GOAWAY, REFUSED_STREAM)
	gotHead bool // final (non-1xx) head received; later HEADERS are trailers
	ended   bool // removed from the connection
	unacked int  // received bytes not yet returned by WINDOW_UPDATE

	// request body still to send (flow-controlled)
	sendWindow int64
	sendDone   bool
}

// conn is one HTTP/2 connection: one reader goroutine that dispatches
// frames to streams by id, and one writer goroutine that sends everything
// the streams queued since its last write in one write (frames of many
// requests share a TLS record and a system call).
type conn struct {
	key string
	nc  net.Conn
	// writeTimeout bounds one write (Config.Timeout); 0: none
	writeTimeout time.Duration

	// reader goroutine only
	br  *bufio.Reader
	rfr *http2.Framer
	dec *hpack.Decoder
	cur *stream // stream the header block being decoded belongs to
	// size of the header block being decoded, and whether it went over
	// maxHeaderList
	curSize int
	tooBig  bool
	curEnd  bool // the block's HEADERS frame ended the stream
	unacked int  // connection-level received bytes not yet returned

	ready chan struct{} // closed when the dial ended (dialErr says how)

	mu       sync.Mutex
	cond     sync.Cond // a send window grew, or a stream or the connection ended
	waiters  int       // goroutines waiting on cond
	dialed   bool      // the dial ended (dialErr nil: set up)
	dialErr  error
	streams  map[uint32]*stream
	nextID   uint32
	reserved int    // streams taken from the pool (open or about to be)
	limit    int    // Config.MaxConcurrentStreams
	peerMax  uint32 // the server's SETTINGS_MAX_CONCURRENT_STREAMS
	closed   bool
	err      error         // why the connection failed
	goaway   *GoAwayError  // the server's GOAWAY, Refused set
	quit     chan struct{} // closed with the connection: stops the writer

	// writing, under mu
	out        wbuf
	wfr        *http2.Framer // writes frames into out
	enc        *hpack.Encoder
	hbuf       wbuf // header block being encoded
	wakeSent   bool // the writer was signalled and has not taken out yet
	wake       chan struct{}
	sendWindow int64  // connection-level send window
	peerWindow int64  // the server's SETTINGS_INITIAL_WINDOW_SIZE
	peerFrame  uint32 // the server's SETTINGS_MAX_FRAME_SIZE
}

// wbuf is an append-only byte buffer the framer and the HPACK encoder write to.
type wbuf struct{ b []byte }

func (w *wbuf) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// newConn returns a pending connection for key with one stream reserved
// (for the request that dials it).
func newConn(key string, limit int) *conn {
	cn := &conn{key: key, ready: make(chan struct{}), limit: limit, reserved: 1,
		peerMax: 1<<32 - 1, nextID: 1, streams: map[uint32]*stream{},
		quit: make(chan struct{}), wake: make(chan struct{}, 1),
		sendWindow: 65535, peerWindow: 65535, peerFrame: 16384}
	cn.cond.L = &cn.mu
	cn.wfr = http2.NewFramer(&cn.out, nil)
	cn.enc = hpack.NewEncoder(&cn.hbuf)
	return cn
}

// handshake sends the connection preface and plateau's SETTINGS on nc,
// reads the server's SETTINGS (the server must send them first), and
// starts the reader and writer. deadline bounds the wait.
func (cn *conn) handshake(nc net.Conn, deadline time.Time) error {
	cn.br = bufio.NewReaderSize(nc, readBufSize)
	cn.rfr = http2.NewFramer(nil, cn.br)
	cn.rfr.SetReuseFrames()
	cn.rfr.SetMaxReadFrameSize(16384) // the default we keep (no SETTINGS_MAX_FRAME_SIZE)
	cn.dec = hpack.NewDecoder(4096, cn.emit)
	cn.dec.SetMaxStringLength(maxHeaderList)

	cn.out.b = append(cn.out.b, http2.ClientPreface...)
	_ = cn.wfr.WriteSettings(
		http2.Setting{ID: http2.SettingEnablePush, Val: 0},
		http2.Setting{ID: http2.SettingInitialWindowSize, Val: recvWindow},
		http2.Setting{ID: http2.SettingMaxHeaderListSize, Val: maxHeaderList})
	_ = cn.wfr.WriteWindowUpdate(0, recvWindow-65535)
	if deadline.IsZero() {
		deadline = time.Now().Add(settingsTimeout)
	}
	_ = nc.SetDeadline(deadline)
	if _, err := nc.Write(cn.out.b); err != nil {
		return err
	}
	cn.out.b = cn.out.b[:0]
	f, err := cn.rfr.ReadFrame()
	if err != nil {
		return err
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		return http2.ConnectionError(http2.ErrCodeProtocol)
	}
	_ = nc.SetDeadline(time.Time{})
	cn.mu.Lock()
	err = cn.settings(sf)
	if err == nil && cn.closed {
		err = errConnClosed // Pool.Close during the dial
	}
	if err == nil {
		cn.nc = nc
	}
	cn.mu.Unlock()
	if err != nil {
		return err
	}
	go cn.readLoop()
	go cn.writeLoop()
	return nil
}

// usable says whether new streams may start on the connection. cn.mu is held.
func (cn *conn) usable() bool {
	return !cn.closed && cn.goaway == nil && cn.nextID < 1<<31-1
}

// tryReserve takes a stream slot on a connection that is set up and has one
// free. cn.mu is not held.
func (cn *conn) tryReserve() bool {
	cn.mu.Lock()
	ok := cn.nc != nil && cn.dialErr == nil && cn.usable() && cn.reserved < cn.maxStreams()
	if ok {
		cn.reserved++
	}
	cn.mu.Unlock()
	return ok
}

func (cn *conn) maxStreams() int {
	return int(min(uint32(cn.limit), cn.peerMax))
}

// release gives back a reserved slot that no stream used.
func (cn *conn) release() {
	cn.mu.Lock()
	cn.reserved--
	cn.mu.Unlock()
}

// flush makes sure the writer will send what is in out. cn.mu is held.
func (cn *conn) flush() {
	if !cn.wakeSent {
		cn.wakeSent = true
		cn.wake <- struct{}{} // cap 1, and only sent when empty
	}
}

func (cn *conn) writeLoop() {
	var spare []byte
	for {
		select {
		case <-cn.wake:
		case <-cn.quit:
			return
		}
		// Let the other runnable goroutines (the streams woken by the
		// last read) queue their frames first: one write for all of them.
		runtime.Gosched()
		cn.mu.Lock()
		buf := cn.out.b
		cn.out.b = spare[:0]
		cn.wakeSent = false
		closed := cn.closed
		if cn.waiters > 0 {
			cn.cond.Broadcast() // body senders waiting for room in out
		}
		cn.mu.Unlock()
		if closed {
			return
		}
		if len(buf) > 0 {
			if cn.writeTimeout > 0 {
				// A server that stops reading fails the connection (its
				// streams: timeout) instead of holding it forever.
				_ = cn.nc.SetWriteDeadline(time.Now().Add(cn.writeTimeout))
			}
			if _, err := cn.nc.Write(buf); err != nil {
				cn.fail(err)
				return
			}
		}
		if cap(buf) <= keepWriteBuf {
			spare = buf
		} else {
			spare = nil
		}
	}
}

// request is what conn.start sends.
type request struct {
	method, scheme, authority, path string
	header                          []hpack.HeaderField // lower-case names
	contentLength                   string              // "" without a body
	body                            []byte
	stream                          httpc.Stream
}

// errRetry marks a request that was refused before the server processed
// it: it may be sent again on another connection.
type errRetry struct{ err error }

func (e errRetry) Error() string { return e.err.Error() }
func (e errRetry) Unwrap() error { return e.err }

// start opens stream s with rq's headers (and body when it fits the send
// windows). It uses the slot the caller reserved. It returns whether a
// body remains to be sent by sendBody.
func (cn *conn) start(s *stream, rq *request) (bool, error) {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if !cn.usable() {
		cn.reserved--
		if cn.closed {
			return false, errRetry{cn.err}
		}
		if cn.goaway != nil {
			return false, errRetry{cn.goaway}
		}
		return false, errRetry{errors.New("http2: stream ids exhausted")}
	}
	s.id = cn.nextID
	cn.nextID += 2
	cn.streams[s.id] = s
	s.sendWindow = cn.peerWindow
	s.sendDone = rq.contentLength == ""

	cn.hbuf.b = cn.hbuf.b[:0]
	enc := cn.enc
	_ = enc.WriteField(hpack.HeaderField{Name: ":method", Value: rq.method})
	_ = enc.WriteField(hpack.HeaderField{Name: ":scheme", Value: rq.scheme})
	_ = enc.WriteField(hpack.HeaderField{Name: ":authority", Value: rq.authority})
	_ = enc.WriteField(hpack.HeaderField{Name: ":path", Value: rq.path})
	for _, f := range rq.header {
		_ = enc.WriteField(f)
	}
	if rq.contentLength != "" {
		_ = enc.WriteField(hpack.HeaderField{Name: "content-length", Value: rq.contentLength})
	}
	block := cn.hbuf.b
	first := true
	for first || len(block) > 0 {
		n := min(len(block), int(cn.peerFrame))
		frag, last := block[:n], n == len(block)
		block = block[n:]
		if first {
			_ = cn.wfr.WriteHeaders(http2.HeadersFrameParam{StreamID: s.id, BlockFragment: frag,
				EndStream: s.sendDone, EndHeaders: last})
			first = false
		} else {
			_ = cn.wfr.WriteContinuation(s.id, last, frag)
		}
	}
	more := false
	if !s.sendDone {
		if rq.stream == nil && int64(len(rq.body)) <= min(cn.sendWindow, s.sendWindow) {
			cn.writeData(s, rq.body, true)
		} else {
			more = true
		}
	}
	cn.flush()
	return more, nil
}

// writeData queues p as DATA frames of s (within the send windows, which
// the caller checked), ending the stream when end is set. cn.mu is held.
func (cn *conn) writeData(s *stream, p []byte, end bool) {
	cn.sendWindow -= int64(len(p))
	s.sendWindow -= int64(len(p))
	for {
		n := min(len(p), int(cn.peerFrame))
		last := n == len(p)
		_ = cn.wfr.WriteData(s.id, end && last, p[:n])
		p = p[n:]
		if last {
			break
		}
	}
	if end {
		s.sendDone = true
	}
}

// bodyWriter sends a request body on its stream as the send windows allow.
type bodyWriter struct {
	cn *conn
	s  *stream
}

var errStreamEnded = errors.New("http2: stream ended before its body was sent")

func (w bodyWriter) Write(p []byte) (int, error) {
	cn, s := w.cn, w.s
	cn.mu.Lock()
	defer cn.mu.Unlock()
	sent := 0
	for len(p) > 0 {
		// Wait for window, and for the writer to take what is queued
		// (a body is never held in memory much beyond maxQueued).
		for !s.ended && !cn.closed && (cn.sendWindow <= 0 || s.sendWindow <= 0 || len(cn.out.b) >= maxQueued) {
			cn.waiters++
			cn.cond.Wait()
			cn.waiters--
		}
		if s.ended || cn.closed {
			return sent, errStreamEnded
		}
		n := int(min(int64(len(p)), cn.sendWindow, s.sendWindow, int64(cn.peerFrame)))
		cn.writeData(s, p[:n], false)
		cn.flush()
		p, sent = p[n:], sent+n
	}
	return sent, nil
}

// sendBody sends the rest of the request body of s (a Stream, or a body
// larger than the send windows) and ends the stream; a failure resets the
// stream with it.
func (cn *conn) sendBody(s *stream, rq *request) {
	w := bodyWriter{cn, s}
	var err error
	if rq.stream != nil {
		var n, size int64
		n, err = rq.stream.WriteTo(w)
		if err == nil {
			size, _ = strconv.ParseInt(rq.contentLength, 10, 64)
			if n != size {
				err = fmt.Errorf("request body: %d bytes written, %d announced", n, size)
			}
		}
	} else {
		_, err = w.Write(rq.body)
	}
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if s.ended || cn.closed {
		return
	}
	if err != nil {
		_ = cn.wfr.WriteRSTStream(s.id, http2.ErrCodeCancel)
		cn.finish(s, err)
	} else {
		cn.writeData(s, nil, true)
	}
	cn.flush()
}

// cancel ends s from the client side (timeout, cancelled context) with
// err, resetting the stream at the server. Afterwards the reader no longer
// touches s.
func (cn *conn) cancel(s *stream, err error) {
	cn.mu.Lock()
	if !s.ended {
		if !cn.closed {
			_ = cn.wfr.WriteRSTStream(s.id, http2.ErrCodeCancel)
			cn.flush()
		}
		cn.finish(s, err)
	}
	cn.mu.Unlock()
	select { // a signal sent before the cancel won
	case <-s.done:
	default:
	}
}

// finish ends s with err (nil: complete response) and wakes its client.
// cn.mu is held.
func (cn *conn) finish(s *stream, err error) {
	if s.ended {
		return
	}
	s.ended = true
	s.err = err
	s.end = time.Now()
	if err == nil && !s.sendDone && !cn.closed {
		// The response is complete before the request body was: the
		// server needs no more of it, and the stream must close on our
		// side too or it keeps counting against the server's limit.
		_ = cn.wfr.WriteRSTStream(s.id, http2.ErrCodeNo)
		cn.flush()
	}
	delete(cn.streams, s.id)
	cn.reserved--
	if cn.waiters > 0 {
		cn.cond.Broadcast()
	}
	select {
	case s.done <- struct{}{}:
	default:
	}
}

// fail closes the connection and ends every stream on it with err.
func (cn *conn) fail(err error) {
	cn.mu.Lock()
	if cn.closed {
		cn.mu.Unlock()
		return
	}
	if ga := cn.goaway; ga != nil && err != errConnClosed {
		if ce := http2.ConnectionError(0); !errors.As(err, &ce) { // not one plateau detected
			// The server said GOAWAY, then closed: its code and debug
			// data say why, the EOF that followed does not.
			err = &GoAwayError{Code: ga.Code, Debug: ga.Debug}
		}
	}
	cn.closed = true
	cn.err = err
	nc := cn.nc
	for _, s := range cn.streams {
		cn.finish(s, err)
	}
	close(cn.quit)
	cn.cond.Broadcast()
	cn.mu.Unlock()
	if nc != nil {
		_ = nc.Close()
	}
}

// close closes the connection (Pool.Close, or no stream left after GOAWAY).
func (cn *conn) close() { cn.fail(errConnClosed) }

func (cn *conn) readLoop() {
	for {
		f, err := cn.rfr.ReadFrame()
		if err != nil {
			var se http2.StreamError
			if errors.As(err, &se) {
				cn.mu.Lock()
				_ = cn.wfr.WriteRSTStream(se.StreamID, se.Code)
				cn.flush()
				if s := cn.streams[se.StreamID]; s != nil {
					cn.finish(s, localReset(se))
				}
				cn.mu.Unlock()
				continue
			}
			if cn.rfr.ErrorDetail() != nil {
				err = fmt.Errorf("%w: %w", err, cn.rfr.ErrorDetail())
			}
			cn.fail(err)
			return
		}
		if err := cn.frame(f); err != nil {
			cn.mu.Lock()
			if ce, ok := err.(http2.ConnectionError); ok && !cn.closed {
				cn.out.b = cn.out.b[:0] // the writer may be sending older bytes: no frame split
				_ = cn.wfr.WriteGoAway(0, http2.ErrCode(ce), nil)
				buf := append([]byte(nil), cn.out.b...)
				cn.mu.Unlock()
				_, _ = cn.nc.Write(buf) // best effort, the connection ends
			} else {
				cn.mu.Unlock()
			}
			cn.fail(err)
			return
		}
	}
}

// frame handles one frame from the server (reader goroutine).
func (cn *conn) frame(f http2.Frame) error {
	switch f := f.(type) {
	case *http2.DataFrame:
		return cn.data(f)
	case *http2.HeadersFrame:
		return cn.headers(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), f.StreamEnded(), true)
	case *http2.ContinuationFrame:
		return cn.headers(f.StreamID, f.HeaderBlockFragment(), f.HeadersEnded(), false, false)
	case *http2.RSTStreamFrame:
		cn.mu.Lock()
		if s := cn.streams[f.StreamID]; s != nil {
			// REFUSED_STREAM: not processed, unless a response began.
			s.retry = f.ErrCode == http2.ErrCodeRefusedStream && !s.gotHead
			cn.finish(s, &ResetError{Code: f.ErrCode})
		}
		cn.mu.Unlock()
	case *http2.SettingsFrame:
		if f.IsAck() {
			return nil
		}
		cn.mu.Lock()
		defer cn.mu.Unlock()
		return cn.settings(f)
	case *http2.PingFrame:
		if !f.IsAck() {
			cn.mu.Lock()
			_ = cn.wfr.WritePing(true, f.Data)
			cn.flush()
			cn.mu.Unlock()
		}
	case *http2.GoAwayFrame:
		cn.mu.Lock()
		ga := goAway(f.ErrCode, f.DebugData(), true)
		cn.goaway = ga
		for id, s := range cn.streams {
			if id > f.LastStreamID {
				s.retry = true
				cn.finish(s, ga)
			}
		}
		idle := cn.reserved == 0
		cn.mu.Unlock()
		if idle {
			cn.close()
		}
	case *http2.WindowUpdateFrame:
		cn.mu.Lock()
		if f.StreamID == 0 {
			cn.sendWindow += int64(f.Increment)
		} else if s := cn.streams[f.StreamID]; s != nil {
			s.sendWindow += int64(f.Increment)
		}
		if cn.waiters > 0 {
			cn.cond.Broadcast()
		}
		cn.mu.Unlock()
	case *http2.PushPromiseFrame:
		return http2.ConnectionError(http2.ErrCodeProtocol) // push is disabled in our SETTINGS
	}
	return nil
}

// settings applies the server's SETTINGS and acknowledges them. cn.mu is held.
func (cn *conn) settings(f *http2.SettingsFrame) error {
	err := f.ForeachSetting(func(s http2.Setting) error {
		if err := s.Valid(); err != nil {
			return err
		}
		switch s.ID {
		case http2.SettingMaxConcurrentStreams:
			cn.peerMax = s.Val
		case http2.SettingInitialWindowSize:
			delta := int64(s.Val) - cn.peerWindow
			cn.peerWindow = int64(s.Val)
			for _, st := range cn.streams {
				st.sendWindow += delta
			}
		case http2.SettingMaxFrameSize:
			cn.peerFrame = s.Val
		case http2.SettingHeaderTableSize:
			cn.enc.SetMaxDynamicTableSizeLimit(s.Val)
		}
		return nil
	})
	if err != nil {
		return err
	}
	_ = cn.wfr.WriteSettingsAck()
	cn.flush() // before the writer started (handshake) it finds the wake-up queued
	if cn.waiters > 0 {
		cn.cond.Broadcast()
	}
	return nil
}

// headers decodes one HEADERS or CONTINUATION fragment. Every block is
// decoded (HPACK state is per connection), also for streams that ended.
func (cn *conn) headers(id uint32, frag []byte, endHeaders, endStream, first bool) error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if first {
		cn.cur, cn.curSize, cn.tooBig, cn.curEnd = nil, 0, false, endStream
		if s := cn.streams[id]; s != nil && !s.gotHead {
			cn.cur = s // else trailers: decoded, not kept
			s.status, s.hdr, s.hdrSize = 0, s.hdr[:0], 0
		}
	} else if cn.cur != nil && cn.streams[id] != cn.cur {
		// The stream ended (timeout, cancel) between HEADERS and this
		// CONTINUATION; its Client may already reuse it for another
		// request. Decode the rest for the HPACK state only.
		cn.cur = nil
	}
	if _, err := cn.dec.Write(frag); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	if !endHeaders {
		return nil
	}
	if err := cn.dec.Close(); err != nil {
		return http2.ConnectionError(http2.ErrCodeCompression)
	}
	endStream = cn.curEnd
	s := cn.cur
	cn.cur = nil
	if s == nil {
		if t := cn.streams[id]; t != nil && endStream {
			cn.finish(t, nil) // trailers end the stream
		}
		return nil
	}
	var serr error
	switch {
	case cn.tooBig:
		serr = &StreamError{Code: http2.ErrCodeProtocol,
			Cause: fmt.Errorf("response header list larger than %d bytes", maxHeaderList)}
	case s.status == 0:
		serr = &StreamError{Code: http2.ErrCodeProtocol, Cause: errors.New("response without :status")}
	case s.status < 200 && s.status != 101:
		s.hdr = s.hdr[:0] // informational: the final head follows
		return nil
	}
	if serr != nil {
		_ = cn.wfr.WriteRSTStream(id, http2.ErrCodeProtocol)
		cn.flush()
		cn.finish(s, serr)
		return nil
	}
	s.gotHead = true
	s.head = time.Now()
	if endStream {
		cn.finish(s, nil)
	}
	return nil
}

// emit receives one decoded header field (from dec.Write, cn.mu held).
func (cn *conn) emit(f hpack.HeaderField) {
	cn.curSize += len(f.Name) + len(f.Value) + 32
	if cn.curSize > maxHeaderList {
		cn.tooBig = true
	}
	s := cn.cur
	if s == nil || cn.tooBig {
		return
	}
	if len(f.Name) > 0 && f.Name[0] == ':' {
		if f.Name == ":status" {
			s.status, _ = strconv.Atoi(f.Value)
			if s.status < 100 || s.status > 999 {
				s.status = 0
			}
		}
		return
	}
	s.hdr = append(s.hdr, f)
	s.hdrSize += int64(len(f.Name) + len(f.Value) + 4)
}

// data handles a DATA frame: the body into the stream, and the receive
// windows given back in batches.
func (cn *conn) data(f *http2.DataFrame) error {
	fl := int(f.Length)
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.unacked += fl
	if cn.unacked >= recvUpdateAfter {
		_ = cn.wfr.WriteWindowUpdate(0, uint32(cn.unacked))
		cn.unacked = 0
		cn.flush()
	}
	s := cn.streams[f.StreamID]
	if s == nil {
		return nil // cancelled or reset: only the connection's window counts
	}
	if !s.gotHead {
		_ = cn.wfr.WriteRSTStream(s.id, http2.ErrCodeProtocol)
		cn.flush()
		cn.finish(s, &StreamError{Code: http2.ErrCodeProtocol, Cause: errors.New("DATA before the response head")})
		return nil
	}
	p := f.Data()
	if room := s.maxBody - len(s.body); room > 0 {
		s.body = append(s.body, p[:min(room, len(p))]...)
	}
	s.size += int64(len(p))
	if f.StreamEnded() {
		cn.finish(s, nil)
		return nil
	}
	s.unacked += fl
	if s.unacked >= recvUpdateAfter {
		_ = cn.wfr.WriteWindowUpdate(s.id, uint32(s.unacked))
		s.unacked = 0
		cn.flush()
	}
	return nil
}

var _ io.Writer = bodyWriter{}
