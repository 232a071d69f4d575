package compare

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/core"
)

func TestParseRules(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []Rule
	}{
		{"p95 > +10%", []Rule{{Metric: P95, Op: ">", Change: 10, Relative: true, Col: 1}}},
		{"mean > +20ms", []Rule{{Metric: Mean, Op: ">", Change: 20, Col: 1}}},
		{"error_rate > +1%", []Rule{{Metric: ErrorRate, Op: ">", Change: 1, Col: 1}}},
		{"errors>=0.5pp", []Rule{{Metric: ErrorRate, Op: ">=", Change: 0.5, Col: 1}}},
		{"throughput < -5%", []Rule{{Metric: Throughput, Op: "<", Change: -5, Relative: true, Col: 1}}},
		{"rps <= -100 req/s", []Rule{{Metric: Throughput, Op: "<=", Change: -100, Col: 1}}},
		{"P99 > 1.5s", []Rule{{Metric: P99, Op: ">", Change: 1500, Col: 1}}},
		{"avg > 250us", []Rule{{Metric: Mean, Op: ">", Change: 0.25, Col: 1}}},
		{"median > 250 µs", []Rule{{Metric: P50, Op: ">", Change: 0.25, Col: 1}}},
		{"max > .5 MS", []Rule{{Metric: Max, Op: ">", Change: 0.5, Col: 1}}},
		{"p90 > -0%", []Rule{{Metric: P90, Op: ">", Change: 0, Relative: true, Col: 1}}},
		{"  p95 > +10% , mean>+20ms;error_rate > +1%", []Rule{
			{Metric: P95, Op: ">", Change: 10, Relative: true, Col: 3},
			{Metric: Mean, Op: ">", Change: 20, Col: 16},
			{Metric: ErrorRate, Op: ">", Change: 1, Col: 27},
		}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseRules(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %d rules %+v, want %+v", len(got), got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("rule %d: got %s at column %d, want %s at column %d", i, got[i], got[i].Col, tc.want[i], tc.want[i].Col)
				}
			}
		})
	}
}

func TestParseRulesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in  string
		col int
		msg string
	}{
		{"", 1, "expected a metric"},
		{"   ", 4, "found the end"},
		{"p96 > +10%", 1, `unknown metric "p96"`},
		{"p95 => +10%", 5, "expected an operator"},
		{"p95 +10%", 5, "expected an operator"},
		{"p95 > %", 7, "expected a signed number"},
		{"p95 > +10", 10, "missing unit after 10 (want %, ms, s, us or µs)"},
		{"p95 > +10x", 10, `unit "x" does not apply to p95`},
		{"error_rate > +1ms", 16, `unit "ms" does not apply to error_rate (want % or pp)`},
		{"throughput < -5ms", 16, "want %, rps or req/s"},
		{"p95 > +10%,", 12, "found the end"},
		{"p95 > +10% mean > 1ms", 12, `unexpected "mean > 1ms"`},
		{"p95 > +.%", 8, "expected a number"},
		{"µ > 1ms", 1, "expected a metric"},
		{"mean > 1ms, µ > 1ms", 13, "expected a metric"},
		{"p95 > 1" + strings.Repeat("0", 400) + "%", 7, "out of range"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			_, err := ParseRules(tc.in)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if pe.Col != tc.col || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("got column %d %q, want column %d containing %q", pe.Col, pe.Msg, tc.col, tc.msg)
			}
			if !strings.Contains(err.Error(), "fail-on ") {
				t.Errorf("message %q lacks context", err)
			}
		})
	}
}

