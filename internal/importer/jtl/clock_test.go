package jtl

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
)

// TestDetectsTimestampFormat: a JTL written with one of JMeter's common
// timestamp_format patterns is read without --time-format, even when the
// first data row has a quoted field (issue 13 item 4: "0 samples … 1126
// malformed lines" because detection gave up on the quoted row).
func TestDetectsTimestampFormat(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	for _, c := range []struct{ pattern, layout string }{
		{"yyyy/MM/dd HH:mm:ss", "2006/01/02 15:04:05"},
		{"yyyy/MM/dd HH:mm:ss.SSS", "2006/01/02 15:04:05.000"},
		{"yyyy-MM-dd HH:mm:ss", "2006-01-02 15:04:05"},
		{"dd.MM.yyyy HH:mm:ss", "02.01.2006 15:04:05"},
		{"iso", "2006-01-02T15:04:05.000Z07:00"},
	} {
		t.Run(c.pattern, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			b.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,bytes,allThreads\n")
			const n = 300
			for i := range n {
				msg := "OK"
				if i == 0 {
					msg = `"OK, with a comma"` // the first data row is quoted
				}
				ts := t0.Add(time.Duration(i) * 250 * time.Millisecond).Format(c.layout)
				fmt.Fprintf(&b, "%s,%d,GET /a,200,%s,t 1-1,true,100,1\n", ts, 10+i%7, msg)
			}
			path := filepath.Join(t.TempDir(), "r.jtl")
			if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			if c.pattern != "iso" {
				_, err := importFile(t, Config{Path: path}, importer.Options{})
				if err == nil || !strings.Contains(err.Error(), "--tz") {
					t.Fatalf("no zone: %v, want an error naming --tz", err)
				}
			}
			clock, _ := importer.LoadClock("UTC")
			d, err := importFile(t, Config{Path: path}, importer.Options{Clock: clock})
			if err != nil {
				t.Fatal(err)
			}
			if d.Total.Count != n || d.Info.Start.Unix() != t0.Unix() {
				t.Errorf("%d samples from %v, want %d from %v; notes %q", d.Total.Count, d.Info.Start, n, t0, d.Info.Notes)
			}
		})
	}
}

// TestUnknownTimestampFormat: a format that cannot be told names
// --time-format and --tz and quotes the first value; dd/MM against MM/dd
// is not guessed.
func TestUnknownTimestampFormat(t *testing.T) {
	t.Parallel()
	clock, _ := importer.LoadClock("UTC")
	for _, c := range []struct{ first, second, want string }{
		{"Fri May 1 10:00:00 2026", "Fri May 1 10:00:01 2026", `"Fri May 1 10:00:00 2026"`},
		{"01/05/2026 10:00:00", "02/05/2026 10:00:00", "dd/MM/yyyy"},
	} {
		var b strings.Builder
		b.WriteString("timeStamp,elapsed,label,responseCode,success\n")
		fmt.Fprintf(&b, "%s,10,a,200,true\n%s,10,a,200,true\n", c.first, c.second)
		path := filepath.Join(t.TempDir(), "r.jtl")
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := importFile(t, Config{Path: path}, importer.Options{Clock: clock})
		if err == nil || !strings.Contains(err.Error(), "--time-format") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming --time-format and %s", c.first, err, c.want)
		}
	}
}
