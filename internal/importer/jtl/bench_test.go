package jtl

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

// writeSyntheticJTL writes a default-columns CSV JTL of about size bytes:
// 20 labels, ~2000 samples per second, 1 % failures, log-normal-ish times,
// thread counts stepping up every 10 minutes.
func writeSyntheticJTL(path string, size int64) (int64, error) {
	return writeSyntheticRows(path, size, 0)
}

// writeSyntheticRows is writeSyntheticJTL stopping after rows samples
// instead when rows > 0.
func writeSyntheticRows(path string, size, rows int64) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
	r := rand.New(rand.NewPCG(1, 2))
	ts := int64(1557738614000)
	var written, n int64
	var line []byte
	for (rows > 0 && n < rows) || (rows <= 0 && written < size) {
		n++
		ts += int64(r.IntN(2)) // ~2000/s
		lb := r.IntN(20)
		el := int64(1 + r.ExpFloat64()*40*float64(1+lb%4))
		threads := 10 + 10*((ts-1557738614000)/600000)
		line = strconv.AppendInt(line[:0], ts, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, el, 10)
		line = fmt.Appendf(line, ",GET /api/resource%02d,", lb)
		if r.IntN(100) == 0 {
			line = append(line, `500,Internal Server Error,Thread Group 1-3,text,false,"Test failed: code expected 200, got 500",512,128,`...)
		} else {
			line = append(line, "200,OK,Thread Group 1-3,text,true,,2048,128,"...)
		}
		line = strconv.AppendInt(line, threads, 10)
		line = append(line, ',')
		line = strconv.AppendInt(line, threads, 10)
		line = fmt.Appendf(line, ",http://127.0.0.1:8080/api/resource%02d,%d,0,%d\n", lb, el/2, r.IntN(3))
		w.Write(line)
		written += int64(len(line))
	}
	if err := w.Flush(); err != nil {
		return 0, err
	}
	return n, f.Close()
}

// BenchmarkImportJTL imports a generated JTL of PLATEAU_BENCH_JTL_MB
// megabytes (default 64), or of PLATEAU_BENCH_JTL_ROWS samples when that is
// set, with all cores; it reports MB/s and samples/s.
func BenchmarkImportJTL(b *testing.B) {
	mb := int64(64)
	if v := os.Getenv("PLATEAU_BENCH_JTL_MB"); v != "" {
		mb, _ = strconv.ParseInt(v, 10, 64)
	}
	var rows int64
	if v := os.Getenv("PLATEAU_BENCH_JTL_ROWS"); v != "" {
		rows, _ = strconv.ParseInt(v, 10, 64)
	}
	dir := b.TempDir()
	// PLATEAU_BENCH_JTL names a file to import, generated there when it
	// does not exist (to feed the same file to jmeter -g).
	path := os.Getenv("PLATEAU_BENCH_JTL")
	if path == "" {
		path = filepath.Join(dir, "big.jtl")
	}
	var n int64
	if _, err := os.Stat(path); err != nil {
		if n, err = writeSyntheticRows(path, mb<<20, rows); err != nil {
			b.Fatal(err)
		}
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(st.Size())
	b.ResetTimer()
	for i := range b.N {
		run, err := importer.NewRun(importer.Options{Dir: filepath.Join(dir, "run"+strconv.Itoa(i)), DerivePhases: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := New(Config{Path: path}).Import(context.Background(), run); err != nil {
			b.Fatal(err)
		}
		if err := run.Close(); err != nil {
			b.Fatal(err)
		}
	}
	if n > 0 {
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
	}
}

// TestSyntheticAgainstOracle imports a generated file of a few MB with
// small chunks on several workers and checks totals against a plain
// sequential reading of the same file.
func TestSyntheticAgainstOracle(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "synthetic.jtl")
	n, err := writeSyntheticJTL(path, 3<<20)
	if err != nil {
		t.Fatal(err)
	}
	d, err := importFile(t, Config{Path: path, ChunkSize: 64 << 10}, importer.Options{Workers: 4, DerivePhases: true, MinPhase: 5e9})
	if err != nil {
		t.Fatal(err)
	}
	vals := oracleElapsed(t, path)
	var sum float64
	for _, v := range vals["Total"] {
		sum += v
	}
	if d.Total.Count != n || int64(len(vals["Total"])) != n {
		t.Fatalf("%d samples, oracle %d, written %d", d.Total.Count, len(vals["Total"]), n)
	}
	if got, want := d.Total.MeanMs(), sum/float64(n); got-want > 1e-9 || want-got > 1e-9 {
		t.Errorf("mean %v, oracle %v", got, want)
	}
	if len(d.Phases) == 0 || d.Phases[0].Users != 10 {
		t.Errorf("derived phases %+v, want the first at 10 threads", d.Phases)
	}
	for i, p := range d.Phases {
		if d.PhaseTotal[i].Count == 0 {
			t.Errorf("phase %s has no samples", p.Name)
		}
	}
}

// BenchmarkDecodeChunk decodes one 4 MB chunk of the generated JTL into a
// partial aggregate, the work each import goroutine does per chunk; it
// reports ns per row.
func BenchmarkDecodeChunk(b *testing.B) {
	dir := b.TempDir()
	path := filepath.Join(dir, "chunk.jtl")
	if _, err := writeSyntheticJTL(path, importer.DefaultChunkSize); err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	run, err := importer.NewRun(importer.Options{Dir: filepath.Join(dir, "run")})
	if err != nil {
		b.Fatal(err)
	}
	s := New(Config{Path: path})
	l, _, err := s.layoutOf(data)
	if err != nil {
		b.Fatal(err)
	}
	tp, err := s.timeParser(data, l, true, run.Clock())
	if err != nil {
		b.Fatal(err)
	}
	agg := run.Requests("jmeter")
	agg.CollectFigures(importer.JMeterFigures)
	d := &csvDecoder{l: l, labels: agg.Labels().NewCache(), tp: tp, tpSet: true, cfg: &s.cfg}
	p := agg.NewPartial()
	rows := bytes.Count(data, []byte{'\n'}) - 1
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		bt := &batch{part: p}
		d.decode(&importer.Chunk{Data: data, Line: 1}, true, bt)
		if bt.probs.Count != 0 {
			b.Fatal("malformed lines")
		}
		p.Seal()
		p.Discard()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}
