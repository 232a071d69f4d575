package k6

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

const fixtures = "testdata/k6-v1.8.1"

func importStream(t *testing.T, cfg Config, opt importer.Options) (*analysis.Dataset, error) {
	t.Helper()
	return importertest.Import(t, opt, New(cfg))
}

// rawPoint is a Point line read with encoding/json into maps: the slow,
// obviously right reading the decoder is checked against.
type rawPoint struct {
	Metric string `json:"metric"`
	Type   string `json:"type"`
	Data   struct {
		Value float64           `json:"value"`
		Tags  map[string]string `json:"tags"`
	} `json:"data"`
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(strings.TrimSuffix(string(b), "\n"), "\n")
}

func oraclePoints(t *testing.T, lines []string, metric string) []rawPoint {
	t.Helper()
	var out []rawPoint
	for _, l := range lines {
		var p rawPoint
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			continue
		}
		if p.Type == "Point" && p.Metric == metric {
			out = append(out, p)
		}
	}
	return out
}

// k6Percentile is k6's TrendSink.P: position p·(n−1), linear interpolation.
func k6Percentile(sorted []float64, p float64) float64 {
	i := p / 100 * float64(len(sorted)-1)
	lo, hi := sorted[int(math.Floor(i))], sorted[int(math.Ceil(i))]
	return lo + (hi-lo)*(i-math.Floor(i))
}

