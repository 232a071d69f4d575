// Package reporttest writes synthetic run directories for the report's
// tests, golden files, screenshots and benchmarks. The runs are made through
// the real writers (rundir.Create, rundir.RecordOf and the monitor CSV and
// events format), from a seeded generator, so the same options always give
// byte-identical files.
package reporttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Start is the fixed start time of synthetic runs.
var Start = time.Date(2025, 5, 13, 11, 10, 0, 0, time.UTC)

// Step is one load step of a synthetic stepped run.
type Step struct {
	Users   int
	Seconds int
	RampUpS int
}

// Options shapes a synthetic run. The zero value is a small stepped study.
type Options struct {
	Name string
	// Steps default to three 60-second steps of 7, 10 and 14 users.
	Steps []Step
	// Capacity is the transaction rate (per second) beyond which
	// latency rises with queueing; default 10.5. Every user starts one
	// transaction a second.
	Capacity float64
	// SLA expressions; default avg < 200 ms, p95 < 400 ms, error rate < 1 %.
	SLA []string
	// Secret, when set, is planted as the Authorization header value in the
	// plan, as a secret variable, inside a failure message and in a URL
	// query parameter of a label; no report file may contain it.
	Secret string
	// Killed leaves run.json "running" with the last phase open and the
	// intervals file ending in a torn line.
	Killed bool
	// Monitor writes host, JVM and database series for the run.
	Monitor bool
	// Seed varies the noise; runs with the same seed are identical.
	Seed uint64
	// SlowerPct makes every response time this much slower (for baselines).
	SlowerPct float64
	// AllErrors makes every request fail with HTTP 500.
	AllErrors bool
	// Concurrent adds a second workload, "data-import", with one user
	// running one phase from the second minute to the end of the second
	// step, alongside the steps (reference 004's two workloads).
	Concurrent bool
	// ImportPerSecond is how many calls Concurrent's data import makes a
	// second (default 1): runs alike in every call's time that differ in
	// how many slow import calls they hold.
	ImportPerSecond int
	// NetOfDownstream adds a derived label per request, as an access-log
	// import joined with its external calls writes ("… (net of
	// downstream)"), carrying the same failures as its request.
	NetOfDownstream bool
	// SaturateCPU makes the hosts' CPU reach its ceiling at the capacity
	// (the component that limits the service).
	SaturateCPU bool
	// SaturateConnections records the database's max_connections (36), which
	// its connections (12 + 20 × load) reach at the capacity.
	SaturateConnections bool
	// GeneratorCPU makes the generator's own CPU (run.json's
	// generator_cpu_pct per phase) rise with the load to this percentage
	// at the capacity.
	GeneratorCPU float64
	// IdleNetwork makes the hosts' network series read zero (a monitor
	// watching an interface the traffic did not use).
	IdleNetwork bool
	// StarvedGenerator adds the load generator's own host ("loadgen", role
	// generator) at a moderate CPU average, while run.json says its threads
	// waited for a CPU in every phase (a machine shared with other work).
	StarvedGenerator bool
	// LarLabel replaces the first request's label (e.g. an 80-character
	// one, to test legends).
	LarLabel string
}

