// Package report writes a run's performance report from its run directory
// alone: it loads the interval aggregates (never the raw samples) and the
// monitor series, runs the analyses, builds one format-neutral document
// (package doc) shaped like the hand-written reference reports, and hands it
// to the writers — HTML, Markdown, summary.json and JUnit XML.
//
// The pipeline works on a finished run, on a run killed mid-way (run.json
// still "running", open phases closed at the last record) and on an imported
// run. Every value that came from the run passes a Redactor before it
// reaches a writer, and every written file is swept for the plan's literal
// secret values afterwards.
package report

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/mondata"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/html"
	"github.com/plateau-perf/plateau/internal/report/jsonrep"
	"github.com/plateau-perf/plateau/internal/report/junit"
	"github.com/plateau-perf/plateau/internal/report/markdown"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// Formats lists the output formats in the order they are written.
var Formats = []string{"json", "html", "md", "junit"}

// Options configures Generate. The zero value writes every format.
type Options struct {
	// Formats selects outputs: html, md, json, junit; empty means all.
	Formats []string
	// Baseline is a run directory to compare against, or "".
	Baseline string
	// Now stamps the report; time.Now when nil.
	Now func() time.Time
	// Version is the tool version shown in the report; "" leaves it out
	// when run.json has none either.
	Version string
	// Lang is the language the report is written in ("en", "da"); ""
	// takes the plan's lang: (run.json context.lang), else English.
	Lang string
}

// Result says what Generate wrote.
type Result struct {
	Summary *analysis.Summary
	// Reports are the main file of each format written, in format order.
	Reports []string
	// Files are every path written, charts included.
	Files []string
	// Notes are problems that did not stop the report (an unreadable
	// monitor file, a baseline that could not be loaded).
	Notes []string
}

// writers maps a format name to its writer.
func writers() map[string]doc.Writer {
	return map[string]doc.Writer{
		"json":  jsonrep.Writer{},
		"html":  html.Writer{},
		"md":    markdown.Writer{},
		"junit": junit.Writer{},
	}
}

// ParseFormats checks a list of format names ("html,md"); empty means all.
func ParseFormats(list []string) ([]string, error) {
	var out []string
	for _, item := range list {
		for _, f := range strings.Split(item, ",") {
			f = strings.ToLower(strings.TrimSpace(f))
			switch f {
			case "":
				continue
			case "markdown":
				f = "md"
			case "xml":
				f = "junit"
			}
			if !slices.Contains(Formats, f) {
				return nil, fmt.Errorf("unknown report format %q (want %s)", f, strings.Join(Formats, ", "))
			}
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		return slices.Clone(Formats), nil
	}
	// Write in the canonical order whatever order was asked.
	slices.SortFunc(out, func(a, b string) int { return slices.Index(Formats, a) - slices.Index(Formats, b) })
	return out, nil
}

// Generate writes summary.json, report.html, report.md (with charts/*.svg
// beside it) and junit.xml into dir, as selected by opt.Formats, and
// returns the summary. Whether every SLA held is Summary.Passed; an error
// means the report could not be written.
func Generate(dir string, opt Options) (*analysis.Summary, error) {
	res, err := Write(dir, opt)
	if res == nil {
		return nil, err
	}
	return res.Summary, err
}

// Write is Generate returning the list of files written as well. It reads
// the run (and the baseline) with analysis.Open and hands them to
// WriteRun.
func Write(dir string, opt Options) (*Result, error) {
	if _, err := ParseFormats(opt.Formats); err != nil {
		return nil, err
	}
	run, err := analysis.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("loading run: %w", err)
	}
	var base *analysis.Run
	var baseErr error
	if opt.Baseline != "" {
		base, baseErr = analysis.Open(opt.Baseline)
	}
	return WriteRun(run, base, baseErr, opt)
}

