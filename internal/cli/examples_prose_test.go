package cli

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// checkRunProse renders the report of the run directory dir (Markdown,
// HTML and summary.json, beside what the run wrote) and rejects every
// sentence with a defect of reporttest.ProseRules, a number summary.json
// or its own table does not hold, or a claim run.json's holds forbid
// (reporttest.RunDefects: the prose grid of internal/report, applied to a
// real run).
func checkRunProse(t *testing.T, dir string) {
	t.Helper()
	if _, err := report.Write(dir, report.Options{Formats: []string{"md", "json", "html"}}); err != nil {
		t.Fatalf("report of %s: %v", dir, err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(reporttest.Sentences(string(md))); n < 10 {
		t.Errorf("%s: only %d sentences of prose", dir, n)
	}
	defects, err := reporttest.RunDefects(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range defects {
		t.Errorf("%s: %s", filepath.Base(dir), d)
	}
}

// checkRunsProse checks every run directory under root (a demo's or a
// study's output holds several).
func checkRunsProse(t *testing.T, root string) int {
	t.Helper()
	var dirs []string
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "run.json" {
			dirs = append(dirs, filepath.Dir(p))
		}
		return nil
	})
	sort.Strings(dirs)
	for _, d := range dirs {
		checkRunProse(t, d)
	}
	return len(dirs)
}

// proseCovered names, for every example plan, the test that runs it
// (shortened) against the bundled demo services or a loopback server and
// checks its report's prose with checkRunProse.
var proseCovered = map[string]string{
	"lar-cave":             "TestDemoEndToEnd",          // plateau demo (000) runs it against the demo stack
	"plan-constructs":      "TestPlanConstructsExample", // against the demo stack, in-process
	"grpc-echo":            "TestGRPCEchoExample",       // against the gRPC test server
	"websocket-chat":       "TestWebSocketChatExample",  // against the chat server
	"school-data":          "TestExampleSchoolData",     // against PostgreSQL with generated data
	"folio-circulation":    "TestStudyDemosInChromium",  // plateau demo 001 runs it against the bundled FOLIO-like services
	"concurrency-sweep":    "TestStudyDemosInChromium",  // plateau demo 003, against the bundled ServiceComb-like services
	"concurrent-workloads": "TestStudyDemosInChromium",  // plateau demo 004, against the bundled circulation and import services
}

// Every example plan's report is checked sentence by sentence by the test
// that runs it: a new example without such a test fails here.
func TestEveryExampleIsProseChecked(t *testing.T) {
	t.Parallel()
	dirs, err := filepath.Glob("../../examples/*/plan.yaml")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no examples (%v)", err)
	}
	src := map[string]string{}
	files, _ := filepath.Glob("*_test.go")
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src[f] = string(b)
	}
	for _, p := range dirs {
		ex := filepath.Base(filepath.Dir(p))
		name, ok := proseCovered[ex]
		if !ok {
			t.Errorf("examples/%s: no test runs it and checks its report's prose (add one and list it in proseCovered)", ex)
			continue
		}
		found := false
		for _, body := range src {
			i := strings.Index(body, "func "+name+"(")
			if i < 0 {
				continue
			}
			end := strings.Index(body[i+1:], "\nfunc ")
			if end < 0 {
				end = len(body) - i - 1
			}
			fn := body[i : i+1+end]
			found = strings.Contains(fn, "checkRunProse(") || strings.Contains(fn, "checkRunsProse(")
		}
		if !found {
			t.Errorf("examples/%s: %s does not check its report's prose (checkRunProse)", ex, name)
		}
	}
}
