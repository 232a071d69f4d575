package h2

import (
	"bytes"
	"context"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
)

// FuzzServerFrames: whatever a server sends after its SETTINGS, a request
// ends, with a response or an error, and nothing panics or hangs.
func FuzzServerFrames(f *testing.F) {
	var hb bytes.Buffer
	enc := hpack.NewEncoder(&hb)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "200"})
	enc.WriteField(hpack.HeaderField{Name: "content-type", Value: "text/plain"})
	var ok bytes.Buffer
	fr := http2.NewFramer(&ok, nil)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes(), EndHeaders: true})
	fr.WriteData(1, true, []byte("ok"))
	f.Add(ok.Bytes())
	var cont bytes.Buffer
	fr = http2.NewFramer(&cont, nil)
	fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: hb.Bytes()[:2]})
	fr.WriteContinuation(1, true, hb.Bytes()[2:])
	fr.WriteRSTStream(1, http2.ErrCodeRefusedStream)
	fr.WriteGoAway(0, http2.ErrCodeNo, []byte("bye"))
	f.Add(cont.Bytes())
	f.Add([]byte{0, 0, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0, 1}) // connection WINDOW_UPDATE
	f.Add([]byte("HTTP/1.1 200 OK\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go func() { // every connection (a refused request is sent again) gets data
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					go io.Copy(io.Discard, c)
					sf := http2.NewFramer(c, nil)
					sf.WriteSettings()
					c.Write(data)
					time.Sleep(10 * time.Millisecond)
				}()
			}
		}()
		p := NewPool(Config{Timeout: 10 * time.Second, MaxBody: 16})
		defer p.Close()
		var res httpc.Result
		start := time.Now()
		err = NewClient(p, nil).Do(context.Background(), &httpc.Request{URL: "http://" + ln.Addr().String() + "/"}, &res)
		// Well under the 10 s timeout: the close ended it, not the
		// deadline (5 s leave room for a loaded machine).
		if time.Since(start) > 5*time.Second {
			t.Fatalf("request took %v on a connection the server closed", time.Since(start))
		}
		if err == nil && (res.Status < 100 || res.Status > 999) {
			t.Fatalf("success with status %d", res.Status)
		}
		if err != nil && res.Class == 0 {
			t.Fatalf("error %v without a class", err)
		}
	})
}