func TestMatchesK6Summary(t *testing.T) {
	t.Parallel()
	path := filepath.Join(fixtures, "out.json.gz")
	dir := filepath.Join(t.TempDir(), "run")
	d, err := importStream(t, Config{Path: path, Summary: filepath.Join(fixtures, "summary.json")},
		importer.Options{Dir: dir, DerivePhases: true, MinPhase: 2e9})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ReadSummary(filepath.Join(fixtures, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstSummary(t, d, sum, readLines(t, path))
	var agrees bool
	for _, n := range d.Info.Notes {
		agrees = agrees || strings.Contains(n, "agrees with k6's summary")
	}
	if !agrees {
		t.Errorf("no agreement note: %q", d.Info.Notes)
	}
}

// checkAgainstSummary compares an imported stream with k6's summary of the
// same run and with the raw points.
func checkAgainstSummary(t *testing.T, d *analysis.Dataset, sum *Summary, lines []string) {
	t.Helper()
	dur := sum.Metrics["http_req_duration"]
	st := d.Total.Stats("", false, 0)
	if st.Samples != int64(dur["count"]) || st.Samples != int64(sum.Metrics["http_reqs"]["count"]) {
		t.Errorf("%d requests, k6 %v", st.Samples, dur["count"])
	}
	if st.Errors != int64(sum.Metrics["http_req_failed"]["passes"]) {
		t.Errorf("%d failed, k6 %v", st.Errors, sum.Metrics["http_req_failed"]["passes"])
	}
	// Times are kept in whole µs: min, max and mean within 0.5 µs.
	for _, c := range []struct {
		name      string
		ours, k6v float64
	}{{"min", st.MinMs, dur["min"]}, {"max", st.MaxMs, dur["max"]}, {"avg", d.Total.MeanMs(), dur["avg"]}} {
		if math.Abs(c.ours-c.k6v) > 0.0005+1e-9 {
			t.Errorf("%s %v, k6 %v", c.name, c.ours, c.k6v)
		}
	}
	points := oraclePoints(t, lines, "http_req_duration")
	var v []float64
	for _, p := range points {
		v = append(v, p.Data.Value)
	}
	sort.Float64s(v)
	for _, pc := range []struct {
		key string
		p   float64
	}{{"med", 50}, {"p(90)", 90}, {"p(95)", 95}, {"p(99)", 99}} {
		k6v, ok := dur[pc.key]
		if !ok {
			continue
		}
		if got := k6Percentile(v, pc.p); math.Abs(got-k6v) > 1e-9*math.Max(1, k6v) {
			t.Errorf("%s: oracle %v, k6 %v (definition misunderstood)", pc.key, got, k6v)
		}
		pos := pc.p / 100 * float64(len(v)-1)
		lo := v[max(0, int(math.Floor(pos))-1)]
		hi := v[min(len(v)-1, int(math.Ceil(pos))+1)]
		if ours := d.Total.QuantileMs(pc.p); ours < lo*0.999-0.001 || ours > hi*1.001+0.001 {
			t.Errorf("%s: ours %v outside [%v, %v] around k6's %v", pc.key, ours, lo, hi, k6v)
		}
	}

	// Per label: counts from the raw name tags.
	byName := map[string]int64{}
	var refused, http5 int64
	for _, p := range points {
		tags := p.Data.Tags
		byName[tags["method"]+" "+tags["name"]]++
		if tags["error_code"] == "1212" {
			refused++
		}
		if tags["status"] == "500" {
			http5++
		}
	}
	got := map[string]int64{}
	for k, a := range d.Run {
		if k.Tx {
			continue
		}
		got[k.Label] = a.Count
	}
	base := ""
	for n := range byName {
		if strings.HasSuffix(n, "/cart") {
			base = strings.TrimSuffix(strings.TrimPrefix(n, "GET "), "/cart")
		}
	}
	want := map[string]int64{}
	for n, c := range byName {
		n = strings.Replace(n, base, "", 1)
		n = strings.Replace(n, "http://", "", 1)
		want[n] += c
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("labels %v, want %v", got, want)
	}
	var gotRefused, got5 int64
	for _, e := range d.Errors {
		switch e.Class {
		case "refused":
			gotRefused += e.Count
		case "http_5xx":
			got5 += e.Count
		}
	}
	if gotRefused != refused || got5 != http5 || refused == 0 || http5 == 0 {
		t.Errorf("%d refused and %d 5xx, the stream has %d and %d", gotRefused, got5, refused, http5)
	}
	// Groups are transactions, counted like k6's group_duration.
	var tx int64
	for k, a := range d.Run {
		if k.Tx {
			tx += a.Count
			if k.Label != "::shop" {
				t.Errorf("transaction label %q", k.Label)
			}
		}
	}
	if tx != int64(sum.Metrics["group_duration"]["count"]) {
		t.Errorf("%d group samples, k6 %v", tx, sum.Metrics["group_duration"]["count"])
	}
	// Phases from the vus gauge: the 2-VU and the 4-VU steps.
	users := map[int]bool{}
	for _, p := range d.Phases {
		users[p.Users] = true
	}
	if !users[2] || !users[4] {
		t.Errorf("phases %+v, want steps of 2 and 4 users", d.Phases)
	}
	checks := sum.Metrics["checks"]
	wantNote := strconv.Itoa(int(checks["passes"])) + " passed, " + strconv.Itoa(int(checks["fails"])) + " failed"
	found := false
	for _, n := range d.Info.Notes {
		found = found || strings.Contains(n, wantNote)
	}
	if !found {
		t.Errorf("no checks note %q in %q", wantNote, d.Info.Notes)
	}
}

// TestChunkedEqualsWhole decodes the stream in small chunks on several
// goroutines: the records must not depend on how the file was cut.
func TestChunkedEqualsWhole(t *testing.T) {
	t.Parallel()
	read := func(chunk, workers int) []rundir.IntervalRecord {
		dir := filepath.Join(t.TempDir(), "run")
		if _, err := importStream(t, Config{Path: filepath.Join(fixtures, "out.json.gz"), ChunkSize: chunk},
			importer.Options{Dir: dir, Workers: workers}); err != nil {
			t.Fatal(err)
		}
		var out []rundir.IntervalRecord
		if err := rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
			out = append(out, *r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole, cut := read(0, 1), read(2048, 3)
	if len(whole) == 0 || !reflect.DeepEqual(whole, cut) {
		t.Errorf("%d records whole, %d cut; they differ", len(whole), len(cut))
	}
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestMalformedLinesCountedAndQuoted(t *testing.T) {
	t.Parallel()
	lines := readLines(t, filepath.Join(fixtures, "out.json.gz"))
	total := len(oraclePoints(t, lines, "http_req_duration"))
	var dur []int
	for i, l := range lines {
		if strings.HasPrefix(l, `{"metric":"http_req_duration"`) {
			dur = append(dur, i)
		}
	}
	// Break three request lines and add two foreign ones.
	mod := append([]string(nil), lines...)
	mod[dur[3]] = strings.Replace(mod[dur[3]], `"time":"20`, `"time":"xx`, 1)
	mod[dur[10]] = mod[dur[10]][:40] + "\n"
	mod[dur[20]] = strings.Replace(mod[dur[20]], `"value":`, `"value":"`, 1)
	mod = append(mod[:5], append([]string{"garbage\n", `{"type":"Something","data":{}}` + "\n"}, mod[5:]...)...)
	badLines := []int{dur[3] + 3, dur[10] + 3, dur[20] + 3, 6, 7}
	p := writeFile(t, "damaged.json", strings.Join(mod, ""))
	dir := filepath.Join(t.TempDir(), "run")
	d, err := importStream(t, Config{Path: p, ChunkSize: 4096}, importer.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if d.Total.Count != int64(total-3) {
		t.Errorf("%d requests, want %d", d.Total.Count, total-3)
	}
	log, err := os.ReadFile(filepath.Join(dir, rundir.ImportLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "5 malformed lines") {
		t.Errorf("import.log does not count 5 malformed lines:\n%s", log)
	}
	for _, n := range badLines {
		if want := p + ":" + strconv.Itoa(n) + ":"; !strings.Contains(string(log), want) {
			t.Errorf("import.log lacks %s:\n%s", want, log)
		}
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	jtl := writeFile(t, "results.jtl", "timeStamp,elapsed,label,responseCode,success\n1557738614000,12,GET /,200,true\n")
	summary := filepath.Join(fixtures, "summary.json")
	cases := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"jtl", Config{Path: jtl}, []string{jtl, "JMeter CSV JTL", "plateau import jmeter"}},
		{"summary-as-stream", Config{Path: summary}, []string{summary, "whole-run figures only", "summary="}},
		{"jtl-as-summary", Config{Path: filepath.Join(fixtures, "out.json.gz"), Summary: jtl}, []string{jtl, "JMeter CSV JTL"}},
		{"empty", Config{Path: writeFile(t, "empty.json", "")}, []string{"empty file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := importStream(t, c.cfg, importer.Options{})
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestLabel(t *testing.T) {
	t.Parallel()
	cases := []struct{ method, name, url, want string }{
		{"GET", "http://h:1/cart", "http://h:1/cart", "GET /cart"},
		{"GET", "http://h:1/items/17?x=1", "http://h:1/items/17?x=1", "GET /items/{id}"},
		{"POST", "pay", "http://h:1/pay", "POST pay"},
		{"GET", "http://h:1/items/{id}", "http://h:1/items/5", "GET /items/{id}"},
		{"GET", "http://other:2/a/123", "http://other:2/a/123", "GET other:2/a/{id}"},
		{"GET", "http://h:1", "http://h:1", "GET /"},
		{"GET", "http://h:10/x", "http://h:10/x", "GET h:10/x"},
		{"", "", "", ""},
		{"GET", "", "", "GET"},
		{"POST", "POST /login", "http://h:1/login", "POST /login"}, // a name that holds the method keeps it once
		{"get", "GET /var", "http://h:1/var", "GET /var"},
	}
	for _, c := range cases {
		d := &decoder{labels: importer.NewLabels().NewCache(), host: "http://h:1"}
		l := importer.NewLabels()
		d.labels = l.NewCache()
		if got := l.Name(d.label(c.method, c.name, c.url)); got != c.want {
			t.Errorf("label(%q, %q, %q) = %q, want %q", c.method, c.name, c.url, got, c.want)
		}
	}
}

// FuzzLines decodes arbitrary chunks: never a panic, never a negative
// time, and no more records than lines.
func FuzzLines(f *testing.F) {
	f.Add([]byte(`{"metric":"http_req_duration","type":"Point","data":{"time":"2026-11-22T01:16:51.152682174Z","value":3.748127,"tags":{"expected_response":"true","method":"GET","name":"http://127.0.0.1:18092/cart","status":"200","url":"http://127.0.0.1:18092/cart"}}}` + "\n"))
	f.Add([]byte(`{"metric":"vus","type":"Point","data":{"time":"2026-11-22T01:16:52+02:00","value":2,"tags":{}}}` + "\n" +
		`{"type":"Metric","data":{"name":"vus","type":"gauge"},"metric":"vus"}` + "\n" + `{"metric":"checks","type":"Point","data":{"time":"x","value":1}}`))
	f.Add([]byte(`{"metric":"group_duration","type":"Point","data":{"time":"2026-11-22T01:16:51Z","value":-1,"tags":{"group":"::a"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tp, _ := importer.NewTimeParser("iso8601", importer.Clock{})
		d := &decoder{labels: importer.NewLabels().NewCache(), tp: tp, host: "http://127.0.0.1:18092", keep: true}
		b := &batch{}
		d.decode(data, 1, b)
		if n := bytes.Count(data, []byte{'\n'}) + 1; len(b.recs) > n {
			t.Fatalf("%d records from %d lines", len(b.recs), n)
		}
		for _, r := range b.recs {
			if r.Elapsed < 0 {
				t.Fatalf("negative elapsed: %+v", r)
			}
		}
		_ = primaryHost(data)
		_, _ = ParseSummary(data, "f")
	})
}

// TestSteadyVUsOnePhase: a steady 5-VU run whose requests complete only
// every few seconds is one phase holding every request (issue 13 item 3:
// VUs were recorded only in seconds where a request completed, so no
// stretch was long enough to be a phase).
func TestSteadyVUsOnePhase(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"type":"Metric","data":{"name":"vus","type":"gauge","contains":"default"},"metric":"vus"}` + "\n")
	b.WriteString(`{"type":"Metric","data":{"name":"http_req_duration","type":"trend","contains":"time"},"metric":"http_req_duration"}` + "\n")
	t0 := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	requests := 0
	for s := 0; s < 90; s++ {
		ts := t0.Add(time.Duration(s)*time.Second + 100*time.Millisecond).Format(time.RFC3339Nano)
		fmt.Fprintf(&b, `{"metric":"vus","type":"Point","data":{"time":%q,"value":5,"tags":null}}`+"\n", ts)
		if s%4 == 1 { // each VU sleeps: seconds without a completed request
			ts := t0.Add(time.Duration(s)*time.Second + 600*time.Millisecond).Format(time.RFC3339Nano)
			fmt.Fprintf(&b, `{"metric":"http_req_duration","type":"Point","data":{"time":%q,"value":12.5,"tags":{"method":"GET","name":"http://h/a","url":"http://h/a","status":"200","expected_response":"true"}}}`+"\n", ts)
			requests++
		}
	}
	path := filepath.Join(t.TempDir(), "out.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := importStream(t, Config{Path: path}, importer.Options{DerivePhases: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Phases) != 1 || d.Phases[0].Users != 5 {
		t.Fatalf("phases %+v, want one of 5 VUs", d.Phases)
	}
	if got := d.PhaseTotal[0].Count; got != int64(requests) || d.Total.Count != int64(requests) {
		t.Errorf("%d of %d requests in the phase", got, d.Total.Count)
	}
}

// TestPercentilesAsK6DefinesThem: the run's whole-run percentiles are k6's
// (linear interpolation over all values) and equal its summary export's
// med, p(90), p(95), p(99) to the µs the import keeps (issue 13 item 5:
// plateau used HDR nearest rank).
func TestPercentilesAsK6DefinesThem(t *testing.T) {
	t.Parallel()
	d, err := importStream(t, Config{Path: filepath.Join(fixtures, "out.json.gz")}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ReadSummary(filepath.Join(fixtures, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := analysis.Summarize(d, nil)
	if s.PercentileMethod != "k6-linear" {
		t.Errorf("percentile_method %q", s.PercentileMethod)
	}
	tot := s.Labels[len(s.Labels)-1]
	dur := sum.Metrics["http_req_duration"]
	for _, c := range []struct {
		name     string
		ours, k6 float64
	}{{"med", tot.P50Ms, dur["med"]}, {"p(90)", tot.P90Ms, dur["p(90)"]}, {"p(95)", tot.P95Ms, dur["p(95)"]}, {"p(99)", tot.P99Ms, dur["p(99)"]}} {
		if math.Abs(c.ours-c.k6) > 0.001 {
			t.Errorf("%s %v, k6 %v", c.name, c.ours, c.k6)
		}
	}
}

// TestThroughputAsK6: with the summary export, the total's req/s is k6's
// http_reqs rate, over the test's whole duration (issue 13 item 6).
func TestThroughputAsK6(t *testing.T) {
	t.Parallel()
	d, err := importStream(t, Config{Path: filepath.Join(fixtures, "out.json.gz"), Summary: filepath.Join(fixtures, "summary.json")}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := ReadSummary(filepath.Join(fixtures, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := analysis.Summarize(d, nil)
	tot := s.Labels[len(s.Labels)-1]
	if want := sum.Metrics["http_reqs"]["rate"]; math.Abs(tot.ThroughputRPS-want) > 0.001 {
		t.Errorf("TOTAL %v req/s, k6 %v", tot.ThroughputRPS, want)
	}
}
