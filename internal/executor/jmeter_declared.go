package executor

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	cjmeter "github.com/plateau-perf/plateau/internal/convert/jmeter"
)

// Declare reads the plan's thread groups as JMeter will run them — the
// -J properties and the --set overrides applied first — with the
// converter's reading of a .jmx (internal/convert/jmeter.Loads): a
// standard Thread Group's ramp-up and the rest of its scheduler's
// duration after it (a hold of its threads); the JMeter Plugins' thread
// groups as the plugin computes their timeline — the Concurrency,
// Stepping and Ultimate groups' thread levels, the Arrivals and Free-Form
// Arrivals groups' arrival rates (checked as the samples their iterations
// write); and a Constant or Precise Throughput Timer's target, which names
// the hold instead ("600 samples/min"), over each step of stepped threads
// too. A group whose load cannot be read (a loop count rather than a
// duration, a value it does not resolve, another plugin's group), a setUp
// Thread Group (it runs first, for a time nothing declares) and thread
// groups that run at once leave the phases to the thread counts JMeter
// reports, and the notes say why.
func (jmeter) Declare(spec *Spec) Declared {
	src, err := os.ReadFile(spec.Script)
	if err != nil {
		return Declared{Why: err.Error()}
	}
	props := spec.propMap()
	src = jmeterProps(src, props)
	if len(spec.Set) > 0 {
		if src, err = overridePlan(src, spec.Set); err != nil {
			return Declared{Why: err.Error()}
		}
	}
	root, err := cjmeter.Parse(bytes.NewReader(src))
	if err != nil {
		return Declared{Why: fmt.Sprintf("%s: %v", spec.Script, err)}
	}
	if g := unknownGroup(root); g != nil {
		return Declared{Why: fmt.Sprintf("thread group %q (%s, line %d) is not one whose schedule plateau reads", g.Name, g.TestClass, g.Line)}
	}
	if hasEnabled(root, "SetupThreadGroup") {
		return Declared{Why: "a setUp Thread Group runs before the others, for a time the plan does not declare"}
	}
	abs, _ := filepath.Abs(spec.Script)
	loads, rep := cjmeter.Loads(root, cjmeter.Options{Source: abs, Properties: props})
	for _, n := range rep.Notes {
		if strings.Contains(n, "one after another") {
			return Declared{Why: "the test plan runs its thread groups one after another, each for as long as its threads take"}
		}
	}
	var hs []hold
	for _, g := range loads {
		if g.Class == "PostThreadGroup" {
			continue // tearDown: after the test
		}
		h, err := groupHolds(g)
		if err != nil {
			return Declared{Why: fmt.Sprintf("thread group %q: %v", g.Name, err)}
		}
		hs = append(hs, h...)
	}
	ps, err := phasesOf(hs)
	if err != nil {
		return Declared{Why: "thread groups run at once: " + err.Error()}
	}
	if len(ps) == 0 {
		return Declared{Why: "its thread groups declare no hold"}
	}
	return Declared{Phases: ps, Why: "read from the plan's thread groups", StartOnce: true}
}

// groupHolds turns one thread group's load into holds.
func groupHolds(g cjmeter.GroupLoad) ([]hold, error) {
	if g.HoldsErr != "" {
		return nil, fmt.Errorf("%s", g.HoldsErr)
	}
	if strings.Contains(g.Class, ".") { // a JMeter Plugins thread group
		return pluginHolds(g)
	}
	for _, n := range g.Notes {
		if strings.Contains(n, "stands in") || strings.Contains(n, "not a number") || strings.Contains(n, "values read from properties") {
			return nil, fmt.Errorf("%s", n)
		}
	}
	l := g.Load
	dur := func(s string) (time.Duration, error) {
		if s == "" {
			return 0, nil
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration", s)
		}
		return d, nil
	}
	count := func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%q threads is not a number", s)
		}
		return n, nil
	}
	t, err := dur(l.StartAfter)
	if err != nil {
		return nil, err
	}
	threads := func(n int) hold { return hold{users: n, label: fmt.Sprintf("%d threads", n)} }
	if l.Duration == "" {
		return nil, fmt.Errorf("it runs a number of loops, not for a time")
	}
	n, err := count(l.Users)
	if err != nil {
		return nil, err
	}
	r, err1 := dur(l.RampUp)
	d, err2 := dur(l.Duration)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("its times are not durations")
	}
	h := threads(n)
	if g.PerMin > 0 {
		perMin := g.PerMin
		if g.PerUser {
			perMin *= float64(n)
		}
		h = hold{rate: perMin / 60, unit: "samples/s", label: rateLabel(perMin, time.Minute, "samples")}
	}
	h.from, h.to = t+r, t+d
	return []hold{h}, nil
}

