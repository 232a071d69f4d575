package report

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis/capacity"
	"github.com/plateau-perf/plateau/internal/analysis/capacity/search"
	"github.com/plateau-perf/plateau/internal/analysis/compare"
	"github.com/plateau-perf/plateau/internal/analysis/knee"
	"github.com/plateau-perf/plateau/internal/analysis/resources"
	"github.com/plateau-perf/plateau/internal/analysis/sla"
	"github.com/plateau-perf/plateau/internal/analysis/trend"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// reference003 is the ServiceComb sweep: linear to ~1000 req/s at 15
// users, flat after, average response time from 14 ms to 190 ms.
var reference003 = []knee.Point{
	{Load: 1, ThroughputRPS: 71, MeanMs: 14, SLAMet: true},
	{Load: 5, ThroughputRPS: 357, MeanMs: 14, SLAMet: true},
	{Load: 10, ThroughputRPS: 714, MeanMs: 14, SLAMet: true},
	{Load: 15, ThroughputRPS: 1003, MeanMs: 14, SLAMet: true},
	{Load: 20, ThroughputRPS: 1010, MeanMs: 19.8, SLAMet: true},
	{Load: 50, ThroughputRPS: 1020, MeanMs: 49, SLAMet: true},
	{Load: 100, ThroughputRPS: 1030, MeanMs: 97, SLAMet: false},
	{Load: 200, ThroughputRPS: 1050, MeanMs: 190, SLAMet: false},
}

// The knee's sentence is computed from the analysis' numbers: the gain
// the highest load added and the rise of the mean response time.
func TestKneeSentence(t *testing.T) {
	t.Parallel()
	r, err := knee.Analyze(reference003, knee.Options{})
	if err != nil || r.Knee == nil {
		t.Fatalf("knee %+v, %v", r.Knee, err)
	}
	want := "throughput stopped scaling at 15 concurrent users, ~1000 req/s: higher loads added at most +4.7 % (threshold 5 %); beyond it average response time rose from 14 ms to 190 ms"
	if got := KneeSentence(*r.Knee); got != want {
		t.Errorf("KneeSentence:\n got %q\nwant %q", got, want)
	}
	// The open-model wording.
	k := *r.Knee
	k.Kind, k.Load, k.ThroughputRPS = knee.Rate, 800, 747
	if got := KneeSentence(k); !strings.HasPrefix(got, "throughput stopped scaling at 800 req/s offered, ~750 req/s:") {
		t.Errorf("rate sentence %q", got)
	}
	// A straight line: no knee, and the sentence names the highest load.
	var line []knee.Point
	for n := 10.0; n <= 60; n += 10 {
		line = append(line, knee.Point{Load: n, ThroughputRPS: 10 * n, MeanMs: 10, SLAMet: true})
	}
	r, err = knee.Analyze(line, knee.Options{})
	if err != nil || r.NoKnee == nil {
		t.Fatalf("line: %+v, %v", r.NoKnee, err)
	}
	if got, want := NoKneeText(*r.NoKnee, knee.Users), "throughput kept scaling up to the highest tested load, 60 concurrent users (~600 req/s)"; got != want {
		t.Errorf("NoKneeText:\n got %q\nwant %q", got, want)
	}
	if got := USLSkipText(*r.USLSkip); !strings.HasPrefix(got, "no saturation: throughput grew in proportion to load (σ = ") {
		t.Errorf("USLSkipText %q", got)
	}
}

