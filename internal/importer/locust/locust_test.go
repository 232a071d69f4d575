package locust

import (
	"context"
	"encoding/csv"
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
	"github.com/plateau-perf/plateau/internal/rundir"
)

const fixtures = "testdata/locust-2.47.0"

func importSet(t *testing.T, cfg Config, opt importer.Options) (*analysis.Dataset, error) {
	t.Helper()
	return importertest.Import(t, opt, New(cfg))
}

// readCSV reads a whole CSV file as maps by column name: the slow reading
// the import is checked against.
func readCSV(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, c := range recs[0] {
			m[c] = r[i]
		}
		out = append(out, m)
	}
	return out
}

func fnum(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// checkAgainstStats compares the import with Locust's stats CSV: per label
// and in total, count and failures exactly, min, max and mean to the µs,
// and the percentiles at Locust's ranks.
func checkAgainstStats(t *testing.T, d *analysis.Dataset, statsPath string, minChecked int) {
	t.Helper()
	byLabel := map[string]*analysis.LabelKey{}
	for k := range d.Run {
		byLabel[k.Label] = &k
	}
	checked := 0
	defer func() {
		if checked < minChecked {
			t.Errorf("only %d percentiles could be checked", checked)
		}
	}()
	for _, row := range readCSV(t, statsPath) {
		name := strings.TrimSpace(row["Type"] + " " + row["Name"])
		agg := d.Total
		if name != "Aggregated" {
			k := byLabel[name]
			if k == nil {
				t.Errorf("label %q missing (have %v)", name, d.Labels())
				continue
			}
			agg = d.Run[*k]
		}
		n, fails := int64(fnum(t, row["Request Count"])), int64(fnum(t, row["Failure Count"]))
		st := agg.Stats(name, false, 0)
		if st.Samples != n || st.Errors != fails {
			t.Errorf("%s: %d samples %d failed, Locust %d %d", name, st.Samples, st.Errors, n, fails)
		}
		minMs, maxMs, avg := fnum(t, row["Min Response Time"]), fnum(t, row["Max Response Time"]), fnum(t, row["Average Response Time"])
		// Times are stored in whole µs: min and max are exact to ±1 µs.
		if math.Abs(st.MinMs-minMs) > 0.0011 || math.Abs(st.MaxMs-maxMs) > 0.0011 || math.Abs(agg.MeanMs()-avg) > 0.001 {
			t.Errorf("%s: min %v max %v mean %v, Locust %v %v %v", name, st.MinMs, st.MaxMs, agg.MeanMs(), minMs, maxMs, avg)
		}
		if name == "Aggregated" {
			continue // the total's percentiles are not rebuilt, they follow from the labels
		}
		// The rebuilt values hold Locust's percentile p, to Locust's
		// rounding (Slack), at Locust's rank;
		// plateau reads rank ⌊p·n+0.5⌋, the same one when p·n's fraction
		// is at least one half. Check those, when no other percentile (nor
		// an extreme) shares the rank.
		var ranks []int64
		for _, pc := range percentileCols {
			ranks = append(ranks, KnotRank(pc.p, n))
		}
		for i, pc := range percentileCols {
			r := ranks[i]
			if r == 1 || r == n || i > 0 && ranks[i-1] == r || i+1 < len(ranks) && ranks[i+1] == r ||
				int64(pc.p*float64(n)+0.5) != r {
				continue
			}
			checked++
			want := math.Min(math.Max(fnum(t, row[pc.name]), minMs), maxMs)
			lo, hi := Slack(fnum(t, row[pc.name]) * 1000)
			if got := agg.QuantileMs(pc.p * 100); got < want-lo/1000-want*0.001-0.001 || got > want+hi/1000+want*0.001+0.001 {
				t.Errorf("%s %s: %v, Locust %v", name, pc.name, got, want)
			}
		}
	}
}

func TestMatchesLocustStats(t *testing.T) {
	t.Parallel()
	for _, p := range []string{"run", "run_stats.csv", "run_stats_history.csv"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			d, err := importSet(t, Config{Path: filepath.Join(fixtures, p)}, importer.Options{DerivePhases: true, MinPhase: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstStats(t, d, filepath.Join(fixtures, "run_stats.csv"), 3)
			checkHistorySeconds(t, d, filepath.Join(fixtures, "run_stats_history.csv"), true)
			users := map[int]bool{}
			for _, ph := range d.Phases {
				users[ph.Users] = true
			}
			if !users[2] || !users[4] {
				t.Errorf("phases %+v, want steps of 2 and 4 users", d.Phases)
			}
			var refused, http5 int64
			for _, e := range d.Errors {
				switch {
				case e.Class == "refused" && strings.Contains(e.Message, "ConnectionRefusedError"):
					refused += e.Count
				case e.Class == "http_5xx" && e.Status == 500:
					http5 += e.Count
				}
			}
			var wantRefused, want5 int64
			for _, f := range readCSV(t, filepath.Join(fixtures, "run_failures.csv")) {
				n := int64(fnum(t, f["Occurrences"]))
				if strings.Contains(f["Error"], "Refused") {
					wantRefused += n
				} else if strings.Contains(f["Error"], "500") {
					want5 += n
				}
			}
			if refused != wantRefused || http5 != want5 || refused == 0 || http5 == 0 {
				t.Errorf("%d refused, %d 5xx; failures.csv has %d, %d", refused, http5, wantRefused, want5)
			}
			marked := false
			for _, n := range d.Info.Notes {
				marked = marked || strings.Contains(n, "percentiles from Locust's own summary")
			}
			if !marked {
				t.Errorf("no note quoting Locust's own percentiles: %q", d.Info.Notes)
			}
		})
	}
}

// checkHistorySeconds compares the imported per-second totals with the
// history's Aggregated rows: by each row's time the import holds exactly
// the row's cumulative count (within one request per label when only the
// aggregated rows exist). A row covers the time since the previous one,
// usually one second; when Locust wrote its rows late (a loaded machine)
// and skipped a second, the requests of the longer interval are spread
// over it, so the check is on cumulative counts at the rows' times, not on
// single seconds.
func checkHistorySeconds(t *testing.T, d *analysis.Dataset, path string, exact bool) {
	t.Helper()
	got := map[int64]int64{}
	for _, tk := range d.TotalTicks {
		got[tk.T.Unix()] += tk.Count
	}
	slack := int64(0)
	if !exact {
		slack = int64(len(d.Run))
	}
	cumBefore := func(ts int64) int64 { // requests completed in seconds before ts
		var n int64
		for s, c := range got {
			if s < ts {
				n += c
			}
		}
		return n
	}
	var last int64
	rows := 0
	for _, row := range readCSV(t, path) {
		if row["Name"] != "Aggregated" {
			continue
		}
		c := int64(fnum(t, row["Total Request Count"]))
		ts := int64(fnum(t, row["Timestamp"]))
		if n := cumBefore(ts); n-c > slack || c-n > slack {
			t.Errorf("by %d: %d requests, history %d", ts, n, c)
		}
		last, rows = ts, rows+1
	}
	if rows == 0 {
		t.Fatal("no Aggregated rows")
	}
	if n := cumBefore(last); n != d.Total.Count {
		t.Errorf("%d requests after the history's last row", d.Total.Count-n)
	}
}

func copyFixture(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(fixtures, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAggregatedHistoryOnly imports the history as Locust writes it without
// --csv-full-history: only the Aggregated rows.
func TestAggregatedHistoryOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, dir, "run_stats.csv", "run_failures.csv")
	b, err := os.ReadFile(filepath.Join(fixtures, "run_stats_history.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	var keep []string
	for i, l := range lines {
		if i == 0 || strings.Contains(l, ",,Aggregated,") {
			keep = append(keep, l)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "run_stats_history.csv"), []byte(strings.Join(keep, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := importSet(t, Config{Path: filepath.Join(dir, "run")}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstStats(t, d, filepath.Join(dir, "run_stats.csv"), 3)
	checkHistorySeconds(t, d, filepath.Join(dir, "run_stats_history.csv"), false)
}

func TestStatsOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyFixture(t, dir, "run_stats.csv")
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, err := importSet(t, Config{Path: filepath.Join(dir, "run_stats.csv"), Start: start}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstStats(t, d, filepath.Join(dir, "run_stats.csv"), 3)
	var agg map[string]string
	for _, row := range readCSV(t, filepath.Join(dir, "run_stats.csv")) {
		if row["Name"] == "Aggregated" {
			agg = row
		}
	}
	wantDur := fnum(t, agg["Request Count"]) / fnum(t, agg["Requests/s"])
	if got := d.Info.End.Sub(d.Info.Start).Seconds(); math.Abs(got-wantDur) > 0.5 || d.Info.Start.Before(start) {
		t.Errorf("span %v from %v, want %.2fs from %v", got, d.Info.Start, wantDur, start)
	}
	noted := false
	for _, n := range d.Info.Notes {
		noted = noted || strings.Contains(n, "no timeline")
	}
	if !noted {
		t.Errorf("no note saying the run has no timeline: %q", d.Info.Notes)
	}
}

func TestRefusalsAndDamage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	k6 := filepath.Join(dir, "k6_stats.csv")
	if err := os.WriteFile(k6, []byte(`{"type":"Metric","data":{"name":"vus"},"metric":"vus"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := importSet(t, Config{Path: k6}, importer.Options{}); err == nil || !strings.Contains(err.Error(), "plateau import k6") {
		t.Errorf("k6 file: %v", err)
	}
	if _, err := importSet(t, Config{Path: filepath.Join(dir, "nothing_stats_history.csv")}, importer.Options{}); err == nil ||
		!strings.Contains(err.Error(), "nothing_stats.csv") {
		t.Errorf("missing stats: %v", err)
	}
	// A broken stats row and a broken history row are counted and quoted.
	copyFixture(t, dir, "run_stats.csv", "run_stats_history.csv", "run_failures.csv")
	p := filepath.Join(dir, "run_stats.csv")
	b, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(b), "\n")
	lines = append(lines[:2], append([]string{"GET,/broken,many,0,1,1,1,1,0,0,0,1,1,1,1,1,1,1,1,1,1,1\n"}, lines[2:]...)...)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	hp := filepath.Join(dir, "run_stats_history.csv")
	hb, _ := os.ReadFile(hp)
	hl := strings.SplitAfter(string(hb), "\n")
	hl = append(hl[:5], append([]string{"notatime,2,GET,/cart,0,0,0,0,0,0,0,0,0,0,0,0,0,3,0,9,1,1,1,1\n"}, hl[5:]...)...)
	if err := os.WriteFile(hp, []byte(strings.Join(hl, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "run")
	d, err := importSet(t, Config{Path: filepath.Join(dir, "run")}, importer.Options{Dir: out})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstStats(t, d, filepath.Join(fixtures, "run_stats.csv"), 3)
	log, err := os.ReadFile(filepath.Join(out, rundir.ImportLogFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{p + ":3:", hp + ":6:"} {
		if !strings.Contains(string(log), w) {
			t.Errorf("import.log lacks %s:\n%s", w, log)
		}
	}
}

// FuzzStats reads arbitrary stats, failures and history files: never a
// panic, and never more samples than the stats file counts.
func FuzzStats(f *testing.F) {
	read := func(n string) []byte {
		b, err := os.ReadFile(filepath.Join(fixtures, n))
		if err != nil {
			f.Fatal(err)
		}
		return b
	}
	f.Add(read("run_stats.csv"), read("run_failures.csv"), read("run_stats_history.csv")[:1500])
	f.Add([]byte("Type,Name,Request Count,Failure Count,Min Response Time,Max Response Time,Average Response Time,50%\nGET,/a,3,1,1,9,4,N/A\n"),
		[]byte("Method,Name,Error,Occurrences\nGET,/a,x,7\n"),
		[]byte("Timestamp,User Count,Type,Name,Total Request Count,Total Failure Count\n1795310550,2,GET,/a,9,0\n1795310549,2,GET,/a,2,5\n"))
	f.Fuzz(func(t *testing.T, stats, failures, history []byte) {
		if len(stats)+len(history) > 1<<16 {
			return
		}
		// Rebuilding costs a sample per counted request: keep it small.
		if st, err := readStats(strings.NewReader(string(stats)), "s", importer.NewProblems()); err == nil {
			var n int64
			for _, l := range st.labels {
				n += l.count
			}
			if n > 1e4 {
				return
			}
		}
		dir := t.TempDir()
		for n, b := range map[string][]byte{"x_stats.csv": stats, "x_failures.csv": failures, "x_stats_history.csv": history} {
			if err := os.WriteFile(filepath.Join(dir, n), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		opt := importer.Options{Dir: filepath.Join(dir, "run")}
		run, err := importer.NewRun(opt)
		if err != nil {
			t.Fatal(err)
		}
		src := New(Config{Path: filepath.Join(dir, "x"), Start: time.Unix(1795310549, 0)})
		_ = src.Import(context.Background(), run)
		if err := run.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLaggingFailures: with only aggregated history rows, a label's share
// of the failures can lag behind its samples; its last samples must still
// carry all its failures.
func TestLaggingFailures(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"x_stats.csv": "Type,Name,Request Count,Failure Count,Median Response Time,Average Response Time,Min Response Time,Max Response Time,Average Content Size,Requests/s,Failures/s,50%,100%\n" +
			"GET,/a,4,0,5,5,5,5,0,1,0,5,5\nGET,/b,2,2,7,7,7,7,0,1,1,7,7\n,Aggregated,6,2,5,5.666666666666667,5,7,0,2,0.5,5,7\n",
		"x_stats_history.csv": "Timestamp,User Count,Type,Name,Requests/s,Failures/s,50%,100%,Total Request Count,Total Failure Count\n" +
			"1795310550,1,,Aggregated,0,0,5,5,2,0\n1795310551,1,,Aggregated,0,0,5,5,4,0\n1795310552,1,,Aggregated,0,0,5,7,6,2\n",
	}
	for n, b := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := importSet(t, Config{Path: filepath.Join(dir, "x_stats.csv")}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstStats(t, d, filepath.Join(dir, "x_stats.csv"), 0)
}
