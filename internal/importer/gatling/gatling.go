// Package gatling imports Gatling's simulation.log: the tab-separated text
// log Gatling 2.x and 3.0–3.11 write (plain, or gzipped), one record a line:
//
//	RUN       class, simulation id, start (ms), description, Gatling version
//	USER      scenario, START|END, time (ms)            (3.4+; older logs add a user id and a second time)
//	REQUEST   groups, name, start (ms), end (ms), OK|KO, message   (older logs add scenario and user id in front)
//	GROUP     groups, start (ms), end (ms), cumulated response time (ms), OK|KO
//	ERROR     message, time (ms)                        (a crash outside any request)
//	ASSERTION base64                                    (the simulation's assertions, skipped)
//
// Every REQUEST is one sample: it ended at end, its response time is end −
// start (Gatling's definition, whole milliseconds), its label is the request
// name, prefixed by its group path ("shop / pay") when it ran in a group, as
// Gatling's report nests it. KO is failed, classed from the message
// ("status.find.in(200,…,304), found 500" → 5xx, status 500; Netty's
// timeout, refused, reset, DNS and TLS exceptions; any other check → check).
// GROUP records are transaction labels (the group path) valued at their
// cumulated response time, as Gatling's report shows groups by default, and
// left out of the total. USER START/END give the active users, from which
// phases are derived. ERROR lines are counted and quoted in the notes.
//
// Gatling 3.12 and later write a binary simulation.log; such a file is
// refused with a message saying so.
package gatling

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Config describes one simulation.log.
type Config struct {
	// Path is the simulation.log (gzipped when it starts with gzip's magic).
	Path string
	// Workload names the samples' workload (default "gatling").
	Workload string
	// ChunkSize overrides importer.DefaultChunkSize (tests).
	ChunkSize int
	// Follow, when set, makes the import follow the log while Gatling is
	// still writing it, until Follow is closed (Gatling has exited): the
	// requests reach the run as they are written (importer.Follower).
	Follow <-chan struct{}
}

// Source imports one simulation.log.
type Source struct{ cfg Config }

// New returns a source for cfg.
func New(cfg Config) *Source {
	if cfg.Workload == "" {
		cfg.Workload = "gatling"
	}
	return &Source{cfg: cfg}
}

// Describe says what the source is.
func (s *Source) Describe() string { return "Gatling simulation.log " + s.cfg.Path }

var _ importer.Source = (*Source)(nil)

// Kind is what importer.Sniff calls a text simulation.log.
const Kind = "a Gatling simulation.log"

// Import reads the log into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	var f io.ReadCloser
	var err error
	if s.cfg.Follow != nil {
		f, err = importer.Follow(s.cfg.Path, s.cfg.Follow, importer.Lines(1)) // the RUN record
	} else {
		f, err = os.Open(s.cfg.Path)
	}
	if err != nil {
		return fmt.Errorf("opening Gatling log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	how := ""
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: reading gzip: %w", s.cfg.Path, err)
		}
		defer zr.Close()
		br, how = bufio.NewReaderSize(zr, 1<<20), " (gzip)"
	}
	head, _ := br.Peek(64 << 10)
	if got := importer.Sniff(head); got != Kind {
		return importer.Refuse(s.cfg.Path, "a Gatling simulation.log (the text log of Gatling 2.x–3.11)", head)
	}
	run.AddSource("Gatling simulation.log " + s.cfg.Path + how)
	// Whole-ms times from start to end, no sizes, no planned load.
	run.SetOrigin(rundir.SourceGatling, rundir.HoldsOf(rundir.SourceGatling))
	agg := run.Requests(s.cfg.Workload)
	agg.CollectFigures(importer.GatlingFigures)
	var tot tally
	probs := run.Problems()
	var users int32
	err = importer.Parallel(ctx, br, run.Workers(), s.cfg.ChunkSize, importer.CutLines,
		func(c *importer.Chunk) (*batch, error) {
			d := &decoder{labels: agg.Labels().NewCache()}
			b := &batch{}
			b.probs.File = s.cfg.Path
			d.decode(c.Data, c.Line, b)
			return b, nil
		},
		func(c *importer.Chunk, b *batch) error {
			probs.Merge(&b.probs)
			tot.add(&b.tally)
			// Records and user events are in file order within a batch;
			// the active-user count runs across batches.
			ui := 0
			for i := range b.recs {
				r := &b.recs[i]
				for ; ui < len(b.users) && b.users[ui].at <= i; ui++ {
					users += b.users[ui].d
					agg.AddUsers(b.users[ui].t, max(users, 0))
					if b.users[ui].d > 0 {
						agg.AddArrivals(b.users[ui].t, 1)
					}
				}
				if !r.Tx {
					r.Threads = max(users, 0)
				}
				if err := agg.Add(r); err != nil {
					return err
				}
			}
			for ; ui < len(b.users); ui++ {
				users += b.users[ui].d
				agg.AddUsers(b.users[ui].t, max(users, 0))
				if b.users[ui].d > 0 {
					agg.AddArrivals(b.users[ui].t, 1)
				}
			}
			return nil
		})
	if cerr := agg.Close(); err == nil {
		err = cerr
	}
	if how != "" && errors.Is(err, io.ErrUnexpectedEOF) {
		return importer.TruncatedGzip(s.cfg.Path, err, fmt.Sprintf("%d requests (%d KO)", tot.requests, tot.failed))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	s.notes(run, &tot, agg)
	if agg.Count() == 0 {
		if n := probs.Count(s.cfg.Path); n > 0 {
			return probs.NoSamples(s.cfg.Path)
		}
		return fmt.Errorf("%s: no REQUEST records: nothing to import", s.cfg.Path)
	}
	// Gatling's rates divide by the run's duration rounded up to whole
	// seconds, from the first user start or request to the last record.
	if tot.spanSet {
		spanS := math.Ceil(float64(tot.last-tot.first) / 1000)
		run.SetFigureSpans(s.cfg.Workload, spanS, importer.GatlingFigures.ThroughputRule)
	}
	return nil
}

