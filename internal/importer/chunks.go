package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
)

// DefaultChunkSize is the size of the pieces a file is cut into for parallel
// decoding: large enough that per-chunk overhead vanishes, small enough that
// workers × 2 chunks stay a few tens of MB.
const DefaultChunkSize = 4 << 20

// maxChunkSize bounds a chunk when no safe cut is found (a stray quote that
// makes the rest of a CSV file look like one field): the chunk is then cut at
// the last newline anyway and the decoder reports the damage.
const maxChunkSize = 64 << 20

// Chunk is a run of whole records of one file.
type Chunk struct {
	Seq  int    // 0, 1, 2 … in file order
	Data []byte // valid until the chunk's result has been consumed
	Line int64  // 1-based line number of the first line of Data (0 from ParallelUncounted)
	Last bool   // the final chunk of the file
	// NoQuote: Data holds no quote byte (ParallelUncounted with a quote
	// counted them while cutting); false when they were not counted.
	NoQuote bool
}

// CutFunc returns the length of the longest prefix of b that ends at a record
// boundary (just after a newline, outside any quoted field), or 0 when b
// holds no complete record. b always starts at a record boundary.
type CutFunc func(b []byte) int

// CutLines cuts after the last newline: for formats whose records never span
// lines.
func CutLines(b []byte) int {
	return bytes.LastIndexByte(b, '\n') + 1
}

// CutCSV cuts after the last newline that is outside a quoted field, for
// RFC 4180 files whose quoted fields may hold newlines. A doubled quote
// inside a field adds two to the quote count, so parity of the quote count
// up to a newline says whether the newline is inside a field.
func CutCSV(quote byte) CutFunc {
	return func(b []byte) int {
		n, _ := cutCSV(b, quote)
		return n
	}
}

// cutCSV is CutCSV's cut, and whether b up to it holds no quote.
func cutCSV(b []byte, quote byte) (int, bool) {
	end := bytes.LastIndexByte(b, '\n')
	if end < 0 {
		return 0, false
	}
	quotes := bytes.Count(b[:end], []byte{quote})
	return cutOdd(b, end, quote, quotes%2 == 1), quotes == 0
}

// cutOdd is the cut at or before the line end at end, whose quote count
// from b's start is odd or not.
func cutOdd(b []byte, end int, quote byte, odd bool) int {
	for odd {
		prev := bytes.LastIndexByte(b[:end], '\n')
		if prev < 0 {
			return 0
		}
		if bytes.Count(b[prev:end], []byte{quote})%2 == 1 {
			odd = !odd
		}
		end = prev
	}
	return end + 1
}

// Workers returns n, or GOMAXPROCS when n <= 0.
func Workers(n int) int {
	if n <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return n
}

// Parallel reads src in chunks cut by cut, decodes them with decode on
// workers goroutines and hands the results to consume in file order on the
// calling goroutine. Memory is bounded by about 2 × workers chunks and
// results, whatever the size of src. A decode or consume error stops the
// pipeline and is returned.
func Parallel[R any](ctx context.Context, src io.Reader, workers, chunkSize int, cut CutFunc,
	decode func(c *Chunk) (R, error), consume func(c *Chunk, r R) error) error {
	return parallel(ctx, src, workers, chunkSize, func(b []byte) (int, bool) { return cut(b), false }, true, decode, consume)
}

// ParallelUncounted is Parallel without the count of each chunk's lines
// (a pass over every byte read, which a decoder that walks its chunk line
// by line need not pay for): Chunk.Line is 0, the decoder numbers the
// lines of its chunk itself, and consume — which sees the chunks in file
// order — knows from the chunks before how many lines precede it.
// Records are lines when quote is 0; otherwise they are cut as CutCSV
// cuts them, and Chunk.NoQuote says that a chunk holds no quote (the
// cut counted them), so its decoder need not look for one.
func ParallelUncounted[R any](ctx context.Context, src io.Reader, workers, chunkSize int, quote byte,
	decode func(c *Chunk) (R, error), consume func(c *Chunk, r R) error) error {
	cut := func(b []byte) (int, bool) { return CutLines(b), false }
	if quote != 0 {
		cut = func(b []byte) (int, bool) { return cutCSV(b, quote) }
	}
	return parallel(ctx, src, workers, chunkSize, cut, false, decode, consume)
}

