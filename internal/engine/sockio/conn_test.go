package sockio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// pair returns a wrapped client connection and the server's end.
func pair(t *testing.T) (net.Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	acc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		acc <- c
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	srv := <-acc
	if srv == nil {
		t.Fatal("accept failed")
	}
	c := Wrap(nc)
	t.Cleanup(func() { c.Close(); srv.Close() })
	if _, ok := c.(*Conn); !ok && Available {
		t.Fatalf("Wrap gave %T", c)
	}
	return c, srv
}

// Both directions at once with more than the socket buffers hold (the
// write waits for room, the read for data), then EOF.
func TestConnReadWrite(t *testing.T) {
	t.Parallel()
	c, srv := pair(t)
	out := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	echoed := make(chan []byte, 1)
	go func() { // the server echoes everything, then closes
		b, _ := io.ReadAll(io.TeeReader(srv, srv))
		srv.(*net.TCPConn).CloseWrite()
		echoed <- b
	}()
	werr := make(chan error, 1)
	go func() {
		n, err := c.Write(out)
		if err == nil && n != len(out) {
			err = io.ErrShortWrite
		}
		c.(interface{ CloseWrite() error }).CloseWrite()
		werr <- err
	}()
	in, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-werr; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(in, out) || !bytes.Equal(<-echoed, out) {
		t.Fatalf("read back %d bytes, want the %d written", len(in), len(out))
	}
	if n, err := c.Read(make([]byte, 8)); n != 0 || err != io.EOF {
		t.Errorf("after EOF: %d, %v", n, err)
	}
}

// Deadlines and errors read as net.Conn's own.
func TestConnErrors(t *testing.T) {
	t.Parallel()
	c, srv := pair(t)
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.Read(make([]byte, 8))
	var ne net.Error
	if !errors.Is(err, os.ErrDeadlineExceeded) || !errors.As(err, &ne) || !ne.Timeout() || !strings.HasPrefix(err.Error(), "read tcp ") {
		t.Errorf("read past the deadline: %v", err)
	}
	c.SetReadDeadline(time.Time{})
	// A reset by the peer.
	srv.(*net.TCPConn).SetLinger(0)
	srv.Close()
	time.Sleep(20 * time.Millisecond)
	_, err = c.Read(make([]byte, 8))
	if !errors.Is(err, syscall.ECONNRESET) || !strings.HasPrefix(err.Error(), "read tcp ") {
		t.Errorf("read after a reset: %v", err)
	}
	c.Close()
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) || !strings.HasPrefix(err.Error(), "write tcp ") {
		t.Errorf("write after close: %v", err)
	}
}

// Wrap leaves what it cannot speed up as it is.
func TestWrapOthers(t *testing.T) {
	t.Parallel()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Error("a pipe was wrapped")
	}
}

// Writes from many goroutines at once take turns: every write arrives
// whole, none is lost or mixed with another (and reads likewise share).
func TestConnConcurrentCalls(t *testing.T) {
	t.Parallel()
	c, srv := pair(t)
	const writers, each, size = 8, 200, 3000 // more than a send buffer in all
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(srv)
		got <- b
	}()
	done := make(chan error, writers)
	for w := range writers {
		go func() {
			msg := bytes.Repeat([]byte{byte('a' + w)}, size)
			for range each {
				if n, err := c.Write(msg); err != nil || n != size {
					done <- fmt.Errorf("write: %d, %v", n, err)
					return
				}
			}
			done <- nil
		}()
	}
	for range writers {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	c.(interface{ CloseWrite() error }).CloseWrite()
	b := <-got
	if len(b) != writers*each*size {
		t.Fatalf("server read %d bytes, want %d", len(b), writers*each*size)
	}
	for i := 0; i < len(b); i += size {
		if rec := b[i : i+size]; !bytes.Equal(rec, bytes.Repeat(rec[:1], size)) {
			t.Fatalf("write %d arrived mixed with another", i/size)
		}
	}
	// Reads from several goroutines share the stream without losing bytes.
	go func() {
		srv.Write(bytes.Repeat([]byte("x"), writers*each*10))
		srv.Close()
	}()
	total := make(chan int, 4)
	for range 4 {
		go func() {
			n := 0
			buf := make([]byte, 7)
			for {
				k, err := c.Read(buf)
				n += k
				if err != nil {
					total <- n
					return
				}
			}
		}()
	}
	sum := 0
	for range 4 {
		sum += <-total
	}
	if sum != writers*each*10 {
		t.Errorf("concurrent reads got %d bytes, want %d", sum, writers*each*10)
	}
}
