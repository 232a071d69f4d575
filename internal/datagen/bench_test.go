package datagen

import (
	"context"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// millionSpec makes 1,000 parents × ~1,000 children (poisson) with eight
// fields each: about a million rows.
const millionSpec = `seed: 1
entities:
  students:
    count: 1000
    fields:
      student_id: seq
      name: name
  responses:
    parent: students
    per_parent: {dist: poisson, mean: 1000}
    fields:
      response_id: seq
      student_id: parent.student_id
      uuid: uuid
      score: {type: float, dist: normal, mean: 50, sd: 10, decimals: 1}
      n: {type: int, min: 1, max: 100}
      kind: {type: choice, values: [a, b, c], weights: [5, 3, 2]}
      at: {type: datetime, from: 2024-01-01, to: 2024-12-31}
      label: {type: template, template: "${parent.name} #${response_id}"}
`

// BenchmarkMillionRows generates about a million rows (CSV) per
// iteration, reporting rows/s and the peak heap seen while it runs.
func BenchmarkMillionRows(b *testing.B) {
	for _, format := range []string{"csv", "ndjson"} {
		b.Run(format, func(b *testing.B) {
			s := mustParse(b, "format: "+format+"\n"+millionSpec)
			b.ReportAllocs()
			var rows int64
			var peak uint64
			for b.Loop() {
				stop := samplePeakHeap(&peak)
				r, err := Generate(context.Background(), s, Options{Dir: b.TempDir()})
				stop()
				if err != nil {
					b.Fatal(err)
				}
				rows = r.Rows
			}
			b.ReportMetric(float64(rows), "rows/op")
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}

// samplePeakHeap records the largest HeapAlloc seen every 5 ms until the
// returned stop is called.
func samplePeakHeap(peak *uint64) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for !done.Load() {
			runtime.ReadMemStats(&ms)
			*peak = max(*peak, ms.HeapAlloc)
			time.Sleep(5 * time.Millisecond)
		}
	}()
	return func() { done.Store(true); wg.Wait() }
}

// Memory stays flat in the number of rows: writing ~10 times more rows
// does not raise the peak heap beyond a few MiB of buffers, while the data
// written is tens of MiB.
func TestMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 300,000 rows")
	}
	peak := func(children int) (uint64, int64) {
		spec := mustParse(t, `entities:
  p:
    count: 300
    fields: {id: seq, name: name}
  c:
    parent: p
    per_parent: `+itoa(children)+`
    fields:
      id: seq
      pid: parent.id
      u: uuid
      t: {type: template, template: "${parent.name} ${u} ${u} ${u}"}
`)
		runtime.GC()
		var p uint64
		stop := samplePeakHeap(&p)
		r, err := Generate(context.Background(), spec, Options{Dir: t.TempDir()})
		stop()
		if err != nil {
			t.Fatal(err)
		}
		return p, r.Bytes
	}
	small, _ := peak(100)
	big, bytes := peak(1000)
	t.Logf("peak heap: %.1f MiB for 30,000 rows, %.1f MiB for 300,000 rows (%.0f MiB written)",
		float64(small)/(1<<20), float64(big)/(1<<20), float64(bytes)/(1<<20))
	if bytes < 40<<20 {
		t.Fatalf("only %d bytes written; the test needs more data than the heap bound", bytes)
	}
	if big > small+16<<20 {
		t.Errorf("peak heap grew from %.1f to %.1f MiB with 10× the rows: rows are being held", float64(small)/(1<<20), float64(big)/(1<<20))
	}
}

func itoa(n int) string {
	return strconv.Itoa(n)
}
