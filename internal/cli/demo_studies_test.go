package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/plateau-perf/plateau/internal/demo/study003"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
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
		// kinds are the questions the study asks, in order; planted
		// checks that the planted facts are found in its answers.
		kinds   []study.Kind
		planted func(t *testing.T, s *study.Study, answers string)
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
			"Response time and memory over the longevity test", "Memory of mod-circulation over the longevity test"},
			[]study.Kind{study.Release, study.SoakQ}, planted001},
		{"002", nil, []string{"The data-volume model", "Survey-response upload", "The 13-call browse flow", "Calls of the browse flow"},
			[]study.Kind{study.CapacityQ, study.CapacityQ}, planted002},
		{"003", nil, []string{"Performance among various concurrency", "Average response time among different services",
			"CPU load on various concurrency", "Different log settings", "Memory usage of different log settings", "Memory usage of different services"},
			[]study.Kind{study.CapacityQ, study.Configurations}, planted003},
		{"004", nil, []string{"Test runs", "Response time for check-in/check-out and durations of the data import",
			"Service CPU utilization", "Service memory utilization", "Service CPU utilization", "Service memory utilization",
			"Service CPU utilization", "Service memory utilization", "Service CPU utilization", "Service memory utilization"},
			[]study.Kind{study.Interference, study.Repeatability}, planted004},
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
			// The first screen holds the study's status and one answer per
			// question, and the planted facts are found in the answers.
			if len(s.Answers) != len(c.kinds) {
				t.Fatalf("%d answers, want %d (%v)", len(s.Answers), len(c.kinds), c.kinds)
			}
			for i, a := range s.Answers {
				if a.Question.Kind != c.kinds[i] {
					t.Errorf("answer %d is about %s, want %s", i+1, a.Question.Kind, c.kinds[i])
				}
			}
			fs := readFirstScreen(t, page)
			if !strings.Contains(fs.Status, "Study status: "+s.Status.Word()) {
				t.Errorf("the first screen's status %q, study.json %s", fs.Status, s.Status)
			}
			if len(fs.Items) != len(s.Answers) {
				t.Errorf("the answers section has %d items, want %d", len(fs.Items), len(s.Answers))
			}
			for i, it := range fs.Items {
				if it.Bottom > fs.Height {
					t.Errorf("answer %d ends at %.0f px, below the first screen (%.0f px): %s", i+1, it.Bottom, fs.Height, it.Text)
				}
				if i < len(s.Answers) && !strings.Contains(it.Text, s.Answers[i].Outcome.Word()) {
					t.Errorf("answer %d lacks its outcome %s: %s", i+1, s.Answers[i].Outcome.Word(), it.Text)
				}
			}
			c.planted(t, &s, strings.Join(fs.texts(), "\n"))
			// Every sentence of the study document reads true against
			// study.json (the report's prose and truth checks).
			md, err := os.ReadFile(filepath.Join(dir, "study", study.MarkdownFile))
			if err != nil {
				t.Fatal(err)
			}
			defects, err := reporttest.ProseDefects(md, b)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range defects {
				t.Errorf("study.md: %s", d)
			}
			// Every run of the study (the example plans against the bundled
			// services) has a report whose every sentence reads true.
			if n := checkRunsProse(t, dir); n < 3 {
				t.Errorf("%d run directories under the demo's output, want its runs", n)
			}
		})
	}
}

// firstScreen is what a reader sees of a study before scrolling, at
// 1280×1024: the status line and the answers.
type firstScreen struct {
	Status string  `json:"status"`
	Height float64 `json:"height"`
	Items  []struct {
		Text   string  `json:"text"`
		Bottom float64 `json:"bottom"`
	} `json:"items"`
}

func (f firstScreen) texts() []string {
	var out []string
	for _, it := range f.Items {
		out = append(out, it.Text)
	}
	return out
}

func readFirstScreen(t *testing.T, page string) firstScreen {
	t.Helper()
	ctx := browser(t)
	js := `(() => {
		const s = document.getElementById('answers');
		if (!s) return {status: '', height: window.innerHeight, items: []};
		const items = Array.from(s.querySelectorAll('li')).map(li => ({text: li.innerText.trim(), bottom: li.getBoundingClientRect().bottom + window.scrollY}));
		let status = '';
		for (const el of s.querySelectorAll('*')) {
			if (el.innerText && el.innerText.includes('Study status:') && el.children.length <= 1) { status = el.innerText.trim(); break; }
		}
		return {status: status, height: window.innerHeight, items: items};
	})()`
	var fs firstScreen
	if err := chromedp.Run(ctx, chromedp.EmulateViewport(1280, 1024), chromedp.Navigate("file://"+page), chromedp.Evaluate(js, &fs)); err != nil {
		t.Fatalf("reading %s in Chromium: %v", page, err)
	}
	return fs
}

