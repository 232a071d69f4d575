package k6

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// labelRows is the report's rows by label.
func labelRows(d *analysis.Dataset) map[string]core.LabelStats {
	out := map[string]core.LabelStats{}
	for _, r := range analysis.Summarize(d, nil).Labels {
		if r.Transaction {
			r.Label = "tx " + r.Label
		}
		out[r.Label] = r
	}
	return out
}

// sameFigures compares a CSV import with a JSON import of the same points:
// counts, failures, min, max, mean and percentiles equal (the same µs
// values), rates within rateTol (CSV times may be whole seconds).
func sameFigures(t *testing.T, csvRun, jsonRun *analysis.Dataset, rateTol float64) {
	t.Helper()
	c, j := labelRows(csvRun), labelRows(jsonRun)
	if len(c) != len(j) || len(c) < 2 {
		t.Fatalf("CSV labels %v, JSON labels %v", keys(c), keys(j))
	}
	for name, jr := range j {
		cr, ok := c[name]
		if !ok {
			t.Errorf("label %q only in the JSON import (CSV: %v)", name, keys(c))
			continue
		}
		for _, f := range []struct {
			what string
			a, b float64
		}{{"count", float64(cr.Samples), float64(jr.Samples)}, {"errors", float64(cr.Errors), float64(jr.Errors)},
			{"min", cr.MinMs, jr.MinMs}, {"max", cr.MaxMs, jr.MaxMs}, {"mean", cr.MeanMs, jr.MeanMs},
			{"p50", cr.P50Ms, jr.P50Ms}, {"p90", cr.P90Ms, jr.P90Ms}, {"p95", cr.P95Ms, jr.P95Ms}, {"p99", cr.P99Ms, jr.P99Ms}} {
			if f.a != f.b {
				t.Errorf("%s %s: CSV %v, JSON %v", name, f.what, f.a, f.b)
			}
		}
		if math.Abs(cr.ThroughputRPS-jr.ThroughputRPS) > rateTol*jr.ThroughputRPS+0.0005 {
			t.Errorf("%s rate: CSV %v, JSON %v", name, cr.ThroughputRPS, jr.ThroughputRPS)
		}
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestPublicCSVEqualsJSON(t *testing.T) {
	t.Parallel()
	const fx = "testdata/public-finance"
	dir := filepath.Join(t.TempDir(), "csv")
	c, err := importStream(t, Config{Path: filepath.Join(fx, "k6-results.csv.gz")}, importer.Options{Dir: dir, DerivePhases: true, MinPhase: 10e9})
	if err != nil {
		t.Fatal(err)
	}
	j, err := importStream(t, Config{Path: filepath.Join(fx, "k6-results.json.gz")}, importer.Options{DerivePhases: true, MinPhase: 10e9})
	if err != nil {
		t.Fatal(err)
	}
	sameFigures(t, c, j, 0.01)
	if n := c.Total.Count; n != 60 {
		t.Errorf("%d requests, the run made 60", n)
	}
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		t.Fatal(err)
	}
	var whole, iters bool
	for _, n := range info.Notes {
		whole = whole || strings.Contains(n, "whole seconds")
		iters = iters || strings.Contains(n, "20 iterations")
	}
	if !whole || !iters {
		t.Errorf("notes lack the whole-second times or the iterations: %q", info.Notes)
	}
	if len(c.Phases) != 1 || c.Phases[0].Users != 1 {
		t.Errorf("phases %+v, want one of 1 user", c.Phases)
	}
}

// TestCSVRows: the time formats, quoted fields, failures and malformed
// rows of hand-written CSV.
func TestCSVRows(t *testing.T) {
	t.Parallel()
	const header = "metric_name,timestamp,metric_value,check,error,error_code,expected_response,group,method,name,proto,scenario,service,status,subproto,tls_version,url,extra_tags,metadata\n"
	body := header +
		"http_req_duration,1700000000,12.500000,,,,true,,GET,http://127.0.0.1:8080/items/17,HTTP/1.1,default,,200,,,http://127.0.0.1:8080/items/17,,\n" +
		"http_req_duration,1700000000123,20.000000,,,,true,,GET,http://127.0.0.1:8080/items/18,HTTP/1.1,default,,200,,,http://127.0.0.1:8080/items/18,,\n" +
		"http_req_duration,1700000001123456,30.000000,,,,false,,POST,\"pay, now\",HTTP/1.1,default,,503,,,http://127.0.0.1:8080/pay,,\n" +
		"http_req_duration,2023-11-14T22:13:22.5Z,1.000000,,\"dial tcp 127.0.0.1:1: connect: connection refused\",1212,false,,GET,http://127.0.0.1:1/down,,default,,0,,,http://127.0.0.1:1/down,,\n" +
		"http_req_duration,yesterday,1.0,,,,true,,GET,x,,,,200,,,x,,\n" +
		"http_req_duration,1700000002,-1.0,,,,true,,GET,x,,,,200,,,x,,\n" +
		"http_req_duration,1700000002\n" +
		"group_duration,1700000002,40.000000,,,,,::shop,,,,default,,,,,,,\n" +
		"checks,1700000002,1.000000,status is 200,,,,,,,,default,,,,,,,\n" +
		"vus,1700000002,3.000000,,,,,,,,,,,,,,,,\n"
	p := filepath.Join(t.TempDir(), "out.csv")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	d, err := importStream(t, Config{Path: p}, importer.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rows := labelRows(d)
	for _, w := range []struct {
		label  string
		n, err int64
		mean   float64
	}{{"GET /items/{id}", 2, 0, 16.25}, {"POST pay, now", 1, 1, 30}, {"GET 127.0.0.1:1/down", 1, 1, 1}, {"tx ::shop", 1, 0, 40}, {"TOTAL", 4, 2, 15.875}} {
		r, ok := rows[w.label]
		if !ok {
			t.Errorf("no label %q: %v", w.label, keys(rows))
			continue
		}
		if r.Samples != w.n || r.Errors != w.err || math.Abs(r.MeanMs-w.mean) > 1e-9 {
			t.Errorf("%s: %d, %d errors, mean %v; want %d, %d, %v", w.label, r.Samples, r.Errors, r.MeanMs, w.n, w.err, w.mean)
		}
	}
	classes := map[string]int64{}
	for _, e := range d.Errors {
		classes[e.Class] += e.Count
	}
	if classes["refused"] != 1 || classes["http_5xx"] != 1 {
		t.Errorf("error classes %v", classes)
	}
	log, err := os.ReadFile(filepath.Join(dir, rundir.ImportLogFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{p + ":6", p + ":7", p + ":8", "3 malformed"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("import.log lacks %q:\n%s", w, log)
		}
	}
}

// TestCSVProblemLinesAcrossChunks: a malformed row is reported at its line
// of the file whichever chunk it falls in — the decoders number their
// chunk's lines themselves (importer.ParallelUncounted) — also after a
// quoted field that holds a line break, which makes one row of two lines.
func TestCSVProblemLinesAcrossChunks(t *testing.T) {
	t.Parallel()
	lines := strings.SplitAfter(string(gunzip(t, csvFixtures+"/out.csv.gz")), "\n")
	var dur []int // indexes of http_req_duration rows
	for i, l := range lines {
		if strings.HasPrefix(l, "http_req_duration,") {
			dur = append(dur, i)
		}
	}
	if len(dur) < 200 {
		t.Fatalf("%d request rows in the fixture", len(dur))
	}
	// A row whose error message k6 quoted over two lines, then damaged
	// rows after it: a value that is no number, a row cut short.
	quoted := strings.Replace(lines[dur[50]], ",,,,true,", ",,\"refused\nby peer\",1212,false,", 1)
	mod := append([]string(nil), lines[:dur[50]]...)
	mod = append(mod, quoted)
	mod = append(mod, lines[dur[50]+1:]...)
	var bad []int // 1-based file lines of the damaged rows
	for _, k := range []int{7, 120, 160, 199} {
		i := dur[k]
		f := strings.SplitN(mod[i], ",", 4)
		if k%2 == 0 {
			mod[i] = f[0] + "," + f[1] + ",x," + f[3]
		} else {
			mod[i] = f[0] + "," + f[1] + "\n"
		}
		line := i + 1
		if k > 50 {
			line++ // the quoted row's second line comes before
		}
		bad = append(bad, line)
	}
	p := filepath.Join(t.TempDir(), "out.csv")
	if err := os.WriteFile(p, []byte(strings.Join(mod, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, chunk := range []int{4096, 50000, 0} {
		dir := filepath.Join(t.TempDir(), "run")
		d, err := importStream(t, Config{Path: p, ChunkSize: chunk}, importer.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(len(dur) - len(bad)); d.Total.Count != want {
			t.Errorf("chunk %d: %d requests, want %d", chunk, d.Total.Count, want)
		}
		log, err := os.ReadFile(filepath.Join(dir, rundir.ImportLogFile))
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%d malformed lines", len(bad)); !strings.Contains(string(log), want) {
			t.Errorf("chunk %d: import.log lacks %q:\n%s", chunk, want, log)
		}
		for _, n := range bad {
			if want := p + ":" + strconv.Itoa(n) + ":"; !strings.Contains(string(log), want) {
				t.Errorf("chunk %d: import.log lacks %s:\n%s", chunk, want, log)
			}
		}
	}
}

// TestBatchReset: a batch reused for another chunk holds nothing of the
// chunk before (batches are pooled), whatever its fields.
func TestBatchReset(t *testing.T) {
	t.Parallel()
	b := &batch{recs: make([]importer.Rec, 3), vus: make([]vuPoint, 2), iters: make([]vuPoint, 4), next: 9,
		tally: tally{requests: 3, checks: map[string][2]int64{"c": {1, 0}}}}
	b.probs.Add(3, "bad", []byte("x"))
	b.reset()
	if !reflect.DeepEqual(*b, batch{recs: b.recs, vus: b.vus, iters: b.iters, probs: importer.ChunkProblems{First: b.probs.First}}) ||
		len(b.recs)+len(b.vus)+len(b.iters)+len(b.probs.First) != 0 {
		t.Errorf("after reset: %+v", *b)
	}
}
