package importer

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/rundir"
	"github.com/plateau-perf/plateau/internal/secret"
)

// Options configures a Run.
type Options struct {
	// Dir is the run directory to create; it must not hold a run yet.
	Dir string
	// Name is the run's name in the report (default: the directory's base name).
	Name string
	// Phases are the run's phases (e.g. from a phases CSV), in time order.
	// When empty and DerivePhases is set, phases are derived from the thread
	// counts that sources report (JMeter's allThreads).
	Phases       []core.Phase
	DerivePhases bool
	// MinPhase is the shortest steady thread count that becomes a derived
	// phase (default 30 s); shorter steps are ramps.
	MinPhase time.Duration
	// KeepSamples writes every imported request sample to samples.jtl.
	KeepSamples bool
	// Workers bounds the goroutines a source may use (GOMAXPROCS when 0).
	Workers int
	// Clock supplies the zone for times written without one.
	Clock Clock
	// Command is the command line, recorded in run.json.
	Command []string
	// Version is plateau's version, recorded in run.json.
	Version string
	// Logf receives progress lines (optional).
	Logf func(format string, args ...any)
	// From and To, when set, bound the request samples kept: a sample that
	// completed before From or after To is left out and counted in a note
	// (server logs attached to a live run hold traffic from before and
	// after it; the run's own window is what its report is about).
	From, To time.Time
	// Now is the import's clock for the plausible-time rule (outliers.go);
	// time.Now() when zero.
	Now time.Time
	// Bulk says From and To are the bulk of the data as a first import
	// found it (Run.Bulk): what lies outside is far from the rest, and is
	// said so; server readings outside are left out too.
	Bulk bool
	// Live, when set, receives every request sample the run's aggregators
	// keep, as they keep it (a foreign tool's results streamed to the live
	// outputs while it runs).
	Live *Live
}

// Run is a run directory being built from imported files. Sources add
// request samples through an Aggregator and server-side series through a
// SeriesWriter; Close writes run.json and import.log. Safe for concurrent
// use by several sources.
type Run struct {
	opt    Options
	rule   *secret.Rule // the secret rule, for messages and URLs
	dir    string
	w      *rundir.Writer
	wmu    sync.Mutex // serialises w
	probs  *Problems
	phases []core.Phase

	mu        sync.Mutex
	info      rundir.Info
	notes     []string
	log       []string
	workloads map[string]bool
	first     int64 // earliest time seen, Unix ns
	last      int64
	threads   map[int64]int32 // per second, highest allThreads (derived phases)
	arrivals  map[int64]int64 // per second, arrivals (AddArrivals)
	reqSecs   map[int64]int64 // per second, request samples completed
	decl      *declared       // the script's declared phases (SetDeclared)
	series    *seriesDir
	samples   int64
	histPool  sync.Pool // *secAgg
	figures   *rundir.SourceFigures
	noTimes   map[string]bool // workloads without response times
	plausible window          // the times the outlier rule accepts
	implausN  int64           // samples and readings the rule left out
	hours     map[int64]int64 // request samples per hour of completion (Run.Bulk)
}

// Implausible is the number of request samples and server readings the
// outlier rule (outliers.go) left out, over every source.
func (r *Run) Implausible() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.implausN
}

