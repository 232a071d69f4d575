package plan

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// messyCSV writes rows that exercise the CSV reader: quoted delimiters,
// doubled quotes, newlines inside quotes, CRLF and bare LF line ends,
// blank lines, a byte-order mark.
func messyCSV(t *testing.T, path string, rows int, header bool) {
	t.Helper()
	rng := rand.New(rand.NewPCG(31, uint64(rows)))
	var b strings.Builder
	if header {
		b.WriteString("\uFEFFid,name,note\r\n")
	}
	for i := range rows {
		note := fmt.Sprintf("n%d", i)
		switch rng.IntN(6) {
		case 0:
			note = `"a, b"`
		case 1:
			note = `"she said ""hi"""`
		case 2:
			note = "\"two\nlines\""
		case 3:
			note = ""
		}
		end := "\n"
		if rng.IntN(3) == 0 {
			end = "\r\n"
		}
		if rng.IntN(20) == 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%d,user %d,%s%s", i, i, note, end)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An indexed feeder gives exactly the rows the in-memory one holds, with
// and without a header row.
func TestIndexedFeederEqualsInMemory(t *testing.T) {
	t.Parallel()
	for _, header := range []bool{true, false} {
		path := filepath.Join(t.TempDir(), "d.csv")
		messyCSV(t, path, 3000, header)
		var declared []string
		if !header {
			declared = []string{"id", "name", "note"}
		}
		cols, rows, idx, ferr := readCSV(path, ',', declared, 0)
		if ferr != nil || idx != nil {
			t.Fatalf("in memory: %v, index %v", ferr, idx != nil)
		}
		icols, irows, idx, ferr := readCSV(path, ',', declared, 1)
		if ferr != nil || idx == nil || irows != nil {
			t.Fatalf("indexed: %v, index %v, rows %d", ferr, idx != nil, len(irows))
		}
		if !reflect.DeepEqual(cols, icols) || idx.Len() != int64(len(rows)) {
			t.Fatalf("columns %q / %q, %d / %d rows", cols, icols, len(rows), idx.Len())
		}
		f := &Feeder{Index: idx}
		for i := range rows {
			got, err := f.Row(int64(i))
			if err != nil || !reflect.DeepEqual(got, rows[i]) {
				t.Fatalf("header %v row %d: %q, %v; want %q", header, i, got, err, rows[i])
			}
		}
	}
}

// A plan loaded with a small in-memory bound indexes its CSV feeder and
// still reports a bad row at its line.
func TestIndexedFeederThroughParse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	messyCSV(t, filepath.Join(dir, "d.csv"), 500, true)
	p, err := Parse("f.yaml", []byte(feederPlan("d.csv", ", order: random")), dir, Options{FeederInMemory: 1024})
	if err != nil {
		t.Fatal(err)
	}
	if f := p.Data["d"]; f.Index == nil || f.Rows != nil || f.Len() != 500 {
		t.Fatalf("index %v, rows %d, len %d", f.Index != nil, len(f.Rows), f.Len())
	}
	bad := "id,name\n1,a\n2,b,c\n"
	if err := os.WriteFile(filepath.Join(dir, "bad.csv"), []byte(bad+strings.Repeat("3,c\n", 1000)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Parse("f.yaml", []byte(feederPlan("bad.csv", "")), dir, Options{FeederInMemory: 1024})
	if err == nil || !strings.Contains(err.Error(), "bad.csv:3:") {
		t.Fatalf("a bad row of an indexed CSV: %v, want bad.csv:3:…", err)
	}
}

// A line longer than MaxLineBytes stops the read at that line, in memory
// and indexed.
func TestFeederLineBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := "id\n1\n" + strings.Repeat("x", MaxLineBytes+10) + "\n2\n"
	if err := os.WriteFile(filepath.Join(dir, "long.csv"), []byte(long), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, inMem := range []int64{0, 1} {
		_, err := Parse("f.yaml", []byte(feederPlan("long.csv", "")), dir, Options{FeederInMemory: inMem})
		if err == nil || !strings.Contains(err.Error(), "long.csv:3:1: line longer than 1 MiB") {
			t.Errorf("in memory up to %d: %v", inMem, err)
		}
	}
}
