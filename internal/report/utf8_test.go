package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestNonUTF8LabelEscaped: a request name in Latin-1 (as an old JTL may
// hold it) is shown with its byte escaped, in every format alike, and the
// report says why once — never as U+FFFD or mojibake.
func TestNonUTF8LabelEscaped(t *testing.T) {
	dir := t.TempDir()
	start := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	end := start.Add(20 * time.Second)
	info := &rundir.Info{Tool: "plateau", Version: "test", Name: "latin1", Start: start, End: &end, Status: rundir.StatusImported,
		Workloads: []rundir.WorkloadInfo{{Name: "jmeter", Model: "imported", Shape: "as recorded"}}}
	w, err := rundir.Create(dir, info, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		a := metrics.NewAgg()
		a.AddValue(int64(20000 + 1000*i))
		r, err := rundir.RecordOf(start.Unix()+int64(i), metrics.Key{Workload: "jmeter", Phase: -1, Label: []string{"GET /caf\xe9", "GET /ok"}[i%2]}, a)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteRecord(&r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, Options{Formats: []string{"json", "md"}}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "report.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if !utf8.ValidString(s) || strings.ContainsRune(s, utf8.RuneError) {
			t.Errorf("%s holds invalid UTF-8 or U+FFFD", f)
		}
		// Both JSON and Markdown escape the backslash itself: the reader
		// sees GET /caf\xe9.
		want := `GET /caf\\xe9`
		if !strings.Contains(s, want) {
			t.Errorf("%s does not show the name escaped (%s)", f, want)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if n := strings.Count(string(md), "not UTF-8"); n != 1 {
		t.Errorf("report.md says %d times that a name is not UTF-8, want once", n)
	}
}
