// Package merge combines the run directories of the generators that ran one
// plan in segments (`plateau run --segment i/N`) into one run directory whose
// numbers are those of a single generator doing the whole load: interval
// aggregates are added per second, label and phase (HDR histograms add
// losslessly, counts and sums exactly), raw samples are k-way merged in time
// order, phases are aligned by workload and name, and monitor series are kept
// per generator host under a prefix. Requirements are not judged here: the
// merged directory is an ordinary run directory, and the report path judges
// them once, on the merged data.
//
// A segment that is missing, or whose generator died before the end, is never
// merged silently: the merged run.json says which segment lacks data and for
// how long, its status becomes "failed", and the report shows both.
package merge

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/rundir"
)

// Options configures Merge.
type Options struct {
	// Dirs are the generators' run directories, in any order. A directory
	// without run.json counts as a missing segment (see Segments).
	Dirs []string
	// Out is the merged run directory to create; it must not hold a run.
	Out string
	// Segments is the number of segments the plan was split into; 0 takes
	// it from the segments' run.json. Set it when a whole generator may be
	// missing and no other directory says how many there were.
	Segments int
	// NoMonitors leaves the segments' monitor series out (`plateau run
	// --generators` monitors once, in the parent process, instead).
	NoMonitors bool
	// Command is the command line recorded in the merged run.json.
	Command []string
	// Plan, when set, is the plan copy to keep instead of the segments'
	// (which must still agree with each other).
	Plan []byte
	// Notes are added to the merged run.json's notes (what the caller saw
	// happen to the generators).
	Notes []string
	// Prepare and Cleanup are the plan's prepare and cleanup commands as
	// the caller ran them (once, for all generators), for run.json.
	Prepare, Cleanup []rundir.CommandResult
}

// Segment is one generator's share as recorded in the merged run.json
// under "segments".
type Segment struct {
	Segment string     `json:"segment"` // "i/N"
	Dir     string     `json:"dir,omitempty"`
	Host    string     `json:"host,omitempty"`
	Status  string     `json:"status"` // the generator's run status, or "missing"
	Start   *time.Time `json:"start,omitempty"`
	End     *time.Time `json:"end,omitempty"` // run.json end, or the end of its last recorded second
	Samples int64      `json:"samples"`       // requests recorded (transactions excluded)
	Dropped int64      `json:"dropped,omitempty"`
	// MissingS is how many seconds of the merged run this segment has no
	// data for (the whole run when missing; from its end to the run's end
	// when its generator died; from the run's start when it started late).
	MissingS float64 `json:"missing_s,omitempty"`
	Note     string  `json:"note,omitempty"`

	index int
	info  *rundir.Info
	first int64 // first and last recorded second (0: none)
	last  int64
}

// Info is the merged run.json: an ordinary rundir.Info, which every reader
// of run directories understands, plus the list of merged segments.
type Info struct {
	*rundir.Info
	Segments []Segment `json:"segments"`
}

// Result describes a finished merge.
type Result struct {
	Info *Info
	// Incomplete lists the segments that lack data for part or all of the
	// run (missing, died, late); empty when the merged load is complete.
	Incomplete []Segment
	// Records and Samples count interval records and raw sample lines
	// written.
	Records, Samples int64
}

var segmentRE = regexp.MustCompile(`^(\d+)/(\d+)$`)

// ParseSegment parses "i/N" (0 ≤ i < N).
func ParseSegment(s string) (i, n int, err error) {
	m := segmentRE.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, fmt.Errorf("segment %q: want i/N, e.g. 0/3", s)
	}
	i, _ = strconv.Atoi(m[1])
	n, _ = strconv.Atoi(m[2])
	if n < 1 || i >= n {
		return 0, 0, fmt.Errorf("segment %q: i must be in 0..N-1", s)
	}
	return i, n, nil
}

// lateTolerance is how far a segment's start or end may differ from the
// merged run's before it counts as missing data: generators that share a
// start instant and a schedule differ by milliseconds, while anything
// seen at one-second resolution is a real gap.
const lateTolerance = 1500 * time.Millisecond

