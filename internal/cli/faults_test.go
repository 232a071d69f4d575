package cli

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/faulttest"
)

// TestFaultsGroup runs plateau as a process against the fault server: 400
// resets after the status line group into one error entry of class reset
// with status 200 noted (not hundreds of entries differing by port), and 200
// random answers are all protocol failures (issue 12 item 10).
func TestFaultsGroup(t *testing.T) {
	url := faulttest.HTTP1(t)
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

// runFaults runs plateau as a process on plan p into out, bounded in time,
// and returns its combined output, exit code and peak RSS in MiB. A run
// that does not stop by itself fails the test.
func runFaults(t *testing.T, p, out string) (string, int, int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c := plateauCmd("run", p, "-o", out, "-q")
	cmd := exec.CommandContext(ctx, c.Path, c.Args[1:]...)
	cmd.Env = c.Env
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the run did not stop within 3 minutes\n%s", b)
	}
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var rss int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		rss = ru.Maxrss >> 10 // KiB on Linux
	}
	return string(b), code, rss
}

// maxRSSMiB bounds plateau's memory under every fault: the runs below use
// 50–80 MiB here.
const maxRSSMiB = 150

// TestFaultsKeepAliveCloses: servers that half-close, linger-close or
// close kept-alive connections after each response, while promising
// keep-alive. Every request succeeds (issue 31 item 4: 36 % of them waited
// out the whole timeout), the run ends completed, memory stays bounded.
func TestFaultsKeepAliveCloses(t *testing.T) {
	url := faulttest.HTTP1(t)
	p := writePlan(t, `name: closes
target: `+url+`
http: {timeout: 10s}
workloads:
  w:
    scenario:
      - request: {name: half-close, url: /half-close}
      - request: {name: linger-close, url: /linger-close}
      - request: {name: close, url: /close}
    load: {users: 4, iterations: 50}
`)
	out := filepath.Join(t.TempDir(), "run")
	b, code, rss := runFaults(t, p, out)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, b)
	}
	s := readSummary(t, out)
	for _, l := range s.Labels {
		if want := int64(200); l.Label == "TOTAL" {
			if l.Samples != 3*want || l.Errors != 0 {
				t.Errorf("TOTAL: %d samples, %d errors; want %d and none", l.Samples, l.Errors, 3*want)
			}
		} else if l.Samples != want || l.Errors != 0 {
			t.Errorf("%s: %d samples, %d errors; want 200 and none", l.Label, l.Samples, l.Errors)
		}
	}
	for _, e := range s.Errors.Details {
		t.Errorf("error %d × %s %q", e.Count, e.Class, e.Message)
	}
	if s.Status != "completed" {
		t.Errorf("status %q", s.Status)
	}
	if rss > maxRSSMiB {
		t.Errorf("peak RSS %d MiB", rss)
	}
}

// TestFaultsHTTP2: an HTTP/2 server that resets streams and ends
// connections with GOAWAY. Each fault is one error entry of the class
// docs/plan.md gives, its message the server's code (and debug data)
// without a stream id (issue 31 item 10: the resets fell into "(other
// messages)" and a GOAWAY with an error code read "EOF", class reset); the
// run stops by itself, memory bounded.
func TestFaultsHTTP2(t *testing.T) {
	url, _ := faulttest.H2(t)
	p := writePlan(t, `name: h2-faults
target: `+url+`
http: {version: "2", timeout: 10s}
workloads:
  w:
    scenario:
      - request: {name: ok, url: /ok}
      - request: {name: rst, url: /rst}
      - request: {name: goaway-calm, url: /goaway-calm}
      - request: {name: goaway, url: /goaway}
      - request: {name: refuse, url: /refuse}
    load: {users: 3, iterations: 20}
`)
	out := filepath.Join(t.TempDir(), "run")
	b, code, rss := runFaults(t, p, out)
	if code != ExitOK && code != ExitSLAFailed && code != ExitError {
		t.Fatalf("exit %d\n%s", code, b)
	}
	s := readSummary(t, out)
	want := map[string]struct{ class, message string }{
		"rst":         {"h2_stream_reset", "stream reset by the server: INTERNAL_ERROR"},
		"goaway-calm": {"protocol", `server sent GOAWAY ENHANCE_YOUR_CALM and closed the connection before the response ended (debug data "` + faulttest.GoAwayDebug + `")`},
		"goaway":      {"reset", "server sent GOAWAY NO_ERROR and closed the connection before the response ended"},
		"refuse":      {"protocol", `server sent GOAWAY ENHANCE_YOUR_CALM, request refused unprocessed (debug data "` + faulttest.GoAwayDebug + `")`},
	}
	entries := map[string]int{}
	for _, e := range s.Errors.Details {
		entries[e.Label]++
		w, ok := want[e.Label]
		if !ok || e.Class != w.class || e.Message != w.message || e.Count != 60 {
			t.Errorf("error entry %d × %s %s %q; want 60 × %s %q", e.Count, e.Label, e.Class, e.Message, w.class, w.message)
		}
	}
	for l := range want {
		if entries[l] != 1 {
			t.Errorf("%s: %d error entries, want 1", l, entries[l])
		}
	}
	for _, l := range s.Labels {
		if l.Label == "ok" && (l.Samples != 60 || l.Errors != 0) {
			t.Errorf("ok: %d samples, %d errors", l.Samples, l.Errors)
		}
	}
	if s.Status != "completed" {
		t.Errorf("status %q", s.Status)
	}
	if rss > maxRSSMiB {
		t.Errorf("peak RSS %d MiB", rss)
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	// The report's headline names a fault, and its errors table each
	// (Markdown escapes the underscores).
	if strings.Contains(string(md), "(other messages)") || !regexp.MustCompile(`most frequent: \S+ “(stream reset by the server|server sent GOAWAY)`).Match(md) ||
		!strings.Contains(string(md), `stream reset by the server: INTERNAL\_ERROR`) {
		t.Errorf("report.md does not name the faults:\n%s", md)
	}
}