func (s *Source) notes(run *importer.Run, tot *tally, agg *importer.Aggregator) {
	run.Logf("%s: %d requests, %d KO, %d group samples, %d labels, %d users started, %d malformed lines", s.cfg.Path,
		tot.requests, tot.failed, tot.groups, agg.Labels().Len(), tot.starts, run.Problems().Count(s.cfg.Path))
	if tot.run != "" {
		run.Note("%s: %s", s.cfg.Path, tot.run)
	}
	if tot.errors > 0 {
		run.Note("%s: %d ERROR records (failures outside any request, not counted as requests); the commonest: %s",
			s.cfg.Path, tot.errors, tot.topErrors())
	}
	if tot.assertions > 0 {
		run.Note("%s: %d ASSERTION records (the simulation's own assertions, serialised by Gatling) skipped", s.cfg.Path, tot.assertions)
	}
	if tot.starts == 0 {
		run.Note("%s: no USER records, so there are no users per second and no derived phases", s.cfg.Path)
	}
}

// tally is what the log holds besides request samples.
type tally struct {
	requests, failed, groups int64
	starts, ends             int64
	errors, assertions       int64
	errMsgs                  map[string]int64
	run                      string // the RUN record, described
	first, last              int64  // ms, over USER, REQUEST and GROUP records
	spanSet                  bool
}

func (t *tally) see(ms int64) {
	if !t.spanSet {
		t.first, t.last, t.spanSet = ms, ms, true
		return
	}
	t.first, t.last = min(t.first, ms), max(t.last, ms)
}

func (t *tally) add(o *tally) {
	t.requests += o.requests
	t.failed += o.failed
	t.groups += o.groups
	t.starts += o.starts
	t.ends += o.ends
	t.errors += o.errors
	t.assertions += o.assertions
	for m, n := range o.errMsgs {
		if t.errMsgs == nil {
			t.errMsgs = map[string]int64{}
		}
		if len(t.errMsgs) < 1000 || t.errMsgs[m] > 0 {
			t.errMsgs[m] += n
		}
	}
	if t.run == "" {
		t.run = o.run
	}
	if o.spanSet {
		t.see(o.first)
		t.see(o.last)
	}
}

