package rundir

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

// TestAppendJTLReadsBack writes samples whose text fields need quoting and
// reads the lines back with a CSV reader: every field arrives as written.
func TestAppendJTLReadsBack(t *testing.T) {
	samples := []core.Sample{
		{Label: "get", Thread: "w 1-1", URL: "http://127.0.0.1:8080/", Status: 200, Intended: 1700000000123 * int64(time.Millisecond),
			Elapsed: 12 * time.Millisecond, BytesRecv: 120, BytesSent: 80, GroupThreads: 3, AllThreads: 4},
		{Label: `post "order", 2`, Thread: "w,1", URL: "http://127.0.0.1:8080/q?a=1,2", Status: 500,
			Class: core.StatusClass(500), Message: "HTTP 500\r\nline two"},
	}
	var b []byte
	for i := range samples {
		b = AppendJTL(b, &samples[i])
	}
	rows, err := csv.NewReader(strings.NewReader(JTLHeader + string(b))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for i, s := range samples {
		r := rows[i+1]
		if len(r) != len(rows[0]) {
			t.Fatalf("row %d: %d fields, want %d", i, len(r), len(rows[0]))
		}
		// encoding/csv folds \r\n inside a quoted field to \n.
		msg := strings.ReplaceAll(s.Message, "\r\n", "\n")
		for name, want := range map[string]string{"label": s.Label, "threadName": s.Thread, "URL": s.URL, "failureMessage": msg} {
			if got := r[col[name]]; got != want {
				t.Errorf("row %d %s = %q, want %q", i, name, got, want)
			}
		}
	}
	if got := rows[1][col["timeStamp"]]; got != "1700000000123" {
		t.Errorf("timeStamp %q", got)
	}
}

// BenchmarkAppendJTL is the JTL line of one successful request, as the
// engine writes it for every response.
func BenchmarkAppendJTL(b *testing.B) {
	s := core.Sample{Label: "get", Intended: 1764336000123456789, Start: 1764336000123500000,
		Elapsed: 412 * time.Microsecond, Service: 380 * time.Microsecond, TTFB: 350 * time.Microsecond,
		BytesSent: 62, BytesRecv: 158, Status: 200, Thread: "w 1-17", URL: "http://127.0.0.1:24680/",
		GroupThreads: 50, AllThreads: 50}
	var buf []byte
	for b.Loop() {
		buf = AppendJTL(buf[:0], &s)
	}
}
