package knee

import "testing"

// TestThinDataNoVerdict: a clear knee on steps that each had enough
// requests and time is found; the same sweep with one step of 12
// requests, or of 2 s, is "not enough data" and names that step; unknown
// counts (0) are not judged.
func TestThinDataNoVerdict(t *testing.T) {
	t.Parallel()
	pts := func(samples int64, seconds float64) []Point {
		return []Point{
			{Load: 10, ThroughputRPS: 100, MeanMs: 100, Samples: 1000, Seconds: 10},
			{Load: 20, ThroughputRPS: 200, MeanMs: 100, Samples: 2000, Seconds: 10},
			{Load: 40, ThroughputRPS: 201, MeanMs: 200, Samples: samples, Seconds: seconds},
		}
	}
	for _, c := range []struct {
		name    string
		samples int64
		seconds float64
		want    Outcome
	}{{"enough", 2010, 10, Stopped}, {"few requests", 12, 10, ThinData}, {"few seconds", 2010, 1.5, ThinData}, {"unknown", 0, 0, Stopped}} {
		r, err := Analyze(pts(c.samples, c.seconds), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Outcome != c.want || (c.want == ThinData) != (r.Knee == nil) {
			t.Errorf("%s: outcome %v (knee %v), want %v", c.name, r.Outcome, r.Knee, c.want)
		}
		if c.want == ThinData && (r.Thin == nil || r.Thin.Load != 40) {
			t.Errorf("%s: thin step %+v, want the one at 40", c.name, r.Thin)
		}
	}
}
