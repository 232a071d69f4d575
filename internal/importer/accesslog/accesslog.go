// Package accesslog imports web-server access logs as request samples: one
// file per server, in any format given as an nginx log_format string, an
// Apache LogFormat string or a named preset, with a duration field. Each
// server becomes a workload and each "METHOD /path/{id}" a label, so the
// report gets per-server, per-phase (and optionally per-status) tables.
//
// An external-call log (a line per downstream call with the request's
// message id and the call's duration) can be joined to the access log: each
// request is then also recorded net of the time spent in downstream calls,
// under the same label with the suffix NetSuffix.
package accesslog

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// NetSuffix is appended to a label for the response time net of downstream
// calls (reference 000's "Uden MSB").
const NetSuffix = core.NetSuffix

// OtherPaths is the label path of requests beyond MaxLabels distinct ones.
const OtherPaths = "(other paths)"

// Config describes one access log.
type Config struct {
	Path string
	// Server names the server (the workload); default the file name.
	Server string
	// Format is a preset name, an nginx log_format or an Apache LogFormat.
	Format string
	// External is an external-call log to join by message id (optional),
	// in ExternalFormat (default preset "plateau_external").
	External       string
	ExternalFormat string
	// ByStatus appends the HTTP status to each label ("GET /a 200"), which
	// gives reference 000's per-server × per-iteration × per-code table.
	ByStatus bool
	// MaxLabels bounds distinct labels per server (default 200); the rest
	// are folded into "METHOD (other paths)".
	MaxLabels int
	// JoinWindow is how long before a request's end its downstream calls
	// may have completed (default 10 minutes); it bounds the join's memory.
	JoinWindow time.Duration
	// ChunkSize overrides importer.DefaultChunkSize (tests).
	ChunkSize int
}

// Source imports one access log.
type Source struct {
	cfg     Config
	fmt     *Format
	ext     *Format
	noTimes bool // the format has no duration field
}

// New compiles the formats and checks that they carry what the import needs.
func New(cfg Config) (*Source, error) {
	if cfg.Format == "" {
		return nil, fmt.Errorf("%s: no log format; give --format with a preset (%v) or the server's log_format string", cfg.Path, PresetNames())
	}
	if cfg.Server == "" {
		cfg.Server = fileStem(cfg.Path)
	}
	if cfg.MaxLabels <= 0 {
		cfg.MaxLabels = 200
	}
	if cfg.JoinWindow <= 0 {
		cfg.JoinWindow = 10 * time.Minute
	}
	f, err := Compile(cfg.Format)
	if err != nil {
		return nil, err
	}
	noTimes := !f.uses(roleDurS) && !f.uses(roleDurMs) && !f.uses(roleDurUs)
	if noTimes && cfg.External != "" {
		return nil, fmt.Errorf("log format %q has no duration ($request_time, $request_time_ms, Apache %%D): the external-call join needs the requests' times", f.Source)
	}
	if !f.uses(roleTimeLocal) && !f.uses(roleTimeISO) && !f.uses(roleTimeMsec) && !f.uses(roleTimeStartCL) {
		return nil, fmt.Errorf("log format %q has no time ($time_local, $time_iso8601, $msec, Apache %%t)", f.Source)
	}
	if !f.uses(roleRequest) && !f.uses(rolePath) {
		return nil, fmt.Errorf("log format %q has no request ($request or $uri)", f.Source)
	}
	s := &Source{cfg: cfg, fmt: f, noTimes: noTimes}
	if cfg.External != "" {
		ef := cfg.ExternalFormat
		if ef == "" {
			ef = "plateau_external"
		}
		if s.ext, err = Compile(ef); err != nil {
			return nil, err
		}
		if !s.ext.uses(roleID) || (!s.ext.uses(roleDurS) && !s.ext.uses(roleDurMs) && !s.ext.uses(roleDurUs)) {
			return nil, fmt.Errorf("external-call log format %q needs a message id ($http_x_message_id) and a duration", s.ext.Source)
		}
		if !f.uses(roleID) {
			return nil, fmt.Errorf("log format %q has no message id ($http_x_message_id, $request_id) to join the external-call log by", f.Source)
		}
	}
	return s, nil
}

