// Package mysql monitors a MySQL or MariaDB server over one connection:
// connections, queries, slow queries, InnoDB buffer-pool hit rate and row
// lock waits from SHOW GLOBAL STATUS / VARIABLES at every sample, and the top
// statements from performance_schema's digest summary (start and end of the
// session, plus increments every monitor.StatementEvery for the per-phase
// top SQL). The driver is github.com/go-sql-driver/mysql.
package mysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// Config is a mysql target's configuration (its plan fields).
type Config struct {
	// DSN is a go-sql-driver DSN: user@tcp(host:3306)/ — or
	// user:password@…, though password_env keeps the password out of the
	// plan.
	DSN string `yaml:"dsn"`
	// PasswordEnv names the environment variable holding the password.
	PasswordEnv string `yaml:"password_env"`
	// Statements turns the top-statements collection off when false
	// (default on when performance_schema is enabled).
	Statements *bool `yaml:"statements"`
}

// Kind is the mysql monitor for monitor.Options.Kinds.
func Kind() monitor.Kind { return monitor.Kind{Open: Open, Validate: Validate} }

func parse(tc monitor.TargetConfig) (*Config, *driver.Config, error) {
	var c Config
	if err := monitor.DecodeOptions(tc.Options, &c); err != nil {
		return nil, nil, err
	}
	if c.DSN == "" {
		return nil, nil, errors.New("dsn is required (e.g. perf@tcp(127.0.0.1:3306)/app)")
	}
	dc, err := driver.ParseDSN(c.DSN)
	if err != nil {
		return nil, nil, fmt.Errorf("dsn: %s", redactDSNError(err))
	}
	return &c, dc, nil
}

// redactDSNError keeps a password out of a DSN parse error.
func redactDSNError(err error) string {
	s := err.Error()
	if i := strings.Index(s, "@"); i >= 0 {
		return "invalid DSN (the text is not repeated, it may hold a password)"
	}
	return s
}

// Validate checks the configuration without connecting.
func Validate(tc monitor.TargetConfig) error {
	_, _, err := parse(tc)
	return err
}

// Collector samples one server.
type Collector struct {
	db     *sql.DB
	env    monitor.Env
	target string
	addr   string

	stmts     bool
	start     map[string]monitor.StatementCounters
	startTime time.Time
	log       *monitor.StatementLog
	notes     []monitor.Note

	prev     map[string]float64
	prevT    time.Time
	havePrev bool
	own      float64 // our statements since the last sample
}

// Open connects, reads the server once and, when performance_schema is on,
// takes the start snapshot of statement digests.
func Open(ctx context.Context, tc monitor.TargetConfig, env monitor.Env) (monitor.Collector, error) {
	c, dc, err := parse(tc)
	if err != nil {
		return nil, err
	}
	if c.PasswordEnv != "" {
		v, ok := "", false
		if env.Getenv != nil {
			v, ok = env.Getenv(c.PasswordEnv)
		}
		if !ok {
			return nil, fmt.Errorf("password_env: environment variable %s is not set", c.PasswordEnv)
		}
		dc.Passwd = v
	}
	if dc.Timeout == 0 || dc.Timeout > 5*time.Second {
		dc.Timeout = 5 * time.Second
	}
	if dc.ConnectionAttributes == "" {
		dc.ConnectionAttributes = "program_name:plateau-monitor"
	}
	conn, err := driver.NewConnector(dc)
	if err != nil {
		return nil, fmt.Errorf("dsn: %s", redactDSNError(err))
	}
	db := sql.OpenDB(conn)
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	col := &Collector{db: db, env: env, target: monitor.TargetName(tc), addr: dc.Addr, prev: map[string]float64{}}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("connecting to %s: %w", dc.Addr, err)
	}
	if c.Statements == nil || *c.Statements {
		col.openStatements(ctx)
	}
	return col, nil
}

func (c *Collector) note(level, text string) {
	c.notes = append(c.notes, monitor.Note{Target: c.target, Kind: monitor.KindMySQL, Level: level, Text: text})
}

// openStatements checks performance_schema and takes the start snapshot.
func (c *Collector) openStatements(ctx context.Context) {
	var name, on string
	if err := c.db.QueryRowContext(ctx, "SHOW GLOBAL VARIABLES LIKE 'performance_schema'").Scan(&name, &on); err != nil || !strings.EqualFold(on, "ON") {
		c.note(monitor.NoteInfo, "performance_schema is off on the server, so there are no top statements; start it with performance_schema=ON")
		return
	}
	start, err := c.statements(ctx)
	if err != nil {
		c.note(monitor.NoteError, "reading performance_schema.events_statements_summary_by_digest: "+err.Error())
		return
	}
	c.stmts, c.start, c.startTime = true, start, c.env.Now()
	if l, err := monitor.OpenStatementLog(c.env.Dir, c.env.Stem, c.target); err == nil {
		c.log = l
		_ = l.Snapshot(c.startTime, start)
	}
}

