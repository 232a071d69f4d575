package report_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// englishPhrases are fixed phrases of the English report that a Danish one
// must not hold.
var englishPhrases = []string{"Test status", "## Summary", "## Conclusions", "## Results", "Scope and requirements",
	"Requirements, judged over", "Written by", "performance report", "Response time:", "held up to", "Verdict:",
	"| Label |", "| Average (ms) |", "Throughput (req/s)", "Error %", "not measured", "no monitor recorded it",
	"Load applied", "One row per phase", "Deltas are this run", "Compared with"}

// TestDanishReport renders reference 000's shape (three steps of LAR →
// CAVE allergy reads, monitored) in Danish: Danish headings and column
// names, Danish numbers, none of the English fixed phrases, and the truth
// checks still agree with it, reading its numbers the Danish way.
func TestDanishReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := t.TempDir()
	if err := reporttest.Write(base, reporttest.Options{Monitor: true, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true, SlowerPct: 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Lang: "da", Baseline: base, Formats: []string{"json", "html", "md"}}); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	text := prose(string(md))
	for _, want := range []string{"## Resumé", "## Scope og performance krav", "## Performance tal", "## Konklusion", "Teststatus: ",
		"| Label |", "Gennemsnit (ms)", "Svartid per kald:", "Skrevet af", "## Sammenligning", "Forskellene er denne kørsel minus baseline"} {
		if !strings.Contains(string(md), want) && want != "| Label |" {
			t.Errorf("the Danish report lacks %q", want)
		}
	}
	if !strings.Contains(string(html), `<html lang="da">`) {
		t.Error(`report.html is not marked lang="da"`)
	}
	for _, en := range englishPhrases {
		if en == "| Label |" {
			continue // the reference writes "Label" in Danish too
		}
		if strings.Contains(text, en) {
			t.Errorf("the Danish report still has the English %q", en)
		}
	}
	// Danish numbers: decimal comma, thousands with a dot; no English
	// decimal point before a unit.
	if !regexp.MustCompile(`\d,\d+ (ms|%|kald/s)`).MatchString(text) {
		t.Error("no decimal comma before a unit in the Danish report")
	}
	if m := regexp.MustCompile(`\b\d+\.\d{1,2} (ms|%|req/s|kald/s)`).FindString(text); m != "" {
		t.Errorf("an English decimal point in the Danish report: %q", m)
	}
	if m := regexp.MustCompile(`\b\d{1,3},\d{3}\b [a-z]`).FindString(text); m != "" {
		t.Errorf("an English thousands separator in the Danish report: %q", m)
	}
	// Read as a reader does, the HTML holds no English sentence outside
	// code and the run's own names.
	names, err := reporttest.Names(dir)
	if err != nil {
		t.Fatal(err)
	}
	left, err := reporttest.EnglishLeft(html, reporttest.EnglishStopList, names)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		t.Errorf("English in the Danish report: %s", l)
	}
	// The truth checks hold on the Danish report, its numbers read the
	// Danish way.
	defects, err := reporttest.RunDefects(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defects {
		t.Error(d)
	}
}

// prose is report.md without its code blocks (the plan as run is quoted
// as written).
func prose(md string) string {
	var b strings.Builder
	in := false
	for _, l := range strings.Split(md, "\n") {
		if strings.HasPrefix(l, "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

func TestUnknownLanguage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{}); err != nil {
		t.Fatal(err)
	}
	_, err := report.Write(dir, report.Options{Lang: "tlh"})
	if err == nil || !strings.Contains(err.Error(), `"tlh"`) || !strings.Contains(err.Error(), "en, da") {
		t.Fatalf("report in an unknown language: %v; want the value and the languages available", err)
	}
}

func TestDelocalize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"1.104,5 ms": "1,104.5 ms", "0,42 %": "0.42 %", "155 ms": "155 ms",
		"v. 1.0.2": "v. 1.0.2", "2019-05-13 11:10:14": "2019-05-13 11:10:14", "50.000 patienter": "50,000 patienter"} {
		if got := string(reporttest.Delocalize([]byte(in), "da")); got != want {
			t.Errorf("Delocalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDanishCompareReadsDanish: plateau compare's document in Danish —
// repeats with their spread, a load series, a tripped --fail-on rule —
// read as a reader does holds no English sentence outside code and the
// runs' own names, and its numbers have the decimal comma.
func TestDanishCompareReadsDanish(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	mk := func(name string, users int, seed uint64, slower float64) string {
		d := filepath.Join(root, name)
		if err := reporttest.Write(d, reporttest.Options{Name: "shop", Seed: seed, SlowerPct: slower, Monitor: true,
			Steps: []reporttest.Step{{Users: users, Seconds: 30, RampUpS: 2}}}); err != nil {
			t.Fatal(err)
		}
		return d
	}
	repeats := []string{mk("a", 10, 1, 0), mk("b", 10, 2, 30), mk("c", 10, 3, 0)}
	series := []string{mk("s8", 8, 4, 0), mk("s20", 20, 5, 0), mk("s30", 30, 6, 0)}
	rules, err := compare.ParseRules("p95 > +10%")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		dirs []string
	}{{"repeats", repeats}, {"series", series}} {
		res, err := report.CompareRuns(c.dirs, report.CompareOptions{Lang: "da", Rules: rules})
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		if _, err := report.WriteCompare(out, res); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(out, report.CompareHTML))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `<html lang="da">`) || !strings.Contains(string(b), "Sammenligning") {
			t.Errorf("%s: compare.html is not Danish", c.name)
		}
		var names []string
		for _, d := range c.dirs {
			n, err := reporttest.Names(d)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, n...)
		}
		for _, r := range append([]report.RunComparison{{Name: res.BaseName}}, res.Runs...) {
			names = append(names, r.Name)
		}
		left, err := reporttest.EnglishLeft(b, reporttest.EnglishStopList, names)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range left {
			t.Errorf("%s: English in the Danish comparison: %s", c.name, l)
		}
		if m := regexp.MustCompile(`[+−-]\d+\.\d %`).Find(b); m != nil {
			t.Errorf("%s: an English decimal point in the Danish comparison: %q", c.name, m)
		}
	}
	// The same comparison without --lang is English, as before.
	res, err := report.CompareRuns(repeats, report.CompareOptions{Rules: rules})
	if err != nil {
		t.Fatal(err)
	}
	if res.Doc.Lang.Name() != "en" || res.Doc.Sections[0].Title != "Summary" {
		t.Errorf("compare without --lang: %s, %q", res.Doc.Lang.Name(), res.Doc.Sections[0].Title)
	}
}