func (o *Options) defaults() {
	if o.Name == "" {
		o.Name = "lar-cave read allergies"
	}
	if len(o.Steps) == 0 {
		o.Steps = []Step{{Users: 7, Seconds: 60, RampUpS: 10}, {Users: 10, Seconds: 60, RampUpS: 5}, {Users: 14, Seconds: 60, RampUpS: 5}}
	}
	if o.Capacity == 0 {
		o.Capacity = 10.5
	}
	if o.SLA == nil {
		o.SLA = []string{"avg(response_time) < 200ms", "p95(response_time) < 400ms", "error_rate < 1%"}
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// labels of the synthetic run.
const (
	TxLabel   = "Read allergies"
	LarLabel  = "GET /lar/allergies"
	CaveLabel = "POST /cave/fhir-search"
)

// Write creates a synthetic run directory at dir.
func Write(dir string, o Options) error {
	o.defaults()
	rng := rand.New(rand.NewPCG(o.Seed, 42))
	info := &rundir.Info{Tool: "plateau", Version: "0.1.0-test", Name: o.Name, PlanFile: "lar.yaml",
		Target: "http://127.0.0.1:8080", Command: []string{"plateau", "run", "lar.yaml", "-o", "runs/lar", "--set", "users=7"},
		Host:  rundir.Host{Hostname: "loadgen-01", OS: "linux", Kernel: "6.1.0", CPUs: 8, CPUModel: "Intel Xeon E5-2690", MemBytes: 16 << 30, GoVersion: "go1.26"},
		Start: Start, Status: rundir.StatusCompleted, SLA: o.SLA,
		Workloads: []rundir.WorkloadInfo{{Name: "read", Model: "steps", Users: o.Steps[0].Users, Think: "1s pacing",
			Shape: stepsShape(o.Steps)}}}
	if o.Secret != "" {
		info.Secrets = []string{"token"}
	}
	t := Start
	for i, s := range o.Steps {
		end := t.Add(time.Duration(s.Seconds) * time.Second)
		e := end
		info.Phases = append(info.Phases, rundir.PhaseInfo{Name: fmt.Sprintf("step %d", i+1), Workload: "read", Start: t, End: &e,
			Users: s.Users, RampUpS: float64(s.RampUpS), CPUPct: round2(o.GeneratorCPU * math.Min(1.1, float64(s.Users)/o.Capacity))})
		if o.StarvedGenerator {
			ph := &info.Phases[len(info.Phases)-1]
			ph.RunQueuePct, ph.RunQueueMs = 45, 300*float64(s.Seconds)
		}
		t = end
	}
	runEnd := t
	// stepPhase maps a step to its phase index in run.json (phases are kept
	// in start order, so a concurrent phase shifts the later steps).
	stepPhase := make([]int, len(o.Steps))
	for i := range stepPhase {
		stepPhase[i] = i
	}
	var impFrom, impTo time.Time
	impPhase := -1
	if o.Concurrent {
		info.Workloads = append(info.Workloads, rundir.WorkloadInfo{Name: "data-import", Model: "closed", Users: 1, Shape: "1 user"})
		impFrom = Start.Add(time.Minute)
		impTo = impFrom.Add(time.Duration(o.Steps[min(1, len(o.Steps)-1)].Seconds) * time.Second)
		e := impTo
		at := 0
		for at < len(info.Phases) && !info.Phases[at].Start.After(impFrom) {
			at++
		}
		info.Phases = append(info.Phases[:at], append([]rundir.PhaseInfo{{Name: "data-import", Workload: "data-import", Start: impFrom, End: &e, Users: 1}}, info.Phases[at:]...)...)
		impPhase = at
		for i := range stepPhase {
			if stepPhase[i] >= at {
				stepPhase[i]++
			}
		}
	}
	if !o.Killed {
		info.End = &runEnd
	}
	if o.Killed {
		info.Status = rundir.StatusRunning
		info.Phases[len(info.Phases)-1].End = nil
	}
	w, err := rundir.Create(dir, info, []byte(planYAML(o)), false)
	if err != nil {
		return err
	}
	lastSec := len(o.Steps)
	secondsTotal := 0
	for _, s := range o.Steps {
		secondsTotal += s.Seconds
	}
	if o.Killed {
		// The kill came two thirds into the last step.
		secondsTotal -= o.Steps[lastSec-1].Seconds / 3
	}
	errMsg := "503 Service Unavailable from MSB <script>alert(1)</script>"
	larLabel := LarLabel
	if o.LarLabel != "" {
		larLabel = o.LarLabel
	}
	if o.Secret != "" {
		errMsg = "upstream rejected Authorization: Bearer " + o.Secret
		larLabel = LarLabel + "?token=" + o.Secret
	}
	sec, phase, inPhase := 0, 0, 0
	for sec < secondsTotal {
		st := o.Steps[phase]
		ts := Start.Add(time.Duration(sec) * time.Second)
		users := st.Users
		if inPhase < st.RampUpS {
			prev := 0
			if phase > 0 {
				prev = o.Steps[phase-1].Users
			}
			users = prev + (st.Users-prev)*(inPhase+1)/st.RampUpS
		}
		// Each user makes one call a second while the service keeps up;
		// beyond Capacity the requests queue.
		offered := float64(users)
		served := math.Min(offered, o.Capacity*(1+0.01*rng.NormFloat64()))
		queue := math.Max(0, offered/o.Capacity-1)
		slow := 1 + o.SlowerPct/100
		n := int(served + rng.Float64())
		lar, cave, tx := metrics.NewAgg(), metrics.NewAgg(), metrics.NewAgg()
		for range n {
			a := lognormal(rng, (150+600*queue+2*float64(users))*slow, 0.35)
			c := lognormal(rng, (60+200*queue+float64(users))*slow, 0.30)
			add(lar, a)
			add(cave, c)
			add(tx, a+c+2)
		}
		// Timeouts while users ramp up in step 1; 503s from the external
		// service in the last step.
		if phase == 0 && inPhase < 4 && n > 0 {
			k := metrics.ErrKey{Class: core.ErrTimeout, Message: "request timeout after 2s"}
			lar.AddError(k, 1)
			tx.AddError(k, 1)
		}
		if phase == lastSec-1 && phase > 0 && sec%17 == 3 && n > 0 {
			k := metrics.ErrKey{Class: core.ErrHTTP5xx, Status: 503, Message: errMsg}
			cave.AddError(k, 1)
			tx.AddError(k, 1)
		}
		if o.AllErrors {
			k := metrics.ErrKey{Class: core.ErrHTTP5xx, Status: 500, Message: "500 Internal Server Error"}
			for _, a := range []*metrics.Agg{lar, cave, tx} {
				a.AddError(k, a.Count-a.Errors)
			}
		}
		imp := metrics.NewAgg()
		if impPhase >= 0 && !ts.Before(impFrom) && ts.Before(impTo) {
			for range max(1, o.ImportPerSecond) {
				add(imp, lognormal(rng, 900, 0.2))
			}
		}
		ph := stepPhase[phase]
		for _, r := range []struct {
			k metrics.Key
			a *metrics.Agg
		}{
			{metrics.Key{Workload: "read", Phase: ph, Label: TxLabel, Tx: true}, tx},
			{metrics.Key{Workload: "read", Phase: ph, Label: larLabel}, lar},
			{metrics.Key{Workload: "read", Phase: ph, Label: CaveLabel}, cave},
			{metrics.Key{Workload: "data-import", Phase: impPhase, Label: "POST /import"}, imp},
		} {
			if r.a.Count == 0 {
				continue
			}
			rec, err := rundir.RecordOf(ts.Unix(), r.k, r.a)
			if err != nil {
				return err
			}
			if err := w.WriteRecord(&rec); err != nil {
				return err
			}
			if o.NetOfDownstream && !r.k.Tx {
				rec.Label += " (net of downstream)"
				rec.Derived = true
				if err := w.WriteRecord(&rec); err != nil {
					return err
				}
			}
		}
		active := map[string]int{"read": users}
		if imp.Count > 0 {
			active["data-import"] = 1
		}
		if err := w.WriteRecord(&rundir.IntervalRecord{T: ts.Unix(), Phase: -1, Users: active}); err != nil {
			return err
		}
		sec++
		inPhase++
		if inPhase == st.Seconds {
			phase++
			inPhase = 0
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	if o.Killed {
		f, err := os.OpenFile(filepath.Join(dir, rundir.IntervalsFile), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		if _, err := f.WriteString(`{"t":` + strconv.FormatInt(runEnd.Unix(), 10) + `,"w":"read","ph":2,"lab`); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	if o.Monitor {
		return writeMonitor(dir, info, secondsTotal, o, rng)
	}
	return nil
}

func stepsShape(steps []Step) string {
	var parts []string
	for _, s := range steps {
		parts = append(parts, fmt.Sprintf("%d users × %ds", s.Users, s.Seconds))
	}
	return "steps: " + strings.Join(parts, ", ")
}

func lognormal(rng *rand.Rand, mean, sigma float64) float64 {
	mu := math.Log(mean) - sigma*sigma/2
	return math.Exp(mu + sigma*rng.NormFloat64())
}

func add(a *metrics.Agg, msv float64) {
	a.AddValue(int64(msv * 1000))
	a.Sent += 310
	a.Recv += 2150
}

func planYAML(o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\ntarget: http://127.0.0.1:8080\n", o.Name)
	b.WriteString("http:\n  timeout: 2s\n  headers:\n")
	if o.Secret != "" {
		fmt.Fprintf(&b, "    Authorization: Bearer %s\n", o.Secret)
	} else {
		b.WriteString("    Authorization: Bearer ${token}\n")
	}
	b.WriteString("    Accept: application/json\n")
	if o.Secret != "" {
		fmt.Fprintf(&b, "vars:\n  token: %s\n  tenant: diku\nsecrets: [token]\n", o.Secret)
	}
	b.WriteString("workloads:\n  read:\n    scenario:\n      - transaction:\n          name: " + TxLabel + "\n          steps:\n")
	b.WriteString("            - request: {name: \"" + LarLabel + "\", url: \"/lar/allergies?cpr=${cpr.cpr}\"}\n")
	b.WriteString("            - request: {name: \"" + CaveLabel + "\", method: POST, url: /cave/fhir-search, json: {cpr: \"${cpr.cpr}\"}}\n")
	b.WriteString("    load:\n      steps:\n")
	for _, s := range o.Steps {
		fmt.Fprintf(&b, "        - {users: %d, duration: %ds, ramp_up: %ds}\n", s.Users, s.Seconds, s.RampUpS)
	}
	b.WriteString("sla:\n")
	for _, s := range o.SLA {
		fmt.Fprintf(&b, "  - %q\n", s)
	}
	return b.String()
}

// monitor series --------------------------------------------------------------

type target struct {
	name, kind, method string
	cpuSeconds         float64
}

// writeMonitor writes monitor/<target>.csv and monitor/events.jsonl in the
// format mondata.Read reads: two app servers (host), two JVMs and a
// database, at one sample per second.
func writeMonitor(dir string, info *rundir.Info, seconds int, o Options, rng *rand.Rand) error {
	mdir := filepath.Join(dir, mondata.SubDir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return err
	}
	targets := []target{{"docker01", mondata.KindHost, "procfs", 0.21}, {"docker02", mondata.KindHost, "procfs", 0.19},
		{"lar", mondata.KindJVM, "hsperfdata", 0.35}, {"cave", mondata.KindJVM, "hsperfdata", 0.33}, {"db", mondata.KindPostgres, "sql", 0.8}}
	if o.StarvedGenerator {
		targets = append(targets, target{"loadgen", mondata.KindHost, "procfs", 0.5})
	}
	var events bytes.Buffer
	ev := func(t time.Time, tg target, kind string, extra map[string]any) {
		m := map[string]any{"time": t.UTC().Format(time.RFC3339Nano), "target": tg.name, "kind": tg.kind, "event": kind}
		if tg.name == "loadgen" {
			m["role"] = mondata.RoleGenerator
		}
		for k, v := range extra {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		events.Write(b)
		events.WriteByte('\n')
	}
	load := func(sec int) float64 { // offered load 0..1 of capacity
		acc := 0
		for _, s := range o.Steps {
			if sec < acc+s.Seconds {
				return math.Min(1.2, float64(s.Users)/o.Capacity) * math.Min(1, float64(sec-acc+1)/float64(max(1, s.RampUpS)))
			}
			acc += s.Seconds
		}
		return 0
	}
	for ti, tg := range targets {
		file := tg.name + ".csv"
		ev(info.Start, tg, mondata.EventStarted, map[string]any{"method": tg.method, "file": file, "interval_s": 1})
		var b bytes.Buffer
		b.WriteString(mondata.CSVHeader)
		eu, ou, ygc, fgc := 50e6, 120e6+float64(ti)*10e6, 0.0, 0.0
		row := func(t time.Time, metric, unit string, v float64) {
			fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s\n", t.UTC().Format("2006-01-02T15:04:05.000Z07:00"), tg.name, tg.kind, metric, unit,
				strconv.FormatFloat(v, 'f', -1, 64))
		}
		for s := 0; s < seconds; s++ {
			t := info.Start.Add(time.Duration(s) * time.Second)
			l := load(s)
			switch tg.kind {
			case mondata.KindHost:
				user := 6 + 48*l + 3*rng.NormFloat64()
				if o.SaturateCPU {
					user = math.Min(86, 10+76*l+rng.NormFloat64())
				}
				sys := 2 + 9*l + rng.NormFloat64()
				io := math.Abs(0.4 + 0.3*rng.NormFloat64())
				user, sys = math.Max(0, user), math.Max(0, sys)
				row(t, "cpu_user_pct", "%", round2(user))
				row(t, "cpu_system_pct", "%", round2(sys))
				row(t, "cpu_iowait_pct", "%", round2(io))
				row(t, "cpu_idle_pct", "%", round2(math.Max(0, 100-user-sys-io)))
				row(t, "mem_used_bytes", "bytes", math.Round(2.1e9+3e7*l+2e7*rng.NormFloat64()))
				row(t, "mem_total_bytes", "bytes", 8<<30)
				rx, tx := math.Round(math.Max(0, 62e3*l*3+4e3*rng.NormFloat64())), math.Round(math.Max(0, 410e3*l*3+2e4*rng.NormFloat64()))
				if o.IdleNetwork {
					rx, tx = 0, 0
				}
				row(t, "net_rx_bytes_per_s", "bytes/s", rx)
				row(t, "net_tx_bytes_per_s", "bytes/s", tx)
			case mondata.KindJVM:
				eu += 4e6 + 30e6*l*(1+0.2*rng.NormFloat64())
				if eu > 400e6 {
					eu, ygc = 20e6, ygc+1
					ou += 3e6 * rng.Float64()
				}
				if ou > 150e6+float64(ti)*10e6 {
					ou, fgc = 110e6, fgc+1
				}
				// jstat columns are in KB, as the JVM monitor writes them.
				row(t, "EC", "KB", 420e6/1024)
				row(t, "EU", "KB", math.Round(eu/1024))
				row(t, "OC", "KB", 1398272)
				row(t, "OU", "KB", math.Round(ou/1024))
				row(t, "YGC", "", ygc)
				row(t, "FGC", "", fgc)
				row(t, "heap_used_bytes", "bytes", math.Round(eu+ou))
			case mondata.KindPostgres:
				row(t, "connections_total", "", math.Round(12+20*l))
				row(t, "connections_active", "", math.Round(math.Max(0, 1+8*l+rng.NormFloat64())))
				if o.SaturateConnections {
					row(t, "connections_max", "", 36)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(mdir, file), b.Bytes(), 0o644); err != nil {
			return err
		}
		ev(info.Start.Add(time.Duration(seconds)*time.Second), tg, mondata.EventStopped, map[string]any{"samples": seconds, "cpu_seconds": tg.cpuSeconds * float64(seconds) / 60})
	}
	return os.WriteFile(filepath.Join(mdir, mondata.EventsFile), events.Bytes(), 0o644)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }
