package jtl

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

const fixtures = "testdata/jmeter-5.6.3"

func importFile(t *testing.T, cfg Config, opt importer.Options) (*analysis.Dataset, error) {
	t.Helper()
	return importertest.Import(t, opt, New(cfg))
}

// jmeterStat is one entry of the dashboard's statistics.json.
type jmeterStat struct {
	Transaction string  `json:"transaction"`
	SampleCount int64   `json:"sampleCount"`
	ErrorCount  int64   `json:"errorCount"`
	Mean        float64 `json:"meanResTime"`
	Median      float64 `json:"medianResTime"`
	Min         float64 `json:"minResTime"`
	Max         float64 `json:"maxResTime"`
	P90         float64 `json:"pct1ResTime"`
	P95         float64 `json:"pct2ResTime"`
	P99         float64 `json:"pct3ResTime"`
}

func readStats(t *testing.T, path string) map[string]jmeterStat {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]jmeterStat
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// oracleElapsed reads the elapsed column of a default CSV JTL per label with
// encoding/csv: the slow, obviously right reading the fast decoder is checked
// against. Controller samples are kept out of "Total" as JMeter does.
func oracleElapsed(t *testing.T, path string) map[string][]float64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	out := map[string][]float64{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		el, _ := strconv.ParseFloat(rec[col["elapsed"]], 64)
		lb := rec[col["label"]]
		out[lb] = append(out[lb], el)
		if !strings.HasPrefix(rec[col["responseMessage"]], controllerPrefix) {
			out["Total"] = append(out["Total"], el)
		}
	}
	return out
}

// compareWithDashboard checks every label and the total of d against
// JMeter's statistics.json for the same JTL: count, errors, min, max and
// mean exactly (mean to floating-point noise: JMeter sums incrementally);
// percentiles between the order statistics that bracket JMeter's
// interpolated value, widened by the histogram's 0.1 % resolution.
func compareWithDashboard(t *testing.T, d *analysis.Dataset, stats map[string]jmeterStat, values map[string][]float64) {
	t.Helper()
	byLabel := map[string]*analysis.LabelKey{}
	for k := range d.Run {
		k := k
		byLabel[k.Label] = &k
	}
	if len(stats)-1 != len(byLabel) {
		t.Errorf("%d labels imported, JMeter has %d", len(byLabel), len(stats)-1)
	}
	for name, js := range stats {
		agg := d.Total
		if name != "Total" {
			k := byLabel[name]
			if k == nil {
				t.Errorf("label %q missing", name)
				continue
			}
			agg = d.Run[*k]
		}
		st := agg.Stats(name, false, 0)
		if st.Samples != js.SampleCount || st.Errors != js.ErrorCount {
			t.Errorf("%s: %d samples %d errors, JMeter %d %d", name, st.Samples, st.Errors, js.SampleCount, js.ErrorCount)
		}
		if st.MinMs != js.Min || st.MaxMs != js.Max {
			t.Errorf("%s: min %v max %v, JMeter %v %v", name, st.MinMs, st.MaxMs, js.Min, js.Max)
		}
		if math.Abs(agg.MeanMs()-js.Mean) > 1e-9*js.Mean {
			t.Errorf("%s: mean %v, JMeter %v", name, agg.MeanMs(), js.Mean)
		}
		v := append([]float64(nil), values[name]...)
		sort.Float64s(v)
		for _, pc := range []struct {
			p, jm float64
		}{{50, js.Median}, {90, js.P90}, {95, js.P95}, {99, js.P99}} {
			if got := importer.LegacyPercentile(v, pc.p); math.Abs(got-pc.jm) > 1e-6*math.Max(1, pc.jm) {
				t.Errorf("%s p%v: importer.LegacyPercentile %v, JMeter %v (definition misunderstood)", name, pc.p, got, pc.jm)
			}
			pos := pc.p * float64(len(v)+1) / 100
			lo := v[max(0, min(len(v)-1, int(math.Floor(pos))-2))]
			hi := v[max(0, min(len(v)-1, int(math.Ceil(pos))))]
			ours := agg.QuantileMs(pc.p)
			if ours < lo*0.999-0.001 || ours > hi*1.001+0.001 {
				t.Errorf("%s p%v: ours %v outside [%v, %v] around JMeter's %v", name, pc.p, ours, lo, hi, pc.jm)
			}
		}
	}
}

func TestMatchesJMeterDashboard(t *testing.T) {
	t.Parallel()
	path := filepath.Join(fixtures, "results.jtl")
	for _, chunk := range []int{0, 4096} {
		t.Run("chunk"+strconv.Itoa(chunk), func(t *testing.T) {
			t.Parallel()
			d, err := importFile(t, Config{Path: path, ChunkSize: chunk}, importer.Options{Workers: 3})
			if err != nil {
				t.Fatal(err)
			}
			compareWithDashboard(t, d, readStats(t, filepath.Join(fixtures, "statistics.json")), oracleElapsed(t, path))
			var tx int
			for k := range d.Run {
				if k.Tx {
					tx++
					if k.Label != "checkout" {
						t.Errorf("transaction label %q", k.Label)
					}
				}
			}
			if tx != 1 {
				t.Errorf("%d transaction labels, want 1", tx)
			}
		})
	}
}

