package rundir

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/plateau-perf/plateau/internal/metrics"
)

// DecodedRecord is an interval record with its histogram decoded.
type DecodedRecord struct {
	IntervalRecord
	Hist metrics.Sparse // empty without samples
}

// ReadIntervalsDecoded streams intervals.ndjson to fn in file order like
// ReadIntervals, but parses lines and decodes histograms on all cores: the
// decoding (inflate + varints) dominates reading a long run. fn is called
// from one goroutine; the record it gets is only valid during the call.
func ReadIntervalsDecoded(dir string, fn func(*DecodedRecord) error) error {
	path := filepath.Join(dir, IntervalsFile)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading intervals: %w", err)
	}
	defer f.Close()
	const batchLines = 512
	type batch struct {
		first int // line number of the first line
		lines [][]byte
		recs  []DecodedRecord
		err   error
		last  bool // holds the file's last line (may be torn)
		done  chan struct{}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	todo := make(chan *batch, workers*2)
	order := make(chan *batch, workers*4)
	stop := make(chan struct{})
	defer close(stop)
	for i := 0; i < workers; i++ {
		go func() {
			var dec metrics.HistDecoder
			for b := range todo {
				b.recs = make([]DecodedRecord, len(b.lines))
				for i, l := range b.lines {
					r := &b.recs[i]
					if err := json.Unmarshal(l, &r.IntervalRecord); err != nil {
						torn := b.last && i == len(b.lines)-1 && l[len(l)-1] != '\n'
						if !torn {
							b.err = fmt.Errorf("%s:%d: %w", path, b.first+i, err)
						}
						b.recs = b.recs[:i]
						break
					}
					if r.IntervalRecord.Hist == "" {
						continue
					}
					if err := dec.Decode(r.IntervalRecord.Hist, &r.Hist); err != nil {
						b.err = fmt.Errorf("%s:%d: %w", path, b.first+i, err)
						b.recs = b.recs[:i]
						break
					}
					r.IntervalRecord.Hist = "" // decoded: free the text early
				}
				close(b.done)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(todo)
		br := bufio.NewReaderSize(f, 256<<10)
		line := 1
		for {
			b := &batch{first: line, done: make(chan struct{})}
			var err error
			for len(b.lines) < batchLines {
				var l []byte
				l, err = br.ReadBytes('\n')
				if len(l) > 0 {
					b.lines = append(b.lines, l)
					line++
				}
				if err != nil {
					break
				}
			}
			if err != nil && !errors.Is(err, io.EOF) {
				readErr <- fmt.Errorf("reading %s: %w", path, err)
				return
			}
			b.last = err != nil
			select {
			case todo <- b:
			case <-stop:
				return
			}
			select {
			case order <- b:
			case <-stop:
				return
			}
			if b.last {
				return
			}
		}
	}()
	for b := range order {
		<-b.done
		for i := range b.recs {
			if err := fn(&b.recs[i]); err != nil {
				return err
			}
		}
		if b.err != nil {
			return b.err
		}
	}
	select {
	case err := <-readErr:
		return err
	default:
		return nil
	}
}
