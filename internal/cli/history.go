package cli

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/history"
	"github.com/plateau-perf/plateau/internal/history/historydoc"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/report"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// historyDBEnv names the environment variable that sets the default store
// of every history command, --history and a plan's history: key.
const historyDBEnv = "PLATEAU_HISTORY_DB"

// defaultHistoryDB is the store used when no --db is given: $PLATEAU_HISTORY_DB,
// else history.db in plateau's directory under the user's data directory —
// $XDG_DATA_HOME or ~/.local/share on Linux and other Unix systems,
// ~/Library/Application Support on macOS, %LocalAppData% on Windows.
func defaultHistoryDB(st *State) (string, error) {
	if v, ok := st.Getenv(historyDBEnv); ok && v != "" {
		return v, nil
	}
	get := func(k string) string { v, _ := st.Getenv(k); return v }
	var base string
	switch runtime.GOOS {
	case "windows":
		base = get("LocalAppData")
		if base == "" {
			base = get("LOCALAPPDATA")
		}
	case "darwin":
		if h := get("HOME"); h != "" {
			base = filepath.Join(h, "Library", "Application Support")
		}
	default:
		base = get("XDG_DATA_HOME")
		if base == "" || !filepath.IsAbs(base) {
			base = ""
			if h := get("HOME"); h != "" {
				base = filepath.Join(h, ".local", "share")
			}
		}
	}
	if base == "" {
		return "", fmt.Errorf("no user data directory (HOME is not set): give --db or $%s", historyDBEnv)
	}
	return filepath.Join(base, "plateau", "history.db"), nil
}

// historyFlags are the flags the history subcommands share.
type historyFlags struct {
	db    string
	plan  string
	label string
	since string
	tags  []string
}

func (f *historyFlags) open(ctx context.Context, st *State) (*history.Store, error) {
	db := f.db
	if db == "" {
		var err error
		if db, err = defaultHistoryDB(st); err != nil {
			return nil, err
		}
	}
	return history.Open(ctx, db)
}

// filter builds the run selection of the flags.
func (f *historyFlags) filter(now time.Time) (history.Filter, error) {
	flt := history.Filter{Plan: f.plan}
	if f.since != "" {
		t, err := parseSince(f.since, now)
		if err != nil {
			return flt, err
		}
		flt.Since = t
	}
	if len(f.tags) > 0 {
		tags, err := history.ParseTags(f.tags)
		if err != nil {
			return flt, err
		}
		flt.Tags = tags
	}
	return flt, nil
}

