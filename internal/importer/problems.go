package importer

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxQuoted is how many malformed lines are quoted per file; the rest are
// counted.
const MaxQuoted = 10

// maxQuoteLen bounds a quoted line so one huge broken line cannot flood the log.
const maxQuoteLen = 200

// Problem is one malformed input line.
type Problem struct {
	File   string
	Line   int64 // 1-based; 0 when the position is not a line (e.g. a JSON value)
	Reason string
	Text   string // the line, shortened and made printable
}

// String renders the problem as "file:line: reason: text".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	b.WriteString(p.Reason)
	if p.Text != "" {
		fmt.Fprintf(&b, ": %q", p.Text)
	}
	return b.String()
}

// Quote shortens a line for a problem report.
func Quote(line []byte) string {
	if len(line) > maxQuoteLen {
		line = line[:maxQuoteLen]
		for len(line) > 0 && !utf8.Valid(line) {
			line = line[:len(line)-1]
		}
		return strings.ToValidUTF8(string(line), "?") + "…"
	}
	return strings.ToValidUTF8(string(line), "?")
}

// Problems counts malformed lines per file and keeps the first MaxQuoted of
// each file in file order. Safe for concurrent use.
type Problems struct {
	mu     sync.Mutex
	counts map[string]int64
	first  map[string][]Problem
	order  []string
}

// NewProblems returns an empty tally.
func NewProblems() *Problems {
	return &Problems{counts: map[string]int64{}, first: map[string][]Problem{}}
}

// Add records one malformed line. Callers that decode a file in parallel
// chunks collect per chunk in a ChunkProblems and merge in file order, so
// the quoted lines are the first ones of the file.
func (p *Problems) Add(pr Problem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.add(pr)
}

func (p *Problems) add(pr Problem) {
	if _, ok := p.counts[pr.File]; !ok {
		p.order = append(p.order, pr.File)
	}
	p.counts[pr.File]++
	if len(p.first[pr.File]) < MaxQuoted {
		p.first[pr.File] = append(p.first[pr.File], pr)
	}
}

// Merge adds a chunk's tally.
func (p *Problems) Merge(c *ChunkProblems) {
	if c == nil || c.Count == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pr := range c.First {
		p.add(pr)
	}
	if extra := c.Count - int64(len(c.First)); extra > 0 {
		if _, ok := p.counts[c.File]; !ok {
			p.order = append(p.order, c.File)
		}
		p.counts[c.File] += extra
	}
}

// Total is the number of malformed lines in all files.
func (p *Problems) Total() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var n int64
	for _, c := range p.counts {
		n += c
	}
	return n
}

// Count is the number of malformed lines of one file.
func (p *Problems) Count(file string) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.counts[file]
}

// First is the first quoted problem of file (the lowest line), and whether
// there is one.
func (p *Problems) First(file string) (Problem, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ps := p.first[file]
	if len(ps) == 0 {
		return Problem{}, false
	}
	best := ps[0]
	for _, pr := range ps[1:] {
		if pr.Line < best.Line {
			best = pr
		}
	}
	return best, true
}

// NoSamples is the error of a file that yielded no sample: when all its
// lines were malformed it says how many and quotes the first, naming
// --time-format and --tz when the clock was the trouble.
func (p *Problems) NoSamples(file string) error {
	n := p.Count(file)
	pr, ok := p.First(file)
	if n == 0 || !ok {
		return fmt.Errorf("%s: no samples", file)
	}
	hint := ""
	if strings.Contains(strings.ToLower(pr.Reason), "time") {
		hint = fmt.Sprintf("; if the times are in another format give %s (and %s for their zone)", TimeFormatFlag, TZFlag)
	}
	return fmt.Errorf("%s: no samples: %d malformed lines, the first %s%s", file, n, pr, hint)
}

// Summary returns one line per file with malformed lines ("file: N
// malformed lines skipped") followed by its quoted lines, files in the
// order their first problem was seen.
func (p *Problems) Summary() []string { return p.SummaryWith(fmt.Sprintf) }

// SummaryWith is Summary with each file's line made by msg from its
// format (run.Close records it as a message, so a report words it in its
// language); the quoted lines are as read.
func (p *Problems) SummaryWith(msg func(format string, args ...any) string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, f := range p.order {
		n := p.counts[f]
		if n == 1 {
			out = append(out, msg("%s: 1 malformed line skipped", f))
		} else {
			out = append(out, msg("%s: %d malformed lines skipped", f, n))
		}
		first := append([]Problem(nil), p.first[f]...)
		sort.SliceStable(first, func(i, j int) bool { return first[i].Line < first[j].Line })
		for _, pr := range first {
			out = append(out, "  "+pr.String())
		}
	}
	return out
}

// ChunkProblems is the malformed-line tally of one chunk of one file. Not
// safe for concurrent use; each decoding goroutine owns its own.
type ChunkProblems struct {
	File  string
	Count int64
	First []Problem
}

// Add counts one malformed line and quotes it while fewer than MaxQuoted are.
func (c *ChunkProblems) Add(line int64, reason string, text []byte) {
	c.Count++
	if len(c.First) < MaxQuoted {
		c.First = append(c.First, Problem{File: c.File, Line: line, Reason: reason, Text: Quote(text)})
	}
}

// Reset empties the tally for reuse with another chunk of file.
func (c *ChunkProblems) Reset(file string) {
	c.File, c.Count, c.First = file, 0, c.First[:0]
}