// answerOf is the study's answer to the first question of kind k.
func answerOf(t *testing.T, s *study.Study, k study.Kind) *study.Answer {
	t.Helper()
	for i := range s.Answers {
		if s.Answers[i].Question.Kind == k {
			return &s.Answers[i]
		}
	}
	t.Fatalf("no answer of kind %s", k)
	return nil
}

// 001: the current release against the previous one at every user level
// and in the soak, with the previous release's averages; the planted leak
// found in the current release's soak and named.
func planted001(t *testing.T, s *study.Study, answers string) {
	rel := answerOf(t, s, study.Release)
	if len(rel.Release) != 5 {
		t.Errorf("release comparison over %d groups, want the 4 user levels and the soak: %s", len(rel.Release), rel.Line)
	}
	for _, r := range rel.Release {
		if !strings.HasPrefix(r.Base, "previous release") || !strings.HasPrefix(r.Cand, "current release") {
			t.Errorf("%s compares %s with %s", r.Group, r.Cand, r.Base)
		}
	}
	if !strings.Contains(answers, "Current release against previous release") || !strings.Contains(answers, " ms, ") {
		t.Errorf("the release answer lacks the previous release's numbers:\n%s", answers)
	}
	soak := answerOf(t, s, study.SoakQ)
	var cur, prev *study.SoakRun
	for i := range soak.Soak {
		switch {
		case strings.HasPrefix(soak.Soak[i].Run, "current"):
			cur = &soak.Soak[i]
		case strings.HasPrefix(soak.Soak[i].Run, "previous"):
			prev = &soak.Soak[i]
		}
	}
	if cur == nil || prev == nil {
		t.Fatalf("soaks %+v", soak.Soak)
	}
	if !cur.Drifting || soak.Outcome != study.Failed {
		t.Errorf("the planted leak was not found: current release's soak %+v, outcome %s", cur, soak.Outcome)
	}
	if !strings.Contains(answers, "Current release, soak: drifting") || !strings.Contains(answers, "memory of mod-circulation grew") {
		t.Errorf("the answers do not name the leak:\n%s", answers)
	}
}

// 002: clients per instance within the targets, per workload, from each
// workload's own runs; the browse errors carried in as causes.
func planted002(t *testing.T, s *study.Study, answers string) {
	for i, w := range []string{"upload", "browse"} {
		a := s.Answers[i]
		if a.Question.Workload != w || len(a.Capacity) != 1 {
			t.Fatalf("answer %d: workload %q, %d rows", i+1, a.Question.Workload, len(a.Capacity))
		}
		plantedSearch(t, a.Capacity[0], answers)
		for _, p := range a.Capacity[0].Points {
			if !strings.HasPrefix(p.Run, w) {
				t.Errorf("%s's capacity has a point of %s", w, p.Run)
			}
		}
		if !strings.Contains(answers, strings.ToUpper(w[:1])+w[1:]+": ") {
			t.Errorf("no answer for %s:\n%s", w, answers)
		}
	}
	for _, r := range s.Runs {
		if r.ErrorPct == 0 {
			continue
		}
		found := false
		for _, c := range s.Causes {
			found = found || (c.Run == r.Name && len(c.Errors) > 0)
		}
		if !found {
			t.Errorf("%s has %.2f %% errors but no causes", r.Name, r.ErrorPct)
		}
	}
}