func fileStem(p string) string {
	b := p
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '/' {
			b = b[i+1:]
			break
		}
	}
	return b
}

// Describe says what the source is.
func (s *Source) Describe() string {
	f, a := s.describe()
	return fmt.Sprintf(f, a...)
}

// describe is Describe as a message's format and arguments.
func (s *Source) describe() (string, []any) {
	if s.cfg.External != "" {
		return "access log %s (server %s) joined with external-call log %s", []any{s.cfg.Path, s.cfg.Server, s.cfg.External}
	}
	return "access log %s (server %s)", []any{s.cfg.Path, s.cfg.Server}
}

var _ importer.Source = (*Source)(nil)

// line is one parsed access-log line.
type parsed struct {
	end     int64 // Unix ns
	us      int64
	status  int32
	sent    int64
	recv    int64
	label   []byte // METHOD + " " + template (in the decoder's scratch)
	id      []byte
	outcome []byte
	service []byte
}

// parser parses lines of one format. Not safe for concurrent use.
type parser struct {
	f     *Format
	vals  [][]byte
	tp    importer.TimeParser
	label []byte
}

func newParser(f *Format, clock importer.Clock) (*parser, error) {
	p := &parser{f: f, vals: make([][]byte, numRoles)}
	var err error
	switch {
	case f.uses(roleTimeMsec): // ms precision: preferred when the log has it
		p.tp, err = importer.NewTimeParser("s", clock)
	case f.uses(roleTimeISO):
		p.tp, err = importer.NewTimeParser("iso8601", clock)
	default:
		p.tp, err = importer.NewTimeParser("nginx", clock)
	}
	return p, err
}

// parse fills pl from line, or returns an error text.
func (p *parser) parse(line []byte, pl *parsed, byStatus bool) string {
	if bad := p.f.matchInto(line, p.vals); bad != "" {
		return bad
	}
	v := p.vals
	// Duration.
	var ok bool
	switch {
	case !p.f.uses(roleDurS) && !p.f.uses(roleDurMs) && !p.f.uses(roleDurUs):
		pl.us, ok = 0, true // no duration in this log (Source.noTimes)
	case v[roleDurUs] != nil:
		pl.us, ok = importer.ParseInt(v[roleDurUs])
	case v[roleDurMs] != nil:
		pl.us, ok = importer.ParseDecimal(v[roleDurMs], 3)
	default:
		pl.us, ok = importer.ParseDecimal(v[roleDurS], 6)
	}
	if !ok || pl.us < 0 {
		return "duration is not a number"
	}
	// Time.
	var t int64
	var err error
	switch {
	case v[roleTimeMsec] != nil:
		t, err = p.tp.Parse(v[roleTimeMsec])
	case v[roleTimeISO] != nil:
		t, err = p.tp.Parse(v[roleTimeISO])
	case v[roleTimeLocal] != nil:
		t, err = p.tp.Parse(v[roleTimeLocal])
	default:
		t, err = p.tp.Parse(v[roleTimeStartCL])
		t += pl.us * 1000 // Apache %t is when the request arrived
	}
	if err != nil {
		return err.Error()
	}
	pl.end = t
	pl.status = 0
	if sv := v[roleStatus]; sv != nil {
		st, ok := importer.ParseInt(sv)
		if !ok || st < 0 || st > 999 {
			return "status is not a number"
		}
		pl.status = int32(st)
	}
	pl.sent, pl.recv = 0, 0
	if b := v[roleBytesSent]; b != nil {
		pl.sent, _ = importer.ParseInt(b)
	}
	if b := v[roleBytesRecv]; b != nil {
		pl.recv, _ = importer.ParseInt(b)
	}
	pl.id, pl.outcome, pl.service = v[roleID], v[roleOutcome], v[roleService]
	// Label.
	method, path := v[roleMethod], v[rolePath]
	if r := v[roleRequest]; r != nil {
		m, rest, ok := bytes.Cut(r, []byte{' '})
		if !ok {
			return "request is not \"METHOD /path PROTOCOL\""
		}
		if i := bytes.LastIndexByte(rest, ' '); i >= 0 {
			rest = rest[:i]
		}
		if method == nil {
			method = m
		}
		if path == nil {
			path = rest
		}
	}
	p.label = append(p.label[:0], method...)
	if len(p.label) > 0 {
		p.label = append(p.label, ' ')
	}
	p.label = AppendTemplate(p.label, path)
	if byStatus {
		p.label = append(p.label, ' ')
		p.label = strconv.AppendInt(p.label, int64(pl.status), 10)
	}
	pl.label = p.label
	return ""
}