func TestClockFormatNeedsZone(t *testing.T) {
	t.Parallel()
	path := filepath.Join(fixtures, "semicolon-copenhagen.jtl")
	_, err := importFile(t, Config{Path: path}, importer.Options{})
	if err == nil || !strings.Contains(err.Error(), "--tz") {
		t.Fatalf("import without --tz: %v, want an error naming --tz", err)
	}
	clock, err := importer.LoadClock("Europe/Copenhagen")
	if err != nil {
		t.Fatal(err)
	}
	d, err := importFile(t, Config{Path: path}, importer.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	// The first sample, read with the standard library in the same zone.
	b, _ := os.ReadFile(path)
	lines := strings.Split(string(b), "\n")
	n := 0
	earliest := int64(math.MaxInt64)
	for _, l := range lines[1:] {
		f := strings.Split(l, ";")
		if len(f) < 2 {
			continue
		}
		n++
		ts, err := parseMilli("2006/01/02 15:04:05.000", f[0], clock)
		if err != nil {
			t.Fatal(err)
		}
		earliest = min(earliest, ts)
	}
	if d.Total.Count+txCount(d) != int64(n) {
		t.Errorf("%d samples, file has %d lines", d.Total.Count+txCount(d), n)
	}
	if got := d.Info.Start.UnixMilli(); got != earliest {
		t.Errorf("run start %d, earliest timeStamp %d", got, earliest)
	}
}

func txCount(d *analysis.Dataset) int64 {
	var n int64
	for k, a := range d.Run {
		if k.Tx {
			n += a.Count
		}
	}
	return n
}

func TestRefusesOtherFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := map[string]struct{ content, want string }{
		"k6.json":    {`{"type":"Metric","data":{"name":"http_reqs","type":"counter"},"metric":"http_reqs"}` + "\n", "k6"},
		"access.log": {`127.0.0.1 - - [13/May/2019:11:10:14 +0200] "GET / HTTP/1.1" 200 12 "-" "curl" 0.012` + "\n", "access log"},
		"stats.csv":  {"Type,Name,Request Count,Failure Count\nGET,/,1,0\n", "Locust"},
		"noheader.jtl": {"1557738614000,12,GET /,200,OK,t 1-1,text,true,,10,10,1,1,http://x/,1,0,0\n",
			"--columns"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := importFile(t, Config{Path: p}, importer.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), p) {
				t.Fatalf("error %v, want one naming %s and %q", err, p, c.want)
			}
		})
	}
}

func TestColumnsForHeaderlessFile(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(fixtures, "results.jtl"))
	if err != nil {
		t.Fatal(err)
	}
	header, body, _ := strings.Cut(string(b), "\n")
	p := filepath.Join(t.TempDir(), "noheader.jtl")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := importFile(t, Config{Path: p, Columns: header}, importer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	stats := readStats(t, filepath.Join(fixtures, "statistics.json"))
	if d.Total.Count != stats["Total"].SampleCount {
		t.Errorf("%d samples, want %d", d.Total.Count, stats["Total"].SampleCount)
	}
}

func TestMalformedLinesCountedAndQuoted(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(fixtures, "results.jtl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	bad := []string{"garbage without fields\n", "notatime,12,GET /cart,200,OK,users 1-1,text,true,,1,1,1,1,u,1,0,0\n",
		"1795307669713,-5,GET /cart,200,OK,users 1-1,text,true,,1,1,1,1,u,1,0,0\n",
		"1795307669713,5,GET /cart,200,OK,users 1-1,text,maybe,,1,1,1,1,u,1,0,0\n"}
	var out []string
	var badLines []int
	for i, l := range lines {
		out = append(out, l)
		if i > 0 && i%100 == 0 && len(badLines) < len(bad) {
			out = append(out, bad[len(badLines)])
			badLines = append(badLines, len(out))
		}
	}
	p := filepath.Join(t.TempDir(), "damaged.jtl")
	if err := os.WriteFile(p, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	d, err := importFile(t, Config{Path: p, ChunkSize: 2048}, importer.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	stats := readStats(t, filepath.Join(fixtures, "statistics.json"))
	if d.Total.Count != stats["Total"].SampleCount {
		t.Errorf("%d samples, want %d (malformed lines must not count)", d.Total.Count, stats["Total"].SampleCount)
	}
	log, err := os.ReadFile(filepath.Join(dir, rundir.ImportLogFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "4 malformed lines") {
		t.Errorf("import.log does not count 4 malformed lines:\n%s", log)
	}
	for _, n := range badLines {
		want := p + ":" + strconv.Itoa(n) + ":"
		if !strings.Contains(string(log), want) {
			t.Errorf("import.log does not quote %s:\n%s", want, log)
		}
		found := false
		for _, note := range d.Info.Notes {
			found = found || strings.Contains(note, want)
		}
		if !found {
			t.Errorf("run.json notes lack %s: %q", want, d.Info.Notes)
		}
	}
}
