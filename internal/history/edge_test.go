package history_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestSecretsNotStored: tags and context values under secret names, and a
// secret value inside another value, never reach the store.
func TestSecretsNotStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := runDir(t, reporttest.Options{Seed: 5})
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	info.Context = &rundir.Context{Description: "checkout with Authorization: Bearer Zm9vYmFyLXRva2VuLTEyMw",
		Environment: map[string]string{"db_password": "hunter2-db", "instances": "3"}}
	if err := rundir.WriteInfo(dir, info); err != nil {
		t.Fatal(err)
	}
	r, err := history.FromDir(dir, map[string]string{"api_token": "tok-abcdef-123", "release": "ramsons"})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := history.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(ctx, r, time.Now()); err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, history.Filter{})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(runs)
	for _, secret := range []string{"tok-abcdef-123", "hunter2-db", "Zm9vYmFyLXRva2VuLTEyMw"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("secret %q stored", secret)
		}
	}
	if runs[0].Tags["release"] != "ramsons" || runs[0].Context["environment.instances"] != "3" || runs[0].Tags["api_token"] != "***" {
		t.Errorf("tags %v context %v: the plain values must stay, the secret ones be masked", runs[0].Tags, runs[0].Context)
	}
	// Nor does the file hold them anywhere (WAL included).
	for _, f := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, secret := range []string{"tok-abcdef-123", "hunter2-db"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("%s holds %q", f, secret)
			}
		}
	}
}

// TestConcurrentAdds: two processes' worth of stores adding to one SQLite
// file at once (two runs ending together) lose nothing.
func TestConcurrentAdds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	base, err := history.FromDir(runDir(t, reporttest.Options{Seed: 9}), nil)
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 2, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := history.Open(ctx, path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			for i := range each {
				r := *base
				r.ID = base.ID + "-" + string(rune('a'+w)) + string(rune('a'+i))
				if _, err := s.Add(ctx, &r, time.Now()); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s, err := history.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, err := s.Runs(ctx, history.Filter{})
	if err != nil || len(runs) != writers*each {
		t.Errorf("%d runs stored, want %d (%v)", len(runs), writers*each, err)
	}
}

// TestNewerSchemaRefused: a store written by a newer plateau is refused
// with its version, not misread.
func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := history.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO schema_migrations (version, applied_at) VALUES (99, '2030-01-01T00:00:00.000000000Z')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = history.Open(ctx, path)
	if err == nil || !strings.Contains(err.Error(), "schema version 99 is newer") {
		t.Errorf("opening a newer store: %v", err)
	}
}

// TestBadRunDirectories: a directory without summary.json, or with a
// broken one, is an error naming it.
func TestBadRunDirectories(t *testing.T) {
	t.Parallel()
	dir := runDir(t, reporttest.Options{Seed: 2})
	if err := os.Remove(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := history.FromDir(dir, nil); !errors.Is(err, history.ErrNoSummary) || !strings.Contains(err.Error(), dir) {
		t.Errorf("no summary.json: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, rundir.SummaryFile), []byte(`{"labels": [{"label": 3}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := history.FromDir(dir, nil); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, rundir.SummaryFile)) {
		t.Errorf("broken summary.json: %v", err)
	}
	if _, err := history.FromDir(filepath.Join(dir, "nope"), nil); err == nil {
		t.Errorf("a missing directory was read")
	}
}

// FuzzFromRun: whatever a summary.json decodes to, reading it into a run
// and storing it never panics, and what is stored reads back.
func FuzzFromRun(f *testing.F) {
	dir := runDir(f, reporttest.Options{Seed: 4, Monitor: true})
	seed, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"labels":[{"label":"a"},{"label":"a"}],"phases":[{"name":"p","labels":[{"label":"x"}]},{"name":"p"}],"resources":[{"target":"t","phase":null,"metrics":{"cpu_pct":{"mean":1}}}]}`))
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		f.Fatal(err)
	}
	s, err := history.Open(context.Background(), filepath.Join(f.TempDir(), "fuzz.db"))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	n := 0
	f.Fuzz(func(t *testing.T, b []byte) {
		var sum analysis.Summary
		if json.Unmarshal(b, &sum) != nil {
			return
		}
		r := history.FromRun(info, &sum, "/fuzz", map[string]string{"k": string(b[:min(len(b), 20)])})
		n++
		r.ID = r.ID + "-" + strings.Repeat("x", n%7) + string(rune('a'+n%26)) + time.Now().Format("150405.000000000")
		if _, err := s.Add(context.Background(), r, time.Now()); err != nil {
			t.Fatalf("storing a run read from valid JSON: %v", err)
		}
		if _, err := history.Analyze([]*history.Run{r, r}, history.Options{Seed: 1}); err != nil {
			t.Fatalf("analysing: %v", err)
		}
	})
}

// TestOddFileNames: a store whose path holds URI characters is that file.
func TestOddFileNames(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "a?b#c%d")
	path := filepath.Join(dir, "h 1.db")
	s, err := history.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("store not at %s: %v", path, err)
	}
}