// plantedSearch: a capacity row answered by the demo's capacity search,
// whose answer the study quotes — the load in its unit, what limited it —
// over probes within the demo's bounds.
func plantedSearch(t *testing.T, r study.CapacityRow, answers string) {
	t.Helper()
	cs := r.SearchAnswer
	if !r.Search || cs == nil {
		t.Errorf("%s: the capacity is not the search's answer: %+v", r.Workload, r)
		return
	}
	if cs.Unit != "users" || len(cs.Probes) == 0 || len(cs.Probes) > 6+2 {
		t.Errorf("%s: the search's unit %q and %d probes (at most 6 and two engine cuts)", r.Workload, cs.Unit, len(cs.Probes))
	}
	if !strings.Contains(answers, r.Workload+": the capacity search answered: ") && !strings.Contains(answers, strings.ToUpper(r.Workload[:1])+r.Workload[1:]+": the capacity search answered: ") {
		t.Errorf("%s: the answers do not quote the search:\n%s", r.Workload, answers)
	}
	n := strconv.FormatFloat(cs.Load, 'f', -1, 64) + " user"
	if cs.Load > 0 && !strings.Contains(answers, "capacity: "+n) && !strings.Contains(answers, "capacity at least "+n) && !strings.Contains(answers, "held at least "+n) {
		t.Errorf("%s: the answers do not quote the capacity %g users:\n%s", r.Workload, cs.Load, answers)
	}
	if len(r.Points) == 0 || r.Points[0].Phase == "" {
		t.Errorf("%s: the row's points are not the search's probes: %+v", r.Workload, r.Points)
	}
}

// 003: the knee per log configuration, and what limits it. The manager
// counts its 8 slots (its metrics page, monitored as manager-slots), so
// the limit can be named from that count wherever a loaded machine puts
// the throughput curve's knee. Where the generator was starved or could
// not hold the load, the knee is not the system's: such a row must say so
// (the generator named as the limit, or "uncertain" with the answer's
// confidence low), and the 8-call limit is asserted only where some row's
// generator kept up.
func planted003(t *testing.T, s *study.Study, answers string) {
	a := answerOf(t, s, study.CapacityQ)
	if len(a.Capacity) != 3 {
		t.Fatalf("capacity rows %d, want one per log configuration", len(a.Capacity))
	}
	limit, excused := 0, 0
	for _, r := range a.Capacity {
		plantedSearch(t, r, answers)
		if r.Limit != nil && r.Limit.Value == study003.ManagerWorkers {
			limit++
		}
		starved := false
		for _, p := range r.Points {
			starved = starved || p.Generator || p.Invalid
		}
		switch {
		case r.GeneratorLimited:
			excused++
		case starved:
			excused++
			if a.Confidence != "low" && !strings.Contains(r.Sentence, "uncertain") {
				t.Errorf("%s: the generator was starved, yet neither the row nor the answer's confidence (%q) says so: %s", r.Workload, a.Confidence, r.Sentence)
			}
		}
	}
	if limit == 0 && excused < len(a.Capacity) {
		t.Errorf("no configuration's knee is matched with the 8-call limit, though the generator kept up in some:\n%s", answers)
	}
	if limit > 0 && !strings.Contains(answers, "the configured limit manager calls at once (8)") {
		t.Errorf("the limit is not named in the answers:\n%s", answers)
	}
}

// 004: whether the data import starves check-in/check-out, and whether
// the repeats agree.
func planted004(t *testing.T, s *study.Study, answers string) {
	in := answerOf(t, s, study.Interference)
	if len(in.Interference) != 4 {
		t.Fatalf("interference measured in %d runs, want 4", len(in.Interference))
	}
	for _, ir := range in.Interference {
		if ir.Workload != "circulation" || ir.Other != "data-import" || ir.Windows[1].Requests == 0 {
			t.Errorf("%s: %s during %s: %+v", ir.Run, ir.Workload, ir.Other, ir.Windows)
		}
		if ir.Planned == 0 || ir.Started > ir.Planned {
			t.Errorf("%s: the import's work, %d of %d planned", ir.Run, ir.Started, ir.Planned)
		}
	}
	if !strings.Contains(answers, "Yes: ") && !strings.Contains(answers, "No: ") {
		t.Errorf("the interference answer says neither yes nor no:\n%s", answers)
	}
	rep := answerOf(t, s, study.Repeatability)
	// Per workload: circulation's 2–3 ms calls are not averaged with the
	// import's 200 ms chunks.
	if len(rep.Repeats) != 2 || rep.Repeats[0].Workload != "circulation" || rep.Repeats[1].Workload != "data-import" ||
		len(rep.Repeats[0].Runs) != 4 || len(rep.Repeats[1].Runs) != 4 {
		t.Errorf("repeats %+v, want circulation's and data-import's, four runs each", rep.Repeats)
	}
}