func parallel[R any](ctx context.Context, src io.Reader, workers, chunkSize int, cut func(b []byte) (n int, noQuote bool), countLines bool,
	decode func(c *Chunk) (R, error), consume func(c *Chunk, r R) error) error {
	workers = Workers(workers)
	if chunkSize <= 0 {
		chunkSize = DefaultChunkSize
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type job struct {
		c    *Chunk
		res  R
		err  error
		done chan struct{}
	}
	inflight := 2 * workers
	pool := make(chan []byte, inflight+1)
	for range inflight + 1 {
		pool <- nil
	}
	jobs := make(chan *job, inflight)    // to workers
	ordered := make(chan *job, inflight) // to the consumer, in file order
	var readErr error
	var wg sync.WaitGroup

	// Reader: cut src into chunks, each starting where the last one ended.
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(jobs)
		defer close(ordered)
		var carry []byte
		line := int64(1)
		eof := false
		for seq := 0; !eof; seq++ {
			var buf []byte
			select {
			case buf = <-pool:
			case <-ctx.Done():
				return
			}
			size := chunkSize
			noQuote := false // the cut found no quote in buf
			for {
				if cap(buf) < size {
					nb := make([]byte, 0, size)
					buf = nb
				}
				buf = append(buf[:0], carry...)
				carry = carry[:0]
				n, err := fill(src, buf[len(buf):size])
				buf = buf[:len(buf)+n]
				if errors.Is(err, ErrPause) {
					// A followed file holds no more yet: decode the whole
					// records read so far, keep the rest for later.
					if k, nq := cut(buf); k > 0 {
						carry = append(carry, buf[k:]...)
						buf, noQuote = buf[:k], nq
						break
					}
					carry = append(carry, buf...)
					continue
				}
				if err != nil {
					// The end, or a reader that failed (a truncated gzip
					// stream says io.ErrUnexpectedEOF): what was read
					// before it is decoded and consumed as the last chunk,
					// so the caller can say how much the input held, and
					// the error is returned after it.
					if !errors.Is(err, io.EOF) {
						readErr = fmt.Errorf("reading: %w", err)
					}
					eof = true
					break
				}
				k, nq := cut(buf)
				if k == 0 && len(buf) >= maxChunkSize {
					k, nq = CutLines(buf), false // no safe cut: give up on quotes
				}
				if k > 0 {
					carry = append(carry, buf[k:]...)
					buf, noQuote = buf[:k], nq
					break
				}
				// No complete record yet: grow and read more.
				carry = append(carry, buf...)
				size *= 2
				if size > 4*maxChunkSize {
					readErr = fmt.Errorf("a record longer than %d MB", 4*maxChunkSize>>20)
					cancel()
					return
				}
			}
			j := &job{c: &Chunk{Seq: seq, Data: buf, Last: eof, NoQuote: noQuote}, done: make(chan struct{})}
			if countLines {
				j.c.Line = line
				line += int64(bytes.Count(buf, []byte{'\n'}))
			}
			select {
			case ordered <- j:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- j:
			case <-ctx.Done():
				return
			}
		}
	}()

	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if ctx.Err() == nil {
					j.res, j.err = decode(j.c)
				}
				close(j.done)
			}
		}()
	}

	var err error
	for j := range ordered {
		select {
		case <-j.done:
		case <-ctx.Done():
		}
		if err == nil && ctx.Err() == nil {
			if j.err != nil {
				err = j.err
			} else {
				err = consume(j.c, j.res)
			}
			if err != nil {
				cancel()
			}
		}
		select {
		case pool <- j.c.Data[:0]:
		default:
		}
	}
	cancel()
	wg.Wait()
	switch {
	case err != nil:
		return err
	case readErr != nil:
		return readErr
	}
	return parent.Err()
}

// fill reads into b until it is full or src fails. Unlike io.ReadFull it
// tells a clean end (io.EOF) from a reader's own io.ErrUnexpectedEOF (a
// gzip stream cut short), which ReadFull would pass on as if it were the
// short read at the end of the input.
func fill(src io.Reader, b []byte) (int, error) {
	n, idle := 0, 0
	for n < len(b) {
		m, err := src.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
		if idle = idle*btoi(m == 0) + btoi(m == 0); idle >= 100 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TruncatedGzip is the error of a gzip stream cut short (the tool that
// wrote it was killed before it closed the file, a copy was cut), for
// every importer that reads gzip: the import fails rather than pass off
// the part before the cut as the whole run; read says what came before it
// ("1306 lines, 125 requests (12 failed)"), and the message how to import
// that part knowingly.
func TruncatedGzip(path string, err error, read string) error {
	return fmt.Errorf("%s: the gzip stream is truncated (%w) after %s; to import that part, "+
		"decompress what there is (gzip -dc %s > part.log; gzip reports the same error) and import that file", path, err, read, path)
}
