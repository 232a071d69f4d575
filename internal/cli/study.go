package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/study"
)

// newStudyCmd is `plateau study STUDY.yaml -o DIR`: several run
// directories with roles become one study document.
func newStudyCmd(st *State) *cobra.Command {
	var (
		outDir, notes string
		formats       []string
	)
	cmd := &cobra.Command{
		Use:   "study STUDY.yaml -o DIR",
		Short: "One document about several runs: roles, per-label Δ against the baseline, resources, repeat spread, conclusions",
		Long: `Build one study document from several run directories listed in a study
file with their roles (baseline, candidate, repeat, configuration, soak) and
the study's context (description, system, environment, method, hypothesis).
The document has a runs table, per-label tables across all runs side by side
with Δ against the baseline and the significance verdict, CPU and memory per
monitored service across runs, the spread of repeats (mean ± sd, coefficient
of variation, outliers named) and one conclusions section; --notes merges
hand-written findings and recommendations (a Markdown file with
"## Findings" and "## Recommendations"). See docs/study.md.`,
		Example: `  plateau study study.yaml -o reports/release-1.5
  plateau study study.yaml -o out --notes notes.md --format html,md`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if outDir == "" {
				return fmt.Errorf("study: -o DIR is required")
			}
			f, err := study.Load(args[0])
			if err != nil {
				return fmt.Errorf("study: %w", err)
			}
			var n *study.Notes
			if notes != "" {
				if n, err = study.LoadNotes(notes); err != nil {
					return fmt.Errorf("study: %w", err)
				}
			}
			s, err := study.Build(f, n)
			if err != nil {
				return fmt.Errorf("study: %w", err)
			}
			if len(formats) == 0 {
				formats = []string{"html", "md", "json", "junit"}
			}
			files, err := study.Write(outDir, s, study.Document(s, time.Now(), strings.TrimSpace("plateau "+version())), formats)
			if err != nil {
				return fmt.Errorf("study: %w", err)
			}
			for _, c := range s.Conclusions {
				fmt.Fprintln(st.Stdout, c)
			}
			for _, f := range files {
				if !strings.HasSuffix(f, ".svg") {
					fmt.Fprintln(st.Stdout, f)
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "directory for study.html, study.md, study.json, study-junit.xml")
	cmd.Flags().StringVar(&notes, "notes", "", "Markdown file with ## Findings and ## Recommendations to merge into the conclusions")
	cmd.Flags().StringSliceVar(&formats, "format", nil, "formats to write: html, md, json, junit (comma-separated; default all)")
	return cmd
}