// parseSince reads --since: an RFC 3339 time, a date (UTC midnight), or
// an age such as 72h or 30d.
func parseSince(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(d, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("--since %q is not a time (2026-11-01, 2026-11-01T10:00:00Z) or an age (72h, 30d)", s)
}

func (f *historyFlags) register(c *cobra.Command, selection bool) {
	c.Flags().StringVar(&f.db, "db", "", "the results store: an SQLite file or a postgres:// URL (default $"+historyDBEnv+", else history.db in plateau's user data directory, e.g. ~/.local/share/plateau)")
	if !selection {
		return
	}
	c.Flags().StringVar(&f.plan, "plan", "", "only runs of this plan (by name)")
	c.Flags().StringVar(&f.since, "since", "", "only runs started since this time (2026-11-01, RFC 3339) or within this age (72h, 30d)")
	c.Flags().StringArrayVar(&f.tags, "tag", nil, "only runs with this tag, key=value (repeatable: all must match)")
}

func newHistoryCmd(st *State) *cobra.Command {
	c := &cobra.Command{
		Use:   "history",
		Short: "Remember runs in a results store; trends and change points across releases",
		Long: `Every run remembered: add run directories to a results store (an SQLite file by
default, or PostgreSQL for a team), then see each figure across the runs — a label's
p95 and mean per phase, throughput, error %, capacity, a service's CPU per request —
with the points where it changed level found for you (E-Divisive means with a
permutation test, as Apache Otava), and a CI check of the latest run against the
last stable segment. Tables and queries for Grafana: docs/history.md.`,
	}
	c.AddCommand(newHistoryAddCmd(st), newHistoryShowCmd(st), newHistoryReportCmd(st), newHistoryCheckCmd(st))
	return c
}

func newHistoryAddCmd(st *State) *cobra.Command {
	var f historyFlags
	var tags []string
	c := &cobra.Command{
		Use:   "add RUN_DIR…",
		Short: "Add run directories to the results store (a run added twice is stored once)",
		Long: `Add run directories to the results store: the run's metadata (plan, start, tags,
the plan's context keys), its per-label and per-phase figures, SLA verdicts, capacity
and per-service resources, read from run.json and summary.json. The run directory is
not needed afterwards. A run already stored (the same run.json id) is not stored
again; --tag values given again are merged into its tags. Tags whose names are
secret (token, password, …) are stored masked.`,
		Example: `  plateau history add runs/checkout-20261101T100000Z --tag release=ramsons --tag build=1432
  plateau history add runs/* --db postgres://perf@db.example/history`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			tagMap, err := history.ParseTags(tags)
			if err != nil {
				return fmt.Errorf("history add: %w", err)
			}
			s, err := f.open(cmd.Context(), st)
			if err != nil {
				return fmt.Errorf("history add: %w", err)
			}
			var errs []error
			var plans []string
			locs := map[string]*locale.Locale{} // each plan's runs' language
			for _, dir := range args {
				added, r, err := addRun(cmd.Context(), s, dir, tagMap)
				// Each line in the language of the run it is about.
				loc := runDirLoc(dir)
				switch {
				case err != nil:
					errs = append(errs, err)
				case added:
					plans = append(plans, r.Plan)
					locs[r.Plan] = loc
					fmt.Fprint(st.Stdout, loc.T("added %s (run %s) to %s\n", dir, r.ID, s.Where()))
				default:
					fmt.Fprint(st.Stdout, loc.T("already stored: %s (run %s); tags merged\n", dir, r.ID))
				}
			}
			// The stored change points, once per plan for all the runs added.
			if err := refreshChangePoints(cmd.Context(), st.Stdout, s, plans, locs); err != nil {
				errs = append(errs, err)
			}
			if err := s.Close(); err != nil {
				errs = append(errs, err)
			}
			if err := errors.Join(errs...); err != nil {
				return fmt.Errorf("history add: %w", err)
			}
			return nil
		},
	}
	f.register(c, false)
	c.Flags().StringArrayVar(&tags, "tag", nil, "tag the runs, key=value, e.g. release=ramsons, build=1432, environment=staging (repeatable)")
	return c
}

// addRun reads one run directory and adds it.
func addRun(ctx context.Context, s *history.Store, dir string, tags map[string]string) (bool, *history.Run, error) {
	r, err := history.FromDir(dir, tags)
	if err != nil {
		return false, nil, err
	}
	added, err := s.Add(ctx, r, time.Now())
	return added, r, err
}

// refreshChangePoints recomputes the stored change points of the plans
// whose runs changed, and says so.
func refreshChangePoints(ctx context.Context, w io.Writer, s *history.Store, plans []string, locs map[string]*locale.Locale) error {
	done, err := s.RefreshChangePoints(ctx, plans...)
	for _, p := range slices.Sorted(maps.Keys(done)) {
		fmt.Fprint(w, locs[p].T("change points of plan %q: %d stored\n", p, done[p]))
	}
	return err
}

// runDirLoc is the language a run directory's plan chose (run.json's
// context.lang): English when it chose none or the run cannot be read.
func runDirLoc(dir string) *locale.Locale {
	info, err := rundir.ReadInfo(dir)
	if err != nil {
		return nil
	}
	loc, _ := report.Lang("", info.Context)
	return loc
}

