package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/html/browsertest"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestDanishDemoArtefacts: plateau demo (000, Danish as its reference)
// read as a Danish reader meets it — its console, report.md and
// report.html, then plateau compare's console and documents and plateau
// history's console and documents on its run — holds none of the English
// words of the catalogue's keys (every word of a key whose Danish
// differs, less the words Danish writes too) outside code and the run's
// own names.
func TestDanishDemoArtefacts(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo stack (about 20 s)")
	}
	cwd := t.TempDir()
	dir := filepath.Join(cwd, "demo")
	cmd := plateauCmd("demo", "--step", "2s", "--patients", "3000", "-o", "demo")
	cmd.Dir = cwd
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != ExitOK && code != ExitSLAFailed {
		t.Fatalf("demo exit %d (%v)\nstdout:\n%s\nstderr:\n%s", code, err, stdout.String(), stderr.String())
	}
	run := filepath.Join(dir, "run")
	words := reporttest.CatalogueEnglish("da")
	kept, err := reporttest.KeptNames(run)
	if err != nil {
		t.Fatal(err)
	}
	// The " (net of downstream)" label suffix, and the run directory's
	// name ("run") compare puts in brackets to tell two runs of one plan
	// apart.
	kept = append(kept, core.NetSuffix, "("+filepath.Base(run)+")")
	// The requirements name the first step by its Danish name.
	if !strings.Contains(strings.Join(kept, "\n"), `during "1: 2 nodes og 7 tråde"`) {
		t.Errorf("the demo's requirements do not name its Danish first step: %q", kept)
	}
	read := func(what string, texts []string) {
		t.Helper()
		if len(texts) == 0 {
			t.Errorf("%s: nothing to read", what)
		}
		for _, l := range reporttest.EnglishWordsLeft(texts, words, kept) {
			t.Errorf("English in the Danish %s: %s", what, l)
		}
	}
	lines := func(s string) []string { return strings.Split(s, "\n") }
	// An HTML document is read as the browser shows it: its DOM after its
	// scripts ran, in headless Chromium with the network trapped.
	bin := browsertest.Chromium(t)
	browser := func(path string) []string {
		t.Helper()
		tr := browsertest.NewTrap(t)
		dom, _ := browsertest.Run(t, bin, tr, path, "--dump-dom")
		if reqs := tr.Requests(); len(reqs) > 0 {
			t.Errorf("%s asked the network for %q", path, reqs)
		}
		texts, err := reporttest.HTMLTexts([]byte(dom))
		if err != nil {
			t.Fatal(err)
		}
		return reporttest.Prose(texts)
	}
	file := func(path string) []string {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		switch filepath.Ext(path) {
		case ".html":
			texts, err := reporttest.HTMLTexts(b)
			if err != nil {
				t.Fatal(err)
			}
			return reporttest.Prose(texts)
		case ".md":
			return reporttest.MarkdownTexts(string(b))
		}
		return lines(string(b))
	}
	read("demo console", lines(stdout.String()+stderr.String()))
	for _, want := range []string{"plateau demo: starter demoservicen", "plateau: kører ", "rapport:", "teststatus: ", "1: 2 nodes og 7 tråde"} {
		if !strings.Contains(stdout.String()+stderr.String(), want) {
			t.Errorf("the Danish demo console lacks %q:\n%s%s", want, stdout.String(), stderr.String())
		}
	}
	read("report.md", file(filepath.Join(run, "report.md")))
	read("report.html", file(filepath.Join(run, "report.html")))
	read("report.html in Chromium", browser(filepath.Join(run, "report.html")))

	cmpDir := filepath.Join(cwd, "compare")
	out, err := plateauCmd("compare", run, run, "-o", cmpDir).CombinedOutput()
	if err != nil {
		t.Fatalf("plateau compare: %v\n%s", err, out)
	}
	read("compare console", lines(string(out)))
	if !strings.Contains(string(out), "kørsel 2") || !strings.Contains(string(out), "hele kørslen") {
		t.Errorf("plateau compare's console is not Danish:\n%s", out)
	}
	read("compare.md", file(filepath.Join(cmpDir, "compare.md")))
	read("compare.html", file(filepath.Join(cmpDir, "compare.html")))
	read("compare.html in Chromium", browser(filepath.Join(cmpDir, "compare.html")))

	db, histDir := filepath.Join(cwd, "history.db"), filepath.Join(cwd, "history")
	out, err = plateauCmd("history", "add", "--db", db, "--tag", "release=r1", run).CombinedOutput()
	if err != nil {
		t.Fatalf("plateau history add: %v\n%s", err, out)
	}
	read("history add console", lines(string(out)))
	if !strings.Contains(string(out), "tilføjet") {
		t.Errorf("plateau history add of a Danish run is not Danish:\n%s", out)
	}
	if out, err := plateauCmd("history", "report", "--db", db, "--lang", "da", "-o", histDir).CombinedOutput(); err != nil {
		t.Fatalf("plateau history report: %v\n%s", err, out)
	}
	read("history.md", file(filepath.Join(histDir, "history.md")))
	read("history.html", file(filepath.Join(histDir, "history.html")))
	read("history.html in Chromium", browser(filepath.Join(histDir, "history.html")))
}

// TestDanishDemoSteps: demo 000's steps are named in its language, as
// reference 000 names its iterations, and its requirements judge the first
// step by that name; English keeps the plan's names.
func TestDanishDemoSteps(t *testing.T) {
	sla, lang, err := demoPlanHead()
	if err != nil {
		t.Fatal(err)
	}
	if lang != "da" {
		t.Fatalf("the demo plan's lang is %q, want da (reference 000 is Danish)", lang)
	}
	if !strings.Contains(strings.Join(sla, "\n"), strconv.Quote(demoFirstStep)) {
		t.Fatalf("no requirement of the demo plan names %q: %q", demoFirstStep, sla)
	}
	for _, c := range []struct{ lang, first, list string }{
		{"da", "1: 2 nodes og 7 tråde", `during \"1: 2 nodes og 7 tråde\"`},
		{"en", demoFirstStep, `during \"1: 2 nodes x 7 threads\"`},
	} {
		steps, first := demoSteps(20e9, 2, planLoc(c.lang, ""))
		if first != c.first || !strings.Contains(steps, strconv.Quote(c.first)) {
			t.Errorf("%s: first step %q in %s, want %q", c.lang, first, steps, c.first)
		}
		if got := demoSLA(sla, first); !strings.Contains(got, c.list) || strings.Count(got, c.list) != 3 {
			t.Errorf("%s: requirements %s, want three naming %s", c.lang, got, c.list)
		}
	}
}
