package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// TopN is how many statements the statements file keeps.
const TopN = 20

// QueryChars is the length query texts are cut to in the statements file.
const QueryChars = 300

// StatementsSuffix ends the name of a target's statements file.
const StatementsSuffix = ".statements.json"

// stmtKey identifies a normalised statement. pg_stat_statements may hold
// several rows per key (top-level and nested, PG14+); they are summed.
type stmtKey struct {
	user, db string
	queryID  int64
}

type stmtRow struct {
	query   string
	calls   float64
	totalMs float64
	rows    float64
}

// statements reads pg_stat_statements, leaving out plateau's own queries.
func (c *Collector) statements(ctx context.Context) (map[stmtKey]stmtRow, error) {
	total := "total_exec_time"
	if c.version < 130000 {
		total = "total_time" // renamed in PostgreSQL 13
	}
	q := `SELECT ` + tag + ` userid::text, dbid::text, coalesce(queryid, 0), calls::float8, ` + total + `::float8, rows::float8, left(query, 2000)
		FROM ` + c.pgss + ` WHERE query NOT LIKE '%plateau-monitor%'`
	c.ownQueries++
	rows, err := c.conn.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[stmtKey]stmtRow{}
	for rows.Next() {
		var (
			k stmtKey
			r stmtRow
		)
		if err := rows.Scan(&k.user, &k.db, &k.queryID, &r.calls, &r.totalMs, &r.rows, &r.query); err != nil {
			return nil, err
		}
		p := out[k]
		p.query = r.query
		p.calls += r.calls
		p.totalMs += r.totalMs
		p.rows += r.rows
		out[k] = p
	}
	return out, rows.Err()
}

// Statement is one normalised statement's cost over a monitoring session.
type Statement struct {
	QueryID string  `json:"queryid"`
	Query   string  `json:"query"` // normalised text, cut to QueryChars
	Calls   int64   `json:"calls"`
	TotalMs float64 `json:"total_ms"`
	MeanMs  float64 `json:"mean_ms"`
	Rows    int64   `json:"rows"`
}

// Statements is the content of a statements file: the top statements by
// total execution time between the start and end snapshots.
type Statements struct {
	Target string    `json:"target"`
	Start  time.Time `json:"start"`
	End    time.Time `json:"end"`
	// Statements is sorted by TotalMs, largest first.
	Statements []Statement `json:"statements"`
	// Distinct is how many statements ran in the session (before the cut
	// to the top ones).
	Distinct int `json:"distinct"`
}

// topStatements diffs the snapshots. A statement absent at start, or whose
// counters went down (pg_stat_statements_reset, or evicted and re-added),
// counts from zero.
func topStatements(target string, start, end time.Time, a, b map[stmtKey]stmtRow, n int) Statements {
	rep := Statements{Target: target, Start: start.UTC(), End: end.UTC(), Statements: []Statement{}}
	for k, e := range b {
		s, ok := a[k]
		if !ok || e.calls < s.calls || e.totalMs < s.totalMs {
			s = stmtRow{}
		}
		calls := e.calls - s.calls
		if calls <= 0 {
			continue
		}
		total := e.totalMs - s.totalMs
		rep.Statements = append(rep.Statements, Statement{
			QueryID: fmt.Sprint(k.queryID), Query: cutQuery(e.query, QueryChars),
			Calls: int64(calls), TotalMs: round3(total), MeanMs: round3(total / calls), Rows: int64(e.rows - s.rows),
		})
	}
	rep.Distinct = len(rep.Statements)
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
	return rep
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

// cutQuery collapses whitespace and cuts at n bytes on a rune boundary.
func cutQuery(q string, n int) string {
	q = strings.Join(strings.Fields(q), " ")
	if len(q) <= n {
		return q
	}
	for n > 0 && !utf8.RuneStart(q[n]) {
		n--
	}
	return q[:n] + "…"
}

// writeStatements writes the file atomically (temporary file + rename), so
// a reader never sees half of it.
func writeStatements(dir, stem string, rep Statements) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding top statements: %w", err)
	}
	path := filepath.Join(dir, stem+StatementsSuffix)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing top statements: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("writing top statements: %w", err)
	}
	return nil
}

// ReadStatements reads every statements file of a run directory (the one
// given as monitor.Options.Dir), in target-name order.
func ReadStatements(runDir string) ([]Statements, error) {
	files, err := filepath.Glob(filepath.Join(runDir, monitor.SubDir, "*"+StatementsSuffix))
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