func TestRuleCheck(t *testing.T) {
	t.Parallel()
	base := core.LabelStats{MeanMs: 200, P50Ms: 150, P90Ms: 300, P95Ms: 400, P99Ms: 800, MaxMs: 2000, ErrorPct: 0.2, ThroughputRPS: 1000}
	cand := core.LabelStats{MeanMs: 230, P50Ms: 150, P90Ms: 320, P95Ms: 436, P99Ms: 790, MaxMs: 2000, ErrorPct: 1.3, ThroughputRPS: 940}
	for _, tc := range []struct {
		rule     string
		observed float64
		failed   bool
	}{
		{"p95 > +10%", 9, false},
		{"p95 > +8%", 9, true},
		{"p95 >= +9%", 9, true},
		{"mean > +20ms", 30, true},
		{"mean > +30ms", 30, false},
		{"mean >= +0.03s", 30, true},
		{"error_rate > +1%", 1.1, true},
		{"error_rate > +1.5pp", 1.1, false},
		{"throughput < -5%", -6, true},
		{"throughput < -10%", -6, false},
		{"throughput <= -60rps", -60, true},
		{"p99 < -1%", -1.25, true},
		{"p50 > 0%", 0, false},
		{"max >= 0ms", 0, true},
	} {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			rs, err := ParseRules(tc.rule)
			if err != nil {
				t.Fatal(err)
			}
			o := rs[0].Check(base, cand)
			if math.Abs(o.Observed-tc.observed) > 1e-9 || o.Failed != tc.failed {
				t.Errorf("observed %v failed %v, want %v %v", o.Observed, o.Failed, tc.observed, tc.failed)
			}
			if o.Rule.String() != rs[0].String() {
				t.Errorf("outcome of %q, want the rule %q", o.Rule, rs[0])
			}
		})
	}
	// A relative change from a zero baseline is infinite and fires ">".
	rs, _ := ParseRules("error_rate > +1%, p95 > +10%")
	outs, failed := CheckAll(rs, core.LabelStats{P95Ms: 0}, core.LabelStats{P95Ms: 5})
	if !failed || !math.IsInf(outs[1].Observed, 1) || outs[0].Failed {
		t.Errorf("CheckAll from zero: %+v, failed %v", outs, failed)
	}
}

// FuzzParseRules: the parser never panics, every error is a *ParseError
// with a column inside the input (or just past it), and every parsed rule
// prints to text that parses back to the same rule.
func FuzzParseRules(f *testing.F) {
	for _, s := range []string{"p95 > +10%", "mean > +20ms", "error_rate > +1%", "throughput < -5%, p99 >= +250ms",
		"avg>.5s;rps<=-3req/s", "median > 250 µs", "p95 > +10%,", "", "µ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		rs, err := ParseRules(s)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("%q: error %v is not a *ParseError", s, err)
			}
			if pe.Col < 1 || pe.Col > len([]rune(s))+1 {
				t.Fatalf("%q: column %d out of range", s, pe.Col)
			}
			return
		}
		for _, r := range rs {
			back, err := ParseRules(r.String())
			if err != nil {
				t.Fatalf("%q: rule %+v prints as %q, which fails: %v", s, r, r.String(), err)
			}
			b := back[0]
			b.Col = r.Col
			if len(back) != 1 || b != r {
				t.Fatalf("%q: %+v → %q → %+v", s, r, r.String(), back)
			}
		}
	})
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	// Four repeats (reference 004 style).
	runs := []RunStats{
		{Name: "test 1", Stats: core.LabelStats{MeanMs: 500, P95Ms: 900, ThroughputRPS: 20, ErrorPct: 0}},
		{Name: "test 2", Stats: core.LabelStats{MeanMs: 520, P95Ms: 950, ThroughputRPS: 19, ErrorPct: 0.1}},
		{Name: "test 3", Stats: core.LabelStats{MeanMs: 480, P95Ms: 880, ThroughputRPS: 21, ErrorPct: 0}},
		{Name: "test 4", Stats: core.LabelStats{MeanMs: 500, P95Ms: 870, ThroughputRPS: 20, ErrorPct: 0.3}},
	}
	s, err := Summarize(runs)
	if err != nil {
		t.Fatal(err)
	}
	// Mean 500, deviations 0, 20, −20, 0 → SD √(800/3).
	wantSD := math.Sqrt(800.0 / 3)
	if s.MeanMs.Min != 480 || s.MeanMs.Max != 520 || s.MeanMs.Mean != 500 ||
		math.Abs(s.MeanMs.SD-wantSD) > 1e-9 || math.Abs(s.MeanMs.CV-wantSD/500) > 1e-12 {
		t.Errorf("mean spread %+v", s.MeanMs)
	}
	if s.P95Ms.Max != 950 || s.ErrorPct.Max != 0.3 || s.ThroughputRPS.Min != 19 || len(s.Runs) != 4 {
		t.Errorf("summary %+v", s)
	}
	one, err := Summarize(runs[:1])
	if err != nil || one.MeanMs.SD != 0 || one.MeanMs.CV != 0 {
		t.Errorf("one run: %+v, %v", one.MeanMs, err)
	}
	if _, err := Summarize(nil); err == nil {
		t.Error("no runs: want an error")
	}
	bad := []RunStats{{Name: "nan", Stats: core.LabelStats{MeanMs: math.NaN()}}}
	if _, err := Summarize(bad); err == nil || !strings.Contains(err.Error(), `run "nan"`) {
		t.Errorf("NaN run: err = %v", err)
	}
}
