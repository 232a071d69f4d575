package accesslog

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
)

func importLogs(t *testing.T, opt importer.Options, cfgs ...Config) (*analysis.Dataset, error) {
	t.Helper()
	var sources []importer.Source
	for _, c := range cfgs {
		s, err := New(c)
		if err != nil {
			return nil, err
		}
		sources = append(sources, s)
	}
	return importertest.Import(t, opt, sources...)
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func agg(t *testing.T, d *analysis.Dataset, workload, label string) (count, errs int64, meanMs float64) {
	t.Helper()
	for k, a := range d.Run {
		if k.Workload == workload && k.Label == label {
			return a.Count, a.Errors, a.MeanMs()
		}
	}
	var have []string
	for k := range d.Run {
		have = append(have, k.Workload+"/"+k.Label)
	}
	t.Fatalf("no label %s/%q; have %q", workload, label, have)
	return 0, 0, 0
}

func TestFormats(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, format, line string
		label              string
		endUTC             string // expected completion time
		us                 int64
		status             int32
	}{
		{"nginx combined_rt", "combined_rt",
			`127.0.0.1 - - [13/May/2019:11:10:14 +0200] "GET /patients/0101701234/allergies?x=1 HTTP/1.1" 200 512 "-" "curl/8.0" 0.155`,
			"GET /patients/{id}/allergies", "2019-05-13T09:10:14Z", 155000, 200},
		{"apache %D starts at %t", "apache_combined_D",
			`10.0.0.1 - bob [13/May/2019:11:10:14 +0000] "POST /orders/6f1c2a1e-1b2c-4d3e-8f90-123456789abc HTTP/1.1" 500 12 "-" "ua" 2500000`,
			"POST /orders/{id}", "2019-05-13T11:10:16.5Z", 2500000, 500},
		{"iso8601 and ms", "$time_iso8601 $request_method $uri $status $request_time_ms $http_x_message_id $remote_addr",
			`2019-05-13T11:10:14.123Z GET /allergies 200 12.345 abc 127.0.0.1`,
			"GET /allergies", "2019-05-13T11:10:14.123Z", 12345, 200},
		{"apache string", `%h %l %u %t "%r" %>s %b %D`,
			`::1 - - [01/Jan/2024:00:00:00 -0130] "GET / HTTP/1.0" 404 0 1000`,
			"GET /", "2024-01-01T01:30:00.001Z", 1000, 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := Compile(c.format)
			if err != nil {
				t.Fatal(err)
			}
			p, err := newParser(f, importer.Clock{})
			if err != nil {
				t.Fatal(err)
			}
			var pl parsed
			if bad := p.parse([]byte(c.line), &pl, false); bad != "" {
				t.Fatal(bad)
			}
			want, _ := time.Parse(time.RFC3339Nano, c.endUTC)
			if string(pl.label) != c.label || pl.end != want.UnixNano() || pl.us != c.us || pl.status != c.status {
				t.Errorf("got label %q end %s µs %d status %d", pl.label, time.Unix(0, pl.end).UTC().Format(time.RFC3339Nano), pl.us, pl.status)
			}
		})
	}
}

func TestFormatErrors(t *testing.T) {
	t.Parallel()
	for format, want := range map[string]string{
		"$request_time$status":           "not separated",
		`%h %t "%r" %>s %T`:              "%D",
		"$request_time $status $request": "no time",
	} {
		_, err := New(Config{Path: "x.log", Format: format})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("format %q: %v, want %q", format, err, want)
		}
	}
	if _, err := New(Config{Path: "x.log", Format: "combined", External: "ext.log"}); err == nil || !strings.Contains(err.Error(), "no duration") {
		t.Errorf("external-call join without durations: %v", err)
	}
	_, err := New(Config{Path: "x.log"})
	if err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("no format: %v", err)
	}
}

