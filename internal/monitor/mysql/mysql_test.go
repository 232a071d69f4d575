package mysql

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	driver "github.com/go-sql-driver/mysql"

	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/monitor/promql"
)

func openDB(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestRealMariaDB runs against a real MariaDB: connection counts follow the
// connections the test opens, queries and slow queries are counted, and the
// top statements name the statement the test ran, with its call count.
func TestRealMariaDB(t *testing.T) {
	m := monitortest.StartMariaDB(t)
	ctx := context.Background()
	// Parameters interpolated by the driver, as JDBC does by default: the
	// statements reach the server as text and are counted once each.
	app := openDB(t, m.DSN()+"app?interpolateParams=true")
	if _, err := app.Exec("CREATE TABLE items (id INT PRIMARY KEY, v VARCHAR(20))"); err != nil {
		t.Fatal(err)
	}
	run := t.TempDir()
	s, err := monitor.Start(ctx, monitor.Options{Dir: run, Interval: time.Hour, // sampled by hand below
		Kinds:   map[string]monitor.Kind{monitor.KindMySQL: Kind()},
		Targets: []monitor.TargetConfig{{Kind: monitor.KindMySQL, Name: "db", Options: map[string]any{"dsn": "plateau@tcp(" + m.Addr + ")/", "password_env": "DBPW"}}},
		Getenv:  func(k string) (string, bool) { return m.Password, k == "DBPW" }})
	if err != nil {
		t.Fatal(err)
	}
	if st := s.Status()[0]; !st.Started {
		t.Fatalf("not started: %s", st.Error)
	}

	c, err := Open(ctx, monitor.TargetConfig{Kind: monitor.KindMySQL, Name: "probe", Options: map[string]any{"dsn": m.DSN(), "statements": false}},
		monitor.Env{Dir: t.TempDir(), Stem: "probe", Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	slow := func() float64 {
		var k string
		var v float64
		if err := app.QueryRow("SHOW GLOBAL STATUS LIKE 'Slow_queries'").Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	slow0 := slow()
	base, t0 := monitortest.Sample(t, c)
	// Five more connections.
	var conns []*sql.Conn
	for range 5 {
		cn, err := app.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := cn.PingContext(ctx); err != nil {
			t.Fatal(err)
		}
		conns = append(conns, cn)
	}
	const inserts = 120
	for i := range inserts {
		if _, err := conns[0].ExecContext(ctx, "INSERT INTO items VALUES (?, 'x')", i); err != nil {
			t.Fatal(err)
		}
	}
	for range 3 {
		if _, err := conns[1].ExecContext(ctx, "SELECT SLEEP(0.3)"); err != nil {
			t.Fatal(err)
		}
	}
	// The server counts a slow query after it has sent the result: give
	// the last one a moment.
	time.Sleep(200 * time.Millisecond)
	after, t1 := monitortest.Sample(t, c)
	slowServer := slow() - slow0
	dt := t1.Sub(t0).Seconds()
	// app's pool kept one idle connection from CREATE TABLE, which the
	// first Conn reuses: five Conns are at least four new connections.
	if got := after["connections"] - base["connections"]; got < 4 || got > 5 {
		t.Errorf("connections went from %v to %v with 5 more open", base["connections"], after["connections"])
	}
	// The three SLEEPs are slow; on a loaded machine another statement may
	// be too, so the reference is the server's own counter read around the
	// samples (no statement of the test runs between those reads and the
	// samples).
	if got := after["slow_queries_per_s"] * dt; got < 2.99 || got > slowServer+0.01 {
		t.Errorf("slow queries counted %.2f, want at least 3 (3 × SLEEP(0.3), long_query_time 0.25 s) and the server's own %v", got, slowServer)
	}
	if got := after["com_insert_per_s"] * dt; got < inserts-0.01 || got > inserts+0.01 {
		t.Errorf("inserts counted %.2f, want %d", got, inserts)
	}
	if got := after["queries_per_s"] * dt; got < inserts+3-0.01 || got > inserts+3+10 { // a rate times its window: not exact in floating point
		t.Errorf("queries counted %.3f for %d sent", got, inserts+3)
	}
	if after["connections_max"] != 151 {
		t.Errorf("connections_max %v, want MariaDB's default 151", after["connections_max"])
	}
	if hit, ok := after["innodb_buffer_hit_pct"]; ok && (hit < 0 || hit > 100) {
		t.Errorf("innodb_buffer_hit_pct %v", hit)
	}
	for _, cn := range conns {
		cn.Close()
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	var cb monitor.Batch
	t2 := time.Now()
	const n = 20
	for range n {
		cb.Reset(time.Now(), time.Now())
		if err := c.Collect(ctx, &cb); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("own cost: %.2f ms wall per sample (SHOW GLOBAL STATUS + 2 variables), %d samples", time.Since(t2).Seconds()/n*1e3, n)
	reps, err := monitor.ReadStatements(run)
	if err != nil || len(reps) != 1 {
		t.Fatalf("statements: %v %v", reps, err)
	}
	var ins *monitor.Statement
	for i, st := range reps[0].Statements {
		if strings.HasPrefix(st.Query, "INSERT INTO") {
			ins = &reps[0].Statements[i]
		}
		if strings.Contains(st.Query, "SHOW GLOBAL") || strings.Contains(st.Query, "summary_by_digest") {
			t.Errorf("plateau's own statement in the top: %s", st.Query)
		}
	}
	if ins == nil || ins.Calls != inserts || ins.TotalMs <= 0 || !strings.Contains(ins.Query, "items") {
		t.Fatalf("INSERT statement: %+v (all: %+v)", ins, reps[0].Statements)
	}
	if reps[0].AllMs < ins.TotalMs {
		t.Errorf("all_ms %v below one statement's %v", reps[0].AllMs, ins.TotalMs)
	}
}

// TestMySQLRecipe: the mysql recipe against the real Prometheus scraping the
// real mysqld_exporter gives the server's own numbers.
func TestMySQLRecipe(t *testing.T) {
	m := monitortest.StartMariaDB(t)
	exp := monitortest.MysqldExporter(t, m)
	prom := monitortest.Prometheus(t, map[string][]string{"mysql": {exp}})
	time.Sleep(2 * time.Second)
	dir := t.TempDir()
	s, err := monitor.Start(context.Background(), monitor.Options{Dir: dir, Interval: 500 * time.Millisecond,
		Kinds:   map[string]monitor.Kind{monitor.KindRecipe: promql.Kind()},
		Targets: []monitor.TargetConfig{{Kind: monitor.KindRecipe, Name: "dbs", Options: map[string]any{"url": prom, "recipe": "mysql", "window": "5s", "before": "5s"}}}})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	series, _, err := monitor.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]float64{}
	for _, s := range series {
		if n := len(s.Points); n > 0 {
			last[s.Metric] = s.Points[n-1].V
		}
	}
	if got := last["mysql_max_connections{instance="+exp+"}"]; got != 151 {
		t.Errorf("mysql_max_connections %v, want 151; series %v", got, last)
	}
	// The exporter's own reading of the variable.
	if f := monitortest.ExporterValue(t, exp, "mysql_global_variables_max_connections"); f != last["mysql_max_connections{instance="+exp+"}"] {
		t.Errorf("exporter says %v", f)
	}
	if _, ok := last["mysql_connections{instance="+exp+"}"]; !ok {
		t.Errorf("no mysql_connections; series %v", last)
	}
	notes, _ := monitor.ReadNotes(dir)
	for _, n := range notes {
		if n.Level == monitor.NoteError {
			t.Errorf("note %+v", n)
		}
	}
}

func TestConfig(t *testing.T) {
	for name, tc := range map[string]struct {
		opts map[string]any
		want string
	}{
		"no dsn":      {map[string]any{}, "dsn is required"},
		"bad dsn":     {map[string]any{"dsn": "user:secretpw@tcp(x"}, "invalid DSN"},
		"unknown key": {map[string]any{"dsn": "u@tcp(127.0.0.1:3306)/", "url": "x"}, "unknown field url"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Validate(monitor.TargetConfig{Kind: monitor.KindMySQL, Options: tc.opts})
			if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "secretpw") {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
	var _ = driver.Config{}
}
