package html_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/html/browsertest"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestBrowserControl proves the harness sees what the real test asserts
// is absent: a console error and an attempted request.
func TestBrowserControl(t *testing.T) {
	bin := browsertest.Chromium(t)
	tr := browsertest.NewTrap(t)
	page := filepath.Join(t.TempDir(), "control.html")
	if err := os.WriteFile(page, []byte(`<!DOCTYPE html><html><body><img src="http://probe.invalid/probe.png"><script>console.error("control-marker")</script></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, console := browsertest.Run(t, bin, tr, page, "--dump-dom")
	if !strings.Contains(strings.Join(console, "\n"), "control-marker") {
		t.Errorf("console error not captured; got %q", console)
	}
	deadline := time.Now().Add(3 * time.Second)
	for len(tr.Requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if reqs := tr.Requests(); len(reqs) == 0 || !strings.Contains(strings.Join(reqs, "\n"), "probe.png") {
		t.Errorf("attempted request not trapped; got %q", reqs)
	}
}

// TestReportInBrowser loads a realistic report.html from disk with the
// network trapped: no console message, no request, every section present,
// the run's hostile strings shown as text; and keeps a screenshot.
func TestReportInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true, Steps: []reporttest.Step{{Users: 7, Seconds: 120, RampUpS: 10},
		{Users: 10, Seconds: 120, RampUpS: 5}, {Users: 14, Seconds: 120, RampUpS: 5}, {Users: 20, Seconds: 120, RampUpS: 5}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Generate(dir, report.Options{Formats: []string{"html"}}); err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(dir, "report.html")
	tr := browsertest.NewTrap(t)
	dom, console := browsertest.Run(t, bin, tr, page, "--dump-dom")
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
	_, console = browsertest.Run(t, bin, tr, page, "--screenshot="+shot, "--window-size=1280,2400", "--hide-scrollbars")
	if len(console) > 0 {
		t.Errorf("console messages while taking the screenshot:\n%s", strings.Join(console, "\n"))
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 20_000 {
		t.Errorf("screenshot %s missing or blank: %v", shot, err)
	} else {
		t.Logf("screenshot kept at %s", shot)
	}
	if reqs := tr.Requests(); len(reqs) > 0 {
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