// Merge merges opts.Dirs into opts.Out.
func Merge(opts Options) (*Result, error) {
	if opts.Out == "" {
		return nil, errors.New("merge: no output directory")
	}
	if len(opts.Dirs) == 0 {
		return nil, errors.New("merge: no run directories")
	}
	segs, unreadable, err := readSegments(opts)
	if err != nil {
		return nil, err
	}
	planSrc, err := checkSame(segs)
	if err != nil {
		return nil, err
	}
	if opts.Plan != nil {
		planSrc = opts.Plan
	}
	phases, maps, phaseNotes := alignPhases(segs)

	base := *segs[0].info
	info := &Info{Info: &base}
	info.Phases = phases
	info.Segment = ""
	info.SourceKind, info.Holds = rundir.SourceMerged, nil // segments of live runs: what a live run holds
	info.Command = opts.Command
	info.Notes = nil
	info.Status = rundir.StatusRunning
	info.End = nil
	info.Stopped = ""
	// Per-run counts are each generator's share: sum them.
	info.Skipped, info.Checks = nil, nil
	for _, s := range segs {
		for w, n := range s.info.Skipped {
			if info.Skipped == nil {
				info.Skipped = map[string]int64{}
			}
			info.Skipped[w] += n
		}
		for name, n := range s.info.Checks {
			if info.Checks == nil {
				info.Checks = map[string]rundir.CheckCount{}
			}
			c := info.Checks[name]
			c.Passed += n.Passed
			c.Failed += n.Failed
			info.Checks[name] = c
		}
	}
	for _, s := range segs {
		if !s.info.Start.IsZero() && (info.Start.IsZero() || s.info.Start.Before(info.Start)) {
			info.Start = s.info.Start
		}
	}
	info.Host.Hostname = hostList(segs)
	// The merged run is a run of its own, not the first segment's.
	info.ID = ""
	w, err := rundir.Create(opts.Out, info.Info, planSrc, false)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	res := &Result{Info: info}
	if err := mergeIntervals(w, segs, maps, res); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("merge: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	notes, err := mergeSamples(opts.Out, segs, res)
	if err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	if !opts.NoMonitors {
		mn, err := mergeMonitors(opts.Out, segs)
		if err != nil {
			return nil, fmt.Errorf("merge: %w", err)
		}
		notes = append(notes, mn...)
	}

	n := segs[0].count()
	all := completeSegments(segs, n)
	finish(info, all, res)
	info.Notes = append(info.Notes, opts.Notes...)
	info.Prepare, info.Cleanup = opts.Prepare, opts.Cleanup
	info.Notes = append(info.Notes, unreadable...)
	info.Notes = append(info.Notes, phaseNotes...)
	info.Notes = append(info.Notes, notes...)
	for _, s := range segs {
		for _, note := range s.info.Notes {
			info.Notes = append(info.Notes, fmt.Sprintf("segment %s: %s", s.Segment, note))
		}
	}
	if err := writeInfo(opts.Out, info); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return res, nil
}

// hostList names the generator hosts for the report's environment table:
// the one host, or the distinct hosts and the number of generators.
func hostList(segs []*Segment) string {
	var hosts []string
	seen := map[string]bool{}
	for _, s := range segs {
		if s.Host != "" && !seen[s.Host] {
			seen[s.Host] = true
			hosts = append(hosts, s.Host)
		}
	}
	if len(segs) == 1 {
		return strings.Join(hosts, "")
	}
	return fmt.Sprintf("%s (%d generators)", strings.Join(hosts, ", "), len(segs))
}

// count is N of a segment's "i/N".
func (s *Segment) count() int {
	_, n, _ := ParseSegment(s.Segment)
	return n
}

// readSegments reads every directory's run.json. Unreadable directories are
// reported as notes (their segment then shows as missing); a directory that
// holds something else than a segment is an error.
func readSegments(opts Options) ([]*Segment, []string, error) {
	var segs []*Segment
	var notes []string
	seen := map[int]string{}
	for _, d := range opts.Dirs {
		in, err := rundir.ReadInfo(d)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				notes = append(notes, fmt.Sprintf("%s: no run.json, so no results from that generator", d))
				continue
			}
			return nil, nil, fmt.Errorf("merge: %w", err)
		}
		seg := in.Segment
		if seg == "" {
			seg = "0/1" // a plain run is the only segment of its plan
		}
		i, n, err := ParseSegment(seg)
		if err != nil {
			return nil, nil, fmt.Errorf("merge: %s: %w", filepath.Join(d, rundir.InfoFile), err)
		}
		if opts.Segments > 0 && n != opts.Segments {
			return nil, nil, fmt.Errorf("merge: %s is segment %s, but %d segments were asked for", d, seg, opts.Segments)
		}
		if prev, dup := seen[i]; dup {
			return nil, nil, fmt.Errorf("merge: %s and %s are both segment %s", prev, d, seg)
		}
		seen[i] = d
		start := in.Start
		segs = append(segs, &Segment{Segment: seg, Dir: d, Host: in.Host.Hostname, Status: in.Status,
			Start: &start, End: in.End, index: i, info: in})
	}
	if len(segs) == 0 {
		return nil, nil, fmt.Errorf("merge: none of the %d directories holds a run", len(opts.Dirs))
	}
	sort.Slice(segs, func(a, b int) bool { return segs[a].index < segs[b].index })
	if opts.Segments > 0 {
		for _, s := range segs {
			s.Segment = fmt.Sprintf("%d/%d", s.index, opts.Segments)
		}
	}
	return segs, notes, nil
}

