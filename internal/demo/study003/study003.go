// Package study003 is `plateau demo 003`: reference study 003 (ServiceComb's
// company demo on Kubernetes) scaled down. A token is fetched in each
// user's setup (kept out of the measurements), then concurrency is raised
// step by step until throughput stops growing, under three log
// configurations of the manager service — synchronous (the reference's
// stdout logging), asynchronous and none — against the bundled manager,
// worker and beekeeper services. It runs examples/concurrency-sweep/plan.yaml
// as is, with the target, steps and monitors set on the command line.
package study003

import (
	"context"
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/demo/studykit"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/study"
)

// PlanYAML and IDsCSV are examples/concurrency-sweep's plan and data (a
// test keeps them equal).
var (
	//go:embed plan.yaml
	PlanYAML []byte
	//go:embed ids.csv
	IDsCSV []byte
)

// Configs are the log configurations compared, in the reference's order.
var Configs = []struct{ Log, Name string }{
	{sut.LogSync, "A: synchronous log"},
	{sut.LogAsync, "B: asynchronous log"},
	{sut.LogNone, "C: no log"},
}

// Labels are the three calls of the plan.
var Labels = []string{"QueryWorker", "QueryBeekeeperDrone", "QueryBeekeeperQueen"}

// ManagerWorkers is the manager's configured limit on calls served at
// once (sut.CompanyConfig.Workers' default): the knee the study names.
const ManagerWorkers = 8

// ManagerPool names the monitored target of the manager's slots.
const ManagerPool = "manager-slots"

// Services are the monitored processes.
var Services = []string{"manager", "worker", "beekeeper"}