// noteImplausible records what the outlier rule left out of one source.
func (r *Run) noteImplausible(c *implausible, source, what string) {
	n := c.note(source, what, r.plausible)
	if n == "" {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notes = append(r.notes, n)
	r.implausN += c.total()
}

// MarkNoTimes records that workload's source has no response times (an
// access log without a duration field): its samples carry a zero elapsed
// time, and the summary and report say "not in this log" instead of
// showing response-time figures.
func (r *Run) MarkNoTimes(workload string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.noTimes == nil {
		r.noTimes = map[string]bool{}
	}
	r.noTimes[workload] = true
}

// NewRun creates the run directory with a provisional run.json.
func NewRun(opt Options) (*Run, error) {
	if opt.Dir == "" {
		return nil, errors.New("no output directory (-o)")
	}
	if opt.MinPhase <= 0 {
		opt.MinPhase = 30 * time.Second
	}
	name := opt.Name
	if name == "" {
		name = filepath.Base(filepath.Clean(opt.Dir))
	}
	r := &Run{opt: opt, rule: secret.NewRule(nil, nil), dir: opt.Dir, probs: NewProblems(), workloads: map[string]bool{},
		first: math.MaxInt64, threads: map[int64]int32{}, arrivals: map[int64]int64{}, reqSecs: map[int64]int64{}}
	r.histPool.New = func() any { return &secAgg{} }
	r.plausible = plausibleWindow(opt.Now)
	r.hours = map[int64]int64{}
	r.phases = append([]core.Phase(nil), opt.Phases...)
	sort.SliceStable(r.phases, func(i, j int) bool { return r.phases[i].Start.Before(r.phases[j].Start) })
	host, _ := os.Hostname()
	r.info = rundir.Info{Tool: "plateau", Version: opt.Version, Name: name, Command: opt.Command,
		Host:   rundir.Host{Hostname: host, OS: runtime.GOOS, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()},
		Status: rundir.StatusImported, Phases: []rundir.PhaseInfo{}}
	w, err := rundir.Create(opt.Dir, &r.info, nil, opt.KeepSamples)
	if err != nil {
		return nil, err
	}
	r.w = w
	r.series = &seriesDir{dir: filepath.Join(opt.Dir, rundir.MonitorDir), used: map[string]bool{}}
	return r, nil
}

// Dir is the run directory.
func (r *Run) Dir() string { return r.dir }

// Workers is the number of goroutines a source may use.
func (r *Run) Workers() int { return Workers(r.opt.Workers) }

// Clock is the import's time-zone setting.
func (r *Run) Clock() Clock { return r.opt.Clock }

// Problems is the malformed-line tally.
func (r *Run) Problems() *Problems { return r.probs }

// Phases returns the given phases (empty when they are to be derived).
func (r *Run) Phases() []core.Phase { return r.phases }

// Note adds a line to run.json's notes and import.log.
func (r *Run) Note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	text, m := rundir.NewMessage(format, args...)
	r.notes = append(r.notes, text)
	r.info.AddMessage(text, m)
}

// Logf adds a line to import.log only (and to Options.Logf).
func (r *Run) Logf(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	r.mu.Lock()
	r.log = append(r.log, s)
	r.mu.Unlock()
	if r.opt.Logf != nil {
		r.opt.Logf("%s", s)
	}
}

// AddSource records an input file in run.json.
func (r *Run) AddSource(desc string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.info.Source = append(r.info.Source, desc)
}

// AddSourcef records an input file in run.json described by a message
// (fmt's format and arguments), so a report in another language words it.
func (r *Run) AddSourcef(format string, args ...any) {
	text, m := rundir.NewMessage(format, args...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.info.Source = append(r.info.Source, text)
	r.info.AddMessage(text, m)
}

// SetOrigin records in run.json where the run's samples came from and what
// they hold (rundir.Info.AddSourceKind: a second, different request source
// makes the run mixed).
func (r *Run) SetOrigin(k rundir.SourceKind, h rundir.Holds) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.info.AddSourceKind(k, h)
}

// See widens the run's time span to include t (Unix ns).
func (r *Run) See(t int64) {
	r.mu.Lock()
	r.first = min(r.first, t)
	r.last = max(r.last, t)
	r.mu.Unlock()
}

// Span is the time span seen so far, zero times when nothing was seen.
func (r *Run) Span() (time.Time, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.first == math.MaxInt64 {
		return time.Time{}, time.Time{}
	}
	return time.Unix(0, r.first), time.Unix(0, r.last)
}

// phaseOf returns the index of the phase holding t (Unix ns), or −1, by
// plateau's one phase-membership rule (core.PhaseOf).
func phaseOf(phases []core.Phase, t int64) int {
	return core.PhaseOf(phases, "", time.Unix(0, t))
}

func (r *Run) writeRecords(recs []rundir.IntervalRecord) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	for i := range recs {
		if err := r.w.WriteRecord(&recs[i]); err != nil {
			return err
		}
	}
	return nil
}

func (r *Run) writeRaw(b []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	return r.w.WriteSamples(b)
}