// topErrors lists the three commonest ERROR messages with their counts.
func (t *tally) topErrors() string {
	type mc struct {
		m string
		n int64
	}
	var l []mc
	for m, n := range t.errMsgs {
		l = append(l, mc{m, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || l[i].n == l[j].n && l[i].m < l[j].m })
	var b strings.Builder
	for i, e := range l[:min(3, len(l))] {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%q × %d", e.m, e.n)
	}
	return b.String()
}

// userEvent is a USER START (+1) or END (−1) at t (Unix ns), seen before
// the batch's record at index at.
type userEvent struct {
	t  int64
	d  int32
	at int
}

// batch is the decoded content of one chunk.
type batch struct {
	recs  []importer.Rec
	users []userEvent
	probs importer.ChunkProblems
	tally
}

// decoder decodes lines of one chunk. Each goroutine has its own.
type decoder struct {
	labels *importer.Cache
	fields [][]byte
	lb     []byte
}

func (d *decoder) decode(data []byte, line int64, b *batch) {
	for len(data) > 0 {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		d.line(bytes.TrimSuffix(raw, []byte{'\r'}), line, b)
		line++
	}
}

func (d *decoder) line(raw []byte, lineNo int64, b *batch) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return
	}
	d.fields = d.fields[:0]
	for rest := raw; ; {
		i := bytes.IndexByte(rest, '\t')
		if i < 0 {
			d.fields = append(d.fields, rest)
			break
		}
		d.fields = append(d.fields, rest[:i])
		rest = rest[i+1:]
	}
	f := d.fields
	switch string(f[0]) {
	case "REQUEST":
		d.request(f, raw, lineNo, b)
	case "USER":
		d.user(f, raw, lineNo, b)
	case "GROUP":
		d.group(f, raw, lineNo, b)
	case "RUN":
		if len(f) >= 4 {
			desc := "Gatling"
			if len(f) >= 6 {
				desc += " " + string(bytes.TrimSpace(f[5]))
			}
			desc += " simulation " + string(f[1])
			if ms, err := strconv.ParseInt(string(f[3]), 10, 64); err == nil {
				desc += fmt.Sprintf(" (run %s started %d ms after the epoch)", string(f[2]), ms)
			}
			b.run = desc
		}
	case "ERROR":
		b.errors++
		if len(f) >= 2 {
			if b.errMsgs == nil {
				b.errMsgs = map[string]int64{}
			}
			b.errMsgs[strings.TrimSpace(string(f[1]))]++
		}
	case "ASSERTION":
		b.assertions++
	default:
		b.probs.Add(lineNo, fmt.Sprintf("record type %q is none of RUN, USER, REQUEST, GROUP, ERROR, ASSERTION", importer.Quote(f[0])), raw)
	}
}

// statusAt finds the OK/KO field preceded by two times (start, end): the
// layouts of Gatling's versions differ in what comes before them.
func statusAt(f [][]byte, from int) int {
	for i := from; i < len(f); i++ {
		if s := string(f[i]); (s == "OK" || s == "KO") && isInt(f[i-1]) && isInt(f[i-2]) {
			return i
		}
	}
	return -1
}

