// Package study004 is `plateau demo 004`: reference study 004 (FOLIO with
// CPU=0) scaled down. examples/concurrent-workloads/plan.yaml runs as is
// against the bundled circulation and data-import services: 30 users check
// items out and in for the whole run while a data import writes chunks of
// records in the middle of it; the test is repeated four times, the
// services restarted and the data prepared before each. The study gives
// each test's check-in/check-out figures and import duration and each
// service's CPU before, during and after the import.
package study004

import (
	"context"
	_ "embed"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/demo"
	"github.com/plateau-perf/plateau/internal/demo/studykit"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/study"
)

// PlanYAML is examples/concurrent-workloads/plan.yaml (a test keeps them
// equal).
//
//go:embed plan.yaml
var PlanYAML []byte

// Repeats is how often the test runs.
const Repeats = 4

// Services are the monitored processes; Database the postgres monitor.
var Services = []string{"mod-circulation", "mod-data-import"}

// Database is the postgres monitor's target name.
const Database = "database"

// Workloads of the plan: the disturbed one and the one that disturbs it.
const (
	Circulation = "circulation"
	DataImport  = "data-import"
)

// Labels of the plan.
const (
	CheckIn  = "check-in"
	CheckOut = "check-out"
	Import   = "import chunk"
)

type scale struct {
	users                int
	ramp, dur            time.Duration
	think                string
	importAfter, impDur  time.Duration
	pace                 time.Duration
	records, items, work int
}

func scaleOf(s studykit.Scale) scale {
	return scale{
		users:       30,
		ramp:        studykit.Pick(s, 2*time.Second, 5*time.Second, 5*time.Minute),
		dur:         studykit.Pick(s, 12*time.Second, 40*time.Second, 50*time.Minute),
		think:       studykit.Pick(s, "300ms", "1s", "3s"),
		importAfter: studykit.Pick(s, 4*time.Second, 12*time.Second, 10*time.Minute),
		impDur:      studykit.Pick(s, 5*time.Second, 15*time.Second, 30*time.Minute),
		pace:        studykit.Pick(s, 200*time.Millisecond, 500*time.Millisecond, time.Second),
		records:     studykit.Pick(s, 500, 1000, 1000),
		items:       studykit.Pick(s, 1000, 2000, 20000),
		// Hashing rounds per record. --short's chunk costs what the
		// full scale's does (500 × 400 ≈ 1,000 × 200): 500,000 rounds
		// every 200 ms overran its pace on a loaded 2-core machine, which
		// pacing now reports (missed slots: the run is invalid).
		work: studykit.Pick(s, 400, 1000, 200),
	}
}

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
	var runs []*studykit.Run
	for i := 1; i <= Repeats; i++ {
		r, err := runOnce(ctx, env, sc, plan, logs, i)
		if err != nil {
			return "", err
		}
		runs = append(runs, r)
	}
	store := "embedded SQLite (circulation.db)"
	if env.Postgres != "" {
		store = "PostgreSQL (--postgres)"
	}
	out, _, err := env.Write(studykit.Context{
		Title:       "Reference 004 (demo): check-in / check-out with a concurrent data import, four repeats",
		Description: "do two concurrent workloads starve each other? check-in/check-out runs throughout while a data import writes records in the middle of the run; CPU per service before, during and after the import shows how the machine shares its CPU",
		System: []study.KV{{Name: "mod-circulation", Value: "plateau demo serve-study circulation (routes /data-import to the module)"},
			{Name: "mod-data-import", Value: fmt.Sprintf("plateau demo serve-study data-import (%d hashing rounds per record)", sc.work)},
			{Name: "database", Value: store}},
		Environment: []study.KV{{Name: "hosts", Value: "one machine, loopback; generator and services share its CPUs, no CPU limit per service (the reference's CPU=0)"},
			{Name: "data", Value: fmt.Sprintf("%d items and patrons; the earlier tests' loans removed and items made available before each test", sc.items)}},
		Method: fmt.Sprintf("%d users check out and in (think %s) for %s after a %s ramp-up; after %s a data import posts one chunk of %d records every %s for %s; the test runs %d times, services restarted in between",
			sc.users, sc.think, sc.dur, sc.ramp, sc.importAfter, sc.records, sc.pace, sc.impDur, Repeats),
		Hypothesis: "the services share the CPU fairly: check-in/check-out keeps working while the import runs, and no request fails for lack of CPU",
		Questions: []study.Question{
			{Kind: study.Interference, Text: "Does the data import starve check-in/check-out of CPU (CPU=0: no limit per service)?", Workload: Circulation, Other: DataImport},
			{Kind: study.Repeatability, Text: "Do the four repeats agree?", MaxCVPct: 15},
		},
	}, runs, func(s *study.Study) []doc.Section { return sections(runs, env.Postgres != "", s) })
	return out, err
}

