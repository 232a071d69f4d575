package jmeter

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Hold is a time during which a JMeter Plugins thread group's declared
// schedule keeps one level: a thread count (Threads) or, for the Arrivals
// and Free-Form Arrivals thread groups, an arrival rate (PerSec: the
// iterations it starts a second).
type Hold struct {
	From, To time.Duration // from the thread group's start
	Threads  int
	PerSec   float64
	// Label names the level as the plan gives it: "6 threads",
	// "120 arrivals/min", "2 arrivals/s".
	Label string
}

// Class names of the JMeter Plugins' thread groups (jpgc-casutg).
const (
	classConcurrency = "com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup"
	classArrivals    = "com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup"
	classFreeForm    = "com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup"
	classUltimate    = "kg.apc.jmeter.threads.UltimateThreadGroup"
	classStepping    = "kg.apc.jmeter.threads.SteppingThreadGroup"
)

// IsArrivals says the class is an Arrivals or Free-Form Arrivals thread
// group, whose holds are arrival rates.
func IsArrivals(class string) bool { return class == classArrivals || class == classFreeForm }

// schedule reads the holds a JMeter Plugins thread group declares, as
// the plugin (jpgc-casutg 2.10) computes its timeline: the Concurrency
// Thread Group's steps (each step's level rounded as the plugin rounds
// it, the last held for Hold), the Arrivals Thread Group's rate steps,
// the Free-Form Arrivals rows whose rate does not change, the Ultimate
// Thread Group's times when no row is starting or stopping threads (the
// rows' threads added up, JMeter property threads_schedule first), the
// Stepping Thread Group's steps up and down (each thread's start and end
// time as the plugin computes them). props are the JMeter properties the
// plugins read themselves. An error says why the schedule is not read.
func (c *conv) schedule(e *Element, props map[string]string) ([]Hold, error) {
	switch e.TestClass {
	case classConcurrency:
		return c.concurrencySchedule(e, props)
	case classArrivals:
		return c.arrivalsSchedule(e)
	case classFreeForm:
		return c.freeFormSchedule(e)
	case classUltimate:
		return c.ultimateSchedule(e, props)
	case classStepping:
		return c.steppingSchedule(e)
	}
	return nil, fmt.Errorf("not a JMeter Plugins thread group")
}

// value resolves a field to a number: a literal, or a User Defined
// Variable holding one (properties are written in before: ${__P(…)}).
// def stands for an absent field and for an empty one, as the plugins
// read them — but for Hold, absent 1 and empty 0 (the plugins' getHold).
func (c *conv) value(e *Element, name, def string) (float64, error) {
	s := strings.TrimSpace(e.Str(name))
	switch {
	case !e.Has(name):
		s = def
	case s == "" && name == "Hold":
		s = "0"
	case s == "":
		s = def
	}
	return c.resolveNumber(name, s)
}

// maxValue bounds a schedule's numbers (threads, seconds, minutes: 10⁷
// minutes is 19 years), so that no time overflows.
const maxValue = 1e7

func (c *conv) resolveNumber(name, s string) (float64, error) {
	for range 5 {
		if strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") {
			if v, ok := c.consts[s[2:len(s)-1]]; ok {
				s = strings.TrimSpace(v)
				continue
			}
		}
		break
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%s %q is not a number the plan declares", name, s)
	}
	if math.Abs(f) > maxValue {
		return 0, fmt.Errorf("%s %v is larger than a schedule plateau reads (%g)", name, f, float64(maxValue))
	}
	return f, nil
}

// whole reads a field the plugin reads as a Java int: a text that is not
// a whole number is 0 to it, so it is refused here rather than guessed.
func (c *conv) whole(e *Element, name, def string) (int64, error) {
	f, err := c.value(e, name, def)
	if err != nil {
		return 0, err
	}
	if f != math.Trunc(f) {
		return 0, fmt.Errorf("%s %v is not a whole number (the plugin reads it as one)", name, f)
	}
	return int64(f), nil
}

// unitFactor is the plugins' Unit: minutes ("M") or seconds (anything
// else).
func unitFactor(e *Element) (float64, string) {
	if strings.TrimSpace(e.Str("Unit")) == "M" {
		return 60, "min"
	}
	return 1, "s"
}

// javaRound is Java's Math.round of a double.
func javaRound(v float64) int64 { return int64(math.Floor(v + 0.5)) }

func secs(s float64) time.Duration { return time.Duration(math.Round(s * float64(time.Second))) }