func newHistoryShowCmd(st *State) *cobra.Command {
	var f historyFlags
	c := &cobra.Command{
		Use:   "show",
		Short: "List the stored runs with their tags and a label's figures",
		Example: `  plateau history show
  plateau history show --label checkout --since 30d --tag environment=staging`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flt, err := f.filter(time.Now())
			if err != nil {
				return fmt.Errorf("history show: %w", err)
			}
			s, err := f.open(cmd.Context(), st)
			if err != nil {
				return fmt.Errorf("history show: %w", err)
			}
			defer s.Close()
			runs, err := s.Runs(cmd.Context(), flt)
			if err != nil {
				return fmt.Errorf("history show: %w", err)
			}
			// A store written before change points were stored (or by
			// another tool) gets them now; otherwise they are read as
			// stored.
			var plans []string
			for _, r := range runs {
				plans = append(plans, r.Plan)
			}
			if _, err := s.RefreshChangePoints(cmd.Context(), plans...); err != nil {
				// a role that may only read (as Grafana's) shows what is
				// stored.
				fmt.Fprintf(st.Stderr, "plateau: history show: %v; the change points shown are those stored\n", err)
			}
			cps, err := s.ChangePoints(cmd.Context(), flt)
			if err != nil {
				return fmt.Errorf("history show: %w", err)
			}
			return history.Show(st.Stdout, runs, f.label, cps)
		},
	}
	f.register(c, true)
	c.Flags().StringVar(&f.label, "label", "", "show this label's figures (default TOTAL, all requests)")
	return c
}

// analysisFlags tune the change points and the latest run's judgement.
type analysisFlags struct {
	alpha, minChange, threshold float64
	seed                        uint64
}

func (a *analysisFlags) register(c *cobra.Command) {
	c.Flags().Float64Var(&a.alpha, "alpha", history.DefaultAlpha, "significance level of change points and of the latest run's judgement")
	c.Flags().Float64Var(&a.minChange, "min-change", history.DefaultMinChangePct, "minimum effect of a change point, in percent of the mean")
	c.Flags().Float64Var(&a.threshold, "threshold", history.DefaultThresholdPct, "how much worse than the last stable segment the latest run must be, in percent, to fail")
	c.Flags().Uint64Var(&a.seed, "seed", 1, "seed of the permutation tests (a report is reproducible)")
}

func (a *analysisFlags) options(label string) (history.Options, error) {
	if !(a.alpha > 0 && a.alpha < 1) {
		return history.Options{}, fmt.Errorf("--alpha %v is not in (0, 1)", a.alpha)
	}
	if a.threshold < 0 {
		return history.Options{}, fmt.Errorf("--threshold %v is negative", a.threshold)
	}
	minChange := a.minChange
	if minChange == 0 {
		minChange = -1 // every significant change
	}
	return history.Options{Alpha: a.alpha, MinChangePct: minChange, ThresholdPct: a.threshold, Seed: a.seed, Label: label}, nil
}

// selectRuns reads the runs of the flags, one plan's: --plan, else the plan
// of the most recently started run of the selection.
func selectRuns(ctx context.Context, st *State, f *historyFlags) ([]*history.Run, error) {
	flt, err := f.filter(time.Now())
	if err != nil {
		return nil, err
	}
	s, err := f.open(ctx, st)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	runs, err := s.Runs(ctx, flt)
	if err != nil {
		return nil, err
	}
	if flt.Plan == "" && len(runs) > 0 {
		latest := runs[len(runs)-1].Plan
		kept := runs[:0]
		for _, r := range runs {
			if r.Plan == latest {
				kept = append(kept, r)
			}
		}
		runs = kept
	}
	return runs, nil
}

func newHistoryReportCmd(st *State) *cobra.Command {
	var f historyFlags
	var a analysisFlags
	var out, lang string
	c := &cobra.Command{
		Use:   "report -o DIR",
		Short: "Write the history report: every series over the runs, its change points, the latest run",
		Long: `Write history.html and history.md (charts under history-charts/) and history.json into
DIR: per series a chart over the runs with releases (the release tag) shaded and change
points drawn, a table of the change points with the means before and after and their
significance, and the latest run against the last stable segment. One plan's runs:
--plan, else the plan of the most recent run.`,
		Example: `  plateau history report -o reports/history
  plateau history report -o reports/checkout --plan checkout --since 90d`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt, err := a.options(f.label)
			if err != nil {
				return fmt.Errorf("history report: %w", err)
			}
			runs, err := selectRuns(cmd.Context(), st, &f)
			if err != nil {
				return fmt.Errorf("history report: %w", err)
			}
			an, err := history.Analyze(runs, opt)
			if err != nil {
				return fmt.Errorf("history report: %w", err)
			}
			loc, err := locale.Parse(lang)
			if err != nil {
				return fmt.Errorf("history report: --lang: %w", err)
			}
			d := historydoc.BuildIn(an, runs, "plateau "+version(), time.Now(), loc)
			files, err := historydoc.Write(out, d, an)
			if err != nil {
				return fmt.Errorf("history report: %w", err)
			}
			for _, p := range files {
				if !strings.HasSuffix(p, ".svg") {
					fmt.Fprintln(st.Stdout, p)
				}
			}
			return nil
		},
	}
	f.register(c, true)
	a.register(c)
	c.Flags().StringVar(&f.label, "label", "", "only this label's series")
	c.Flags().StringVar(&lang, "lang", "", "language of history.html and history.md: "+strings.Join(locale.Names(), ", ")+" (default en)")
	c.Flags().StringVarP(&out, "out", "o", "", "directory to write the report into (required)")
	_ = c.MarkFlagRequired("out")
	return c
}