func runOnce(ctx context.Context, env *studykit.Env, sc scale, plan, logs string, i int) (*studykit.Run, error) {
	svc := env.NewServices()
	defer svc.Stop()
	tag := "test" + strconv.Itoa(i)
	di, err := svc.Start(ctx, Services[1], "data-import", "--work", strconv.Itoa(sc.work), "--access-log", filepath.Join(logs, tag+"-data-import-access.log"))
	if err != nil {
		return nil, err
	}
	args := []string{"--items", strconv.Itoa(sc.items), "--patrons", strconv.Itoa(sc.items), "--data-import", studykit.URL(di),
		"--access-log", filepath.Join(logs, tag+"-circulation-access.log")}
	if env.Postgres != "" {
		args = append(args, "--dsn", env.Postgres)
	} else {
		args = append(args, "--db", filepath.Join(env.Dir, "circulation.db"))
	}
	c, err := svc.Start(ctx, Services[0], "circulation", args...)
	if err != nil {
		return nil, err
	}
	if err := prepare(ctx, c); err != nil {
		return nil, err
	}
	mons := svc.Monitors()
	if env.Postgres != "" {
		mons = append(mons, "postgres:name="+Database+",dsn="+env.Postgres)
	}
	sets := []string{"target=" + studykit.URL(c), "monitor={interval: 1s}",
		fmt.Sprintf("workloads.circulation.load={users: %d, ramp_up: %s, duration: %s}", sc.users, sc.ramp, sc.dur),
		"workloads.circulation.scenario.1.think=" + sc.think, "workloads.circulation.scenario.3.think=" + sc.think,
		fmt.Sprintf("workloads.data-import.load={users: 1, pace: %s, duration: %s, start_after: %s}", sc.pace, sc.impDur, sc.importAfter),
		fmt.Sprintf("workloads.data-import.scenario.0.request.json={records: %d, job: \"${__uuid}\"}", sc.records)}
	role := study.Repeat
	if i == 1 {
		role = study.Baseline
	}
	r, err := env.Do(ctx, plan, tag, role, "test №"+strconv.Itoa(i), sets, mons)
	if r != nil {
		r.Factors = study.Factors{Repeat: strconv.Itoa(i)}
	}
	return r, err
}

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

func cell(ok bool, v string) string {
	if !ok {
		return "—"
	}
	return v
}

// or is a table cell, "—" when empty.
func or(v string) string {
	if v == "" {
		return "—"
	}
	return v
}

// clock formats a duration as h:mm:ss, as the reference's import durations.
func clock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
}

// interferenceOf is the study's interference answer for run name: its
// windows and each service's CPU in them; nil without one.
func interferenceOf(s *study.Study, name string) *study.InterferenceRun {
	if s == nil {
		return nil
	}
	for _, a := range s.Answers {
		for i := range a.Interference {
			if a.Interference[i].Run == name {
				return &a.Interference[i]
			}
		}
	}
	return nil
}