// Close finishes the run: derives phases if asked, writes run.json with the
// notes and the malformed-line summary, and import.log. It returns the
// first write error.
func (r *Run) Close() error {
	var errs []error
	errs = append(errs, r.w.Close())
	errs = append(errs, r.series.close())
	r.mu.Lock()
	defer r.mu.Unlock()
	phases := r.phases
	if d := r.decl; len(phases) == 0 && d != nil {
		phases = PlaceDeclared(d.phases, d.start)
		if len(phases) > 0 {
			if err := assignPhases(r.dir, phases); err != nil {
				errs = append(errs, err)
			}
			r.notes = append(r.notes, fmt.Sprintf("%d phases as %s's script declares them (its holds; ramps are in no phase), placed from %s's start at %s and rounded inwards to whole seconds; samples are assigned to phases by their completion second",
				len(phases), d.tool, d.tool, d.start.UTC().Format("15:04:05.000")))
			r.notes = append(r.notes, r.checkDeclared(d.tool, d.phases, phases)...)
		}
	}
	if len(phases) == 0 && r.opt.DerivePhases && len(r.threads) > 0 {
		phases = DerivePhases(r.threads, r.opt.MinPhase)
		if len(phases) > 0 {
			if err := assignPhases(r.dir, phases); err != nil {
				errs = append(errs, err)
			}
			text, m := rundir.NewMessage("%d phases derived from thread-count changes (steady for at least %s); samples are assigned to phases by their completion second", len(phases), r.opt.MinPhase)
			r.notes = append(r.notes, text)
			r.info.AddMessage(text, m)
		}
	}
	for _, p := range phases {
		end := p.End
		r.info.Phases = append(r.info.Phases, rundir.PhaseInfo{Name: p.Name, Workload: p.Workload, Start: p.Start, End: &end, Users: p.Users, Rate: p.Rate})
	}
	if r.first != math.MaxInt64 {
		r.info.Start = time.Unix(0, r.first).UTC()
		end := time.Unix(0, r.last).UTC()
		r.info.End = &end
	} else if len(phases) > 0 {
		r.info.Start = phases[0].Start
		end := phases[len(phases)-1].End
		r.info.End = &end
	}
	ws := make([]string, 0, len(r.workloads))
	for w := range r.workloads {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	for _, w := range ws {
		r.info.Workloads = append(r.info.Workloads, rundir.WorkloadInfo{Name: w, Model: "imported", Shape: "as recorded", NoTimes: r.noTimes[w]})
	}
	r.info.Figures = r.figures
	if f := r.figures; f != nil {
		text, m := rundir.NewMessage("whole-run percentiles as %s defines them (summary.json percentile_method %s): %s; throughput: %s; per-second and per-phase figures use plateau's HDR histograms",
			f.Tool, f.PercentileMethod, f.PercentileRule, f.ThroughputRule)
		r.notes = append(r.notes, text)
		r.info.AddMessage(text, m)
	}
	summary := r.probs.Summary()
	r.info.Notes = append(append([]string(nil), r.notes...), summary...)
	errs = append(errs, rundir.WriteInfo(r.dir, &r.info))

	var b strings.Builder
	fmt.Fprintf(&b, "plateau import, %s\n", time.Now().UTC().Format(time.RFC3339))
	if len(r.opt.Command) > 0 {
		fmt.Fprintf(&b, "command: %s\n", strings.Join(r.opt.Command, " "))
	}
	for _, s := range r.info.Source {
		fmt.Fprintf(&b, "source: %s\n", s)
	}
	for _, l := range r.log {
		b.WriteString(l + "\n")
	}
	for _, n := range r.notes {
		b.WriteString("note: " + n + "\n")
	}
	if len(summary) == 0 {
		b.WriteString("no malformed lines\n")
	}
	for _, s := range summary {
		b.WriteString(s + "\n")
	}
	if err := os.WriteFile(filepath.Join(r.dir, rundir.ImportLogFile), []byte(b.String()), 0o644); err != nil {
		errs = append(errs, fmt.Errorf("writing import log: %w", err))
	}
	return errors.Join(errs...)
}

// assignPhases rewrites intervals.ndjson giving each record the phase that
// holds its second. Derived phases start and end on whole seconds, so the
// assignment is exact at the resolution the phases were derived with.
// Records are rewritten in place of their "ph" value, as bytes; a line not
// in the shape the run writer gives is decoded and encoded again (the
// slower way, which gives the same bytes: assignPhasesJSON, the tests'
// reference).
func assignPhases(dir string, phases []core.Phase) error {
	path := filepath.Join(dir, rundir.IntervalsFile)
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("assigning phases: %w", err)
	}
	defer in.Close()
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("assigning phases: %w", err)
	}
	br := bufio.NewReaderSize(in, 256<<10)
	bw := bufio.NewWriterSize(f, 256<<10)
	enc := json.NewEncoder(bw)
	var long, out []byte
	for lineNo := 1; err == nil; lineNo++ {
		var line []byte
		line, err = br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) { // longer than the buffer
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if errors.Is(err, io.EOF) {
			err = nil
			if len(line) == 0 {
				break
			}
		} else if err != nil {
			break
		}
		if t, at, end, ok := phaseField(line); ok {
			// users and dropped are the last fields when present: a line
			// without them does not end in a map.
			if !bytes.HasSuffix(line, []byte("}}\n")) ||
				(!bytes.Contains(line, []byte(`,"users":`)) && !bytes.Contains(line, []byte(`,"dropped":`))) {
				out = strconv.AppendInt(append(out[:0], line[:at]...), int64(phaseOf(phases, t*1e9)), 10)
				out = append(out, line[end:]...)
				line = out
			}
			_, err = bw.Write(line)
			continue
		}
		var rec rundir.IntervalRecord
		if err = json.Unmarshal(line, &rec); err != nil {
			err = fmt.Errorf("%s:%d: %w", path, lineNo, err)
			break
		}
		if rec.Users == nil && rec.Dropped == nil {
			rec.Phase = phaseOf(phases, rec.T*1e9)
		}
		err = enc.Encode(&rec)
	}
	return replaceIntervals(f, bw, tmp, path, err)
}