// Every kind the analysis can hand over has its own words: none falls
// through to its bare name (the switch's default).
func TestEveryKindHasWords(t *testing.T) {
	t.Parallel()
	check := func(kind, words, name string) {
		t.Helper()
		if words == "" || words == name {
			t.Errorf("%s has no words of its own (%q)", kind, words)
		}
	}
	for o := knee.TooFewLoads; o <= knee.ThinData; o++ {
		if o == knee.Stopped {
			continue // a knee: KneeSentence
		}
		for st := knee.StallNone; st <= knee.StallNoise; st++ {
			if (o == knee.Stalled) != (st != knee.StallNone) {
				continue
			}
			check("knee outcome "+o.String()+"/"+st.String(), NoKneeText(knee.NoKnee{Outcome: o, Stall: st, Loads: 3, Load: 10, ThroughputRPS: 100, Samples: 50, Seconds: 1}, knee.Users), o.String())
		}
	}
	for k := knee.USLTooFewLoads; k <= knee.USLContradicted; k++ {
		check("usl skip "+k.String(), USLSkipText(knee.USLWhy{Kind: k, Loads: 3, Need: 4, Sigma: 0.1, Kappa: 0.001, R2: 0.5, MinR2: 0.8}), k.String())
	}
	for f := knee.LittleShortRate; f <= knee.LittleOver; f++ {
		check("little flag "+f.String(), LittleText(f, 10, 0.5), f.String())
	}
	if LittleText(knee.LittleOK, 10, 1) != "" {
		t.Error("an unflagged Little's-law check has words")
	}
	for k := trend.MemoryTooFewPoints; k <= trend.MemoryUndecided; k++ {
		check("memory "+k.String(), MemoryReasonText(trend.MemoryWhy{Kind: k, SpanS: 119, MinSpanS: 600, Points: 3, Need: 4, Confidence: 0.95}, 1e6, 5e5, 2e6), k.String())
	}
	for m := trend.MethodAfterGC; m <= trend.MethodEnvelope; m++ {
		check("memory method "+m.String(), MemoryMethodText(trend.MemoryBasis{Method: m, N: 12, WindowS: 30}), m.String())
	}
	seen := map[string]string{}
	distinct := func(kind, words string) {
		t.Helper()
		if other, ok := seen[words]; ok {
			t.Errorf("%s and %s have the same words %q", kind, other, words)
		}
		seen[words] = kind
	}
	for q := sla.QResponseTime; q <= sla.QChecks; q++ {
		for st := sla.StatNone; st <= sla.StatPercentile; st++ {
			timed := q == sla.QResponseTime || q == sla.QServerTime || q == sla.QServerTimeNet
			if timed == (st == sla.StatNone) {
				continue
			}
			kind := fmt.Sprintf("requirement subject %d/%d", q, st)
			w := SubjectText(sla.Subject{Quantity: q, Stat: st, Percentile: 99.9}, nil)
			check(kind, w, "")
			distinct(kind, w)
			if da := SubjectText(sla.Subject{Quantity: q, Stat: st, Percentile: 99.9}, locale.MustParse("da")); da == w && q != sla.QThroughput { // "throughput" is Danish too (reference 000)
				t.Errorf("%s: no Danish words (%q)", kind, da)
			}
		}
	}
	for m := resources.MeasureCores; m <= resources.MeasureConnections; m++ {
		check("measure "+m.String(), MeasureText(m, nil), m.String()+"!")
		distinct("measure "+m.String(), MeasureText(m, nil))
	}
	for k := resources.NetErrors; k <= resources.NetDrops; k++ {
		check("network fault "+k.String(), numbers{}.netFaultText(k), "")
	}
	for o := search.Found; o <= search.Budget; o++ {
		cs := &capacity.Search{Unit: "users", Outcome: o, Load: 40, UpperBound: 44, At: 60, LimitedBy: search.ThroughputFlat}
		check("search outcome "+o.String(), SearchSentence(cs), o.String())
	}
}

// The words quote the typed numbers exactly as the sentences did when the
// analysis wrote them (summary.json's pins hold them too).
func TestWordsOfTypedReasons(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ got, want string }{
		{MemoryReasonText(trend.MemoryWhy{Kind: trend.MemoryShortSpan, SpanS: 179.4, MinSpanS: 600}, 0, 0, 0),
			"observed for 2m59s; a leak is judged over at least 10m0s (warm-up looks like growth in shorter runs)"},
		{MemoryMethodText(trend.MemoryBasis{Method: trend.MethodEnvelope, N: 12, WindowS: 30}), "lower envelope (12 windows of 30s)"},
		{MemoryMethodText(trend.MemoryBasis{Method: trend.MethodAfterGC, N: 7}), "after GC (7 collections)"},
		{USLSkipText(knee.USLWhy{Kind: knee.USLTooFewLoads, Loads: 3, Need: 4}), "a USL fit needs at least 4 distinct loads, have 3"},
		{USLSkipText(knee.USLWhy{Kind: knee.USLTooFewProbes, Loads: 4, Need: 5}), "a USL fit over the probes needs at least 5 distinct loads that measured the system, have 4"},
		{LittleText(knee.LittleShortUsers, 20, 0.5), "only 10 of 20 concurrent users were busy by Little's law (50%): the generator did not deliver the load"},
		{ComparisonNote(compare.Row{Mixed: true, DeltaPct: -4.12, P95DeltaPct: 12}), "mixed: mean -4.1%, p95 +12.0%; a regression in either counts"},
		{ComparisonNote(compare.Row{DeltaPct: 40}), ""},
		{VerdictPhrase(compare.NoChange), "no significant change from"},
		{VerdictPhrase(compare.Faster), "faster than"},
		{VerdictPhrase(compare.NotEnough), "not enough data to judge against"},
		{SearchSentence(&capacity.Search{Unit: "req/s", Outcome: search.Found, Load: 40, UpperBound: 44, LimitedBy: search.RequirementBroke, Requirement: "p95(response_time) < 500ms", Marginal: true}),
			"capacity = 40 req/s [40 req/s, 44 req/s), limited by p95(response_time) < 500ms (marginal)"},
		{SearchSentence(&capacity.Search{Unit: "users", Outcome: search.GeneratorLimited, At: 32, Load: 16, Interrupted: true}),
			"limited by the load generator at 32 users: not a capacity of the system; it held at least 16 users (interrupted: as far as the probes before it show)"},
	} {
		if c.got != c.want {
			t.Errorf("\n got %q\nwant %q", c.got, c.want)
		}
	}
}

