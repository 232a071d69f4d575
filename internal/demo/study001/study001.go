// Package study001 is `plateau demo 001`: reference study 001 (FOLIO
// check-in / check-out) scaled down. examples/folio-circulation/plan.yaml
// runs as is against the bundled circulation service at four user levels
// (8, 20, 30, 75), for the current release and the previous one (whose
// patron check cannot use its index), then a soak of each at 30 users in
// which the current release carries a planted slow leak. The data are
// prepared before every test (the earlier tests' loans removed, items available), as the
// reference's preparation script did. With --postgres the circulation data
// live in that PostgreSQL database, watched by a postgres monitor, so the
// database tables (connections, top SQL) fill.
package study001

import (
	"context"
	_ "embed"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/demo"
	"github.com/plateau-perf/plateau/internal/demo/studykit"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/study"
)

// PlanYAML is examples/folio-circulation/plan.yaml (a test keeps them equal).
//
//go:embed plan.yaml
var PlanYAML []byte

// Levels are the reference's user levels (tests 1–4); the soak (test 5)
// runs at SoakUsers.
var Levels = []int{8, 20, 30, 75}

// SoakUsers is the longevity test's load.
const SoakUsers = 30

// Transactions and Requests are the plan's labels in the reference's order.
var (
	Transactions = []string{"Check-Out Controller", "Check-In Controller"}
	Requests     = []string{"POST_circulation/check-out-by-barcode (Submit_barcode_checkout)", "POST_circulation/check-in-by-barcode (Submit_barcode_checkin)",
		"GET_users (Submit_patron_barcode)", "GET_inventory/items (Submit_barcode_checkout)"}
)

// Service is the monitored circulation process; Database the postgres
// monitor's target.
const (
	Service  = "mod-circulation"
	Database = "database"
)

type scale struct {
	items          int
	duration, soak time.Duration
	rampPerUser    time.Duration
	think          string
	leakBytes      int
	leakCost       time.Duration
	history        int
}

func scaleOf(s studykit.Scale) scale {
	return scale{
		items:       studykit.Pick(s, 1000, 3000, 20000),
		duration:    studykit.Pick(s, 4*time.Second, 12*time.Second, 45*time.Minute),
		soak:        studykit.Pick(s, 12*time.Second, 50*time.Second, 10*time.Hour),
		rampPerUser: studykit.Pick(s, 20*time.Millisecond, 40*time.Millisecond, 10*time.Second),
		think:       studykit.Pick(s, "uniform(100ms, 300ms)", "uniform(500ms, 1500ms)", "uniform(2s, 6s)"),
		leakBytes:   studykit.Pick(s, 64<<10, 64<<10, 1<<10),
		leakCost:    studykit.Pick(s, 20*time.Microsecond, 20*time.Microsecond, 3*time.Microsecond),
		history:     studykit.Pick(s, 12000, 12000, 200000),
	}
}

// release is one release's service.
type release struct {
	name, flag string
}

var releases = []release{{"current release", sut.ReleaseCurrent}, {"previous release", sut.ReleasePrevious}}

