package merge

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// WaitOptions bounds Wait.
type WaitOptions struct {
	// Timeout is the longest wait.
	Timeout time.Duration
	// Quiet: once one segment has finished, a segment still unfinished
	// whose files have not changed for this long (or that never appeared)
	// is taken for dead — a running generator appends every second.
	// Default 15 s.
	Quiet time.Duration
	// Poll is the check interval; default 1 s.
	Poll time.Duration
}

// Wait blocks until every directory holds a finished run (run.json status
// other than running), until the unfinished ones have gone quiet after
// another finished, or until the timeout; it never fails for a missing or
// dead segment — Merge reports those. It returns the directories still
// unfinished, or ctx's error.
func Wait(ctx context.Context, dirs []string, o WaitOptions) ([]string, error) {
	if o.Quiet <= 0 {
		o.Quiet = 15 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	deadline := time.Now().Add(o.Timeout)
	var firstDone time.Time
	for {
		var open []string
		now := time.Now()
		quiet := true
		for _, d := range dirs {
			in, err := rundir.ReadInfo(d)
			if err == nil && in.Status != rundir.StatusRunning {
				if firstDone.IsZero() {
					firstDone = now
				}
				continue
			}
			open = append(open, d)
			last := lastChange(d)
			if last.Before(firstDone) {
				last = firstDone
			}
			if firstDone.IsZero() || now.Sub(last) < o.Quiet {
				quiet = false
			}
		}
		if len(open) == 0 || quiet || !now.Before(deadline) {
			return open, nil
		}
		t := time.NewTimer(min(o.Poll, time.Until(deadline)))
		select {
		case <-ctx.Done():
			t.Stop()
			return open, ctx.Err()
		case <-t.C:
		}
	}
}

// lastChange is the latest modification of the files a generator appends
// while it runs (zero when there are none).
func lastChange(dir string) time.Time {
	var last time.Time
	for _, f := range []string{rundir.IntervalsFile, rundir.InfoFile, rundir.SamplesFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err == nil && st.ModTime().After(last) {
			last = st.ModTime()
		}
	}
	return last
}