func newHistoryCheckCmd(st *State) *cobra.Command {
	var f historyFlags
	var a analysisFlags
	var junitPath string
	c := &cobra.Command{
		Use:   "check",
		Short: "For CI: exit 1 when the latest run is significantly worse than the last stable segment",
		Long: `Judge the latest run of a plan against the last stable segment of the runs before it,
series by series: it fails (exit status 1) when a series is significantly worse
(outside the segment's run-to-run spread at --alpha) by more than --threshold
percent. Each run holds thousands of samples, so one run is enough to judge.
--junit FILE writes one test case per series.`,
		Example: `  plateau run plan.yaml --history ci-history.db && plateau history check --db ci-history.db --junit history.xml`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opt, err := a.options(f.label)
			if err != nil {
				return fmt.Errorf("history check: %w", err)
			}
			runs, err := selectRuns(cmd.Context(), st, &f)
			if err != nil {
				return fmt.Errorf("history check: %w", err)
			}
			an, err := history.Analyze(runs, opt)
			if err != nil {
				return fmt.Errorf("history check: %w", err)
			}
			if junitPath != "" {
				if err := writeHistoryJUnit(junitPath, an, runs); err != nil {
					return fmt.Errorf("history check: %w", err)
				}
			}
			return printHistoryCheck(st.Stdout, an, runs)
		},
	}
	f.register(c, true)
	a.register(c)
	c.Flags().StringVar(&f.label, "label", "", "only this label's series")
	c.Flags().StringVar(&junitPath, "junit", "", "write a JUnit XML file: one test case per series")
	return c
}

// printHistoryCheck prints the check's outcome and returns ErrSLAFailed
// when a series is worse.
func printHistoryCheck(w io.Writer, a *history.Analysis, runs []*history.Run) error {
	var comparable []*history.Run
	for _, r := range runs {
		if history.Comparable(r) {
			comparable = append(comparable, r)
		}
	}
	if len(comparable) < 2 {
		what := "no run stored"
		switch {
		case len(comparable) == 1:
			what = "one comparable run stored for " + comparable[0].Plan
		case len(runs) > 0:
			what = "no comparable run stored (interrupted, or no request succeeded)"
		}
		fmt.Fprintf(w, "history check: %s, nothing to compare the latest with: passed\n", what)
		return nil
	}
	latest := comparable[len(comparable)-1]
	worse := a.Worse()
	for _, s := range worse {
		j := s.Latest
		fmt.Fprintf(w, "WORSE  %s: %s against the median %s ± %s of runs %d–%d (%+.1f %%, p = %.3g)\n", s.Name, fmtFloat(j.Value), fmtFloat(j.SegmentMedian),
			fmtFloat(j.SegmentSpread), s.Points[j.SegmentFrom].Run+1, s.Points[j.SegmentTo-1].Run+1, j.ChangePct, j.PValue)
	}
	if len(worse) > 0 {
		fmt.Fprintf(w, "history check: the latest run of %s (%s, %s) is significantly worse than the last stable segment in %d of %d series (threshold %g %%, alpha %g)\n",
			latest.Plan, latest.ID, latest.Start.Format(time.RFC3339), len(worse), len(a.Series), a.Options.ThresholdPct, a.Options.Alpha)
		return ErrSLAFailed
	}
	fmt.Fprintf(w, "history check: the latest run of %s (%s, %s) is not significantly worse than the last stable segment in any of %d series: passed\n",
		latest.Plan, latest.ID, latest.Start.Format(time.RFC3339), len(a.Series))
	return nil
}

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

