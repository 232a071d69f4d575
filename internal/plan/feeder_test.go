package plan

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func feederPlan(csv string, extra string) string {
	return fmt.Sprintf(`name: f
target: http://127.0.0.1:9
data:
  d: {csv: %s%s}
workloads:
  w:
    scenario: [{request: {url: "/x/${d.id}"}}]
    load: {users: 1, iterations: 1}
`, csv, extra)
}

// TestFeeder50k: 50,000 rows is a normal feeder: every row loads, in order.
func TestFeeder50k(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const rows = 50000
	var b strings.Builder
	b.WriteString("id,name,email\n")
	for i := range rows {
		fmt.Fprintf(&b, "%010d,user %d,u%d@example.com\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "big.csv"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p, err := Parse("f.yaml", []byte(feederPlan("big.csv", "")), dir, Options{})
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	f := p.Data["d"]
	if len(f.Rows) != rows || f.Rows[rows-1][0] != fmt.Sprintf("%010d", rows-1) || len(f.Columns) != 3 {
		t.Errorf("rows %d, last %v, columns %v", len(f.Rows), f.Rows[len(f.Rows)-1], f.Columns)
	}
	// Every row is distinct, so a unique feeder really has 50,000 values.
	seen := make(map[string]bool, rows)
	for _, r := range f.Rows {
		seen[r[0]] = true
	}
	if len(seen) != rows {
		t.Errorf("%d distinct ids, want %d", len(seen), rows)
	}
	t.Logf("50,000-row CSV loaded in %v (speed is BenchmarkFeeder200MB's; a timed test fails under load)", took)
}

func TestFeederErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, content, extra, want string }{
		{"empty", "", "", "e.csv:1:1: empty file; the first row must name the columns"},
		{"header only", "id\n", "", "e.csv:1:1: no data rows after the header"},
		{"duplicate column", "id,id\n1,2\n", "", `e.csv:1:1: header names column "id" twice (columns 1 and 2)`},
		{"empty column", "id,\n1,2\n", "", "e.csv:1:1: header column 2 is empty"},
		{"ragged row", "id,name\n1,a\n2\n3,c\n", "", `e.csv:3:1: wrong number of fields (data "d")`},
		{"bad quote", "id\n\"1\n", "", `e.csv:2:4: extraneous or missing " in quoted-field`},
		{"bad delimiter", "id\n1\n", ", delimiter: ab", `f.yaml:4:30: data "d": delimiter must be one character`},
		{"bad order", "id\n1\n", ", order: once", `f.yaml:4:26: data "d": order "once" is not sequential, random, unique, per_user or each_user`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "e.csv"), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Parse("f.yaml", []byte(feederPlan("e.csv", c.extra)), dir, Options{})
			want := c.want
			if strings.HasPrefix(want, "e.csv") {
				want = filepath.Join(dir, want)
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v\nwant %q", err, want)
			}
		})
	}
}

func TestFeederFormats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// A spreadsheet export: byte-order mark, CRLF, semicolons, quoted field.
	content := "\uFEFFid;note\r\n1;\"a;b\"\r\n2;c\r\n"
	if err := os.WriteFile(filepath.Join(dir, "x.csv"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Parse("f.yaml", []byte(feederPlan("x.csv", `, delimiter: ";", order: unique, on_exhausted: recycle`)), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := p.Data["d"]
	if f.Columns[0] != "id" || len(f.Rows) != 2 || f.Rows[0][1] != "a;b" || f.OnExhausted != ExhaustedRecycle || f.Order != OrderUnique {
		t.Errorf("feeder: %+v", f)
	}
	abs := filepath.Join(dir, "x.csv")
	if _, err := Parse("f.yaml", []byte(feederPlan(strconv.Quote(abs), `, delimiter: ";"`)), "/nonexistent", Options{}); err != nil {
		t.Errorf("absolute csv path: %v", err)
	}
}

func TestJSONFeederErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ name, file, content, kind, extra, want string }{
		{"not an array", "e.json", `{"a":1}`, "json", "", "e.json:1:1: expected a JSON array of objects"},
		{"not an object", "e.json", "[{\"a\":1},\n 2]", "json", "", "e.json:2:2: expected a JSON object"},
		{"bad json", "e.json", "[{\"a\":1},\n {\"a\":}]", "json", "", "e.json:2:"},
		{"ndjson bad line", "e.ndjson", "{\"a\":1}\n{\"a\":\n", "ndjson", "", "e.ndjson:2:1: bad JSON"},
		{"empty", "e.ndjson", "\n", "ndjson", "", "e.ndjson:1:1: no data rows"},
		{"columns on json", "e.json", `[{"a":1}]`, "json", ", columns: [a]", "columns applies to a headerless csv"},
		{"ragged headerless", "e.csv", "1,2\n3\n", "csv", ", columns: [a, b]", "e.csv:2:1: wrong number of fields"},
		{"bad on_end", "e.csv", "a\n1\n", "csv", ", on_end: wrap", `on_end "wrap" is not recycle, stop_user or stop_run`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			src := strings.Replace(feederPlan(c.file, c.extra), "csv: "+c.file, c.kind+": "+c.file, 1)
			_, err := Parse("f.yaml", []byte(src), dir, Options{})
			want := c.want
			if strings.HasPrefix(want, "e.") {
				want = filepath.Join(dir, want)
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("got %v\nwant %q", err, want)
			}
		})
	}
}

// extract as_json: read on a json extraction; on another source, or with
// all, an error at its key.
func TestExtractAsJSONKey(t *testing.T) {
	t.Parallel()
	plan := func(ex string) string {
		return "name: x\ntarget: http://x\nworkloads:\n  w:\n    scenario:\n      - request:\n          url: /a\n          extract:\n            v: " + ex + "\n    load: {users: 1, iterations: 1}\n"
	}
	p, err := Parse("f.yaml", []byte(plan("{json: $.a, as_json: true}")), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Workloads[0].Scenario[0].Request.Extract["v"].AsJSON {
		t.Error("as_json not read")
	}
	for ex, want := range map[string]string{
		"{regex: a, as_json: true}":             "f.yaml:9:27: extract: as_json applies to json",
		"{json: $.a, all: true, as_json: true}": "f.yaml:9:39: extract: give all or as_json, not both",
	} {
		_, err := Parse("f.yaml", []byte(plan(ex)), t.TempDir(), Options{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", ex, err, want)
		}
	}
}
