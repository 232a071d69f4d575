package report

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestOldHistogramFormat: a run directory written before the engine stored
// its histograms uncompressed (every "hist" a best-compression zlib
// stream, as hdrhistogram-go encodes it) gives byte for byte the summary,
// Markdown report and charts of the same run in the current form.
func TestOldHistogramFormat(t *testing.T) {
	t.Parallel()
	cur := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(cur, reporttest.Options{Name: "shop", Seed: 7, Monitor: true, Concurrent: true, NetOfDownstream: true,
		Steps: []reporttest.Step{{Users: 6, Seconds: 40, RampUpS: 2}, {Users: 12, Seconds: 40, RampUpS: 2}}}); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(t.TempDir(), "run")
	if err := os.CopyFS(old, os.DirFS(cur)); err != nil {
		t.Fatal(err)
	}
	// Rewrite every histogram in the old form.
	var lines bytes.Buffer
	var enc metrics.HistEncoder
	var curDec, oldDec metrics.HistDecoder
	var sp metrics.Sparse
	rewritten := 0
	err := rundir.ReadIntervals(old, func(r *rundir.IntervalRecord) error {
		if r.Hist != "" {
			if err := curDec.Decode(r.Hist, &sp); err != nil {
				return err
			}
			h, err := metrics.DecodeHist(r.Hist)
			if err != nil {
				return err
			}
			if r.Hist, err = enc.Encode(h); err != nil {
				return err
			}
			if err := oldDec.Decode(r.Hist, &sp); err != nil {
				return err
			}
			rewritten++
		}
		lines.Write(append(r.AppendJSON(nil), '\n'))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rewritten < 100 || curDec.Stored != rewritten || oldDec.Stored != 0 {
		t.Fatalf("%d histograms rewritten; %d of the current ones stored, %d of the old ones", rewritten, curDec.Stored, oldDec.Stored)
	}
	if err := os.WriteFile(filepath.Join(old, rundir.IntervalsFile), lines.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{cur, old} {
		if _, err := Write(d, Options{Now: fixedNow, Formats: []string{"json", "md"}}); err != nil {
			t.Fatal(err)
		}
	}
	files := []string{"summary.json", "report.md"}
	charts, _ := filepath.Glob(filepath.Join(cur, "charts", "*.svg"))
	if len(charts) == 0 {
		t.Fatal("no charts written")
	}
	for _, c := range charts {
		files = append(files, filepath.Join("charts", filepath.Base(c)))
	}
	for _, f := range files {
		a, err := os.ReadFile(filepath.Join(cur, f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(old, f))
		if err != nil {
			t.Fatal(err)
		}
		b = bytes.ReplaceAll(b, []byte(old), []byte(cur)) // the report names its directory
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between the current and the old histogram form:\n%s", f, firstDiff(a, b))
		}
	}
}
