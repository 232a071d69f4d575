package study

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/markdown"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

func write(t *testing.T, dir string, o reporttest.Options) {
	t.Helper()
	if o.Steps == nil {
		o.Steps = []reporttest.Step{{Users: 8, Seconds: 40, RampUpS: 2}}
	}
	if o.Name == "" {
		o.Name = "shop"
	}
	if err := reporttest.Write(dir, o); err != nil {
		t.Fatal(err)
	}
}

func studyFile(t *testing.T, dir, body string) *File {
	t.Helper()
	p := filepath.Join(dir, "study.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// Three runs whose response times differ by a known amount: the Δ of
// every label matches and the verdicts say so.
func TestStudyKnownDeltas(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "base"), reporttest.Options{Seed: 7, Monitor: true})
	write(t, filepath.Join(root, "same"), reporttest.Options{Seed: 7, Monitor: true})
	write(t, filepath.Join(root, "slow"), reporttest.Options{Seed: 7, SlowerPct: 30, Monitor: true})
	f := studyFile(t, root, `title: Release check
description: checkout after the cache change
system:
  app: shop 1.5
environment:
  cpu: 4 vCPU
method: one run per release, 8 users
hypothesis: the cache makes checkout faster
runs:
  - {dir: base, role: baseline, name: release 1.4}
  - {dir: same, role: configuration, name: same build}
  - {dir: slow, role: candidate, name: release 1.5}
`)
	notes := filepath.Join(root, "notes.md")
	os.WriteFile(notes, []byte("## Findings\n- the cache is cold at start\n\n## Recommendations\nwarm the cache\nbefore the run\n"), 0o644)
	n, err := LoadNotes(notes)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(f, n)
	if err != nil {
		t.Fatal(err)
	}
	if s.Baseline != "release 1.4" {
		t.Fatalf("baseline %q", s.Baseline)
	}
	for _, l := range s.Labels {
		same, slow := l.Cells[1], l.Cells[2]
		if !same.Present || !slow.Present {
			t.Fatalf("%s: missing cells %+v", l.Label, l.Cells)
		}
		if same.DeltaPct != 0 || same.Verdict != compare.NoChange {
			t.Errorf("%s, same build: Δ %+.2f %% %s, want 0 and no change", l.Label, same.DeltaPct, same.Verdict)
		}
		if slow.DeltaPct < 27 || slow.DeltaPct > 33 || slow.Verdict != compare.Slower {
			t.Errorf("%s, 30 %% slower: Δ %+.2f %% %s", l.Label, slow.DeltaPct, slow.Verdict)
		}
	}
	if s.Labels[len(s.Labels)-1].Label != core.TotalLabel {
		t.Fatal("last label is not all requests")
	}
	if len(s.Resources) == 0 || !s.Resources[0].Runs[2].HasCPU {
		t.Fatalf("resources: %+v", s.Resources)
	}
	if len(s.Findings) != 1 || s.Recommendations[0] != "warm the cache before the run" {
		t.Fatalf("notes: %q %q", s.Findings, s.Recommendations)
	}
	d := Document(s, time.Unix(0, 0), "plateau test")
	out := t.TempDir()
	files, err := Write(out, s, d, []string{"html", "md", "json", "junit"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("files %q", files)
	}
	md, _ := os.ReadFile(filepath.Join(out, MarkdownFile))
	if s.Status != Failed || len(s.Answers) != 1 || s.Answers[0].Question.Kind != Release || s.Answers[0].Outcome != Failed {
		t.Fatalf("status %s, answers %+v", s.Status, s.Answers)
	}
	for _, want := range []string{"FAILED", "Release comparison per matching workload and load", "slower at read, 8 users (", "(vs release 1.4)",
		"| cpu | 4 vCPU |", "per service, release 1.5", "Hypothesis: The cache makes checkout faster.", "Warm the cache before the run.", "Resources across runs"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("study.md lacks %q", want)
		}
	}
	for _, bad := range []string{"+0.0 %", "-0.0 %", "NaN", "; .", "..", " ."} {
		if strings.Contains(string(md), bad) {
			t.Errorf("study.md contains %q", bad)
		}
	}
	writeStudy(t, s) // the prose and truth checks
	ju, _ := os.ReadFile(filepath.Join(out, JUnitFile))
	if !strings.Contains(string(ju), `failures="`) || strings.Contains(string(ju), `failures="0"`) {
		t.Errorf("junit has no failure for the slower release:\n%s", ju)
	}
}

