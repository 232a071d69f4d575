package accesslog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
)

// joinSlack is how far past a request's end the external-call log is read:
// its lines are written when calls complete, before the request completes,
// but the two logs are flushed by different writers.
const joinSlack = int64(2e9)

// span is one downstream call, Unix ns.
type span struct{ start, end int64 }

// joiner streams an external-call log alongside an access log that is read
// in time order, keeping only the calls of the last JoinWindow: memory
// depends on the call rate, not on the files' size.
type joiner struct {
	path      string
	f         *os.File
	sc        *bufio.Scanner
	p         *parser
	run       *importer.Run
	window    int64
	calls     map[string][]span
	order     []queued // calls in read order, for eviction
	head      int
	line      int64
	eof       bool
	pending   *queued // a call read past the current horizon
	matched   int64
	unmatched int64
	used      map[string]bool
}

type queued struct {
	id  string
	end int64
	sp  span
}

func newJoiner(path string, f *Format, run *importer.Run, window interface{ Nanoseconds() int64 }) (*joiner, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("opening external-call log: %w", err)
	}
	p, err := newParser(f, run.Clock())
	if err != nil {
		fh.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	run.AddSourcef("external-call log %s", path)
	return &joiner{path: path, f: fh, sc: sc, p: p, run: run, window: window.Nanoseconds(),
		calls: map[string][]span{}, used: map[string]bool{}}, nil
}

func (j *joiner) close() { j.f.Close() }

// next reads the next well-formed call, or nil at the end.
func (j *joiner) next() (*queued, error) {
	var pl parsed
	for !j.eof {
		if !j.sc.Scan() {
			j.eof = true
			if err := j.sc.Err(); err != nil && !errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("reading %s: %w", j.path, err)
			}
			return nil, nil
		}
		j.line++
		l := bytes.TrimSuffix(j.sc.Bytes(), []byte{'\r'})
		if len(l) == 0 {
			continue
		}
		if bad := j.p.parse(l, &pl, false); bad != "" {
			j.run.Problems().Add(importer.Problem{File: j.path, Line: j.line, Reason: bad, Text: importer.Quote(l)})
			continue
		}
		if len(pl.id) == 0 || bytes.Equal(pl.id, []byte("-")) {
			continue
		}
		return &queued{id: string(pl.id), end: pl.end, sp: span{pl.end - pl.us*1000, pl.end}}, nil
	}
	return nil, nil
}

// downstream returns the time in µs that request id spent in downstream
// calls (see unionUs); start and end bound the request, for eviction.
func (j *joiner) downstream(id string, start, end int64) (int64, error) {
	horizon := end + joinSlack
	for {
		q := j.pending
		j.pending = nil
		if q == nil {
			var err error
			if q, err = j.next(); err != nil {
				return 0, err
			}
			if q == nil {
				break
			}
		}
		if q.end > horizon {
			j.pending = q
			break
		}
		j.calls[q.id] = append(j.calls[q.id], q.sp)
		j.order = append(j.order, *q)
	}
	// Evict calls too old to belong to any request still to come.
	for j.head < len(j.order) && j.order[j.head].end < end-j.window {
		q := j.order[j.head]
		if sp := j.calls[q.id]; len(sp) > 0 {
			if !j.used[q.id] {
				j.unmatched += int64(len(sp))
			}
			delete(j.calls, q.id)
			delete(j.used, q.id)
		}
		j.head++
	}
	if j.head > 4096 && j.head > len(j.order)/2 {
		j.order = append(j.order[:0], j.order[j.head:]...)
		j.head = 0
	}
	spans := j.calls[id]
	if len(spans) == 0 {
		return 0, nil
	}
	j.matched++
	j.used[id] = true
	return unionUs(spans), nil
}

// overlapTolerance is how much two calls may seem to overlap and still be
// taken as one after the other: log times are often whole milliseconds, so
// a call that started right after another can look like it began up to a
// millisecond before the other ended.
const overlapTolerance = int64(time.Millisecond)

// unionUs is the time in µs covered by spans: the sum of their durations
// for calls made one after another, the length of their union for calls
// made concurrently.
func unionUs(spans []span) int64 {
	sorted := append([]span(nil), spans...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].start < sorted[b].start })
	var total, curE int64
	for i, s := range sorted {
		if i == 0 || s.start >= curE-overlapTolerance {
			total += s.end - s.start
			curE = max(curE, s.end)
			continue
		}
		if s.end > curE {
			total += s.end - curE
			curE = s.end
		}
	}
	return total / 1000
}
