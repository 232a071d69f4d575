package sut

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dumpDB returns a digest of every patient and allergy row in id order.
func dumpDB(t testing.TB, path string) ([32]byte, int) {
	t.Helper()
	src, err := dsn(path, "mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT p.id, p.cpr, a.id, a.substance, a.category, a.criticality, a.status, a.recorded
		FROM patient p JOIN allergy a ON a.patient_id = p.id ORDER BY a.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	h := sha256.New()
	n := 0
	for rows.Next() {
		var pid, aid int64
		var cpr, sub, cat, crit, st, rec string
		if err := rows.Scan(&pid, &cpr, &aid, &sub, &cat, &crit, &st, &rec); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(h, pid, cpr, aid, sub, cat, crit, st, rec)
		n++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum, n
}

func TestDBDeterministic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	const n = 2000
	paths := []string{filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")}
	seeds := []int64{42, 42, 43}
	for i, p := range paths {
		created, err := PrepareDB(ctx, p, seeds[i], n)
		if err != nil {
			t.Fatal(err)
		}
		if !created {
			t.Fatalf("%s: not generated on first call", p)
		}
	}
	a, rowsA := dumpDB(t, paths[0])
	b, _ := dumpDB(t, paths[1])
	c, _ := dumpDB(t, paths[2])
	if a != b {
		t.Error("same seed gave different rows")
	}
	if a == c {
		t.Error("different seeds gave the same rows")
	}
	// 1–4 allergies per patient: the count must lie strictly inside the
	// extremes for 2,000 patients.
	if rowsA <= n || rowsA >= 4*n {
		t.Errorf("%d allergy rows for %d patients, want between %d and %d", rowsA, n, n, 4*n)
	}
	left, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 3 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestDBReadAndReuse(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cave.db")
	const n = 2000
	if _, err := PrepareDB(ctx, path, 5, n); err != nil {
		t.Fatal(err)
	}
	st, err := openStore(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.close()
	cprs := CPRs(5, n)
	total := 0
	for _, c := range cprs {
		list, err := st.allergies(ctx, c)
		if err != nil {
			t.Fatalf("cpr %s from CPRs(): %v", c, err)
		}
		if list.CPR != c || len(list.Allergies) < 1 || len(list.Allergies) > 4 {
			t.Fatalf("cpr %s: %+v", c, list)
		}
		subs := map[string]bool{}
		for _, a := range list.Allergies {
			if subs[a.Substance] {
				t.Fatalf("cpr %s: substance %s twice", c, a.Substance)
			}
			subs[a.Substance] = true
			if _, err := time.Parse(time.DateOnly, a.Recorded); err != nil {
				t.Fatalf("cpr %s: recorded %q: %v", c, a.Recorded, err)
			}
		}
		total += len(list.Allergies)
	}
	_, rows := dumpDB(t, path)
	if total != rows {
		t.Errorf("reads returned %d allergies, table holds %d", total, rows)
	}
	if _, err := st.allergies(ctx, "0101000000"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown cpr: err = %v, want ErrNotFound", err)
	}

	// Same marker: reused. Different size: regenerated.
	if created, err := PrepareDB(ctx, path, 5, n); err != nil || created {
		t.Errorf("second PrepareDB: created=%v err=%v, want reuse", created, err)
	}
	if created, err := PrepareDB(ctx, path, 5, n+1); err != nil || !created {
		t.Errorf("PrepareDB with another size: created=%v err=%v, want regeneration", created, err)
	}
}

func TestDBRefusesForeignFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notDB := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notDB, []byte("important notes, not a database\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := PrepareDB(context.Background(), notDB, 1, 10); err == nil {
		t.Error("PrepareDB accepted a text file")
	}
	got, _ := os.ReadFile(notDB)
	if !strings.HasPrefix(string(got), "important notes") {
		t.Error("PrepareDB overwrote a file that was not its own")
	}

	// A SQLite database without the marker is somebody else's too.
	other := filepath.Join(dir, "other.db")
	src, _ := dsn(other, "")
	db, err := sql.Open("sqlite", src)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = PrepareDB(context.Background(), other, 1, 10)
	if err == nil || !strings.Contains(err.Error(), "not a plateau demo database") {
		t.Errorf("foreign SQLite file: err = %v", err)
	}
	if _, err := PrepareDB(context.Background(), filepath.Join(dir, "x.db"), 1, 0); err == nil {
		t.Error("zero patients accepted")
	}
}

// TestDBGenerationTime generates the reference-sized database and reports
// how long it took; the bound is loose because the machine is shared.
func TestDBGenerationTime(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("generates 50,000 patients; slow under -race")
	}
	path := filepath.Join(t.TempDir(), "cave.db")
	start := time.Now()
	created, err := PrepareDB(context.Background(), path, DefaultSeed, DefaultPatients)
	took := time.Since(start)
	if err != nil || !created {
		t.Fatalf("created=%v err=%v", created, err)
	}
	st, _ := os.Stat(path)
	t.Logf("generated %d patients in %v (%.1f MB)", DefaultPatients, took.Round(time.Millisecond), float64(st.Size())/1e6)
	if took > 20*time.Second {
		t.Errorf("generation took %v, want a few seconds", took)
	}
	start = time.Now()
	if created, err := PrepareDB(context.Background(), path, DefaultSeed, DefaultPatients); err != nil || created {
		t.Fatalf("reuse: created=%v err=%v", created, err)
	}
	t.Logf("reuse check took %v", time.Since(start).Round(time.Microsecond))
}

// BenchmarkBackRead measures the back's read path: one indexed SQL read and
// the JSON encoding of its answer, without HTTP.
func BenchmarkBackRead(b *testing.B) {
	path := filepath.Join(b.TempDir(), "cave.db")
	const n = 20000
	if _, err := PrepareDB(context.Background(), path, DefaultSeed, n); err != nil {
		b.Fatal(err)
	}
	st, err := openStore(path, 4)
	if err != nil {
		b.Fatal(err)
	}
	defer st.close()
	cprs := CPRs(DefaultSeed, n)
	ctx := context.Background()
	enc := json.NewEncoder(io.Discard)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		list, err := st.allergies(ctx, cprs[i%n])
		if err != nil {
			b.Fatal(err)
		}
		if err := enc.Encode(list); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