// checkSame refuses to merge runs of different plans or splits, and returns
// the plan copy to keep.
func checkSame(segs []*Segment) ([]byte, error) {
	first := segs[0]
	src, err := os.ReadFile(filepath.Join(first.Dir, rundir.PlanFile))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("merge: reading plan copy: %w", err)
	}
	for _, s := range segs[1:] {
		if s.count() != first.count() {
			return nil, fmt.Errorf("merge: %s is segment %s but %s is segment %s: the plan was split differently",
				first.Dir, first.Segment, s.Dir, s.Segment)
		}
		if s.info.Name != first.info.Name {
			return nil, fmt.Errorf("merge: %s ran plan %q but %s ran %q", first.Dir, first.info.Name, s.Dir, s.info.Name)
		}
		other, err := os.ReadFile(filepath.Join(s.Dir, rundir.PlanFile))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("merge: reading plan copy: %w", err)
		}
		if src != nil && other != nil && !bytes.Equal(src, other) {
			return nil, fmt.Errorf("merge: %s and %s ran different plans (their %s differ)", first.Dir, s.Dir, rundir.PlanFile)
		}
	}
	return src, nil
}

// completeSegments returns all N segments, placeholders for missing ones.
func completeSegments(segs []*Segment, n int) []*Segment {
	out := make([]*Segment, 0, n)
	j := 0
	for i := 0; i < n; i++ {
		if j < len(segs) && segs[j].index == i {
			out = append(out, segs[j])
			j++
			continue
		}
		out = append(out, &Segment{Segment: fmt.Sprintf("%d/%d", i, n), Status: "missing", index: i})
	}
	return out
}