// phaseField finds the second and the "ph" value of an interval record
// line as the run writer encodes it: {"t":T,["w":"…",]"ph":P,… ending in a
// newline. at:end are the bytes of P.
func phaseField(line []byte) (t int64, at, end int, ok bool) {
	const head = `{"t":`
	if !bytes.HasPrefix(line, []byte(head)) || line[len(line)-1] != '\n' {
		return 0, 0, 0, false
	}
	i := len(head)
	j := i
	if j < len(line) && line[j] == '-' {
		j++
	}
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	t, err := strconv.ParseInt(string(line[i:j]), 10, 64)
	if err != nil {
		return 0, 0, 0, false
	}
	rest := line[j:]
	if bytes.HasPrefix(rest, []byte(`,"w":"`)) { // skip the JSON string
		k := len(`,"w":"`)
		for k < len(rest) && rest[k] != '"' {
			if rest[k] == '\\' {
				k++
			}
			k++
		}
		if k >= len(rest) {
			return 0, 0, 0, false
		}
		j += k + 1
		rest = line[j:]
	}
	const ph = `,"ph":`
	if !bytes.HasPrefix(rest, []byte(ph)) {
		return 0, 0, 0, false
	}
	at = j + len(ph)
	end = at
	if end < len(line) && line[end] == '-' {
		end++
	}
	for end < len(line) && line[end] >= '0' && line[end] <= '9' {
		end++
	}
	if end == at || end >= len(line) || (line[end] != ',' && line[end] != '}') {
		return 0, 0, 0, false
	}
	return t, at, end, true
}

// replaceIntervals ends a rewrite of intervals.ndjson into tmp (through bw
// on f): on success tmp replaces path, on err it is removed.
func replaceIntervals(f *os.File, bw *bufio.Writer, tmp, path string, err error) error {
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("assigning phases: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("assigning phases: %w", err)
	}
	return nil
}

