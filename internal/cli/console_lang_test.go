package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/locale"
)

// consoleSummary is a run of two steps with a broken requirement, as the
// end of a run prints it.
func consoleSummary() *analysis.Summary {
	total := core.LabelStats{Label: core.TotalLabel, Samples: 5384, Errors: 5, ErrorPct: 0.093, MeanMs: 155.25, P50Ms: 144.8, P90Ms: 235.6,
		P95Ms: 263.7, P99Ms: 326.9, MaxMs: 544.6, ThroughputRPS: 166.41}
	read := total
	read.Label = "list allergies"
	return &analysis.Summary{Verdict: analysis.VerdictFailed, Labels: []core.LabelStats{read, total},
		Phases: []analysis.PhaseSummary{{Name: "1: 2 nodes x 7 threads", Users: 14, Labels: []core.LabelStats{total}},
			{Name: "2: 2 nodes x 10 threads", Users: 20, Labels: []core.LabelStats{total}}},
		SLA: []analysis.SLAResult{{Expr: "avg(response_time) < 150ms", Observed: 155.25, Unit: "ms", Scope: "run"},
			{Expr: "error_rate < 1%", Passed: true, Observed: 0.093, Unit: "%", Scope: "1: 2 nodes x 7 threads"}}}
}

// TestConsoleInDanish: the end of a Danish run's console reads Danish —
// headers, decimal commas, requirements, errors, the test status — and
// holds none of the English console words; English is as before.
func TestConsoleInDanish(t *testing.T) {
	var da, en, nilLoc bytes.Buffer
	printSummary(&da, consoleSummary(), locale.MustParse("da"))
	printSummary(&en, consoleSummary(), locale.MustParse("en"))
	printSummary(&nilLoc, consoleSummary(), nil)
	for _, want := range []string{"fase", "målinger", "krav:", "BRUDT  avg(response_time) < 150ms  (målt 155,25ms over kørslen)",
		"OK  error_rate < 1%  (målt 0,093% over 1: 2 nodes x 7 threads)", "fejl: 0,09% (5 af 5.384 kald)", "teststatus: FEJLET — 1 af 2 krav ikke overholdt",
		"   155,2 ", "  166,41\n"} {
		if !strings.Contains(da.String(), want) {
			t.Errorf("the Danish console lacks %q:\n%s", want, da.String())
		}
	}
	for _, en := range []string{"requirements", "observed", "test status", "samples", "requests", " of ", "PASS", "FAIL", "166.41"} {
		if strings.Contains(da.String(), en) {
			t.Errorf("the Danish console has the English %q:\n%s", en, da.String())
		}
	}
	if en.String() != nilLoc.String() {
		t.Errorf("English differs from the default:\n%s\n%s", en.String(), nilLoc.String())
	}
	for _, want := range []string{"  FAIL  avg(response_time) < 150ms  (observed 155.25ms over run)", "errors: 0.09% (5 of 5384 requests)",
		"test status: FAILED — 1 of 2 requirements broken", "phase                      users     req/s    avg ms"} {
		if !strings.Contains(en.String(), want) {
			t.Errorf("the English console lacks %q:\n%s", want, en.String())
		}
	}
}

// TestProgressInDanish: a Danish run's progress line (CI logs) and panel
// read Danish; English is byte for byte as before.
func TestProgressInDanish(t *testing.T) {
	pr := &engine.Progress{Elapsed: 21 * time.Second, Phase: "3: 3 nodes x 10 threads", Users: 30,
		Run: engine.LabelProgress{Count: 3247, RPS: 151.7, P50Ms: 124.9, P95Ms: 222.5, ErrorPct: 0.09}, Second: engine.LabelProgress{RPS: 190}}
	line := func(loc *locale.Locale, tty bool) string {
		var b bytes.Buffer
		p := &progressPrinter{w: &b, loc: loc, tty: tty}
		p.update(pr)
		return b.String()
	}
	if got, want := line(nil, false), "[00m21s] phase \"3: 3 nodes x 10 threads\", 30 users, 151.7 req/s (last s 190.0), p50 124.9 ms, p95 222.5 ms, errors 0.09%, 3247 samples\n"; got != want {
		t.Errorf("English line\n got %q\nwant %q", got, want)
	}
	if got, want := line(locale.MustParse("da"), false), "[00m21s] fase \"3: 3 nodes x 10 threads\", 30 brugere, 151,7 kald/s (sidste s 190,0), p50 124,9 ms, p95 222,5 ms, fejl 0,09%, 3.247 målinger\n"; got != want {
		t.Errorf("Danish line\n got %q\nwant %q", got, want)
	}
	panel := line(locale.MustParse("da"), true)
	for _, want := range []string{"forløbet 00m21s", "målinger", "alle", "151,7", "(sidste sekund: 190 kald/s"} {
		if !strings.Contains(panel, want) {
			t.Errorf("the Danish panel lacks %q:\n%s", want, panel)
		}
	}
	if strings.Contains(panel, "samples") || strings.Contains(panel, "elapsed") {
		t.Errorf("the Danish panel has English:\n%s", panel)
	}
}
