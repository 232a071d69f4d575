// Package junit writes junit.xml for CI: one test suite for the run, one
// test case per requirement (SLA). A broken requirement is a failed test
// case whose message states the observed value; a requirement that could not
// be judged (bad expression, no samples) is an errored one. A run that was
// interrupted, did not hold its planned load or had no successful request
// adds a failed "run" test case, so CI never shows it green. A capacity
// search's run adds a "capacity" test case, failed when the capacity found is
// below the one required.
package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// FileName is the report's file name in the run directory.
const FileName = "junit.xml"

// Writer writes junit.xml.
type Writer struct{}

var _ doc.Writer = Writer{}

// Format implements doc.Writer.
func (Writer) Format() string { return "junit" }

type testsuites struct {
	XMLName  xml.Name `xml:"testsuites"`
	Name     string   `xml:"name,attr"`
	Tests    int      `xml:"tests,attr"`
	Failures int      `xml:"failures,attr"`
	Errors   int      `xml:"errors,attr"`
	Time     string   `xml:"time,attr"`
	Suites   []suite  `xml:"testsuite"`
}

type suite struct {
	Name      string     `xml:"name,attr"`
	Tests     int        `xml:"tests,attr"`
	Failures  int        `xml:"failures,attr"`
	Errors    int        `xml:"errors,attr"`
	Skipped   int        `xml:"skipped,attr"`
	Time      string     `xml:"time,attr"`
	Timestamp string     `xml:"timestamp,attr"`
	Props     []property `xml:"properties>property,omitempty"`
	Cases     []testcase `xml:"testcase"`
}

type property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type testcase struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr"`
	Failure   *problem `xml:"failure,omitempty"`
	Error     *problem `xml:"error,omitempty"`
	Skipped   *problem `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

type problem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// Encode returns the junit.xml bytes for d.
func Encode(d *doc.Document) ([]byte, error) {
	s := d.Summary
	if s == nil {
		return nil, fmt.Errorf("document has no summary")
	}
	name := "plateau: " + s.Name
	secs := strconv.FormatFloat(s.DurationS, 'f', 3, 64)
	st := suite{Name: name, Time: secs, Timestamp: s.Start.UTC().Format("2006-01-02T15:04:05"),
		Props: []property{{Name: "status", Value: s.Status}}}
	// The run itself is a test case: an interrupted run, one whose load was
	// not held or one in which no request succeeded fails CI even when every
	// requirement held (or the plan states none).
	run := testcase{Name: "run: " + s.Verdict, Classname: "run", Time: secs}
	switch s.Verdict {
	case "interrupted", "invalid", "could not run":
		run.Failure = &problem{Message: s.Verdict + ": " + strings.Join(s.VerdictReasons, "; "), Type: "run." + strings.ReplaceAll(s.Verdict, " ", "_"),
			Text: strings.Join(s.VerdictReasons, "\n")}
		st.Failures++
		st.Cases = append(st.Cases, run)
	}
	for _, r := range s.SLA {
		tc := testcase{Name: r.Expr, Classname: "sla." + r.Scope, Time: secs}
		obs := strconv.FormatFloat(r.Observed, 'f', -1, 64) + " " + r.Unit
		var per bytes.Buffer
		for _, p := range r.PerPhase {
			verdict := "held"
			if !p.Passed {
				verdict = "broken"
			}
			fmt.Fprintf(&per, "%s: %s %s (%s)\n", p.Phase, strconv.FormatFloat(p.Observed, 'f', -1, 64), r.Unit, verdict)
		}
		switch {
		case r.Error != "" || r.NoData:
			msg := r.Error
			if msg == "" {
				msg = "no samples to judge"
			}
			tc.Error = &problem{Message: msg, Type: "sla.unjudged"}
			st.Errors++
		case !r.Passed:
			msg := fmt.Sprintf("observed %s, requirement %s", obs, r.Expr)
			if r.FirstBroken != "" {
				msg += fmt.Sprintf("; first broken in %s", r.FirstBroken)
				if r.HeldUpTo != "" {
					msg += fmt.Sprintf(" (held up to %s)", r.HeldUpTo)
				}
			}
			tc.Failure = &problem{Message: msg, Type: "sla.broken", Text: per.String()}
			st.Failures++
		default:
			tc.SystemOut = "observed " + obs + "\n" + per.String()
		}
		st.Cases = append(st.Cases, tc)
	}
	if s.Capacity != nil && s.Capacity.Search != nil {
		st.Cases = append(st.Cases, searchCase(s.Capacity.Search, secs, &st))
	}
	st.Tests = len(st.Cases)
	root := testsuites{Name: name, Tests: st.Tests, Failures: st.Failures, Errors: st.Errors, Time: secs, Suites: []suite{st}}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encoding junit: %w", err)
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// searchCase is a capacity search's answer as a test case: failed when
// the capacity found is below the one required (fail_below), an error when
// the search could only show a lower bound below it.
func searchCase(cs *capacity.Search, secs string, st *suite) testcase {
	tc := testcase{Name: "capacity of " + cs.Workload, Classname: "capacity.search", Time: secs}
	lowerBound := cs.Outcome == search.GeneratorLimited || cs.Outcome == search.Budget && cs.UpperBound == 0
	load := strconv.FormatFloat(cs.Load, 'f', -1, 64) + " " + cs.Unit
	need := strconv.FormatFloat(cs.FailBelow, 'f', -1, 64) + " " + cs.Unit
	switch {
	case cs.FailBelow > 0 && cs.Load < cs.FailBelow && lowerBound:
		tc.Error = &problem{Message: fmt.Sprintf("%s: the capacity is at least %s, whether it reaches the %s required is not known", cs.Outcome, load, need), Type: "capacity.unknown", Text: cs.Sentence}
		st.Errors++
	case cs.FailBelow > 0 && cs.Load < cs.FailBelow:
		tc.Failure = &problem{Message: fmt.Sprintf("capacity %s is below the %s required", load, need), Type: "capacity.below", Text: cs.Sentence}
		st.Failures++
	default:
		tc.SystemOut = cs.Sentence + "\n"
	}
	return tc
}

// Write implements doc.Writer: it writes dir/junit.xml atomically.
func (Writer) Write(dir string, d *doc.Document) ([]string, error) {
	b, err := Encode(d)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, FileName)
	if err := rundir.WriteFileAtomic(path, b); err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return []string{path}, nil
}
