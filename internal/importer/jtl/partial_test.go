package jtl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
)

// writeMessyJTL writes a default-columns CSV JTL of n rows that exercises
// everything the per-chunk aggregation must merge exactly: rows out of
// order (most within the aggregator's window, some far behind it),
// transaction and empty controller samples, many distinct failure messages
// in one second (beyond the per-second bound of kinds), quoted fields with
// delimiters and newlines, malformed lines, and thread counts that change.
func writeMessyJTL(t *testing.T, path string, n int, seed uint64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("timeStamp,elapsed,label,responseCode,responseMessage,threadName,dataType,success,failureMessage,bytes,sentBytes,grpThreads,allThreads,URL,Latency,IdleTime,Connect\n")
	r := rand.New(rand.NewPCG(seed, 7))
	ts := int64(1700000000000)
	labels := []string{"home", "login", `"GET /a,b"`, "search", "cart", "checkout", "api/items", "static"}
	for i := range n {
		ts += int64(r.IntN(4))
		start := ts - int64(r.IntN(3000)) // within the 5 s window
		if r.IntN(500) == 0 {
			start = ts - 20000 // far behind: the chunk is added sample by sample
		}
		el := int64(r.ExpFloat64() * 200)
		threads := 5 + (ts-1700000000000)/20000
		lb := labels[r.IntN(len(labels))]
		code, msg, ok, fail := "200", "OK", "true", ""
		switch x := r.IntN(100); {
		case x < 3:
			code, msg, ok, fail = "500", "Internal Server Error", "false", "Test failed: code expected 200"
		case x < 4:
			code, msg, ok, fail = "Non HTTP response code: java.net.SocketTimeoutException", "Non HTTP response message: Read timed out", "false", ""
		case x < 5:
			lb, msg = "Transaction "+strconv.Itoa(r.IntN(2)), "Number of samples in transaction : 3, number of failing samples : 0"
		case x == 5 && r.IntN(4) == 0:
			lb, msg = "Transaction 0", "Number of samples in transaction : 0, number of failing samples : 0"
		}
		if i%5000 == 2500 { // a burst of 50 kinds of failure in one second
			for k := range 50 {
				fmt.Fprintf(w, "%d,%d,burst,200,OK,T 1-1,text,false,check %c%c failed,10,10,%d,%d,http://h/b,1,0,0\n",
					start, el, 'a'+k%26, 'A'+k/26, threads, threads)
			}
		}
		switch {
		case i%997 == 3:
			w.WriteString("1700000000000,12,short line\n")
			continue
		case i%1499 == 7:
			fmt.Fprintf(w, "%d,%d,%s,200,OK,T 1-1,text,true,\"a quoted\nnewline, and \"\"quotes\"\"\",1,1,%d,%d,http://h/q,1,0,0\n", start, el, lb, threads, threads)
			continue
		case i%2003 == 11:
			fmt.Fprintf(w, "17x00,%d,%s,200,OK,T 1-1,text,true,,1,1,%d,%d,http://h/q,1,0,0\n", el, lb, threads, threads)
			continue
		}
		fmt.Fprintf(w, "%d,%d,%s,%s,%s,Thread Group 1-%d,text,%s,%s,%d,%d,%d,%d,http://127.0.0.1/%d,%d,0,%d\n",
			start, el, lb, code, msg, 1+r.IntN(9), ok, fail, 100+r.IntN(5000), 100+r.IntN(50), threads, threads, i%7, el/2, r.IntN(3))
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPartialsEqualSampleBySample imports the same files twice — once
// aggregating sample by sample on one goroutine (the reference), once with
// per-chunk aggregates built in parallel on small chunks and merged — and
// requires identical run directories: intervals.ndjson, samples.jtl,
// run.json and import.log (less the wall-clock time) byte for byte.
var runIDLine = regexp.MustCompile(`(?m)^\s*"id": "[0-9a-f]+",\n`)

func TestPartialsEqualSampleBySample(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	messy := filepath.Join(dir, "messy.jtl")
	writeMessyJTL(t, messy, 30000, 1)
	ordered := filepath.Join(dir, "ordered.jtl")
	if _, err := writeSyntheticJTL(ordered, 2<<20); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		path string
		opt  importer.Options
	}{
		{"ordered", ordered, importer.Options{DerivePhases: true, MinPhase: 5 * time.Second}},
		{"messy", messy, importer.Options{DerivePhases: true, MinPhase: 5 * time.Second, KeepSamples: true}},
		{"messy-window", messy, importer.Options{From: time.UnixMilli(1700000010000), To: time.UnixMilli(1700000050000),
			Phases: []core.Phase{{Name: "one", Start: time.UnixMilli(1700000000000), End: time.UnixMilli(1700000030000)},
				{Name: "two", Start: time.UnixMilli(1700000030000), End: time.UnixMilli(1700000090000)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ref := importDir(t, tc.path, tc.opt, 1, 0, true)
			for _, chunk := range []int{8 << 10, 64 << 10} {
				src, got := importDirSource(t, tc.path, tc.opt, 3, chunk, false)
				if src.merged == 0 {
					t.Errorf("chunk %d: no chunk was merged as a partial aggregate", chunk)
				}
				if tc.name != "ordered" && src.redone == 0 {
					t.Errorf("chunk %d: no chunk was added sample by sample, though samples are far out of order", chunk)
				}
				for _, name := range []string{"intervals.ndjson", "samples.jtl", "run.json", "import.log"} {
					a, b := readOrEmpty(t, filepath.Join(ref, name)), readOrEmpty(t, filepath.Join(got, name))
					if name == "import.log" {
						_, a, _ = bytes.Cut(a, []byte{'\n'})
						_, b, _ = bytes.Cut(b, []byte{'\n'})
					}
					if name == "run.json" { // every run directory gets its own random id
						a, b = runIDLine.ReplaceAll(a, nil), runIDLine.ReplaceAll(b, nil)
					}
					if !bytes.Equal(a, b) {
						t.Errorf("chunk %d: %s differs (%d vs %d bytes):\n%s", chunk, name, len(a), len(b), firstDiff(a, b))
					}
				}
			}
		})
	}
}

func importDir(t *testing.T, path string, opt importer.Options, workers, chunk int, perSample bool) string {
	t.Helper()
	_, dir := importDirSource(t, path, opt, workers, chunk, perSample)
	return dir
}

func importDirSource(t *testing.T, path string, opt importer.Options, workers, chunk int, perSample bool) (*Source, string) {
	t.Helper()
	opt.Dir = filepath.Join(t.TempDir(), "run")
	opt.Workers = workers
	opt.Command = []string{"plateau", "import"}
	run, err := importer.NewRun(opt)
	if err != nil {
		t.Fatal(err)
	}
	src := New(Config{Path: path, ChunkSize: chunk})
	src.perSample = perSample
	if err := src.Import(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	var info map[string]any
	if err := json.Unmarshal(readOrEmpty(t, filepath.Join(opt.Dir, "run.json")), &info); err != nil {
		t.Fatal(err)
	}
	return src, opt.Dir
}

func readOrEmpty(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

func firstDiff(a, b []byte) string {
	al, bl := bytes.Split(a, []byte{'\n'}), bytes.Split(b, []byte{'\n'})
	for i := range min(len(al), len(bl)) {
		if !bytes.Equal(al[i], bl[i]) {
			return fmt.Sprintf("line %d:\n  %.300s\n  %.300s", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("%d vs %d lines", len(al), len(bl))
}
