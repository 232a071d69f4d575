package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// Issue 31: a real JMeter JTL of 800 samples with a row stamped 1970, one
// stamped 2100 and one with an elapsed of 10¹⁵ ms. The import leaves the
// three out and says so; the report carries the note and draws every
// chart line in at most its buckets (before: 3 GB, then out of memory).
func TestImplausibleRowsImportAndReport(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile("../importer/jtl/testdata/jmeter-5.6.3/results.jtl")
	if err != nil {
		t.Fatal(err)
	}
	const tail = ",GET /cart,200,OK,users 1-1,text,true,,139,117,2,2,http://127.0.0.1:18089/cart,131,0,73\n"
	lines := strings.SplitAfter(string(b), "\n")
	bad := []string{"0,147" + tail, "4102444800000,147" + tail, "1795307669713,1000000000000000" + tail}
	out := append([]string{}, lines[:200]...)
	out = append(out, bad[0])
	out = append(out, lines[200:400]...)
	out = append(out, bad[1])
	out = append(out, lines[400:600]...)
	out = append(out, bad[2])
	out = append(out, lines[600:]...)
	jtl := filepath.Join(dir, "bad-rows.jtl")
	if err := os.WriteFile(jtl, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	code, _, errOut := runCLI(t, "import", "jmeter", jtl, "-o", run)
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	for _, w := range []string{"800 samples", "3 implausible samples or readings left out"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("import's output lacks %q:\n%s", w, errOut)
		}
	}
	if code, _, errOut := runCLI(t, "report", run, "--format", "md"); code != 0 {
		t.Fatalf("report: %d %s", code, errOut)
	}
	md, err := os.ReadFile(filepath.Join(run, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "3 implausible requests left out") {
		t.Errorf("the report does not name the rows left out")
	}
	svgs, _ := filepath.Glob(filepath.Join(run, "charts", "*.svg"))
	if len(svgs) == 0 {
		t.Fatal("no charts")
	}
	pair := regexp.MustCompile(`-?[0-9.]+[ ,]-?[0-9.]+`)
	path := regexp.MustCompile(`<(?:polyline|path)[^>]*\b(?:points|d)="([^"]*)"`)
	for _, f := range svgs {
		s, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range path.FindAllStringSubmatch(string(s), -1) {
			if n := len(pair.FindAllString(m[1], -1)); n > 802 {
				t.Errorf("%s: a line of %d points", filepath.Base(f), n)
			}
		}
	}
}

// A row stamped 2001 among the 800 of 2026 passes the plausible window but
// lies years from the rest: the import is made again without it, the run
// spans the 800 only, and the note says so.
func TestFarRowImportedAgainWithout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile("../importer/jtl/testdata/jmeter-5.6.3/results.jtl")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	row := "978307200000,147,GET /cart,200,OK,users 1-1,text,true,,139,117,2,2,http://127.0.0.1:18089/cart,131,0,73\n"
	out := append(append(append([]string{}, lines[:300]...), row), lines[300:]...)
	jtl := filepath.Join(dir, "far.jtl")
	if err := os.WriteFile(jtl, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	clean := filepath.Join(dir, "clean")
	if code, _, errOut := runCLI(t, "import", "jmeter", "../importer/jtl/testdata/jmeter-5.6.3/results.jtl", "-o", clean); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	run := filepath.Join(dir, "run")
	code, _, errOut := runCLI(t, "import", "jmeter", jtl, "-o", run)
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	if !strings.Contains(errOut, "1 request lies far from the bulk of the data") || !strings.Contains(errOut, "800 samples") {
		t.Errorf("import's output:\n%s", errOut)
	}
	got, err := rundir.ReadInfo(run)
	if err != nil {
		t.Fatal(err)
	}
	want, err := rundir.ReadInfo(clean)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(want.Start) || !got.End.Equal(*want.End) {
		t.Errorf("run span %s – %s, want the 800 rows' %s – %s", got.Start, got.End, want.Start, want.End)
	}
	note := ""
	for _, n := range got.Notes {
		if strings.Contains(n, "far from the bulk") {
			note = n
		}
	}
	if !strings.Contains(note, "1 request far from the bulk of the data left out") {
		t.Errorf("notes %q lack the far request", got.Notes)
	}
}
