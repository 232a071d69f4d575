package mondata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStatementLogPhases: increments logged over time sum per span, with a
// statement reset counting from zero and texts written once.
func TestStatementLogPhases(t *testing.T) {
	run := t.TempDir()
	dir := filepath.Join(run, SubDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := OpenStatementLog(dir, "db", "db")
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	snap := func(s int, a, b float64) {
		t.Helper()
		cur := map[string]StatementCounters{"a": {Query: "SELECT a", Calls: a, TotalMs: a * 2}, "b": {Query: "SELECT b", Calls: b, TotalMs: b * 10}}
		if err := l.Snapshot(at(s), cur); err != nil {
			t.Fatal(err)
		}
	}
	snap(0, 100, 0)  // baseline
	snap(5, 110, 1)  // phase 1: a+10, b+1
	snap(10, 130, 3) // phase 1: a+20, b+2
	snap(15, 5, 3)   // phase 2: a reset → +5; b nothing
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	hs, err := ReadStatementLogs(run)
	if err != nil || len(hs) != 1 || hs[0].Target != "db" {
		t.Fatalf("%v %v", hs, err)
	}
	p1 := hs[0].Between(at(0), at(10), 10)
	if len(p1.Statements) != 2 || p1.Statements[0].QueryID != "a" || p1.Statements[0].Calls != 30 || p1.Statements[0].TotalMs != 60 ||
		p1.Statements[1].Calls != 3 || p1.Statements[1].TotalMs != 30 || p1.AllMs != 90 || p1.Statements[1].Query != "SELECT b" {
		t.Errorf("phase 1: %+v", p1)
	}
	p2 := hs[0].Between(at(10), at(15), 10)
	if len(p2.Statements) != 1 || p2.Statements[0].Calls != 5 || p2.Statements[0].Query != "SELECT a" {
		t.Errorf("phase 2: %+v", p2)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "db"+StatementLogSuffix))
	if strings.Count(string(b), "SELECT a") != 1 {
		t.Errorf("query text written more than once:\n%s", b)
	}
}

// FuzzStatementLog: any file content reads back as an error naming the
// file and line, or as a history; never a panic.
func FuzzStatementLog(f *testing.F) {
	f.Add([]byte(`{"target":"db","t":"2026-01-01T00:00:00Z","d":[]}` + "\n" + `{"t":"2026-01-01T00:00:05Z","d":[{"id":"a","q":"SELECT 1","c":3,"ms":1.5,"r":3}]}` + "\n"))
	f.Add([]byte("{\"t\":1}\n"))
	f.Add([]byte("not json\n{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		run := t.TempDir()
		dir := filepath.Join(run, SubDir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "x"+StatementLogSuffix), data, 0o644); err != nil {
			t.Fatal(err)
		}
		hs, err := ReadStatementLogs(run)
		if err != nil {
			if !strings.Contains(err.Error(), "x"+StatementLogSuffix) {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, h := range hs {
			st := h.Between(time.Time{}, time.Now().Add(1000*time.Hour), 5)
			if len(st.Statements) > 5 {
				t.Fatalf("top 5 gave %d", len(st.Statements))
			}
		}
	})
}
