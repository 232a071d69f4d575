package analysis

import (
	"github.com/plateau-perf/plateau/internal/rundir/rundirtest"
	"testing"
)

// TestWhyIsTyped: analysis states the test status's reasons as kinds and
// facts, and writes no words (the report words them).
func TestWhyIsTyped(t *testing.T) {
	t.Parallel()
	d, err := Load(rundirtest.WriteSteps(t))
	if err != nil {
		t.Fatal(err)
	}
	d.Total.Errors = d.Total.Count // every request failed
	s := Summarize(d, nil)
	if s.Verdict != VerdictNotRun || len(s.Why) != 1 || s.Why[0].Kind != WhyNoneSucceeded || s.Why[0].Requests != 600 ||
		s.Why[0].Top == nil || s.Why[0].Top.Status != 503 {
		t.Errorf("verdict %q, why %+v", s.Verdict, s.Why)
	}
	if len(s.VerdictReasons) != 0 {
		t.Errorf("analysis worded its reasons: %q", s.VerdictReasons)
	}
	s = Summarize(d, []string{"error_rate < 1%"})
	for _, f := range s.Validity.Findings {
		if f.Text != "" {
			t.Errorf("analysis worded a finding: %q", f.Text)
		}
	}
}
