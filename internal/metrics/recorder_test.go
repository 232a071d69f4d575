package metrics

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
)

// rawLine is a raw encoder that writes a sample's label and start.
func rawLine(b []byte, s *core.Sample) []byte {
	b = append(b, s.Label...)
	b = append(b, ' ')
	return append(strconv.AppendInt(b, s.Start, 10), '\n')
}

// TestRotateHandsOverEveryLineOnce records into every shard over several
// intervals, reusing the interval as the collector does, and checks that
// each rotation returns exactly the lines recorded since the previous one,
// in shard order, and that the counts agree with them; buffers handed back
// to the shards must not leak lines into the next interval.
func TestRotateHandsOverEveryLineOnce(t *testing.T) {
	r := NewRecorder(3, rawLine)
	var iv *Interval
	n := int64(0)
	for round := 0; round < 5; round++ {
		var want [3]bytes.Buffer
		perShard := 10 + 7*round // growing: the swapped buffers must grow too
		for i := 0; i < perShard; i++ {
			for sh := 0; sh < 3; sh++ {
				n++
				s := core.Sample{Label: "l" + strconv.Itoa(sh), Start: n, Elapsed: 1000}
				r.Record(sh, Key{Workload: "w", Label: s.Label}, &s)
				fmt.Fprintf(&want[sh], "%s %d\n", s.Label, s.Start)
			}
		}
		iv = r.Rotate(iv)
		if len(iv.Raw) != 3 {
			t.Fatalf("round %d: %d raw buffers, want one per shard (3)", round, len(iv.Raw))
		}
		for sh := range 3 {
			if got := string(iv.Raw[sh]); got != want[sh].String() {
				t.Fatalf("round %d shard %d: raw lines\n%q\nwant\n%q", round, sh, got, want[sh].String())
			}
			a := iv.Aggs[Key{Workload: "w", Label: "l" + strconv.Itoa(sh)}]
			if a == nil || a.Count != int64(perShard) {
				t.Fatalf("round %d shard %d: aggregate %+v, want %d samples", round, sh, a, perShard)
			}
		}
	}
	// A rotation with nothing recorded hands over empty buffers.
	iv = r.Rotate(iv)
	for sh, b := range iv.Raw {
		if len(b) != 0 {
			t.Errorf("idle interval: shard %d has %d raw bytes", sh, len(b))
		}
	}
}

// TestRotateSteadyStateAllocatesNothing guards the reason Rotate swaps
// buffers: once the buffers have grown to a second's lines, rotating and
// recording the same volume again allocates nothing.
func TestRotateSteadyStateAllocatesNothing(t *testing.T) {
	r := NewRecorder(4, rawLine)
	k := Key{Workload: "w", Label: "get"}
	s := core.Sample{Label: "get", Start: 1_700_000_000_000, Elapsed: 2000}
	var iv *Interval
	round := func() {
		for i := 0; i < 1000; i++ {
			r.Record(i, k, &s)
		}
		iv = r.Rotate(iv)
	}
	round()
	round() // both buffers of every shard have grown
	if a := testing.AllocsPerRun(20, round); a > 0 {
		t.Errorf("a steady interval of 1,000 samples allocates %.0f times, want 0", a)
	}
}
