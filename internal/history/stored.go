package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// StoredOptions are the options of the change points the store keeps
// (table change_points): the defaults of Options — alpha 0.01, a 5 %
// minimum effect — and seed 1, over all the runs of a plan. A report or a
// check computes its own, over the runs it selects, with its flags.
func StoredOptions() Options { return Options{Seed: 1}.withDefaults() }

// StoredChangePoint is one row of change_points: a change point of one
// series of a plan, over all the plan's stored runs.
type StoredChangePoint struct {
	Plan      string
	Metric    string
	Label     string
	Phase     string
	Target    string
	Series    string // the series' name, "checkout p95 (ms)"
	Unit      string
	Direction Direction
	// RunID is the first run at the new level, Start its start.
	RunID      string
	Start      time.Time
	BeforeMean float64
	AfterMean  float64
	BeforeRuns int
	AfterRuns  int
	ChangePct  float64
	PValue     float64
	Worse      bool
}

// RefreshChangePoints computes the change points of every series of each
// plan over all its stored runs, with StoredOptions, and stores them in
// place of the plan's earlier ones — unless they were computed over the
// same runs already (change_point_sets holds the runs' count and a hash of
// their ids), so it is idempotent and cheap when nothing was added. It
// reports how many change points each recomputed plan has.
func (s *Store) RefreshChangePoints(ctx context.Context, plans ...string) (map[string]int, error) {
	done := map[string]int{}
	for _, plan := range plans {
		if _, ok := done[plan]; ok {
			continue
		}
		n, fresh, err := s.refreshPlan(ctx, plan)
		if err != nil {
			return done, fmt.Errorf("history: change points of plan %q: %w", plan, err)
		}
		if !fresh {
			done[plan] = n
		}
	}
	return done, nil
}

// runsHash is the count and an FNV-1a hash of a plan's run ids in order.
func (s *Store) runsHash(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, plan string) (int, string, error) {
	rows, err := q.QueryContext(ctx, s.q("SELECT id FROM runs WHERE plan = ? ORDER BY start_time, id"), plan)
	if err != nil {
		return 0, "", err
	}
	defer rows.Close()
	n := 0
	h := uint64(14695981039346656037)
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return 0, "", err
		}
		for i := 0; i < len(id); i++ {
			h ^= uint64(id[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
		n++
	}
	return n, strconv.FormatUint(h, 16), rows.Err()
}

// refreshPlan recomputes one plan's change points unless they are fresh.
func (s *Store) refreshPlan(ctx context.Context, plan string) (n int, fresh bool, err error) {
	count, hash, err := s.runsHash(ctx, s.db, plan)
	if err != nil {
		return 0, false, err
	}
	var storedRuns int
	var storedHash string
	var alpha, minChange float64
	var seed int64
	o := StoredOptions()
	err = s.db.QueryRowContext(ctx, s.q("SELECT runs, runs_hash, alpha, min_change_pct, seed FROM change_point_sets WHERE plan = ?"), plan).
		Scan(&storedRuns, &storedHash, &alpha, &minChange, &seed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return 0, false, err
	case storedRuns == count && storedHash == hash && alpha == o.Alpha && minChange == o.MinChangePct && uint64(seed) == o.Seed:
		return 0, true, nil
	}
	runs, err := s.Runs(ctx, Filter{Plan: plan})
	if err != nil {
		return 0, false, err
	}
	a, err := Analyze(runs, o)
	if err != nil {
		return 0, false, err
	}
	start := map[string]time.Time{}
	for _, r := range runs {
		start[r.ID] = r.Start
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, false, err
	}
	defer func() { _ = tx.Rollback() }()
	if s.postgres {
		// two processes refreshing one plan take turns.
		if _, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(hashtextextended($1, 7468797375))", plan); err != nil {
			return 0, false, err
		}
	}
	if _, err := tx.ExecContext(ctx, s.q("DELETE FROM change_points WHERE plan = ?"), plan); err != nil {
		return 0, false, err
	}
	st, err := tx.PrepareContext(ctx, s.q(`INSERT INTO change_points (plan, metric, label, phase, target, series, unit, direction, run_id, start_time,
before_mean, after_mean, before_runs, after_runs, change_pct, p_value, worse) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (plan, metric, label, phase, target, run_id) DO NOTHING`))
	if err != nil {
		return 0, false, err
	}
	defer st.Close()
	for _, se := range a.Series {
		dir, _ := se.Direction.MarshalText()
		for _, cp := range se.ChangePoints {
			if _, err := st.ExecContext(ctx, plan, se.Metric, se.Label, se.Phase, se.Target, se.Name, se.Unit, string(dir), cp.RunID, s.ts(start[cp.RunID]),
				cp.BeforeMean, cp.AfterMean, cp.BeforeRuns, cp.AfterRuns, cp.ChangePct, cp.PValue, cp.Worse); err != nil {
				return 0, false, err
			}
			n++
		}
	}
	// The runs the set covers, read again inside the transaction: a run
	// added meanwhile leaves the set stale, to be refreshed next time.
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO change_point_sets (plan, runs, runs_hash, alpha, min_change_pct, seed, computed_at) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (plan) DO UPDATE SET runs = excluded.runs, runs_hash = excluded.runs_hash, alpha = excluded.alpha,
min_change_pct = excluded.min_change_pct, seed = excluded.seed, computed_at = excluded.computed_at`),
		plan, len(runs), runsHashOf(runs), o.Alpha, o.MinChangePct, int64(o.Seed), s.ts(time.Now())); err != nil {
		return 0, false, err
	}
	if err := tx.Commit(); err != nil {
		return 0, false, err
	}
	return n, false, nil
}

// runsHashOf is runsHash over runs already read (in the store's order).
func runsHashOf(runs []*Run) string {
	h := uint64(14695981039346656037)
	for _, r := range runs {
		for i := 0; i < len(r.ID); i++ {
			h ^= uint64(r.ID[i])
			h *= 1099511628211
		}
		h ^= 0xff
		h *= 1099511628211
	}
	return strconv.FormatUint(h, 16)
}

// ChangePoints returns the stored change points at the runs f selects,
// oldest first, then by series.
func (s *Store) ChangePoints(ctx context.Context, f Filter) ([]StoredChangePoint, error) {
	where, args := s.filterWhere(f)
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT c.plan, c.metric, c.label, c.phase, c.target, c.series, c.unit, c.direction, c.run_id, c.start_time,
c.before_mean, c.after_mean, c.before_runs, c.after_runs, c.change_pct, c.p_value, c.worse
FROM change_points c JOIN runs r ON r.id = c.run_id `+where+` ORDER BY r.start_time, r.id, c.plan, c.metric, c.label, c.phase, c.target`), args...)
	if err != nil {
		return nil, fmt.Errorf("history: reading change points: %w", err)
	}
	defer rows.Close()
	var out []StoredChangePoint
	for rows.Next() {
		var c StoredChangePoint
		var dir string
		if err := rows.Scan(&c.Plan, &c.Metric, &c.Label, &c.Phase, &c.Target, &c.Series, &c.Unit, &dir, &c.RunID, scanTime{&c.Start},
			&c.BeforeMean, &c.AfterMean, &c.BeforeRuns, &c.AfterRuns, &c.ChangePct, &c.PValue, &c.Worse); err != nil {
			return nil, fmt.Errorf("history: reading change points: %w", err)
		}
		if err := c.Direction.UnmarshalText([]byte(dir)); err != nil {
			return nil, fmt.Errorf("history: reading change points: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("history: reading change points: %w", err)
	}
	return out, nil
}
