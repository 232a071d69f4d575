// Package postgres monitors a PostgreSQL server over one ordinary
// connection: connections by state from pg_stat_activity, transactions,
// cache hits and row traffic from pg_stat_database (summed over all
// databases), and, when the pg_stat_statements extension is installed in
// the connected database, the top statements by total execution time over
// the session, from snapshots taken at start and at end.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// tag marks plateau's own queries so that they can be left out of the
// top statements; pg_stat_statements keeps comments in the query text.
const tag = "/* plateau-monitor */"

// ApplicationName is what plateau's connection shows in pg_stat_activity.
const ApplicationName = "plateau-monitor"

// Kind is the PostgreSQL monitor for monitor.Options.Kinds.
func Kind() monitor.Kind {
	return monitor.Kind{Open: Open, Validate: Validate}
}

// Validate checks that the DSN parses (URL or key=value form).
func Validate(cfg monitor.TargetConfig) error {
	if cfg.DSN == "" {
		return errors.New("dsn is required")
	}
	if _, err := pgx.ParseConfig(cfg.DSN); err != nil {
		return fmt.Errorf("dsn: %w", err)
	}
	return nil
}

// Collector samples one server.
type Collector struct {
	cfg     *pgx.ConnConfig
	env     monitor.Env
	target  string
	conn    *pgx.Conn
	version int // server_version_num

	pgss       string // qualified pg_stat_statements view, "" when absent
	start      map[string]monitor.StatementCounters
	startTime  time.Time
	stmtLog    *monitor.StatementLog
	ownQueries int64 // our transactions since the last sample

	havePrev bool
	prev     dbCounters
	prevT    time.Time
}

// dbCounters are cumulative pg_stat_database sums.
type dbCounters struct {
	commit, rollback, hit, read          float64
	returned, fetched, inserted, updated float64
	deleted, deadlocks, tempBytes        float64
}

// Open connects and, when pg_stat_statements is available, takes the
// start snapshot of statements.
func Open(ctx context.Context, tc monitor.TargetConfig, env monitor.Env) (monitor.Collector, error) {
	cfg, err := pgx.ParseConfig(tc.DSN)
	if err != nil {
		return nil, fmt.Errorf("dsn: %w", err)
	}
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	if _, ok := cfg.RuntimeParams["application_name"]; !ok {
		cfg.RuntimeParams["application_name"] = ApplicationName
	}
	if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 5*time.Second {
		cfg.ConnectTimeout = 5 * time.Second
	}
	c := &Collector{cfg: cfg, env: env, target: monitor.TargetName(tc)}
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	if err := c.probe(ctx); err != nil {
		_ = c.conn.Close(ctx)
		return nil, err
	}
	if c.pgss != "" {
		start, err := c.statements(ctx)
		if err != nil {
			// Not fatal: the extension may be created but not preloaded.
			c.pgss = ""
		} else {
			c.start, c.startTime = start, env.Now()
			if l, err := monitor.OpenStatementLog(env.Dir, env.Stem, c.target); err == nil {
				c.stmtLog = l
				_ = l.Snapshot(c.startTime, start)
			}
		}
	}
	return c, nil
}

// Describe is the server address without credentials, for messages.
func (c *Collector) Describe() string {
	return fmt.Sprintf("%s:%d/%s", c.cfg.Host, c.cfg.Port, c.cfg.Database)
}

// HasStatements reports whether pg_stat_statements is being sampled.
func (c *Collector) HasStatements() bool { return c.pgss != "" }

func (c *Collector) connect(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, c.cfg)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", c.Describe(), err)
	}
	c.conn = conn
	return nil
}

// probe reads the server version and finds pg_stat_statements' schema.
func (c *Collector) probe(ctx context.Context) error {
	var schema *string
	err := c.conn.QueryRow(ctx, `SELECT `+tag+` current_setting('server_version_num')::int,
		(SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'pg_stat_statements')`).
		Scan(&c.version, &schema)
	c.ownQueries++
	if err != nil {
		return fmt.Errorf("querying %s: %w", c.Describe(), err)
	}
	if c.version < 100000 {
		return fmt.Errorf("%s: PostgreSQL %d is older than 10 (no backend_type)", c.Describe(), c.version)
	}
	c.pgss = ""
	if schema != nil {
		c.pgss = pgx.Identifier{*schema, "pg_stat_statements"}.Sanitize()
	}
	return nil
}

// sampleSQL reads everything in one round trip; both sides are aggregates,
// so it always returns exactly one row. Client backends only (background
// workers have no state), and not plateau's own connections (this one, and
// those of other postgres targets or runs, known by application_name).
const sampleSQL = `SELECT ` + tag + ` a.*, current_setting('max_connections')::float8, d.*
FROM (SELECT count(*)::float8,
	count(*) FILTER (WHERE state = 'active')::float8,
	count(*) FILTER (WHERE state = 'idle')::float8,
	count(*) FILTER (WHERE state LIKE 'idle in transaction%')::float8,
	count(*) FILTER (WHERE wait_event_type = 'Lock')::float8
	FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
		AND application_name IS DISTINCT FROM '` + ApplicationName + `') a,
(SELECT coalesce(sum(xact_commit), 0)::float8, coalesce(sum(xact_rollback), 0)::float8,
	coalesce(sum(blks_hit), 0)::float8, coalesce(sum(blks_read), 0)::float8,
	coalesce(sum(tup_returned), 0)::float8, coalesce(sum(tup_fetched), 0)::float8,
	coalesce(sum(tup_inserted), 0)::float8, coalesce(sum(tup_updated), 0)::float8,
	coalesce(sum(tup_deleted), 0)::float8, coalesce(sum(deadlocks), 0)::float8,
	coalesce(sum(temp_bytes), 0)::float8
	FROM pg_stat_database) d`

