package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/accesslog"
	"github.com/plateau-perf/plateau/internal/importer/dockerstats"
	"github.com/plateau-perf/plateau/internal/importer/gatling"
	"github.com/plateau-perf/plateau/internal/importer/jstat"
	"github.com/plateau-perf/plateau/internal/importer/jtl"
	"github.com/plateau-perf/plateau/internal/importer/k6"
	"github.com/plateau-perf/plateau/internal/importer/locust"
	"github.com/plateau-perf/plateau/internal/importer/vmstat"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// importFlags are the flags every import form shares.
type importFlags struct {
	out, name, phases, tz string
	phaseList             []core.Phase // phases given directly (a live run's server side)
	from, to              time.Time    // keep only requests completed within (a live run's server side)
	workers               int
	keepSamples           bool
	minPhase              time.Duration
	noDerive              bool
	bulk                  bool // from and to are the bulk of the data a first import found (importer.Run.Bulk)
}

// importInput is one typed input: TYPE:[NAME=]PATH[,key=value…].
type importInput struct {
	typ, name, path string
	opts            map[string]string
}

// importOpt is a per-input option of a source type; each is also a flag of
// that type's subcommand.
type importOpt struct{ key, usage string }

// importType builds a source of one type from an input.
type importType struct {
	short string
	opts  []importOpt
	build func(in importInput, clock importer.Clock) (importer.Source, error)
}

// importTypes maps source type names to their builders: the plugin map of
// `plateau import`.
func importTypes() map[string]importType {
	return map[string]importType{
		"jmeter": {
			short: "JMeter results (CSV JTL with a header, any columns and delimiter; XML JTL)",
			opts: []importOpt{{"workload", "workload name for the samples (default jmeter)"},
				{"delimiter", "CSV delimiter (default: detected from the header)"},
				{"columns", "header for a file written without one (timeStamp,elapsed,label,…)"},
				{"time-format", "timeStamp format: ms (default), or JMeter's timestamp_format pattern, e.g. 'yyyy/MM/dd HH:mm:ss.SSS'"},
				{"timestamp", "what timeStamp marks: start (JMeter's default) or end (sampleresult.timestamp.start=false)"}},
			build: buildJMeter,
		},
		"accesslog": {
			short: "web-server access logs with a duration field, one file per server",
			opts: []importOpt{{"server", "server name (default: the file name; NAME=PATH also sets it)"},
				{"format", "log format: a preset (" + strings.Join(accesslog.PresetNames(), ", ") + "), an nginx log_format string or an Apache LogFormat string"},
				{"external", "external-call log to join by message id (response time net of downstream calls)"},
				{"external-format", "format of the external-call log (default plateau_external)"},
				{"by-status", "true: one label per HTTP status (\"GET /a 200\")"},
				{"max-labels", "distinct labels per server before new paths are folded (default 200)"}},
			build: buildAccessLog,
		},
		"vmstat": {
			short: "vmstat output, with -t timestamps or with --start and --interval",
			opts: []importOpt{{"target", "host name in the report (default: the file name)"},
				{"start", "time of the first report (logs without -t), RFC 3339"},
				{"interval", "vmstat's delay (logs without -t), e.g. 10s"}},
			build: buildVmstat,
		},
		"dockerstats": {
			short: "docker stats: the CLI's table or --format '{{json .}}' lines (whole-run figures), or the Engine API stats stream (series)",
			opts: []importOpt{{"target", "container name in the report (default: the container's own; prefixes them when the file holds several)"},
				{"start", "time of the CLI table's first screen, RFC 3339 (with --interval: the table becomes time series)"},
				{"interval", "the interval the CLI table was written at (docker stats --no-stream in a loop), e.g. 10s"}},
			build: buildDockerStats,
		},
		"k6": {
			short: "k6 --out json stream or --out csv file (plain or gzipped), with its --summary-export as a side summary",
			opts: []importOpt{{"workload", "workload name for the samples (default k6; NAME=PATH also sets it)"},
				{"summary", "the run's --summary-export file: k6's whole-run figures, quoted next to the import's"}},
			build: buildK6,
		},
		"gatling": {
			short: "Gatling simulation.log (the text log of Gatling 2.x–3.11; plain or gzipped)",
			opts:  []importOpt{{"workload", "workload name for the samples (default gatling; NAME=PATH also sets it)"}},
			build: buildGatling,
		},
		"locust": {
			short: "Locust --csv results (PREFIX_stats.csv, _stats_history.csv, _failures.csv)",
			opts: []importOpt{{"workload", "workload name for the samples (default locust; NAME=PATH also sets it)"},
				{"start", "when the run started, for results without a stats history (default: the stats file's time minus the run's duration)"}},
			build: buildLocust,
		},
		"jstat": {
			short: "jstat -gc/-gcutil/-gccapacity output, with or without -t",
			opts: []importOpt{{"target", "JVM name in the report (default: the file name)"},
				{"jvm-start", "when the JVM started (with -t: time = JVM start + Timestamp)"},
				{"start", "time of the first sample (with -t instead of --jvm-start; without -t with --interval)"},
				{"interval", "jstat's interval (output without -t), e.g. 10s"}},
			build: buildJstat,
		},
	}
}