func threadsLabel(n int) string { return strconv.Itoa(n) + " threads" }

func arrivalsLabel(v float64, unit string) string {
	return strconv.FormatFloat(math.Round(v*1000)/1000, 'f', -1, 64) + " arrivals/" + unit
}

// stepFields reads the fields the Concurrency and Arrivals thread groups
// share, with the plugins' defaults: the target level, ramp-up, hold and
// step count.
func (c *conv) stepFields(e *Element) (target int64, ramp, hold float64, steps int64, err error) {
	if target, err = c.whole(e, "TargetLevel", "1"); err != nil {
		return
	}
	if ramp, err = c.value(e, "RampUp", "0"); err != nil {
		return
	}
	if hold, err = c.value(e, "Hold", "1"); err != nil {
		return
	}
	steps, err = c.whole(e, "Steps", "0")
	return
}

// concurrencySchedule: ConcurrencyThreadStarter.getPlannedConcurrency.
func (c *conv) concurrencySchedule(e *Element, props map[string]string) ([]Hold, error) {
	f, _ := unitFactor(e)
	target, rampF, holdF, steps, err := c.stepFields(e)
	if err != nil {
		return nil, err
	}
	if target <= 0 {
		return nil, fmt.Errorf("its target concurrency %d starts no thread", target)
	}
	ramp, hold := float64(javaRound(rampF*f)), float64(javaRound(holdF*f))
	shift := 0.0
	if s := strings.TrimSpace(props["dynamic_tg.shift_rampup_start"]); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v > maxValue {
			return nil, fmt.Errorf("property dynamic_tg.shift_rampup_start %q is not a whole number of seconds plateau reads", s)
		}
		shift = float64(max(v, 0))
	}
	end := shift + ramp + hold
	var out []Hold
	switch {
	case ramp == 0:
		out = append(out, Hold{From: 0, To: secs(end), Threads: int(target)})
	case steps > 0:
		stepSize, stepLen := float64(target)/float64(steps), ramp/float64(steps)
		for k := int64(0); k < steps; k++ {
			from, to := shift+float64(k)*stepLen, shift+float64(k+1)*stepLen
			if k == 0 {
				from = 0 // before the shift, the plugin holds the first step's level
			}
			if k == steps-1 {
				to = end
			}
			n := javaRound(stepSize * float64(k+1))
			if k == steps-1 {
				n = target
			}
			out = append(out, Hold{From: secs(from), To: secs(to), Threads: int(n)})
		}
	default:
		out = append(out, Hold{From: secs(shift + ramp), To: secs(end), Threads: int(target)})
	}
	return labelThreads(out), nil
}

func labelThreads(hs []Hold) []Hold {
	out := hs[:0]
	for _, h := range hs {
		if h.Threads > 0 && h.To > h.From {
			h.Label = threadsLabel(h.Threads)
			out = append(out, h)
		}
	}
	return out
}

// arrivalsSchedule: ArrivalsThreadStarter.getCurrentRate.
func (c *conv) arrivalsSchedule(e *Element) ([]Hold, error) {
	f, unit := unitFactor(e)
	target, rampF, holdF, steps, err := c.stepFields(e)
	if err != nil {
		return nil, err
	}
	if limit, err := c.whole(e, "ArrivalsLimit", "0"); err != nil || limit > 0 {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("it stops after %d arrivals, at a time the plan does not declare", limit)
	}
	if target <= 0 {
		return nil, fmt.Errorf("its target rate %d starts no arrival", target)
	}
	ramp, hold := float64(javaRound(rampF*f)), float64(javaRound(holdF*f))
	end := ramp + hold
	mk := func(from, to, perUnit float64) Hold {
		return Hold{From: secs(from), To: secs(to), PerSec: perUnit / f, Label: arrivalsLabel(perUnit, unit)}
	}
	var out []Hold
	switch {
	case ramp == 0:
		out = append(out, mk(0, end, float64(target)))
	case steps > 0:
		stepSize, stepLen := float64(target)/float64(steps), ramp/float64(steps)
		for k := int64(0); k < steps; k++ {
			to := float64(k+1) * stepLen
			if k == steps-1 {
				to = end
			}
			out = append(out, mk(float64(k)*stepLen, to, stepSize*float64(k+1)))
		}
	default:
		out = append(out, mk(ramp, end, float64(target)))
	}
	return nonEmptyHolds(out), nil
}

