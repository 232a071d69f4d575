package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/demo"
	"github.com/plateau-perf/plateau/internal/demo/study001"
	"github.com/plateau-perf/plateau/internal/demo/study002"
	"github.com/plateau-perf/plateau/internal/demo/study003"
	"github.com/plateau-perf/plateau/internal/demo/study004"
	"github.com/plateau-perf/plateau/internal/demo/studykit"
	"github.com/plateau-perf/plateau/internal/demo/sut"
	"github.com/plateau-perf/plateau/internal/locale"
)

// The reference-study demos: `plateau demo 001|002|003|004` runs a
// scaled-down version of that reference's study against the bundled
// services and writes one study document shaped like the reference.

// studyDemos maps a reference number to its demo.
var studyDemos = map[string]func(context.Context, *studykit.Env) (string, error){
	"001": study001.Run,
	"002": study002.Run,
	"003": study003.Run,
	"004": study004.Run,
}

// studyDemoFlags are the flags only the study demos read.
type studyDemoFlags struct {
	short    bool
	postgres string
}

func addStudyDemoFlags(c *cobra.Command, f *studyDemoFlags) {
	c.Flags().BoolVar(&f.short, "short", false, "study demos 001–004: the CI setting (about a minute each)")
	c.Flags().StringVar(&f.postgres, "postgres", "", "study demos 001 and 004: keep the circulation data in this PostgreSQL database (a DSN) instead of the embedded store, so the top-SQL table fills")
}

