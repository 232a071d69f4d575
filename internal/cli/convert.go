package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/har"
	"github.com/plateau-perf/plateau/internal/convert/jmeter"
	"github.com/plateau-perf/plateau/internal/convert/k6"
	"github.com/plateau-perf/plateau/internal/convert/postman"
)

// convertOptions are the flags of plateau convert.
type convertOptions struct {
	out, report string
	keepAssets  bool
	// hosts, from and to filter a HAR's entries by host and time window.
	hosts    []string
	from, to string
	// environment and globals are Postman's --environment and --globals
	// files; workingDir its --working-dir.
	environment, globals, workingDir string
}

// converter turns one source file into a plan and its conversion report.
type converter struct {
	short string
	run   func(path string, src []byte, o convertOptions) (*convert.Plan, *convert.Report, error)
	// streams: run reads path itself (src is nil), in bounded memory.
	streams bool
}

// converters is the plugin map of plateau convert.
func converters() map[string]converter {
	return map[string]converter{
		"jmeter": {
			short: "a JMeter test plan (.jmx)",
			run: func(path string, src []byte, _ convertOptions) (*convert.Plan, *convert.Report, error) {
				root, err := jmeter.Parse(bytes.NewReader(src))
				if err != nil {
					return nil, nil, err
				}
				p, r := jmeter.Convert(root, jmeter.Options{Source: path})
				return p, r, nil
			},
		},
		"har": {
			short:   "a browser recording (HAR 1.2)",
			streams: true,
			run: func(path string, _ []byte, o convertOptions) (*convert.Plan, *convert.Report, error) {
				from, err := har.ParseBound(o.from)
				if err != nil {
					return nil, nil, fmt.Errorf("--from: %w", err)
				}
				to, err := har.ParseBound(o.to)
				if err != nil {
					return nil, nil, fmt.Errorf("--to: %w", err)
				}
				return har.ConvertFile(path, har.Options{Source: path, KeepAssets: o.keepAssets, Hosts: o.hosts, From: from, To: to})
			},
		},
		"k6": {
			short: "a k6 script (JavaScript; parsed, never run)",
			run: func(path string, src []byte, _ convertOptions) (*convert.Plan, *convert.Report, error) {
				s, err := k6.Parse(path, src)
				if err != nil {
					return nil, nil, err
				}
				p, r := k6.Convert(s, k6.Options{Source: path})
				return p, r, nil
			},
		},
		"postman": {
			short: "a Postman collection (v2.0 or v2.1)",
			run: func(path string, src []byte, o convertOptions) (*convert.Plan, *convert.Report, error) {
				col, err := postman.Parse(bytes.NewReader(src))
				if err != nil {
					return nil, nil, err
				}
				opt := postman.Options{Source: path, EnvSource: o.environment, GlobalsSource: o.globals, WorkingDir: o.workingDir}
				for _, f := range []struct {
					path string
					dst  **postman.Environment
				}{{o.environment, &opt.Environment}, {o.globals, &opt.Globals}} {
					if f.path == "" {
						continue
					}
					b, err := os.ReadFile(f.path)
					if err != nil {
						return nil, nil, err
					}
					if *f.dst, err = postman.ParseEnvironment(bytes.NewReader(b)); err != nil {
						return nil, nil, fmt.Errorf("%s: %w", f.path, err)
					}
				}
				p, r := postman.Convert(col, opt)
				return p, r, nil
			},
		},
	}
}