// classOf maps an HTTP status to an error class; 0 means no response.
func classOf(status int32) core.ErrorClass {
	if !core.StatusFails(int(status)) {
		return core.ErrNone
	}
	return core.StatusClass(int(status))
}

// rec is a parsed line ready for the aggregator; id is kept for the join.
type rec struct {
	r  importer.Rec
	id string
}

type batch struct {
	recs  []rec
	probs importer.ChunkProblems
}

// Import reads the log (and joins the external-call log) into run.
func (s *Source) Import(ctx context.Context, run *importer.Run) error {
	f, err := os.Open(s.cfg.Path)
	if err != nil {
		return fmt.Errorf("opening access log: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	head, _ := br.Peek(64 << 10)
	first, _, _ := bytes.Cut(head, []byte{'\n'})
	first = bytes.TrimSuffix(first, []byte{'\r'})
	probe, err := newParser(s.fmt, run.Clock())
	if err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	var pl parsed
	if len(first) == 0 {
		return fmt.Errorf("%s: empty access log", s.cfg.Path)
	}
	if bad := probe.parse(first, &pl, false); bad != "" {
		if e := importer.Refuse(s.cfg.Path, "an access log", head); importer.Sniff(head) != "" && importer.Sniff(head) != "a web server access log" {
			return e
		}
		return fmt.Errorf("%s:1: the first line does not match the log format %q: %s: %q", s.cfg.Path, s.fmt.Source, bad, importer.Quote(first))
	}
	df, da := s.describe()
	run.AddSourcef(df, da...)
	h := rundir.HoldsOf(rundir.SourceAccessLog)
	h.Durations = !s.noTimes
	run.SetOrigin(rundir.SourceAccessLog, h)
	agg := run.Requests(s.cfg.Server)
	if iso := probe.vals[roleTimeISO]; !s.fmt.uses(roleTimeMsec) && (iso == nil || !bytes.ContainsAny(iso, ".,")) {
		agg.SetTimeResolution(time.Second) // $time_local, $time_iso8601, %t: whole seconds
	}
	if s.noTimes {
		run.MarkNoTimes(s.cfg.Server)
		run.Note("%s: the log format has no duration field ($request_time, Apache %%D): throughput, status mix, request mix and bytes are imported; response times are not in this log", s.cfg.Path)
	}
	var j *joiner
	if s.ext != nil {
		if j, err = newJoiner(s.cfg.External, s.ext, run, s.cfg.JoinWindow); err != nil {
			return err
		}
		defer j.close()
	}
	labels := &labelFolder{max: s.cfg.MaxLabels, labels: agg.Labels(), byStatus: s.cfg.ByStatus}
	pool := sync.Pool{New: func() any {
		p, _ := newParser(s.fmt, run.Clock())
		return p
	}}
	probs := run.Problems()
	err = importer.Parallel(ctx, br, run.Workers(), s.cfg.ChunkSize, importer.CutLines,
		func(c *importer.Chunk) (*batch, error) {
			p := pool.Get().(*parser)
			defer pool.Put(p)
			b := &batch{}
			b.probs.File = s.cfg.Path
			var pl parsed
			data, line := c.Data, c.Line
			cache := map[string]int32{}
			for len(data) > 0 {
				nl := bytes.IndexByte(data, '\n')
				var l []byte
				if nl < 0 {
					l, data = data, nil
				} else {
					l, data = data[:nl], data[nl+1:]
				}
				l = bytes.TrimSuffix(l, []byte{'\r'})
				lineNo := line
				line++
				if len(l) == 0 {
					continue
				}
				if bad := p.parse(l, &pl, s.cfg.ByStatus); bad != "" {
					b.probs.Add(lineNo, bad, l)
					continue
				}
				id, ok := cache[string(pl.label)]
				if !ok {
					id = labels.id(pl.label)
					cache[string(pl.label)] = id
				}
				r := rec{r: importer.Rec{End: pl.end, Elapsed: pl.us, Label: id, Status: pl.status, Threads: -1,
					Class: classOf(pl.status), Sent: pl.recv, Recv: pl.sent}}
				if r.r.Class != core.ErrNone {
					r.r.Message = "HTTP " + strconv.Itoa(int(pl.status))
					if pl.status == 0 {
						r.r.Message = "no status"
					}
				}
				if j != nil {
					r.id = string(pl.id)
				}
				b.recs = append(b.recs, r)
			}
			return b, nil
		},
		func(c *importer.Chunk, b *batch) error {
			probs.Merge(&b.probs)
			for i := range b.recs {
				r := &b.recs[i]
				if err := agg.Add(&r.r); err != nil {
					return err
				}
				if j == nil {
					continue
				}
				down, err := j.downstream(r.id, r.r.End-r.r.Elapsed*1000, r.r.End)
				if err != nil {
					return err
				}
				net := r.r
				net.Elapsed = max(0, r.r.Elapsed-down)
				net.Label = labels.netID(r.r.Label)
				net.Derived = true
				if err := agg.Add(&net); err != nil {
					return err
				}
			}
			return nil
		})
	if cerr := agg.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.cfg.Path, err)
	}
	n := agg.Count()
	if j != nil {
		n /= 2
		run.Note("%s: response times net of downstream calls (joined from %s by message id) are recorded under labels ending in %q; %d of the file's %d lines had downstream calls", s.cfg.Path, s.cfg.External, NetSuffix, j.matched, n)
		if j.unmatched > 0 {
			run.Note("%s: %d downstream calls matched no request of %s within %s", s.cfg.External, j.unmatched, s.cfg.Path, s.cfg.JoinWindow)
		}
	}
	if labels.folded > 0 {
		run.Note("%s: more than %d distinct request labels; later new paths are folded into \"METHOD %s\"", s.cfg.Path, s.cfg.MaxLabels, OtherPaths)
	}
	run.Logf("%s: %d requests, %d labels, %d malformed lines", s.cfg.Path, n, agg.Labels().Len(), probs.Count(s.cfg.Path))
	if n == 0 {
		return fmt.Errorf("%s: no requests", s.cfg.Path)
	}
	return nil
}