// Four repeats, one planted 25 % slower: it is named as the outlier.
func TestStudyRepeatOutlier(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for i, slower := range []float64{0, 1, 25, 0.5} {
		write(t, filepath.Join(root, "r"+string(rune('1'+i))), reporttest.Options{Seed: uint64(11 + i), SlowerPct: slower})
	}
	in, err := rundir.ReadInfo(filepath.Join(root, "r1"))
	if err != nil {
		t.Fatal(err)
	}
	in.Context = &rundir.Context{Method: "one run per build", Environment: map[string]string{"cpu": "4 vCPU"}}
	if err := rundir.WriteInfo(filepath.Join(root, "r1"), in); err != nil {
		t.Fatal(err)
	}
	f := studyFile(t, root, "runs:\n  - {dir: r1, role: baseline}\n  - {dir: r2, role: repeat}\n  - {dir: r3, role: repeat}\n  - {dir: r4, role: repeat}\n")
	s, err := Build(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Repeats) != 1 || len(s.Repeats[0].Runs) != 4 || s.Repeats[0].Workload != "" {
		t.Fatalf("repeats %+v, want one row of all requests, four runs", s.Repeats)
	}
	if len(s.Repeats[0].Outliers) != 1 || s.Repeats[0].Outliers[0] != "repeat 2" {
		t.Fatalf("outliers %q (runs %q), want [repeat 2]", s.Repeats[0].Outliers, s.Repeats[0].Runs)
	}
	if s.Method != "one run per build" || len(s.Environment) != 1 || s.Environment[0] != (KV{"cpu", "4 vCPU"}) {
		t.Fatalf("context from the baseline's plan: method %q, environment %v", s.Method, s.Environment)
	}
	writeStudy(t, s) // the prose and truth checks
	md := markdown.Render(Document(s, time.Unix(0, 0), "t"))
	if !strings.Contains(string(md), "repeat 2 is an outlier") || !strings.Contains(string(md), "Method: One run per build.") {
		t.Fatalf("study.md:\n%s", md)
	}
	if s.Repeats[0].CVPct <= 0 {
		t.Fatalf("CV %v", s.Repeats[0].CVPct)
	}
}

func TestLoadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, src, want string }{
		{"unknown key", "title: x\nrunz: []\n", "study.yaml:2:1: unknown key \"runz\""},
		{"bad role", "runs:\n  - {dir: a, role: baseline}\n  - {dir: b, role: boss}\n", "study.yaml:3:20: unknown role \"boss\""},
		{"unknown run key", "runs:\n  - dir: a\n    rol: baseline\n  - dir: b\n", "study.yaml:3:5: unknown run key \"rol\""},
		{"no dir", "runs:\n  - role: baseline\n  - dir: b\n", "study.yaml:2:5: run has no dir"},
		{"two baselines", "runs:\n  - {dir: a, role: baseline}\n  - {dir: b, role: baseline}\n", "one baseline"},
		{"one run", "runs:\n  - {dir: a}\n", "at least two runs"},
		{"syntax", "runs: [\n", "study.yaml:"},
		{"environment not a table", "environment: 4 cpus\nruns:\n  - {dir: a}\n  - {dir: b}\n", "study.yaml:1:14: environment must be a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("study.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte("runs:\n  - {dir: a, role: baseline}\n  - {dir: b}\n"))
	f.Add([]byte("environment: {cpu: 4}\nruns: []"))
	f.Add([]byte("runs:\n  - history: {db: h.db, tags: {release: \"1.5\"}, last: 1}\n    role: baseline\n  - history: {db: postgres://u@h/db, plan: shop}\n"))
	f.Add([]byte("questions:\n  - {kind: release, baseline: a, max_slower_pct: 5}\n  - {kind: capacity, sla: [avg(response_time) < 1s], min_load: 8}\nlimits: {pool: 8}\nruns:\n  - {dir: a, factors: {release: a, users: 8}}\n  - {dir: b, factors: {release: b, rate: 2.5}}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		s, err := Parse("f.yaml", src)
		// runs selected from a history are counted once selected (Load).
		if err == nil && len(s.Runs) < 2 && !slices.ContainsFunc(s.Runs, func(r RunRef) bool { return r.History != nil }) {
			t.Fatalf("accepted %d runs", len(s.Runs))
		}
	})
}

