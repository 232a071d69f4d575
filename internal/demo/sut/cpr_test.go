package sut

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite examples/lar-cave/cpr.csv")

func TestCPRs(t *testing.T) {
	t.Parallel()
	const n = 5000
	a := CPRs(DefaultSeed, n)
	if len(a) != n {
		t.Fatalf("got %d CPRs, want %d", len(a), n)
	}
	if !slices.Equal(a, CPRs(DefaultSeed, n)) {
		t.Error("same seed gave a different list")
	}
	if !slices.Equal(a[:100], CPRs(DefaultSeed, 100)) {
		t.Error("list for a smaller n is not a prefix")
	}
	if slices.Equal(a[:100], CPRs(DefaultSeed+1, 100)) {
		t.Error("different seeds gave the same list")
	}
	seen := map[string]bool{}
	for _, c := range a {
		if seen[c] {
			t.Fatalf("duplicate CPR %s", c)
		}
		seen[c] = true
		if !validCPR(c) {
			t.Fatalf("CPR %q is not 10 digits", c)
		}
		day, _ := strconv.Atoi(c[0:2])
		month, _ := strconv.Atoi(c[2:4])
		year, _ := strconv.Atoi(c[4:6])
		d := time.Date(2000+year, time.Month(month), day, 0, 0, 0, 0, time.UTC)
		if d.Day() != day || d.Month() != time.Month(month) {
			t.Fatalf("CPR %s: %02d-%02d is not a calendar date", c, day, month)
		}
		// Seventh digit 5–8 with year 37–57 means born 2037–2057: nobody alive.
		if c[6] < '5' || c[6] > '8' || year < 37 || year > 57 {
			t.Fatalf("CPR %s could belong to a living person", c)
		}
	}
	if CPRs(1, 0) != nil || CPRs(1, -3) != nil {
		t.Error("n ≤ 0 should give nil")
	}
}

func TestWriteCPRCSV(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteCPRCSV(&buf, 7, 250); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) != 251 || lines[0] != "cpr" {
		t.Fatalf("got %d lines starting %q, want header cpr + 250 rows", len(lines), lines[0])
	}
	if !slices.Equal(lines[1:], CPRs(7, 250)) {
		t.Error("rows differ from CPRs(7, 250)")
	}
}

// TestExampleCSV keeps the shipped feeder file in step with the generator;
// run with -update to rewrite it.
func TestExampleCSV(t *testing.T) {
	path := filepath.Join("..", "..", "..", "examples", "lar-cave", "cpr.csv")
	var want bytes.Buffer
	if err := WriteCPRCSV(&want, DefaultSeed, DefaultPatients); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, want.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		t.Skipf("%s not present; run with -update to write it", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("%s differs from WriteCPRCSV(DefaultSeed, DefaultPatients); run with -update", path)
	}
}
