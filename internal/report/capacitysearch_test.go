package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/report/doc"
	"github.com/plateau-perf/plateau/internal/report/junit"
	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

// searchRun writes a one-step run with cs as its capacity search and
// returns its report's summary and Markdown.
func searchRun(t *testing.T, cs *capacity.Search) (*analysis.Summary, string) {
	t.Helper()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Name: "shop", Seed: 4, Steps: []reporttest.Step{{Users: 20, Seconds: 30, RampUpS: 1}}}); err != nil {
		t.Fatal(err)
	}
	var f analysis.SearchFileContent
	f.Name = "shop"
	f.Capacity.Search = cs
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, analysis.SearchFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Generate(dir, Options{Formats: []string{"json", "md"}, Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	// summary.json on disk carries the same search.
	var disk analysis.Summary
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(js, &disk); err != nil {
		t.Fatal(err)
	}
	if disk.Capacity == nil || disk.Capacity.Search == nil || disk.Capacity.Search.Load != cs.Load || len(disk.Capacity.Search.Probes) != len(cs.Probes) {
		t.Fatalf("summary.json's capacity.search is not the search's:\n%s", js)
	}
	return s, string(md)
}

func probe(n int, load, tput, p50 float64, v capacity.ProbeVerdict, lim search.Limit) capacity.SearchProbe {
	rv := search.Holds
	if p50 >= 60 {
		rv = search.Breaks
	}
	return capacity.SearchProbe{N: n, Dir: "probe-0" + string(rune('0'+n)), Phase: search.Up, Load: load, ThroughputRPS: tput,
		MeanMs: p50 * 1.2, P95Ms: p50 * 2, Held: true, Verdict: v, LimitedBy: lim, TestStatus: "passed",
		Requirements: []capacity.ProbeReq{{Expr: "p50(response_time) < 60ms", Observed: p50, Low: p50, High: p50, Limit: 60, Verdict: rv}}}
}

// The report of a search opens its summary with the answer: the capacity,
// its interval, the requirement that limited it and the component that
// saturated first; its capacity section lists every probe with its
// verdict and draws them.
func TestCapacitySearchReport(t *testing.T) {
	cs := &capacity.Search{Workload: "api", Unit: "users", Outcome: search.Found, Load: 40, UpperBound: 42,
		LimitedBy: search.RequirementBroke, Requirement: "p50(response_time) < 60ms", Resolution: "5%", ElapsedS: 95, Shown: "probe-03",
		Probes: []capacity.SearchProbe{
			probe(1, 10, 100, 20, capacity.Good, search.NoLimit),
			probe(2, 20, 200, 21, capacity.Good, search.NoLimit),
			probe(3, 40, 390, 40, capacity.Good, search.NoLimit),
			probe(4, 80, 400, 180, capacity.Bad, search.RequirementBroke),
			probe(5, 42, 395, 70, capacity.Bad, search.RequirementBroke),
		},
		Bottleneck: &resources.Bottleneck{Saturated: true, Phase: "probe-05", Load: 42, Components: 3,
			Reading: resources.Reading{Component: "db", Resource: "CPU", Unit: "cores", Used: 1.9, Capacity: 2, Utilisation: 0.95}},
		USLSkip: &knee.USLWhy{Kind: knee.USLTooFewProbes, Loads: 4, Need: 5}}
	s, md := searchRun(t, cs)
	if s.Capacity.Search.LimitedBy != search.RequirementBroke {
		t.Errorf("limited_by %v", s.Capacity.Search.LimitedBy)
	}
	summary, rest, _ := strings.Cut(md, "## Scope and requirements")
	// The answer comes right after the test status.
	status := strings.Index(summary, "Test status")
	answer := strings.Index(summary, "Capacity: 40 users, between 40 users and 42 users (the search's resolution 5%), limited by the requirement p50(response\\_time) &lt; 60ms")
	if status < 0 || answer < status {
		t.Fatalf("the summary does not open with the capacity:\n%s", summary)
	}
	if !strings.Contains(summary, "the first monitored component to saturate was db, with CPU 1.90 of 2 cores (95 %) on average in probe-05 (42 users)") {
		t.Errorf("the summary does not name what saturated first:\n%s", summary)
	}
	if !strings.Contains(summary, "The rest of this report is the run of probe-03 at 40 users, the capacity") {
		t.Errorf("the summary does not say which probe the report shows:\n%s", summary)
	}
	capSec, _, _ := strings.Cut(rest[strings.Index(rest, "## Capacity"):], "## Trends")
	for _, want := range []string{"| probe-01 | up | 10 |", "✅ good", "❌ bad", "![The probes: throughput and p50(response\\_time) against load]",
		"No USL fit over the probes: a USL fit over the probes needs at least 5 distinct loads"} {
		if !strings.Contains(capSec, want) {
			t.Errorf("capacity section lacks %q:\n%s", want, capSec)
		}
	}
	concl := md[strings.Index(md, "## Conclusions"):]
	if !strings.Contains(concl, "**Throughput:** Capacity: 40 users, between 40 users and 42 users") {
		t.Errorf("the conclusions' throughput is not the search's answer:\n%s", concl[:min(len(concl), 1500)])
	}
	if strings.Contains(capSec, "no capacity analysis") {
		t.Errorf("the search's capacity section says there is none:\n%s", capSec)
	}
}

// A search the generator limited says so and reports no capacity.
func TestCapacitySearchReportGeneratorLimited(t *testing.T) {
	cs := &capacity.Search{Workload: "api", Unit: "req/s", Outcome: search.GeneratorLimited, Load: 100, At: 200,
		LimitedBy: search.Generator, Resolution: "5%", Shown: "probe-01",
		Probes: []capacity.SearchProbe{
			probe(1, 100, 100, 20, capacity.Good, search.NoLimit),
			probe(2, 200, 120, 20, capacity.GeneratorLimited, search.Generator),
		}}
	cs.Probes[1].GeneratorSaturated = true
	_, md := searchRun(t, cs)
	summary, _, _ := strings.Cut(md, "## Scope and requirements")
	if !strings.Contains(summary, "No capacity: limited by the load generator at 200 req/s, so that probe says nothing about the system; the system held at least 100 req/s") {
		t.Errorf("summary:\n%s", summary)
	}
	if strings.Contains(summary, "Capacity: ") {
		t.Errorf("a generator-limited search reports a capacity:\n%s", summary)
	}
	if !strings.Contains(md, "generator-limited: not evidence about the system") {
		t.Errorf("the probe table does not mark the generator-limited probe")
	}
}

// A run that is not a search keeps its capacity member without search.
func TestNoSearchNoSearchMember(t *testing.T) {
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Options{Name: "shop", Seed: 4}); err != nil {
		t.Fatal(err)
	}
	if _, err := Generate(dir, Options{Formats: []string{"json"}, Now: fixedNow}); err != nil {
		t.Fatal(err)
	}
	js, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), `"search"`) {
		t.Errorf("summary.json of a stepped run has a capacity search")
	}
}

