package accesslog

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
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
