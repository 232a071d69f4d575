package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/demo"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/locale"
)

type demoFlags struct {
	out       string
	full      bool
	step      time.Duration
	instances int
	workers   int
	patients  int
	quiet     bool
	lang      string // --lang: the report's (or study document's) language
}

func newDemoCmd(st *State) *cobra.Command {
	var f demoFlags
	var sf studyDemoFlags
	c := &cobra.Command{
		Use:   "demo [000|001|002|003|004]",
		Short: "Start the bundled demo service and run the reference-000 study against it",
		Long: `Start plateau's bundled two-tier demo service (front "lar" ×2 → back "cave" ×2 with an
SQLite store of 50,000 patients, plus the external "MSB" services, behind a round-robin
balancer), run the reference-000 study against it — a stepped load raised until
throughput stops growing, with the requirement "average read under 200 ms at ≥ 10
calls/s" — watch every process, and write the run directory with the report.
Takes about 1½–2½ minutes (20-second steps); --full uses the reference's 15-minute steps.

plateau demo 001|002|003|004 runs the other reference studies, scaled down, against
bundled services and writes one study document each (docs/demo.md): 001 check-in/
check-out at four user levels, the previous release and a soak; 002 uploads and a
browse flow at several client levels over generated data; 003 a concurrency sweep under
three log configurations; 004 two concurrent workloads repeated four times. --short is
the CI setting, --full the reference's own scale.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 && args[0] != "000" {
				return runStudyDemo(cmd.Context(), st, args[0], f, sf)
			}
			return runDemo(cmd.Context(), st, f)
		},
	}
	c.Flags().StringVarP(&f.out, "out", "o", "", "run directory (default runs/demo-<UTC timestamp>)")
	c.Flags().BoolVar(&f.full, "full", false, "use the reference's 15-minute steps")
	c.Flags().DurationVar(&f.step, "step", 20*time.Second, "duration of each load step")
	c.Flags().IntVar(&f.instances, "instances", 2, "front and back instances")
	c.Flags().IntVar(&f.workers, "workers", 12, "concurrent requests each front serves (its worker pool)")
	c.Flags().IntVar(&f.patients, "patients", sut.DefaultPatients, "patients in the demo database")
	c.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "no live progress output")
	c.Flags().StringVar(&f.lang, "lang", "", "language of the report: "+strings.Join(locale.Names(), ", ")+" (default: the demo's own, Danish for 000 as its reference, English for 001–004)")
	addStudyDemoFlags(c, &sf)
	c.AddCommand(newDemoServeCmd(st))
	c.AddCommand(newDemoServeStudyCmd(st))
	return c
}

func runDemo(ctx context.Context, st *State, f demoFlags) error {
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", "demo-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	work := filepath.Join(dir, "sut")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	// The plan and its CSV go beside the run so it can be rerun as is.
	planDir := filepath.Join(dir, "study")
	if err := os.MkdirAll(planDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(planDir, "plan.yaml"), demo.PlanYAML, 0o644); err != nil {
		return err
	}
	csv, err := os.Create(filepath.Join(planDir, "cpr.csv"))
	if err != nil {
		return err
	}
	if err := sut.WriteCPRCSV(csv, sut.DefaultSeed, f.patients); err != nil {
		csv.Close()
		return err
	}
	if err := csv.Close(); err != nil {
		return err
	}
	// The demo speaks its report's language: --lang, else its plan's
	// (Danish, as reference 000).
	planSLA, planLang, err := demoPlanHead()
	if err != nil {
		return err
	}
	loc := planLoc(planLang, f.lang)
	fmt.Fprint(st.Stderr, loc.T("plateau demo: starting the demo service (%d fronts, %d backs, external services, balancer)…\n", f.instances, f.instances))
	stack, err := demo.Start(ctx, demo.Options{Exe: st.Exe, Dir: work, Instances: f.instances, Workers: f.workers,
		Patients: f.patients, Seed: sut.DefaultSeed, Stderr: st.Stderr})
	if err != nil {
		return fmt.Errorf("starting the demo service: %w", err)
	}
	defer stack.Stop()
	var names []string
	for _, p := range stack.Procs {
		names = append(names, fmt.Sprintf("%s (pid %d, %s)", p.Name, p.Cmd.Process.Pid, p.Addr))
	}
	fmt.Fprint(st.Stderr, loc.T("plateau demo: running: %s\n", strings.Join(names, ", ")))
	step := f.step
	if f.full {
		step = 15 * time.Minute
	}
	// The front servers' access logs, joined with their external-call
	// logs, are attached to the run: its one report has the client's view
	// and the servers' view per step (reference 000's table). The back's
	// logs stay in sut/logs for `plateau import accesslog`: mixing tiers
	// would count every read twice.
	// Absolute, as the plan resolves relative paths against its own
	// directory.
	logs, err := filepath.Abs(filepath.Join(work, "logs"))
	if err != nil {
		return err
	}
	steps, first := demoSteps(step, f.instances, loc)
	sets := []string{"target=" + stack.Target, "workloads.read.load.steps=" + steps,
		"server_side.sources=" + demoServerSources(logs, f.instances), "sla=" + demoSLA(planSLA, first)}
	// The balancer's worker pools, scraped from its metrics page: the
	// capacity analysis judges them against their size, so when the fronts'
	// workers are what ran out the report names them.
	pools := []string{"prometheus:name=balancer-pool,url=" + stack.Target + demo.MetricsPath}
	err = runPlan(ctx, st, filepath.Join(planDir, "plan.yaml"), runFlags{out: filepath.Join(dir, "run"), set: sets, quiet: f.quiet, monitors: pools, lang: f.lang})
	stack.Stop() // flushes and closes every access log
	fmt.Fprint(st.Stdout, loc.T("demo service logs (access logs per instance, external-call logs): %s\n", filepath.Join(work, "logs")))
	return err
}

// demoServerSources renders the front instances' access logs, each joined
// with its external-call log, as a flow-style server_side.sources list.
func demoServerSources(logs string, instances int) string {
	var parts []string
	for i := 1; i <= instances; i++ {
		lar := fmt.Sprintf("lar-%d", i)
		parts = append(parts, fmt.Sprintf("{accesslog: {name: %s, path: %q, format: plateau, external: %q}}",
			lar, filepath.Join(logs, lar+"-access.log"), filepath.Join(logs, lar+"-sla.log")))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// demoSteps renders the stepped load as a flow-style YAML list: reference
// 000's "nodes × threads" iterations, scaled by instances, named in the
// demo's language as the reference names them ("2 nodes og 7 tråde");
// first is the first step's name.
func demoSteps(step time.Duration, instances int, loc *locale.Locale) (steps, first string) {
	shape := [][2]int{{2, 7}, {2, 10}, {3, 10}, {4, 10}, {5, 10}, {6, 10}}
	var parts []string
	for i, s := range shape {
		users := s[0] * s[1] * instances / 2
		name := loc.T("%d: %d nodes x %d threads", i+1, s[0], s[1])
		if i == 0 {
			first = name
		}
		parts = append(parts, fmt.Sprintf("{name: %q, users: %d, duration: %s}", name, users, step))
	}
	return "[" + strings.Join(parts, ", ") + "]", first
}

// demoFirstStep is the first step's name in the demo's plan, which its
// requirements name (during "…").
const demoFirstStep = "1: 2 nodes x 7 threads"

// demoPlanHead reads the demo plan's requirements and language.
func demoPlanHead() (sla []string, lang string, err error) {
	var head struct {
		SLA  []string `yaml:"sla"`
		Lang string   `yaml:"lang"`
	}
	if err := yaml.Unmarshal(demo.PlanYAML, &head); err != nil {
		return nil, "", fmt.Errorf("the demo's plan: %w", err)
	}
	return head.SLA, head.Lang, nil
}

// demoSLA renders the demo plan's requirements as a flow-style YAML list,
// the step they are judged in named as the demo names it (first).
func demoSLA(sla []string, first string) string {
	var parts []string
	for _, r := range sla {
		parts = append(parts, fmt.Sprintf("%q", strings.ReplaceAll(r, strconv.Quote(demoFirstStep), strconv.Quote(first))))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func newDemoServeCmd(st *State) *cobra.Command {
	var (
		name, listen, db, accessLog, extLog, external string
		backs, backends                               []string
		patients, workers                             int
		seed                                          int64
		parallel                                      bool
	)
	serve := func(ctx context.Context, srv interface {
		Serve(context.Context, net.Listener) error
	}) error {
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return err
		}
		fmt.Fprintf(st.Stdout, "%s%s\n", demo.ListenPrefix, ln.Addr())
		return srv.Serve(ctx, ln)
	}
	c := &cobra.Command{
		Use:    "serve front|back|external|lb",
		Short:  "Serve one part of the demo system (started by plateau demo)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			switch args[0] {
			case "front":
				secret, _ := st.Getenv("PLATEAU_DEMO_SECRET")
				if secret == "" {
					return errors.New("front: PLATEAU_DEMO_SECRET is not set")
				}
				f, err := sut.NewFront(sut.FrontConfig{Secret: secret, BackURLs: backs, ExternalURL: external,
					ParallelExternal: parallel, AccessLog: accessLog, ExternalLog: extLog})
				if err != nil {
					return err
				}
				return serve(ctx, f)
			case "back":
				cfg := sut.DefaultBackConfig(db, accessLog)
				cfg.Patients, cfg.Seed = patients, seed
				b, err := sut.NewBack(ctx, cfg)
				if err != nil {
					return err
				}
				return serve(ctx, b)
			case "external":
				e, err := sut.NewExternal(sut.ExternalConfig{Seed: seed, AccessLog: accessLog})
				if err != nil {
					return err
				}
				return serve(ctx, e)
			case "lb":
				b, err := demo.NewBalancer(backends, workers)
				if err != nil {
					return err
				}
				return serve(ctx, b)
			}
			return fmt.Errorf("unknown demo service %q (front, back, external, lb)", args[0])
		},
	}
	fl := c.Flags()
	fl.StringVar(&name, "name", "", "instance name (for logs and monitoring)")
	fl.StringVar(&listen, "listen", "127.0.0.1:0", "listen address")
	fl.StringVar(&db, "db", "cave.db", "back: SQLite database file")
	fl.IntVar(&patients, "patients", sut.DefaultPatients, "back: patients to generate")
	fl.Int64Var(&seed, "seed", sut.DefaultSeed, "data and latency seed")
	fl.StringVar(&accessLog, "access-log", "", "access log file")
	fl.StringVar(&extLog, "external-log", "", "front: external-call log file")
	fl.StringVar(&external, "external", "", "front: external services base URL")
	fl.StringArrayVar(&backs, "back", nil, "front: back base URL (repeatable; round-robin)")
	fl.BoolVar(&parallel, "parallel-external", false, "front: call the external services concurrently")
	fl.StringArrayVar(&backends, "backend", nil, "lb: front base URL (repeatable)")
	fl.IntVar(&workers, "workers", 12, "lb: concurrent requests per backend")
	return c
}