// digestSQL reads the digest summary, leaving out plateau's own statements.
const digestSQL = `SELECT COALESCE(SCHEMA_NAME, ''), COALESCE(DIGEST, ''), COALESCE(DIGEST_TEXT, ''), COUNT_STAR, SUM_TIMER_WAIT, SUM_ROWS_SENT + SUM_ROWS_AFFECTED
FROM performance_schema.events_statements_summary_by_digest
WHERE DIGEST_TEXT IS NULL OR (DIGEST_TEXT NOT LIKE 'SHOW GLOBAL %' AND DIGEST_TEXT NOT LIKE '%events_statements_summary_by_digest%')`

func (c *Collector) statements(ctx context.Context) (map[string]monitor.StatementCounters, error) {
	c.own++
	rows, err := c.db.QueryContext(ctx, digestSQL)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]monitor.StatementCounters{}
	for rows.Next() {
		var (
			schema, digest, text string
			count, rowsN         float64
			wait                 float64 // picoseconds
		)
		if err := rows.Scan(&schema, &digest, &text, &count, &wait, &rowsN); err != nil {
			return nil, err
		}
		k := digest + "/" + schema
		p := out[k]
		p.Query = text
		p.Calls += count
		p.TotalMs += wait / 1e9
		p.Rows += rowsN
		out[k] = p
	}
	return out, rows.Err()
}

// status reads SHOW GLOBAL STATUS and the variables plateau needs.
func (c *Collector) status(ctx context.Context) (map[string]float64, error) {
	out := map[string]float64{}
	for _, q := range []string{"SHOW GLOBAL STATUS", "SHOW GLOBAL VARIABLES WHERE Variable_name IN ('max_connections', 'long_query_time')"} {
		c.own++
		rows, err := c.db.QueryContext(ctx, q)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var k, v string
			if err := rows.Scan(&k, &v); err != nil {
				rows.Close()
				return nil, err
			}
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				out[strings.ToLower(k)] = f
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Collect implements monitor.Collector.
func (c *Collector) Collect(ctx context.Context, b *monitor.Batch) error {
	own := c.own
	c.own = 0
	st, err := c.status(ctx)
	if err != nil {
		c.havePrev = false
		return fmt.Errorf("sampling %s: %w", c.addr, err)
	}
	b.Add("connections", "", st["threads_connected"]-1) // less our own
	b.Add("threads_running", "", st["threads_running"]-1)
	b.Add("connections_max", "", st["max_connections"])
	if dt := b.Mono.Sub(c.prevT).Seconds(); c.havePrev && dt > 0 {
		d := func(k string) float64 { return max(st[k]-c.prev[k], 0) }
		// plateau's own statements are not the service's load. Between
		// the two status reads it ran: everything counted in own since
		// the last sample, less the last sample's SHOW GLOBAL STATUS
		// (already in its reading), plus this one's (counted as it starts).
		b.Add("queries_per_s", "1/s", max(d("queries")-own, 0)/dt)
		b.Add("slow_queries_per_s", "1/s", d("slow_queries")/dt)
		for _, com := range []string{"select", "insert", "update", "delete"} {
			b.Add("com_"+com+"_per_s", "1/s", d("com_"+com)/dt)
		}
		if req := d("innodb_buffer_pool_read_requests"); req > 0 {
			b.Add("innodb_buffer_hit_pct", "%", 100*(1-d("innodb_buffer_pool_reads")/req))
		}
		b.Add("row_lock_waits_per_s", "1/s", d("innodb_row_lock_waits")/dt)
		b.Add("bytes_received_per_s", "bytes/s", d("bytes_received")/dt)
		b.Add("bytes_sent_per_s", "bytes/s", d("bytes_sent")/dt)
		b.Add("aborted_connects_per_s", "1/s", d("aborted_connects")/dt)
	}
	c.prev, c.prevT, c.havePrev = st, b.Mono, true
	if c.log != nil && c.log.Due(b.Time) {
		if cur, err := c.statements(ctx); err == nil {
			_ = c.log.Snapshot(b.Time, cur)
		}
	}
	return nil
}

// Finish writes the top statements of the session and the notes.
func (c *Collector) Finish(ctx context.Context) error {
	var errs []error
	if c.stmts {
		end, err := c.statements(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("top statements: %w", err))
		} else {
			now := c.env.Now()
			if c.log != nil {
				if err := c.log.Snapshot(now, end); err != nil {
					errs = append(errs, err)
				}
			}
			rep := monitor.TopOf(c.target, c.startTime, now, c.start, end, monitor.TopStatements)
			if err := monitor.WriteStatements(c.env.Dir, c.env.Stem, rep); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := monitor.WriteNotes(c.env.Dir, c.env.Stem, c.notes); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// Close implements monitor.Collector.
func (c *Collector) Close() error {
	var errs []error
	if c.log != nil {
		errs = append(errs, c.log.Close())
	}
	errs = append(errs, c.db.Close())
	return errors.Join(errs...)
}
