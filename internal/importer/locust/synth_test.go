package locust

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
)

// synthLabel is one request name of a synthetic Locust set.
type synthLabel struct {
	typ, name  string
	count      int64
	min, max   float64 // ms
	avg        float64
	median     float64
	p90, p99   float64
	perSecond  int64 // requests per history second (the last second takes the rest)
	firstAfter int   // seconds after the start of its first request
}

// writeSynth writes PREFIX_stats.csv and PREFIX_stats_history.csv as Locust
// 2.x writes them: a history row every second from t0 (0 requests) to t0+secs
// with per-name and Aggregated cumulative counts, and Requests/s in the
// stats file from Locust's own rule (count over the run's span, lastReq − t0).
func writeSynth(t *testing.T, dir string, t0 int64, secs int, lastReq float64, users int, labels []synthLabel) string {
	t.Helper()
	prefix := filepath.Join(dir, "run")
	var total int64
	for _, l := range labels {
		total += l.count
	}
	span := lastReq - float64(t0)
	pcts := func(l synthLabel) string {
		return fmt.Sprintf("%g,%g,%g,%g,%g,%g,%g,%g,%g,%g,%g", l.median, l.median, l.median, l.median, l.p90, l.p90, l.p99, l.p99, l.max, l.max, l.max)
	}
	var st strings.Builder
	st.WriteString("Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%\n")
	aggMin, aggMax, aggSum := math.Inf(1), 0.0, 0.0
	for _, l := range labels {
		fmt.Fprintf(&st, "%s,%s,%d,0,%g,%g,%g,%g,5,%g,0,%s\n", l.typ, l.name, l.count, l.median, l.avg, l.min, l.max, float64(l.count)/span, pcts(l))
		aggMin, aggMax, aggSum = min(aggMin, l.min), max(aggMax, l.max), aggSum+l.avg*float64(l.count)
	}
	agg := synthLabel{median: labels[0].median, p90: labels[0].p90, p99: labels[0].p99, max: aggMax}
	fmt.Fprintf(&st, ",Aggregated,%d,0,%g,%g,%g,%g,5,%g,0,%s\n", total, agg.median, aggSum/float64(total), aggMin, aggMax, float64(total)/span, pcts(agg))
	var h strings.Builder
	h.WriteString("Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,66%,75%,80%,90%,95%,98%,99%,99.9%,99.99%,100%,Total Request Count,Total Failure Count,Total Median Response Time,Total Average Response Time,Total Min Response Time,Total Max Response Time,Total Average Content Size\n")
	na := "N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A,N/A"
	for s := 0; s <= secs; s++ {
		var sum int64
		for _, l := range labels {
			var c int64
			if s > l.firstAfter {
				c = min(l.count, l.perSecond*int64(s-l.firstAfter))
			}
			if s == secs {
				c = l.count
			}
			sum += c
			fmt.Fprintf(&h, "%d,%d,%s,%s,0,0,%s,%d,0,0,0,0,0,0\n", t0+int64(s), users, l.typ, l.name, na, c)
		}
		fmt.Fprintf(&h, "%d,%d,,Aggregated,0,0,%s,%d,0,0,0,0,0,0\n", t0+int64(s), users, na, sum)
	}
	for name, text := range map[string]string{"_stats.csv": st.String(), "_stats_history.csv": h.String()} {
		if err := os.WriteFile(prefix+name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return prefix
}

// TestSpanFromHistory: a set with a few very slow requests imports with
// Locust's span and Locust's Requests/s, per label and in total (issue 13
// item 1: the start was taken from rebuilt samples, "end − elapsed" of a
// 60 s request, and the rate came out at about half Locust's).
func TestSpanFromHistory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const t0 = 1795310549
	prefix := writeSynth(t, dir, t0, 63, t0+62.8, 50, []synthLabel{
		{typ: "GET", name: "/fast", count: 37000, min: 1, max: 900, avg: 40, median: 30, p90: 80, p99: 400, perSecond: 600},
		{typ: "GET", name: "/report", count: 219, min: 2000, max: 60000, avg: 20000, median: 15000, p90: 50000, p99: 60000, perSecond: 4, firstAfter: 5},
	})
	d, err := importSet(t, Config{Path: prefix}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := analysis.Summarize(d, nil)
	want := map[string]float64{}
	for _, row := range readCSV(t, prefix+"_stats.csv") {
		want[strings.TrimSpace(row["Type"]+" "+row["Name"])] = fnum(t, row["Requests/s"])
	}
	want["TOTAL"] = want["Aggregated"]
	for _, row := range s.Labels {
		w, ok := want[row.Label]
		if !ok {
			t.Errorf("label %q not in Locust's stats", row.Label)
			continue
		}
		if math.Abs(row.ThroughputRPS-w) > 0.01*w {
			t.Errorf("%s: %.3f req/s, Locust %.3f (run %.1f s)", row.Label, row.ThroughputRPS, w, s.DurationS)
		}
	}
}

// TestLabelHoldsMethod: a name that already holds the method keeps it once
// (issue 13 item 10: "GET GET /var").
func TestLabelHoldsMethod(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	prefix := writeSynth(t, dir, 1795310549, 10, 1795310559, 2, []synthLabel{
		{typ: "GET", name: "GET /var", count: 10, min: 1, max: 9, avg: 5, median: 5, p90: 8, p99: 9, perSecond: 1},
		{typ: "GET", name: "/plain", count: 10, min: 1, max: 9, avg: 5, median: 5, p90: 8, p99: 9, perSecond: 1},
	})
	d, err := importSet(t, Config{Path: prefix}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for k := range d.Run {
		got[k.Label] = true
	}
	if !got["GET /var"] || !got["GET /plain"] || len(got) != 2 {
		t.Errorf("labels %v, want GET /var and GET /plain", got)
	}
}

// TestPercentilesAsLocust: summary.json's whole-run percentiles of an
// imported Locust set are Locust's own (its stats file's 50 %, 90 %, 95 %,
// 99 %), per label and in total (issue 13 item 5).
func TestPercentilesAsLocust(t *testing.T) {
	t.Parallel()
	d, err := importSet(t, Config{Path: filepath.Join(fixtures, "run")}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := analysis.Summarize(d, nil)
	if s.PercentileMethod != "locust-rounded" {
		t.Errorf("percentile_method %q", s.PercentileMethod)
	}
	rows := map[string]map[string]string{}
	for _, row := range readCSV(t, filepath.Join(fixtures, "run_stats.csv")) {
		name := strings.TrimSpace(row["Type"] + " " + row["Name"])
		if name == "Aggregated" {
			name = "TOTAL"
		}
		rows[name] = row
	}
	for _, l := range s.Labels {
		row := rows[l.Label]
		if row == nil {
			t.Errorf("%s not in the stats file", l.Label)
			continue
		}
		for _, c := range []struct {
			col  string
			ours float64
		}{{"50%", l.P50Ms}, {"90%", l.P90Ms}, {"95%", l.P95Ms}, {"99%", l.P99Ms}} {
			if want := fnum(t, row[c.col]); math.Abs(c.ours-want) > 0.0005 {
				t.Errorf("%s %s: %v, Locust %v", l.Label, c.col, c.ours, want)
			}
		}
	}
}

// TestHistorySkippedSecond: Locust on a loaded machine writes a history row
// late and skips a second; the requests of that longer interval are spread
// over it, and the cumulative counts at every row still equal Locust's.
func TestHistorySkippedSecond(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, dir, "run_stats.csv", "run_failures.csv")
	b, err := os.ReadFile(filepath.Join(fixtures, "run_stats_history.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var keep []string
	for _, l := range strings.SplitAfter(string(b), "\n") {
		if !strings.HasPrefix(l, "1795310553,") { // the row written at …553 is missing
			keep = append(keep, l)
		}
	}
	hist := filepath.Join(dir, "run_stats_history.csv")
	if err := os.WriteFile(hist, []byte(strings.Join(keep, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := importSet(t, Config{Path: filepath.Join(dir, "run")}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstStats(t, d, filepath.Join(dir, "run_stats.csv"), 3)
	checkHistorySeconds(t, d, hist, true)
}
