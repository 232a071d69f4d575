package httpc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// FuzzParseResponse feeds arbitrary bytes to the response parser as a
// stream of kept-alive responses. Properties: it never panics, its buffers
// stay within their bounds whatever the input claims, it never reports more
// body than the input holds, and where net/http (the slow oracle) also
// accepts the first response, both agree on status and body.
func FuzzParseResponse(f *testing.F) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(bytes.Repeat([]byte("zip"), 500))
	zw.Close()
	for _, s := range []string{
		fixedResponse,
		chunkedResponse,
		fixedResponse + chunkedResponse,
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nuntil the end",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\nWiki\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\r\n  folded\r\nContent-Length: 1\r\n\r\nz",
		"HTTP/1.1 301 Moved\r\nLocation: /x\r\nSet-Cookie: a=b\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + itoa(gz.Len()) + "\r\n\r\n" + gz.String(),
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n",
		"garbage",
	} {
		f.Add([]byte(s), false, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, head, gunzip bool) {
		const maxBody = 1024
		method := "GET"
		if head {
			method = "HEAD"
		}
		var p parser
		br := bufio.NewReaderSize(bytes.NewReader(data), readBufSize)
		var firstStatus int
		var firstBody []byte
		firstOK := false
		for i := range 4 {
			err := p.readHead(br)
			if len(p.hdr) > MaxHeaderBytes || cap(p.hdr) > 4*MaxHeaderBytes || len(p.fields) > maxFields {
				t.Fatalf("head buffers grew to %d bytes / %d fields", cap(p.hdr), len(p.fields))
			}
			if err != nil {
				break
			}
			p.frame(br, method)
			err = p.readBody(maxBody, gunzip && p.gzip)
			if len(p.buf) > maxBody || cap(p.buf) > 4096 {
				t.Fatalf("body buffer %d/%d beyond MaxBody %d", len(p.buf), cap(p.buf), maxBody)
			}
			if p.body.size > int64(len(data)) {
				t.Fatalf("body size %d from %d input bytes", p.body.size, len(data))
			}
			if i == 0 && err == nil {
				firstOK, firstStatus = true, p.status
				firstBody = append([]byte(nil), p.buf...)
			}
			if err != nil {
				break
			}
		}
		if !firstOK || gunzip || firstStatus < 200 {
			return
		}
		resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(data)), &http.Request{Method: method})
		if err != nil {
			return
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
		if err != nil {
			return
		}
		if resp.StatusCode < 200 {
			return // net/http does not skip 1xx heads; httpc does
		}
		if resp.StatusCode != firstStatus || !bytes.Equal(body, firstBody) {
			t.Fatalf("net/http says %d %q, httpc says %d %q", resp.StatusCode, body, firstStatus, firstBody)
		}
	})
}

func itoa(n int) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + n%10)}, b...)
		if n /= 10; n == 0 {
			return string(b)
		}
	}
}

// FuzzTunnel feeds arbitrary proxy replies to Tunnel: it must return (an
// error unless the status is 200) without panicking or reading past the
// reply's blank line.
func FuzzTunnel(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 Connection established\r\n\r\nTLS"))
	f.Add([]byte("HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\n\r\n"))
	f.Add([]byte("garbage\r\n\r\n"))
	f.Add([]byte("HTTP/1.0 200\r\n"))
	f.Fuzz(func(t *testing.T, reply []byte) {
		client, server := net.Pipe()
		defer client.Close()
		go func() {
			buf := make([]byte, 512)
			for {
				n, err := server.Read(buf)
				if err != nil || bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
					break
				}
			}
			server.Write(reply)
			server.Close()
		}()
		u, _ := url.Parse("http://u:p@127.0.0.1:3128")
		err := Tunnel(client, "127.0.0.1:443", u)
		head, rest, found := bytes.Cut(reply, []byte("\r\n\r\n"))
		ok := found && bytes.HasPrefix(head, []byte("HTTP/1.")) && bytes.Contains(head, []byte(" 200"))
		if err == nil && !ok {
			t.Fatalf("Tunnel accepted %q", reply)
		}
		if err == nil && len(rest) > 0 {
			// The tunnel's first bytes must still be readable.
			got := make([]byte, len(rest))
			if _, err := io.ReadFull(client, got); err != nil || !bytes.Equal(got, rest) {
				t.Fatalf("tunnel bytes lost: %q, %v", got, err)
			}
		}
	})
}

