package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/study"
)

// newStudyCmd is `plateau study STUDY.yaml -o DIR`: several run
// directories with roles become one study document.
func newStudyCmd(st *State) *cobra.Command {
	var (
		outDir, notes, lang string
		formats             []string
	)
	cmd := &cobra.Command{
		Use:   "study STUDY.yaml -o DIR",
		Short: "One document about several runs that answers the study's questions: a status, one answer per question, the tables behind them",
		Long: `Build one study document from several run directories listed in a study
file with their roles (baseline, candidate, repeat, configuration, soak) and
the study's context (description, system, environment, method, hypothesis).
The runs carry the factors they vary (release, workload, config, repeat,
users, rate) and the study names its questions (release, capacity,
configurations, repeatability, soak, interference), each with its
expectation; without questions they are inferred from the runs. The
document opens with the study status (PASSED, FAILED or INCONCLUSIVE, with
why) and one answer per question; runs are compared only within their group
(same workload and load). The console prints the same, and the exit code
follows the status: 0 passed, 1 failed, 3 inconclusive, 2 on error.
--notes merges hand-written findings and recommendations (a Markdown file
with "## Findings" and "## Recommendations"). See docs/study.md.`,
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
			if lang != "" {
				// --lang over the study file's lang:.
				if err := locale.Check(lang); err != nil {
					return fmt.Errorf("study: --lang: %w", err)
				}
				f.Lang = lang
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
			for _, f := range files {
				if !strings.HasSuffix(f, ".svg") {
					fmt.Fprintln(st.Stdout, f)
				}
			}
			printStudy(st.Stdout, s)
			return studyErr(s)
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", "", "directory for study.html, study.md, study.json, study-junit.xml")
	cmd.Flags().StringVar(&lang, "lang", "", "language of the study document: "+strings.Join(locale.Names(), ", ")+" (default: the study file's lang:, else en)")
	cmd.Flags().StringVar(&notes, "notes", "", "Markdown file with ## Findings and ## Recommendations to merge into the conclusions")
	cmd.Flags().StringSliceVar(&formats, "format", nil, "formats to write: html, md, json, junit (comma-separated; default all)")
	return cmd
}

// printStudy prints a study's status and one line per answer, as the
// document opens.
func printStudy(w io.Writer, s *study.Study) {
	loc := s.Locale()
	fmt.Fprint(w, loc.T("\nstudy status: %s — %s\n", s.OutcomeWord(s.Status), s.StatusWhy))
	for _, a := range s.Answers {
		kind := string(a.Question.Kind) // English: the study file's own word
		if !loc.English() {
			kind = s.KindWord(a.Question.Kind)
		}
		fmt.Fprintf(w, "  %-12s %s: %s\n", s.OutcomeWord(a.Outcome), kind, a.Line)
		if a.ConfidenceWhy != "" {
			fmt.Fprintf(w, "  %-12s %s\n", "", loc.T("confidence %s: %s", a.Confidence, a.ConfidenceWhy))
		}
	}
}

// studyErr maps the study's status to the exit code as a run's test
// status does: failed exits 1, inconclusive as a run whose load was not
// held.
func studyErr(s *study.Study) error {
	switch s.Status {
	case study.Failed:
		return ErrSLAFailed
	case study.Inconclusive:
		return &notHeldError{verdict: "inconclusive", why: s.StatusWhy}
	}
	return nil
}