func TestTemplate(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/patients/0101701234/allergies":            "/patients/{id}/allergies",
		"/api/v2/items":                             "/api/v2/items",
		"/f/3fa85f64-5717-4562-b3fc-2c963f66afa6?x": "/f/{id}",
		"/o/9a8b7c6d5e4f/lines/2":                   "/o/{id}/lines/{id}",
		"/static/app.min.js":                        "/static/app.min.js",
		"":                                          "/",
		"/day/2019-05-13":                           "/day/{id}",
		// Names stay names (issue 13 item 8): escapes, words with numbers.
		"/A%20Beka%20G1%20Howe/029_AND_30/page.html": "/A%20Beka%20G1%20Howe/029_AND_30/page.html",
		"/catalog/page12/v2-beta":                    "/catalog/page12/v2-beta",
		"/api/v1/users/me":                           "/api/v1/users/me",
		"/t/eyJhbGciOiJIUzI1NiJ9/x":                  "/t/{id}/x",
		"/k/ab12cd34ef":                              "/k/{id}",
		"/h/deadbeef01":                              "/h/{id}",
		"/s/aZ3kP9qLm2Xc7VbN_q8":                     "/s/{id}",
		"/oauth2callback":                            "/oauth2callback",
	} {
		if got := string(AppendTemplate(nil, []byte(in))); got != want {
			t.Errorf("%q → %q, want %q", in, got, want)
		}
	}
}

func TestMalformedAndRefused(t *testing.T) {
	t.Parallel()
	good := `127.0.0.1 - - [13/May/2019:11:10:%02d +0200] "GET /a HTTP/1.1" 200 5 "-" "ua" 0.010`
	var b strings.Builder
	for i := range 30 {
		fmt.Fprintf(&b, good+"\n", i)
		if i == 10 {
			b.WriteString("this is not a log line\n")
		}
	}
	p := writeFile(t, "access.log", b.String())
	d, err := importLogs(t, importer.Options{}, Config{Path: p, Format: "combined_rt", ChunkSize: 200})
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := agg(t, d, "access.log", "GET /a"); n != 30 {
		t.Errorf("%d requests, want 30", n)
	}
	found := false
	for _, n := range d.Info.Notes {
		found = found || strings.Contains(n, p+":12:")
	}
	if !found {
		t.Errorf("malformed line 12 not quoted in notes: %q", d.Info.Notes)
	}
	jtl := writeFile(t, "results.jtl", "timeStamp,elapsed,label\n1557738614000,12,GET /\n")
	if _, err := importLogs(t, importer.Options{}, Config{Path: jtl, Format: "combined_rt"}); err == nil ||
		!strings.Contains(err.Error(), "JMeter") {
		t.Errorf("a JTL given as access log: %v", err)
	}
}

// oracleJoin computes per label, from the two demo logs read line by line
// with strings.Fields, the mean response time and the mean net of external
// calls (the demo calls them one after another, so their durations add).
func oracleJoin(t *testing.T, access, external string) map[string][2]float64 {
	t.Helper()
	ext := map[string]float64{}
	f, err := os.Open(external)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		ms, _ := strconv.ParseFloat(fs[3], 64)
		ext[fs[1]] += ms
	}
	a, err := os.Open(access)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	sum := map[string][3]float64{}
	sc = bufio.NewScanner(a)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		label := fs[1] + " " + string(AppendTemplate(nil, []byte(fs[2])))
		ms, _ := strconv.ParseFloat(fs[4], 64)
		s := sum[label]
		s[0]++
		s[1] += ms
		s[2] += math.Max(0, ms-ext[fs[5]])
		sum[label] = s
	}
	out := map[string][2]float64{}
	for l, s := range sum {
		out[l] = [2]float64{s[1] / s[0], s[2] / s[0]}
	}
	return out
}

// Paths beyond max-labels fold into "METHOD (other paths)"; read by status,
// the folded label keeps each line's status, so the server-side table's
// split by HTTP status stays whole.
func TestFoldedLabelsKeepStatus(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i, st := range []int{200, 200, 404, 500, 200, 404} {
		fmt.Fprintf(&b, "2019-05-13T11:10:1%d.000Z GET /p%c %d 5.000 m%d 127.0.0.1\n", i, 'a'+i, st, i)
	}
	p := writeFile(t, "access.log", b.String())
	d, err := importLogs(t, importer.Options{}, Config{Path: p, Server: "web", Format: "plateau", ByStatus: true, MaxLabels: 2})
	if err != nil {
		t.Fatal(err)
	}
	for label, want := range map[string]int64{"GET /pa 200": 1, "GET /pb 200": 1, "GET (other paths) 404": 2, "GET (other paths) 500": 1, "GET (other paths) 200": 1} {
		if n, _, _ := agg(t, d, "web", label); n != want {
			t.Errorf("%s: %d, want %d", label, n, want)
		}
	}
}