// sections are reference 004's tables in its order; each test's CPU
// before, during and after the import is the study's interference
// answer's (its windows, its figures), so the table and the answer agree.
func sections(runs []*studykit.Run, pg bool, s *study.Study) []doc.Section {
	tr := doc.Section{ID: "ref-test-runs", Title: "Test Runs"}
	t := studykit.Table("Test runs", "Test #", "Description", "Status")
	for i, r := range runs {
		status := "Completed"
		if r.Data.Info.Status != "" && r.Data.Info.Status != "completed" {
			status = string(r.Data.Info.Status)
		}
		desc := "Check-in/check-out with 30 users and a concurrent data import"
		if i > 0 {
			desc = "Repeat of test 1 (services restarted, data prepared)"
		}
		studykit.AddRow(t, "Test "+strconv.Itoa(i+1), desc, status)
	}
	tr.Blocks = append(tr.Blocks, t)
	{
		completed := 0
		for _, r := range runs {
			if r.Data.Info.Status == "" || r.Data.Info.Status == "completed" {
				completed++
			}
		}
		tr.Blocks = append(tr.Blocks, studykit.Assess(fmt.Sprintf("%d of %d tests completed; the validity banner names any whose load was not held.", completed, len(runs))))
	}

	res := doc.Section{ID: "ref-test-results", Title: "Test Results"}
	cols := []string{"Requests"}
	for i := range runs {
		n := strconv.Itoa(i + 1)
		cols = append(cols, "Test №"+n+" Error %", "Average (ms)", "95th pct (ms)")
	}
	t = studykit.Table("Response time for check-in/check-out and durations of the data import", cols...)
	for _, l := range []string{CheckIn, CheckOut} {
		row := []string{l}
		for _, r := range runs {
			st, ok := r.Label(l)
			row = append(row, cell(ok, studykit.Pct(st.ErrorPct)), cell(ok, studykit.Ms(st.MeanMs)), cell(ok, studykit.Ms(st.P95Ms)))
		}
		studykit.AddRow(t, row...)
	}
	row := []string{"Data import"}
	var done []string
	for i, r := range runs {
		st, ok := r.Label(Import)
		w, wok := r.LabelWindow(Import)
		recs := "—"
		if ok {
			recs = studykit.Pct(st.ErrorPct) + " of chunks failed"
		}
		planned, _ := r.Planned(DataImport)
		work := cell(wok, clock(w.To.Sub(w.From)))
		if planned > 0 {
			work = fmt.Sprintf("%d of %d chunks in %s", st.Samples-st.Errors, planned, work)
			done = append(done, fmt.Sprintf("test №%d %d of %d", i+1, st.Samples-st.Errors, planned))
		}
		row = append(row, recs, "work done", work)
	}
	studykit.AddRow(t, row...)
	res.Blocks = append(res.Blocks, t, studykit.Note("The data import is time-boxed and paced: the work done is the chunks imported against the chunks its pace planned in its window, not the window's length."))
	if len(done) > 0 {
		res.Blocks = append(res.Blocks, studykit.Assess("the data import completed "+strings.Join(done, ", ")+" planned chunks."))
	}

	var out = []doc.Section{tr, res}
	for i, r := range runs {
		sec := doc.Section{ID: "ref-test-" + strconv.Itoa(i+1), Title: "Test №" + strconv.Itoa(i+1)}
		ir := interferenceOf(s, r.Name)
		if _, calls := r.LabelWindow(Import); ir == nil || !calls {
			sec.Blocks = append(sec.Blocks, studykit.Note("The data import recorded no calls in this test."))
			out = append(out, sec)
			continue
		}
		// The services' CPU is the answer's; the generator's host (no
		// service, so not in the answer) is read over the same windows.
		cpu := map[string][3]string{}
		for _, c := range ir.CPU {
			var v [3]string
			for j := range v {
				v[j] = cell(c.Has[j], studykit.F1(c.Pct[j]))
			}
			cpu[c.Target] = v
		}
		var gen [3]string
		for j, w := range ir.Windows {
			res, _, _ := r.Resources(studykit.Window{From: w.From, To: w.To})
			x, ok := res["generator-host"]
			gen[j] = cell(ok && x.HasCPU, studykit.F1(x.CPUMean))
		}
		cpu["generator-host"] = gen
		t := studykit.Table("Service CPU utilization (%, mean): before, during and after the data import", "Service", "Before import", "During import", "After import")
		for _, svc := range append(append([]string{}, Services...), "generator-host") {
			v, ok := cpu[svc]
			if !ok {
				v = [3]string{"—", "—", "—"}
			}
			studykit.AddRow(t, svc, v[0], v[1], v[2])
		}
		sec.Blocks = append(sec.Blocks, t)
		if imp, circ := cpu[Services[1]], cpu[Services[0]]; imp[1] != "" && imp[1] != "—" {
			sec.Blocks = append(sec.Blocks, studykit.Assess(fmt.Sprintf("here we can see that %s used %s %% CPU during the import (%s before, %s after) while %s used %s %% before, %s %% during and %s %% after.",
				Services[1], imp[1], imp[0], imp[2], Services[0], or(circ[0]), or(circ[1]), or(circ[2]))))
		}
		if f := r.ResourceChart(fmt.Sprintf("ref-cpu-%d", i+1), "Service CPU utilization (test №"+strconv.Itoa(i+1)+")", false, Services); f != nil {
			sec.Blocks = append(sec.Blocks, f)
		}
		all, _, err := r.Resources(studykit.Window{})
		t = studykit.Table("Service memory utilization (MB)", "Service", "Mean", "Max")
		for _, s := range Services {
			x, ok := all[s]
			ok = err == nil && ok && x.HasMem
			studykit.AddRow(t, s, cell(ok, studykit.F1(x.MemMean)), cell(ok, studykit.F1(x.MemMax)))
		}
		sec.Blocks = append(sec.Blocks, t)
		if f := r.ResourceChart(fmt.Sprintf("ref-mem-%d", i+1), "Service memory utilization (test №"+strconv.Itoa(i+1)+")", true, Services); f != nil {
			sec.Blocks = append(sec.Blocks, f)
		}
		if pg {
			v, ok, err := r.SeriesMax(Database, "connections_total")
			sec.Blocks = append(sec.Blocks, studykit.Para(fmt.Sprintf("DB connections: max %s.", cell(ok && err == nil, studykit.F1(v)))))
			stmts, err := r.TopSQL(Database, 5)
			if err == nil && len(stmts) > 0 {
				t = studykit.Table("Top SQL-queries", "Statement", "Calls", "Total (ms)", "Mean (ms)")
				for _, s := range stmts {
					studykit.AddRow(t, s.Query, studykit.Int(s.Calls), studykit.F1(s.TotalMs), studykit.F2(s.MeanMs))
				}
				sec.Blocks = append(sec.Blocks, t)
			}
		}
		out = append(out, sec)
	}
	return out
}
