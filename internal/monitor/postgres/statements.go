package postgres

import (
	"context"
	"fmt"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// TopN is how many statements the statements file keeps.
const TopN = monitor.TopStatements

// QueryChars is the length query texts are cut to in the statements file.
const QueryChars = monitor.QueryChars

// StatementsSuffix ends the name of a target's statements file.
const StatementsSuffix = monitor.StatementsSuffix

// stmtKey identifies a normalised statement: its queryid, as the report
// shows it, then the database and user it ran under.
func stmtKey(user, db string, queryID int64) string {
	return fmt.Sprintf("%d/%s/%s", queryID, db, user)
}

// statements reads pg_stat_statements, leaving out plateau's own queries.
func (c *Collector) statements(ctx context.Context) (map[string]monitor.StatementCounters, error) {
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
	out := map[string]monitor.StatementCounters{}
	for rows.Next() {
		var (
			user, db string
			queryID  int64
			r        monitor.StatementCounters
		)
		if err := rows.Scan(&user, &db, &queryID, &r.Calls, &r.TotalMs, &r.Rows, &r.Query); err != nil {
			return nil, err
		}
		// pg_stat_statements may hold several rows per statement
		// (top-level and nested, PG14+); they are summed.
		k := stmtKey(user, db, queryID)
		p := out[k]
		p.Query = r.Query
		p.Calls += r.Calls
		p.TotalMs += r.TotalMs
		p.Rows += r.Rows
		out[k] = p
	}
	return out, rows.Err()
}

// Statements is the content of a statements file.
type Statements = monitor.Statements

// ReadStatements reads every statements file of a run directory.
func ReadStatements(runDir string) ([]Statements, error) { return monitor.ReadStatements(runDir) }