func newConvertCmd(st *State) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "convert jmeter|k6|har|postman FILE -o plan.yaml",
		Short: "Convert a JMeter plan, a k6 script, a HAR recording or a Postman collection into a plateau plan",
		Long: `Convert an existing test into a plateau plan. Beside the plan, plateau writes
the conversion report (plan.convert.md next to plan.yaml): every element of the
source and what became of it — converted, converted in part, not needed, or not
converted (left as a comment in the plan where it was, so the plan still loads).
The written plan is loaded with plateau's plan loader before convert returns.`,
	}
	m := converters()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		cv := m[name]
		o := &convertOptions{}
		sub := &cobra.Command{
			Use:   name + " FILE -o plan.yaml",
			Short: "Convert " + cv.short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return runConvert(st, name, cv, args[0], *o)
			},
		}
		sub.Flags().StringVarP(&o.out, "out", "o", "", "plan file to write (required)")
		sub.Flags().StringVar(&o.report, "report", "", "conversion report to write (default: PLAN.convert.md beside the plan)")
		if name == "har" {
			sub.Flags().BoolVar(&o.keepAssets, "keep-assets", false, "keep requests for static assets (scripts, styles, images, fonts)")
			sub.Flags().StringSliceVar(&o.hosts, "host", nil, "send only the entries to these hosts (repeatable; patterns such as *.example.com; with :port to match the port too)")
			sub.Flags().StringVar(&o.from, "from", "", "keep only entries that started at or after this time: RFC 3339, or an offset from the first entry (90s)")
			sub.Flags().StringVar(&o.to, "to", "", "keep only entries that started before this time: RFC 3339, or an offset from the first entry (5m)")
		}
		if name == "postman" {
			sub.Flags().StringVarP(&o.environment, "environment", "e", "", "a Postman environment file (as newman's --environment): its variables override the collection's")
			sub.Flags().StringVarP(&o.globals, "globals", "g", "", "a Postman globals file (as newman's --globals): the collection's variables override them")
			sub.Flags().StringVar(&o.workingDir, "working-dir", "", "where the collection's relative form-data and file body paths are found (as newman's --working-dir; default: the collection's folder)")
		}
		_ = sub.MarkFlagRequired("out")
		cmd.AddCommand(sub)
	}
	return cmd
}

func runConvert(st *State, kind string, cv converter, path string, o convertOptions) error {
	var src []byte
	if !cv.streams {
		var err error
		if src, err = os.ReadFile(path); err != nil {
			return fmt.Errorf("convert %s: %w", kind, err)
		}
	}
	p, rep, err := cv.run(path, src, o)
	if err != nil {
		return fmt.Errorf("convert %s: %s: %w", kind, path, err)
	}
	reportPath := o.report
	if reportPath == "" {
		reportPath = strings.TrimSuffix(o.out, filepath.Ext(o.out)) + ".convert.md"
	}
	p.Header = append(p.Header[:len(p.Header):len(p.Header)], "Conversion report: "+filepath.Base(reportPath))
	// The output's directory is made as the user named it.
	for _, d := range []string{filepath.Dir(o.out), filepath.Dir(reportPath)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("convert %s: %w", kind, err)
		}
	}
	// Data files the conversion made (a k6 script's JSON member as CSV)
	// go beside the plan.
	for _, name := range sortedFiles(p.Files) {
		if err := os.WriteFile(filepath.Join(filepath.Dir(o.out), name), p.Files[name], 0o644); err != nil {
			return fmt.Errorf("convert %s: %w", kind, err)
		}
	}
	if _, verr := convert.Verify(p, o.out, filepath.Dir(o.out)); verr != nil {
		rep.VerifyError = verr.Error()
	} else {
		rep.Verified = true
	}
	var pb, rb bytes.Buffer
	if _, err := p.WriteTo(&pb); err != nil {
		return fmt.Errorf("convert %s: %w", kind, err)
	}
	if _, err := rep.WriteTo(&rb); err != nil {
		return fmt.Errorf("convert %s: %w", kind, err)
	}
	if err := os.WriteFile(o.out, pb.Bytes(), 0o644); err != nil {
		return fmt.Errorf("convert %s: %w", kind, err)
	}
	if err := os.WriteFile(reportPath, rb.Bytes(), 0o644); err != nil {
		return fmt.Errorf("convert %s: %w", kind, err)
	}
	c := rep.Count()
	fmt.Fprintf(st.Stdout, "wrote %s and %s: %d of %d enabled elements converted (%d in part, %d not needed), %d not converted (%.1f %% converted)\n",
		o.out, reportPath, c.Converted+c.Partial+c.NotNeeded, c.Enabled, c.Partial, c.NotNeeded, c.NotConverted, 100*c.ConvertedShare())
	if !rep.Verified {
		return fmt.Errorf("convert %s: the converted plan does not load yet (see %s):\n%s", kind, reportPath, rep.VerifyError)
	}
	return nil
}

func sortedFiles(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