// finish sets the merged run's end and status and explains every segment
// that lacks data.
func finish(info *Info, segs []*Segment, res *Result) {
	var end time.Time
	for _, s := range segs {
		if s.info == nil {
			continue
		}
		e := s.end()
		if !e.IsZero() && e.After(end) {
			end = e
		}
	}
	if !end.IsZero() {
		info.End = &end
	}
	start := info.Start
	span := end.Sub(start)
	statuses := map[string]bool{}
	var problems []string
	for _, s := range segs {
		if s.info == nil {
			s.MissingS = round1(span.Seconds())
			s.Note = "missing: no results from this generator"
			problems = append(problems, fmt.Sprintf("segment %s is missing (no results): %s of the %s run had no load from it",
				s.Segment, secs(span), secs(span)))
			continue
		}
		statuses[s.Status] = true
		if e := s.end(); !e.IsZero() {
			s.End = &e
		}
		var parts []string
		var missing time.Duration
		if late := s.info.Start.Sub(start); late > lateTolerance {
			missing += late
			parts = append(parts, fmt.Sprintf("started %s late (it skipped the iterations already due; %d dropped)", secs(late), s.Dropped))
		}
		switch s.Status {
		case rundir.StatusRunning, rundir.StatusFailed, rundir.StatusInterrupted:
			e := s.end()
			if e.IsZero() {
				e = s.info.Start
			}
			if short := end.Sub(e); short > lateTolerance {
				missing += short
				what := map[string]string{rundir.StatusRunning: "its generator died (run.json still says running)",
					rundir.StatusFailed: "its generator failed", rundir.StatusInterrupted: "its generator was interrupted"}[s.Status]
				parts = append(parts, fmt.Sprintf("has no data for the last %s of the run: %s at %s UTC", secs(short), what,
					e.UTC().Format("15:04:05")))
			}
		}
		if len(parts) > 0 {
			s.MissingS = round1(missing.Seconds())
			s.Note = strings.Join(parts, "; ")
			where := ""
			if s.Host != "" {
				where = " (host " + s.Host + ")"
			}
			problems = append(problems, fmt.Sprintf("segment %s%s %s", s.Segment, where, s.Note))
		}
	}
	for _, s := range segs {
		info.Segments = append(info.Segments, *s)
		if s.MissingS > 0 || s.info == nil {
			res.Incomplete = append(res.Incomplete, *s)
		}
	}
	n := len(segs)
	switch {
	case len(res.Incomplete) > 0:
		info.Status = rundir.StatusFailed
		names := make([]string, 0, len(res.Incomplete))
		for _, s := range res.Incomplete {
			names = append(names, fmt.Sprintf("%s for %s", s.Segment, secs(time.Duration(s.MissingS*float64(time.Second)))))
		}
		info.Stopped = fmt.Sprintf("incomplete load: %d of %d segments lack data (%s); the offered load was lower than planned then",
			len(res.Incomplete), n, strings.Join(names, ", "))
		info.Notes = append(info.Notes, problems...)
	case statuses[rundir.StatusFailed]:
		info.Status = rundir.StatusFailed
	case statuses[rundir.StatusRunning]:
		// Every generator stopped together without finishing (all killed):
		// the merged run reads like a single killed run.
		info.Status = rundir.StatusRunning
	case statuses[rundir.StatusInterrupted]:
		info.Status = rundir.StatusInterrupted
	default:
		info.Status = rundir.StatusCompleted
	}
	if info.Stopped == "" {
		for _, s := range segs {
			if s.info != nil && s.info.Stopped != "" {
				info.Stopped = s.info.Stopped
				break
			}
		}
	}
	for _, s := range segs {
		if s.Status == rundir.StatusRunning && s.MissingS == 0 && s.info != nil && s.first > 0 {
			info.Notes = append(info.Notes, fmt.Sprintf("segment %s did not finish cleanly (run.json still says running)", s.Segment))
		}
	}
}

// end is when the segment's data ends: run.json's end, or the end of its
// last recorded second for a generator that died.
func (s *Segment) end() time.Time {
	if s.info != nil && s.info.End != nil && s.info.Status != rundir.StatusRunning {
		return *s.info.End
	}
	if s.last > 0 {
		return time.Unix(s.last+1, 0)
	}
	if s.info != nil && s.info.End != nil {
		return *s.info.End
	}
	return time.Time{}
}

func secs(d time.Duration) string {
	return strconv.FormatFloat(round1(d.Seconds()), 'f', -1, 64) + " s"
}

func round1(v float64) float64 {
	if v < 0 {
		return 0
	}
	return float64(int64(v*10+0.5)) / 10
}
