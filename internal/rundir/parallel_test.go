package rundir

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// writeLines writes an intervals file of n label records (every 40th with
// a label longer than a read block) and returns its lines.
func writeLines(t *testing.T, dir string, n int) [][]byte {
	t.Helper()
	var buf bytes.Buffer
	var lines [][]byte
	for i := range n {
		a := metrics.NewAgg()
		for j := range 1 + i%50 {
			a.AddValue(int64(100 + j*j*37 + i))
		}
		label := fmt.Sprintf("GET /x/%d", i%13)
		if i%40 == 3 {
			label = strings.Repeat("long ", 60_000) // 300 KB: beyond a 256 KiB block
		}
		if i%11 == 0 {
			a.AddError(metrics.ErrKey{Status: 503, Message: "HTTP 503 <busy>"}, 2)
		}
		r, err := RecordOf(1700000000+int64(i/5), metrics.Key{Workload: "w", Phase: i % 3, Label: label}, a)
		if err != nil {
			t.Fatal(err)
		}
		l := append(r.AppendJSON(nil), '\n')
		if i%17 == 5 {
			l = append(append([]byte(nil), `{"t":1,"ph":-1,"users":{"w":3}}`...), '\n')
		}
		lines = append(lines, l)
		buf.Write(l)
	}
	if err := os.WriteFile(filepath.Join(dir, IntervalsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return lines
}

// TestReadIntervalsDecodedIsReadIntervals: the parallel reader gives the
// records ReadIntervals gives, in file order, their histograms decoded —
// across blocks, with lines longer than a block.
func TestReadIntervalsDecodedIsReadIntervals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeLines(t, dir, 400)
	var want []IntervalRecord
	if err := ReadIntervals(dir, func(r *IntervalRecord) error { want = append(want, *r); return nil }); err != nil {
		t.Fatal(err)
	}
	var dec metrics.HistDecoder
	i := 0
	err := ReadIntervalsDecoded(dir, func(d *DecodedRecord) error {
		w := want[i]
		var sp metrics.Sparse
		if w.Hist != "" {
			if err := dec.Decode(w.Hist, &sp); err != nil {
				return err
			}
		}
		hist := w.Hist
		w.Hist = ""
		if !reflect.DeepEqual(d.IntervalRecord, w) {
			return fmt.Errorf("record %d differs:\n got %.300v\nwant %.300v", i, d.IntervalRecord, w)
		}
		same := func(a, b []int64) bool { return len(a) == len(b) && (len(a) == 0 || reflect.DeepEqual(a, b)) }
		if d.Hist.Total != sp.Total || !same(d.Hist.Counts, sp.Counts) || !same(d.Hist.Values, sp.Values) || !same(d.Hist.High, sp.High) || (hist == "") != (d.Hist.Total == 0) {
			return fmt.Errorf("record %d: histogram differs (%d values, want %d)", i, d.Hist.Total, sp.Total)
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != len(want) || i != 400 {
		t.Fatalf("%d records, ReadIntervals gave %d", i, len(want))
	}
}

// TestReadIntervalsDecodedErrors: a torn last line is ignored; a bad line
// anywhere else is an error naming the file and its line, after the
// records before it.
func TestReadIntervalsDecodedErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := writeLines(t, dir, 300)
	path := filepath.Join(dir, IntervalsFile)
	count := func() (int, error) {
		n := 0
		err := ReadIntervalsDecoded(dir, func(*DecodedRecord) error { n++; return nil })
		return n, err
	}
	// Torn tail.
	torn := append(bytes.Join(lines, nil), lines[0][:40]...)
	if err := os.WriteFile(path, torn, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := count(); err != nil || n != 300 {
		t.Fatalf("torn tail: %d records, %v", n, err)
	}
	// A bad line deep in the file (line 251).
	bad := append([][]byte(nil), lines...)
	bad[250] = []byte("{\"t\":1,\"n\":x}\n")
	if err := os.WriteFile(path, bytes.Join(bad, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	n, err := count()
	if err == nil || !strings.Contains(err.Error(), path+":251:") || n != 250 {
		t.Fatalf("bad line 251: %d records before the error, %v", n, err)
	}
	// A bad histogram names its line too.
	bad[250] = []byte("{\"t\":1,\"n\":1,\"hist\":\"HISTFAAAAB\"}\n")
	if err := os.WriteFile(path, bytes.Join(bad, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err = count(); err == nil || !strings.Contains(err.Error(), path+":251:") || n != 250 {
		t.Fatalf("bad histogram on line 251: %d records before the error, %v", n, err)
	}
	// Empty file: no records, no error.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := count(); err != nil || n != 0 {
		t.Fatalf("empty file: %d records, %v", n, err)
	}
}