// FuzzHeadBufferedAgrees holds readHeadBuffered, the parse of a head already
// whole in the read buffer, to readHeadLines, the line-by-line reader: where
// the first takes a head it must give the same error or the same status,
// fields and raw lines, and leave the same bytes unread; where it declines
// it must have consumed nothing.
func FuzzHeadBufferedAgrees(f *testing.F) {
	for _, s := range []string{
		fixedResponse,
		chunkedResponse,
		"HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Sat, 28 Nov 2026 04:50:00 GMT\r\nContent-Type: text/plain\r\n" +
			"Content-Length: 2\r\nConnection: keep-alive\r\n\r\nok",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 200 OK\n\nuntil the end",
		"HTTP/1.1 200 OK\r\nX: a\r\n  folded\r\nContent-Length: 1\r\n\r\nz",
		"HTTP/1.1 200 OK\r\n folded first\r\n\r\n",
		"HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
		"HTTP/1.1 101 Switching\r\nUpgrade: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: " + string(bytes.Repeat([]byte("y"), 3000)) + "\r\n\r\n",
		"\r\n\r\n",
		"garbage\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var fast, slow parser
		fr := bufio.NewReaderSize(bytes.NewReader(data), readBufSize)
		_, _ = fr.Peek(1) // the first read, as readResponse waits for the first byte
		before := fr.Buffered()
		done, ferr := fast.readHeadBuffered(fr)
		if !done {
			if fr.Buffered() != before {
				t.Fatalf("declined the head but consumed %d bytes", before-fr.Buffered())
			}
			return
		}
		sr := bufio.NewReaderSize(bytes.NewReader(data), readBufSize)
		serr := slow.readHeadLines(sr)
		if (ferr == nil) != (serr == nil) || ferr != nil && ferr.Error() != serr.Error() {
			t.Fatalf("buffered parse: %v; line reader: %v", ferr, serr)
		}
		if ferr != nil {
			return
		}
		if fast.head != slow.head || !bytes.Equal(fast.hdr, slow.hdr) || !slices.Equal(fast.fields, slow.fields) {
			t.Fatalf("buffered parse %+v %q %v; line reader %+v %q %v",
				fast.head, fast.hdr, fast.fields, slow.head, slow.hdr, slow.fields)
		}
		frest, _ := io.ReadAll(fr)
		srest, _ := io.ReadAll(sr)
		if !bytes.Equal(frest, srest) {
			t.Fatalf("left unread: buffered parse %q, line reader %q", frest, srest)
		}
	})
}

// TestHeadBufferedTakesWholeHeads: a head that arrived whole is parsed from
// the buffer (the hot path), one that did not or a 1xx goes to the line
// reader, and either way the response reads the same.
func TestHeadBufferedTakesWholeHeads(t *testing.T) {
	const nginx = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n" +
		"Connection: keep-alive\r\n\r\nok"
	for _, c := range []struct {
		name, data string
		whole      bool
	}{
		{"whole", nginx, true},
		{"cut inside the head", nginx[:40], false},
		{"1xx first", "HTTP/1.1 100 Continue\r\n\r\n" + nginx, false},
	} {
		var p parser
		br := bufio.NewReaderSize(bytes.NewReader([]byte(c.data)), readBufSize)
		_, _ = br.Peek(1)
		done, err := p.readHeadBuffered(br)
		if done != c.whole || err != nil {
			t.Errorf("%s: buffered parse done=%v err=%v, want done=%v", c.name, done, err, c.whole)
		}
		if !c.whole {
			continue
		}
		if p.status != 200 || p.contentLength != 2 || len(p.fields) != 4 || p.close {
			t.Errorf("%s: status %d, length %d, %d fields, close %v", c.name, p.status, p.contentLength, len(p.fields), p.close)
		}
		if rest, _ := io.ReadAll(br); string(rest) != "ok" {
			t.Errorf("%s: body %q left unread, want \"ok\"", c.name, rest)
		}
	}
}

// FuzzParseVerbatim: any URL text is refused or gives a request target
// that starts with / and holds no byte a request line cannot carry, and a
// host to dial — never a panic.
func FuzzParseVerbatim(f *testing.F) {
	for _, s := range []string{"http://h/a|b^%zz?x=%&y=\\", "http://h", "http://h?q", "https://[::1]:8443/p#f", "http://h/a b", "h/p", "http://:0/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := parseVerbatim(raw)
		if err != nil {
			return
		}
		if tg.requestURI == "" || tg.requestURI[0] != '/' {
			t.Fatalf("%q: request target %q", raw, tg.requestURI)
		}
		for i := 0; i < len(tg.requestURI); i++ {
			if c := tg.requestURI[i]; c <= ' ' || c >= 0x7f || c == '#' {
				t.Fatalf("%q: byte %q in the request target %q", raw, c, tg.requestURI)
			}
		}
		if tg.hostname == "" || tg.port == 0 || tg.u == nil {
			t.Fatalf("%q: no host to dial: %+v", raw, tg)
		}
	})
}