func nonEmptyHolds(hs []Hold) []Hold {
	out := hs[:0]
	for _, h := range hs {
		if h.To > h.From && (h.Threads > 0 || h.PerSec > 0) {
			out = append(out, h)
		}
	}
	return out
}

// rows reads a collectionProp of collectionProps (a table: the Ultimate
// Thread Group's schedule, the Free-Form Arrivals rows) as text.
func (e *Element) rows(name string) [][]string {
	p := e.props.prop(name)
	if p == nil {
		return nil
	}
	var out [][]string
	for _, r := range p.children {
		if r.name != "collectionProp" {
			continue
		}
		var row []string
		for _, f := range r.children {
			row = append(row, strings.TrimSpace(f.text.String()))
		}
		out = append(out, row)
	}
	return out
}

// freeFormSchedule: FreeFormArrivalsThreadStarter.getCurrentRate — each
// row's rate goes from its start to its end value over its duration (the
// plugin adds the durations up in whole seconds); a row whose start and
// end are equal is a hold.
func (c *conv) freeFormSchedule(e *Element) ([]Hold, error) {
	f, unit := unitFactor(e)
	if limit, err := c.whole(e, "ArrivalsLimit", "0"); err != nil || limit > 0 {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("it stops after %d arrivals, at a time the plan does not declare", limit)
	}
	rows := e.rows("Schedule")
	if len(rows) == 0 {
		return nil, fmt.Errorf("its schedule has no rows")
	}
	var out []Hold
	offset := 0 // the plugin's int offset: each row's end truncated to a whole second
	for i, r := range rows {
		if len(r) < 3 {
			return nil, fmt.Errorf("schedule row %d has %d fields, want start, end and duration", i+1, len(r))
		}
		var v [3]float64
		for j := range v {
			x, err := c.resolveNumber(fmt.Sprintf("schedule row %d field %d", i+1, j+1), r[j])
			if err != nil {
				return nil, err
			}
			v[j] = x
		}
		chunk := v[2] * f
		if chunk <= 0 || float64(offset)+chunk > 60*maxValue {
			return nil, fmt.Errorf("schedule row %d lasts %v, or the schedule is too long", i+1, v[2])
		}
		from := offset
		offset = int(float64(offset) + chunk)
		if v[0] == v[1] && v[0] > 0 {
			out = append(out, Hold{From: time.Duration(from) * time.Second, To: time.Duration(offset) * time.Second, PerSec: v[0] / f, Label: arrivalsLabel(v[0], unit)})
		}
	}
	return nonEmptyHolds(out), nil
}

// loopsForever says the group's main controller loops until its threads'
// end time: the Ultimate and Stepping groups end their threads by the
// schedule only then.
func loopsForever(e *Element) bool {
	mc := e.sub("ThreadGroup.main_controller")
	if mc == nil {
		return false
	}
	loops := strings.TrimSpace(mc.str("LoopController.loops"))
	return loops == "-1" || mc.str("LoopController.continue_forever") == "true" && loops == ""
}

// span is one thread's life in the schedule, in ms from the group's start.
type span struct{ start, end int64 }

