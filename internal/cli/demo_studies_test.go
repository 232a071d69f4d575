package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/study"
)

// domTable is one table of a rendered page.
type domTable struct {
	Section string     `json:"section"`
	Caption string     `json:"caption"`
	Rows    [][]string `json:"rows"`
}

// readTables opens a page in headless Chromium and returns its tables with
// the section each belongs to.
func readTables(t *testing.T, page string) []domTable {
	t.Helper()
	ctx := browser(t)
	js := `Array.from(document.querySelectorAll('table')).map(t => {
		const sec = t.closest('section');
		const h = sec ? sec.querySelector('h2') : null;
		const title = h ? Array.from(h.childNodes).filter(n => !(n.classList && n.classList.contains('n'))).map(n => n.textContent).join('').trim() : '';
		return {section: title, caption: t.caption ? t.caption.textContent.trim() : '',
			rows: Array.from(t.tBodies[0] ? t.tBodies[0].rows : []).map(r => Array.from(r.cells).map(c => c.textContent.trim()))};
	})`
	var tables []domTable
	if err := chromedp.Run(ctx, chromedp.Navigate("file://"+page), chromedp.Evaluate(js, &tables)); err != nil {
		t.Fatalf("reading %s in Chromium: %v", page, err)
	}
	return tables
}

// Each study demo runs in its CI setting and writes one study document; in
// Chromium the document has the reference's tables, in the reference's
// order, before plateau's own sections, each with rows and no empty cell.
// Demo 001 keeps its data in a real PostgreSQL, so its top-SQL table fills.
func TestStudyDemosInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the four study demos (a few minutes)")
	}
	liveChromium(t) // skip (or fail under CI) before the expensive part
	dsn := monitortest.Postgres(t)
	for _, c := range []struct {
		id     string
		args   []string
		tables []string // caption prefixes, in document order
	}{
		{"001", []string{"--postgres", dsn}, []string{
			"The following table contains tests configuration information",
			"Tests #1, #2, #3, #4: check-in, check-out response times",
			"Test #5: 30 vUsers longevity test",
			"Comparison between average response times",
			"Comparison of longevity test",
			"API requests by response time",
			"CPU utilization (%)", "Memory consumption (MB)",
			"Database connections (max)", "Database load: top SQL",
			"Errors by test and HTTP status",
			"Response time and memory over the longevity test", "Memory of mod-circulation over the longevity test"}},
		{"002", nil, []string{"The data-volume model", "Survey-response upload", "The 13-call browse flow", "Calls of the browse flow"}},
		{"003", nil, []string{"Performance among various concurrency", "Average response time among different services",
			"CPU load on various concurrency", "Different log settings", "Memory usage of different log settings", "Memory usage of different services"}},
		{"004", nil, []string{"Test runs", "Response time for check-in/check-out and durations of the data import",
			"Service CPU utilization", "Service memory utilization", "Service CPU utilization", "Service memory utilization",
			"Service CPU utilization", "Service memory utilization", "Service CPU utilization", "Service memory utilization"}},
	} {
		t.Run(c.id, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "demo-"+c.id)
			args := append([]string{"demo", c.id, "--short", "-o", dir, "-q"}, c.args...)
			cmd := plateauCmd(args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			start := time.Now()
			if err := cmd.Run(); err != nil {
				t.Fatalf("plateau demo %s: %v\nstdout:\n%s\nstderr:\n%s", c.id, err, stdout.String(), stderr.String())
			}
			t.Logf("plateau demo %s --short: %s", c.id, time.Since(start).Round(time.Second))
			page := filepath.Join(dir, "study", study.HTMLFile)
			if !strings.Contains(stdout.String(), page) {
				t.Errorf("the study's path is not printed:\n%s", stdout.String())
			}
			tables := readTables(t, page)
			// The reference's tables come first, in its order, all before
			// plateau's own sections.
			i := 0
			for _, tb := range tables {
				if i < len(c.tables) && strings.HasPrefix(tb.Caption, c.tables[i]) {
					if strings.HasPrefix(tb.Section, "plateau:") {
						t.Errorf("reference table %q is in plateau's section %q", tb.Caption, tb.Section)
					}
					if len(tb.Rows) == 0 {
						t.Errorf("table %q has no rows", tb.Caption)
					}
					for _, r := range tb.Rows {
						for j, cell := range r {
							if cell == "" || cell == "—" {
								t.Errorf("table %q, row %q, column %d is empty (%q)", tb.Caption, r[0], j+1, cell)
							}
						}
					}
					i++
				}
			}
			if i < len(c.tables) {
				var got []string
				for _, tb := range tables {
					got = append(got, tb.Caption)
				}
				t.Fatalf("reference table %q missing or out of order; the page's tables: %q", c.tables[i], got)
			}
			// plateau's study follows: the runs table with every run.
			var s study.Study
			b, err := os.ReadFile(filepath.Join(dir, "study", study.JSONFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &s); err != nil {
				t.Fatal(err)
			}
			runs := 0
			for _, tb := range tables {
				if tb.Section == "plateau: Runs" && tb.Caption == "" {
					runs = len(tb.Rows)
				}
			}
			if runs != len(s.Runs) || runs < 3 {
				t.Errorf("plateau's runs table has %d rows, study.json %d runs", runs, len(s.Runs))
			}
			for _, r := range s.Runs {
				if r.Requests == 0 {
					t.Errorf("run %s made no requests", r.Name)
				}
			}
			// Every run of the study (the example plans against the bundled
			// services) has a report whose every sentence reads true.
			if n := checkRunsProse(t, dir); n < 3 {
				t.Errorf("%d run directories under the demo's output, want its runs", n)
			}
		})
	}
}
