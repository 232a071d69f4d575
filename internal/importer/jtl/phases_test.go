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

// TestSteadyThreadsOnePhase: a steady 5-thread run with seconds in which no
// sample completed is one phase "5 threads" holding every sample (issue 13
// item 3: it became "5 threads (1)…(4)" and 780 samples fell in no phase).
func TestSteadyThreadsOnePhase(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,success,bytes,grpThreads,allThreads\n")
	t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	n := 0
	for s := int64(0); s < 200; s++ {
		if s%40 >= 37 { // three seconds in every forty without a completed sample
			continue
		}
		for k := int64(0); k < 4; k++ {
			fmt.Fprintf(&b, "%d,%d,GET /a,200,OK,tg 1-%d,true,100,5,5\n", t0+s*1000+k*200, 50, k+1)
			n++
		}
	}
	path := filepath.Join(t.TempDir(), "steady.jtl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := importFile(t, Config{Path: path}, importer.Options{DerivePhases: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Phases) != 1 || d.Phases[0].Name != "5 threads" {
		t.Fatalf("phases %+v, want one: 5 threads", d.Phases)
	}
	if d.PhaseTotal[0].Count != int64(n) {
		t.Errorf("%d of %d samples in the phase", d.PhaseTotal[0].Count, n)
	}
}
