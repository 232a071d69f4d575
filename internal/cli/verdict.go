package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/report"
)

// notHeldError is a run that was done but does not show what its plan asked
// for: the load was not applied (invalid) or the run was interrupted. It
// exits ExitNotHeld.
type notHeldError struct{ verdict, why string }

func (e *notHeldError) Error() string { return e.verdict + ": " + e.why }

// verdictErr maps a summary's test status to the error (and so the exit
// code) of run, report and merge.
func verdictErr(s *analysis.Summary) error {
	why := strings.Join(s.VerdictReasons, "; ")
	switch s.Verdict {
	case analysis.VerdictPassed, analysis.VerdictNoRequirements:
		return nil
	case analysis.VerdictFailed:
		return ErrSLAFailed
	case analysis.VerdictInvalid, analysis.VerdictInterrupted:
		return &notHeldError{verdict: s.Verdict, why: why}
	case analysis.VerdictNotRun:
		return errors.New("no request succeeded: " + why)
	}
	return fmt.Errorf("unknown test status %q", s.Verdict)
}

// statusText is the console's name of a test status.
func statusText(verdict string) string {
	return strings.ToUpper(verdict)
}

// statusWord is a test status as the console of a run in loc's language
// writes it ("PASSED", "BESTÅET").
func statusWord(verdict string, loc *locale.Locale) string {
	switch verdict {
	case analysis.VerdictPassed:
		return loc.Word("PASSED")
	case analysis.VerdictFailed:
		return loc.Word("FAILED")
	case analysis.VerdictNoRequirements:
		return loc.Word("NO REQUIREMENTS")
	case analysis.VerdictInvalid:
		return loc.Word("INVALID")
	case analysis.VerdictInterrupted:
		return loc.Word("INTERRUPTED")
	case analysis.VerdictNotRun:
		return loc.Word("COULD NOT RUN")
	}
	return statusText(verdict)
}

// printVerdict prints the console's last lines: the validity of the load
// first, then the error rate, then the test status and why — in the
// run's language (loc; nil is English).
func printVerdict(w io.Writer, s *analysis.Summary, loc *locale.Locale) {
	fmt.Fprintln(w)
	if v := s.Validity; v != nil {
		if v.Verdict == "invalid" {
			fmt.Fprintln(w, loc.Word("load: NOT HELD"))
			for _, r := range v.Reasons {
				fmt.Fprintf(w, "  %s\n", r)
			}
		} else if line := heldLine(v, loc); line != "" {
			fmt.Fprint(w, loc.T("load: held (%s)\n", line))
		}
		for _, f := range report.WarningsIn(v, loc) {
			fmt.Fprint(w, loc.T("  warning: %s\n", f.Text))
		}
	}
	var total, errs int64
	for _, l := range s.Labels {
		if l.Label == core.TotalLabel {
			total, errs = l.Samples, l.Errors
		}
	}
	if total > 0 {
		fmt.Fprint(w, loc.T("errors: %.2f%% (%d of %d requests)\n", 100*float64(errs)/float64(total), errs, total))
	}
	fmt.Fprint(w, loc.T("test status: %s", statusWord(s.Verdict, loc)))
	switch s.Verdict {
	case analysis.VerdictNoRequirements:
		fmt.Fprint(w, loc.Word(" — the plan states no SLA, so nothing was judged"))
	case analysis.VerdictPassed:
		fmt.Fprint(w, loc.T(" — %d of %d requirements held", len(s.SLA), len(s.SLA)))
	case analysis.VerdictFailed:
		broken := 0
		for _, r := range s.SLA {
			if !r.Passed {
				broken++
			}
		}
		fmt.Fprint(w, loc.T(" — %d of %d requirements broken", broken, len(s.SLA)))
	case analysis.VerdictInterrupted, analysis.VerdictNotRun:
		if len(s.VerdictReasons) > 0 {
			fmt.Fprint(w, " — "+s.VerdictReasons[0])
		}
	case analysis.VerdictInvalid:
		fmt.Fprint(w, loc.Word(" — the planned load was not applied, so the results do not show the plan's load"))
	}
	fmt.Fprintln(w)
}

// heldLine summarises the open-model phases that held their rate.
func heldLine(v *analysis.Validity, loc *locale.Locale) string {
	var planned, started int64
	for _, p := range v.Phases {
		planned += p.Planned
		started += p.Started
	}
	if planned == 0 {
		return ""
	}
	return loc.T("%d of %d planned iterations started, %d dropped", started, planned, v.Dropped)
}