// Runs at three user levels are a series: the document draws the curve.
func TestStudySeries(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, u := range []int{8, 20, 30} {
		write(t, filepath.Join(root, fmt.Sprint("u", u)), reporttest.Options{Seed: 2, Steps: []reporttest.Step{{Users: u, Seconds: 30, RampUpS: 2}}})
	}
	f := studyFile(t, root, "runs:\n  - {dir: u8, role: baseline}\n  - {dir: u20}\n  - {dir: u30}\n")
	s, err := Build(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Kind != string(compare.Series) || s.Runs[1].Name != "shop, 20 users" || s.Runs[1].Load != "20 users" {
		t.Fatalf("kind %s, run %+v", s.Kind, s.Runs[1])
	}
	md := string(markdown.Render(Document(s, time.Unix(0, 0), "t")))
	if len(s.Capacity) != 0 || len(s.Series) != 1 || len(s.Series[0].Runs) != 3 {
		t.Fatalf("capacity %+v, series %+v", s.Capacity, s.Series)
	}
	if len(s.Answers) == 0 || s.Answers[0].Question.Kind != CapacityQ || len(s.Answers[0].Capacity) != 1 || len(s.Answers[0].Capacity[0].Points) != 3 {
		t.Fatalf("answers %+v", s.Answers)
	}
	writeStudy(t, s) // the prose and truth checks
	if !strings.Contains(md, "Throughput and response time against load") || !strings.Contains(md, "Load series: read") || !strings.Contains(md, "Capacity side by side") {
		t.Fatalf("study.md has no load series:\n%s", md)
	}
}

func TestNotesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, want string }{
		{"intro\n## Findings\n- a\n", "n.md:1: text before"},
		{"## Findings\n- a\n## Risks\n- b\n", "n.md:3: heading"},
	} {
		if _, err := ParseNotes("n.md", []byte(tc.src)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
	n, err := ParseNotes("n.md", []byte("# Findings\n- one\n- two\n  continued\n\n# Recommendations\npara one\n"))
	if err != nil || len(n.Findings) != 2 || n.Findings[1] != "two continued" || n.Recommendations[0] != "para one" {
		t.Fatalf("%+v %v", n, err)
	}
}

func FuzzParseNotes(f *testing.F) {
	f.Add([]byte("## Findings\n- a\n\n## Recommendations\nb\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		n, err := ParseNotes("n.md", src)
		if err == nil && n == nil {
			t.Fatal("nil notes without error")
		}
	})
}

// Two stepped configurations get their knees side by side.
func TestStudyCapacitySideBySide(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	steps := []reporttest.Step{{Users: 7, Seconds: 30, RampUpS: 2}, {Users: 10, Seconds: 30, RampUpS: 2}, {Users: 14, Seconds: 30, RampUpS: 2}}
	write(t, filepath.Join(root, "a"), reporttest.Options{Seed: 1, Steps: steps, Capacity: 8})
	write(t, filepath.Join(root, "b"), reporttest.Options{Seed: 1, Steps: steps, Capacity: 20})
	f := studyFile(t, root, "runs:\n  - {dir: a, role: baseline, name: config A}\n  - {dir: b, role: configuration, name: config B}\n")
	s, err := Build(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Capacity) != 2 || s.Capacity[0].Run != "config A" || s.Capacity[1].Run != "config B" {
		t.Fatalf("capacity %+v", s.Capacity)
	}
	for _, c := range s.Capacity {
		if c.Knee == "" {
			t.Errorf("%s: empty knee sentence", c.Run)
		}
	}
	writeStudy(t, s) // the prose and truth checks
	// A saturates at 8 transactions/s (reached by 10 users); B
	// (capacity 20) keeps scaling to 14 users.
	if s.Capacity[0].KneeLoad != 10 || s.Capacity[1].KneeLoad != 0 {
		t.Errorf("knees %v and %v, want 10 and none: %q / %q", s.Capacity[0].KneeLoad, s.Capacity[1].KneeLoad, s.Capacity[0].Knee, s.Capacity[1].Knee)
	}
	// The configurations question asks by knee, peak throughput and load
	// within the requirements: its answer gives all three for each (it
	// gave the peak alone).
	var cfg *Answer
	for i := range s.Answers {
		if s.Answers[i].Question.Kind == Configurations {
			cfg = &s.Answers[i]
		}
	}
	if cfg == nil {
		t.Fatalf("no configurations answer: %+v", s.Answers)
	}
	for _, want := range []string{"highest peak throughput config B (peak ", "no knee in the loads tested", "config A (peak ", "knee at 10 users", "within the requirements up to "} {
		if !strings.Contains(cfg.Line, want) {
			t.Errorf("the configurations answer lacks %q: %s", want, cfg.Line)
		}
	}
}
