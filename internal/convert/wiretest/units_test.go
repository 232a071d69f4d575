package wiretest

import (
	"testing"
	"time"
)

// TestTimerExpression: a Uniform Random Timer whose delay is an
// expression of a variable ("200 + ${off}", off = 300 from a property):
// JMeter's think time, measured on the wire, and plateau's must match.
func TestTimerExpression(t *testing.T) {
	o := Run(t, Case{
		Dir: "testdata/units", JMX: "timer-expr.jmx",
		Bounds: Bounds{Users: 1, Iterations: 20, Duration: 30 * time.Second},
	})
	if len(o.JMeter) != 20 {
		t.Fatalf("JMeter sent %d requests, want 20", len(o.JMeter))
	}
}
