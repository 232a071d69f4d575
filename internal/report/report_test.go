package report

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixedNow stamps reports deterministically.
func fixedNow() time.Time { return time.Date(2025, 5, 14, 9, 0, 0, 0, time.UTC) }

// golden compares got with testdata/name, or rewrites it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; diff it or run go test -update after checking:\n%s", name, firstDiff(got, want))
	}
}

func firstDiff(got, want []byte) string {
	gl, wl := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w []byte
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if !bytes.Equal(g, w) {
			return "line " + itoa(i+1) + ":\n got: " + string(g) + "\nwant: " + string(w)
		}
	}
	return "(lengths differ)"
}

func itoa(i int) string { return string(append([]byte(nil), []byte(fmtInt(i))...)) }

func fmtInt(i int) string { return count(int64(i)) }

func TestGolden(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Monitor: true}); err != nil {
		t.Fatal(err)
	}
	sum, err := Generate(dir, Options{Now: fixedNow, Formats: []string{"json", "md", "junit"}})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Passed {
		t.Errorf("the fixture breaks its SLA in step 3, but the summary says passed")
	}
	for _, f := range []string{"summary.json", "report.md", "junit.xml"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		golden(t, "golden-"+f, bytes.ReplaceAll(b, []byte(dir), []byte("RUNDIR")))
	}
}