// Run runs the study and returns the study document's directory.
func Run(ctx context.Context, env *studykit.Env) (string, error) {
	sc := scaleOf(env.Scale)
	planDir := filepath.Join(env.Dir, "plan")
	plan, err := studykit.WriteFile(planDir, "plan.yaml", PlanYAML)
	if err != nil {
		return "", err
	}
	if _, err := studykit.WriteFile(planDir, "items.csv", sut.ItemsCSV(sc.items)); err != nil {
		return "", err
	}
	logs, err := env.LogDir()
	if err != nil {
		return "", err
	}
	db := filepath.Join(env.Dir, "circulation.db")
	// runs[release][level]; soaks[release]
	levels := make([][]*studykit.Run, len(releases))
	soaks := make([]*studykit.Run, len(releases))
	for ri, rel := range releases {
		for _, soak := range []bool{false, true} {
			svc := env.NewServices()
			args := []string{"--release", rel.flag, "--items", strconv.Itoa(sc.items), "--patrons", strconv.Itoa(sc.items),
				"--history", strconv.Itoa(sc.history), "--access-log", filepath.Join(logs, rel.flag+"-circulation-access.log")}
			if env.Postgres != "" {
				args = append(args, "--dsn", env.Postgres)
			} else {
				args = append(args, "--db", db)
			}
			if soak && rel.flag == sut.ReleaseCurrent {
				args = append(args, "--leak-bytes", strconv.Itoa(sc.leakBytes), "--leak-cost", sc.leakCost.String())
			}
			p, err := svc.Start(ctx, Service, "circulation", args...)
			if err != nil {
				return "", err
			}
			mons := svc.Monitors()
			if env.Postgres != "" {
				mons = append(mons, "postgres:name="+Database+",dsn="+env.Postgres)
			}
			do := func(users int, dur time.Duration, slug, role, name string) (*studykit.Run, error) {
				if err := prepare(ctx, p); err != nil {
					return nil, err
				}
				ramp := time.Duration(users) * sc.rampPerUser
				sets := []string{"target=" + studykit.URL(p), "monitor={interval: 1s}",
					fmt.Sprintf("workloads.circulation.load={users: %d, ramp_up: %s, duration: %s}", users, ramp, dur+ramp),
					"workloads.circulation.scenario.1.think=" + sc.think, "workloads.circulation.scenario.3.think=" + sc.think}
				return env.Do(ctx, plan, slug, role, name, sets, mons)
			}
			if !soak {
				for li, u := range Levels {
					role := study.Candidate
					if ri == 1 && li == 0 { // the previous release is the baseline
						role = study.Baseline
					}
					r, err := do(u, sc.duration, fmt.Sprintf("%s-%dusers", rel.flag, u), role, fmt.Sprintf("%s, %d users", rel.name, u))
					if err != nil {
						svc.Stop()
						return "", err
					}
					r.Factors = study.Factors{Release: rel.name}
					levels[ri] = append(levels[ri], r)
				}
			} else {
				r, err := do(SoakUsers, sc.soak, rel.flag+"-soak", study.Soak, fmt.Sprintf("%s, soak", rel.name))
				if err != nil {
					svc.Stop()
					return "", err
				}
				r.Factors = study.Factors{Release: rel.name}
				soaks[ri] = r
			}
			svc.Stop()
		}
	}
	store := "embedded SQLite (circulation.db)"
	if env.Postgres != "" {
		store = "PostgreSQL (--postgres)"
	}
	var all []*studykit.Run
	all = append(all, levels[0]...)
	all = append(all, soaks[0])
	all = append(all, levels[1]...)
	all = append(all, soaks[1])
	out, _, err := env.Write(studykit.Context{
		Title:       "Reference 001 (demo): check-in / check-out, current release against the previous one",
		Description: "regression test of the check-in / check-out flow (transactions of several requests) at four user levels and a longevity test, compared with the previous release",
		System: []study.KV{{Name: Service, Value: "plateau demo serve-study circulation (current and previous release)"},
			{Name: "database", Value: store}},
		Environment: []study.KV{{Name: "hosts", Value: "one machine, loopback; generator and service share its CPUs"},
			{Name: "data", Value: fmt.Sprintf("%d items, %d patrons, %d closed loans of history; the earlier tests' loans removed and items made available before each test", sc.items, sc.items, sc.history)},
			{Name: "previous release", Value: "its patron check wraps the indexed column in a function, so it reads the whole loan table"},
			{Name: "current release, soak", Value: "a planted slow leak: every check-out keeps memory that each check-in walks"}},
		Method: fmt.Sprintf("tests 1–4: %s users for %s each (ramp-up %s per user, think time %s); test 5: %d users for %s; each test once per release, data prepared before each",
			joinInts(Levels), sc.duration, sc.rampPerUser, sc.think, SoakUsers, sc.soak),
		Hypothesis: "the current release is faster than the previous one at every load level and stays stable over the longevity test",
		Questions: []study.Question{
			{Kind: study.Release, Baseline: releases[1].name, Candidate: releases[0].name, MaxSlowerPct: 5},
			{Kind: study.SoakQ, MaxDriftPct: 10},
		},
	}, all, func(*study.Study) []doc.Section { return sections(levels, soaks, env.Postgres != "") })
	return out, err
}

