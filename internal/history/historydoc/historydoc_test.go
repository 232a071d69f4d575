package historydoc_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/history/historydoc"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/report/html"
	"github.com/plateau-perf/plateau/internal/report/html/browsertest"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// storedRuns makes n runs as the store holds them: label "checkout" (and
// TOTAL) with a step up of p95 from run 12 on, tagged with releases, one
// hostile label.
func storedRuns(n int) []*history.Run {
	rng := rand.New(rand.NewPCG(1, 2))
	t0 := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	var runs []*history.Run
	for i := range n {
		p95 := 120 + rng.NormFloat64()*2
		if i >= 11 {
			p95 = 150 + rng.NormFloat64()*2
		}
		rel := "quesnelia"
		if i >= 11 {
			rel = "ramsons"
		}
		r := &history.Run{ID: fmt.Sprintf("%032x", i+1), Plan: "check-in-out", Start: t0.Add(time.Duration(i) * 24 * time.Hour),
			Verdict: "passed", Passed: true, Tags: map[string]string{"release": rel, "build": fmt.Sprint(100 + i)}, Context: map[string]string{},
			Labels: []history.LabelRow{
				{Label: "checkout", Samples: 9000, Errors: 9, ErrorPct: 0.1, MeanMs: p95 / 2, P50Ms: p95 / 2.2, P90Ms: p95 * 0.9, P95Ms: p95, P99Ms: p95 * 1.3, MaxMs: p95 * 2, ThroughputRPS: 30},
				{Label: "<script>alert(1)</script>", Samples: 9000, MeanMs: 40 + rng.NormFloat64(), P95Ms: 80 + rng.NormFloat64(), ThroughputRPS: 30},
				{Label: "TOTAL", Samples: 18000, Errors: 9, ErrorPct: 0.05, MeanMs: p95 / 2.5, P95Ms: p95, ThroughputRPS: 60},
			},
			Resources: []history.ResourceRow{{Target: "mod-circulation", Kind: "process", Metric: "cpu_pct", Mean: 55 + rng.NormFloat64()}}}
		runs = append(runs, r)
	}
	return runs
}

