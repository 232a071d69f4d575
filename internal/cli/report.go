package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/monitor"
	"github.com/plateau-perf/plateau/internal/monitor/cloudwatch"
	"github.com/plateau-perf/plateau/internal/monitor/promql"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// newReportCmd is `plateau report RUN_DIR`: it rewrites the report of a run
// directory (finished, killed mid-way or imported) from the directory alone.
func newReportCmd(st *State) *cobra.Command {
	var (
		baseline string
		lang     string
		formats  []string
		requery  bool
	)
	cmd := &cobra.Command{
		Use:   "report RUN_DIR",
		Short: "Write the report of a run directory (HTML, Markdown, summary.json, JUnit)",
		Long: `Write the report of a run directory from its files alone: summary.json,
report.html (self-contained), report.md with charts/*.svg beside it, and
junit.xml with one test case per requirement. Works on a finished run, on a
run that was killed mid-way and on an imported run.

Exit status: 0 when every requirement (SLA) held, 1 when one broke, 2 when
the report could not be written.`,
		Example: `  plateau report runs/2025-05-13-lar
  plateau report runs/new --baseline runs/last-release
  plateau report runs/new --format html,json
  plateau report runs/new --requery          # query Prometheus/CloudWatch again for the run window`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs, err := report.ParseFormats(formats)
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			if requery {
				// Prometheus keeps its data: query the run window again
				// (now with the time after the run) before writing.
				if err := requeryMonitors(cmd.Context(), args[0], *st); err != nil {
					return fmt.Errorf("report: %w", err)
				}
			}
			res, err := report.Write(args[0], report.Options{Formats: fs, Baseline: baseline, Version: version(), Lang: lang})
			if res == nil {
				return fmt.Errorf("report: %w", err)
			}
			for _, n := range res.Notes {
				fmt.Fprintf(st.Stderr, "plateau report: note: %s\n", n)
			}
			for _, f := range res.Reports {
				fmt.Fprintln(st.Stdout, f)
			}
			if err != nil {
				return fmt.Errorf("report: %w", err)
			}
			var ctx *rundir.Context
			if info, err := rundir.ReadInfo(args[0]); err == nil {
				ctx = info.Context
			}
			loc, _ := report.Lang(lang, ctx) // checked by report.Write
			printVerdict(st.Stdout, res.Summary, loc)
			return verdictErr(res.Summary)
		},
	}
	cmd.Flags().StringVar(&lang, "lang", "", "language of the report: "+strings.Join(locale.Names(), ", ")+" (default: the plan's lang:, else en)")
	cmd.Flags().StringVar(&baseline, "baseline", "", "run directory to compare against (fills the Comparison section)")
	cmd.Flags().BoolVar(&requery, "requery", false, "run the promql and cloudwatch monitors' queries again over the run window (and the time after it) before writing")
	cmd.Flags().StringSliceVar(&formats, "format", nil, "formats to write: html, md, json, junit (comma-separated; default all)")
	return cmd
}

// requeryMonitors reads again what the run's remote monitors keep after the
// run: Prometheus-compatible servers (promql) and CloudWatch, which
// publishes minutes late. A run with neither is an error: --requery then
// has nothing to do.
func requeryMonitors(ctx context.Context, runDir string, st State) error {
	now := time.Now()
	found := false
	var errs []error
	for _, rq := range []func() ([]string, error){
		func() ([]string, error) { return promql.Requery(ctx, runDir, st.Getenv, now) },
		func() ([]string, error) { return cloudwatch.Requery(ctx, runDir, now) },
	} {
		lines, err := rq()
		if errors.Is(err, monitor.ErrNothingToRequery) {
			continue
		}
		found = true
		for _, l := range lines {
			fmt.Fprintf(st.Stderr, "plateau report: requeried %s\n", l)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if !found {
		return errors.New("--requery: the run has no promql or cloudwatch monitor targets")
	}
	return errors.Join(errs...)
}
