package engine_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// fullDisk is a results writer whose writes succeed okFor times and then
// fail as a full disk does; it counts the calls.
type fullDisk struct {
	okFor  int
	calls  atomic.Int32
	failed atomic.Int32
}

func (w *fullDisk) WriteInterval(time.Time, *metrics.Interval, map[string]int, map[string]int64) error {
	if int(w.calls.Add(1)) <= w.okFor {
		return nil
	}
	w.failed.Add(1)
	return &os.PathError{Op: "write", Path: "samples.jtl", Err: syscall.ENOSPC}
}

// TestStorageFailureStopsRun: the first failed write of the results stops
// the run (issue 31 item 7: with a full disk the whole planned load was
// sent, the results lost from the moment the disk filled). The plan asks
// for 10⁸ requests; the run ends after the failure, having sent a small
// part of them, says why, and hands back the results it held in memory:
// as many requests as the server answered.
func TestStorageFailureStopsRun(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "ok")
	}))
	defer srv.Close()
	const planned = 2 * 50_000_000
	pf := filepath.Join(t.TempDir(), "plan.yaml")
	os.WriteFile(pf, []byte(`name: disk
target: `+srv.URL+`
workloads:
  w:
    scenario:
      - request: {name: get, url: /}
    load: {users: 2, iterations: 50000000}
`), 0o644)
	p, err := plan.LoadFile(pf, plan.Options{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	info := &rundir.Info{Tool: "plateau", Name: p.Name, Status: rundir.StatusRunning}
	disk := &fullDisk{okFor: 1}
	var told []error
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	res, err := engine.Run(ctx, engine.Config{Plan: p, Writer: disk, Info: info, Seed: 1,
		StorageFailed: func(err error) { told = append(told, err) }})
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatal("the run went on until the test's own limit")
	}
	if !errors.Is(res.StorageErr, syscall.ENOSPC) {
		t.Fatalf("StorageErr = %v, want the disk's ENOSPC", res.StorageErr)
	}
	if len(told) != 1 || told[0] != res.StorageErr {
		t.Fatalf("StorageFailed called %d times (%v), want once with the error", len(told), told)
	}
	if !strings.Contains(res.Stopped, "writing results failed") || !strings.Contains(res.Stopped, "no space left on device") {
		t.Fatalf("Stopped = %q", res.Stopped)
	}
	if got := disk.calls.Load(); got != int32(disk.okFor)+1 || disk.failed.Load() != 1 {
		t.Fatalf("writer called %d times after its failure, want none", got-int32(disk.okFor)-1)
	}
	n := served.Load()
	if n == 0 || n >= planned {
		t.Fatalf("server answered %d of %d planned requests", n, planned)
	}
	// In memory: every request the server answered, none lost with the
	// disk (a request cut off by the stop is still recorded, as aborted).
	if res.Total == nil || res.Total.Count < n || res.Labels["get"] == nil || res.Labels["get"].Count != res.Total.Count {
		t.Fatalf("in-memory results %+v for %d served", res.Total, n)
	}
	t.Logf("stopped after %d of %d planned requests: %s", n, int64(planned), res.Stopped)
}
