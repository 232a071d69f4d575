package resources

import "testing"

func TestGrades(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pct  float64
		host bool
		want CPUGrade
	}{{50, true, CPUOK}, {69.9, true, CPUOK}, {70, true, CPUHigh}, {85, true, CPUSaturated}, {250, false, CPUPerProcess}} {
		if got := GradeCPU(c.pct, c.host); got != c.want {
			t.Errorf("GradeCPU(%v, %v) = %v, want %v", c.pct, c.host, got, c.want)
		}
	}
	if GCBusy(1, 10) || !GCBusy(1.1, 0) || !GCBusy(0, 10.5) {
		t.Error("GCBusy thresholds")
	}
}
