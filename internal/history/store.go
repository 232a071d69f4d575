package history

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	_ "modernc.org/sqlite"             // the "sqlite" database/sql driver (pure Go)
)

// Store is an open results store. Its methods may be called from several
// goroutines (database/sql pools the connections).
type Store struct {
	db       *sql.DB
	postgres bool
	where    string // the file or the DSN without its password, for messages
}

// IsPostgres reports whether dsn names a PostgreSQL database
// (postgres:// or postgresql://) rather than an SQLite file.
func IsPostgres(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// Open opens the store at dsn — a postgres:// URL, or the path of an SQLite
// file, created with its directory when missing — and brings its schema up
// to SchemaVersion.
func Open(ctx context.Context, dsn string) (*Store, error) {
	s := &Store{postgres: IsPostgres(dsn), where: dsn}
	var err error
	if s.postgres {
		s.where = redactDSN(dsn)
		s.db, err = sql.Open("pgx", dsn)
	} else {
		if dsn == "" {
			return nil, errors.New("history: no database given")
		}
		if dir := filepath.Dir(dsn); dir != "" {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, fmt.Errorf("history: creating %s: %w", dir, err)
			}
		}
		// WAL lets a report read while a run adds; the busy timeout and
		// immediate transactions make two writers (two runs ending
		// together) wait for each other instead of failing. The path is
		// a URI filename: its reserved characters are escaped.
		s.db, err = sql.Open("sqlite", "file:"+strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(dsn)+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(NORMAL)&_txlock=immediate")
	}
	if err != nil {
		return nil, fmt.Errorf("history: opening %s: %w", s.where, err)
	}
	if err := s.migrate(ctx); err != nil {
		_ = s.db.Close()
		return nil, fmt.Errorf("history: %s: %w", s.where, err)
	}
	return s, nil
}

// Close closes the store.
func (s *Store) Close() error { return s.db.Close() }

// Where names the store for messages (a PostgreSQL DSN without password).
func (s *Store) Where() string { return s.where }

func redactDSN(dsn string) string {
	// postgres://user:password@host/db → postgres://user:***@host/db
	scheme, rest, _ := strings.Cut(dsn, "://")
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return dsn
	}
	cred := rest[:at]
	if user, _, ok := strings.Cut(cred, ":"); ok {
		cred = user + ":***"
	}
	return scheme + "://" + cred + rest[at:]
}

// q rewrites a query written with ? placeholders for the dialect.
func (s *Store) q(query string) string {
	if !s.postgres {
		return query
	}
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// tsFormat is how SQLite holds a time: fixed-width UTC, so text order is
// time order.
const tsFormat = "2006-01-02T15:04:05.000000000Z"

// ts is a time as the dialect stores it; the zero time is NULL.
func (s *Store) ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	if s.postgres {
		return t.UTC()
	}
	return t.UTC().Format(tsFormat)
}

// scanTime reads a stored time (PostgreSQL's time.Time or SQLite's text);
// NULL is the zero time.
type scanTime struct{ t *time.Time }

func (st scanTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*st.t = time.Time{}
	case time.Time:
		*st.t = v.UTC()
	case string:
		return st.parse(v)
	case []byte:
		return st.parse(string(v))
	default:
		return fmt.Errorf("time stored as %T", src)
	}
	return nil
}

func (st scanTime) parse(v string) error {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return fmt.Errorf("stored time %q: %w", v, err)
	}
	*st.t = t.UTC()
	return nil
}

// migrate applies the migrations the database lacks, each in a
// transaction (PostgreSQL: under an advisory lock, so two plateau processes
// opening a new database together do not both create it).
func (s *Store) migrate(ctx context.Context) error {
	// A store already at this version is only read: a role that may only
	// read (a Grafana data source's) can open it.
	var top int
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&top); err == nil && top >= SchemaVersion {
		if top > SchemaVersion {
			return fmt.Errorf("schema version %d is newer than this plateau's %d: use a newer plateau", top, SchemaVersion)
		}
		return nil
	}
	tsType := "TEXT"
	if s.postgres {
		tsType = "TIMESTAMPTZ"
	}
	if _, err := s.db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at "+tsType+" NOT NULL)"); err != nil {
		return fmt.Errorf("creating schema_migrations: %w", err)
	}
	for v := 1; v < len(migrations); v++ {
		if err := s.apply(ctx, v, strings.ReplaceAll(migrations[v], "{ts}", tsType)); err != nil {
			return err
		}
	}
	if err := s.db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations").Scan(&top); err != nil {
		return fmt.Errorf("reading schema version: %w", err)
	}
	if top > SchemaVersion {
		return fmt.Errorf("schema version %d is newer than this plateau's %d: use a newer plateau", top, SchemaVersion)
	}
	return nil
}