// prepare is the data preparation before each test.
func prepare(ctx context.Context, p *demo.Proc) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, studykit.URL(p)+"/admin/prepare", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("data preparation: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("data preparation: %s", resp.Status)
	}
	return nil
}

func joinInts(v []int) string {
	var s []string
	for _, x := range v {
		s = append(s, strconv.Itoa(x))
	}
	return strings.Join(s, "/")
}

func cell(ok bool, v string) string {
	if !ok {
		return "—"
	}
	return v
}

// sections are reference 001's tables in its order.
func sections(levels [][]*studykit.Run, soaks []*studykit.Run, pg bool) []doc.Section {
	cur, prev := levels[0], levels[1]
	labels := append(append([]string{}, Transactions...), Requests...)

	runsSec := doc.Section{ID: "ref-test-runs", Title: "Test Runs"}
	t := studykit.Table("The following table contains tests configuration information", "Test #", "Release", "vUsers", "Ramp-up, sec", "Duration, sec")
	for ri, rel := range releases {
		for i, r := range append(append([]*studykit.Run{}, levels[ri]...), soaks[ri]) {
			ramp, dur := 0.0, 0.0
			users := 0
			if ph := r.Phases(); len(ph) > 0 {
				users = ph[0].Users
				ramp = ph[0].RampUp.Seconds()
				dur = ph[0].Duration().Seconds()
			}
			studykit.AddRow(t, strconv.Itoa(i+1), rel.name, strconv.Itoa(users), studykit.F1(ramp), studykit.F1(dur))
		}
	}
	runsSec.Blocks = append(runsSec.Blocks, t)
	{
		var n int64
		for ri := range releases {
			for _, r := range append(append([]*studykit.Run{}, levels[ri]...), soaks[ri]) {
				n += r.Data.Total.Count
			}
		}
		runsSec.Blocks = append(runsSec.Blocks, studykit.Assess(fmt.Sprintf("%d tests per release, %d in all, with %d samples together; each test's load and duration as planned are above, and the validity banner names any test whose load was not held.",
			len(Levels)+1, 2*(len(Levels)+1), n)))
	}

	res := doc.Section{ID: "ref-response-time", Title: "Results: response time"}
	cols := []string{"Label"}
	for i, u := range Levels {
		cols = append(cols, fmt.Sprintf("#Samples (%d vUsers, test #%d)", u, i+1), "95th pct (ms)", "Average (ms)")
	}
	t = studykit.Table("Tests #1, #2, #3, #4: check-in, check-out response times (current release)", cols...)
	for _, l := range labels {
		row := []string{l}
		for _, r := range cur {
			st, ok := r.Label(l)
			row = append(row, cell(ok, studykit.Int(st.Samples)), cell(ok, studykit.Ms(st.P95Ms)), cell(ok, studykit.Ms(st.MeanMs)))
		}
		studykit.AddRow(t, row...)
	}
	res.Blocks = append(res.Blocks, t)
	if a, ok := cur[0].Label(Transactions[0]); ok {
		if b, ok := cur[len(cur)-1].Label(Transactions[0]); ok {
			res.Blocks = append(res.Blocks, studykit.Assess(fmt.Sprintf("the average of %s went from %s ms at %d vUsers to %s ms at %d vUsers (%s).",
				Transactions[0], studykit.Ms(a.MeanMs), Levels[0], studykit.Ms(b.MeanMs), Levels[len(Levels)-1], studykit.SignedPct(100*(b.MeanMs-a.MeanMs)/max(a.MeanMs, 1e-9)))))
		}
	}
	t = studykit.Table(fmt.Sprintf("Test #5: %d vUsers longevity test (current release)", SoakUsers), "Label", "#Samples", "95th pct (ms)", "Average (ms)")
	for _, l := range labels {
		st, ok := soaks[0].Label(l)
		studykit.AddRow(t, l, cell(ok, studykit.Int(st.Samples)), cell(ok, studykit.Ms(st.P95Ms)), cell(ok, studykit.Ms(st.MeanMs)))
	}
	res.Blocks = append(res.Blocks, t)

	cmp := doc.Section{ID: "ref-comparisons", Title: "Comparisons"}
	cols = []string{"Label"}
	for i, u := range Levels {
		cols = append(cols, fmt.Sprintf("Previous avg (%d vUsers, test #%d)", u, i+1), "Current avg", "Delta, ms", "Delta, %")
	}
	t = studykit.Table("Comparison between average response times (ms) of the current and the previous release", cols...)
	for _, l := range labels {
		row := []string{l}
		for i := range Levels {
			a, oka := prev[i].Label(l)
			b, okb := cur[i].Label(l)
			ok := oka && okb && a.MeanMs > 0
			row = append(row, cell(oka, studykit.Ms(a.MeanMs)), cell(okb, studykit.Ms(b.MeanMs)),
				cell(ok, studykit.SignedMs(b.MeanMs-a.MeanMs)), cell(ok, studykit.SignedPct(100*(b.MeanMs-a.MeanMs)/max(a.MeanMs, 1e-9))))
		}
		studykit.AddRow(t, row...)
	}
	cmp.Blocks = append(cmp.Blocks, t)
	{
		var parts []string
		for _, l := range Transactions {
			var ds []string
			for i, u := range Levels {
				a, oka := prev[i].Label(l)
				b, okb := cur[i].Label(l)
				if oka && okb && a.MeanMs > 0 {
					ds = append(ds, fmt.Sprintf("%s at %d", studykit.SignedPct(100*(b.MeanMs-a.MeanMs)/a.MeanMs), u))
				}
			}
			if len(ds) > 0 {
				parts = append(parts, l+" "+strings.Join(ds, ", "))
			}
		}
		if len(parts) > 0 {
			cmp.Blocks = append(cmp.Blocks, studykit.Assess("the current release against the previous, average per vUsers level: "+strings.Join(parts, "; ")+"."))
		}
	}
	t = studykit.Table(fmt.Sprintf("Comparison of longevity test (%d vUsers, test #5)", SoakUsers), "Label", "Previous average (ms)", "Current average (ms)", "Delta, ms", "Delta, %")
	for _, l := range Transactions {
		a, oka := soaks[1].Label(l)
		b, okb := soaks[0].Label(l)
		ok := oka && okb && a.MeanMs > 0
		studykit.AddRow(t, l, cell(oka, studykit.Ms(a.MeanMs)), cell(okb, studykit.Ms(b.MeanMs)),
			cell(ok, studykit.SignedMs(b.MeanMs-a.MeanMs)), cell(ok, studykit.SignedPct(100*(b.MeanMs-a.MeanMs)/max(a.MeanMs, 1e-9))))
	}
	cmp.Blocks = append(cmp.Blocks, t)
	top := cur[len(cur)-1]
	type api struct {
		name string
		avg  float64
	}
	var apis []api
	for _, l := range Requests {
		if st, ok := top.Label(l); ok {
			apis = append(apis, api{l, st.MeanMs})
		}
	}
	sort.Slice(apis, func(i, j int) bool { return apis[i].avg > apis[j].avg })
	t = studykit.Table(fmt.Sprintf("API requests by response time (%d vUsers, current release), slowest first", Levels[len(Levels)-1]), "API", "Average, ms", "≥ 100 ms")
	for _, a := range apis {
		over := "no"
		if a.avg >= 100 {
			over = "yes"
		}
		studykit.AddRow(t, a.name, studykit.F1(a.avg), over)
	}
	cmp.Blocks = append(cmp.Blocks, t, studykit.Note("The reference listed the requests at or above 100 ms; the demo service answers in milliseconds, so every request is listed with the threshold marked."))

	rs := doc.Section{ID: "ref-resources", Title: "Cluster resources utilization"}
	all := append(append([]*studykit.Run{}, cur...), soaks[0])
	names := []string{}
	for i, u := range Levels {
		names = append(names, fmt.Sprintf("test #%d (%d vUsers)", i+1, u))
	}
	names = append(names, "test #5 (longevity)")
	for _, kind := range []string{"CPU utilization", "Memory consumption"} {
		cols := []string{"Service"}
		for _, n := range names {
			cols = append(cols, n+" mean", "max")
		}
		unit := " (%)"
		if kind == "Memory consumption" {
			unit = " (MB)"
		}
		t := studykit.Table(kind+unit+", current release", cols...)
		for _, svc := range []string{Service, "generator-host"} { // the host: the whole machine
			row := []string{svc}
			for _, r := range all {
				m, _, err := r.Resources(studykit.Window{})
				x, ok := m[svc]
				if kind == "CPU utilization" {
					ok = err == nil && ok && x.HasCPU
					row = append(row, cell(ok, studykit.F1(x.CPUMean)), cell(ok, studykit.F1(x.CPUMax)))
				} else {
					ok = err == nil && ok && x.HasMem
					row = append(row, cell(ok, studykit.F1(x.MemMean)), cell(ok, studykit.F1(x.MemMax)))
				}
			}
			studykit.AddRow(t, row...)
		}
		rs.Blocks = append(rs.Blocks, t)
	}
	if m0, _, err0 := all[0].Resources(studykit.Window{}); err0 == nil {
		if m1, _, err1 := all[len(Levels)-1].Resources(studykit.Window{}); err1 == nil && m0[Service].HasCPU && m1[Service].HasCPU {
			rs.Blocks = append(rs.Blocks, studykit.Assess(fmt.Sprintf("CPU utilization of %s grows with the number of vUsers: %s %% at %d, %s %% at %d (mean).",
				Service, studykit.F1(m0[Service].CPUMean), Levels[0], studykit.F1(m1[Service].CPUMean), Levels[len(Levels)-1])))
		}
	}
	for i, r := range all {
		if f := r.ResourceChart(fmt.Sprintf("ref-cpu-%d", i+1), "CPU utilization ("+names[i]+")", false, []string{Service}); f != nil {
			rs.Blocks = append(rs.Blocks, f)
		}
		if f := r.ResourceChart(fmt.Sprintf("ref-mem-%d", i+1), "Memory consumption ("+names[i]+")", true, []string{Service}); f != nil {
			rs.Blocks = append(rs.Blocks, f)
		}
	}
	if pg {
		t = studykit.Table("Database connections (max), current release", append([]string{"Database"}, names...)...)
		row := []string{Database}
		for _, r := range all {
			v, ok, err := r.SeriesMax(Database, "connections_total")
			row = append(row, cell(ok && err == nil, studykit.F1(v)))
		}
		studykit.AddRow(t, row...)
		rs.Blocks = append(rs.Blocks, t)
		t = studykit.Table(fmt.Sprintf("Database load: top SQL (%d vUsers, current release)", Levels[len(Levels)-1]), "Statement", "Calls", "Total (ms)", "Mean (ms)")
		stmts, err := top.TopSQL(Database, 8)
		for _, s := range stmts {
			studykit.AddRow(t, s.Query, studykit.Int(s.Calls), studykit.F1(s.TotalMs), studykit.F2(s.MeanMs))
		}
		if err != nil || len(stmts) == 0 {
			rs.Blocks = append(rs.Blocks, studykit.Note("No statements were recorded (pg_stat_statements is needed in the database the DSN names)."))
		} else {
			rs.Blocks = append(rs.Blocks, t)
		}
	} else {
		rs.Blocks = append(rs.Blocks, studykit.Note("The data were in the embedded store; run with --postgres DSN for the database's connections and top SQL."))
	}

	errs := doc.Section{ID: "ref-errors", Title: "Errors"}
	codes := map[int]bool{}
	for _, r := range append(all, append(append([]*studykit.Run{}, prev...), soaks[1])...) {
		for c := range r.ErrorsByStatus() {
			codes[c] = true
		}
	}
	var cl []int
	for c := range codes {
		cl = append(cl, c)
	}
	sort.Ints(cl)
	cols = []string{"Test", "#Samples", "#Errors"}
	for _, c := range cl {
		cols = append(cols, statusName(c))
	}
	t = studykit.Table("Errors by test and HTTP status", cols...)
	for ri, rel := range releases {
		for i, r := range append(append([]*studykit.Run{}, levels[ri]...), soaks[ri]) {
			by := r.ErrorsByStatus()
			var n int64
			for _, v := range by {
				n += v
			}
			row := []string{fmt.Sprintf("#%d, %s", i+1, rel.name), studykit.Int(r.Data.Total.Count), studykit.Int(n)}
			for _, c := range cl {
				row = append(row, studykit.Int(by[c]))
			}
			studykit.AddRow(t, row...)
		}
	}
	errs.Blocks = append(errs.Blocks, t)
	{
		var n, samples int64
		for _, r := range append(append(append([]*studykit.Run{}, all...), prev...), soaks[1]) {
			for _, v := range r.ErrorsByStatus() {
				n += v
			}
			samples += r.Data.Total.Count
		}
		errs.Blocks = append(errs.Blocks, studykit.Assess(fmt.Sprintf("over all tests, %d of %d samples failed (%s).", n, samples, studykit.Pct(100*float64(n)/float64(max(samples, 1))))))
	}

	drift := doc.Section{ID: "ref-longevity", Title: "Longevity: drift over test #5"}
	t = studykit.Table("Response time and memory over the longevity test (first fifth against last fifth)", "Run", "Label", "First fifth avg (ms)", "Last fifth avg (ms)", "Delta, ms")
	for ri, rel := range releases {
		for _, l := range Transactions {
			a, b, ok := soaks[ri].Drift(l)
			studykit.AddRow(t, rel.name, l, cell(ok, studykit.F1(a)), cell(ok, studykit.F1(b)), cell(ok, signedF1(b-a)))
		}
	}
	drift.Blocks = append(drift.Blocks, t)
	for ri, rel := range releases {
		var ds []string
		for _, l := range Transactions {
			if a, b, ok := soaks[ri].Drift(l); ok {
				ds = append(ds, fmt.Sprintf("%s %s → %s ms", l, studykit.F1(a), studykit.F1(b)))
			}
		}
		if len(ds) > 0 {
			drift.Blocks = append(drift.Blocks, studykit.Assess(rel.name+", first fifth against last fifth: "+strings.Join(ds, ", ")+"."))
		}
	}
	t = studykit.Table("Memory of "+Service+" over the longevity test", "Run", "Mean (MB)", "Max (MB)")
	for ri, rel := range releases {
		m, _, err := soaks[ri].Resources(studykit.Window{})
		x, ok := m[Service]
		ok = err == nil && ok && x.HasMem
		studykit.AddRow(t, rel.name, cell(ok, studykit.F1(x.MemMean)), cell(ok, studykit.F1(x.MemMax)))
	}
	drift.Blocks = append(drift.Blocks, t, studykit.Note("plateau's addition: the reference described the drift in words (\"+200 ms after 5 hours\"); the run reports of the soaks have the full trend analysis."))
	return []doc.Section{runsSec, res, cmp, rs, errs, drift}
}

func statusName(c int) string {
	if c == 0 {
		return "no response"
	}
	return strconv.Itoa(c) + "/" + http.StatusText(c)
}

// signedF1 is a difference at the one decimal of the averages it is the
// difference of ("9.1 → 6.8 ms" is −2.3, not "-2" or "-2.30").
func signedF1(v float64) string {
	s := strconv.FormatFloat(math.Abs(v), 'f', 1, 64)
	switch {
	case s == "0.0":
		return "0"
	case v < 0:
		return "-" + s
	}
	return "+" + s
}
