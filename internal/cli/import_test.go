package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
)

// TestImportSetGivenFileByFile: the stats, history and failures files of one
// Locust run given as three inputs are one run, counted once (issue 13
// item 2: it was imported three times, without a warning).
func TestImportSetGivenFileByFile(t *testing.T) {
	t.Parallel()
	fx := "../importer/locust/testdata/locust-2.47.0/run"
	once := filepath.Join(t.TempDir(), "once")
	if code, _, errOut := runCLI(t, "import", "locust", fx+"_stats.csv", "-o", once); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	thrice := filepath.Join(t.TempDir(), "thrice")
	code, _, errOut := runCLI(t, "import", "locust", fx+"_stats.csv", fx+"_stats_history.csv", fx+"_failures.csv", "-o", thrice)
	if code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	if !strings.Contains(errOut, "imported once") {
		t.Errorf("no word about the repeated set: %s", errOut)
	}
	a, err := analysis.Load(once)
	if err != nil {
		t.Fatal(err)
	}
	b, err := analysis.Load(thrice)
	if err != nil {
		t.Fatal(err)
	}
	if a.Total.Count == 0 || b.Total.Count != a.Total.Count || b.Total.Errors != a.Total.Errors {
		t.Errorf("file by file: %d requests %d failed; as one set %d %d", b.Total.Count, b.Total.Errors, a.Total.Count, a.Total.Errors)
	}
	// The same JTL twice is one input too.
	jtl := "../importer/jtl/testdata/jmeter-5.6.3/results.jtl"
	one, two := filepath.Join(t.TempDir(), "one"), filepath.Join(t.TempDir(), "two")
	if code, _, errOut := runCLI(t, "import", "jmeter", jtl, "-o", one); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, "import", "jmeter", jtl, "./"+jtl, "-o", two); code != 0 {
		t.Fatalf("import: %d %s", code, errOut)
	}
	a, _ = analysis.Load(one)
	b, _ = analysis.Load(two)
	if a == nil || b == nil || a.Total.Count == 0 || a.Total.Count != b.Total.Count {
		t.Errorf("one JTL given twice was not imported once")
	}
}

// TestFailedImportKeepsLog: an import that fails leaves no run directory
// but keeps its problem log beside it and prints the malformed lines (issue
// 13 item 4: import.log was deleted with the directory).
func TestFailedImportKeepsLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	jtl := filepath.Join(dir, "r.jtl")
	text := "timeStamp,elapsed,label,responseCode,success\n1777629600000,10,a,200,true\nnot-a-time,10,a,200,true\n1777629600000,x,a,200,true\n"
	if err := os.WriteFile(jtl, []byte(strings.ReplaceAll(text, "1777629600000,10", "1777629600000,-")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, _, errOut := runCLI(t, "import", "jmeter", jtl, "-o", out)
	if code == 0 {
		t.Fatalf("import of a file without one good line succeeded: %s", errOut)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("half-built run directory left behind")
	}
	log, err := os.ReadFile(out + ".import.log")
	if err != nil {
		t.Fatalf("no kept log: %v; stderr %s", err, errOut)
	}
	if !strings.Contains(string(log), "malformed") || !strings.Contains(errOut, "malformed") || !strings.Contains(errOut, out+".import.log") {
		t.Errorf("log %q, stderr %q", log, errOut)
	}
}
