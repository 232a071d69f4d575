package report_test

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"flag"
	"fmt"
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
// JMeter's own dashboard the count and errors equal JMeter's and the mean
// is within 0.01 ms of it.
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
					checkAgainstDashboard(t, f.stats, res.Summary)
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

// checkAgainstDashboard compares the total with JMeter's own dashboard of
// the same file: count and errors exactly, the mean within 0.01 ms.
func checkAgainstDashboard(t *testing.T, path string, s *analysis.Summary) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var js map[string]struct {
		SampleCount int64   `json:"sampleCount"`
		ErrorCount  int64   `json:"errorCount"`
		Mean        float64 `json:"meanResTime"`
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	jt, ok := js["Total"]
	if !ok {
		t.Fatal("statistics.json has no Total")
	}
	total := s.Labels[len(s.Labels)-1]
	if total.Samples != jt.SampleCount || total.Errors != jt.ErrorCount || math.Abs(total.MeanMs-jt.Mean) > 0.01 {
		t.Errorf("total: %d samples, %d errors, mean %.3f ms; JMeter's dashboard %d, %d, %.3f ms", total.Samples, total.Errors, total.MeanMs, jt.SampleCount, jt.ErrorCount, jt.Mean)
	}
	if len(js) != len(s.Labels) {
		var names []string
		for k := range js {
			names = append(names, k)
		}
		t.Errorf("%d labels, JMeter's dashboard %d", len(s.Labels), len(js))
		_ = fmt.Sprint(strings.Join(names, ", "))
	}
}
