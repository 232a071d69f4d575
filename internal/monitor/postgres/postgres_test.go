package postgres

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
)

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRealPostgres runs against a real server: connection counts follow the
// connections the test opens, commits are counted, top statements appear,
// and a server restart mid-session is a gap followed by a resume.
func TestRealPostgres(t *testing.T) {
	srv := monitortest.StartPostgres(t)
	ctx := context.Background()
	run := t.TempDir()

	s, err := monitor.Start(ctx, monitor.Options{
		Dir: run, Interval: 200 * time.Millisecond,
		Targets: []monitor.TargetConfig{
			{Kind: "postgres", Name: "db", DSN: srv.DSN},
			{Kind: "postgres", Name: "nobody", DSN: "postgres://postgres@" + monitortest.FreeAddr(t) + "/postgres"},
		},
		Kinds: map[string]monitor.Kind{"postgres": Kind()},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	st := s.Status()
	if !st[0].Started {
		t.Fatalf("db not started: %s", st[0].Error)
	}
	if st[1].Started || !strings.Contains(st[1].Error, "connect") {
		t.Errorf("a closed port should not start, status %+v", st[1])
	}

	col, err := Open(ctx, monitor.TargetConfig{DSN: srv.DSN}, monitor.Env{Dir: t.TempDir(), Stem: "direct", Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	c := col.(*Collector)
	defer c.Close()
	if !c.HasStatements() {
		t.Fatal("pg_stat_statements not found")
	}

	// plateau's connections (the session's and this collector's) are not
	// counted; anything else already connected is the baseline.
	// The server is this test's own: a client backend in the baseline is
	// that of the psql that created the extension, whose exit is
	// asynchronous (on a loaded machine it was still listed, and left
	// during the test: every count below came out one short). Wait for it.
	base, _ := monitortest.Sample(t, c)
	for deadline := time.Now().Add(5 * time.Second); base["connections_total"] != 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		base, _ = monitortest.Sample(t, c)
	}
	var conns []*pgx.Conn
	for range 5 {
		conns = append(conns, connect(t, srv.DSN))
	}
	m, _ := monitortest.Sample(t, c)
	if got := m["connections_total"] - base["connections_total"]; got != 5 {
		t.Errorf("connections_total rose by %v after opening 5", got)
	}
	if got := m["connections_idle"] - base["connections_idle"]; got != 5 {
		t.Errorf("connections_idle rose by %v", got)
	}
	if m["connections_max"] != float64(srv.MaxConnections) {
		t.Errorf("connections_max %v, server started with %d", m["connections_max"], srv.MaxConnections)
	}

	// One idle in a transaction, one active in a long query.
	tx, err := conns[0].Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := conns[1].Exec(ctx, "SELECT pg_sleep(1.5)")
		done <- err
	}()
	deadline := time.Now().Add(3 * time.Second)
	for {
		m, _ = monitortest.Sample(t, c)
		if m["connections_active"]-base["connections_active"] >= 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := m["connections_active"] - base["connections_active"]; got != 1 {
		t.Errorf("connections_active rose by %v during pg_sleep", got)
	}
	if got := m["connections_idle_in_tx"] - base["connections_idle_in_tx"]; got != 1 {
		t.Errorf("connections_idle_in_tx rose by %v", got)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	for _, cn := range conns[2:] {
		_ = cn.Close(ctx)
	}
	// A closed connection's backend exits asynchronously.
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		m, _ = monitortest.Sample(t, c)
		if m["connections_total"]-base["connections_total"] == 2 || time.Now().After(deadline) {
			break
		}
	}
	if got := m["connections_total"] - base["connections_total"]; got != 2 {
		t.Errorf("connections_total %v above baseline after closing 3 of 5", got)
	}

	// Transactions: 200 commits, flushed at once by the backend.
	before, t0 := monitortest.Sample(t, c)
	const commits = 200
	for i := range commits {
		if _, err := conns[0].Exec(ctx, "SELECT $1::int + 1", i); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := conns[0].Exec(ctx, "SELECT generate_series(1, 10) /* distinct statement */"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conns[0].Exec(ctx, "SELECT pg_stat_force_next_flush()"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	after, t1 := monitortest.Sample(t, c)
	counted := after["xact_commit_per_s"] * t1.Sub(t0).Seconds()
	t.Logf("commits counted %.1f for %d sent (+4 more statements); before %v", counted, commits, before["connections_total"])
	// The session's own sampling queries are subtracted by its collector,
	// not by this one, and flushes are not instant: allow a margin above.
	if counted < commits || counted > commits+40 {
		t.Errorf("xact_commit_per_s × Δt = %.1f, want about %d", counted, commits)
	}
	if hit, ok := after["cache_hit_pct"]; ok && (hit < 0 || hit > 100) {
		t.Errorf("cache_hit_pct %v", hit)
	}

	// Restart the server: a gap, then a resume.
	srv.Stop()
	waitFor(t, "gap", func() bool { return len(s.Status()[0].Gaps) == 1 })
	srv.Start(t)
	waitFor(t, "resume", func() bool { return s.Status()[0].Gaps[0].End != nil })
	time.Sleep(300 * time.Millisecond)
	// Statements run after the restart count for the session too.
	again := connect(t, srv.DSN)
	for range 7 {
		if _, err := again.Exec(ctx, "SELECT count(*) FROM generate_series(1, 1000) /* after restart */"); err != nil {
			t.Fatal(err)
		}
	}
	_ = again.Close(ctx)
	for _, cn := range conns[:2] {
		_ = cn.Close(ctx)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}

	if st := s.Status()[0]; st.Samples > 0 {
		t.Logf("own cost: %.3f ms CPU per sample over %d samples (sampling thread)", st.CPUSeconds/float64(st.Samples)*1e3, st.Samples)
	}

	reps, err := ReadStatements(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 1 || reps[0].Target != "db" {
		t.Fatalf("statements files: %+v", reps)
	}
	var plus, series, restart *monitor.Statement
	for i, st := range reps[0].Statements {
		switch {
		case strings.Contains(st.Query, "::int +"):
			plus = &reps[0].Statements[i]
		case strings.Contains(st.Query, "distinct statement"):
			series = &reps[0].Statements[i]
		case strings.Contains(st.Query, "after restart"):
			restart = &reps[0].Statements[i]
		}
		if strings.Contains(st.Query, "plateau-monitor") {
			t.Errorf("plateau's own query in the top statements: %s", st.Query)
		}
	}
	if plus == nil || plus.Calls != commits || plus.MeanMs <= 0 || plus.TotalMs < plus.MeanMs {
		t.Errorf("top statement for the %d commits: %+v", commits, plus)
	}
	if series == nil || series.Calls != 3 {
		t.Errorf("generate_series statement: %+v", series)
	}
	if restart == nil || restart.Calls != 7 {
		t.Errorf("statement after restart: %+v", restart)
	}

	got, status, err := monitor.Read(run)
	if err != nil {
		t.Fatal(err)
	}
	if len(status) != 2 || len(status[0].Gaps) != 1 || status[0].Gaps[0].End == nil || status[1].Error == "" {
		t.Errorf("statuses read back: %+v", status)
	}
	found := map[string]bool{}
	for _, s := range got {
		found[s.Metric] = true
	}
	for _, m := range []string{"connections_total", "connections_active", "connections_idle", "connections_idle_in_tx", "xact_commit_per_s", "xact_rollback_per_s"} {
		if !found[m] {
			t.Errorf("no %s series", m)
		}
	}
}

func TestTopStatementsDiff(t *testing.T) {
	t.Parallel()
	k := func(id int64) string { return stmtKey("10", "5", id) }
	start := map[string]monitor.StatementCounters{
		k(1): {Query: "SELECT 1", Calls: 10, TotalMs: 100, Rows: 10},
		k(2): {Query: "SELECT 2", Calls: 50, TotalMs: 500, Rows: 0},
		k(3): {Query: "SELECT 3", Calls: 5, TotalMs: 5},
	}
	end := map[string]monitor.StatementCounters{
		k(1): {Query: "SELECT 1", Calls: 30, TotalMs: 400, Rows: 30}, // +20 calls, +300 ms
		k(2): {Query: "SELECT 2", Calls: 4, TotalMs: 40},             // reset: counts from 0
		k(3): {Query: "SELECT 3", Calls: 5, TotalMs: 5},              // did not run
		k(4): {Query: "SELECT   4\n  FROM x", Calls: 1, TotalMs: 1000},
	}
	rep := monitor.TopOf("db", time.Unix(0, 0), time.Unix(10, 0), start, end, 2)
	if rep.Distinct != 3 || len(rep.Statements) != 2 {
		t.Fatalf("distinct %d, kept %d", rep.Distinct, len(rep.Statements))
	}
	if s := rep.Statements[0]; s.Query != "SELECT 4 FROM x" || s.Calls != 1 || s.TotalMs != 1000 {
		t.Errorf("first %+v", s)
	}
	if s := rep.Statements[1]; s.QueryID != k(1) || s.Calls != 20 || s.TotalMs != 300 || s.MeanMs != 15 || s.Rows != 20 {
		t.Errorf("second %+v", s)
	}
	long := strings.Repeat("é", 400)
	if got := monitor.CutQuery(long, QueryChars); len(got) > QueryChars+len("…") || !strings.HasSuffix(got, "…") {
		t.Errorf("cut to %d bytes", len(got))
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := Validate(monitor.TargetConfig{DSN: "postgres://u@127.0.0.1:5432/app"}); err != nil {
		t.Error(err)
	}
	for _, dsn := range []string{"", "postgres://u@127.0.0.1:notaport/app"} {
		if Validate(monitor.TargetConfig{DSN: dsn}) == nil {
			t.Errorf("dsn %q accepted", dsn)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}
