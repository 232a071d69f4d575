package k6

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

// fixtureStream is the real k6 v1.8.1 JSON stream of testdata, decompressed.
func fixtureStream(tb testing.TB) []byte {
	tb.Helper()
	f, err := os.Open("testdata/k6-v1.8.1/out.json.gz")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkDecodeStream decodes k6's JSON stream as a chunk of the import
// does: the cost plateau pays per request beside a k6 run (issue 36's
// overhead goal). ns/request is per http_req_duration point, and
// cpu-ns/request the process's CPU time per request.
func BenchmarkDecodeStream(b *testing.B) {
	data := fixtureStream(b)
	reqs := bytes.Count(data, []byte(`{"metric":"http_req_duration","type":"Point"`))
	lbl := importer.NewLabels()
	tp, _ := importer.NewTimeParser("iso8601", importer.Clock{})
	host := primaryHost(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := procCPU()
	for range b.N {
		d := &decoder{labels: lbl.NewCache(), tp: tp, host: host}
		bt := &batch{}
		d.decode(data, 1, bt)
		if len(bt.recs) < reqs {
			b.Fatalf("%d records, %d requests", len(bt.recs), reqs)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reqs), "ns/request")
	// CPU time: on a shared machine wall time counts the waits for a core.
	b.ReportMetric(float64((procCPU()-cpu0).Nanoseconds())/float64(b.N*reqs), "cpu-ns/request")
}

// BenchmarkDecodeCSV decodes k6's CSV output (the executor's: nanosecond
// times) as a chunk of the import does, by the fast path and by
// encoding/csv; per request as BenchmarkDecodeStream.
func BenchmarkDecodeCSV(b *testing.B) {
	data := gunzip(b, csvFixtures+"/out.csv.gz")
	reqs := bytes.Count(data, []byte("\nhttp_req_duration,"))
	cols, err := readCSVHeader(data)
	if err != nil {
		b.Fatal(err)
	}
	lbl := importer.NewLabels()
	tp, _ := importer.NewTimeParser("iso8601", importer.Clock{})
	host := cols.primaryHost(data)
	for _, way := range []struct {
		name   string
		decode func(d *decoder, bt *batch)
	}{
		{"fast", func(d *decoder, bt *batch) { d.decodeCSVFast(data, 1, cols, bt) }},
		{"encoding-csv", func(d *decoder, bt *batch) { d.decodeCSV(data, 1, cols, bt) }},
	} {
		b.Run(way.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu0 := procCPU()
			for b.Loop() {
				d := &decoder{labels: lbl.NewCache(), tp: tp, host: host}
				bt := &batch{}
				way.decode(d, bt)
				if len(bt.recs) < reqs {
					b.Fatalf("%d records, %d requests", len(bt.recs), reqs)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*reqs), "ns/request")
			b.ReportMetric(float64((procCPU()-cpu0).Nanoseconds())/float64(b.N*reqs), "cpu-ns/request")
		})
	}
}

// BenchmarkDecodeCSVPeak decodes k6's CSV as plateau has k6 write it
// (microsecond times, only the system tags the import reads) at its peak
// — a real run's first 2,000 requests — in the import's 256 KB pieces:
// the decoder's share of plateau's CPU beside k6 (docs/performance.md).
func BenchmarkDecodeCSVPeak(b *testing.B) {
	data := gunzip(b, "testdata/k6-v1.8.1-peak/out.csv.gz")
	reqs := bytes.Count(data, []byte("\nhttp_req_duration,"))
	cols, err := readCSVHeader(data)
	if err != nil {
		b.Fatal(err)
	}
	lbl := importer.NewLabels()
	tp, _ := importer.NewTimeParser("iso8601", importer.Clock{})
	d := &decoder{labels: lbl.NewCache(), tp: tp, host: cols.primaryHost(data)}
	var pieces [][]byte
	for rest := data; len(rest) > 0; {
		k := bytes.LastIndexByte(rest[:min(len(rest), chunkSize)], '\n') + 1
		pieces, rest = append(pieces, rest[:k]), rest[k:]
	}
	bt := &batch{}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	cpu0 := procCPU()
	for b.Loop() {
		line, n := int64(1), 0
		for _, p := range pieces {
			bt.reset()
			line = d.decodeCSVRows(p, line, cols, bt, bytes.IndexByte(p, '"'))
			n += len(bt.recs)
		}
		if n != reqs {
			b.Fatalf("%d records, %d requests", n, reqs)
		}
	}
	b.ReportMetric(float64((procCPU()-cpu0).Nanoseconds())/float64(b.N*reqs), "cpu-ns/request")
}
