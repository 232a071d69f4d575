package importer

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestDeclaredPhases: declared holds are placed from the tool's start,
// rounded inwards to whole seconds; the samples of their seconds are
// theirs; a hold whose measured rate or user count is far from its
// declared target is named in the notes, one that held is not.
func TestDeclaredPhases(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	start := now.Add(-time.Hour).Add(300 * time.Millisecond) // the tool's start, mid-second
	dir := filepath.Join(t.TempDir(), "run")
	r, err := NewRun(Options{Dir: dir, Now: now, DerivePhases: true})
	if err != nil {
		t.Fatal(err)
	}
	a := r.Requests("k6")
	sec := func(i int) int64 { return start.Truncate(time.Second).Add(time.Duration(i) * time.Second).UnixNano() }
	// Seconds 1–10: 10 requests and 10 iterations a second, 3 users;
	// seconds 12–21: 6 a second (20 declared), 3 users (8 declared).
	for i := 1; i <= 21; i++ {
		n := 10
		if i >= 12 {
			n = 6
		}
		if i == 11 {
			continue
		}
		a.AddUsers(sec(i), 3)
		for k := 0; k < n; k++ {
			at := sec(i) + int64(k)*int64(time.Second)/int64(n)
			if err := a.Add(&Rec{End: at, Elapsed: 1000, Label: a.Labels().ID([]byte("GET /")), Threads: -1}); err != nil {
				t.Fatal(err)
			}
			a.AddArrivals(at, 1)
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	r.SetDeclared("k6", []DeclaredPhase{
		{Name: "10 iterations/s", From: 500 * time.Millisecond, To: 10500 * time.Millisecond, Rate: 10, Unit: "iterations/s", Arrivals: true},
		{Name: "20 req/s", From: 11500 * time.Millisecond, To: 21500 * time.Millisecond, Rate: 20, Unit: "req/s"},
	}, start)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Phases) != 2 {
		t.Fatalf("phases %+v", info.Phases)
	}
	// 0.3 s + 0.5 s = second 0.8 → 1; 10.8 → 10: seconds 1–9.
	t0 := start.Truncate(time.Second)
	if p := info.Phases[0]; !p.Start.Equal(t0.Add(time.Second)) || !p.End.Equal(t0.Add(10*time.Second)) || p.Rate != 10 {
		t.Errorf("phase 0: %s – %s, rate %v", p.Start, p.End, p.Rate)
	}
	notes := strings.Join(info.Notes, "\n")
	if strings.Contains(notes, `phase "10 iterations/s"`) {
		t.Errorf("a phase that held its rate is named:\n%s", notes)
	}
	if !strings.Contains(notes, `phase "20 req/s": declared 20 req/s, 6 req/s reached (request samples counted in it) — k6 could not keep up`) {
		t.Errorf("no note on the phase far from its rate:\n%s", notes)
	}
	// Every phase's target beside what ran, the one held too.
	if !strings.Contains(notes, `declared → reached in each phase (k6's own counts over its whole seconds; users: the median per second): "10 iterations/s" 10 → 10 iterations/s; "20 req/s" 20 → 6 req/s`) {
		t.Errorf("no declared → reached note:\n%s", notes)
	}
	if !strings.Contains(notes, "2 phases as k6's script declares them") || strings.Contains(notes, "derived from thread-count") {
		t.Errorf("the notes do not say the phases are declared:\n%s", notes)
	}
	// Per-phase counts: the records of the phase's seconds.
	var got [2]int64
	if err := rundir.ReadIntervals(dir, func(rec *rundir.IntervalRecord) error {
		if rec.Phase >= 0 && rec.Users == nil {
			got[rec.Phase] += rec.Count
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got != [2]int64{90, 54} {
		t.Errorf("samples per phase %v, want 9 s × 10 and 9 s × 6 (seconds 12–20)", got)
	}

	// User holds: 3 held, 8 declared and 3 ran.
	dir2 := filepath.Join(t.TempDir(), "run2")
	r2, _ := NewRun(Options{Dir: dir2, Now: now})
	a2 := r2.Requests("k6")
	for i := 1; i <= 21; i++ {
		a2.AddUsers(sec(i), 3)
		_ = a2.Add(&Rec{End: sec(i), Elapsed: 1000, Label: a2.Labels().ID([]byte("GET /")), Threads: -1})
	}
	_ = a2.Close()
	r2.SetDeclared("k6", []DeclaredPhase{{Name: "3 VUs", From: time.Second, To: 5 * time.Second, Users: 3},
		{Name: "8 VUs", From: 12 * time.Second, To: 16 * time.Second, Users: 8}}, start)
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	info2, _ := rundir.ReadInfo(dir2)
	notes = strings.Join(info2.Notes, "\n")
	if strings.Contains(notes, `phase "3 VUs"`) || !strings.Contains(notes, `phase "8 VUs": declared 8 users, 3 ran`) ||
		!strings.Contains(notes, `"3 VUs" 3 → 3 users; "8 VUs" 8 → 3 users`) {
		t.Errorf("user holds' notes:\n%s", notes)
	}
}
