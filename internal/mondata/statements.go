package mondata

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// Database monitors (postgres, mysql) record the cost of normalised
// statements twice: the top statements of the whole session in
// <stem>.statements.json, and a log of per-statement increments every
// StatementEvery in <stem>.statements.jsonl, from which the report sums the
// top statements of each phase.

// StatementsSuffix ends the name of a target's whole-session statements file.
const StatementsSuffix = ".statements.json"

// StatementLogSuffix ends the name of a target's statements log.
const StatementLogSuffix = ".statements.jsonl"

// StatementEvery is how often database monitors log statement increments:
// often enough to split a run into its phases, rarely enough to cost the
// server nothing measurable.
const StatementEvery = 5 * time.Second

// TopStatements is how many statements the statements file keeps.
const TopStatements = 20

// QueryChars is the length query texts are cut to.
const QueryChars = 300

// Statement is one normalised statement's cost over a span.
type Statement struct {
	QueryID string  `json:"queryid"`
	Query   string  `json:"query"` // normalised text, cut to QueryChars
	Calls   int64   `json:"calls"`
	TotalMs float64 `json:"total_ms"`
	MeanMs  float64 `json:"mean_ms"`
	Rows    int64   `json:"rows"`
}

// Statements is the content of a statements file: the top statements by
// total execution time over a span.
type Statements struct {
	Target string    `json:"target"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// Statements is sorted by TotalMs, largest first.
	Statements []Statement `json:"statements"`
	// Distinct is how many statements ran in the span (before the cut to
	// the top ones).
	Distinct int `json:"distinct"`
	// AllMs is the execution time of every statement of the span, so a
	// statement's share is TotalMs / AllMs (0 in files of older versions).
	AllMs float64 `json:"all_ms"`
}

// StatementCounters are a statement's cumulative counters at one moment,
// as the server's statistics view gives them.
type StatementCounters struct {
	Query   string
	Calls   float64
	TotalMs float64
	Rows    float64
}

// TopOf diffs two snapshots keyed by statement id. A statement absent at
// start, or whose counters went down (statistics reset, or evicted and
// re-added), counts from zero.
func TopOf(target string, start, end time.Time, a, b map[string]StatementCounters, n int) Statements {
	rep := Statements{Target: target, Start: start.UTC(), End: end.UTC(), Statements: []Statement{}}
	for k, e := range b {
		s, ok := a[k]
		if !ok || e.Calls < s.Calls || e.TotalMs < s.TotalMs {
			s = StatementCounters{}
		}
		calls := e.Calls - s.Calls
		if calls <= 0 {
			continue
		}
		total := e.TotalMs - s.TotalMs
		rep.AllMs += total
		rep.Statements = append(rep.Statements, Statement{
			QueryID: k, Query: CutQuery(e.Query, QueryChars),
			Calls: int64(calls), TotalMs: round3(total), MeanMs: round6(total / calls), Rows: int64(e.Rows - s.Rows),
		})
	}
	rep.AllMs = round3(rep.AllMs)
	rep.Distinct = len(rep.Statements)
	sortTop(&rep, n)
	return rep
}

func sortTop(rep *Statements, n int) {
	sort.Slice(rep.Statements, func(i, j int) bool {
		si, sj := rep.Statements[i], rep.Statements[j]
		if si.TotalMs != sj.TotalMs {
			return si.TotalMs > sj.TotalMs
		}
		return si.QueryID < sj.QueryID
	})
	if len(rep.Statements) > n {
		rep.Statements = rep.Statements[:n]
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// round6 keeps a mean in ms to the nanosecond: fast statements take
// well under a microsecond.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// CutQuery collapses whitespace and cuts at n bytes on a rune boundary.
func CutQuery(q string, n int) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) <= n {
		return q
	}
	for n > 0 && !utf8.RuneStart(q[n]) {
		n--
	}
	return q[:n] + "…"
}

// WriteStatements writes <stem>.statements.json atomically.
func WriteStatements(dir, stem string, rep Statements) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding top statements: %w", err)
	}
	return WriteAtomic(filepath.Join(dir, stem+StatementsSuffix), append(b, '\n'))
}

// ReadStatements reads every statements file of a run directory, in file
// name order.
func ReadStatements(runDir string) ([]Statements, error) {
	files, err := filepath.Glob(filepath.Join(runDir, SubDir, "*"+StatementsSuffix))
	if err != nil {
		return nil, fmt.Errorf("listing statements files: %w", err)
	}
	sort.Strings(files)
	var out []Statements
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("reading statements: %w", err)
		}
		var s Statements
		if err := json.Unmarshal(b, &s); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		out = append(out, s)
	}
	return out, nil
}

// stmtLogLine is one line of a statements log: the increments of every
// statement that ran since the previous line. A statement's text is
// written the first time it appears.
type stmtLogLine struct {
	Target string         `json:"target,omitempty"` // first line only
	T      time.Time      `json:"t"`
	D      []stmtLogDelta `json:"d"`
}

type stmtLogDelta struct {
	ID    string  `json:"id"`
	Query string  `json:"q,omitempty"`
	Calls float64 `json:"c"`
	Ms    float64 `json:"ms"`
	Rows  float64 `json:"r"`
}

// StatementLog appends statement increments to <stem>.statements.jsonl.
// Not safe for concurrent use (a collector calls it from its sampling
// goroutine).
type StatementLog struct {
	f      *os.File
	target string
	prev   map[string]StatementCounters
	texts  map[string]bool
	last   time.Time
}

// OpenStatementLog creates the log of a target.
func OpenStatementLog(dir, stem, target string) (*StatementLog, error) {
	f, err := os.OpenFile(filepath.Join(dir, stem+StatementLogSuffix), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating statements log: %w", err)
	}
	return &StatementLog{f: f, target: target, texts: map[string]bool{}}, nil
}

// Due reports whether StatementEvery has passed since the last snapshot.
func (l *StatementLog) Due(now time.Time) bool { return now.Sub(l.last) >= StatementEvery }

// Snapshot records the increments since the previous snapshot, stamped t;
// the first snapshot is the baseline and writes only the header line.
func (l *StatementLog) Snapshot(t time.Time, cur map[string]StatementCounters) error {
	l.last = t
	line := stmtLogLine{T: t.UTC().Truncate(time.Millisecond), D: []stmtLogDelta{}}
	if l.prev == nil {
		line.Target = l.target
	} else {
		for k, e := range cur {
			s, ok := l.prev[k]
			if !ok || e.Calls < s.Calls || e.TotalMs < s.TotalMs {
				s = StatementCounters{}
			}
			if e.Calls-s.Calls <= 0 {
				continue
			}
			d := stmtLogDelta{ID: k, Calls: e.Calls - s.Calls, Ms: round3(e.TotalMs - s.TotalMs), Rows: e.Rows - s.Rows}
			if !l.texts[k] {
				l.texts[k] = true
				d.Query = CutQuery(e.Query, QueryChars)
			}
			line.D = append(line.D, d)
		}
		sort.Slice(line.D, func(i, j int) bool { return line.D[i].ID < line.D[j].ID })
	}
	l.prev = cur
	b, err := json.Marshal(line)
	if err != nil {
		return fmt.Errorf("encoding statements log: %w", err)
	}
	if _, err := l.f.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing statements log: %w", err)
	}
	return nil
}

// Close closes the log file.
func (l *StatementLog) Close() error { return l.f.Close() }

// StatementHistory is a target's statements log read back.
type StatementHistory struct {
	Target string
	steps  []stmtLogLine
	texts  map[string]string
}

// ReadStatementLogs reads every statements log of a run directory. A torn
// last line is ignored; another bad line is an error naming file and line.
func ReadStatementLogs(runDir string) ([]*StatementHistory, error) {
	files, err := filepath.Glob(filepath.Join(runDir, SubDir, "*"+StatementLogSuffix))
	if err != nil {
		return nil, fmt.Errorf("listing statements logs: %w", err)
	}
	sort.Strings(files)
	var out []*StatementHistory
	for _, p := range files {
		h, err := readStatementLog(p)
		if err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, nil
}

func readStatementLog(p string) (*StatementHistory, error) {
	name := filepath.Base(p)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("reading statements log: %w", err)
	}
	defer f.Close()
	r, _, err := CompleteLines(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	h := &StatementHistory{Target: strings.TrimSuffix(name, StatementLogSuffix), texts: map[string]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for line := 1; sc.Scan(); line++ {
		var l stmtLogLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		if l.Target != "" {
			h.Target = l.Target
		}
		for _, d := range l.D {
			if d.Query != "" {
				h.texts[d.ID] = d.Query
			}
		}
		h.steps = append(h.steps, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return h, nil
}

// Between sums the increments logged in (from, to] — each increment is
// stamped with the end of the interval it covers — into the top n
// statements of that span.
func (h *StatementHistory) Between(from, to time.Time, n int) Statements {
	rep := Statements{Target: h.Target, Start: from.UTC(), End: to.UTC(), Statements: []Statement{}}
	sum := map[string]*Statement{}
	for _, l := range h.steps {
		if !l.T.After(from) || l.T.After(to) {
			continue
		}
		for _, d := range l.D {
			s := sum[d.ID]
			if s == nil {
				s = &Statement{QueryID: d.ID, Query: h.texts[d.ID]}
				sum[d.ID] = s
			}
			s.Calls += int64(d.Calls)
			s.TotalMs += d.Ms
			s.Rows += int64(d.Rows)
		}
	}
	for _, s := range sum {
		rep.AllMs += s.TotalMs
		s.TotalMs = round3(s.TotalMs)
		if s.Calls > 0 {
			s.MeanMs = round6(s.TotalMs / float64(s.Calls))
		}
		rep.Statements = append(rep.Statements, *s)
	}
	rep.AllMs = round3(rep.AllMs)
	rep.Distinct = len(rep.Statements)
	sortTop(&rep, n)
	return rep
}
