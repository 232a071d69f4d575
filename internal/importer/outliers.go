package importer

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// The one rule by which every importer leaves out a sample or reading that
// cannot be a measurement (docs/import.md, "Implausible times"): a time
// before PlausibleSince, a time more than PlausibleAhead after the import
// ran, or a response time longer than MaxElapsed. Such a value is a broken
// row (a zeroed clock, a stray digit) and kept it would stretch the run over
// decades; it is counted per source, named in run.json's notes, import.log
// and the report, and left out of every figure.
const (
	// PlausibleSince is the earliest plausible time, 2000-01-01T00:00:00Z
	// in Unix seconds.
	PlausibleSince = 946684800
	// PlausibleAhead is how far past the import's own clock a time may lie
	// (clock skew between the machine that wrote the file and this one).
	PlausibleAhead = 24 * time.Hour
	// MaxElapsed is the longest response time taken as measured.
	MaxElapsed = 24 * time.Hour
)

// implausible counts the samples or readings of one source left out by the
// rule, with the extremes for the note.
type implausible struct {
	early, late, long int64
	earliest, latest  int64 // Unix ns of the earliest early and latest late time
	longest           int64 // µs
}

func newImplausible() implausible {
	return implausible{earliest: math.MaxInt64, latest: math.MinInt64}
}

// window is the plausible span of times, Unix ns.
type window struct{ from, to int64 }

func plausibleWindow(now time.Time) window {
	if now.IsZero() {
		now = time.Now()
	}
	return window{from: PlausibleSince * 1e9, to: now.Add(PlausibleAhead).UnixNano()}
}

// time reports whether t (Unix ns) is plausible, counting it when not.
func (c *implausible) time(w window, t int64) bool {
	switch {
	case t < w.from:
		c.early++
		c.earliest = min(c.earliest, t)
	case t > w.to:
		c.late++
		c.latest = max(c.latest, t)
	default:
		return true
	}
	return false
}

// sample reports whether a request sample is plausible (its completion
// time and its response time in µs), counting it when not.
// The response time is judged first: a start time plus a response time
// of 10¹⁵ ms overflows, and the completion it gives says nothing.
func (c *implausible) sample(w window, end, us int64) bool {
	if us > MaxElapsed.Microseconds() {
		c.long++
		c.longest = max(c.longest, us)
		return false
	}
	return c.time(w, end)
}

func (c *implausible) merge(o *implausible) {
	c.early += o.early
	c.late += o.late
	c.long += o.long
	c.earliest = min(c.earliest, o.earliest)
	c.latest = max(c.latest, o.latest)
	c.longest = max(c.longest, o.longest)
}

func (c *implausible) total() int64 { return c.early + c.late + c.long }

// note is the sentence for run.json's notes ("" when nothing was left out):
// what of source was left out, how many of each kind, and the extreme.
func (c *implausible) note(source, what string, w window) string {
	n := c.total()
	if n == 0 {
		return ""
	}
	var parts []string
	stamp := func(t int64) string { return time.Unix(0, t).UTC().Format(time.RFC3339Nano) }
	if c.early > 0 {
		parts = append(parts, fmt.Sprintf("%d stamped before %s (earliest %s)", c.early, time.Unix(PlausibleSince, 0).UTC().Format("2006-01-02"), stamp(c.earliest)))
	}
	if c.late > 0 {
		parts = append(parts, fmt.Sprintf("%d stamped more than %s after the import ran, past %s (latest %s)", c.late, dur(PlausibleAhead), stamp(w.to), stamp(c.latest)))
	}
	if c.long > 0 {
		parts = append(parts, fmt.Sprintf("%d with a response time over %s (longest %s)", c.long, dur(MaxElapsed), hours(c.longest)))
	}
	word := what + "s"
	if n == 1 {
		word = what
	}
	return fmt.Sprintf("%s: %d implausible %s left out (docs/import.md, implausible times): %s", source, n, word, strings.Join(parts, "; "))
}

// dur prints a whole number of days as "7 days", of hours as "24 h".
func dur(d time.Duration) string {
	if day := 24 * time.Hour; d > day && d%day == 0 {
		return fmt.Sprintf("%d days", d/day)
	}
	if d >= time.Hour && d%time.Hour == 0 {
		return fmt.Sprintf("%d h", d/time.Hour)
	}
	return d.String()
}

// hours prints a response time in µs as hours, which no time.Duration
// could hold for the longest (10¹⁵ ms).
func hours(us int64) string {
	return fmt.Sprintf("%.4g h", float64(us)/3.6e9)
}

// saturatedNano is t in Unix ns, clamped where UnixNano's result would be
// undefined (before 1678, after 2262).
func saturatedNano(t time.Time) int64 {
	switch s := t.Unix(); {
	case s >= math.MaxInt64/1_000_000_000:
		return math.MaxInt64
	case s <= math.MinInt64/1_000_000_000:
		return math.MinInt64
	}
	return t.UnixNano()
}

// The bulk rule (docs/import.md, implausible times): request samples whose
// completion hours form a group apart from the rest — more than BulkGap
// from any other sample — holding under BulkShare of all requests, and
// lying before or after every larger group, are far from the bulk of the
// data. The import is then made again without them (the CLI, with
// Options.From/To set to the bulk and Options.Bulk), so they count
// nowhere, and a note says how many there were.
const (
	BulkGap   = 7 * 24 * time.Hour
	BulkShare = 0.01
)

// Bulk returns the span of the bulk of the run's request samples (whole
// hours) and how many lie outside it, when some do by the bulk rule.
func (r *Run) Bulk() (from, to time.Time, far int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.hours) == 0 {
		return time.Time{}, time.Time{}, 0, false
	}
	hs := make([]int64, 0, len(r.hours))
	var total int64
	for h, n := range r.hours {
		hs = append(hs, h)
		total += n
	}
	slices.Sort(hs)
	type group struct{ first, last, n int64 }
	var gs []group
	gap := int64(BulkGap / time.Hour)
	for i, h := range hs {
		if i == 0 || h-hs[i-1] > gap {
			gs = append(gs, group{first: h, last: h})
		}
		g := &gs[len(gs)-1]
		g.last = h
		g.n += r.hours[h]
	}
	big := func(g group) bool { return float64(g.n) >= BulkShare*float64(total) }
	lo, hi := 0, len(gs)-1
	for lo < len(gs) && !big(gs[lo]) {
		far += gs[lo].n
		lo++
	}
	if lo == len(gs) { // no group is large: nothing stands out
		return time.Time{}, time.Time{}, 0, false
	}
	for hi > lo && !big(gs[hi]) {
		far += gs[hi].n
		hi--
	}
	if far == 0 {
		return time.Time{}, time.Time{}, 0, false
	}
	return time.Unix(gs[lo].first*3600, 0), time.Unix((gs[hi].last+1)*3600, 0).Add(-time.Nanosecond), far, true
}

// noteFar records what the bulk rule left out of one source.
func (r *Run) noteFar(source, what string, n int64, from, to time.Time) {
	word := what + "s"
	if n == 1 {
		word = what
	}
	r.Note("%s: %d %s far from the bulk of the data left out (in groups of under %.0f%% of the requests, more than %s from the rest; docs/import.md, implausible times); the bulk: %s – %s",
		source, n, word, 100*BulkShare, dur(BulkGap), from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
	r.mu.Lock()
	r.implausN += n
	r.mu.Unlock()
}