func runStudyDemo(ctx context.Context, st *State, id string, f demoFlags, sf studyDemoFlags) error {
	run, ok := studyDemos[id]
	if !ok {
		return fmt.Errorf("demo %q: want 000, 001, 002, 003 or 004", id)
	}
	if err := locale.Check(f.lang); err != nil {
		return fmt.Errorf("demo: --lang: %w", err)
	}
	if f.full && sf.short {
		return errors.New("demo: --full and --short exclude each other")
	}
	dir := f.out
	if dir == "" {
		dir = filepath.Join("runs", "demo-"+id+"-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	scale := studykit.Default
	switch {
	case sf.short:
		scale = studykit.Short
	case f.full:
		scale = studykit.Full
	}
	quiet := *st
	quiet.Stdout = io.Discard
	var progress io.Writer = st.Stderr
	if f.quiet {
		quiet.Stderr, progress = io.Discard, nil
	}
	env := &studykit.Env{Exe: st.Exe, Dir: dir, Scale: scale, Postgres: sf.postgres, Progress: progress, Stderr: st.Stderr,
		Tool: strings.TrimSpace("plateau " + version()), Lang: f.lang,
		RunPlan: func(ctx context.Context, plan, out string, sets, monitors []string) error {
			err := runPlan(ctx, &quiet, plan, runFlags{out: out, set: sets, monitors: monitors, quiet: true})
			if errors.Is(err, ErrSLAFailed) || errors.As(err, new(*notHeldError)) {
				// A study reports requirements and validity (its banner
				// names a run whose load was not held); it does not stop
				// on them.
				return nil
			}
			return err
		}}
	start := time.Now()
	out, err := run(ctx, env)
	if err != nil {
		return fmt.Errorf("demo %s: %w", id, err)
	}
	loc, _ := locale.Parse(f.lang) // checked above
	if env.Study != nil {
		loc = env.Study.Locale()
	}
	fmt.Fprint(st.Stdout, loc.T("demo %s done in %s\nstudy: %s\n", id, time.Since(start).Round(time.Second), filepath.Join(out, "study.html")))
	if env.Study != nil {
		// A demo shows the tool: its study's status is printed, not its
		// exit code (plateau study DIR's exit code follows the status).
		printStudy(st.Stdout, env.Study)
	}
	return nil
}

// newDemoServeStudyCmd serves one service of a study demo (started by
// plateau demo 001…004 through studykit).
func newDemoServeStudyCmd(st *State) *cobra.Command {
	var (
		name, listen, db, dsn, release, accessLog, dataImport, circulation string
		worker, beekeeper, logCfg, logFile, data                           string
		items, patrons, history, leakBytes, work, workers                  int
		leakCost, lineCost, compute, timeout                               time.Duration
	)
	c := &cobra.Command{
		Use:    "serve-study circulation|data-import|manager|worker|beekeeper|survey",
		Short:  "Serve one service of a reference-study demo (started by plateau demo 001…004)",
		Hidden: true,
		Args:   cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var srv interface {
				Serve(context.Context, net.Listener) error
			}
			var err error
			switch args[0] {
			case "circulation":
				srv, err = sut.NewCirculation(ctx, sut.CirculationConfig{SQLite: db, DSN: dsn, Items: items, Patrons: patrons, HistoryLoans: history,
					Release: release, LeakBytes: leakBytes, LeakCost: leakCost, DataImportURL: dataImport, AccessLog: accessLog})
			case "data-import":
				srv, err = sut.NewDataImport(sut.DataImportConfig{CirculationURL: circulation, Work: work, AccessLog: accessLog})
			case "manager", "worker", "beekeeper":
				srv, err = sut.NewCompany(sut.CompanyConfig{Role: args[0], WorkerURL: worker, BeekeeperURL: beekeeper, Workers: workers,
					Log: logCfg, LogFile: logFile, LineCost: lineCost, Compute: compute, AccessLog: accessLog})
			case "survey":
				srv, err = sut.NewSurvey(ctx, sut.SurveyConfig{DB: db, DataDir: data, Workers: workers, Timeout: timeout, AccessLog: accessLog})
			default:
				return fmt.Errorf("unknown study service %q", args[0])
			}
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", listen)
			if err != nil {
				return err
			}
			fmt.Fprintf(st.Stdout, "%s%s\n", demo.ListenPrefix, ln.Addr())
			return srv.Serve(ctx, ln)
		},
	}
	fl := c.Flags()
	fl.StringVar(&name, "name", "", "service name (for monitoring)")
	fl.StringVar(&listen, "listen", "127.0.0.1:0", "listen address")
	fl.StringVar(&db, "db", "", "SQLite database file")
	fl.StringVar(&dsn, "dsn", "", "circulation: PostgreSQL DSN instead of --db")
	fl.StringVar(&release, "release", sut.ReleaseCurrent, "circulation: current or previous")
	fl.IntVar(&items, "items", 0, "circulation: items (and patrons) in the data set")
	fl.IntVar(&patrons, "patrons", 0, "circulation: patrons")
	fl.IntVar(&history, "history", 0, "circulation: closed loans of the history")
	fl.IntVar(&leakBytes, "leak-bytes", 0, "circulation: plant a slow leak of this many bytes per check-out")
	fl.DurationVar(&leakCost, "leak-cost", 0, "circulation: check-in time per leaked entry")
	fl.StringVar(&dataImport, "data-import", "", "circulation: the data-import module's URL")
	fl.StringVar(&circulation, "circulation", "", "data-import: the circulation service's URL")
	fl.IntVar(&work, "work", 0, "data-import: hashing rounds per record")
	fl.StringVar(&worker, "worker", "", "manager, beekeeper: the worker's URL")
	fl.StringVar(&beekeeper, "beekeeper", "", "manager: the beekeeper's URL")
	fl.IntVar(&workers, "workers", 0, "manager, survey: calls served at once")
	fl.StringVar(&logCfg, "log", sut.LogSync, "manager: log configuration sync, async or none")
	fl.StringVar(&logFile, "log-file", "", "manager: the log file")
	fl.DurationVar(&lineCost, "line-cost", 0, "manager: time to write one log line")
	fl.DurationVar(&compute, "compute", 0, "worker: time per term")
	fl.StringVar(&data, "data", "", "survey: the data set written by plateau datagen (examples/school-data/school.yaml)")
	fl.DurationVar(&timeout, "timeout", 0, "survey: the proxy's timeout")
	fl.StringVar(&accessLog, "access-log", "", "access log file")
	return c
}
