package rundir

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// TestSpareGivenBackAtFirstFailure: the spare room goes at the first failed
// write, which every later write reports again without touching the files.
func TestSpareGivenBackAtFirstFailure(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, &Info{Status: StatusRunning}, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Reserve(); err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(dir, SpareFile)
	if st, err := os.Stat(spare); err != nil || st.Size() != SpareSize {
		t.Fatalf("spare: %v %v", st, err)
	}
	iv := &metrics.Interval{Aggs: map[metrics.Key]*metrics.Agg{}, Raw: [][]byte{[]byte("a line\n")}}
	if err := w.WriteInterval(time.Unix(1, 0), iv, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(spare); err != nil {
		t.Fatalf("spare gone after a good write: %v", err)
	}
	w.samples.Close() // the next write fails, as on a full disk
	first := w.WriteInterval(time.Unix(2, 0), iv, nil, nil)
	if first == nil {
		t.Fatal("write to a closed file succeeded")
	}
	if _, err := os.Stat(spare); !os.IsNotExist(err) {
		t.Fatalf("spare still there after the failure: %v", err)
	}
	if again := w.WriteInterval(time.Unix(3, 0), iv, nil, nil); again != first {
		t.Fatalf("later write: %v, want the first failure %v", again, first)
	}
	w.Close()
}
