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
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
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

// Write is Generate returning the list of files written as well.
func Write(dir string, opt Options) (*Result, error) {
	formats, err := ParseFormats(opt.Formats)
	if err != nil {
		return nil, err
	}
	in, err := load(dir, opt)
	if err != nil {
		return nil, err
	}
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
	d       *analysis.Dataset
	s       *analysis.Summary
	series  []core.Series
	targets []mondata.TargetStatus
	monErr  error
	capRun  *analysis.CapacityRun

	baseDir string
	base    *analysis.Dataset
	baseSum *analysis.Summary

	plan    string // redacted plan copy; "" when the run has none
	red     *Redactor
	now     time.Time
	version string
	notes   []string
}

// load reads the run directory (and the baseline) and computes the summary.
func load(dir string, opt Options) (*input, error) {
	d, err := analysis.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("loading run: %w", err)
	}
	now := time.Now
	if opt.Now != nil {
		now = opt.Now
	}
	in := &input{dir: dir, d: d, now: now(), version: opt.Version}
	if in.version == "" {
		in.version = d.Info.Version
	}
	var secretValues []string
	if src, err := os.ReadFile(filepath.Join(dir, rundir.PlanFile)); err == nil {
		in.plan, secretValues = RedactPlan(src, d.Info.Secrets)
	} else if !errors.Is(err, os.ErrNotExist) {
		in.notes = append(in.notes, fmt.Sprintf("plan copy unreadable: %v", err))
	}
	in.red = NewRedactor(d.Info.Secrets, secretValues)
	in.plan = in.red.Literal(in.plan)

	in.s = analysis.Summarize(d, d.Info.SLA)
	in.series, in.targets, in.monErr = mondata.Read(dir)
	if in.monErr != nil {
		in.notes = append(in.notes, fmt.Sprintf("monitor data unreadable: %v", in.monErr))
	}
	in.readServerMonitor()
	// The capacity analysis runs on the names as recorded, before the
	// report masks them (the summary's redaction covers its result).
	rts := resourceTargetsOf(groupTargets(in.targets, in.series))
	in.capRun = analysis.Capacity(d, in.s, rts)
	in.s.Capacity = in.capRun.Result
	in.s.Trends = analysis.Trends(d, rts)
	if opt.Baseline != "" {
		if bd, err := analysis.Load(opt.Baseline); err != nil {
			in.notes = append(in.notes, fmt.Sprintf("baseline %s unreadable: %v", opt.Baseline, err))
		} else {
			in.baseDir, in.base = opt.Baseline, bd
			in.baseSum = analysis.Summarize(bd, bd.Info.SLA)
		}
	}
	for i := range in.notes {
		in.notes[i] = in.red.String(in.notes[i])
	}
	return in, nil
}
