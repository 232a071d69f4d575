package jmeter

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
)

// tputTimer is a Constant or Precise Throughput Timer: a target rate of
// samples, per user (perUser) or shared by the thread group's users.
type tputTimer struct {
	path, name string
	e          *Element
	kind       string  // "constant" or "precise"
	perMin     float64 // samples per minute
	perUser    bool
	note       string
}

// throughputTimer reads a throughput timer; false when its target is not
// a number (or a property with a default).
func (c *conv) throughputTimer(path string, e *Element) bool {
	num := func(name, def string) (float64, bool) {
		v := strings.TrimSpace(e.Str(name))
		if v == "" {
			v = beanProp(e, name)
		}
		if v == "" {
			v = def
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f, true
		}
		n, ok := c.number(v, "")
		if !ok {
			return 0, false
		}
		if m := envDefaultRe.FindStringSubmatch(n); m != nil {
			n = m[2]
			c.behaviour(fmt.Sprintf("throughput timer %q: its target %s is read from property %s at conversion (its default, %s); the plan's pace is fixed", e.Name, v, m[1], n))
		}
		f, err := strconv.ParseFloat(n, 64)
		return f, err == nil
	}
	t := &tputTimer{path: path, name: e.Name, e: e}
	switch e.TestClass {
	case "ConstantThroughputTimer":
		f, ok := num("throughput", "0")
		if !ok || f <= 0 {
			return false
		}
		t.kind, t.perMin = "constant", f
		mode, _ := strconv.Atoi(strings.TrimSpace(e.Str("calcMode")))
		if p := e.sub("calcMode"); p != nil && mode == 0 {
			mode, _ = strconv.Atoi(strings.TrimSpace(p.str("value")))
		}
		t.perUser = mode == 0
		if mode != 0 {
			t.note = "the target is shared by the thread group's users"
		}
	case "PreciseThroughputTimer":
		f, ok := num("throughput", "100")
		period, ok2 := num("throughputPeriod", "3600")
		if !ok || !ok2 || f <= 0 || period <= 0 {
			return false
		}
		t.kind, t.perMin = "precise", f*60/period
		t.note = "JMeter draws the gaps at random (a Poisson process over the thread group); the plan starts iterations evenly, one per pace"
	}
	if c.tput != nil {
		c.add(path, e, convert.NotConverted, "a second throughput timer in one thread group", "throughput timer")
		return true
	}
	c.tput = t
	return true
}

// applyThroughput turns the thread group's throughput timer into the
// workload's pacing: each user starts an iteration every pace, where pace
// is the requests of an iteration over the user's share of the rate.
func (c *conv) applyThroughput(wl *convert.Workload) {
	t := c.tput
	k := 0
	branches := false
	convert.WalkSteps(wl.Scenario, func(s *convert.Step) {
		if s.Request != nil {
			k++
		}
		if s.If != nil || s.Choose != nil || (s.Loop != nil && s.Loop.While != "") {
			branches = true
		}
	})
	if k == 0 {
		c.add(t.path, t.e, convert.NotConverted, "no request in its thread group", "throughput timer")
		return
	}
	users := 1.0
	if !t.perUser {
		u := wl.Load.Users
		if m := envDefaultRe.FindStringSubmatch(u); m != nil {
			u = m[2]
		}
		f, err := strconv.ParseFloat(u, 64)
		if err != nil || f < 1 {
			c.add(t.path, t.e, convert.NotConverted, "the thread group's users are not a number: the pace per user cannot be computed", "throughput timer")
			return
		}
		users = f
	}
	pace := time.Duration(math.Round(float64(k) * users * 60 / t.perMin * float64(time.Millisecond) * 1000))
	if pace <= 0 {
		return
	}
	notes := []string{fmt.Sprintf("%.4g samples/min → each user starts an iteration (%d %s) every %s", t.perMin, k, plural(k, "request"), convert.Dur(pace))}
	if t.note != "" {
		notes = append(notes, t.note)
	}
	if k > 1 {
		notes = append(notes, "JMeter spaces every request; the plan sends an iteration's requests one after another at the start of its slot")
	}
	if branches {
		notes = append(notes, "the iteration has branches: the pace counts every request of it")
	}
	l := &wl.Load
	if len(l.Steps) > 0 || l.Users == "" {
		c.add(t.path, t.e, convert.NotConverted, "the load is not a fixed number of users", "throughput timer")
		return
	}
	if l.Iterations != "" {
		if n, err := strconv.Atoi(l.Iterations); err == nil {
			l.Duration = convert.Dur(time.Duration(n) * pace)
			notes = append(notes, fmt.Sprintf("%d loops at this pace: the workload runs %s", n, l.Duration))
		} else {
			l.Duration = "10m"
			notes = append(notes, "a loop count from a property: the workload runs 10m")
		}
		l.Iterations = ""
	}
	if l.Duration == "" {
		l.Duration = "10m"
	}
	if l.RampUp != "" {
		notes = append(notes, "the ramp-up of "+l.RampUp+" is not kept: a paced load starts its users spread over the first pace")
		c.behaviour(fmt.Sprintf("thread group %q: users start over the first pace (%s), not over JMeter's ramp-up of %s", c.workloadName, convert.Dur(pace), l.RampUp))
		l.RampUp = ""
	}
	l.Pace = convert.Dur(pace)
	c.add(t.path, t.e, convert.Partial, strings.Join(notes, "; "), "")
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// beanProp reads a test bean's typed property written without a name
// attribute: <doubleProp><name>throughput</name><value>240.0</value>….
func beanProp(e *Element, name string) string {
	for _, k := range e.props.children {
		var n, v string
		for _, g := range k.children {
			switch g.name {
			case "name":
				n = g.text.String()
			case "value":
				v = g.text.String()
			}
		}
		if n == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
