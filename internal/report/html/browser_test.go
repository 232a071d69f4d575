package html_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// chromium finds Debian's chromium. Under CI=true a missing browser fails
// the test (testdata/install-deps.sh installs it); elsewhere it skips.
func chromium(t *testing.T) string {
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

// trap is a local HTTP proxy that answers every request with 502 and
// records the request lines: chromium is pointed at it, so any request the
// page attempts is seen here instead of leaving the machine.
type trap struct {
	ln   net.Listener
	mu   sync.Mutex
	seen []string
}

func newTrap(t *testing.T) *trap {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &trap{ln: ln}
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

// requests returns the trapped request lines, without chromium's own
// background traffic (component updates, network time, account checks),
// which some builds send despite the flags and which no page causes.
func (tr *trap) requests() []string {
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

// run starts headless chromium on a page with the network trapped and
// returns its stdout and the console messages it logged.
func run(t *testing.T, bin string, tr *trap, page string, extra ...string) (string, []string) {
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

// TestBrowserControl proves the harness sees what the real test asserts
// is absent: a console error and an attempted request.
func TestBrowserControl(t *testing.T) {
	bin := chromium(t)
	tr := newTrap(t)
	page := filepath.Join(t.TempDir(), "control.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><img src="http://probe.invalid/probe.png"><script>console.error("control-marker")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, console := run(t, bin, tr, page, "--dump-dom")
	if !strings.Contains(strings.Join(console, "\n"), "control-marker") {
		t.Errorf("console error not captured; got %q", console)
	}
	deadline := time.Now().Add(3 * time.Second)
	for len(tr.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if reqs := tr.requests(); len(reqs) == 0 || !strings.Contains(strings.Join(reqs, "\n"), "probe.png") {
		t.Errorf("attempted request not trapped; got %q", reqs)
	}
}

// TestReportInBrowser loads a realistic report.html from disk with the
// network trapped: no console message, no request, every section present,
// the run's hostile strings shown as text; and keeps a screenshot.
func TestReportInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true, Steps: []reporttest.Step{{Users: 7, Seconds: 120, RampUpS: 10},
		{Users: 10, Seconds: 120, RampUpS: 5}, {Users: 14, Seconds: 120, RampUpS: 5}, {Users: 20, Seconds: 120, RampUpS: 5}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Generate(dir, report.Options{Formats: []string{"html"}}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	tr := newTrap(t)
	dom, console := run(t, bin, tr, page, "--dump-dom")
	if len(console) > 0 {
		t.Errorf("console messages while loading report.html:\n%s", strings.Join(console, "\n"))
	}
	for _, id := range report.SectionIDs {
		if !strings.Contains(dom, `<section id="`+id+`"`) {
			t.Errorf("section id %q missing from the rendered page", id)
		}
	}
	if n := strings.Count(dom, "<svg"); n < 10 {
		t.Errorf("%d inline charts rendered, want at least 10", n)
	}
	if !strings.Contains(dom, "&lt;script&gt;alert(1)&lt;/script&gt;") || strings.Contains(dom, "<script>alert(1)") {
		t.Errorf("an error message holding <script> was not rendered as text")
	}
	shot := filepath.Join(artifactDir(t), "report-browser-test.png")
	_, console = run(t, bin, tr, page, "--screenshot="+shot, "--window-size=1280,2400", "--hide-scrollbars")
	if len(console) > 0 {
		t.Errorf("console messages while taking the screenshot:\n%s", strings.Join(console, "\n"))
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 20_000 {
		t.Errorf("screenshot %s missing or blank: %v", shot, err)
	} else {
		t.Logf("screenshot kept at %s", shot)
	}
	if reqs := tr.requests(); len(reqs) > 0 {
		t.Errorf("report.html attempted network requests: %q", reqs)
	}
}

// artifactDir is where the browser test keeps its screenshot:
// $PLATEAU_TEST_ARTIFACTS, or plateau-test-artifacts under the system
// temporary directory.
func artifactDir(t *testing.T) string {
	d := os.Getenv("PLATEAU_TEST_ARTIFACTS")
	if d == "" {
		d = filepath.Join(os.TempDir(), "plateau-test-artifacts")
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}
