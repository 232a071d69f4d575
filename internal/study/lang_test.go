package study

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestDanishStudy: a study of runs shaped like reference 000's (three steps
// of allergy reads; a baseline and a slower candidate) with
// lang: da is written in Danish — status, answers, headings, column names
// and numbers — holds none of the English fixed phrases, and passes the
// prose and truth checks with its numbers read the Danish way.
func TestDanishStudy(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	steps := []reporttest.Step{{Users: 7, Seconds: 40, RampUpS: 2}, {Users: 10, Seconds: 40, RampUpS: 2}, {Users: 14, Seconds: 40, RampUpS: 2}}
	write(t, filepath.Join(root, "base"), reporttest.Options{Seed: 7, Monitor: true, Steps: steps, Name: "lar-cave"})
	write(t, filepath.Join(root, "slow"), reporttest.Options{Seed: 7, SlowerPct: 30, Monitor: true, Steps: steps, Name: "lar-cave"})
	f := studyFile(t, root, `title: LAR og CAVE
lang: da
runs:
  - {dir: base, role: baseline, name: "1.0.2"}
  - {dir: slow, role: candidate, name: "1.0.3"}
`)
	s, err := Build(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	md, _ := writeStudy(t, s)
	for _, want := range []string{"Studiets status: ", "## Svar", "## Kørsler", "| Kørsel | Rolle |", "Gennemsnit (ms)", "Skrevet af"} {
		if !strings.Contains(md, want) {
			t.Errorf("the Danish study lacks %q", want)
		}
	}
	if !regexp.MustCompile(`BESTÅET|FEJLET|UAFKLARET`).MatchString(md) {
		t.Error("the Danish study's status is not in Danish")
	}
	for _, en := range []string{"Study status", "PASSED", "FAILED", "INCONCLUSIVE", "## Answers", "## Runs", "How each question was answered",
		"questions failed", "questions could not be answered", "within the requirements", "is an outlier", "confidence ", "Written by",
		"| Run | Role |", "Compared with", "Is 1.0.3 slower"} {
		if strings.Contains(md, en) {
			t.Errorf("the Danish study still has the English %q", en)
		}
	}
	if !regexp.MustCompile(`\d,\d+ (ms|%)`).MatchString(md) {
		t.Error("no decimal comma before a unit in the Danish study")
	}
	if m := regexp.MustCompile(`\b\d+\.\d{1,2} (ms|%|req/s|kald/s)`).FindString(md); m != "" {
		t.Errorf("an English decimal point in the Danish study: %q", m)
	}
	// The same study in English is the English document.
	f.Lang = ""
	se, err := Build(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if en, _ := writeStudy(t, se); !strings.Contains(en, "Study status: ") || strings.Contains(en, "Studiets status") {
		t.Error("without lang: the study is not in English")
	}
}

func TestStudyUnknownLanguage(t *testing.T) {
	t.Parallel()
	_, err := Parse("study.yaml", []byte("lang: xx\nruns:\n  - {dir: a}\n  - {dir: b}\n"))
	if err == nil || !strings.Contains(err.Error(), "study.yaml:1:7") || !strings.Contains(err.Error(), `"xx"`) || !strings.Contains(err.Error(), "en, da") {
		t.Fatalf("lang: xx: %v; want file:line:col, the value and the languages available", err)
	}
}
