package accesslog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
)

// TestCombinedWithoutDuration: nginx's predefined combined format, which
// has no duration field, imports as throughput, status mix, request mix and
// bytes per step, with response-time figures marked as not in this log
// (issue 13 item 7a: it was refused).
func TestCombinedWithoutDuration(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	t0 := time.Date(2019, 5, 13, 11, 10, 0, 0, time.FixedZone("", 2*3600))
	want := map[string]int64{}
	var bytesTotal, n500 int64
	for s := range 60 {
		for k := range 5 {
			path, status, size := "/items/"+fmt.Sprint(100+k), 200, 512+k
			if k == 4 && s%10 == 0 {
				path, status, size = "/cart", 500, 90
				n500++
			}
			label := "GET /items/{id}"
			if path == "/cart" {
				label = "GET /cart"
			}
			want[label]++
			bytesTotal += int64(size)
			fmt.Fprintf(&b, "127.0.0.1 - - [%s] \"GET %s HTTP/1.1\" %d %d \"-\" \"curl/8\"\n",
				t0.Add(time.Duration(s)*time.Second).Format("02/Jan/2006:15:04:05 -0700"), path, status, size)
		}
	}
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := importLogs(t, importer.Options{}, Config{Path: path, Format: "combined", Server: "web1"})
	if err != nil {
		t.Fatal(err)
	}
	s := analysis.Summarize(d, nil)
	for _, row := range s.Labels {
		if !row.NoTimes || row.MeanMs != 0 || row.P95Ms != 0 {
			t.Errorf("%s: response times not marked missing: %+v", row.Label, row)
		}
		if row.Label == "TOTAL" {
			if row.Samples != 300 || row.BytesRecv+row.BytesSent != bytesTotal || row.ThroughputRPS < 4.9 || row.ThroughputRPS > 5.1 {
				t.Errorf("TOTAL %+v, want 300 requests, %d bytes, 5/s", row, bytesTotal)
			}
			continue
		}
		if row.Samples != want[row.Label] {
			t.Errorf("%s: %d requests, want %d", row.Label, row.Samples, want[row.Label])
		}
	}
	if s.Errors.ByStatus["500"] != n500 {
		t.Errorf("status mix %v, want %d × 500", s.Errors.ByStatus, n500)
	}
	noted := false
	for _, n := range d.Info.Notes {
		noted = noted || strings.Contains(n, "not in this log")
	}
	if !noted {
		t.Errorf("no note saying response times are not in this log: %q", d.Info.Notes)
	}
}

// TestFirstPartialSecondInPhase: with --phases bounds finer than the log's
// whole seconds, the lines of the second in which a phase starts belong to
// it (issue 13 item 7b: 4, 20 and 30 lines of the nginx oracle's three
// iterations landed in no iteration); with $msec times the exact rule holds.
func TestFirstPartialSecondInPhase(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2019, 5, 13, 11, 10, 14, 0, time.UTC)
	phases := []core.Phase{{Name: "1", Start: t0.Add(620 * time.Millisecond), End: t0.Add(20 * time.Second)}}
	var local, msec strings.Builder
	n := 0
	for s := range 20 {
		for k := range 4 {
			at := t0.Add(time.Duration(s)*time.Second + 700*time.Millisecond + time.Duration(k)*50*time.Millisecond)
			fmt.Fprintf(&local, "127.0.0.1 - - [%s] \"GET /a HTTP/1.1\" 200 5 \"-\" \"ua\" 0.010\n", at.Format("02/Jan/2006:15:04:05 -0700"))
			fmt.Fprintf(&msec, "%d.%03d GET /a 200 0.010\n", at.Unix(), at.Nanosecond()/1e6)
			n++
		}
	}
	dir := t.TempDir()
	for name, text := range map[string]string{"local.log": local.String(), "msec.log": msec.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct{ file, format string }{
		{"local.log", "combined_rt"},
		{"msec.log", "$msec $request_method $uri $status $request_time"},
	} {
		d, err := importLogs(t, importer.Options{Phases: phases}, Config{Path: filepath.Join(dir, c.file), Format: c.format})
		if err != nil {
			t.Fatal(err)
		}
		if len(d.PhaseTotal) != 1 || d.PhaseTotal[0].Count != int64(n) {
			t.Errorf("%s: %d of %d lines in the phase", c.file, d.PhaseTotal[0].Count, n)
		}
	}
}
