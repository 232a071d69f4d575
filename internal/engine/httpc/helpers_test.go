package httpc

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rawServer is a TCP server on 127.0.0.1 whose handler writes whatever bytes
// a test needs, including broken HTTP. It counts accepted connections.
type rawServer struct {
	ln    net.Listener
	URL   string
	conns atomic.Int32
	mu    sync.Mutex
	open  []net.Conn
	wg    sync.WaitGroup
}

// newRawServer starts a server calling handle for each connection; the
// connection is closed when handle returns.
func newRawServer(t testing.TB, handle func(c net.Conn, br *bufio.Reader)) *rawServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawServer{ln: ln, URL: "http://" + ln.Addr().String()}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.conns.Add(1)
			s.mu.Lock()
			s.open = append(s.open, c)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				defer c.Close()
				handle(c, bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.open {
			c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

// serveFixed answers every request on the connection with resp.
func serveFixed(resp string) func(net.Conn, *bufio.Reader) {
	return func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if _, err := io.WriteString(c, resp); err != nil {
				return
			}
		}
	}
}

// minimalServer answers every request head (GET, no body) with resp. It
// parses nothing and allocates nothing per request, so benchmarks measure
// the client, not the server.
func minimalServer(t testing.TB, resp string) *rawServer {
	return newRawServer(t, func(c net.Conn, br *bufio.Reader) {
		out := []byte(resp)
		for {
			// A request head ends with an empty line.
			for {
				line, err := br.ReadSlice('\n')
				if err != nil {
					return
				}
				if len(line) <= 2 {
					break
				}
			}
			if br.Buffered() > 0 {
				// Pipelined or more data: keep reading before answering
				// would be needed; the client under test never pipelines.
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
}

// fakeDNS is a UDP DNS server on 127.0.0.1 that answers A queries for
// names in hosts with 127.0.0.1, AAAA queries with no records, and anything
// else with NXDOMAIN. It counts the queries it receives.
type fakeDNS struct {
	pc      net.PacketConn
	hosts   map[string]bool
	queries atomic.Int32
}

func newFakeDNS(t testing.TB, hosts ...string) *fakeDNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &fakeDNS{pc: pc, hosts: map[string]bool{}}
	for _, h := range hosts {
		d.hosts[h+"."] = true
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 512)
		for {
			n, addr, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			d.queries.Add(1)
			if resp := d.answer(buf[:n]); resp != nil {
				pc.WriteTo(resp, addr)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return d
}

// answer builds the reply to one query (one question, no EDNS needed).
func (d *fakeDNS) answer(q []byte) []byte {
	if len(q) < 12 {
		return nil
	}
	// Walk the question name.
	i, name := 12, ""
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		name += string(q[i+1:i+1+l]) + "."
		i += 1 + l
	}
	if i+5 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i+1:])
	qend := i + 5
	resp := append([]byte(nil), q[:qend]...)
	resp[2] = 0x81                           // QR, RD
	resp[3] = 0x80                           // RA, NOERROR
	binary.BigEndian.PutUint16(resp[6:], 0)  // ANCOUNT
	binary.BigEndian.PutUint16(resp[8:], 0)  // NSCOUNT
	binary.BigEndian.PutUint16(resp[10:], 0) // ARCOUNT
	if !d.hosts[name] {
		resp[3] = 0x83 // NXDOMAIN
		return resp
	}
	if qtype == 1 { // A
		binary.BigEndian.PutUint16(resp[6:], 1)
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
	}
	return resp
}

// resolver returns a pure-Go resolver that only talks to d.
func (d *fakeDNS) resolver() *net.Resolver {
	addr := d.pc.LocalAddr().String()
	return &net.Resolver{
		PreferGo: true,
		Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var dd net.Dialer
			return dd.DialContext(ctx, "udp", addr)
		},
	}
}

// do runs one request with a fresh Result and a bounded context.
func do(t testing.TB, c *Client, req *Request) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res Result
	c.Do(ctx, req, &res)
	return &res
}

// get is do for a plain GET.
func get(t testing.TB, c *Client, url string) *Result {
	t.Helper()
	return do(t, c, &Request{URL: url})
}
