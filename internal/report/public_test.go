package report_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/jtl"
	"github.com/plateau-perf/plateau/internal/importer/k6"
	"github.com/plateau-perf/plateau/internal/importer/locust"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// publicDir holds result files of real projects' load tests (provenance in
// its README.md), none of which other tests read.
const publicDir = "../importer/testdata/public/"

// publicFile is one of them, with the importer that reads it.
type publicFile struct {
	name string
	src  func(t *testing.T) importer.Source
	// stats is JMeter's own dashboard of the same file (statistics.json),
	// when the project kept it.
	stats string
}

func publicFiles() []publicFile {
	jmeter := func(dir, file string, stats bool) publicFile {
		p := publicFile{name: dir, src: func(t *testing.T) importer.Source {
			return jtl.New(jtl.Config{Path: gunzip(t, publicDir+dir+"/"+file)})
		}}
		if stats {
			p.stats = publicDir + dir + "/statistics.json"
		}
		return p
	}
	return []publicFile{
		jmeter("jmeter-ehrbase-load-test-4373b10", "result.jtl", true),
		jmeter("jmeter-ehrbase-load-test-f9427e5", "result.jtl.gz", true),
		jmeter("jmeter-ehrbase-load-test-a562c5d", "result.jtl.gz", true),
		jmeter("jmeter-ehrbase-load-test-bcf50cd-head", "result.jtl.gz", false),
		jmeter("jmeter-ehrbase-load-test-44e2eee-head", "result.jtl.gz", false),
		jmeter("jmeter-ehrbase-load-test-4aa3cc2-head", "result.jtl.gz", false),
		jmeter("jmeter-ehrbase-performance-test-3dafce4", "result.jtl", true),
		jmeter("jmeter-ehrbase-performance-test-49a4a55", "result.jtl.gz", true),
		jmeter("jmeter-ehrbase-performance-test-f4c45e6-head", "result.jtl.gz", false),
		jmeter("jmeter-ehrbase-performance-test-a84da3b-head", "result.jtl.gz", false),
		jmeter("jmeter-perfaction-result", "result.jtl", false),
		jmeter("jmeter-perfaction-csvsample", "CSVSample.jtl", false),
		{name: "k6-desafio-votacao", src: func(*testing.T) importer.Source {
			return k6.New(k6.Config{Path: publicDir + "k6-desafio-votacao/k6-results.json.gz"})
		}},
		{name: "locust-load-testing-hub", src: func(*testing.T) importer.Source {
			return locust.New(locust.Config{Path: publicDir + "locust-load-testing-hub/locust_stats.csv"})
		}},
		{name: "locust-bitcoin-api", src: func(*testing.T) importer.Source {
			return locust.New(locust.Config{Path: publicDir + "locust-bitcoin-api/results_stats.csv"})
		}},
	}
}

// keyFigures are the figures of a public file that must stay unchanged.
type keyFigures struct {
	Samples  int64   `json:"samples"`
	ErrorPct float64 `json:"error_pct"`
	MeanMs   float64 `json:"mean_ms"`
	P95Ms    float64 `json:"p95_ms"`
	Labels   int     `json:"labels"`
}

const publicGolden = "testdata/public-figures.golden.json"

// updatePublic rewrites publicGolden (-update is the internal tests' flag
// for their golden files; one test binary cannot define it twice).
var updatePublic = flag.Bool("update-public", false, "rewrite "+publicGolden)