func (s *Store) apply(ctx context.Context, v int, ddl string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migration %d: %w", v, err)
	}
	defer func() { _ = tx.Rollback() }()
	if s.postgres {
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(7468797374)"); err != nil {
			return fmt.Errorf("migration %d: locking: %w", v, err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, s.q("SELECT COUNT(*) FROM schema_migrations WHERE version = ?"), v).Scan(&n); err != nil {
		return fmt.Errorf("migration %d: %w", v, err)
	}
	if n > 0 {
		return nil
	}
	for _, stmt := range strings.Split(ddl, ";") {
		if strings.TrimSpace(stmt) == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return fmt.Errorf("migration %d: %w", v, err)
		}
	}
	if _, err := tx.ExecContext(ctx, s.q("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)"), v, s.ts(time.Now())); err != nil {
		return fmt.Errorf("migration %d: %w", v, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("migration %d: %w", v, err)
	}
	return nil
}

// Add stores r. A run already stored (the same ID) is not stored again:
// added is false, and only r's tags are merged into the stored ones (a tag
// given again replaces its value), so adding a run twice is one run.
func (s *Store) Add(ctx context.Context, r *Run, now time.Time) (added bool, err error) {
	if r.ID == "" {
		return false, errors.New("history: run without id")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("history: adding %s: %w", r.ID, err)
	}
	defer func() { _ = tx.Rollback() }()
	res, err := tx.ExecContext(ctx, s.q(`INSERT INTO runs (id, plan, start_time, end_time, duration_s, status, verdict, passed, tool, host, source_kind, dir, added_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`),
		r.ID, r.Plan, s.ts(r.Start), s.ts(r.End), r.DurationS, r.Status, r.Verdict, r.Passed, r.Tool, r.Host, r.Source, r.Dir, s.ts(now))
	if err != nil {
		return false, fmt.Errorf("history: adding %s: %w", r.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("history: adding %s: %w", r.ID, err)
	}
	added = n == 1
	if err := s.insertAll(ctx, tx, r, added); err != nil {
		return false, fmt.Errorf("history: adding %s: %w", r.ID, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("history: adding %s: %w", r.ID, err)
	}
	return added, nil
}

// insertAll writes r's child rows (only its tags when the run was stored
// before).
func (s *Store) insertAll(ctx context.Context, tx *sql.Tx, r *Run, fresh bool) error {
	ins := func(query string, rows int, args func(i int) []any) error {
		if rows == 0 {
			return nil
		}
		st, err := tx.PrepareContext(ctx, s.q(query))
		if err != nil {
			return err
		}
		defer st.Close()
		for i := range rows {
			if _, err := st.ExecContext(ctx, args(i)...); err != nil {
				return err
			}
		}
		return nil
	}
	tags := sortedKeys(r.Tags)
	if err := ins(`INSERT INTO run_tags (run_id, key, value) VALUES (?, ?, ?) ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value`,
		len(tags), func(i int) []any { return []any{r.ID, tags[i], r.Tags[tags[i]]} }); err != nil {
		return err
	}
	if !fresh {
		return nil
	}
	ctxKeys := sortedKeys(r.Context)
	if err := ins(`INSERT INTO run_context (run_id, key, value) VALUES (?, ?, ?)`,
		len(ctxKeys), func(i int) []any { return []any{r.ID, ctxKeys[i], r.Context[ctxKeys[i]]} }); err != nil {
		return err
	}
	if err := ins(`INSERT INTO phases (run_id, idx, name, workload, start_time, end_time, users, rate_per_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		len(r.Phases), func(i int) []any {
			p := r.Phases[i]
			return []any{r.ID, p.Index, p.Name, p.Workload, s.ts(p.Start), s.ts(p.End), p.Users, p.Rate}
		}); err != nil {
		return err
	}
	// A label appears once per phase in summary.json; should a file hold
	// it twice, the first row is the one kept.
	if err := ins(`INSERT INTO label_stats (run_id, phase, label, is_transaction, samples, errors, error_pct, mean_ms, p50_ms, p90_ms, p95_ms, p99_ms, max_ms, throughput_rps, no_times)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, phase, label) DO NOTHING`,
		len(r.Labels), func(i int) []any {
			l := r.Labels[i]
			return []any{r.ID, l.Phase, l.Label, l.Transaction, l.Samples, l.Errors, l.ErrorPct, l.MeanMs, l.P50Ms, l.P90Ms, l.P95Ms, l.P99Ms, l.MaxMs, l.ThroughputRPS, l.NoTimes}
		}); err != nil {
		return err
	}
	if err := ins(`INSERT INTO sla_results (run_id, idx, expr, scope, passed, no_data, observed, unit) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		len(r.SLA), func(i int) []any {
			v := r.SLA[i]
			return []any{r.ID, v.Index, v.Expr, v.Scope, v.Passed, v.NoData, v.Observed, v.Unit}
		}); err != nil {
		return err
	}
	if c := r.Capacity; c != nil {
		if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO capacity (run_id, load_unit, knee_load, knee_throughput_rps, usl_peak_throughput_rps, max_load_meeting_sla, bottleneck) VALUES (?, ?, ?, ?, ?, ?, ?)`),
			r.ID, c.LoadUnit, nullable(c.KneeLoad), nullable(c.KneeThroughputRPS), nullable(c.PeakThroughputRPS), nullable(c.MaxLoadMeetingSLA), c.Bottleneck); err != nil {
			return err
		}
	}
	return ins(`INSERT INTO resources (run_id, target, kind, phase, metric, min, mean, max) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, target, kind, phase, metric) DO NOTHING`,
		len(r.Resources), func(i int) []any {
			v := r.Resources[i]
			return []any{r.ID, v.Target, v.Kind, v.Phase, v.Metric, v.Min, v.Mean, v.Max}
		})
}

func nullable(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Filter selects stored runs. The zero value selects all.
type Filter struct {
	// Plan keeps the runs of one plan (by name); empty keeps all.
	Plan string
	// Since keeps runs started at or after it; zero keeps all.
	Since time.Time
	// Tags keeps runs carrying every one of these tags with these values.
	Tags map[string]string
}

// Runs returns the stored runs f selects, oldest first (by start, then id),
// each complete with its tags, context, phases and figures.
func (s *Store) Runs(ctx context.Context, f Filter) ([]*Run, error) {
	where, args := s.filterWhere(f)
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT r.id, r.plan, r.start_time, r.end_time, r.duration_s, r.status, r.verdict, r.passed, r.tool, r.host, r.source_kind, r.dir, r.added_at
FROM runs r `+where+` ORDER BY r.start_time, r.id`), args...)
	if err != nil {
		return nil, fmt.Errorf("history: reading runs: %w", err)
	}
	var runs []*Run
	byID := map[string]*Run{}
	for rows.Next() {
		r := &Run{Tags: map[string]string{}, Context: map[string]string{}}
		if err := rows.Scan(&r.ID, &r.Plan, scanTime{&r.Start}, scanTime{&r.End}, &r.DurationS, &r.Status, &r.Verdict, &r.Passed,
			&r.Tool, &r.Host, &r.Source, &r.Dir, scanTime{&r.Added}); err != nil {
			rows.Close()
			return nil, fmt.Errorf("history: reading runs: %w", err)
		}
		runs = append(runs, r)
		byID[r.ID] = r
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("history: reading runs: %w", err)
	}
	if len(runs) == 0 {
		return runs, nil
	}
	if err := s.readChildren(ctx, where, args, byID); err != nil {
		return nil, err
	}
	return runs, nil
}

