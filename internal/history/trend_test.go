package history_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/history"
)

// runsOf makes one stored-looking run per value: label "checkout"'s p95
// is the value (its mean half of it), everything else constant.
func runsOf(vals []float64) []*history.Run {
	var runs []*history.Run
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, v := range vals {
		runs = append(runs, &history.Run{ID: fmt.Sprintf("run-%03d", i), Plan: "shop", Start: t0.Add(time.Duration(i) * time.Hour),
			Labels: []history.LabelRow{{Label: "checkout", Samples: 5000, P95Ms: v, MeanMs: v / 2, ThroughputRPS: 50}}})
	}
	return runs
}

func noisy(rng *rand.Rand, n int, mean, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mean + rng.NormFloat64()*sd
	}
	return out
}

func p95Series(t *testing.T, a *history.Analysis) *history.Series {
	t.Helper()
	for _, s := range a.Series {
		if s.Label == "checkout" && s.Metric == history.MetricP95 {
			return s
		}
	}
	t.Fatal("no p95 series")
	return nil
}

// TestPlantedChangePoints: series with planted change points give those
// points, and none on pure noise.
func TestPlantedChangePoints(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 35))
	cat := func(parts ...[]float64) []float64 {
		var out []float64
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	cases := []struct {
		name  string
		vals  []float64
		opt   history.Options
		want  []int
		worse []bool
	}{
		{"step up", cat(noisy(rng, 20, 100, 2), noisy(rng, 20, 120, 2)), history.Options{}, []int{20}, []bool{true}},
		{"step down and back", cat(noisy(rng, 20, 100, 2), noisy(rng, 20, 80, 2), noisy(rng, 20, 100, 2)), history.Options{}, []int{20, 40}, []bool{false, true}},
		{"variance change", cat(noisy(rng, 30, 100, 0.5), noisy(rng, 30, 100, 12)), history.Options{MinChangePct: -1}, []int{30}, []bool{false}},
		{"noise", noisy(rng, 60, 100, 3), history.Options{}, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.opt.Seed = 1
			a, err := history.Analyze(runsOf(c.vals), c.opt)
			if err != nil {
				t.Fatal(err)
			}
			s := p95Series(t, a)
			var got []int
			var worse []bool
			for _, cp := range s.ChangePoints {
				got = append(got, cp.Run)
				worse = append(worse, cp.Worse)
			}
			// A variance change is found where the spread changes, give or
			// take a point (the first wide points may fall near the mean).
			if c.name == "variance change" && len(got) == 1 && got[0] >= c.want[0]-2 && got[0] <= c.want[0]+2 {
				got = c.want
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Fatalf("change points at runs %v, want %v (%+v)", got, c.want, s.ChangePoints)
			}
			if c.name != "variance change" && fmt.Sprint(worse) != fmt.Sprint(c.worse) {
				t.Errorf("worse %v, want %v", worse, c.worse)
			}
			for _, cp := range s.ChangePoints {
				if cp.PValue > 0.01 || cp.BeforeRuns < 3 || cp.AfterRuns < 3 {
					t.Errorf("change point %+v: p-value above alpha or a segment under 3 runs", cp)
				}
			}
		})
	}
}

// TestLatestJudgement: the latest run against the last stable segment is
// worse only when significantly so and by more than the threshold, and a
// step at the latest run itself is judged (not hidden in its own segment).
func TestLatestJudgement(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 5))
	base := noisy(rng, 14, 100, 1.5)
	for _, c := range []struct {
		name   string
		latest float64
		worse  bool
	}{
		{"same level", 101, false},
		{"much slower", 130, true},
		{"slightly slower, within threshold", 104, false},
		{"much faster", 70, false},
	} {
		a, err := history.Analyze(runsOf(append(append([]float64{}, base...), c.latest)), history.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		j := p95Series(t, a).Latest
		if j == nil || j.Worse != c.worse || j.Run != len(base) {
			t.Errorf("%s: judgement %+v, want worse=%v", c.name, j, c.worse)
		}
		if j != nil && (j.SegmentFrom != 0 || j.SegmentTo != len(base)) {
			t.Errorf("%s: compared with points [%d, %d), want the %d before it", c.name, j.SegmentFrom, j.SegmentTo, len(base))
		}
		if c.name == "much slower" && len(a.Worse()) == 0 {
			t.Errorf("Analysis.Worse is empty with a much slower latest run")
		}
	}
}

// TestOneNoisyRunHidesNothing: one run far off in the stable segment (a
// hiccup of the test machine) does not widen the segment enough to hide a
// regression of the latest run, as a mean ± standard deviation would.
func TestOneNoisyRunHidesNothing(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(11, 12))
	vals := noisy(rng, 14, 100, 1.5)
	vals[6] = 170
	a, err := history.Analyze(runsOf(append(vals, 115)), history.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	j := p95Series(t, a).Latest
	if j == nil || !j.Worse || j.SegmentTo != 14 {
		t.Fatalf("judgement %+v: a +15 %% latest run must be worse", j)
	}
	if j.SegmentSD < 15 || j.SegmentSpread > 3 {
		t.Errorf("sd %.1f, spread %.1f: the hiccup should widen the first, not the second", j.SegmentSD, j.SegmentSpread)
	}
}

// TestInterruptedRunsLeftOut: an interrupted run (part of its load) and a
// run where no request succeeded are listed but in no series, so neither
// is judged as the latest run nor makes a change point.
func TestInterruptedRunsLeftOut(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	runs := runsOf(noisy(rng, 12, 100, 1))
	runs[5].Verdict, runs[5].Labels[0].P95Ms = "interrupted", 400
	runs[11].Verdict, runs[11].Labels[0].P95Ms = "could not run", 900
	a, err := history.Analyze(runs, history.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := p95Series(t, a)
	if len(a.Runs) != 12 || len(s.Points) != 10 {
		t.Fatalf("%d runs listed, %d points, want 12 and 10", len(a.Runs), len(s.Points))
	}
	if s.Latest == nil || s.Latest.Run != 10 || s.Latest.Worse || len(s.ChangePoints) != 0 {
		t.Errorf("latest %+v, change points %+v: the last comparable run is run 11, at the same level", s.Latest, s.ChangePoints)
	}
}
