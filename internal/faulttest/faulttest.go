// Package faulttest serves, on loopback, the failures a load test meets
// in the field, for the tests of the clients and of whole runs: resets in
// the middle of a response, garbage, kept-alive connections the server
// half-closes or linger-closes, and HTTP/2 servers that reset streams or
// end connections with GOAWAY and an error code (issue 31's fault suite).
// Every server stops when the test ends.
package faulttest

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// HTTP1 starts an HTTP/1.1 fault server and returns its base URL
// (http://127.0.0.1:port). Each path is one fault; every answer promises
// keep-alive unless said otherwise:
//
//   - /ok: 200 "ok", the connection kept.
//   - /reset: the status line, headers and part of the body, then a reset
//     (RST).
//   - /noise: 512 random bytes, then a close.
//   - /half-close: 200 "ok", then the server shuts its sending side (FIN)
//     and reads on until the client closes, never answering again.
//   - /linger-close: 200 "ok", then a half-close, what comes is read and
//     discarded for 50 ms (nginx's and Apache's lingering close), then a
//     close.
//   - /close: 200 "ok", then a close.
func HTTP1(tb testing.TB) string {
	tb.Helper()
	return serve(tb, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			_, _ = io.Copy(io.Discard, req.Body)
			const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok"
			switch req.URL.Path {
			case "/ok":
				if _, err := io.WriteString(c, ok); err != nil {
					return
				}
				continue
			case "/reset":
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial body")
				time.Sleep(2 * time.Millisecond)
				_ = c.(*net.TCPConn).SetLinger(0)
			case "/noise":
				b := make([]byte, 512)
				for i := range b {
					b[i] = byte(rand.IntN(256))
				}
				_, _ = c.Write(b)
			case "/half-close":
				_, _ = io.WriteString(c, ok)
				_ = c.(*net.TCPConn).CloseWrite()
				_, _ = io.Copy(io.Discard, br)
			case "/linger-close":
				_, _ = io.WriteString(c, ok)
				_ = c.(*net.TCPConn).CloseWrite()
				_ = c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
				_, _ = io.Copy(io.Discard, br)
			case "/close":
				_, _ = io.WriteString(c, ok)
			default:
				_, _ = io.WriteString(c, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
				continue
			}
			return
		}
	})
}

// GoAwayDebug is the debug data of the H2 server's GOAWAY frames.
const GoAwayDebug = "too many requests on this connection"

// H2 starts a cleartext HTTP/2 fault server (prior knowledge, no upgrade)
// and returns its base URL. Paths:
//
//   - /ok: 200 "ok".
//   - /rst: RST_STREAM INTERNAL_ERROR; the connection stays up.
//   - /goaway-calm: GOAWAY ENHANCE_YOUR_CALM accepting this stream (debug
//     data GoAwayDebug), then a close before the response.
//   - /goaway: the same with NO_ERROR (a graceful shutdown that caught the
//     request).
//   - /refuse: GOAWAY ENHANCE_YOUR_CALM refusing every stream (last stream
//     id 0), then a close: the request was not processed.
//
// Streams counts the requests (HEADERS frames) the server received.
func H2(tb testing.TB) (url string, streams *atomic.Int64) {
	tb.Helper()
	streams = new(atomic.Int64)
	url = serve(tb, func(c net.Conn) { serveH2(c, streams) })
	return url, streams
}

func serveH2(c net.Conn, streams *atomic.Int64) {
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(c, preface); err != nil || string(preface) != http2.ClientPreface {
		return
	}
	fr := http2.NewFramer(c, c)
	fr.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	if fr.WriteSettings() != nil {
		return
	}
	for {
		f, err := fr.ReadFrame()
		if err != nil {
			return
		}
		switch f := f.(type) {
		case *http2.SettingsFrame:
			if !f.IsAck() && fr.WriteSettingsAck() != nil {
				return
			}
		case *http2.PingFrame:
			if !f.IsAck() && fr.WritePing(true, f.Data) != nil {
				return
			}
		case *http2.GoAwayFrame:
			return
		case *http2.MetaHeadersFrame:
			streams.Add(1)
			id := f.StreamID
			switch f.PseudoValue("path") {
			case "/ok":
				hb.Reset()
				_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
				_ = enc.WriteField(hpack.HeaderField{Name: "content-length", Value: "2"})
				if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true}) != nil ||
					fr.WriteData(id, true, []byte("ok")) != nil {
					return
				}
			case "/rst":
				if fr.WriteRSTStream(id, http2.ErrCodeInternal) != nil {
					return
				}
			case "/goaway-calm":
				_ = fr.WriteGoAway(id, http2.ErrCodeEnhanceYourCalm, []byte(GoAwayDebug))
				return
			case "/goaway":
				_ = fr.WriteGoAway(id, http2.ErrCodeNo, nil)
				return
			case "/refuse":
				_ = fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte(GoAwayDebug))
				return
			default:
				hb.Reset()
				_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: "404"})
				if fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, BlockFragment: hb.Bytes(), EndHeaders: true, EndStream: true}) != nil {
					return
				}
			}
		}
	}
}

// serve accepts connections on a loopback port and hands each to handle,
// closing it when handle returns; everything stops with the test.
func serve(tb testing.TB, handle func(net.Conn)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	var (
		mu   sync.Mutex
		open = map[net.Conn]bool{}
		wg   sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open[c] = true
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				handle(c)
				_ = c.Close()
				mu.Lock()
				delete(open, c)
				mu.Unlock()
			}()
		}
	}()
	tb.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for c := range open {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}