// pluginHolds are a JMeter Plugins thread group's holds (read by the
// converter as the plugin computes its timeline): a thread count, or an
// Arrivals group's arrival rate, checked as the samples its iterations
// write (each iteration's samples must be fixed); under a Constant or
// Precise Throughput Timer, the timer's target rate over each thread hold
// (for each thread where the timer paces each thread on its own).
func pluginHolds(g cjmeter.GroupLoad) ([]hold, error) {
	arrivals := cjmeter.IsArrivals(g.Class)
	if arrivals && g.PerMin > 0 {
		return nil, fmt.Errorf("a throughput timer over an Arrivals thread group: which of the two sets the rate is not declared")
	}
	if arrivals && g.SamplesPerIteration == 0 {
		return nil, fmt.Errorf("the samples an arrival writes are not fixed (a controller other than a Simple Controller, or embedded resources): its rate cannot be checked against JMeter's samples")
	}
	out := make([]hold, 0, len(g.Holds))
	for _, p := range g.Holds {
		h := hold{from: p.From, to: p.To}
		switch {
		case arrivals:
			k := float64(g.SamplesPerIteration)
			h.rate, h.unit, h.label = p.PerSec*k, "samples/s", p.Label
		case g.PerMin > 0:
			perMin := g.PerMin
			if g.PerUser {
				perMin *= float64(p.Threads)
			}
			h.rate, h.unit, h.label = perMin/60, "samples/s", rateLabel(perMin, time.Minute, "samples")
		default:
			h.users, h.label = p.Threads, p.Label
		}
		out = append(out, h)
	}
	return out, nil
}

// knownGroups are the thread groups whose load Declare reads.
var knownGroups = map[string]bool{
	"ThreadGroup": true, "SetupThreadGroup": true, "PostThreadGroup": true,
	"com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup":   true,
	"com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup":         true,
	"com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup": true,
	"kg.apc.jmeter.threads.UltimateThreadGroup":                          true,
	"kg.apc.jmeter.threads.SteppingThreadGroup":                          true,
}

// unknownGroup is the first enabled thread group of another plugin (its
// class ends in ThreadGroup), whose load nothing here reads.
func unknownGroup(e *cjmeter.Element) *cjmeter.Element {
	if !e.Enabled {
		return nil
	}
	if c := e.TestClass; strings.HasSuffix(c, "ThreadGroup") && !knownGroups[c] {
		return e
	}
	for _, k := range e.Children {
		if g := unknownGroup(k); g != nil {
			return g
		}
	}
	return nil
}

func hasEnabled(e *cjmeter.Element, class string) bool {
	if !e.Enabled {
		return false
	}
	if e.TestClass == class || e.Tag == class {
		return true
	}
	for _, k := range e.Children {
		if hasEnabled(k, class) {
			return true
		}
	}
	return false
}

var reJMeterProp = regexp.MustCompile(`\$\{__(P|property)\(([^,()}]*)((?:,[^,()}]*){0,2})\)\}`)

// jmeterProps writes the values JMeter's __P and __property functions
// give in the plan: the -J property, else the default the call names,
// else what JMeter gives (__P: 1; __property: the empty text).
func jmeterProps(src []byte, props map[string]string) []byte {
	return reJMeterProp.ReplaceAllFunc(src, func(m []byte) []byte {
		sm := reJMeterProp.FindSubmatch(m)
		name := strings.TrimSpace(string(sm[2]))
		args := strings.Split(strings.TrimPrefix(string(sm[3]), ","), ",")
		def, ok := "", false
		switch string(sm[1]) {
		case "P":
			def, ok = "1", true
			if len(sm[3]) > 0 && len(args) == 1 {
				def = args[0]
			} else if len(sm[3]) > 0 {
				return m // not __P's shape
			}
		case "property":
			if len(sm[3]) > 0 && len(args) == 2 {
				def = args[1]
			}
			ok = true
		}
		if !ok {
			return m
		}
		v, given := props[name]
		if !given {
			v = def
		}
		var b bytes.Buffer
		_ = xml.EscapeText(&b, []byte(v))
		return b.Bytes()
	})
}

// Started is JMeter's start: the time its log gives the start of its
// first thread group ("Starting ThreadGroup: 1 : …"), from which the
// groups' schedulers count their delay and ramp-up — JMeter logs "Running
// the test!" earlier, before it has initialised the plan, seconds earlier
// on a busy machine — in the machine's zone, as JMeter writes it.
func (jmeter) Started(out string, _ Declared) (time.Time, bool) {
	return firstLine(filepath.Join(out, "jmeter.log"), 16<<20, "", func(line string) (time.Time, bool) {
		if !strings.Contains(line, "StandardJMeterEngine: Starting ThreadGroup: ") || len(line) < 23 {
			return time.Time{}, false
		}
		t, err := time.ParseInLocation("2006-01-02 15:04:05,000", line[:23], time.Local)
		return t, err == nil
	})
}

var _ Declarer = jmeter{}
