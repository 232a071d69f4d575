package cli

import (
	"bufio"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// faultServer answers on loopback the way a failing service does: /reset
// sends the status line, headers and part of the body, then resets the
// connection (RST); /noise sends 512 random bytes and closes.
func faultServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				req, err := http.ReadRequest(bufio.NewReader(c))
				if err != nil {
					return
				}
				switch req.URL.Path {
				case "/reset":
					c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\npartial body"))
					time.Sleep(2 * time.Millisecond)
					c.(*net.TCPConn).SetLinger(0)
				case "/noise":
					b := make([]byte, 512)
					for i := range b {
						b[i] = byte(rand.IntN(256))
					}
					c.Write(b)
				}
			}(c)
		}
	}()
	return "http://" + ln.Addr().String()
}

// TestFaultsGroup runs plateau as a process against the fault server: 400
// resets after the status line group into one error entry of class reset
// with status 200 noted (not hundreds of entries differing by port), and 200
// random answers are all protocol failures (issue 12 item 10).
func TestFaultsGroup(t *testing.T) {
	url := faultServer(t)
	p := writePlan(t, `name: faults
target: `+url+`
workloads:
  w:
    scenario:
      - loop:
          count: 2
          steps:
            - request: {name: reset, url: /reset}
      - request: {name: noise, url: /noise}
    load: {users: 4, iterations: 50}
`)
	out := filepath.Join(t.TempDir(), "run")
	b, err := plateauCmd("run", p, "-o", out, "-q").CombinedOutput()
	s := readSummary(t, out)
	if len(s.Labels) == 0 {
		t.Fatalf("no labels: %v\n%s", err, b)
	}
	byLabel := map[string]map[string]int64{}
	entries := map[string]int{}
	for _, e := range s.Errors.Details {
		if byLabel[e.Label] == nil {
			byLabel[e.Label] = map[string]int64{}
		}
		byLabel[e.Label][e.Class] += e.Count
		entries[e.Label]++
		if e.Label == "reset" && e.Status != 200 {
			t.Errorf("reset entry without the status that arrived: %+v", e)
		}
		if strings.Contains(e.Message, "->") || strings.Contains(e.Message, "(other messages)") {
			t.Errorf("message not normalised: %+v", e)
		}
	}
	if got := byLabel["reset"]["reset"]; got != 400 {
		t.Errorf("reset label: %d resets, want 400 (classes %v)", got, byLabel["reset"])
	}
	if entries["reset"] > 2 {
		t.Errorf("400 resets in %d detail entries, want them grouped", entries["reset"])
	}
	if got := byLabel["noise"]["protocol"]; got != 200 {
		t.Errorf("noise label: %d protocol failures of 200 (classes %v)", got, byLabel["noise"])
	}
	if entries["noise"] > 3 {
		for _, e := range s.Errors.Details {
			if e.Label == "noise" {
				t.Logf("%d × %s %d %q", e.Count, e.Class, e.Status, e.Message)
			}
		}
		t.Errorf("200 random answers in %d detail entries, want them grouped", entries["noise"])
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	if !strings.Contains(string(md), "reset after HTTP 200") {
		t.Errorf("report.md does not name the resets after the status line")
	}
}