// JUnit layout of history check.
type hjSuites struct {
	XMLName  xml.Name  `xml:"testsuites"`
	Name     string    `xml:"name,attr"`
	Tests    int       `xml:"tests,attr"`
	Failures int       `xml:"failures,attr"`
	Suites   []hjSuite `xml:"testsuite"`
}

type hjSuite struct {
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Cases    []hjCase `xml:"testcase"`
}

type hjCase struct {
	Name      string     `xml:"name,attr"`
	Classname string     `xml:"classname,attr"`
	Failure   *hjFailure `xml:"failure,omitempty"`
	SystemOut string     `xml:"system-out,omitempty"`
}

type hjFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

func writeHistoryJUnit(path string, a *history.Analysis, runs []*history.Run) error {
	plan := "history"
	if len(runs) > 0 {
		plan = runs[len(runs)-1].Plan
	}
	s := hjSuite{Name: "plateau history check: " + plan}
	for _, ser := range a.Series {
		j := ser.Latest
		if j == nil {
			continue
		}
		c := hjCase{Name: ser.Name, Classname: "history." + plan}
		desc := fmt.Sprintf("latest %s against the last stable segment's median %s ± %s (runs %d–%d): %+.1f %%, p = %.3g",
			fmtFloat(j.Value), fmtFloat(j.SegmentMedian), fmtFloat(j.SegmentSpread), ser.Points[j.SegmentFrom].Run+1, ser.Points[j.SegmentTo-1].Run+1, j.ChangePct, j.PValue)
		if j.Worse {
			c.Failure = &hjFailure{Message: "significantly worse than the last stable segment", Type: "regression", Text: desc}
			s.Failures++
		} else {
			c.SystemOut = desc
		}
		s.Cases = append(s.Cases, c)
		s.Tests++
	}
	doc := hjSuites{Name: "plateau history check", Tests: s.Tests, Failures: s.Failures, Suites: []hjSuite{s}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding junit: %w", err)
	}
	if err := rundir.WriteFileAtomic(path, append([]byte(xml.Header), append(b, '\n')...)); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// addToHistory adds a finished run to the store --history or the plan's
// history: key names (flag first), with the plan's tags. A failure is
// reported, not fatal: the run and its report stand, and plateau history
// add can add it later.
func addToHistory(ctx context.Context, st *State, dir, flagDB string, h *plan.History, loc *locale.Locale) {
	if flagDB == "" && h == nil {
		return
	}
	db := flagDB
	var tags map[string]string
	if h != nil {
		tags = h.Tags
		if db == "" {
			db = h.DB
		}
	}
	if db == "" {
		var err error
		if db, err = defaultHistoryDB(st); err != nil {
			fmt.Fprintf(st.Stderr, "plateau: history: %v\n", err)
			return
		}
	}
	s, err := history.Open(ctx, db)
	if err != nil {
		fmt.Fprintf(st.Stderr, "plateau: %v (add it later with plateau history add %s)\n", err, dir)
		return
	}
	added, r, err := addRun(ctx, s, dir, tags)
	var cpErr error
	var done map[string]int
	if err == nil && added {
		done, cpErr = s.RefreshChangePoints(ctx, r.Plan)
	}
	err = errors.Join(err, s.Close())
	switch {
	case err != nil:
		fmt.Fprintf(st.Stderr, "plateau: history: %v (add it later with plateau history add %s)\n", err, dir)
	case added:
		fmt.Fprint(st.Stdout, loc.T("history:       run %s added to %s\n", r.ID, s.Where()))
	default:
		fmt.Fprint(st.Stdout, loc.T("history:       run %s already in %s\n", r.ID, s.Where()))
	}
	switch {
	case cpErr != nil:
		fmt.Fprintf(st.Stderr, "plateau: history: %v (plateau history show recomputes them)\n", cpErr)
	case added && err == nil:
		fmt.Fprint(st.Stdout, loc.T("history:       %d change points stored for plan %q\n", done[r.Plan], r.Plan))
	}
}