// steps returns the sweep: concurrency levels and the step duration.
func steps(s studykit.Scale) string {
	users := studykit.Pick(s, []int{1, 2, 4, 8, 12, 16, 24}, []int{1, 2, 4, 8, 12, 16, 24, 32}, []int{1, 5, 10, 15, 20, 30, 50, 100, 200})
	d := studykit.Pick(s, 3*time.Second, 10*time.Second, 2*time.Minute)
	var parts []string
	for _, u := range users {
		parts = append(parts, fmt.Sprintf("{name: \"concurrency %d\", users: %d, duration: %s}", u, u, d))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Run runs the study and returns the study document's directory.
func Run(ctx context.Context, env *studykit.Env) (string, error) {
	planDir := filepath.Join(env.Dir, "plan")
	plan, err := studykit.WriteFile(planDir, "plan.yaml", PlanYAML)
	if err != nil {
		return "", err
	}
	if _, err := studykit.WriteFile(planDir, "ids.csv", IDsCSV); err != nil {
		return "", err
	}
	logs, err := env.LogDir()
	if err != nil {
		return "", err
	}
	sc := searchScaleOf(env.Scale)
	var runs, searches []*studykit.Run
	for i, c := range Configs {
		r, sr, err := runConfig(ctx, env, plan, logs, c.Log, c.Name, i)
		if err != nil {
			return "", err
		}
		runs, searches = append(runs, r), append(searches, sr)
	}
	out, _, err := env.Write(studykit.Context{
		Title:       "Reference 003 (demo): company manager concurrency sweep under three log configurations",
		Description: "the bundled company services (manager → worker, manager → beekeeper → worker) answer three queries; the manager authenticates every call with the token fetched in each user's setup and logs it",
		System: []study.KV{{Name: "manager", Value: fmt.Sprintf("plateau demo serve-study manager (%d concurrent calls, log configuration A/B/C)", ManagerWorkers)},
			{Name: "worker", Value: "plateau demo serve-study worker (8 ms per term)"},
			{Name: "beekeeper", Value: "plateau demo serve-study beekeeper (asks the worker)"}},
		Environment: []study.KV{{Name: "hosts", Value: "one machine, loopback; generator and services share its CPUs"},
			{Name: "log A", Value: "synchronous: each line written before the answer, one writer at a time (2 ms a line)"},
			{Name: "log B", Value: "asynchronous: lines queued in memory, one background writer"},
			{Name: "log C", Value: "none"}},
		Method: fmt.Sprintf("log in once per user in the setup (not measured), then raise concurrency step by step until throughput gains less than 5 %%; the same sweep under each log configuration, services restarted in between. Each configuration's capacity is then searched (plateau capacity) on the same services: probes of %s after a %s warm-up, from %d users upward and then bisecting to %s, at most %d probes",
			sc.probe, sc.warmup, sc.start, sc.resolution, sc.maxProbes),
		Hypothesis: "the manager is the bottleneck and synchronous logging lowers its capacity",
		Questions: []study.Question{
			{Kind: study.CapacityQ, Text: "Where is the knee of each log configuration, and what limits it?"},
			{Kind: study.Configurations, Text: "How do the log configurations compare by knee and peak throughput?"},
		},
		Limits: []study.Limit{{Name: "manager calls at once", Value: ManagerWorkers}},
	}, append(runs, searches...), func(s *study.Study) []doc.Section { return sections(runs, s) })
	return out, err
}

// searchScale bounds the capacity search run per configuration (the
// demo runs in tests, so its probes stay short).
type searchScale struct {
	start, max              int
	warmup, probe, cooldown time.Duration
	resolution              string
	maxProbes               int
}

func searchScaleOf(s studykit.Scale) searchScale {
	return studykit.Pick(s,
		searchScale{2, 32, time.Second, 3 * time.Second, 500 * time.Millisecond, "25%", 6},
		searchScale{2, 64, 2 * time.Second, 5 * time.Second, time.Second, "10%", 6},
		searchScale{5, 400, 30 * time.Second, 2 * time.Minute, 10 * time.Second, "5%", 12})
}

// searchLoad is the --set value of the manager's load that runs a
// capacity search over its users within sc's bounds.
func searchLoad(sc searchScale) string {
	return fmt.Sprintf("{users: %d, duration: %s, search: {start: %d, max: %d, resolution: %q, warmup: %s, probe: %s, cooldown: %s, max_probes: %d}}",
		sc.start, sc.probe, sc.start, sc.max, sc.resolution, sc.warmup, sc.probe, sc.cooldown, sc.maxProbes)
}

// runConfig runs the sweep and then the capacity search under one log
// configuration, on the same services.
func runConfig(ctx context.Context, env *studykit.Env, plan, logs, logCfg, name string, i int) (*studykit.Run, *studykit.Run, error) {
	svc := env.NewServices()
	defer svc.Stop()
	w, err := svc.Start(ctx, "worker", "worker", "--access-log", filepath.Join(logs, logCfg+"-worker-access.log"))
	if err != nil {
		return nil, nil, err
	}
	b, err := svc.Start(ctx, "beekeeper", "beekeeper", "--worker", studykit.URL(w), "--access-log", filepath.Join(logs, logCfg+"-beekeeper-access.log"))
	if err != nil {
		return nil, nil, err
	}
	m, err := svc.Start(ctx, "manager", "manager", "--worker", studykit.URL(w), "--beekeeper", studykit.URL(b), "--log", logCfg, "--workers", strconv.Itoa(ManagerWorkers),
		"--log-file", filepath.Join(logs, logCfg+"-manager.log"), "--access-log", filepath.Join(logs, logCfg+"-manager-access.log"))
	if err != nil {
		return nil, nil, err
	}
	role := study.Configuration
	if i == 0 {
		role = study.Baseline
	}
	sets := []string{"target=" + studykit.URL(m), "workloads.manager.load.steps=" + steps(env.Scale), "monitor={interval: 1s}"}
	// The manager's slots, as it counts them (sut.CompanyMetricsPath): the
	// capacity analysis judges the calls in progress against the 8 slots,
	// so the limit is named from the server's count, wherever a loaded
	// machine puts the throughput curve's knee.
	monitors := append(svc.Monitors(), "prometheus:name="+ManagerPool+",url="+studykit.URL(m)+sut.CompanyMetricsPath)
	r, err := env.Do(ctx, plan, "log-"+logCfg, role, name, sets, monitors)
	if err != nil {
		return nil, nil, err
	}
	r.Factors = study.Factors{Config: name}
	sets = []string{"target=" + studykit.URL(m), "workloads.manager.load=" + searchLoad(searchScaleOf(env.Scale)), "monitor={interval: 1s}"}
	sr, err := env.Do(ctx, plan, "search-"+logCfg, study.Configuration, name+", capacity search", sets, monitors)
	if err != nil {
		return nil, nil, err
	}
	sr.Factors = study.Factors{Config: name}
	return r, sr, nil
}

// sections are reference 003's figures as tables, in its order: the
// sweep (fig. 2), response time per service (fig. 3), CPU per service
// (fig. 4), the log configurations side by side, memory per log
// configuration (fig. 5) and per service (fig. 6). The log configurations'
// table gives each one's peak in its sweep beside its capacity search's
// (the study's answers quote the search's), so the two peaks a reader
// meets are told apart.
func sections(runs []*studykit.Run, s *study.Study) []doc.Section {
	base := runs[0]
	perf := doc.Section{ID: "ref-sweep", Title: "Test results"}
	t := studykit.Table("Performance among various concurrency ("+base.Name+")", "Concurrency", "Throughput (req/s)", "Average response time (ms)", "95th pct (ms)", "Errors")
	for i, p := range base.Phases() {
		if st, ok := base.PhaseTotal(i); ok {
			studykit.AddRow(t, strconv.Itoa(p.Users), studykit.F1(st.ThroughputRPS), studykit.F1(st.MeanMs), studykit.F1(st.P95Ms), studykit.Int(st.Errors))
		}
	}
	perf.Blocks = append(perf.Blocks, t)
	var xs, tput, avg []float64
	for i, p := range base.Phases() {
		if st, ok := base.PhaseTotal(i); ok {
			xs, tput, avg = append(xs, float64(p.Users)), append(tput, st.ThroughputRPS), append(avg, st.MeanMs)
		}
	}
	if len(xs) > 0 {
		perf.Blocks = append(perf.Blocks, studykit.LoadChart("ref-sweep", "Throughput and average response time per step ("+base.Name+")", "Concurrency",
			"Throughput (req/s)", "req/s", xs, []studykit.Line{{Name: "throughput", Y: tput}, {Name: "average response time", Y: avg, Right: true}}, "Average response time (ms)", "ms"))
		peak := 0
		for i := range tput {
			if tput[i] > tput[peak] {
				peak = i
			}
		}
		a := fmt.Sprintf("throughput grew from %s req/s at concurrency %d to its peak of %s req/s at %d", studykit.F1(tput[0]), int(xs[0]), studykit.F1(tput[peak]), int(xs[peak]))
		if peak < len(xs)-1 {
			a += fmt.Sprintf("; beyond it the average response time rose from %s ms to %s ms at %d", studykit.F1(avg[peak]), studykit.F1(avg[len(avg)-1]), int(xs[len(xs)-1]))
		}
		perf.Blocks = append(perf.Blocks, studykit.Assess(a+"."))
	}
	cols := append([]string{"Concurrency"}, Labels...)
	t = studykit.Table("Average response time among different services (ms, "+base.Name+")", cols...)
	for i, p := range base.Phases() {
		row := []string{strconv.Itoa(p.Users)}
		for _, l := range Labels {
			st, ok := base.PhaseLabel(i, l)
			row = append(row, cell(ok, studykit.F1(st.MeanMs)))
		}
		studykit.AddRow(t, row...)
	}
	perf.Blocks = append(perf.Blocks, t)
	cols = []string{"Concurrency"}
	for _, s := range Services {
		cols = append(cols, s+" CPU %")
	}
	t = studykit.Table("CPU load on various concurrency ("+base.Name+")", cols...)
	for _, p := range base.Phases() {
		res, _, err := base.Resources(studykit.Window{From: p.Start, To: p.End})
		row := []string{strconv.Itoa(p.Users)}
		for _, s := range Services {
			r, ok := res[s]
			row = append(row, cell(err == nil && ok && r.HasCPU, studykit.F1(r.CPUMean)))
		}
		studykit.AddRow(t, row...)
	}
	perf.Blocks = append(perf.Blocks, t, studykit.Note("CPU is each process's mean over the step (100 % = one core), sampled every second."))
	var cpuLines []studykit.Line
	var cx []float64
	for _, p := range base.Phases() {
		cx = append(cx, float64(p.Users))
	}
	busiest, busiestPct, at := "", 0.0, 0
	for _, svc := range Services {
		l := studykit.Line{Name: svc}
		for _, p := range base.Phases() {
			res, _, err := base.Resources(studykit.Window{From: p.Start, To: p.End})
			v := 0.0
			if r, ok := res[svc]; err == nil && ok && r.HasCPU {
				v = r.CPUMean
			}
			l.Y = append(l.Y, v)
			if v > busiestPct {
				busiest, busiestPct, at = svc, v, p.Users
			}
		}
		cpuLines = append(cpuLines, l)
	}
	if len(cx) > 0 {
		perf.Blocks = append(perf.Blocks, studykit.LoadChart("ref-cpu", "CPU per service per step ("+base.Name+")", "Concurrency", "CPU (%)", "%", cx, cpuLines, "", ""))
	}
	if busiest != "" {
		perf.Blocks = append(perf.Blocks, studykit.Assess(fmt.Sprintf("%s used the most CPU, %s %% of one core at concurrency %d; a service far below one core at the knee is not what limits it.", busiest, studykit.F1(busiestPct), at)))
	}

	logsec := doc.Section{ID: "ref-logs", Title: "Log settings"}
	type peak struct {
		name string
		rps  float64
		at   int
	}
	var peaks []peak
	t = studykit.Table("Different log settings: each one's stepped sweep, and its capacity search", "Log setting", "Peak throughput in the sweep (req/s)", "At concurrency", "Average response time there (ms)", "Highest concurrency run",
		"Capacity search's peak (req/s)", "At users")
	for _, r := range runs {
		best, at, mean := 0.0, 0, 0.0
		for i, p := range r.Phases() {
			if st, ok := r.PhaseTotal(i); ok && st.ThroughputRPS > best {
				best, at, mean = st.ThroughputRPS, p.Users, st.MeanMs
			}
		}
		ph := r.Phases()
		top := 0
		if len(ph) > 0 {
			top = ph[len(ph)-1].Users
		}
		sp, sat := "—", "—"
		if row := searchRow(s, r.Name); row != nil && row.PeakRPS > 0 {
			sp, sat = studykit.F1(row.PeakRPS), strconv.FormatFloat(row.PeakLoad, 'f', -1, 64)
		}
		studykit.AddRow(t, r.Name, studykit.F1(best), strconv.Itoa(at), studykit.F1(mean), strconv.Itoa(top), sp, sat)
		peaks = append(peaks, peak{r.Name, best, at})
	}
	logsec.Blocks = append(logsec.Blocks, t)
	if len(peaks) > 0 {
		hi, lo := peaks[0], peaks[0]
		for _, p := range peaks {
			if p.rps > hi.rps {
				hi = p
			}
			if p.rps < lo.rps {
				lo = p
			}
		}
		a := fmt.Sprintf("in the stepped sweeps, %s reached the highest peak, %s req/s at concurrency %d", hi.name, studykit.F1(hi.rps), hi.at)
		if lo.rps > 0 && hi.name != lo.name {
			a += fmt.Sprintf(", %s %% above %s (%s req/s)", studykit.F1(100*(hi.rps-lo.rps)/lo.rps), lo.name, studykit.F1(lo.rps))
		}
		logsec.Blocks = append(logsec.Blocks, studykit.Assess(a+"."), studykit.Note("The answers quote each capacity search's peak: its probes measure one load each after a warm-up, so it differs from the peak of the sweep's steps."))
	}
	t = studykit.Table("Memory usage of different log settings (manager)", "Log setting", "Memory mean (MB)", "Memory max (MB)", "CPU mean %")
	for _, r := range runs {
		res, _, err := r.Resources(studykit.Window{})
		m, ok := res["manager"]
		ok = err == nil && ok
		studykit.AddRow(t, r.Name, cell(ok && m.HasMem, studykit.F1(m.MemMean)), cell(ok && m.HasMem, studykit.F1(m.MemMax)), cell(ok && m.HasCPU, studykit.F1(m.CPUMean)))
	}
	logsec.Blocks = append(logsec.Blocks, t)
	t = studykit.Table("Memory usage of different services ("+base.Name+")", "Service", "Memory mean (MB)", "Memory max (MB)")
	res, _, err := base.Resources(studykit.Window{})
	for _, s := range Services {
		m, ok := res[s]
		ok = err == nil && ok && m.HasMem
		studykit.AddRow(t, s, cell(ok, studykit.F1(m.MemMean)), cell(ok, studykit.F1(m.MemMax)))
	}
	logsec.Blocks = append(logsec.Blocks, t)
	for i, r := range runs {
		if f := r.ResourceChart(fmt.Sprintf("ref-mem-%d", i+1), "Memory per service ("+r.Name+")", true, Services); f != nil {
			logsec.Blocks = append(logsec.Blocks, f)
		}
	}
	return []doc.Section{perf, logsec}
}

// cell is v, or "—" when the figure was not measured.
func cell(ok bool, v string) string {
	if !ok {
		return "—"
	}
	return v
}

// searchRow is the study's capacity row of a log configuration's capacity
// search ("manager, A: synchronous log"); nil without one.
func searchRow(s *study.Study, config string) *study.CapacityRow {
	if s == nil {
		return nil
	}
	for _, a := range s.Answers {
		for i := range a.Capacity {
			if r := &a.Capacity[i]; r.Search && strings.HasSuffix(r.Workload, ", "+config) {
				return r
			}
		}
	}
	return nil
}