// fail_below: the answer says whether the capacity reaches what is
// required, and fails when it does not.
func TestCapacitySearchReportFailBelow(t *testing.T) {
	base := capacity.Search{Workload: "api", Unit: "req/s", Outcome: search.Found, Load: 80, UpperBound: 84,
		LimitedBy: search.RequirementBroke, Requirement: "p50(response_time) < 60ms", Resolution: "5%", Shown: "probe-01",
		Probes: []capacity.SearchProbe{probe(1, 80, 80, 20, capacity.Good, search.NoLimit), probe(2, 84, 80, 70, capacity.Bad, search.RequirementBroke)}}
	for _, c := range []struct {
		failBelow float64
		want      string
	}{
		{100, "❌ **Capacity: 80.0 req/s, between 80.0 req/s and 84.0 req/s (the search's resolution 5%), limited by the requirement p50(response\\_time) &lt; 60ms — below the 100 req/s required"},
		{50, "✅ **Capacity: 80.0 req/s, between 80.0 req/s and 84.0 req/s (the search's resolution 5%), limited by the requirement p50(response\\_time) &lt; 60ms; at least the 50.0 req/s required"},
	} {
		cs := base
		cs.FailBelow = c.failBelow
		cs.Sentence = "capacity = 80 req/s"
		s, md := searchRun(t, &cs)
		// junit.xml: a capacity test case, failed below the requirement.
		x, err := junit.Encode(&doc.Document{Summary: s})
		if err != nil {
			t.Fatal(err)
		}
		below := strings.Contains(string(x), `<failure message="capacity 80 req/s is below the 100 req/s required" type="capacity.below">`)
		if below != (c.failBelow > 80) || !strings.Contains(string(x), `name="capacity of api" classname="capacity.search"`) {
			t.Errorf("fail_below %g: junit.xml\n%s", c.failBelow, x)
		}
		if !strings.Contains(md, c.want) {
			summary, _, _ := strings.Cut(md, "## Scope")
			t.Errorf("fail_below %g: want %q in\n%s", c.failBelow, c.want, summary)
		}
	}
}

// A search without a capacity whose probe table shows "good" (demo 002's
// upload: 10 and 20 users probed good, then their verifying repeats were
// marginal) says why those loads do not count, rather than "no load
// probed was shown good" above a table that shows two.
func TestCapacitySearchNoneShownSaysWhyGoodProbesDoNotCount(t *testing.T) {
	m := func(n int, load float64) capacity.SearchProbe {
		p := probe(n, load, load, 55, capacity.Marginal, search.NoLimit)
		p.Repeat = true
		return p
	}
	cs := capacity.Search{Workload: "upload", Unit: "req/s", Outcome: search.Found, Load: 0, Resolution: "10%", Shown: "probe-05",
		Probes: []capacity.SearchProbe{probe(1, 10, 10, 20, capacity.Good, search.NoLimit), probe(2, 20, 20, 30, capacity.Good, search.NoLimit),
			probe(3, 40, 30, 90, capacity.Bad, search.RequirementBroke), m(4, 20), m(5, 10)}}
	_, lead := SearchAnswer(&cs, nil)
	if want := "No capacity: no load probed was shown good (10.0 req/s and 20.0 req/s probed good, but a later probe at the same load did not, so none is counted)"; !strings.HasPrefix(lead, want) {
		t.Errorf("answer %q, want it to begin %q", lead, want)
	}
	// A load good at its last probe is not named.
	cs.Probes = cs.Probes[:3]
	if _, lead := SearchAnswer(&cs, nil); strings.Contains(lead, "probed good") {
		t.Errorf("answer %q names loads whose last probe was good", lead)
	}
}
