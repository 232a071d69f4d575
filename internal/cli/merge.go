package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/merge"
	"github.com/plateau-perf/plateau/internal/report"
)

// errIncomplete is returned when a merged run lacks a segment's load: the
// reports are written, but the run did not offer the planned load, which
// must not pass as a result.
var errIncomplete = errors.New("incomplete load")

// newMergeCmd is `plateau merge DIR… -o MERGED`: it combines the run
// directories of segmented generators into one run directory and writes its
// reports.
func newMergeCmd(st *State) *cobra.Command {
	var (
		out      string
		segments int
		wait     time.Duration
		formats  []string
	)
	cmd := &cobra.Command{
		Use:   "merge DIR... -o MERGED",
		Short: "Merge the run directories of segmented generators into one run",
		Long: `Merge the run directories that generators wrote with --segment i/N into one run
directory whose numbers are those of one generator doing the whole load:
per-second histograms per label are added (lossless), counts and errors summed,
raw samples merged in time order, phases aligned by name, and monitor series
kept per generator host ("<host>/<target>"). Requirements (SLA) are judged
once, on the merged data; then the reports are written as by plateau report.

A missing segment, or one whose generator died before the end, is named in
run.json, in the report and here, with how long its load was missing; the
exit status is then 2 even though the reports are written.

Exit status: 0 when every requirement held, 1 when one broke, 2 when the
merge could not be done or the merged load is incomplete.`,
		Example: `  plateau merge results/segment-0 results/segment-1 results/segment-2 -o results/merged
  plateau merge --segments 4 --wait 30m /results/run/segment-{0,1,2,3} -o /results/run/merged`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("merge: -o MERGED is required")
			}
			fs, err := report.ParseFormats(formats)
			if err != nil {
				return fmt.Errorf("merge: %w", err)
			}
			if wait > 0 {
				open, err := merge.Wait(cmd.Context(), args, merge.WaitOptions{Timeout: wait})
				if err != nil {
					return fmt.Errorf("merge: waiting for segments: %w", err)
				}
				if len(open) > 0 {
					fmt.Fprintf(st.Stderr, "plateau merge: not finished, merged as they are: %s\n", strings.Join(open, ", "))
				}
			}
			if tool, ok := foreignSegmentsTool(args); ok {
				// A foreign tool's segments (plateau k8s with a script):
				// the union of their raw results, read by its importer.
				return mergeForeign(cmd.Context(), st, tool, args, out, segments, fs)
			}
			return mergeAndReport(cmd.Context(), st, merge.Options{Dirs: args, Out: out, Segments: segments,
				Command: redactArgs(append([]string{"plateau"}, st.Args...))}, fs)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "merged run directory to write (required)")
	cmd.Flags().IntVar(&segments, "segments", 0, "number of segments the plan was split into (default: from the runs); names wholly missing segments")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for every segment to finish first (generators still running)")
	cmd.Flags().StringSliceVar(&formats, "format", nil, "report formats: html, md, json, junit (comma-separated; default all)")
	return cmd
}

// mergeAndReport merges, writes the reports, prints the summary and decides
// the outcome: incomplete load, SLA failed, or fine.
func mergeAndReport(_ context.Context, st *State, o merge.Options, formats []string) error {
	if _, err := os.Stat(filepath.Join(o.Out, "run.json")); err == nil {
		return fmt.Errorf("merge: %s already holds a run", o.Out)
	}
	mres, err := merge.Merge(o)
	if err != nil {
		return err
	}
	// The console speaks the merged run's language, as its report does.
	loc, _ := report.Lang("", mres.Info.Context) // an unknown lang: English here, the report's error below
	for _, s := range mres.Incomplete {
		fmt.Fprint(st.Stderr, loc.T("plateau merge: segment %s: %s (%.1f s of load missing)\n", s.Segment, s.Note, s.MissingS))
	}
	res, err := report.Write(o.Out, report.Options{Formats: formats, Version: version()})
	if res == nil {
		return fmt.Errorf("merge: report: %w", err)
	}
	for _, n := range res.Notes {
		fmt.Fprint(st.Stderr, loc.T("plateau merge: note: %s\n", n))
	}
	printSummary(st.Stdout, res.Summary, loc)
	fmt.Fprint(st.Stdout, loc.T("\nmerged %d segment(s) into %s (%d interval records, %d raw samples)\n",
		len(mres.Info.Segments)-countMissing(mres), o.Out, mres.Records, mres.Samples))
	if err != nil {
		return fmt.Errorf("merge: report: %w", err)
	}
	if len(mres.Incomplete) > 0 {
		return fmt.Errorf("%w: %s", errIncomplete, mres.Info.Stopped)
	}
	return verdictErr(res.Summary)
}

func countMissing(r *merge.Result) int {
	n := 0
	for _, s := range r.Info.Segments {
		if s.Status == "missing" {
			n++
		}
	}
	return n
}
