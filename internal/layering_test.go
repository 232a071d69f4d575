// Package internal_test holds the module's layering rules as a test:
// cmd → cli → engine/importers/monitors/analysis/report → metrics → core.
// The report renders what the analysis computed and never reaches down into
// the parts that produce data (monitor, importer, engine); the analysis
// never knows how it is said (report); nothing but the binary drives cli.
package internal_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/plateau-perf/plateau/"

// pkg is the part of `go list -json` the rules read.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// under reports whether path is dir or a package below it (dir relative to
// the module, e.g. "internal/report").
func under(path, dir string) bool {
	p := strings.TrimPrefix(path, module)
	return p != path && (p == dir || strings.HasPrefix(p, dir+"/"))
}

// rule forbids packages under From to depend, directly or not, on any
// package under one of To.
type rule struct {
	From string
	To   []string
	// Direct checks only the package's own imports (not the transitive
	// ones): cli may be imported by cmd, which nothing imports.
	Direct bool
	// Except are packages under From the rule does not apply to.
	Except []string
	// StdlibOnly forbids every dependency outside the standard library
	// (To is then unused): a pure algorithm the rest builds on.
	StdlibOnly bool
}

var rules = []rule{
	{From: "internal/report", To: []string{"internal/monitor", "internal/importer", "internal/engine", "internal/cli"}},
	{From: "internal/analysis", To: []string{"internal/report", "internal/engine", "internal/monitor", "internal/importer", "internal/cli", "internal/study"}},
	{From: "internal/study", To: []string{"internal/monitor", "internal/importer", "internal/engine", "internal/cli"}},
	{From: "internal", To: []string{"internal/cli"}, Direct: true, Except: []string{"internal/cli"}},
	// The results history reads runs and renders through the report's
	// writers; it never reaches the parts that produce data, and the run
	// report and the analysis never depend on the store (its drivers).
	{From: "internal/history", To: []string{"internal/monitor", "internal/importer", "internal/engine", "internal/cli", "internal/study"}},
	{From: "internal/report", To: []string{"internal/history"}},
	{From: "internal/analysis", To: []string{"internal/history"}},
	{From: "internal/analysis/changepoint", StdlibOnly: true},
	{From: "internal/analysis/capacity/search", StdlibOnly: true},
}

// stdlib reports whether an import path is the standard library's: its
// first element has no dot (a module path's host has one).
func stdlib(path string) bool {
	return !strings.Contains(strings.Split(path, "/")[0], ".")
}

// violations applies rules to the packages and returns one line per
// forbidden dependency.
func violations(pkgs []pkg, rules []rule) []string {
	var out []string
	for _, p := range pkgs {
		for _, r := range rules {
			if !under(p.ImportPath, r.From) {
				continue
			}
			skip := false
			for _, e := range r.Except {
				skip = skip || under(p.ImportPath, e)
			}
			if skip {
				continue
			}
			deps := p.Deps
			if r.Direct {
				deps = p.Imports
			}
			for _, d := range deps {
				if r.StdlibOnly && !stdlib(d) {
					out = append(out, strings.TrimPrefix(p.ImportPath, module)+" depends on "+strings.TrimPrefix(d, module)+" (standard library only)")
				}
				for _, to := range r.To {
					if under(d, to) {
						out = append(out, strings.TrimPrefix(p.ImportPath, module)+" depends on "+strings.TrimPrefix(d, module))
					}
				}
			}
		}
	}
	return out
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to read the import graph: %v", err)
	}
	cmd := exec.Command(goBin, "list", "-json", "../...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(outb))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list found %d packages; the module has far more", len(pkgs))
	}
	return pkgs
}

// TestLayering fails when a package depends on one its layer must not
// know: report (and study) on monitor, importer or engine; analysis on
// report; anything but the binary on cli. Test files may (a report test
// builds its run with an importer).
func TestLayering(t *testing.T) {
	for _, v := range violations(listPackages(t), rules) {
		t.Error(v)
	}
}

// TestLayeringRulesBite: the rules catch each kind of forbidden edge, so a
// green TestLayering means something.
func TestLayeringRulesBite(t *testing.T) {
	m := func(s string) string { return module + s }
	pkgs := []pkg{
		{ImportPath: m("internal/report/html"), Deps: []string{m("internal/core"), m("internal/monitor/host")}},
		{ImportPath: m("internal/report"), Deps: []string{m("internal/importer")}},
		{ImportPath: m("internal/analysis/trend"), Deps: []string{m("internal/report/doc")}},
		{ImportPath: m("internal/demo"), Imports: []string{m("internal/cli")}},
		{ImportPath: m("internal/cli/sub"), Imports: []string{m("internal/cli")}},
		{ImportPath: m("cmd/plateau"), Imports: []string{m("internal/cli")}},
		{ImportPath: m("internal/reportx"), Deps: []string{m("internal/engine")}},
		{ImportPath: m("internal/analysis/changepoint"), Deps: []string{"sort", "vendor/golang.org/x/net/dns/dnsmessage", "gonum.org/v1/gonum/stat"}},
		{ImportPath: m("internal/history/historydoc"), Deps: []string{m("internal/report/html"), m("internal/engine")}},
		{ImportPath: m("internal/report/jsonrep"), Deps: []string{m("internal/history")}},
	}
	got := violations(pkgs, rules)
	want := []string{
		"internal/report/html depends on internal/monitor/host",
		"internal/report depends on internal/importer",
		"internal/analysis/trend depends on internal/report/doc",
		"internal/demo depends on internal/cli",
		"internal/analysis/changepoint depends on gonum.org/v1/gonum/stat (standard library only)",
		"internal/history/historydoc depends on internal/engine",
		"internal/report/jsonrep depends on internal/history",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