// flatHolds are the candidate windows [from, to) in which no thread
// starts or ends, at the number of threads alive in them (a window that
// a thread's start or end cuts is not a hold: it is dropped).
func flatHolds(spans []span, windows [][2]int64) []Hold {
	starts := make([]int64, len(spans))
	ends := make([]int64, len(spans))
	for i, s := range spans {
		starts[i], ends[i] = s.start, max(s.end, s.start)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	// upTo is how many of sorted xs are ≤ t; inside says one lies in (a, b).
	upTo := func(xs []int64, t int64) int {
		return sort.Search(len(xs), func(i int) bool { return xs[i] > t })
	}
	inside := func(xs []int64, a, b int64) bool {
		i := upTo(xs, a)
		return i < len(xs) && xs[i] < b
	}
	var out []Hold
	for _, w := range windows {
		if w[1] > maxWindowMs {
			continue // past any test's end (and past time.Duration's range)
		}
		if w[1] <= w[0] || inside(starts, w[0], w[1]) || inside(ends, w[0], w[1]) {
			continue
		}
		// Alive over the whole window: started by its start, not ended by it.
		if n := upTo(starts, w[0]) - upTo(ends, w[0]); n > 0 {
			out = append(out, Hold{From: time.Duration(w[0]) * time.Millisecond, To: time.Duration(w[1]) * time.Millisecond, Threads: n})
		}
	}
	return labelThreads(out)
}

// maxWindowMs is the latest a hold of thread counts may end: 31 years.
const maxWindowMs = 1e12

// maxScheduledThreads bounds the threads whose times are computed one by
// one (a hostile plan must not exhaust memory).
const maxScheduledThreads = 100_000

// ultimateSchedule: UltimateThreadGroup.scheduleThread — a row's threads
// start over its startup time after its initial delay, all run for its
// hold time, and stop over its shutdown time; the rows add up.
func (c *conv) ultimateSchedule(e *Element, props map[string]string) ([]Hold, error) {
	if !loopsForever(e) {
		return nil, fmt.Errorf("its threads run a number of loops, not until the schedule ends them")
	}
	var rows [][5]int64
	if s := strings.TrimSpace(props["threads_schedule"]); s != "" {
		for _, chunk := range strings.Split(s, ")") {
			if strings.TrimSpace(chunk) == "" {
				continue
			}
			parts := strings.FieldsFunc(chunk, func(r rune) bool { return r == '(' || r == ',' })
			if len(parts) < 6 || !strings.EqualFold(strings.TrimSpace(parts[0]), "spawn") {
				return nil, fmt.Errorf("property threads_schedule: %q is not spawn(threads, delay, startup, hold, shutdown)", strings.TrimSpace(chunk)+")")
			}
			var row [5]int64
			n, err := strconv.ParseInt(strings.TrimSpace(parts[1]), 10, 32)
			if err != nil {
				return nil, fmt.Errorf("property threads_schedule: %q: the thread count is not a whole number", strings.TrimSpace(chunk)+")")
			}
			row[0] = n
			for i := 1; i < 5; i++ {
				row[i] = shortSeconds(parts[i+1])
			}
			rows = append(rows, row)
		}
	} else {
		data := e.rows("ultimatethreadgroupdata")
		if !e.Has("ultimatethreadgroupdata") {
			data = e.rows("threads_schedule") // the plugin reads a schedule saved under this name too
		}
		for i, r := range data {
			if len(r) < 5 {
				return nil, fmt.Errorf("schedule row %d has %d fields, want 5", i+1, len(r))
			}
			var row [5]int64
			for j := range row {
				v, err := c.resolveNumber(fmt.Sprintf("schedule row %d field %d", i+1, j+1), r[j])
				if err != nil {
					return nil, err
				}
				if v != math.Trunc(v) || v < 0 {
					return nil, fmt.Errorf("schedule row %d field %d: %v is not a whole number of threads or seconds", i+1, j+1, v)
				}
				row[j] = int64(v)
			}
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("its schedule has no rows")
	}
	var spans []span
	var cuts []int64
	for _, r := range rows {
		n, delay, startup, hold, shutdown := r[0], r[1], r[2], r[3], r[4]
		if n <= 0 {
			continue
		}
		if int64(len(spans))+n > maxScheduledThreads {
			return nil, fmt.Errorf("more than %d threads", maxScheduledThreads)
		}
		ascent := 1000 * delay
		descent := ascent + 1000*startup + 1000*hold
		for j := n; j >= 1; j-- {
			start := ascent + int64(math.Floor(1000*float64(startup)*float64(j)/float64(n)))
			spans = append(spans, span{start, descent + int64(math.Floor(1000*float64(shutdown)*float64(j)/float64(n)))})
		}
		cuts = append(cuts, ascent, ascent+1000*startup, descent, descent+1000*shutdown)
	}
	return flatHolds(spans, windowsBetween(cuts)), nil
}

// windowsBetween are the windows between consecutive distinct cut times.
func windowsBetween(cuts []int64) [][2]int64 {
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	var out [][2]int64
	for i := 1; i < len(cuts); i++ {
		if cuts[i] > cuts[i-1] {
			out = append(out, [2]int64{cuts[i-1], cuts[i]})
		}
	}
	return out
}

// shortSeconds is JMeterPluginsUtils.getSecondsForShortString: "90",
// "1m30s", "2h".
func shortSeconds(s string) int64 {
	var res, cur int64
	for _, r := range strings.TrimSpace(s) {
		if r >= '0' && r <= '9' {
			cur = cur*10 + int64(r-'0')
			if cur > 1e9 {
				cur = 1e9
			}
			continue
		}
		mul := int64(0)
		switch r {
		case 's', 'S':
			mul = 1
		case 'm', 'M':
			mul = 60
		case 'h', 'H':
			mul = 3600
		case 'd', 'D':
			mul = 86400
		}
		res += cur * mul
		cur = 0
	}
	return res + cur
}

// steppingSchedule: SteppingThreadGroup.scheduleThread — a first burst,
// then a number of threads every period, each step's threads started over
// its ramp-up; all held for the flight time; then a number stopped every
// period.
func (c *conv) steppingSchedule(e *Element) ([]Hold, error) {
	if !loopsForever(e) {
		return nil, fmt.Errorf("its threads run a number of loops, not until the schedule ends them")
	}
	get := func(name string) (int64, error) {
		v, err := c.whole(e, name, "0")
		if err != nil {
			return 0, err
		}
		if v < 0 {
			return 0, fmt.Errorf("%s %d is negative", name, v)
		}
		return v, nil
	}
	var f [8]int64
	for i, name := range []string{"ThreadGroup.num_threads", "Threads initial delay", "Start users count", "Start users count burst", "Start users period", "rampUp", "flighttime", "Stop users count"} {
		v, err := get(name)
		if err != nil {
			return nil, err
		}
		f[i] = v
	}
	outPeriod, err := get("Stop users period")
	if err != nil {
		return nil, err
	}
	n, delay, in, burst, inPeriod, ramp, flight, out := f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7]
	if n <= 0 {
		return nil, fmt.Errorf("it has no threads")
	}
	if n > maxScheduledThreads {
		return nil, fmt.Errorf("more than %d threads", maxScheduledThreads)
	}
	if in == 0 {
		in = n
	}
	if out == 0 {
		out = n
	}
	burst = min(burst, n)
	if burst <= 0 {
		burst = in
	}
	ascent := 1000 * delay
	iterDur := 1000*inPeriod + 1000*ramp
	iterTotal := int64(1)
	if n >= burst {
		iterTotal = int64(math.Ceil(float64(n-burst) / float64(in)))
	}
	last := (n - burst) % in
	if last == 0 {
		last = in
	}
	descent := ascent + iterTotal*iterDur + (1000*ramp/in)*last + 1000*flight
	buckets := 1 + (n-burst+in-1)/in
	spans := make([]span, n)
	bucketLast := make([]int64, buckets)  // a step's last thread start
	bucketFirst := make([]int64, buckets) // a step's first thread start
	for b := range bucketFirst {
		bucketLast[b], bucketFirst[b] = math.MinInt64, math.MaxInt64
	}
	for t := int64(0); t < n; t++ {
		bucket, cnt, pos := int64(0), burst, t
		if t >= burst {
			bucket, cnt, pos = 1+(t-burst)/in, in, (t-burst)%in
		}
		start := ascent + bucket*iterDur + pos*(1000*ramp/cnt)
		spans[t] = span{start, descent + 1000*outPeriod*(t/out)}
		bucketLast[bucket] = max(bucketLast[bucket], start)
		bucketFirst[bucket] = min(bucketFirst[bucket], start)
	}
	// Up: from a step's last start to the next step's first; then to the
	// first stop. Down: between one batch of stops and the next.
	var windows [][2]int64
	for b := range bucketLast {
		next := descent
		if b+1 < len(bucketFirst) {
			next = bucketFirst[b+1]
		}
		windows = append(windows, [2]int64{bucketLast[b], next})
	}
	var ends []int64
	for _, s := range spans {
		ends = append(ends, s.end)
	}
	windows = append(windows, windowsBetween(ends)...)
	return flatHolds(spans, windows), nil
}

// SamplesPerIteration counts the samples one iteration of the thread
// group writes to the results, where that is fixed: its samplers, directly
// or under Simple Controllers, none fetching embedded resources (each a
// sample of its own). An Arrivals group's arrival rate is checked as
// samples a second with it. False when another controller decides what
// runs (If, Loop, Transaction …).
func SamplesPerIteration(e *Element) (int, bool) {
	n := 0
	var walk func(ks []*Element) bool
	walk = func(ks []*Element) bool {
		for _, k := range ks {
			if !k.Enabled {
				continue
			}
			tc := k.TestClass
			switch {
			case tc == "GenericController":
				if !walk(k.Children) {
					return false
				}
			case tc == "TestAction": // Flow Control Action: no sample
			case strings.HasSuffix(tc, "Sampler") || strings.HasSuffix(tc, "SamplerProxy"):
				if k.Bool("HTTPSampler.image_parser", false) {
					return false
				}
				n++
			case strings.HasSuffix(tc, "Controller"):
				return false
			}
		}
		return true
	}
	if !walk(e.Children) {
		return 0, false
	}
	return n, n > 0
}
