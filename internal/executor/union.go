package executor

import (
	"bufio"
	"container/heap"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// ResultFile is the file in a run directory's tool/ that holds the raw
// results of a tool whose segments can be joined (Union), or "".
func ResultFile(tool Tool) string {
	switch tool.(type) {
	case jmeter:
		return "results.jtl"
	case k6:
		return K6Results
	case gatling:
		return gatlingUnion
	}
	return ""
}

// gatlingUnion is where Union puts the union of Gatling's simulation.logs,
// in tool/, so that the Gatling source finds it as it finds Gatling's own.
const gatlingUnion = "results/plateau-union/simulation.log"

// ByName is the tool of that name ("jmeter", "k6", "locust", "gatling").
func ByName(name string) (Tool, error) {
	for _, t := range []Tool{jmeter{}, k6{}, locust{}, gatling{}} {
		if t.Name() == name {
			return t, nil
		}
	}
	return nil, fmt.Errorf("no tool %q", name)
}

// unionKeys are, per tool, the CSV column that orders the rows (the
// sample's time) and the column holding the instance's user count, which
// in the union becomes the sum over the instances (each instance counts
// only its own).
var unionKeys = map[string]struct{ time, users, metric string }{
	"jmeter": {time: "timeStamp", users: "allThreads"},
	"k6":     {time: "timestamp", users: "metric_value", metric: "metric_name"},
}

// Union writes into out (a run directory's tool/) the union of the raw
// result files that several instances of tool wrote in the tool/
// directories ins, one per generator: JMeter's CSV JTLs, k6's CSV outputs.
// The rows are interleaved in time order (a k-way merge on the time
// column, ties in generator order; each instance's own order kept), so
// that the file reads as one instance's would, and the same importer —
// or the tool itself (jmeter -g) — computes its whole-run figures on it.
// The user count is the one column rewritten: JMeter's allThreads and
// k6's vus points each count their own instance, so in the union each is
// the sum of every instance's latest count. A missing file is skipped and
// named in missing; files with different columns are refused.
func Union(tool Tool, ins []string, out string) (rows int64, missing []string, err error) {
	if _, ok := tool.(gatling); ok {
		return unionGatling(ins, out)
	}
	name := ResultFile(tool)
	keys, ok := unionKeys[tool.Name()]
	if name == "" || !ok {
		return 0, nil, fmt.Errorf("%s: its results of several generators cannot be joined", tool.Name())
	}
	var srcs []*unionSrc
	defer func() {
		for _, s := range srcs {
			s.f.Close()
		}
	}()
	var header []string
	var headerFrom string
	for i, d := range ins {
		path := filepath.Join(d, name)
		f, err := os.Open(path)
		if errors.Is(err, os.ErrNotExist) {
			missing = append(missing, path)
			continue
		}
		if err != nil {
			return 0, nil, err
		}
		r := csv.NewReader(bufio.NewReaderSize(f, 1<<16))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		s := &unionSrc{f: f, r: r, path: path, gen: i}
		srcs = append(srcs, s)
		h, err := r.Read()
		if err == io.EOF {
			continue // an instance that wrote nothing, not even its header
		}
		if err != nil {
			return 0, nil, fmt.Errorf("%s: header: %w", path, err)
		}
		h = slices.Clone(h)
		if header == nil {
			header, headerFrom = h, path
		} else if !slices.Equal(header, h) {
			return 0, nil, fmt.Errorf("%s and %s have different columns (%d and %d): results of different tool settings cannot be joined", headerFrom, path, len(header), len(h))
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return 0, nil, err
	}
	dst := filepath.Join(out, name)
	f, err := os.Create(dst)
	if err != nil {
		return 0, nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	w := csv.NewWriter(bw)
	defer func() {
		w.Flush()
		err = errors.Join(err, w.Error(), bw.Flush(), f.Close())
	}()
	if header == nil {
		return 0, missing, nil
	}
	col := func(n string) int { return slices.Index(header, n) }
	ti, ui, mi := col(keys.time), col(keys.users), col(keys.metric)
	if ti < 0 {
		return 0, nil, fmt.Errorf("%s: no %s column to order the rows by", headerFrom, keys.time)
	}
	if err := w.Write(header); err != nil {
		return 0, nil, err
	}
	h := &unionHeap{}
	for _, s := range srcs {
		if ok, err := s.next(ti); err != nil {
			return 0, nil, err
		} else if ok {
			heap.Push(h, s)
		}
	}
	last := make([]int64, len(ins)) // each instance's latest user count
	for h.Len() > 0 {
		s := (*h)[0]
		rec := s.rec
		if ui >= 0 && ui < len(rec) && (mi < 0 || mi < len(rec) && rec[mi] == "vus") {
			if v, err := strconv.ParseFloat(rec[ui], 64); err == nil {
				last[s.gen] = int64(v)
				var sum int64
				for _, n := range last {
					sum += n
				}
				if mi >= 0 {
					rec[ui] = strconv.FormatFloat(float64(sum), 'f', 6, 64) // as k6 writes it
				} else {
					rec[ui] = strconv.FormatInt(sum, 10)
				}
			}
		}
		if err := w.Write(rec); err != nil {
			return rows, nil, err
		}
		rows++
		ok, err := s.next(ti)
		if err != nil {
			return rows, nil, err
		}
		if ok {
			heap.Fix(h, 0)
		} else {
			heap.Pop(h)
		}
	}
	return rows, missing, nil
}

type unionSrc struct {
	f    *os.File
	r    *csv.Reader
	path string
	gen  int
	rec  []string
	key  int64
}

// next reads the source's next row; a row whose time does not parse keeps
// the previous row's place (the importer counts it as malformed).
func (s *unionSrc) next(ti int) (bool, error) {
	rec, err := s.r.Read()
	if err == io.EOF {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", s.path, err) // a csv.ParseError names the line
	}
	s.rec = rec
	if ti < len(rec) {
		if k, err := strconv.ParseInt(rec[ti], 10, 64); err == nil {
			s.key = k
		}
	}
	return true, nil
}

type unionHeap []*unionSrc

func (h unionHeap) Len() int { return len(h) }
func (h unionHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].gen < h[j].gen
}
func (h unionHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *unionHeap) Push(x any)   { *h = append(*h, x.(*unionSrc)) }
func (h *unionHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// unionGatling writes the union of Gatling's simulation.logs (its text
// format, 3.x before 3.12): the RUN record of the earliest start, the
// simulation's ASSERTION records once, and every other record once,
// interleaved by its time (USER: its time; REQUEST and GROUP: their end;
// ERROR: its time), each log's own order kept. Gatling counts active users
// from the USER records, so the union's are the sum of the instances'.
func unionGatling(ins []string, out string) (rows int64, missing []string, err error) {
	var srcs []*unionLines
	defer func() {
		for _, s := range srcs {
			s.f.Close()
		}
	}()
	var run []string
	var asserts []string
	seenAssert := map[string]bool{}
	for i, d := range ins {
		path := gatlingLog(d)
		if path == "" {
			missing = append(missing, filepath.Join(d, "results", "*", "simulation.log"))
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			return 0, nil, err
		}
		s := &unionLines{f: f, r: bufio.NewReaderSize(f, 1<<16), path: path, gen: i}
		srcs = append(srcs, s)
	}
	h := &linesHeap{}
	for _, s := range srcs {
		for {
			ok, err := s.next()
			if err != nil {
				return 0, nil, err
			}
			if !ok {
				break
			}
			switch s.kind {
			case "RUN":
				// The run's start: the earliest instance's.
				if len(s.fields) > 3 && (run == nil || s.key < mustInt(run[3])) {
					run = s.fields
				}
				continue
			case "ASSERTION":
				if !seenAssert[s.line] {
					seenAssert[s.line] = true
					asserts = append(asserts, s.line)
				}
				continue
			}
			heap.Push(h, s)
			break
		}
	}
	dst := filepath.Join(out, filepath.FromSlash(gatlingUnion))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return 0, nil, err
	}
	f, err := os.Create(dst)
	if err != nil {
		return 0, nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	defer func() { err = errors.Join(err, bw.Flush(), f.Close()) }()
	if run != nil {
		bw.WriteString(strings.Join(run, "\t") + "\n")
	}
	for _, a := range asserts {
		bw.WriteString(a + "\n")
	}
	for h.Len() > 0 {
		s := (*h)[0]
		bw.WriteString(s.line + "\n")
		rows++
		for {
			ok, err := s.next()
			if err != nil {
				return rows, nil, err
			}
			if !ok {
				heap.Pop(h)
				break
			}
			if s.kind == "RUN" {
				continue // a second RUN record in one log: not Gatling's
			}
			if s.kind == "ASSERTION" {
				if !seenAssert[s.line] {
					seenAssert[s.line] = true
					bw.WriteString(s.line + "\n")
				}
				continue
			}
			heap.Fix(h, 0)
			break
		}
	}
	return rows, missing, nil
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

type unionLines struct {
	f      *os.File
	r      *bufio.Reader
	path   string
	gen    int
	line   string
	fields []string
	kind   string
	key    int64
}

// next reads the log's next record and its time; a record whose time does
// not parse keeps the previous record's place (the importer counts it).
func (s *unionLines) next() (bool, error) {
	for {
		l, err := s.r.ReadString('\n')
		if err != nil && err != io.EOF {
			return false, fmt.Errorf("%s: %w", s.path, err)
		}
		if l == "" && err == io.EOF {
			return false, nil
		}
		l = strings.TrimRight(l, "\r\n")
		if l == "" {
			continue
		}
		s.line, s.fields = l, strings.Split(l, "\t")
		s.kind = s.fields[0]
		at := map[string]int{"RUN": 3, "USER": 3, "REQUEST": 4, "GROUP": 3, "ERROR": 2}[s.kind]
		if at > 0 && at < len(s.fields) {
			if k, err := strconv.ParseInt(s.fields[at], 10, 64); err == nil {
				s.key = k
			}
		}
		return true, nil
	}
}

type linesHeap []*unionLines

func (h linesHeap) Len() int { return len(h) }
func (h linesHeap) Less(i, j int) bool {
	if h[i].key != h[j].key {
		return h[i].key < h[j].key
	}
	return h[i].gen < h[j].gen
}
func (h linesHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *linesHeap) Push(x any)   { *h = append(*h, x.(*unionLines)) }
func (h *linesHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