func isInt(b []byte) bool {
	if len(b) == 0 || len(b) > 18 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func atoi(b []byte) int64 {
	var n int64
	for _, c := range b {
		n = n*10 + int64(c-'0')
	}
	return n
}

// maxMs bounds a time stamp (year 2286): larger values overflow ns.
const maxMs = 9_999_999_999_999

func (d *decoder) request(f [][]byte, raw []byte, lineNo int64, b *batch) {
	// 3.4+: REQUEST groups name start end status [message]; older logs put
	// scenario and user id (2.x) or the user id (3.0–3.3) in front.
	si := statusAt(f, 5)
	if si < 0 {
		b.probs.Add(lineNo, "REQUEST without start, end and OK/KO", raw)
		return
	}
	start, end := atoi(f[si-2]), atoi(f[si-1])
	if end < start || end > maxMs {
		b.probs.Add(lineNo, "REQUEST ends before it starts", raw)
		return
	}
	name, groups := f[si-3], f[si-4]
	d.lb = d.lb[:0]
	if len(groups) > 0 {
		d.lb = appendGroupPath(d.lb, groups)
		d.lb = append(d.lb, " / "...)
	}
	d.lb = append(d.lb, name...)
	r := importer.Rec{End: end * 1e6, Elapsed: (end - start) * 1000, Threads: -1, Label: d.labels.ID(d.lb)}
	if string(f[si]) == "KO" {
		msg := ""
		if si+1 < len(f) {
			msg = strings.TrimSpace(string(f[si+1]))
		}
		r.Class, r.Status = Classify(msg)
		r.Message = msg
		if r.Message == "" {
			r.Message = "KO"
		}
		b.failed++
	}
	b.requests++
	b.see(start)
	b.see(end)
	b.recs = append(b.recs, r)
}

// appendGroupPath writes Gatling's comma-separated group hierarchy as the
// report's path, "outer / inner".
func appendGroupPath(dst, groups []byte) []byte {
	for i, g := range bytes.Split(groups, []byte{','}) {
		if i > 0 {
			dst = append(dst, " / "...)
		}
		dst = append(dst, g...)
	}
	return dst
}

func (d *decoder) group(f [][]byte, raw []byte, lineNo int64, b *batch) {
	// 3.x: GROUP groups start end cumulated status; 2.x: scenario and user
	// id in front. The status follows three integers.
	for i := 4; i < len(f); i++ {
		if s := string(f[i]); (s == "OK" || s == "KO") && isInt(f[i-1]) && isInt(f[i-2]) && isInt(f[i-3]) {
			start, end, cum := atoi(f[i-3]), atoi(f[i-2]), atoi(f[i-1])
			if end < start || end > maxMs {
				b.probs.Add(lineNo, "GROUP ends before it starts", raw)
				return
			}
			d.lb = appendGroupPath(d.lb[:0], f[i-4])
			r := importer.Rec{End: end * 1e6, Elapsed: cum * 1000, Threads: -1, Tx: true, Label: d.labels.ID(d.lb)}
			if s == "KO" {
				r.Class, r.Message = core.ErrCheck, "KO"
			}
			b.groups++
			b.see(start)
			b.see(end)
			b.recs = append(b.recs, r)
			return
		}
	}
	b.probs.Add(lineNo, "GROUP without start, end, cumulated time and OK/KO", raw)
}

func (d *decoder) user(f [][]byte, raw []byte, lineNo int64, b *batch) {
	// 3.4+: USER scenario START|END time; 2.x–3.3: USER scenario id
	// START|END start end (the START line's end is 0).
	for i := 2; i < len(f)-1; i++ {
		s := string(f[i])
		if s != "START" && s != "END" || !isInt(f[i+1]) {
			continue
		}
		t := atoi(f[i+1])
		if s == "END" && i+2 < len(f) && isInt(f[i+2]) && atoi(f[i+2]) > 0 {
			t = atoi(f[i+2])
		}
		if t > maxMs {
			break
		}
		ev := userEvent{t: t * 1e6, d: 1, at: len(b.recs)}
		if s == "END" {
			ev.d = -1
			b.ends++
		} else {
			b.starts++
		}
		b.see(t)
		b.users = append(b.users, ev)
		return
	}
	b.probs.Add(lineNo, "USER without START or END and a time", raw)
}

// Classify maps a KO message to an error class and, when the message names
// one, the HTTP status: Gatling's status check ("status.find.in(…), but
// actually found 503") and Netty's and Java's transport exceptions.
func Classify(msg string) (core.ErrorClass, int32) {
	// "status.find.is(200), but actually found 404" (an explicit check),
	// "status.find.in(200,…,304), found 401" (Gatling's default one).
	if i := strings.LastIndex(msg, "found "); i >= 0 && strings.HasPrefix(msg, "status") {
		rest := msg[i+len("found "):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if st, err := strconv.Atoi(rest[:j]); err == nil && st >= 100 && st <= 999 {
			return core.StatusClass(st), int32(st)
		}
	}
	m := strings.ToLower(msg)
	switch {
	case strings.Contains(m, "timeout") || strings.Contains(m, "timed out"):
		return core.ErrTimeout, 0
	case strings.Contains(m, "connection refused") || strings.Contains(m, "connectexception"):
		return core.ErrRefused, 0
	case strings.Contains(m, "connection reset") || strings.Contains(m, "prematurechannelclosure") ||
		strings.Contains(m, "closedchannel") || strings.Contains(m, "broken pipe"):
		return core.ErrReset, 0
	case strings.Contains(m, "unknownhost") || strings.Contains(m, "unresolvedaddress") || strings.Contains(m, "dns"):
		return core.ErrDNS, 0
	case strings.Contains(m, "ssl") || strings.Contains(m, "handshake") || strings.Contains(m, "certificate"):
		return core.ErrTLS, 0
	}
	return core.ErrCheck, 0
}
