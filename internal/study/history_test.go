package study

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// TestStudyFromHistory: a study selects its runs from a results store by
// tags (SQLite file and a real PostgreSQL), resolving to the stored runs'
// directories with the release factor from their release tags, and the
// release question is answered over them; a selected run whose directory
// is gone is an error naming it and the sections that need it.
func TestStudyFromHistory(t *testing.T) {
	root := t.TempDir()
	type planted struct {
		name string
		o    reporttest.Options
		tags map[string]string
	}
	runs := []planted{
		{"old", reporttest.Options{Seed: 5}, map[string]string{"workflow": "checkin", "release": "1.3"}},
		{"base", reporttest.Options{Seed: 7}, map[string]string{"workflow": "checkin", "release": "1.4"}},
		{"new-a", reporttest.Options{Seed: 7, SlowerPct: 30}, map[string]string{"workflow": "checkin", "release": "1.5"}},
		{"other", reporttest.Options{Seed: 9, SlowerPct: 80}, map[string]string{"workflow": "checkout", "release": "1.5"}},
		{"new-b", reporttest.Options{Seed: 8, SlowerPct: 30}, map[string]string{"workflow": "checkin", "release": "1.5"}},
	}
	ctx := context.Background()
	lite := filepath.Join(root, "perf", "history.db")
	dsn := monitortest.Postgres(t)
	var stored []*history.Run
	for i, p := range runs {
		dir := filepath.Join(root, "runs", p.name)
		write(t, dir, p.o)
		if _, err := report.Generate(dir, report.Options{Formats: []string{"json"}}); err != nil {
			t.Fatal(err)
		}
		r, err := history.FromDir(dir, p.tags)
		if err != nil {
			t.Fatal(err)
		}
		r.Start = r.Start.Add(time.Duration(i) * 24 * time.Hour)
		stored = append(stored, r)
	}
	for _, db := range []string{lite, dsn} {
		s, err := history.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range stored {
			if _, err := s.Add(ctx, r, time.Now()); err != nil {
				t.Fatal(err)
			}
		}
		s.Close()
	}
	body := func(db string) string {
		return `title: Check-in, 1.5 against 1.4
runs:
  - history: {db: "` + db + `", tags: {workflow: checkin, release: "1.4"}, last: 1}
    role: baseline
    name: release 1.4
  - history: {db: "` + db + `", tags: {workflow: checkin, release: "1.5"}}
    role: candidate
`
	}
	for name, db := range map[string]string{"sqlite": "perf/history.db", "postgres": dsn} {
		t.Run(name, func(t *testing.T) {
			f := studyFile(t, root, body(db))
			var dirs, releases []string
			for _, r := range f.Runs {
				dirs = append(dirs, filepath.Base(r.Dir))
				releases = append(releases, r.Factors.Release)
			}
			if strings.Join(dirs, " ") != "base new-a new-b" || strings.Join(releases, " ") != "1.4 1.5 1.5" {
				t.Fatalf("selected %v with releases %v, want base, new-a, new-b with 1.4, 1.5, 1.5", dirs, releases)
			}
			if f.Runs[0].Role != Baseline || f.Runs[0].Name != "release 1.4" || f.Runs[1].Name != "" || f.Runs[2].Role != Candidate {
				t.Errorf("roles and names %+v", f.Runs)
			}
			s, err := Build(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Runs) != 3 || s.Baseline != "release 1.4" {
				t.Fatalf("%d runs, baseline %q", len(s.Runs), s.Baseline)
			}
			var rel *Answer
			for i := range s.Answers {
				if s.Answers[i].Question.Kind == Release {
					rel = &s.Answers[i]
				}
			}
			if rel == nil || rel.Outcome != Failed || len(rel.Release) == 0 {
				t.Fatalf("release answer %+v, want failed: 1.5 was planted 30 %% slower", rel)
			}
			for _, row := range rel.Release {
				if row.Total.DeltaPct < 20 {
					t.Errorf("release row %s vs %s: %+.1f %%, planted +30 %%", row.Cand, row.Base, row.Total.DeltaPct)
				}
			}
		})
	}
	// The selection's mistakes, said with the study file's line.
	for _, c := range []struct{ src, want string }{
		{body("perf/nohistory.db"), "study.yaml:3:5: history db " + filepath.Join(root, "perf", "nohistory.db")},
		{strings.Replace(body("perf/history.db"), "workflow: checkin, release: \"1.4\"", "workflow: checkni", 1), "no run stored in " + lite + " has tags workflow=checkni"},
		{strings.Replace(body("perf/history.db"), "last: 1", "last: 2", 1), "study.yaml:3:5: a baseline is one run: give its history selection last: 1"},
		{strings.Replace(body("perf/history.db"), "tags:", "tgas:", 1), `unknown history key "tgas"`},
	} {
		p := filepath.Join(root, "study.yaml")
		if err := os.WriteFile(p, []byte(c.src), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
	// A run directory deleted since: the study cannot be built, and says
	// which run and why (the history keeps per-label figures only).
	if err := os.RemoveAll(filepath.Join(root, "runs", "new-b")); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, "study.yaml")
	if err := os.WriteFile(p, []byte(body("perf/history.db")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(p)
	for _, want := range []string{"study.yaml:6:5: 1 of the 2 runs with tags release=1.5 workflow=checkin", stored[4].ID[:12], "release=1.5 workflow=checkin",
		filepath.Join(root, "runs", "new-b") + ", which is gone", "answers, runs, labels and resources tables, causes and charts", "plateau history report"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant %q", err, want)
		}
	}
}