// A requirement's subject reads as it did when sla.Expr described itself
// (summary.json and the English pins hold these words), and the rules'
// measures as the rules wrote them.
func TestSubjectAndMeasureWords(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"avg(response_time) < 200ms":                              "average response time",
		"p99.9(response_time) < 1s":                               "99.9th percentile response time",
		"median(response_time) < 1s":                              "median response time",
		`max(response_time{label="login", workload="read"}) < 1s`: `maximum response time of "login" in workload "read"`,
		`p95(server_time_net{server="lar-1"}) < 200ms`:            `95th percentile server-side response time net of downstream calls of server "lar-1"`,
		"avg(server_time) < 200ms":                                "average server-side response time",
		`error_rate{label="GET /x"} < 1%`:                         `error rate of "GET /x"`,
		"throughput >= 10/s":                                      "throughput",
		`checks{name="cart has items"} > 99%`:                     `pass rate of check "cart has items"`,
		"checks > 99%":                                            "pass rate of the checks",
	} {
		e, err := sla.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := SubjectText(e.Subject(), nil); got != want {
			t.Errorf("%s:\n got %q\nwant %q", in, got, want)
		}
	}
	da := locale.MustParse("da")
	for in, want := range map[string]string{
		"avg(response_time) < 200ms":                   "gennemsnitlig svartid",
		"p99.9(response_time) < 1s":                    "99,9-percentil svartid",
		`p95(server_time_net{server="lar-1"}) < 200ms`: `95-percentil svartid på serveren uden videre kald på server "lar-1"`,
	} {
		e, _ := sla.Parse(in)
		if got := SubjectText(e.Subject(), da); got != want {
			t.Errorf("da %s:\n got %q\nwant %q", in, got, want)
		}
	}
	for m, want := range map[resources.Measure]string{resources.MeasureCores: "cores", resources.MeasureBusyPct: "% busy", resources.MeasureMemory: "of memory",
		resources.MeasureMemoryPct: "% of memory", resources.MeasureLinkSpeed: "of the link's speed", resources.MeasureConnections: "connections"} {
		if got := MeasureText(m, nil); got != want {
			t.Errorf("measure %v = %q, want %q", m, got, want)
		}
	}
}

// A --fail-on rule's outcome quotes the change, both levels and the rule.
func TestRuleOutcomeText(t *testing.T) {
	t.Parallel()
	rules, err := compare.ParseRules("p95 > +10%, error_rate > +1%, throughput < -5rps")
	if err != nil {
		t.Fatal(err)
	}
	outs, _ := compare.CheckAll(rules, core.LabelStats{P95Ms: 400, ErrorPct: 0.2, ThroughputRPS: 100}, core.LabelStats{P95Ms: 452, ErrorPct: 0.4, ThroughputRPS: 90})
	for i, want := range []string{
		"p95 +13% (400 ms → 452 ms) breaks p95 > +10%",
		"error_rate +0.2 pp (0.2% → 0.4%) within error_rate > +1%",
		"throughput -10 req/s (100 → 90 req/s) breaks throughput < -5rps",
	} {
		if got := RuleOutcomeText(outs[i]); got != want {
			t.Errorf("\n got %q\nwant %q", got, want)
		}
	}
}

// A skipped fit's parameters read as numbers a reader knows: no computer
// notation for a coefficient pinned at zero, and an R² below the
// threshold is never printed as reaching it.
func TestFitParamsInPlainNotation(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		v    float64
		want string
	}{{5.68e-16, "0"}, {0.000831, "0.000831"}, {0.0000831, "0.0000831"}, {0.0123, "0.0123"}, {1.5, "1.50"}, {12345, "12345"}} {
		if got := kneeSig3(c.v); got != c.want {
			t.Errorf("kneeSig3(%g) = %q, want %q", c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		r2   float64
		want string
	}{{0.79996, "0.79996"}, {0.7996, "0.7996"}, {0.95, "0.950"}} {
		if got := kneeR2Text(c.r2, 0.8); got != c.want {
			t.Errorf("kneeR2Text(%v, 0.8) = %q, want %q", c.r2, got, c.want)
		}
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{1003, "1000"}, {987, "990"}, {1472, "1500"}, {14.2, "14"}, {3.14, "3.1"}, {0.42, "0.42"}, {0, "0"}} {
		if got := kneeRoughly(c.v); got != c.want {
			t.Errorf("kneeRoughly(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// A stepped load's line is worded from its steps in Danish; English keeps
// run.json's shape byte for byte.
func TestShapeTextDanish(t *testing.T) {
	w := rundir.WorkloadInfo{Model: "steps", Shape: "steps: 14 users for 20s, 2.5/s for 1m0s; stop when throughput_gain < 5%",
		Steps:    []rundir.LoadStep{{Users: 14, Duration: 20 * time.Second}, {Rate: 2.5, Duration: time.Minute}},
		StopWhen: "throughput_gain < 5%"}
	if got := (numbers{}).shapeText(w); got != w.Shape {
		t.Errorf("English %q, want run.json's %q", got, w.Shape)
	}
	want := "trin: 14 brugere i 20s, 2,5/s i 1m0s; stop når throughput_gain < 5%"
	if got := (numbers{locale.MustParse("da")}).shapeText(w); got != want {
		t.Errorf("Danish %q, want %q", got, want)
	}
}