func writeReport(t *testing.T, runs []*history.Run, dir string) *history.Analysis {
	t.Helper()
	a, err := history.Analyze(runs, history.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	d := historydoc.Build(a, runs, "plateau test", time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC))
	if _, err := historydoc.Write(dir, d, a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestReportStatesItsData: the change point table, the latest-run table
// and the charts say what the analysis found.
func TestReportStatesItsData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	runs := storedRuns(24)
	a := writeReport(t, runs, dir)
	md, err := os.ReadFile(filepath.Join(dir, historydoc.MarkdownFile))
	if err != nil {
		t.Fatal(err)
	}
	var cp *history.ChangePoint
	for _, s := range a.Series {
		if s.Label == "checkout" && s.Metric == history.MetricP95 {
			if len(s.ChangePoints) != 1 {
				t.Fatalf("checkout p95: %d change points", len(s.ChangePoints))
			}
			cp = &s.ChangePoints[0]
		}
	}
	row := fmt.Sprintf("| checkout p95 (ms) | run 12 (release ramsons, build 111) | %.0f (11) | %.0f (13) | ❌ %+.1f %% | %.3f | ❌ worse |", cp.BeforeMean, cp.AfterMean, cp.ChangePct, cp.PValue)
	if !strings.Contains(string(md), row) {
		t.Errorf("history.md lacks the change point row %q:\n%s", row, md)
	}
	if !strings.Contains(string(md), "Releases: quesnelia (runs 1–11), ramsons (runs 12–24).") {
		t.Errorf("history.md does not list the releases")
	}
	charts, _ := filepath.Glob(filepath.Join(dir, historydoc.ChartDir, "*.svg"))
	if len(charts) != len(a.Series) {
		t.Errorf("%d charts for %d series", len(charts), len(a.Series))
	}
}

// TestReportSameFromSQLiteAndPostgres: the report of runs stored in SQLite
// and in a real PostgreSQL is the same, byte for byte.
func TestReportSameFromSQLiteAndPostgres(t *testing.T) {
	ctx := context.Background()
	runs := storedRuns(16)
	var outs [2][]byte
	for i, dsn := range []string{filepath.Join(t.TempDir(), "h.db"), monitortest.Postgres(t)} {
		s, err := history.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if _, err := s.Add(ctx, r, time.Unix(0, 0)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Runs(ctx, history.Filter{})
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		writeReport(t, got, dir)
		for _, f := range []string{historydoc.HTMLFile, historydoc.MarkdownFile, historydoc.JSONFile} {
			b, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			outs[i] = append(outs[i], b...)
		}
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("the report differs between SQLite and PostgreSQL")
	}
}

// TestReportInBrowser loads history.html in headless Chromium with the
// network trapped: no console message, no request, every section and
// chart rendered, a hostile label shown as text.
func TestReportInBrowser(t *testing.T) {
	bin := browsertest.Chromium(t)
	dir := t.TempDir()
	a := writeReport(t, storedRuns(24), dir)
	tr := browsertest.NewTrap(t)
	dom, console := browsertest.Run(t, bin, tr, filepath.Join(dir, historydoc.HTMLFile), "--dump-dom")
	if len(console) > 0 {
		t.Errorf("console messages while loading history.html:\n%s", strings.Join(console, "\n"))
	}
	for _, id := range []string{"summary", "latest", "change-points", "series", "runs"} {
		if !strings.Contains(dom, `<section id="`+id+`"`) {
			t.Errorf("section %q missing from the rendered page", id)
		}
	}
	if n := strings.Count(dom, "<svg"); n != len(a.Series) {
		t.Errorf("%d charts rendered, want %d", n, len(a.Series))
	}
	if !strings.Contains(dom, "&lt;script&gt;alert(1)&lt;/script&gt;") || strings.Contains(dom, "<script>alert(1)") {
		t.Errorf("a label holding <script> was not rendered as text")
	}
	if reqs := tr.Requests(); len(reqs) > 0 {
		t.Errorf("history.html attempted network requests: %q", reqs)
	}
}

// TestDanishHistoryReadsDanish: the history report in Danish — a change
// point, a worse latest run, releases — read as a reader does holds no
// English sentence outside code and the runs' own names (labels, plan,
// tags), its numbers have the decimal comma and the run "12" of the
// change point is "kørsel 12"; without a language it is the English
// document, byte for byte.
func TestDanishHistoryReadsDanish(t *testing.T) {
	t.Parallel()
	runs := storedRuns(24)
	a, err := history.Analyze(runs, history.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	da := historydoc.BuildIn(a, runs, "plateau test", now, locale.MustParse("da"))
	b, err := html.Render(da)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<html lang="da">`, "Resultathistorik", "kørsel 12 (release ramsons, build 111)", "Ændringspunkter", "dårligere"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the Danish history lacks %q", want)
		}
	}
	kept := []string{"check-in-out", "checkout", "<script>alert(1)</script>", "mod-circulation", "quesnelia", "ramsons"}
	left, err := reporttest.EnglishLeft(b, append(reporttest.EnglishStopList, "runs", "change point", "series", "latest"), kept)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		t.Errorf("English in the Danish history: %s", l)
	}
	if m := regexp.MustCompile(`[+−-]\d+\.\d %`).Find(b); m != nil {
		t.Errorf("an English decimal point in the Danish history: %q", m)
	}
	en, err := html.Render(historydoc.BuildIn(a, runs, "plateau test", now, nil))
	if err != nil {
		t.Fatal(err)
	}
	old, err := html.Render(historydoc.Build(a, runs, "plateau test", now))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(en, old) || !strings.Contains(string(en), "run 12 (release ramsons, build 111)") {
		t.Error("the English history changed")
	}
}

// TestOneRunSubtitle: a store with one run says "1 run at …", in English
// and in Danish, not "1 runs from … to …".
func TestOneRunSubtitle(t *testing.T) {
	t.Parallel()
	runs := storedRuns(1)
	a, err := history.Analyze(runs, history.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	da, err := locale.Parse("da")
	if err != nil {
		t.Fatal(err)
	}
	for want, loc := range map[string]*locale.Locale{"1 run at 2026-03-01 09:00 UTC": nil, "1 kørsel kl. 2026-03-01 09:00 UTC": da} {
		d := historydoc.BuildIn(a, runs, "plateau test", time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC), loc)
		if d.Subtitle != want {
			t.Errorf("subtitle %q, want %q", d.Subtitle, want)
		}
	}
}