// labelFolder interns labels up to a maximum, folds the rest into one
// label per method, and maps each label to its net-of-downstream twin. Safe
// for concurrent use.
type labelFolder struct {
	mu       sync.Mutex
	max      int
	byStatus bool // labels end in " STATUS", kept when a path is folded
	known    map[string]int32
	labels   *importer.Labels
	net      map[int32]int32
	folded   int64
}

func (f *labelFolder) id(label []byte) int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		f.known = map[string]int32{}
	}
	if id, ok := f.known[string(label)]; ok {
		return id
	}
	if len(f.known) >= f.max {
		f.folded++
		m, _, _ := bytes.Cut(label, []byte{' '})
		folded := append(append(append([]byte(nil), m...), ' '), OtherPaths...)
		if f.byStatus { // keep the status: "GET (other paths) 200"
			folded = append(folded, label[bytes.LastIndexByte(label, ' '):]...)
		}
		return f.labels.ID(folded)
	}
	id := f.labels.ID(label)
	f.known[string(label)] = id
	return id
}

func (f *labelFolder) netID(id int32) int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.net == nil {
		f.net = map[int32]int32{}
	}
	n, ok := f.net[id]
	if !ok {
		n = f.labels.ID([]byte(f.labels.Name(id) + NetSuffix))
		f.net[id] = n
	}
	return n
}