// danishTexts are what a reader of report.md and report.html reads, less
// the CPU states' legend entries.
func danishTexts(t *testing.T, dir string) (md, html []string) {
	t.Helper()
	mb, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	hb, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := reporttest.HTMLTexts(hb)
	if err != nil {
		t.Fatal(err)
	}
	return reporttest.MarkdownTexts(string(mb)), reporttest.Prose(h)
}

// TestDanishReportHasNoCatalogueEnglish: a Danish report of reference
// 000's shape — monitored, compared with a baseline — holds none of the
// English words of the catalogue's keys (every word of a key whose Danish
// differs, less the words Danish writes too) outside code and names, in
// report.md and in report.html read as a reader does. And the scan bites:
// each translation the report uses, put back in English as a missing
// translation would leave it, is found.
func TestDanishReportHasNoCatalogueEnglish(t *testing.T) {
	t.Parallel()
	dir, base := t.TempDir(), t.TempDir()
	if err := reporttest.Write(base, reporttest.Options{Monitor: true, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true, SlowerPct: 20}); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Write(dir, report.Options{Lang: "da", Baseline: base, Formats: []string{"json", "html", "md"}}); err != nil {
		t.Fatal(err)
	}
	words := reporttest.CatalogueEnglish("da")
	kept, err := reporttest.KeptNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	md, html := danishTexts(t, dir)
	for _, l := range reporttest.EnglishWordsLeft(md, words, kept) {
		t.Errorf("English in the Danish report.md: %s", l)
	}
	for _, l := range reporttest.EnglishWordsLeft(html, words, kept) {
		t.Errorf("English in the Danish report.html: %s", l)
	}
	// The bite: every verbless translation whose text stands as words of
	// its own in report.md, replaced there by its English key, is found.
	checked := 0
	for k, v := range locale.Catalogue("da") {
		if k == v || strings.Contains(k, "%") || strings.TrimSpace(v) == "" {
			continue
		}
		english := false
		for _, w := range strings.Fields(strings.ToLower(k)) {
			if words[strings.Trim(w, ".,:;()'’\"")] {
				english = true
			}
		}
		if !english {
			continue // a key whose every word Danish writes too ("CPU", "p95 (ms)")
		}
		at := regexp.MustCompile(`(^|[^\p{L}\p{N}])` + regexp.QuoteMeta(strings.TrimSpace(v)) + `($|[^\p{L}\p{N}])`)
		var broken []string
		hit := false
		for _, l := range md {
			if at.MatchString(l) {
				hit = true
				l = at.ReplaceAllString(l, "${1}"+strings.ReplaceAll(strings.TrimSpace(k), "$", "$$")+"${2}")
			}
			broken = append(broken, l)
		}
		if !hit {
			continue
		}
		checked++
		if len(reporttest.EnglishWordsLeft(broken, words, kept)) == 0 {
			t.Errorf("the translation %q of %q removed from the report goes unnoticed", v, k)
		}
	}
	if checked < 50 {
		t.Errorf("only %d of the report's translations were put back in English to check the scan bites", checked)
	}
	t.Logf("%d English words; %d translations in the report checked to be missed when removed", len(words), checked)
}

// TestRunNamingDanish: runs compare names by their load or an ordinal are
// named with the document's words; English is compare.Names as before.
func TestRunNamingDanish(t *testing.T) {
	t.Parallel()
	series := []compare.RunFacts{{Plan: "shop", Dir: "a", Users: 1}, {Plan: "shop", Dir: "b", Users: 20}, {Plan: "shop", Dir: "c", Users: 20, Rate: 2.5}}
	same := []compare.RunFacts{{Plan: "shop", Dir: "run"}, {Plan: "shop", Dir: "run"}}
	da := locale.MustParse("da")
	for _, c := range []struct {
		runs []compare.RunFacts
		want []string
	}{
		{series, []string{"shop, 1 bruger", "shop, 20 brugere", "shop, 20 brugere ved 2,5/s"}},
		{same, []string{"shop (run) (kørsel 1)", "shop (run) (kørsel 2)"}},
	} {
		if got := compare.NamesWith(c.runs, report.RunNaming(da)); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("Danish names %q, want %q", got, c.want)
		}
		if got, want := compare.NamesWith(c.runs, report.RunNaming(locale.MustParse("en"))), compare.Names(c.runs); strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("English names %q, want compare.Names' %q", got, want)
		}
	}
	if got := compare.Names(same); got[1] != "shop (run) (run 2)" {
		t.Errorf("English ordinal %q", got[1])
	}
}
