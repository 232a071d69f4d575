package report

import (
	"encoding/json"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// writtenFiles lists every file the report wrote in dir (everything but
// the run's own inputs).
func writtenFiles(t *testing.T, dir string) []string {
	t.Helper()
	inputs := map[string]bool{rundir.PlanFile: true, rundir.InfoFile: true, rundir.IntervalsFile: true, rundir.SamplesFile: true}
	var out []string
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			if rel == rundir.MonitorDir {
				return filepath.SkipDir
			}
			return nil
		}
		if !inputs[rel] {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestSecretsNeverReachAnOutput(t *testing.T) {
	t.Parallel()
	const token = "sk-PLANTED-7f3a9c21e5"
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Secret: token, Monitor: true}); err != nil {
		t.Fatal(err)
	}
	// The token must really be in the inputs, or the test proves nothing.
	for _, f := range []string{rundir.PlanFile, rundir.IntervalsFile} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), token) {
			t.Fatalf("fixture does not plant the token in %s", f)
		}
	}
	if _, err := Generate(dir, Options{Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	files := writtenFiles(t, dir)
	if len(files) < 5 {
		t.Fatalf("expected summary.json, report.html, report.md, junit.xml and charts; got %v", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range []string{token, "PLANTED-7f3a9c21e5", "7f3a9c21e5"} {
			if strings.Contains(string(b), form) {
				t.Errorf("%s contains the secret (%q)", filepath.Base(f), form)
			}
		}
	}
	// The places the token was planted still show, masked.
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{"Authorization: '***'", "token: '***'", "?token=\\*\\*\\*", "Authorization: \\*\\*\\*"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks the masked form %q", want)
		}
	}
}

func TestRedactor(t *testing.T) {
	t.Parallel()
	r := NewRedactor([]string{"token", "X-Tenant-Key"}, []string{"hunter2-long"})
	for _, tc := range []struct{ name, in, want string }{
		{"header", "Authorization: Bearer abc.def", "Authorization: ***"},
		{"cookie", "sent Cookie: sid=1; theme=dark", "sent Cookie: ***"},
		{"set-cookie", "Set-Cookie: sid=2", "Set-Cookie: ***"},
		{"query", "GET /x?token=abc&page=2", "GET /x?token=***&page=2"},
		{"custom header", "x-tenant-key: zzz", "x-tenant-key: ***"},
		{"json", `{"token":"abc","n":1}`, `{"token":"***","n":1}`},
		{"bearer anywhere", "rejected Bearer eyJhbGciOi", "rejected Bearer ***"},
		{"literal value", "password was hunter2-long!", "password was ***!"},
		{"no secret", "GET /tokens/list 200", "GET /tokens/list 200"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := r.String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestRedactPlan(t *testing.T) {
	t.Parallel()
	src := "name: x\nhttp:\n  headers:\n    Authorization: Basic dXNlcjpwYXNz\n    Accept: text/html\nvars:\n  api_key: k-123456\n  user: bob\n" +
		"workloads:\n  w:\n    scenario:\n      - request:\n          url: /a\n          headers:\n            - {name: Cookie, value: \"sid=${sid}\"}\n"
	out, found := RedactPlan([]byte(src), []string{"api_key"})
	for _, secret := range []string{"dXNlcjpwYXNz", "k-123456", "sid=${sid}"} {
		if strings.Contains(out, secret) {
			t.Errorf("masked plan still holds %q:\n%s", secret, out)
		}
	}
	for _, keep := range []string{"Accept: text/html", "user: bob", "url: /a"} {
		if !strings.Contains(out, keep) {
			t.Errorf("masked plan lost %q:\n%s", keep, out)
		}
	}
	if strings.Join(found, ",") != "dXNlcjpwYXNz,k-123456,sid=" && len(found) < 2 {
		t.Errorf("found secrets %q", found)
	}
}

func TestKilledRunReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Killed: true}); err != nil {
		t.Fatal(err)
	}
	sum, err := Generate(dir, Options{Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Status != rundir.StatusRunning {
		t.Errorf("status %q, want running", sum.Status)
	}
	last := sum.Phases[len(sum.Phases)-1]
	if !last.End.After(last.Start) || last.Labels[len(last.Labels)-1].Samples == 0 {
		t.Errorf("open last phase not closed at the last record: %+v", last)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "did not finish") || !strings.Contains(string(md), "still open") {
		t.Errorf("report.md does not say the run did not finish")
	}
}

func TestNoMonitorNoBaselineSayWhy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir, Options{Now: fixedNow, Formats: []string{"md"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reports) != 1 || filepath.Base(res.Reports[0]) != "report.md" {
		t.Fatalf("reports %v, want report.md only", res.Reports)
	}
	md, _ := os.ReadFile(res.Reports[0])
	for _, want := range []string{"No monitor data", "No comparison: no baseline", "No latency drift analysis"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks the one-line statement %q", want)
		}
	}
	for _, id := range SectionIDs {
		if !strings.Contains(string(md), `<a id="`+id+`"></a>`) {
			t.Errorf("section %s missing", id)
		}
	}
}

func TestBaselineComparison(t *testing.T) {
	t.Parallel()
	base, cand := t.TempDir(), t.TempDir()
	steps := []reporttest.Step{{Users: 8, Seconds: 120, RampUpS: 5}}
	if err := reporttest.Write(base, reporttest.Options{Steps: steps, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	if err := reporttest.Write(cand, reporttest.Options{Steps: steps, Seed: 4, SlowerPct: 25}); err != nil {
		t.Fatal(err)
	}
	sum, err := Generate(cand, Options{Now: fixedNow, Baseline: base, Formats: []string{"json"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := sum.Comparison
	if len(rows) == 0 {
		t.Fatal("no comparison rows")
	}
	var total *compare.Row
	for i := range rows {
		if rows[i].Label == core.TotalLabel && rows[i].Phase == "run" {
			total = &rows[i]
		}
	}
	if total == nil {
		t.Fatal("no all-requests row")
	}
	if total.Verdict != "slower" || !total.Significant || total.DeltaPct < 15 || total.DeltaPct > 35 {
		t.Errorf("a planted 25 %% slowdown reads as %+v", *total)
	}
	b, _ := os.ReadFile(filepath.Join(cand, "summary.json"))
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if c, ok := m["comparison"].([]any); !ok || len(c) != len(rows) {
		t.Errorf("summary.json comparison: %v", m["comparison"])
	}
}

func TestParseFormats(t *testing.T) {
	t.Parallel()
	got, err := ParseFormats([]string{"md,HTML", "junit"})
	if err != nil || strings.Join(got, ",") != "html,md,junit" {
		t.Errorf("ParseFormats = %v, %v", got, err)
	}
	if _, err := ParseFormats([]string{"pdf"}); err == nil || !strings.Contains(err.Error(), "pdf") {
		t.Errorf("unknown format accepted: %v", err)
	}
	if all, _ := ParseFormats(nil); len(all) != len(Formats) {
		t.Errorf("default formats %v", all)
	}
}
