package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report"
)

// newCompareCmd is `plateau compare BASE NEW [MORE…]`: every other run is
// compared with the first, label by label and phase by phase, with a
// statement of whether each difference is beyond run-to-run noise.
func newCompareCmd(st *State) *cobra.Command {
	var (
		failOn []string
		outDir string
		lang   string
	)
	cmd := &cobra.Command{
		Use:   "compare BASE_DIR NEW_DIR [MORE_DIR…]",
		Short: "Compare runs: deltas per label and phase, with significance; --fail-on for CI",
		Long: `Compare one or more runs with a baseline (the first directory). For each
label and each matched phase (matched by name, else by load level) it shows
average and p95 of both runs, the delta in ms and %, throughput and error %
side by side, and whether the difference is beyond run-to-run noise
(faster / slower / no significant change). With more than two runs it also
shows them side by side with the spread between them, or, when their load
levels differ, as a load series (throughput and response time against
load), since runs at different loads are not repeats. Runs are named by
what distinguishes them (the load, else the directory), not only by the
plan's name; a whole-run delta between runs with different phases carries
a warning (compare the matched phases).

It writes compare.html and compare.md (charts under compare-charts/) into
-o DIR (default: the last run directory).

--fail-on rules (repeatable, or comma-separated) are checked on every label
and on all requests, over the whole run and in every matched phase; when one
trips the exit status is 1. Grammar: metric op change, where metric is mean,
p50, p90, p95, p99, max, error_rate or throughput and change is signed with
a unit: %, ms, s, pp, rps. Examples: "p95 > +10%", "mean > +20ms",
"error_rate > +1pp", "throughput < -5%".`,
		Example: `  plateau compare runs/release-1.4 runs/release-1.5
  plateau compare runs/base runs/new --fail-on "p95 > +10%" --fail-on "error_rate > +1pp"
  plateau compare runs/a runs/b runs/c -o reports/abc`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var rules []compare.Rule
			for _, f := range failOn {
				rs, err := compare.ParseRules(f)
				if err != nil {
					return fmt.Errorf("compare: %w", err)
				}
				rules = append(rules, rs...)
			}
			res, err := report.CompareRuns(args, report.CompareOptions{Rules: rules, Version: version(), Lang: lang})
			if err != nil {
				return fmt.Errorf("compare: %w", err)
			}
			if err := printComparison(st.Stdout, res); err != nil {
				return fmt.Errorf("compare: %w", err)
			}
			dir := outDir
			if dir == "" {
				dir = args[len(args)-1]
			}
			files, err := report.WriteCompare(dir, res)
			if err != nil {
				return fmt.Errorf("compare: %w", err)
			}
			for _, f := range files {
				if !strings.HasSuffix(f, ".svg") {
					fmt.Fprintln(st.Stdout, f)
				}
			}
			if res.Failed {
				return ErrSLAFailed
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&failOn, "fail-on", nil, `regression rule, e.g. "p95 > +10%" (repeatable); exit status 1 when one trips`)
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "directory for compare.html and compare.md (default: the last run directory)")
	cmd.Flags().StringVar(&lang, "lang", "", "language of compare.html and compare.md: "+strings.Join(locale.Names(), ", ")+" (default: the baseline run's plan lang, else en)")
	return cmd
}

// printComparison writes the side-by-side tables as aligned text, in the
// comparison's language (English as before).
func printComparison(w io.Writer, res *report.CompareResult) error {
	loc := res.Doc.Lang
	cw := report.NewCompareWords(loc)
	n := func(format string, v ...any) string { return loc.Num(fmt.Sprintf(format, v...)) }
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	for _, rc := range res.Runs {
		fmt.Fprint(tw, loc.T("%s (%s) vs baseline %s (%s)\n", rc.Name, filepath.Clean(rc.Dir), res.BaseName, filepath.Clean(res.BaseDir)))
		phase := ""
		for _, r := range rc.Rows {
			if r.Phase != phase {
				phase = r.Phase
				title := loc.Word("whole run")
				if phase != "run" {
					title = loc.T("phase %s", phase)
				}
				fmt.Fprintf(tw, "\n[%s]\n", title)
				fmt.Fprintln(tw, loc.Word("label\tbase avg ms\tnew avg ms\tΔ ms\tΔ %\tbase p95\tnew p95\tp95 Δ %\tbase req/s\tnew req/s\tbase err %\tnew err %\tverdict\t"))
			}
			label := r.Label
			if label == core.TotalLabel {
				label = loc.Word("all requests")
				if r.Workload != "" {
					label = loc.T("%s: all requests", r.Workload)
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", label, n("%.1f\t%.1f\t%+.1f\t%+.1f\t%.1f\t%.1f\t%+.1f\t%.2f\t%.2f\t%.2f\t%.2f", r.BaseMeanMs, r.NewMeanMs, r.DeltaMs, r.DeltaPct,
				r.BaseP95Ms, r.NewP95Ms, r.P95DeltaPct, r.BaseTputRPS, r.NewTputRPS, r.BaseErrPct, r.NewErrPct), cw.Verdict(r.Verdict)+"\t")
		}
		fmt.Fprintln(tw)
		for _, o := range rc.Outcomes {
			if o.Failed {
				fmt.Fprintf(tw, "%s %s [%s]: %s\n", loc.Word("FAIL"), o.Label, o.Phase, cw.RuleOutcome(o.Outcome))
			}
		}
	}
	for _, rc := range res.Runs {
		if !rc.SamePhases {
			fmt.Fprint(tw, loc.T("warning: %s has different phases from %s, so its whole-run delta mixes different loads; compare the matched phases\n", rc.Name, res.BaseName))
		}
	}
	for _, sp := range res.Spreads {
		if res.Kind == compare.Series {
			if sp.Workload == "" {
				fmt.Fprintln(tw, loc.Word("\nload series (all requests, whole run): different load levels, a curve against load, not repeats"))
			} else {
				fmt.Fprint(tw, loc.T("\nload series (%s: its requests, whole run): different load levels, a curve against load, not repeats\n", sp.Workload))
			}
			fmt.Fprintln(tw, loc.Word("run\tload\treq/s\tavg ms\tp95 ms\terr %\t"))
			for _, r := range sp.Runs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t\n", r.Name, cw.Load(r), n("%.2f\t%.1f\t%.1f\t%.2f", r.Stats.ThroughputRPS, r.Stats.MeanMs, r.Stats.P95Ms, r.Stats.ErrorPct))
			}
			continue
		}
		if sp.Workload == "" {
			fmt.Fprintln(tw, loc.Word("\nruns side by side (all requests, whole run)"))
		} else {
			fmt.Fprint(tw, loc.T("\nruns side by side (%s: its requests, whole run)\n", sp.Workload))
		}
		fmt.Fprintln(tw, loc.Word("run\tavg ms\tp95 ms\treq/s\terr %\t"))
		for _, r := range sp.Runs {
			fmt.Fprintf(tw, "%s\t%s\t\n", r.Name, n("%.1f\t%.1f\t%.2f\t%.2f", r.Stats.MeanMs, r.Stats.P95Ms, r.Stats.ThroughputRPS, r.Stats.ErrorPct))
		}
		fmt.Fprintf(tw, "%s\t%s\t\t\n", loc.Word("spread (CV)"), n("%.1f %%\t%.1f %%\t%.1f %%", 100*sp.MeanMs.CV, 100*sp.P95Ms.CV, 100*sp.ThroughputRPS.CV))
	}
	return tw.Flush()
}
