package httpc

import (
	"bufio"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// TestVerbatimRequestLine: with Verbatim the path and query go on the
// request line as written — | ^ a bare % and %2F kept, as Postman's
// runtime sends them — where net/url re-encodes the whole path; a byte
// that cannot go on a request line is an error, not sent.
func TestVerbatimRequestLine(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	s := newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			mu.Lock()
			lines = append(lines, strings.TrimRight(line, "\r\n"))
			mu.Unlock()
			for {
				h, err := br.ReadString('\n')
				if err != nil {
					return
				}
				if h == "\r\n" {
					break
				}
			}
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	c := New(Config{})
	defer c.Close()
	const p = "/a|b^c%zz%2Fd[e]?x=%&y=\\&z=%41#frag"
	for _, verbatim := range []bool{true, false} {
		var res Result
		c.Do(context.Background(), &Request{URL: s.URL + p, Verbatim: verbatim}, &res)
		if verbatim && res.Err != nil {
			t.Fatalf("verbatim: %v", res.Err)
		}
	}
	var res Result
	if c.Do(context.Background(), &Request{URL: s.URL + "/a b", Verbatim: true}, &res); res.Err == nil {
		t.Errorf("a space in a verbatim path was sent")
	}
	c.Do(context.Background(), &Request{URL: s.URL + "?q=1", Verbatim: true}, &res)
	mu.Lock()
	defer mu.Unlock()
	if len(lines) < 1 || lines[0] != "GET /a|b^c%zz%2Fd[e]?x=%&y=\\&z=%41 HTTP/1.1" {
		t.Errorf("verbatim request line %q", lines)
	}
	// net/url cannot read the bare % in the path: not sent without Verbatim.
	if len(lines) != 2 || lines[1] != "GET /?q=1 HTTP/1.1" {
		t.Errorf("request lines %q, want the verbatim one and GET /?q=1", lines)
	}
}