// assignPhasesJSON is assignPhases decoding and encoding every record.
func assignPhasesJSON(dir string, phases []core.Phase) error {
	path := filepath.Join(dir, rundir.IntervalsFile)
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("assigning phases: %w", err)
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	enc := json.NewEncoder(bw)
	err = rundir.ReadIntervals(dir, func(rec *rundir.IntervalRecord) error {
		if rec.Users == nil && rec.Dropped == nil {
			rec.Phase = phaseOf(phases, rec.T*1e9)
		}
		return enc.Encode(rec)
	})
	return replaceIntervals(f, bw, tmp, path, err)
}

// secAgg is one label's aggregate over one second. Errors are kept in a
// metrics.Agg for its bounded, sorted failure breakdown (its histogram is
// not used).
type secAgg struct {
	count, sum, min, max, sent, recv int64
	hist                             lean
	errs                             *metrics.Agg
	// errl are a Partial's failures, merged into errs by AddPartial.
	errl   []errCount
	errIdx map[metrics.ErrKey]int // index of errl when it holds many kinds
}

// addTimes adds a record's time and bytes to the second (its failures are
// counted by the caller: an Aggregator and a Partial keep them differently)
// and returns the time in µs.
func (g *secAgg) addTimes(s *Rec) int64 {
	us := max(s.Elapsed, 0)
	g.count++
	g.sum += us
	g.min = min(g.min, us)
	g.max = max(g.max, us)
	g.hist.record(us)
	g.sent += s.Sent
	g.recv += s.Recv
	return us
}

func (g *secAgg) reset() {
	h, errl := g.hist, g.errl
	h.reset()
	clear(errl)
	*g = secAgg{hist: h, errl: errl[:0]}
}

// Rec is one decoded request sample, in the compact form decoders produce.
type Rec struct {
	End     int64 // completion time, Unix ns
	Elapsed int64 // response time, µs
	Label   int32 // id in the aggregator's Labels
	Status  int32 // HTTP status, 0 when unknown or none
	Threads int32 // active threads when it completed (JMeter allThreads); −1 unknown
	Class   core.ErrorClass
	Tx      bool
	Derived bool   // a derived view of another sample (see rundir.IntervalRecord.Derived)
	Message string // failure message (only for failures)
	Sent    int64
	Recv    int64
	Connect int64 // µs, for the raw sample copy
	TTFB    int64 // µs
	Thread  string
	URL     string
}

// aggLag is how many seconds an aggregate stays open after the newest
// second seen, to absorb samples written slightly out of order. A sample
// later than that reopens its second and is written as an extra record for
// the same second, which readers merge; nothing is lost.
const aggLag = 5

type aggKey struct {
	sec     int64
	label   int32
	phase   int32
	tx      bool
	derived bool
}

// Aggregator turns one source's samples into per-second, per-label,
// per-phase interval records. Memory is bounded by the labels active in a
// few seconds, not by the number of samples. Not safe for concurrent use:
// one source feeds it from one goroutine (parallel decoders merge through
// Parallel's in-order consumer).
type Aggregator struct {
	run      *Run
	workload string
	labels   *Labels
	open     map[aggKey]*secAgg
	users    map[int64]int32
	water    int64 // newest second seen
	oldest   int64 // oldest open second
	phases   []core.Phase
	recs     []rundir.IntervalRecord
	raw      []byte
	enc      histEncoder
	hists    []byte    // a flush's encoded histograms, one after another
	histAt   []histRef // where each record's histogram is in hists
	count    int64
	errors   int64
	first    int64
	last     int64

	spanSet            bool
	spanStart, spanEnd int64
	fig                *figures // nil unless CollectFigures
	resolution         time.Duration
	outside            int64 // samples left out by Options.From/To (derived views not counted)
	implausible        implausible
	hours              map[int64]int64 // request samples per hour, merged into the run's at Close
	secs               map[int64]int64 // request samples per second, merged into the run's at Close
	mask               *masker
	// The last sample's aggregate and its key, its label's name and its
	// second's user count (a lower bound of users[uSec] while uOK): a
	// tool's samples come in runs of one label and second, and the maps'
	// hashing was most of Add's cost beside k6 (docs/performance.md).
	// flush, which releases aggregates and user counts, forgets them.
	lastKey aggKey
	lastAg  *secAgg
	nameID  int32
	name    string
	nameOK  bool
	uSec    int64
	uMax    int32
	uOK     bool
}

