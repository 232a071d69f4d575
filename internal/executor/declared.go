package executor

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
)

// Declared is the load a script declares, read before the tool runs.
type Declared struct {
	// Phases are the script's holds, as offsets from the tool's start, in
	// time order and not overlapping; empty when the load could not be
	// read reliably (Why says why): the run's phases then come from the
	// user count the tool reports.
	Phases []importer.DeclaredPhase
	// Why says how the phases were read, or why there are none.
	Why string
	// FirstUser is when the script's first user starts, from the tool's
	// start, where the profile declares it (FirstKnown): a tool whose
	// own start record precedes its injection (Gatling) is placed by its
	// first user instead.
	FirstUser  time.Duration
	FirstKnown bool
	// Arrivals are the users an open injection profile starts, in order,
	// from the tool's start: Gatling's is placed by matching them with the
	// users it started (startByArrivals).
	Arrivals []time.Duration
	// StartOnce says the start, once Started finds it, does not change as
	// the tool's files grow (k6's first vus row, JMeter's first thread
	// group's start line): the run reads it once for the live phases and
	// the report. Gatling's, placed by the users it has started so far,
	// settles as more start.
	StartOnce bool

	seen *StartSeen // Spec.Start, for Started
}

// StartSeen is a tool's start as the import of its followed result file
// read it (Spec.Start). Safe for concurrent use.
type StartSeen struct {
	mu        sync.Mutex
	t         time.Time
	ok        bool
	following bool // an import that reports it is reading the file
	ended     bool // that import has returned
}

func (s *StartSeen) set(t time.Time) {
	s.mu.Lock()
	if !s.ok {
		s.t, s.ok = t, true
	}
	s.mu.Unlock()
}

func (s *StartSeen) state(following, ended bool) {
	s.mu.Lock()
	s.following, s.ended = s.following || following, s.ended || ended
	s.mu.Unlock()
}

// get is the start the import read (ok), or whether it is still reading
// (wait: the file need not be read for it meanwhile).
func (s *StartSeen) get() (t time.Time, ok, wait bool) {
	if s == nil {
		return time.Time{}, false, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.t, s.ok, s.following && !s.ended
}

// Declarer is a tool whose script's load can be read before it runs
// (docs/run-foreign.md, Phases).
type Declarer interface {
	// Declare reads the holds spec's script declares, with spec's
	// overrides applied as the tool applies them.
	Declare(spec *Spec) Declared
	// Started is the tool's own start (the zero of the declared offsets)
	// as its files under out say it, once they do; d is what Declare
	// read.
	Started(out string, d Declared) (time.Time, bool)
}

// hold is one declared hold being built.
type hold struct {
	from, to time.Duration
	users    int
	rate     float64 // per second
	unit     string  // "iterations/s", …
	label    string  // the target as the script gives it: "50 VUs", "20 iterations/s"
	arrivals bool
}

// phasesOf turns holds into declared phases: sorted, adjacent holds of one
// target joined, named by their target ("50 VUs"; a target held twice
// "50 VUs (1)", "50 VUs (2)", as derived phases are numbered). It refuses
// overlapping holds (scenarios that run at once): what label would their
// samples carry?
func phasesOf(hs []hold) ([]importer.DeclaredPhase, error) {
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].from < hs[j].from })
	var joined []hold
	for _, h := range hs {
		if h.to <= h.from {
			continue
		}
		if n := len(joined); n > 0 {
			last := &joined[n-1]
			if h.from < last.to {
				return nil, fmt.Errorf("%s (%s–%s) and %s (%s–%s) overlap", last.label, last.from, last.to, h.label, h.from, h.to)
			}
			if h.from == last.to && h.label == last.label {
				last.to = h.to
				continue
			}
		}
		joined = append(joined, h)
	}
	seen := map[string]int{}
	for _, h := range joined {
		seen[h.label]++
	}
	count := map[string]int{}
	out := make([]importer.DeclaredPhase, 0, len(joined))
	for _, h := range joined {
		name := h.label
		if seen[name] > 1 {
			count[name]++
			name = fmt.Sprintf("%s (%d)", name, count[name])
		}
		out = append(out, importer.DeclaredPhase{Name: name, From: h.from, To: h.to, Users: h.users, Rate: h.rate, Unit: h.unit, Arrivals: h.arrivals})
	}
	return out, nil
}

// rateLabel names a rate as the script gives it: "20 iterations/s",
// "600 users/min", "5 users per 10s".
func rateLabel(v float64, unit time.Duration, what string) string {
	n := strconv.FormatFloat(v, 'f', -1, 64)
	switch unit {
	case time.Second:
		return n + " " + what + "/s"
	case time.Minute:
		return n + " " + what + "/min"
	case time.Hour:
		return n + " " + what + "/h"
	}
	return fmt.Sprintf("%s %s per %s", n, what, unit)
}

// firstLine reads path's complete lines (a last line without its line
// break is still being written: a time cut short would misplace every
// phase) until keep returns a time, reading at most limit bytes; with a
// prefix, only the lines that start with it are given to keep (k6's start
// is its first vus row, after a second of request rows at its peak:
// 130,000 lines made strings for nothing were 9 % of plateau's CPU beside
// it, docs/performance.md). A line longer than 64 KiB is skipped.
func firstLine(path string, limit int64, prefix string, keep func(line string) (time.Time, bool)) (time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	r := bufio.NewReaderSize(io.LimitReader(f, limit), 64<<10)
	long := false // inside a line longer than the buffer
	for {
		line, err := r.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			long = true
			continue
		case err != nil:
			return time.Time{}, false // EOF: no line break, so not complete
		case long:
			long = false
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		if prefix != "" && !bytes.HasPrefix(line, []byte(prefix)) {
			continue
		}
		if t, ok := keep(string(line)); ok {
			return t, true
		}
	}
}

// field returns the i-th sep-separated field of line.
func field(line string, sep byte, i int) string {
	for ; i > 0; i-- {
		j := strings.IndexByte(line, sep)
		if j < 0 {
			return ""
		}
		line = line[j+1:]
	}
	if j := strings.IndexByte(line, sep); j >= 0 {
		return line[:j]
	}
	return line
}
