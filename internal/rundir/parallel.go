package rundir

import (
	"bytes"
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
// decoding dominates reading a long run. The file is read in blocks of whole
// lines, each parsed by one worker. fn is called from one goroutine; the
// record it gets is only valid during the call.
func ReadIntervalsDecoded(dir string, fn func(*DecodedRecord) error) error {
	path := filepath.Join(dir, IntervalsFile)
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("reading intervals: %w", err)
	}
	defer f.Close()
	const blockSize = 256 << 10
	type batch struct {
		first int    // line number of the block's first line
		buf   []byte // the block as read
		data  []byte // its whole lines; the file's last may lack its newline
		recs  []DecodedRecord
		err   error
		last  bool // holds the file's end
		done  chan struct{}
	}
	workers := max(1, runtime.GOMAXPROCS(0))
	todo := make(chan *batch, workers)
	order := make(chan *batch, workers*2)
	// Batches go round: a block's buffer, its records and their decoded
	// buckets are reused once fn has seen them, so reading allocates
	// little beyond the strings the records keep.
	free := make(chan *batch, workers*4)
	stop := make(chan struct{})
	defer close(stop)
	for i := 0; i < workers; i++ {
		go func() {
			var dec metrics.HistDecoder
			p := Parser{HistText: true}
			for b := range todo {
				b.recs = b.recs[:0]
				data, line := b.data, b.first
				for len(data) > 0 {
					l := data
					if i := bytes.IndexByte(data, '\n'); i >= 0 {
						l, data = data[:i+1], data[i+1:]
					} else {
						data = nil
					}
					if len(b.recs) < cap(b.recs) {
						b.recs = b.recs[:len(b.recs)+1]
					} else {
						b.recs = append(b.recs, DecodedRecord{})
					}
					r := &b.recs[len(b.recs)-1]
					r.Hist = metrics.Sparse{Values: r.Hist.Values[:0], High: r.Hist.High[:0], Counts: r.Hist.Counts[:0]}
					if err := p.Parse(l, &r.IntervalRecord); err != nil {
						torn := b.last && len(data) == 0 && l[len(l)-1] != '\n'
						if !torn {
							b.err = fmt.Errorf("%s:%d: %w", path, line, err)
						}
						b.recs = b.recs[:len(b.recs)-1]
						break
					}
					if len(p.Hist) > 0 {
						if err := dec.DecodeBytes(p.Hist, &r.Hist); err != nil {
							b.err = fmt.Errorf("%s:%d: %w", path, line, err)
							b.recs = b.recs[:len(b.recs)-1]
							break
						}
					}
					line++
				}
				close(b.done)
			}
		}()
	}
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(todo)
		line := 1
		var carry []byte // a line begun in the previous block
		for {
			var b *batch
			select {
			case b = <-free:
			default:
				b = &batch{}
			}
			b.first, b.err, b.done = line, nil, make(chan struct{})
			buf := b.buf[:0]
			if need := max(blockSize, 2*len(carry)); cap(buf) < need {
				buf = make([]byte, 0, need)
			}
			b.buf = buf
			buf = append(buf, carry...)
			n, err := io.ReadFull(f, buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			last := errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
			if err != nil && !last {
				readErr <- fmt.Errorf("reading %s: %w", path, err)
				return
			}
			data := buf
			carry = carry[:0]
			if !last {
				i := bytes.LastIndexByte(buf, '\n')
				if i < 0 { // a line longer than the block: read on
					carry = append(carry, buf...)
					continue
				}
				data, carry = buf[:i+1], append(carry, buf[i+1:]...)
			}
			b.data, b.last = data, last
			line += bytes.Count(data, []byte{'\n'})
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
			if last {
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
		select {
		case free <- b:
		default:
		}
	}
	select {
	case err := <-readErr:
		return err
	default:
		return nil
	}
}