// SetTimeResolution says the source's completion times are known only to
// d (a log that writes whole seconds): samples are then assigned to phases
// by core.PhaseOfCoarse, so a phase that starts within a logged second
// gets that second's samples.
func (a *Aggregator) SetTimeResolution(d time.Duration) { a.resolution = d }

// Requests returns an aggregator for request samples of workload.
func (r *Run) Requests(workload string) *Aggregator {
	r.mu.Lock()
	r.workloads[workload] = true
	r.mu.Unlock()
	return &Aggregator{run: r, workload: workload, labels: NewLabels(), open: map[aggKey]*secAgg{},
		users: map[int64]int32{}, oldest: math.MaxInt64, phases: r.phases, first: math.MaxInt64, implausible: newImplausible(), hours: map[int64]int64{}, secs: map[int64]int64{},
		mask: newMasker(r.rule)}
}

// Labels is the aggregator's label table; decoders intern labels in it.
func (a *Aggregator) Labels() *Labels { return a.labels }

// Count is the number of samples added.
func (a *Aggregator) Count() int64 { return a.count }

// Implausible is the number of samples the outlier rule left out so far.
func (a *Aggregator) Implausible() int64 { return a.implausible.total() }

// Errors is the number of failed samples added.
func (a *Aggregator) Errors() int64 { return a.errors }

// SetSpan gives the source's own run span (Unix ns), for sources whose
// samples are rebuilt and so cannot bound the run themselves (Locust: the
// start of a rebuilt sample is its end minus a response time drawn from the
// label's distribution, and one slow request would drag the start back).
// The run's span then widens to [start, end] instead of to the samples'.
func (a *Aggregator) SetSpan(start, end int64) {
	a.spanSet, a.spanStart, a.spanEnd = true, start, end
}

// AddUsers records n active users at t (Unix ns), from a source that
// reports them apart from its samples (k6 writes a vus point every second,
// whether or not a request completed in it). The second's user count is the
// highest reading, as with the samples' own thread counts.
func (a *Aggregator) AddUsers(t int64, n int32) {
	if n < 0 || !a.implausible.time(a.run.plausible, t) {
		return
	}
	if l := a.run.opt.Live; l != nil {
		l.setUsers(a.workload, n)
	}
	sec := floorDiv(t, 1e9)
	if cur, ok := a.users[sec]; !ok || n > cur {
		a.users[sec] = n
	}
}

// Add aggregates one sample.
func (a *Aggregator) Add(s *Rec) error {
	if o := &a.run.opt; (!o.From.IsZero() && s.End < o.From.UnixNano()) || (!o.To.IsZero() && s.End > o.To.UnixNano()) {
		if !s.Derived {
			a.outside++
		}
		return nil
	}
	if !a.plausible(s) {
		return nil
	}
	sec := floorDiv(s.End, 1e9)
	ph := int32(-1)
	if len(a.phases) > 0 {
		ph = int32(phaseOf(a.phases, s.End))
		if ph < 0 && a.resolution > 0 {
			ph = int32(core.PhaseOfCoarse(a.phases, "", time.Unix(0, s.End), a.resolution))
		}
	}
	k := aggKey{sec: sec, label: s.Label, phase: ph, tx: s.Tx, derived: s.Derived}
	ag := a.lastAg
	if ag == nil || k != a.lastKey {
		if ag = a.open[k]; ag == nil {
			ag = a.run.histPool.Get().(*secAgg)
			ag.min = math.MaxInt64
			a.open[k] = ag
			a.oldest = min(a.oldest, sec)
		}
		a.lastKey, a.lastAg = k, ag
	}
	us := ag.addTimes(s)
	if s.Message != "" {
		s.Message = a.mask.message(s.Message)
	}
	if l := a.run.opt.Live; l != nil {
		if !a.nameOK || a.nameID != s.Label {
			a.nameID, a.name, a.nameOK = s.Label, a.labels.Name(s.Label), true
		}
		l.add(a.workload, a.name, s, us, s.Message)
	}
	if s.Class != core.ErrNone {
		if ag.errs == nil {
			ag.errs = &metrics.Agg{}
		}
		ag.errs.AddError(metrics.ErrKey{Class: s.Class, Status: int(s.Status), Message: s.Message}, 1)
		a.errors++
	}
	a.count++
	start := s.End - us*1e3
	a.first = min(a.first, start)
	a.last = max(a.last, s.End)
	if s.Threads >= 0 && !s.Tx && (!a.uOK || a.uSec != sec || s.Threads > a.uMax) {
		cur, ok := a.users[sec]
		if !ok || s.Threads > cur {
			a.users[sec], cur = s.Threads, s.Threads
		}
		a.uSec, a.uMax, a.uOK = sec, cur, true
	}
	if a.run.opt.KeepSamples && !s.Derived {
		a.raw = a.appendRawTo(a.raw, s, us)
	}
	if a.fig != nil && !s.Derived {
		a.fig.add(s, us, a)
	}
	if sec > a.water {
		a.water = sec
		if a.water-a.oldest > aggLag {
			return a.flush(a.water - aggLag)
		}
	}
	return nil
}

