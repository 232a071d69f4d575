package executor

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

// The followed import reports k6's start as it reads the first vus row
// (Spec.Start): Started then gives the time the file itself gives, does
// not read the file while that import is still reading it, and reads the
// file once the import has ended without finding one. The CSV is a real
// k6 v1.8.1 run (internal/importer/k6/testdata/k6-v1.8.1-csv).
func TestK6StartFromTheImport(t *testing.T) {
	t.Parallel()
	f, err := os.Open("../importer/k6/testdata/k6-v1.8.1-csv/out.csv.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	csv, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(csv, []byte("\nvus,")) {
		t.Fatal("the fixture holds no vus row")
	}
	out := t.TempDir()
	if err := os.WriteFile(filepath.Join(out, K6Results), csv, 0o644); err != nil {
		t.Fatal(err)
	}
	want, ok := (k6{}).Started(out, Declared{})
	if !ok {
		t.Fatal("no start in the file")
	}

	spec := &Spec{Start: &StartSeen{}}
	done := make(chan struct{})
	src := (k6{}).Source(spec, out, done)
	d := Declared{seen: spec.Start}
	if got, ok := (k6{}).Started(out, d); ok {
		t.Fatalf("the file was read while the import follows it: %v", got)
	}
	close(done)
	run, err := importer.NewRun(importer.Options{Dir: filepath.Join(t.TempDir(), "run")})
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Import(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	run.Close()
	// Not the file's: it is gone.
	if err := os.Remove(filepath.Join(out, K6Results)); err != nil {
		t.Fatal(err)
	}
	if got, ok := (k6{}).Started(out, d); !ok || !got.Equal(want) {
		t.Fatalf("from the import: %v %v, want %v (the file's)", got, ok, want)
	}

	// An import that ended without a vus row: the file is read.
	if err := os.WriteFile(filepath.Join(out, K6Results), csv, 0o644); err != nil {
		t.Fatal(err)
	}
	ended := &StartSeen{}
	ended.state(true, false)
	ended.state(false, true)
	if got, ok := (k6{}).Started(out, Declared{seen: ended}); !ok || !got.Equal(want) {
		t.Fatalf("after the import: %v %v, want %v", got, ok, want)
	}
}
