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

// TestElements runs testdata/units/elements.jmx — one of each element the
// real plans need — under both tools: a plan-level Header Manager reading
// a headerless, quoted, ';'-separated CSV column and a property with an
// empty default (whole value), HTTP Request Defaults with host and port
// from properties (the port kept), a path starting with a variable that
// holds "/api" (no "//"), a form with an unencoded field ("1234+Test+St."
// as written) and an encoded one, a CSV with ignoreFirstLine, a Random
// Variable with a bound from a property, Once Only (once per user), an
// endless Loop Controller (the iteration) and a timer whose delay is a
// property.
func TestElements(t *testing.T) {
	o := Run(t, Case{
		Dir: "testdata/units", JMX: "elements.jmx",
		Bounds: Bounds{Users: 2, Duration: 4 * time.Second},
	})
	logins := 0
	for _, q := range o.JMeter {
		if q.Path == "/api/login" {
			logins++
		}
	}
	if logins != 2 {
		t.Errorf("JMeter logged in %d times, want once per user (2)", logins)
	}
	if len(o.JMeter) < 10 {
		t.Errorf("JMeter sent %d requests", len(o.JMeter))
	}
}
