// Package browsertest opens plateau's HTML documents in headless Chromium
// with the network trapped: the run report's, the study's and the
// history's tests read a page as a reader's browser shows it, and see any
// request the page attempts and any console message it logs.
package browsertest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Chromium finds Debian's chromium. Under CI=true a missing browser fails
// the test (internal/report/testdata/install-deps.sh installs it); elsewhere it skips.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium not found; CI must run internal/report/testdata/install-deps.sh")
	}
	t.Skip("chromium not installed (apt-get install -y chromium); the browser test needs it")
	return ""
}

// Trap is a local HTTP proxy that answers every request with 502 and
// records the request lines: chromium is pointed at it, so any request the
// page attempts is seen here instead of leaving the machine.
type Trap struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func NewTrap(t testing.TB) *Trap {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &Trap{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(30 * time.Second))
				line, err := bufio.NewReader(c).ReadString('\n')
				line = strings.TrimSpace(line)
				if line == "" {
					if err == nil || errors.Is(err, io.EOF) {
						// Opened and closed without a byte: chromium's
						// speculative connection to the proxy, dropped
						// when it exits (seen on a loaded machine) — no
						// request was made.
						return
					}
					// Held open without a request line: cannot tell
					// what it was for, so it counts.
					line = "(connection without a request line: " + err.Error() + ")"
				}
				tr.mu.Lock()
				tr.seen = append(tr.seen, line)
				tr.mu.Unlock()
				_, _ = c.Write([]byte("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			}()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return tr
}

// Requests returns the trapped request lines, without chromium's own
// background traffic (component updates, network time, account checks),
// which some builds send despite the flags and which no page causes.
func (tr *Trap) Requests() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, l := range tr.seen {
		if browserInternal(l) {
			continue
		}
		out = append(out, l)
	}
	return out
}

func browserInternal(line string) bool {
	f := strings.Fields(line)
	if len(f) < 2 {
		return false
	}
	host := f[1]
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	if i := strings.IndexAny(host, ":/"); i >= 0 {
		host = host[:i]
	}
	for _, suffix := range []string{".google.com", ".googleapis.com", ".gvt1.com", ".gstatic.com"} {
		if strings.HasSuffix(host, suffix) {
			return true
		}
	}
	return false
}

// Run starts headless chromium on a page with the network trapped and
// returns its stdout and the console messages it logged.
func Run(t testing.TB, bin string, tr *Trap, page string, extra ...string) (string, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
		"--disable-default-apps", "--disable-domain-reliability", "--disable-client-side-phishing-detection",
		"--no-pings", "--disable-breakpad", "--disable-features=NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,Translate",
		"--user-data-dir=" + t.TempDir(), "--proxy-server=http://" + tr.ln.Addr().String(), "--proxy-bypass-list=<-loopback>",
		"--enable-logging=stderr", "--v=0"}
	args = append(args, extra...)
	args = append(args, "file://"+page)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, tail(errb.String(), 2000))
	}
	var console []string
	for _, l := range strings.Split(errb.String(), "\n") {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Refused to") {
			console = append(console, l)
		}
	}
	return out.String(), console
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
