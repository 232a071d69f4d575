package plan

import (
	"fmt"
	"sort"
	"strings"
)

// Error is one problem in a plan (or in a file the plan reads, such as a CSV
// feeder). Error() is "file:line:col: message", or "file: message" when the
// position is unknown (an unreadable file).
type Error struct {
	File string
	Pos  Pos
	Msg  string
	// Err is the underlying cause, if any (for errors.Is on I/O failures).
	Err error
}

// Error formats the problem as "file:line:col: message".
func (e Error) Error() string {
	if e.Pos.Line <= 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// Unwrap returns the underlying cause.
func (e Error) Unwrap() error { return e.Err }

// Errors is every problem found in a plan, sorted by file and position.
// Load and Parse return it as their error so that a user fixes a plan in one
// pass instead of one error per run.
type Errors []Error

// Error joins the problems, one per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// sorted returns the problems ordered with the plan file first, then by file,
// line and column, with exact duplicates removed (an anchor used twice would
// otherwise report the same problem twice).
func (es Errors) sorted(planFile string) Errors {
	out := append(Errors(nil), es...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.File == planFile) != (b.File == planFile) {
			return a.File == planFile
		}
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Pos.Col < b.Pos.Col
	})
	dedup := out[:0]
	for i, e := range out {
		if i > 0 && e.File == out[i-1].File && e.Pos == out[i-1].Pos && e.Msg == out[i-1].Msg {
			continue
		}
		dedup = append(dedup, e)
	}
	return dedup
}

// suggest returns the candidate closest to word by edit distance, or "" when
// none is close enough to be a plausible typo.
func suggest(word string, candidates []string) string {
	best, bestD := "", -1
	lw := strings.ToLower(word)
	for _, c := range candidates {
		d := editDistance(lw, strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	limit := 1
	switch {
	case len(word) > 8:
		limit = 3
	case len(word) > 3:
		limit = 2
	}
	if bestD < 0 || bestD > limit || bestD >= len(word) {
		return ""
	}
	return best
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and adjacent transpositions each cost 1, so the
// common typo "usres" is one edit from "users".
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	if len(ra) > 64 || len(rb) > 64 {
		// Keys are short; a long one is never a typo of a known key.
		return len(ra) + len(rb)
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