// plausible applies the outlier rule (outliers.go) to s, counting it when
// it fails (a derived view restates a counted sample and is dropped with it
// uncounted).
func (a *Aggregator) plausible(s *Rec) bool {
	if s.Derived {
		c := newImplausible()
		return c.sample(a.run.plausible, s.End, s.Elapsed)
	}
	return a.implausible.sample(a.run.plausible, s.End, s.Elapsed)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// appendRawTo appends s to dst as the raw sample copy (samples.jtl) holds it.
// Its URL is masked by the secret rule (message masking is the caller's:
// Add and Partial.Add mask the message before anything reads it).
func (a *Aggregator) appendRawTo(dst []byte, s *Rec, us int64) []byte {
	start := s.End - us*1e3
	smp := core.Sample{Label: a.labels.Name(s.Label), Intended: start, Start: start,
		Elapsed: time.Duration(us) * time.Microsecond, Service: time.Duration(us) * time.Microsecond,
		Connect: time.Duration(s.Connect) * time.Microsecond, TTFB: time.Duration(s.TTFB) * time.Microsecond,
		BytesSent: s.Sent, BytesRecv: s.Recv, Status: int(s.Status), Class: s.Class, Message: s.Message,
		Thread: s.Thread, URL: a.mask.url(s.URL), AllThreads: max(s.Threads, 0), Transaction: s.Tx}
	return rundir.AppendJTL(dst, &smp)
}

// flush writes and releases every open second before upTo (all when upTo is
// MaxInt64).
func (a *Aggregator) flush(upTo int64) error {
	a.lastAg, a.uOK = nil, false
	keys := make([]aggKey, 0, len(a.open))
	a.oldest = math.MaxInt64
	for k := range a.open {
		if k.sec < upTo {
			keys = append(keys, k)
		} else {
			a.oldest = min(a.oldest, k.sec)
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		x, y := keys[i], keys[j]
		if x.sec != y.sec {
			return x.sec < y.sec
		}
		if x.phase != y.phase {
			return x.phase < y.phase
		}
		if x.tx != y.tx {
			return x.tx
		}
		if nx, ny := a.labels.Name(x.label), a.labels.Name(y.label); nx != ny {
			return nx < ny
		}
		return !x.derived && y.derived
	})
	a.recs, a.hists, a.histAt = a.recs[:0], a.hists[:0], a.histAt[:0]
	lastSec := int64(math.MinInt64)
	for _, k := range keys {
		if k.sec != lastSec && lastSec != math.MinInt64 {
			a.usersRecord(lastSec)
		}
		lastSec = k.sec
		ag := a.open[k]
		if !k.tx && !k.derived {
			a.hours[floorDiv(k.sec, 3600)] += ag.count
			a.secs[k.sec] += ag.count
		}
		rec := rundir.IntervalRecord{T: k.sec, Workload: a.workload, Phase: int(k.phase), Label: a.labels.Name(k.label),
			Tx: k.tx, Derived: k.derived, Count: ag.count, SumUs: ag.sum, SvcUs: ag.sum, MinUs: ag.min, MaxUs: ag.max, Sent: ag.sent, Recv: ag.recv}
		from := len(a.hists)
		var err error
		if a.hists, err = a.enc.appendEncoded(a.hists, &ag.hist); err != nil {
			return err
		}
		a.histAt = append(a.histAt, histRef{len(a.recs), from, len(a.hists)})
		if ag.errs != nil {
			rec.Errors = ag.errs.Errors
			for _, e := range ag.errs.SortedErrors() {
				rec.Errs = append(rec.Errs, rundir.ErrRecord{Class: e.Class.String(), Status: e.Status, Message: e.Message, Count: e.Count})
			}
		}
		a.recs = append(a.recs, rec)
		ag.reset()
		a.run.histPool.Put(ag)
		delete(a.open, k)
	}
	if lastSec != math.MinInt64 {
		a.usersRecord(lastSec)
	}
	hists := string(a.hists)
	for _, r := range a.histAt {
		a.recs[r.rec].Hist = hists[r.from:r.to]
	}
	if err := a.run.writeRecords(a.recs); err != nil {
		return err
	}
	if len(a.raw) > 0 {
		if err := a.run.writeRaw(a.raw); err != nil {
			return err
		}
		a.raw = a.raw[:0]
	}
	return nil
}

// histRef places record rec's histogram at hists[from:to].
type histRef struct{ rec, from, to int }

func (a *Aggregator) usersRecord(sec int64) {
	n, ok := a.users[sec]
	if !ok {
		return
	}
	delete(a.users, sec)
	a.recs = append(a.recs, rundir.IntervalRecord{T: sec, Phase: -1, Users: map[string]int{a.workload: int(n)}})
	a.run.mu.Lock()
	if n > a.run.threads[sec] {
		a.run.threads[sec] = n
	}
	a.run.mu.Unlock()
}

// Close writes every open second and widens the run's span.
func (a *Aggregator) Close() error {
	err := a.flush(math.MaxInt64)
	a.recs = a.recs[:0]
	for sec := range a.users { // seconds that held only transactions
		a.usersRecord(sec)
	}
	if werr := a.run.writeRecords(a.recs); err == nil {
		err = werr
	}
	if w := a.run.plausible; a.spanSet && (a.spanStart < w.from || a.spanEnd > w.to) {
		// The source's own span fails the plausible-times rule (a
		// history row stamped 1970): the samples' span stands instead.
		a.run.Note("%s: the source's run span (%s – %s) is implausible (docs/import.md, implausible times); the samples' own span is used",
			a.workload, time.Unix(0, a.spanStart).UTC().Format(time.RFC3339), time.Unix(0, a.spanEnd).UTC().Format(time.RFC3339))
	} else if a.spanSet {
		a.first, a.last = a.spanStart, a.spanEnd
	}
	a.run.mu.Lock()
	for h, n := range a.hours {
		a.run.hours[h] += n
	}
	for s, n := range a.secs {
		a.run.reqSecs[s] += n
	}
	a.run.mu.Unlock()
	if a.outside > 0 && a.run.opt.Bulk {
		o := &a.run.opt
		a.run.noteFar(a.workload, "request", a.outside, o.From, o.To)
	} else if a.outside > 0 {
		o := &a.run.opt
		a.run.Note("%s: %d requests completed outside the run (%s – %s) and were left out", a.workload, a.outside,
			o.From.UTC().Format(time.RFC3339), o.To.UTC().Format(time.RFC3339))
	}
	a.run.noteImplausible(&a.implausible, a.workload, "request")
	if a.fig != nil && a.count > 0 {
		a.run.AddFigures(a.fig.result(a.run.Workers()))
		a.fig = nil
	}
	if a.count > 0 {
		a.run.See(a.first)
		a.run.See(a.last)
		a.run.mu.Lock()
		a.run.samples += a.count
		a.run.mu.Unlock()
	}
	return err
}

// KeepSamples reports whether decoders should fill the Rec fields that only
// the raw sample copy uses (thread name, URL).
func (r *Run) KeepSamples() bool { return r.opt.KeepSamples }