// filterWhere is the WHERE clause (over runs r) and its arguments that
// select f's runs.
func (s *Store) filterWhere(f Filter) (string, []any) {
	where, args := "WHERE 1=1", []any{}
	if f.Plan != "" {
		where += " AND r.plan = ?"
		args = append(args, f.Plan)
	}
	if !f.Since.IsZero() {
		where += " AND r.start_time >= ?"
		args = append(args, s.ts(f.Since))
	}
	for _, k := range sortedKeys(f.Tags) {
		where += " AND EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = r.id AND t.key = ? AND t.value = ?)"
		args = append(args, k, f.Tags[k])
	}
	return where, args
}

// readChildren reads every child table of the runs the filter selects,
// each in one query (a join on the same filter), not one query per run.
func (s *Store) readChildren(ctx context.Context, where string, args []any, byID map[string]*Run) error {
	read := func(table, cols, order string, row func(r *Run) []any, done func(r *Run)) error {
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT c.run_id, `+cols+` FROM `+table+` c JOIN runs r ON r.id = c.run_id `+where+` ORDER BY c.run_id, `+order), args...)
		if err != nil {
			return fmt.Errorf("history: reading %s: %w", table, err)
		}
		defer rows.Close()
		var id string
		scratch := &Run{}
		dest := append([]any{&id}, row(scratch)...)
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				return fmt.Errorf("history: reading %s: %w", table, err)
			}
			if r := byID[id]; r != nil {
				done(r)
			}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("history: reading %s: %w", table, err)
		}
		return nil
	}
	var k, v string
	var ph Phase
	var l LabelRow
	var sla SLARow
	var c CapacityRow
	var kneeLoad, kneeTP, peak, maxLoad sql.NullFloat64
	var res ResourceRow
	steps := []func() error{
		func() error {
			return read("run_tags", "c.key, c.value", "c.key", func(*Run) []any { return []any{&k, &v} },
				func(r *Run) { r.Tags[k] = v })
		},
		func() error {
			return read("run_context", "c.key, c.value", "c.key", func(*Run) []any { return []any{&k, &v} },
				func(r *Run) { r.Context[k] = v })
		},
		func() error {
			return read("phases", "c.idx, c.name, c.workload, c.start_time, c.end_time, c.users, c.rate_per_s", "c.idx",
				func(*Run) []any {
					return []any{&ph.Index, &ph.Name, &ph.Workload, scanTime{&ph.Start}, scanTime{&ph.End}, &ph.Users, &ph.Rate}
				},
				func(r *Run) { r.Phases = append(r.Phases, ph) })
		},
		func() error {
			// Ordered in Go afterwards (sortLabels).
			return read("label_stats", "c.phase, c.label, c.is_transaction, c.samples, c.errors, c.error_pct, c.mean_ms, c.p50_ms, c.p90_ms, c.p95_ms, c.p99_ms, c.max_ms, c.throughput_rps, c.no_times",
				"c.phase, c.label",
				func(*Run) []any {
					return []any{&l.Phase, &l.Label, &l.Transaction, &l.Samples, &l.Errors, &l.ErrorPct, &l.MeanMs, &l.P50Ms, &l.P90Ms, &l.P95Ms, &l.P99Ms, &l.MaxMs, &l.ThroughputRPS, &l.NoTimes}
				},
				func(r *Run) { r.Labels = append(r.Labels, l) })
		},
		func() error {
			return read("sla_results", "c.idx, c.expr, c.scope, c.passed, c.no_data, c.observed, c.unit", "c.idx",
				func(*Run) []any {
					return []any{&sla.Index, &sla.Expr, &sla.Scope, &sla.Passed, &sla.NoData, &sla.Observed, &sla.Unit}
				},
				func(r *Run) { r.SLA = append(r.SLA, sla) })
		},
		func() error {
			return read("capacity", "c.load_unit, c.knee_load, c.knee_throughput_rps, c.usl_peak_throughput_rps, c.max_load_meeting_sla, c.bottleneck", "c.run_id",
				func(*Run) []any { return []any{&c.LoadUnit, &kneeLoad, &kneeTP, &peak, &maxLoad, &c.Bottleneck} },
				func(r *Run) {
					cr := c
					cr.KneeLoad, cr.KneeThroughputRPS, cr.PeakThroughputRPS, cr.MaxLoadMeetingSLA = ptr(kneeLoad), ptr(kneeTP), ptr(peak), ptr(maxLoad)
					r.Capacity = &cr
				})
		},
		func() error {
			return read("resources", "c.target, c.kind, c.phase, c.metric, c.min, c.mean, c.max", "c.target, c.kind, c.phase, c.metric",
				func(*Run) []any {
					return []any{&res.Target, &res.Kind, &res.Phase, &res.Metric, &res.Min, &res.Mean, &res.Max}
				},
				func(r *Run) { r.Resources = append(r.Resources, res) })
		},
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	for _, r := range byID {
		sortLabels(r.Labels, r.Phases)
		sortResources(r.Resources)
	}
	return nil
}

func sortResources(rs []ResourceRow) {
	slices.SortStableFunc(rs, func(a, b ResourceRow) int {
		return cmp.Or(strings.Compare(a.Target, b.Target), strings.Compare(a.Kind, b.Kind),
			strings.Compare(a.Phase, b.Phase), strings.Compare(a.Metric, b.Metric))
	})
}

func ptr(n sql.NullFloat64) *float64 {
	if !n.Valid {
		return nil
	}
	v := n.Float64
	return &v
}

// sortLabels puts label rows in a dialect-independent order: whole run
// first, then the phases in run order; within each, labels by name with
// TOTAL last. (The databases' collations differ, so ORDER BY alone would
// not give SQLite and PostgreSQL the same order.)
func sortLabels(ls []LabelRow, phases []Phase) {
	rank := map[string]int{WholeRun: -1}
	for _, p := range phases {
		if _, ok := rank[p.Name]; !ok {
			rank[p.Name] = p.Index
		}
	}
	slices.SortStableFunc(ls, func(a, b LabelRow) int {
		if ra, rb := rank[a.Phase], rank[b.Phase]; ra != rb {
			return ra - rb
		}
		if at, bt := IsTotal(a.Label), IsTotal(b.Label); at != bt {
			if at {
				return 1
			}
			return -1
		}
		return strings.Compare(a.Label, b.Label)
	})
}