// WriteRun renders a run read by analysis.Open into its directory: the
// report reads nothing from disk but what it wrote (to mask secrets left
// in it). base is the baseline run or nil; baseErr why opt.Baseline could
// not be read.
func WriteRun(run, base *analysis.Run, baseErr error, opt Options) (*Result, error) {
	formats, err := ParseFormats(opt.Formats)
	if err != nil {
		return nil, err
	}
	dir := run.Dir
	loc, err := Lang(opt.Lang, run.Data.Info.Context)
	if err != nil {
		return nil, err
	}
	in := prepare(run, base, baseErr, opt)
	in.loc = loc
	d := build(in)
	res := &Result{Summary: d.Summary, Notes: in.notes}
	ws := writers()
	var errs []error
	for _, f := range formats {
		files, err := ws[f].Write(dir, d)
		if err != nil {
			errs = append(errs, fmt.Errorf("writing %s report: %w", f, err))
		}
		if len(files) > 0 {
			res.Reports = append(res.Reports, files[0])
		}
		res.Files = append(res.Files, files...)
	}
	if err := sweep(res.Files, in.red); err != nil {
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}

// Lang is the report's language: flag when set (--lang), else the
// plan's lang: as the run recorded it (ctx may be nil), else English. An
// unknown name is an error naming it and the languages available.
func Lang(flag string, ctx *rundir.Context) (*locale.Locale, error) {
	name, from := flag, "--lang"
	if name == "" && ctx != nil {
		name, from = ctx.Lang, "the plan's lang"
	}
	loc, err := locale.Parse(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return loc, nil
}

// sweep masks literal secret values left in written files.
func sweep(files []string, red *Redactor) error {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("checking %s for secrets: %w", f, err)
		}
		if nb, changed := red.Bytes(b); changed {
			if err := rundir.WriteFileAtomic(f, nb); err != nil {
				return fmt.Errorf("masking secrets in %s: %w", f, err)
			}
		}
	}
	return nil
}

// input is everything a report is built from.
type input struct {
	dir     string
	run     *analysis.Run
	d       *analysis.Dataset
	s       *analysis.Summary
	series  []core.Series
	targets []mondata.TargetStatus
	monErr  error
	capRun  *analysis.CapacityRun

	baseDir string
	base    *analysis.Dataset
	baseSum *analysis.Summary
	// baseErr is why the baseline asked for could not be read.
	baseErr error

	// loc is the report's language.
	loc *locale.Locale

	plan    string // redacted plan copy; "" when the run has none
	red     *Redactor
	now     time.Time
	version string
	notes   []string
}

// prepare computes the summary and the analyses of a run read by
// analysis.Open (and of its baseline).
func prepare(run, base *analysis.Run, baseErr error, opt Options) *input {
	d := run.Data
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	in := &input{dir: run.Dir, run: run, d: d, now: now(), version: opt.Version}
	if in.version == "" {
		in.version = d.Info.Version
	}
	var secretValues []string
	if run.Plan != nil {
		in.plan, secretValues = RedactPlan(run.Plan, d.Info.Secrets)
	} else if run.PlanErr != nil {
		in.notes = append(in.notes, fmt.Sprintf("plan copy unreadable: %v", run.PlanErr))
	}
	in.red = NewRedactor(d.Info.Secrets, secretValues)
	in.plan = in.red.Literal(in.plan)

	in.s = analysis.Summarize(d, d.Info.SLA)
	in.loc, _ = Lang(opt.Lang, d.Info.Context) // checked by WriteRun
	WordsIn(in.s, in.loc)
	in.series, in.targets, in.monErr = run.Series, run.Targets, run.MonErr
	if in.monErr != nil {
		in.notes = append(in.notes, fmt.Sprintf("monitor data unreadable: %v", in.monErr))
	}
	if run.ServerMonErr != nil {
		in.notes = append(in.notes, fmt.Sprintf("server-side monitor data unreadable: %v", run.ServerMonErr))
	}
	// The capacity analysis runs on the names as recorded, before the
	// report masks them (the summary's redaction covers its result).
	rts := resourceTargetsOf(groupTargets(in.targets, in.series))
	in.capRun = analysis.Capacity(d, in.s, rts)
	in.s.Capacity = in.capRun.Result
	in.s.Trends = analysis.Trends(d, rts)
	if run.SearchErr != nil {
		in.notes = append(in.notes, run.SearchErr.Error())
	} else if cs := run.Search; cs != nil {
		// The report of a capacity search (capacitysearch.go).
		if in.s.Capacity == nil {
			in.s.Capacity = &capacity.Result{LoadUnit: cs.Unit, Points: []capacity.Point{}}
		}
		in.s.Capacity.Search = cs
	}
	switch {
	case baseErr != nil:
		in.baseErr = baseErr
		in.notes = append(in.notes, fmt.Sprintf("baseline %s unreadable: %v", opt.Baseline, baseErr))
	case base != nil:
		in.baseDir, in.base = base.Dir, base.Data
		in.baseSum = analysis.Summarize(base.Data, base.Data.Info.SLA)
	}
	for i := range in.notes {
		in.notes[i] = in.red.String(in.notes[i])
	}
	return in
}