// Collect implements monitor.Collector. A failed query closes the
// connection; the next sample reconnects, which ends the gap.
func (c *Collector) Collect(ctx context.Context, b *monitor.Batch) error {
	if c.conn == nil || c.conn.IsClosed() {
		c.havePrev = false
		if err := c.connect(ctx); err != nil {
			return err
		}
		if err := c.probe(ctx); err != nil {
			c.drop()
			return err
		}
	}
	var (
		total, active, idle, idleTx, waiting, maxConn float64
		d                                             dbCounters
	)
	err := c.conn.QueryRow(ctx, sampleSQL).Scan(&total, &active, &idle, &idleTx, &waiting, &maxConn,
		&d.commit, &d.rollback, &d.hit, &d.read, &d.returned, &d.fetched,
		&d.inserted, &d.updated, &d.deleted, &d.deadlocks, &d.tempBytes)
	own := c.ownQueries + 1 // this sample's own transaction
	c.ownQueries = 0
	if err != nil {
		c.drop()
		return fmt.Errorf("sampling %s: %w", c.Describe(), err)
	}
	b.Add("connections_total", "", total)
	b.Add("connections_active", "", active)
	b.Add("connections_idle", "", idle)
	b.Add("connections_idle_in_tx", "", idleTx)
	b.Add("connections_waiting_lock", "", waiting)
	b.Add("connections_max", "", maxConn)
	b.Add("deadlocks", "", d.deadlocks)
	now := b.Mono
	if dt := now.Sub(c.prevT).Seconds(); c.havePrev && dt > 0 {
		p := c.prev
		r := func(cur, prev float64) float64 { return max(cur-prev, 0) / dt }
		// plateau's own sampling transactions are not the service's load.
		b.Add("xact_commit_per_s", "1/s", max(d.commit-p.commit-float64(own), 0)/dt)
		b.Add("xact_rollback_per_s", "1/s", r(d.rollback, p.rollback))
		if dh, dr := d.hit-p.hit, d.read-p.read; dh+dr > 0 && dh >= 0 && dr >= 0 {
			b.Add("cache_hit_pct", "%", dh/(dh+dr)*100)
		}
		b.Add("blks_read_per_s", "1/s", r(d.read, p.read))
		b.Add("tup_returned_per_s", "1/s", r(d.returned, p.returned))
		b.Add("tup_fetched_per_s", "1/s", r(d.fetched, p.fetched))
		b.Add("tup_inserted_per_s", "1/s", r(d.inserted, p.inserted))
		b.Add("tup_updated_per_s", "1/s", r(d.updated, p.updated))
		b.Add("tup_deleted_per_s", "1/s", r(d.deleted, p.deleted))
		b.Add("temp_bytes_per_s", "bytes/s", r(d.tempBytes, p.tempBytes))
	}
	c.prev, c.prevT, c.havePrev = d, now, true
	if c.stmtLog != nil && c.stmtLog.Due(b.Time) {
		// The per-phase top statements come from these increments; a
		// failed read only coarsens them.
		if cur, err := c.statements(ctx); err == nil {
			_ = c.stmtLog.Snapshot(b.Time, cur)
		}
	}
	return nil
}

func (c *Collector) drop() {
	if c.conn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_ = c.conn.Close(ctx)
		cancel()
		c.conn = nil
	}
	c.havePrev = false
}

// Finish takes the end snapshot of pg_stat_statements and writes the top
// statements of the session to <stem>.statements.json.
func (c *Collector) Finish(ctx context.Context) error {
	if c.pgss == "" || c.start == nil {
		return nil
	}
	if c.conn == nil || c.conn.IsClosed() {
		if err := c.connect(ctx); err != nil {
			return fmt.Errorf("top statements: %w", err)
		}
	}
	end, err := c.statements(ctx)
	if err != nil {
		return fmt.Errorf("top statements: %w", err)
	}
	now := c.env.Now()
	if c.stmtLog != nil {
		if err := c.stmtLog.Snapshot(now, end); err != nil {
			return fmt.Errorf("top statements: %w", err)
		}
	}
	rep := monitor.TopOf(c.target, c.startTime, now, c.start, end, TopN)
	return monitor.WriteStatements(c.env.Dir, c.env.Stem, rep)
}

// Close implements monitor.Collector.
func (c *Collector) Close() error {
	c.drop()
	if c.stmtLog != nil {
		return c.stmtLog.Close()
	}
	return nil
}
