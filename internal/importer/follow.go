package importer

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"time"
)

// ErrPause is what a Follower's Read returns when it has handed out all
// that the file holds so far while its writer is still running: Parallel
// then decodes the whole records it has read instead of waiting for a full
// chunk, so results reach the run (and its live outputs) as they are
// written. It is never returned to a caller of Parallel.
var ErrPause = errors.New("importer: waiting for the writer")

// FollowPoll is how often a Follower looks for more data at the end of the
// file.
const FollowPoll = 200 * time.Millisecond

// Follower reads a file another process is still writing (a tool's result
// file while it runs), like tail -f: at the end of the file it waits for
// more until done is closed (the writer has exited), then reads what was
// added last and ends with io.EOF. A Follower that has handed out data
// since it last waited returns ErrPause before it waits again, once the
// file's head is complete (the importers read a head — a header line, a
// first request — before they start cutting chunks, and it must be the
// head a reading of the finished file would see).
type Follower struct {
	f     *os.File
	done  <-chan struct{}
	poll  time.Duration
	since int64 // bytes handed out since the last pause
	head  func([]byte) bool
	seen  []byte // the head handed out so far, until head says it is whole
	final bool   // done was seen: the next end of file is the end
}

// MaxHead bounds the head a Follower waits for: an importer peeks at most
// this much.
const MaxHead = 64 << 10

// Follow opens path for following. It waits for the file to exist until
// done is closed; after that a missing file is os.Open's error. head says
// whether the bytes handed out so far hold the whole head the importer
// needs (nil: no head); the Follower does not pause before that, nor
// before MaxHead bytes.
func Follow(path string, done <-chan struct{}, head func([]byte) bool) (*Follower, error) {
	for {
		f, err := os.Open(path)
		if err == nil {
			return &Follower{f: f, done: done, poll: FollowPoll, head: head}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		select {
		case <-done:
			// The writer has exited: one last look.
			f, err := os.Open(path)
			if err != nil {
				return nil, err
			}
			return &Follower{f: f, done: done, poll: FollowPoll, final: true}, nil
		case <-time.After(FollowPoll):
		}
	}
}

// Read reads what the file holds, waiting at its end as described above.
func (fl *Follower) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := fl.f.Read(p)
		if n > 0 {
			if fl.head != nil {
				fl.seen = append(fl.seen, p[:min(n, MaxHead-len(fl.seen))]...)
				if len(fl.seen) >= MaxHead || fl.head(fl.seen) {
					fl.head, fl.seen = nil, nil
				}
			}
			fl.since += int64(n)
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, err
		}
		if fl.final {
			return 0, io.EOF
		}
		select {
		case <-fl.done:
			// Everything the writer wrote is in the file now: read it to
			// its end once more.
			fl.final = true
			continue
		default:
		}
		if fl.since > 0 && fl.head == nil {
			fl.since = 0
			return 0, ErrPause
		}
		select {
		case <-fl.done:
			fl.final = true
		case <-time.After(fl.poll):
		}
	}
}

// Close closes the file.
func (fl *Follower) Close() error { return fl.f.Close() }

// Lines is a head of n whole lines (a CSV header and a first record).
func Lines(n int) func([]byte) bool {
	return func(b []byte) bool { return bytes.Count(b, []byte{'\n'}) >= n }
}

// NoPause reads r waiting out its pauses, for a decoder that reads a
// followed file without Parallel.
func NoPause(r io.Reader) io.Reader { return noPause{r} }

type noPause struct{ r io.Reader }

func (np noPause) Read(p []byte) (int, error) {
	for {
		n, err := np.r.Read(p)
		if n > 0 || !errors.Is(err, ErrPause) {
			if errors.Is(err, ErrPause) {
				err = nil
			}
			return n, err
		}
	}
}