func newImportCmd(st *State) *cobra.Command {
	var f importFlags
	types := importTypes()
	c := &cobra.Command{
		Use:   "import [flags] TYPE:[NAME=]PATH[,key=value…]…",
		Short: "Build a run directory from JMeter, access-log, vmstat, jstat … files",
		Long: `Build a run directory from files other tools wrote, so that plateau report and
plateau compare work on them. Either one source type per command:

  plateau import jmeter results.jtl -o runs/old
  plateau import accesslog --format combined_rt web1=/logs/web1.log web2=/logs/web2.log -o runs/web

or several typed inputs in one run (per-input options after commas):

  plateau import -o runs/000 --tz Europe/Copenhagen --phases iterations.csv \
    jmeter:master.jtl \
    'accesslog:docker01=docker01/access.log,format=combined_rt,external=docker01/sla.log' \
    'vmstat:docker01=docker01/cpu.log,start=2019-05-13T11:09:36,interval=10s' \
    'jstat:docker01-lar=docker01/lar-jstat.log,start=2019-05-13T11:09:36'

Types: ` + strings.Join(sortedKeys(types), ", ") + `. See docs/import.md.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("import: no inputs (TYPE:PATH, or a type subcommand)")
			}
			var ins []importInput
			for _, a := range args {
				in, err := parseImportInput(a, types)
				if err != nil {
					return fmt.Errorf("import: %w", err)
				}
				ins = append(ins, in)
			}
			return runImport(cmd.Context(), st, f, ins, types)
		},
	}
	pf := c.PersistentFlags()
	pf.StringVarP(&f.out, "out", "o", "", "run directory to create (required)")
	pf.StringVar(&f.name, "name", "", "run name in the report (default: the directory name)")
	pf.StringVar(&f.phases, "phases", "", "phases CSV: name,start,end[,users] (e.g. reference 000's iteration table)")
	pf.StringVar(&f.tz, "tz", "", "time zone of times written without one: IANA name (Europe/Copenhagen), UTC or ±hh:mm")
	pf.IntVar(&f.workers, "workers", 0, "goroutines used to decode one file (default: all cores)")
	pf.BoolVar(&f.keepSamples, "keep-samples", false, "also copy every request sample to samples.jtl")
	pf.DurationVar(&f.minPhase, "min-phase", 30*time.Second, "shortest steady thread count that becomes a derived phase")
	pf.BoolVar(&f.noDerive, "no-derive-phases", false, "without --phases, do not derive phases from JMeter's allThreads")
	for _, name := range sortedKeys(types) {
		c.AddCommand(newImportTypeCmd(st, &f, name, types))
	}
	return c
}

// newImportTypeCmd is `plateau import TYPE FILE…`: every argument is an
// input of TYPE and the subcommand's flags are the per-input options.
func newImportTypeCmd(st *State, f *importFlags, typ string, types map[string]importType) *cobra.Command {
	t := types[typ]
	vals := map[string]*string{}
	c := &cobra.Command{
		Use:   typ + " [flags] [NAME=]PATH…",
		Short: t.short,
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ins []importInput
			for _, a := range args {
				in, err := parseImportInput(typ+":"+a, types)
				if err != nil {
					return fmt.Errorf("import %s: %w", typ, err)
				}
				for k, v := range vals {
					if _, set := in.opts[k]; !set && cmd.Flags().Changed(k) {
						in.opts[k] = *v
					}
				}
				ins = append(ins, in)
			}
			return runImport(cmd.Context(), st, *f, ins, types)
		},
	}
	for _, o := range t.opts {
		vals[o.key] = c.Flags().String(o.key, "", o.usage)
	}
	return c
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// parseImportInput parses TYPE:[NAME=]PATH[,key=value…]. Trailing
// ",key=value" pieces whose key is an option of TYPE are options; the rest is
// the path, so paths with commas still work.
func parseImportInput(arg string, types map[string]importType) (importInput, error) {
	typ, spec, ok := strings.Cut(arg, ":")
	t, known := types[typ]
	if !ok || !known {
		return importInput{}, fmt.Errorf("input %q: want TYPE:PATH with TYPE one of %s", arg, strings.Join(sortedKeys(types), ", "))
	}
	in := importInput{typ: typ, opts: map[string]string{}}
	parts := strings.Split(spec, ",")
	for len(parts) > 1 {
		k, v, ok := strings.Cut(parts[len(parts)-1], "=")
		if !ok || !hasOpt(t, k) {
			break
		}
		in.opts[k] = v
		parts = parts[:len(parts)-1]
	}
	// An option value may itself hold commas (a log format): a piece without
	// "=" that follows an option belongs to it. Options are rare enough
	// that the simple rule above is documented instead.
	in.path = strings.Join(parts, ",")
	if name, path, ok := strings.Cut(in.path, "="); ok && !strings.ContainsAny(name, "/\\") {
		if _, err := os.Stat(in.path); err != nil {
			in.name, in.path = name, path
		}
	}
	if in.path == "" {
		return in, fmt.Errorf("input %q: no path", arg)
	}
	return in, nil
}

func hasOpt(t importType, key string) bool {
	for _, o := range t.opts {
		if o.key == key {
			return true
		}
	}
	return false
}

func runImport(ctx context.Context, st *State, f importFlags, ins []importInput, types map[string]importType) error {
	if f.out == "" {
		return errors.New("import: no output directory: give -o DIR")
	}
	clock, err := importer.LoadClock(f.tz)
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	phases := f.phaseList
	if f.phases != "" {
		if phases, err = importer.ReadPhases(f.phases, clock); err != nil {
			return fmt.Errorf("import: %w", err)
		}
	}
	sources := make([]importer.Source, 0, len(ins))
	typs := make([]string, 0, len(ins))
	seen := map[string]string{} // source key → the argument that gave it first
	var dupNotes []string
	for _, in := range ins {
		if _, err := os.Stat(in.path); err != nil {
			return fmt.Errorf("import %s: %w", in.typ, err)
		}
		s, err := types[in.typ].build(in, clock)
		if err != nil {
			return fmt.Errorf("import %s %s: %w", in.typ, in.path, err)
		}
		key := importKey(in, s)
		if first, dup := seen[key]; dup {
			// One result set given file by file (Locust's stats, history
			// and failures files) or one file given twice: import it once.
			msg := fmt.Sprintf("%s %s is the same input as %s: imported once", in.typ, in.path, first)
			fmt.Fprintf(st.Stderr, "plateau import: %s\n", msg)
			dupNotes = append(dupNotes, msg)
			continue
		}
		seen[key] = in.path
		sources = append(sources, s)
		typs = append(typs, in.typ)
	}
	_, statErr := os.Stat(f.out)
	fresh := errors.Is(statErr, os.ErrNotExist)
	ents, _ := os.ReadDir(f.out)
	empty := statErr == nil && len(ents) == 0 // an empty directory given: all it will hold is the import's
	run, err := importer.NewRun(importer.Options{Dir: f.out, Name: f.name, Phases: phases, DerivePhases: !f.noDerive,
		MinPhase: f.minPhase, KeepSamples: f.keepSamples, Workers: f.workers, Clock: clock, From: f.from, To: f.to, Bulk: f.bulk,
		Command: append([]string{"plateau"}, st.Args...), Version: version(),
		Logf: func(format string, args ...any) { fmt.Fprintf(st.Stderr, "plateau import: "+format+"\n", args...) }})
	if err != nil {
		return fmt.Errorf("import: %w", err)
	}
	for _, n := range dupNotes {
		run.Note("%s", n)
	}
	var ierr error
	for i, s := range sources {
		if err := s.Import(ctx, run); err != nil {
			ierr = fmt.Errorf("import %s: %w", typs[i], err)
			break
		}
	}
	cerr := run.Close()
	if ierr != nil {
		// The problem log outlives a failed import: its malformed-line
		// summary is printed, and import.log is kept beside the run
		// directory that is removed.
		for _, l := range run.Problems().Summary() {
			fmt.Fprintf(st.Stderr, "plateau import: %s\n", l)
		}
		if fresh {
			kept := filepath.Clean(f.out) + ".import.log"
			if b, err := os.ReadFile(filepath.Join(f.out, rundir.ImportLogFile)); err == nil {
				if err := os.WriteFile(kept, b, 0o644); err == nil {
					fmt.Fprintf(st.Stderr, "plateau import: import failed; its log is kept in %s\n", kept)
				}
			}
			// Leave no half-built run behind for report or compare to read.
			_ = os.RemoveAll(f.out)
		}
		return ierr
	}
	if cerr != nil {
		return fmt.Errorf("import: %w", cerr)
	}
	if from, to, far, ok := run.Bulk(); ok && (fresh || empty) && f.from.IsZero() && f.to.IsZero() {
		// A few requests far from all the others (a stray clock): made
		// again without them, so they count nowhere (docs/import.md).
		fmt.Fprintf(st.Stderr, "plateau import: %s far from the bulk of the data (%s – %s); importing again without them\n",
			farCount(far), from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339))
		if err := emptyDir(f.out); err != nil {
			return fmt.Errorf("import: %w", err)
		}
		f.from, f.to, f.bulk = from, to, true
		return runImport(ctx, st, f, ins, types)
	}
	if n := run.Problems().Total(); n > 0 {
		fmt.Fprintf(st.Stderr, "plateau import: %d malformed lines skipped; see %s/import.log\n", n, f.out)
	}
	if n := run.Implausible(); n > 0 {
		fmt.Fprintf(st.Stderr, "plateau import: %d implausible samples or readings left out by the implausible-times rule (docs/import.md); see %s/import.log\n", n, f.out)
	}
	fmt.Fprintf(st.Stderr, "plateau import: wrote %s (plateau report %s)\n", f.out, f.out)
	return nil
}

// farCount is "1 request lies" or "N requests lie".
func farCount(n int64) string {
	if n == 1 {
		return "1 request lies"
	}
	return fmt.Sprintf("%d requests lie", n)
}

// emptyDir removes everything in dir, keeping dir.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

// importKey identifies what an input reads: the source's own key when it
// reads a set of files (importer.Keyed), else its type and absolute path.
func importKey(in importInput, s importer.Source) string {
	if k, ok := s.(importer.Keyed); ok {
		return k.Key()
	}
	p, err := filepath.Abs(in.path)
	if err != nil {
		p = in.path
	}
	return in.typ + ":" + p
}

func optTime(in importInput, key string, clock importer.Clock) (time.Time, error) {
	v := in.opts[key]
	if v == "" {
		return time.Time{}, nil
	}
	return importer.ParseTimeFlag(v, clock, "--"+key)
}

func optDuration(in importInput, key string) (time.Duration, error) {
	v := in.opts[key]
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("--%s %q: want a duration such as 10s", key, v)
	}
	return d, nil
}

func buildJMeter(in importInput, clock importer.Clock) (importer.Source, error) {
	cfg := jtl.Config{Path: in.path, Workload: in.opts["workload"], Columns: in.opts["columns"], TimeFormat: in.opts["time-format"]}
	if in.name != "" && cfg.Workload == "" {
		cfg.Workload = in.name
	}
	switch d := in.opts["delimiter"]; {
	case d == "":
	case d == `\t` || d == "tab":
		cfg.Delimiter = '\t'
	case len(d) == 1:
		cfg.Delimiter = d[0]
	default:
		return nil, fmt.Errorf("--delimiter %q: want one character", d)
	}
	switch in.opts["timestamp"] {
	case "", "start":
	case "end":
		cfg.TimestampEnd = true
	default:
		return nil, fmt.Errorf("--timestamp %q: want start or end", in.opts["timestamp"])
	}
	if cfg.TimeFormat != "" {
		if _, err := importer.NewTimeParser(cfg.TimeFormat, clock); err != nil {
			return nil, err
		}
	}
	return jtl.New(cfg), nil
}

func buildAccessLog(in importInput, clock importer.Clock) (importer.Source, error) {
	cfg := accesslog.Config{Path: in.path, Server: in.opts["server"], Format: in.opts["format"],
		External: in.opts["external"], ExternalFormat: in.opts["external-format"]}
	if cfg.Server == "" {
		cfg.Server = in.name
	}
	if v := in.opts["by-status"]; v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("--by-status %q: want true or false", v)
		}
		cfg.ByStatus = b
	}
	if v := in.opts["max-labels"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--max-labels %q: want a positive count", v)
		}
		cfg.MaxLabels = n
	}
	return accesslog.New(cfg)
}

func buildVmstat(in importInput, clock importer.Clock) (importer.Source, error) {
	cfg := vmstat.Config{Path: in.path, Target: in.opts["target"]}
	if cfg.Target == "" {
		cfg.Target = in.name
	}
	var err error
	if cfg.Start, err = optTime(in, "start", clock); err != nil {
		return nil, err
	}
	if cfg.Interval, err = optDuration(in, "interval"); err != nil {
		return nil, err
	}
	return vmstat.New(cfg), nil
}

func buildJstat(in importInput, clock importer.Clock) (importer.Source, error) {
	cfg := jstat.Config{Path: in.path, Target: in.opts["target"]}
	if cfg.Target == "" {
		cfg.Target = in.name
	}
	var err error
	if cfg.Start, err = optTime(in, "start", clock); err != nil {
		return nil, err
	}
	if cfg.JVMStart, err = optTime(in, "jvm-start", clock); err != nil {
		return nil, err
	}
	if cfg.Interval, err = optDuration(in, "interval"); err != nil {
		return nil, err
	}
	return jstat.New(cfg), nil
}

func buildK6(in importInput, _ importer.Clock) (importer.Source, error) {
	cfg := k6.Config{Path: in.path, Workload: in.opts["workload"], Summary: in.opts["summary"]}
	if cfg.Workload == "" {
		cfg.Workload = in.name
	}
	return k6.New(cfg), nil
}

func buildGatling(in importInput, _ importer.Clock) (importer.Source, error) {
	cfg := gatling.Config{Path: in.path, Workload: in.opts["workload"]}
	if cfg.Workload == "" && in.name != "" {
		cfg.Workload = in.name
	}
	return gatling.New(cfg), nil
}

func buildLocust(in importInput, clock importer.Clock) (importer.Source, error) {
	cfg := locust.Config{Path: in.path, Workload: in.opts["workload"]}
	if cfg.Workload == "" {
		cfg.Workload = in.name
	}
	var err error
	if cfg.Start, err = optTime(in, "start", clock); err != nil {
		return nil, err
	}
	return locust.New(cfg), nil
}

func buildDockerStats(in importInput, clock importer.Clock) (importer.Source, error) {
	cfg := dockerstats.Config{Path: in.path, Target: in.opts["target"]}
	if cfg.Target == "" {
		cfg.Target = in.name
	}
	var err error
	if cfg.Start, err = optTime(in, "start", clock); err != nil {
		return nil, err
	}
	if cfg.Interval, err = optDuration(in, "interval"); err != nil {
		return nil, err
	}
	if cfg.Start.IsZero() != (cfg.Interval == 0) {
		return nil, fmt.Errorf("--start and --interval go together: the CLI table's screen k is at start + k × interval")
	}
	return dockerstats.New(cfg), nil
}
