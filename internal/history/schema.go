package history

// migrations are the store's schema versions, applied in order, each in
// its own transaction, and recorded in schema_migrations. The text is one
// schema for SQLite and PostgreSQL: {ts} is the timestamp type of the
// dialect (TIMESTAMPTZ in PostgreSQL, so Grafana charts it directly; ISO
// 8601 UTC text in SQLite, which sorts as time does). A released migration
// is never edited: a change is a new version. docs/history.md documents the
// tables.
var migrations = []string{
	1: `
CREATE TABLE runs (
  id          TEXT PRIMARY KEY,
  plan        TEXT NOT NULL,
  start_time  {ts} NOT NULL,
  end_time    {ts},
  duration_s  DOUBLE PRECISION NOT NULL,
  status      TEXT NOT NULL,
  verdict     TEXT NOT NULL,
  passed      BOOLEAN NOT NULL,
  tool        TEXT NOT NULL,
  host        TEXT NOT NULL,
  source_kind TEXT NOT NULL,
  dir         TEXT NOT NULL,
  added_at    {ts} NOT NULL
);
CREATE INDEX runs_plan_start ON runs (plan, start_time);
CREATE TABLE run_tags (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE INDEX run_tags_key_value ON run_tags (key, value);
CREATE TABLE run_context (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  key    TEXT NOT NULL,
  value  TEXT NOT NULL,
  PRIMARY KEY (run_id, key)
);
CREATE TABLE phases (
  run_id     TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  idx        INTEGER NOT NULL,
  name       TEXT NOT NULL,
  workload   TEXT NOT NULL,
  start_time {ts},
  end_time   {ts},
  users      INTEGER NOT NULL,
  rate_per_s DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE label_stats (
  run_id         TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  phase          TEXT NOT NULL,
  label          TEXT NOT NULL,
  is_transaction BOOLEAN NOT NULL,
  samples        BIGINT NOT NULL,
  errors         BIGINT NOT NULL,
  error_pct      DOUBLE PRECISION NOT NULL,
  mean_ms        DOUBLE PRECISION NOT NULL,
  p50_ms         DOUBLE PRECISION NOT NULL,
  p90_ms         DOUBLE PRECISION NOT NULL,
  p95_ms         DOUBLE PRECISION NOT NULL,
  p99_ms         DOUBLE PRECISION NOT NULL,
  max_ms         DOUBLE PRECISION NOT NULL,
  throughput_rps DOUBLE PRECISION NOT NULL,
  no_times       BOOLEAN NOT NULL,
  PRIMARY KEY (run_id, phase, label)
);
CREATE INDEX label_stats_label ON label_stats (label, phase);
CREATE TABLE sla_results (
  run_id   TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  idx      INTEGER NOT NULL,
  expr     TEXT NOT NULL,
  scope    TEXT NOT NULL,
  passed   BOOLEAN NOT NULL,
  no_data  BOOLEAN NOT NULL,
  observed DOUBLE PRECISION NOT NULL,
  unit     TEXT NOT NULL,
  PRIMARY KEY (run_id, idx)
);
CREATE TABLE capacity (
  run_id                  TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  load_unit               TEXT NOT NULL,
  knee_load               DOUBLE PRECISION,
  knee_throughput_rps     DOUBLE PRECISION,
  usl_peak_throughput_rps DOUBLE PRECISION,
  max_load_meeting_sla    DOUBLE PRECISION,
  bottleneck              TEXT NOT NULL
);
CREATE TABLE resources (
  run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  target TEXT NOT NULL,
  kind   TEXT NOT NULL,
  phase  TEXT NOT NULL,
  metric TEXT NOT NULL,
  min    DOUBLE PRECISION NOT NULL,
  mean   DOUBLE PRECISION NOT NULL,
  max    DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run_id, target, kind, phase, metric)
);
`,
	2: `
CREATE TABLE change_points (
  plan        TEXT NOT NULL,
  metric      TEXT NOT NULL,
  label       TEXT NOT NULL,
  phase       TEXT NOT NULL,
  target      TEXT NOT NULL,
  series      TEXT NOT NULL,
  unit        TEXT NOT NULL,
  direction   TEXT NOT NULL,
  run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  start_time  {ts} NOT NULL,
  before_mean DOUBLE PRECISION NOT NULL,
  after_mean  DOUBLE PRECISION NOT NULL,
  before_runs INTEGER NOT NULL,
  after_runs  INTEGER NOT NULL,
  change_pct  DOUBLE PRECISION NOT NULL,
  p_value     DOUBLE PRECISION NOT NULL,
  worse       BOOLEAN NOT NULL,
  PRIMARY KEY (plan, metric, label, phase, target, run_id)
);
CREATE INDEX change_points_run ON change_points (run_id);
CREATE INDEX change_points_plan_time ON change_points (plan, start_time);
CREATE TABLE change_point_sets (
  plan           TEXT PRIMARY KEY,
  runs           INTEGER NOT NULL,
  runs_hash      TEXT NOT NULL,
  alpha          DOUBLE PRECISION NOT NULL,
  min_change_pct DOUBLE PRECISION NOT NULL,
  seed           BIGINT NOT NULL,
  computed_at    {ts} NOT NULL
);
`,
}

// SchemaVersion is the schema version this build writes: the last of
// migrations.
const SchemaVersion = 2