// TestPublicResultFiles imports each public result file, renders its
// report (Markdown, HTML, summary.json) and reads it with the prose and
// truth checks; its key figures (samples, error %, mean, p95 of the total,
// number of labels) must equal those pinned in testdata (go test -update-public
// rewrites them, for a change that is meant), and where the project kept
// JMeter's own dashboard every label's figures are compared with it
// (checkAgainstDashboard).
func TestPublicResultFiles(t *testing.T) {
	t.Parallel()
	var pinned map[string]keyFigures
	if b, err := os.ReadFile(publicGolden); err == nil {
		if err := json.Unmarshal(b, &pinned); err != nil {
			t.Fatal(err)
		}
	} else if !*updatePublic {
		t.Fatal(err)
	}
	files := publicFiles()
	if len(files) < 15 {
		t.Fatalf("%d public files, want at least 15", len(files))
	}
	got := make([]keyFigures, len(files))
	t.Run("files", func(t *testing.T) {
		for i, f := range files {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				dir := filepath.Join(t.TempDir(), "run")
				run, err := importer.NewRun(importer.Options{Dir: dir, Name: f.name, Clock: importer.Clock{Loc: time.UTC}})
				if err != nil {
					t.Fatal(err)
				}
				if err := f.src(t).Import(context.Background(), run); err != nil {
					t.Fatal(err)
				}
				if err := run.Close(); err != nil {
					t.Fatal(err)
				}
				res, err := report.Write(dir, report.Options{Formats: []string{"json", "md", "html"}, Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }})
				if err != nil {
					t.Fatal(err)
				}
				defects, err := reporttest.RunDefects(dir)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range defects {
					t.Error(d)
				}
				total := res.Summary.Labels[len(res.Summary.Labels)-1]
				if total.Label != "TOTAL" {
					t.Fatalf("last row %q", total.Label)
				}
				got[i] = keyFigures{Samples: total.Samples, ErrorPct: round(100*float64(total.Errors)/float64(max(total.Samples, 1)), 4),
					MeanMs: round(total.MeanMs, 4), P95Ms: round(total.P95Ms, 4), Labels: len(res.Summary.Labels)}
				if f.stats != "" {
					n, d := checkAgainstDashboard(t, f.stats, res.Summary)
					t.Logf("%d figures compared with JMeter's dashboard, %d differ", n, d)
				}
				if !*updatePublic {
					want, ok := pinned[f.name]
					if !ok {
						t.Fatalf("no pinned figures for %s (go test -run TestPublicResultFiles -update-public)", f.name)
					}
					if got[i] != want {
						t.Errorf("figures changed:\n got %+v\nwant %+v", got[i], want)
					}
				}
			})
		}
	})
	if *updatePublic && !t.Failed() {
		out := map[string]keyFigures{}
		for i, f := range files {
			out[f.name] = got[i]
		}
		b, _ := json.MarshalIndent(out, "", "  ")
		if err := os.WriteFile(publicGolden, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// gunzip returns path, or for a .gz file (a big JTL kept small) the path
// of its contents in a temporary directory: JMeter writes JTLs plain.
func gunzip(t *testing.T, path string) string {
	if !strings.HasSuffix(path, ".gz") {
		return path
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), strings.TrimSuffix(filepath.Base(path), ".gz"))
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, zr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// checkAgainstDashboard compares every label and the total with JMeter's
// own dashboard of the same file, figure by figure as TestPublicJTL does:
// count and errors exactly; min, max, mean, p50, p90, p95, p99 and
// throughput to the 0.001 summary.json keeps (all 2,500 figures of the five
// dashboards agree). It returns how many figures it compared and how many
// differ, each an error.
func checkAgainstDashboard(t *testing.T, path string, s *analysis.Summary) (compared, differ int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]struct {
		SampleCount int64   `json:"sampleCount"`
		ErrorCount  int64   `json:"errorCount"`
		Mean        float64 `json:"meanResTime"`
		Median      float64 `json:"medianResTime"`
		Min         float64 `json:"minResTime"`
		Max         float64 `json:"maxResTime"`
		P90         float64 `json:"pct1ResTime"`
		P95         float64 `json:"pct2ResTime"`
		P99         float64 `json:"pct3ResTime"`
		Throughput  float64 `json:"throughput"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if len(js) != len(s.Labels) {
		t.Errorf("%d labels, JMeter's dashboard %d", len(s.Labels), len(js))
	}
	for _, row := range s.Labels {
		name := row.Label
		if name == "TOTAL" {
			name = "Total"
		}
		j, ok := js[name]
		if !ok {
			t.Errorf("%s not in statistics.json", name)
			continue
		}
		if row.Samples != j.SampleCount || row.Errors != j.ErrorCount {
			t.Errorf("%s: %d samples, %d errors; JMeter's dashboard %d, %d", name, row.Samples, row.Errors, j.SampleCount, j.ErrorCount)
		}
		compared += 2
		for _, c := range []struct {
			what     string
			ours, jm float64
		}{{"min", row.MinMs, j.Min}, {"max", row.MaxMs, j.Max}, {"mean", row.MeanMs, j.Mean},
			{"p50", row.P50Ms, j.Median}, {"p90", row.P90Ms, j.P90}, {"p95", row.P95Ms, j.P95}, {"p99", row.P99Ms, j.P99},
			{"throughput", row.ThroughputRPS, j.Throughput}} {
			compared++
			d := math.Abs(c.ours - c.jm)
			if d <= 0.0005+1e-9 {
				continue
			}
			differ++
			t.Errorf("%s %s: %v, JMeter %v", name, c.what, c.ours, c.jm)
		}
	}
	return compared, differ
}
