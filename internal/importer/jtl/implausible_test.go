package jtl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// The issue-31 rows: among the 800 samples of a real JMeter 5.6.3 JTL, one
// stamped 1970, one stamped 2100 and one with an elapsed of 10¹⁵ ms. Each
// is left out by the plausible-times rule, counted and named in run.json's
// notes and import.log; the run keeps the file's own span, so its interval
// records are the seconds of the real samples only — the import builds
// nothing for the 130 years the bad rows would span. Checked on the
// parallel partial path and sample by sample.
func TestImplausibleRowsLeftOut(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(fixtures, "results.jtl"))
	if err != nil {
		t.Fatal(err)
	}
	const tail = ",GET /cart,200,OK,users 1-1,text,true,,139,117,2,2,http://127.0.0.1:18089/cart,131,0,73\n"
	bad := []string{"0,147" + tail, "4102444800000,147" + tail, "1795307669713,1000000000000000" + tail}
	lines := strings.SplitAfter(string(b), "\n")
	var out []string
	for i, l := range lines {
		out = append(out, l)
		if i > 0 && i%200 == 0 && i/200 <= len(bad) {
			out = append(out, bad[i/200-1])
		}
	}
	p := filepath.Join(t.TempDir(), "bad-rows.jtl")
	if err := os.WriteFile(p, []byte(strings.Join(out, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	want := readStats(t, filepath.Join(fixtures, "statistics.json"))["Total"].SampleCount
	now := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC) // the fixture is from 2026-11-21
	clean := importDir(t, filepath.Join(fixtures, "results.jtl"), importer.Options{Now: now}, 2, 4096, false)
	cleanInfo, err := rundir.ReadInfo(clean)
	if err != nil {
		t.Fatal(err)
	}
	for _, perSample := range []bool{false, true} {
		t.Run(fmt.Sprintf("perSample=%v", perSample), func(t *testing.T) {
			dir := importDir(t, p, importer.Options{Now: now}, 2, 4096, perSample)
			info, err := rundir.ReadInfo(dir)
			if err != nil {
				t.Fatal(err)
			}
			var samples, records int64
			secs := map[int64]bool{}
			if err := rundir.ReadIntervals(dir, func(r *rundir.IntervalRecord) error {
				if r.Users == nil && !r.Tx && !r.Derived {
					samples += r.Count
					records++
					secs[r.T] = true
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if samples != want {
				t.Errorf("%d samples imported, want the file's %d good ones", samples, want)
			}
			if !info.Start.Equal(cleanInfo.Start) || !info.End.Equal(*cleanInfo.End) {
				t.Errorf("span %s – %s, want the good rows' %s – %s", info.Start, info.End, cleanInfo.Start, cleanInfo.End)
			}
			for s := range secs {
				if s < cleanInfo.Start.Unix() || s > cleanInfo.End.Unix() {
					t.Errorf("a record at %s, outside the good rows' span", time.Unix(s, 0).UTC())
				}
			}
			note := ""
			for _, n := range info.Notes {
				if strings.Contains(n, "implausible") {
					note = n
				}
			}
			for _, w := range []string{"3 implausible requests left out", "1 stamped before 2000-01-01 (earliest 1970-01-01T00:00:00",
				"1 stamped more than 24 h after the import ran", "latest 2100-01-01T00:00:00", "1 with a response time over 24 h"} {
				if !strings.Contains(note, w) {
					t.Errorf("run.json's note %q lacks %q", note, w)
				}
			}
			log, err := os.ReadFile(filepath.Join(dir, rundir.ImportLogFile))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(log), note) {
				t.Errorf("import.log lacks the note:\n%s", log)
			}
			t.Logf("%d records over %d seconds; %s", records, len(secs), note)
		})
	}
}
