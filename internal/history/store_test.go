package history_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/monitor/monitortest"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// runDir writes a synthetic run (the report's own fixture writer) with its
// summary.json.
func runDir(t testing.TB, o reporttest.Options) string {
	t.Helper()
	dir := t.TempDir()
	if err := reporttest.Write(dir, o); err != nil {
		t.Fatal(err)
	}
	if _, err := report.Generate(dir, report.Options{Formats: []string{"json"}}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fixtureRuns reads n synthetic runs, the later half slower, each started
// a day after the one before, tagged with a release.
func fixtureRuns(t testing.TB, n int) []*history.Run {
	t.Helper()
	var runs []*history.Run
	for i := range n {
		o := reporttest.Options{Seed: uint64(i + 1), Monitor: true, SLA: []string{"p95(response_time) < 400ms"}}
		if i >= n/2 {
			o.SlowerPct = 40
		}
		rel := "r1"
		if i >= n/2 {
			rel = "r2"
		}
		r, err := history.FromDir(runDir(t, o), map[string]string{"release": rel, "build": string(rune('a' + i))})
		if err != nil {
			t.Fatal(err)
		}
		r.Start = r.Start.Add(time.Duration(i) * 24 * time.Hour)
		runs = append(runs, r)
	}
	return runs
}

func openSQLite(t testing.TB) *history.Store {
	t.Helper()
	s, err := history.Open(context.Background(), filepath.Join(t.TempDir(), "sub", "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestAddTwiceStoresOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSQLite(t)
	dir := runDir(t, reporttest.Options{Seed: 3})
	r, err := history.FromDir(dir, map[string]string{"release": "ramsons"})
	if err != nil {
		t.Fatal(err)
	}
	added, err := s.Add(ctx, r, time.Now())
	if err != nil || !added {
		t.Fatalf("first add: added %v, %v", added, err)
	}
	// The same directory read again (another process, another day), with
	// one more tag: still one run, the tag merged.
	again, err := history.FromDir(dir, map[string]string{"build": "1234"})
	if err != nil {
		t.Fatal(err)
	}
	added, err = s.Add(ctx, again, time.Now())
	if err != nil || added {
		t.Fatalf("second add: added %v, %v", added, err)
	}
	runs, err := s.Runs(ctx, history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 {
		t.Fatalf("%d runs stored, want 1", len(runs))
	}
	if got := runs[0].Tags; got["release"] != "ramsons" || got["build"] != "1234" {
		t.Errorf("tags %v, want release and build", got)
	}
	n := 0
	for _, l := range runs[0].Labels {
		if l.Phase == history.WholeRun {
			n++
		}
	}
	if n != countWhole(r) || n == 0 {
		t.Errorf("%d whole-run label rows after two adds, want %d", n, countWhole(r))
	}
}

func countWhole(r *history.Run) int {
	n := 0
	for _, l := range r.Labels {
		if l.Phase == history.WholeRun {
			n++
		}
	}
	return n
}

// TestRoundTrip: what is read back is what was added, field by field, and
// a moved or deleted run directory keeps its history.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openSQLite(t)
	runs := fixtureRuns(t, 2)
	for _, r := range runs {
		if _, err := s.Add(ctx, r, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Runs(ctx, history.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d runs, want 2", len(got))
	}
	for i := range runs {
		want := *runs[i]
		g := *got[i]
		g.Added = time.Time{}
		if !reflect.DeepEqual(want, g) {
			wb, _ := json.MarshalIndent(want, "", " ")
			gb, _ := json.MarshalIndent(g, "", " ")
			t.Errorf("run %d read back differs:\nwant %s\ngot  %s", i, firstDiff(wb, gb), firstDiff(gb, wb))
		}
	}
	if len(got[0].Resources) == 0 || len(got[0].SLA) == 0 || got[0].Capacity == nil || len(got[0].Phases) == 0 {
		t.Errorf("run stored without resources, SLA, capacity or phases: %d %d %v %d", len(got[0].Resources), len(got[0].SLA), got[0].Capacity, len(got[0].Phases))
	}
	// Since and tags select.
	sel, err := s.Runs(ctx, history.Filter{Tags: map[string]string{"release": "r2"}})
	if err != nil || len(sel) != 1 || sel[0].ID != runs[1].ID {
		t.Errorf("tag filter: %v, %v", sel, err)
	}
	sel, err = s.Runs(ctx, history.Filter{Since: runs[1].Start})
	if err != nil || len(sel) != 1 || sel[0].ID != runs[1].ID {
		t.Errorf("since filter: %v, %v", sel, err)
	}
}

func firstDiff(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-200)
	return string(a[lo:min(len(a), i+200)])
}

// TestSQLiteAndPostgresAgree: the same runs added to an SQLite file and to
// a real PostgreSQL give the same runs back, the same `history show` and
// the same analysis (history.json).
func TestSQLiteAndPostgresAgree(t *testing.T) {
	ctx := context.Background()
	runs := fixtureRuns(t, 12)
	lite := openSQLite(t)
	pg, err := history.Open(ctx, monitortest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	// Opening again finds the schema in place (migrations are versioned,
	// applied once).
	pg2, err := history.Open(ctx, monitortest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	pg2.Close()
	outputs := map[string][]string{}
	for name, s := range map[string]*history.Store{"sqlite": lite, "postgres": pg} {
		for _, r := range runs {
			if _, err := s.Add(ctx, r, time.Unix(0, 0)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if added, err := s.Add(ctx, runs[0], time.Unix(0, 0)); err != nil || added {
			t.Fatalf("%s: adding a run twice: added %v, %v", name, added, err)
		}
		got, err := s.Runs(ctx, history.Filter{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) != len(runs) {
			t.Fatalf("%s: %d runs, want %d", name, len(got), len(runs))
		}
		if _, err := s.RefreshChangePoints(ctx, got[0].Plan); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cps, err := s.ChangePoints(ctx, history.Filter{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var show bytes.Buffer
		if err := history.Show(&show, got, "", cps); err != nil {
			t.Fatal(err)
		}
		a, err := history.Analyze(got, history.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		aj, _ := json.Marshal(a)
		for i := range got {
			got[i].Added = time.Time{}
		}
		rj, _ := json.Marshal(got)
		outputs[name] = []string{show.String(), string(aj), string(rj)}
	}
	for i, what := range []string{"history show", "analysis", "runs"} {
		if outputs["sqlite"][i] != outputs["postgres"][i] {
			t.Errorf("%s differs between SQLite and PostgreSQL:\nsqlite   %s\npostgres %s", what,
				firstDiff([]byte(outputs["sqlite"][i]), []byte(outputs["postgres"][i])), firstDiff([]byte(outputs["postgres"][i]), []byte(outputs["sqlite"][i])))
		}
	}
	if !strings.Contains(outputs["sqlite"][0], "release=r2") || !strings.Contains(outputs["sqlite"][0], fmt.Sprintf("%d runs;", len(runs))) {
		t.Errorf("history show lacks the runs or their tags:\n%s", outputs["sqlite"][0])
	}
}

// TestStoredChangePoints: the change points are stored (SQLite and a real
// PostgreSQL alike), found where the runs were planted 40 % slower, shown
// by history show without recomputing, not recomputed while the runs are
// the same, and recomputed when a run is added.
func TestStoredChangePoints(t *testing.T) {
	ctx := context.Background()
	runs := fixtureRuns(t, 13)
	pg, err := history.Open(ctx, monitortest.Postgres(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	shows := map[string]string{}
	for name, s := range map[string]*history.Store{"sqlite": openSQLite(t), "postgres": pg} {
		plan := runs[0].Plan
		for _, r := range runs[:12] {
			if _, err := s.Add(ctx, r, time.Unix(0, 0)); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		done, err := s.RefreshChangePoints(ctx, plan)
		if err != nil || len(done) != 1 || done[plan] == 0 {
			t.Fatalf("%s: refresh %v, %v: want the plan's change points computed", name, done, err)
		}
		cps, err := s.ChangePoints(ctx, history.Filter{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(cps) != done[plan] {
			t.Errorf("%s: %d change points read, %d stored", name, len(cps), done[plan])
		}
		var p95 *history.StoredChangePoint
		for i, c := range cps {
			if c.RunID != runs[6].ID {
				t.Errorf("%s: change point of %s at run %s, planted at run 6 (%s)", name, c.Series, c.RunID, runs[6].ID)
			}
			if c.Label == "TOTAL" && c.Phase == "" && c.Metric == history.MetricP95 {
				p95 = &cps[i]
			}
		}
		if p95 == nil || !p95.Worse || p95.ChangePct < 20 || p95.BeforeRuns != 6 || p95.AfterRuns != 6 || p95.PValue > history.StoredOptions().Alpha || !p95.Start.Equal(runs[6].Start) {
			t.Fatalf("%s: TOTAL p95 change point %+v, want run 6, worse, about +40 %%", name, p95)
		}
		// The same runs: nothing recomputed, the same rows.
		if done, err := s.RefreshChangePoints(ctx, plan); err != nil || len(done) != 0 {
			t.Errorf("%s: refresh over the same runs recomputed %v (%v)", name, done, err)
		}
		again, _ := s.ChangePoints(ctx, history.Filter{})
		if fmt.Sprint(again) != fmt.Sprint(cps) {
			t.Errorf("%s: change points changed without a new run", name)
		}
		got, _ := s.Runs(ctx, history.Filter{})
		var show bytes.Buffer
		if err := history.Show(&show, got, "", cps); err != nil {
			t.Fatal(err)
		}
		shows[name] = show.String()
		if !strings.Contains(show.String(), "p95 +") || !strings.Contains(show.String(), "change points at these runs") {
			t.Errorf("%s: history show does not show the change points:\n%s", name, show.String())
		}
		// A run added: recomputed, now over 13 runs.
		if _, err := s.Add(ctx, runs[12], time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		if done, err := s.RefreshChangePoints(ctx, plan); err != nil || len(done) != 1 {
			t.Errorf("%s: refresh after adding a run: %v, %v", name, done, err)
		}
		after, _ := s.ChangePoints(ctx, history.Filter{})
		for _, c := range after {
			if c.Metric == history.MetricP95 && c.Label == "TOTAL" && c.Phase == "" && c.AfterRuns != 7 {
				t.Errorf("%s: after a 13th run the p95 change point has %d runs after it, want 7", name, c.AfterRuns)
			}
		}
	}
	if shows["sqlite"] != shows["postgres"] {
		t.Errorf("history show differs:\nsqlite\n%s\npostgres\n%s", shows["sqlite"], shows["postgres"])
	}
}
