package jmeter

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
)

// Options change a conversion.
type Options struct {
	// Source is the .jmx path as given (named in the report; Include
	// Controllers resolve against its directory).
	Source string
	// ReadFile reads an included .jmx; nil means os.ReadFile.
	ReadFile func(string) ([]byte, error)
	// Properties are the JMeter properties (-J) the JMeter Plugins' thread
	// groups read themselves (threads_schedule,
	// dynamic_tg.shift_rampup_start), for Loads' schedules.
	Properties map[string]string
}

// Convert converts a parsed test plan.
func Convert(root *Element, opt Options) (*convert.Plan, *convert.Report) {
	c := convertPlan(root, opt)
	return c.plan, c.report
}

// GroupLoad is the load of one thread group as the plan declares it —
// before a throughput timer turns it into pacing — for a caller that
// runs the plan in JMeter and wants its timeline (plateau run plan.jmx:
// the declared phases, docs/run-foreign.md).
type GroupLoad struct {
	Name  string // the thread group's name
	Class string // its test class
	// Load is the thread group's load as converted (users, ramp-up,
	// duration including the ramp-up, start delay, steps), before a
	// throughput timer's pacing.
	Load convert.Load
	// Notes are the conversion's notes on the load: a value it could
	// not read, a stand-in.
	Notes []string
	// PerMin is a Constant or Precise Throughput Timer's target in
	// samples a minute (0 without one), for each user when PerUser.
	PerMin  float64
	PerUser bool
	// Holds are a JMeter Plugins thread group's declared holds, read as
	// the plugin computes its timeline (schedule.go); HoldsErr says why
	// they are not read. Both are empty for JMeter's own thread groups.
	Holds    []Hold
	HoldsErr string
	// SamplesPerIteration is the samples one iteration writes, where it
	// is fixed (0 otherwise): an Arrivals group's rate in samples.
	SamplesPerIteration int
}

// Loads reads the loads of a parsed plan's thread groups, in plan order,
// with the report of the whole conversion (its notes say what the plan
// does that a load cannot: serialised thread groups …).
func Loads(root *Element, opt Options) ([]GroupLoad, *convert.Report) {
	c := convertPlan(root, opt)
	return c.loads, c.report
}

func convertPlan(root *Element, opt Options) *conv {
	c := &conv{
		opt:      opt,
		plan:     &convert.Plan{Name: root.Name},
		report:   &convert.Report{Source: opt.Source, Kind: "JMeter"},
		vars:     map[string]string{},
		consts:   map[string]string{},
		envSeen:  map[string]bool{},
		standIns: map[string]string{},
		allVars:  map[string]bool{},
		props:    map[string]string{},
		csvFirst: map[string]string{},

		pickWeights: map[string][]float64{},
		pickSwitch:  map[string]pickScript{},
		root:        root,
	}
	if opt.ReadFile == nil {
		c.opt.ReadFile = os.ReadFile
	}
	if strings.TrimSpace(c.plan.Name) == "" {
		c.plan.Name = strings.TrimSuffix(filepath.Base(opt.Source), filepath.Ext(opt.Source))
	}
	c.plan.Name = plainText(c.plan.Name)
	if c.plan.Name == "" {
		c.plan.Name = "converted"
	}
	c.plan.Header = []string{
		"Converted from " + filepath.Base(opt.Source) + " by plateau convert jmeter.",
		"What was and was not converted: see the conversion report beside this file.",
	}
	c.testPlan(root)
	// Literal secrets (a variable named api_key, a password header …):
	// the one secret rule every converter ends with.
	convert.HideSecrets(c.plan, c.report, "")
	return c
}

// scanProps finds the scripts that only copy variables into properties
// before anything is converted: a plan-level Header Manager reading
// ${__P(token)} stands before the thread group whose script sets it.
func (c *conv) scanProps(e *Element) {
	if !e.Enabled {
		return
	}
	if strings.HasSuffix(e.TestClass, "PostProcessor") || strings.HasSuffix(e.TestClass, "PreProcessor") {
		if copies, ok := propsScript(firstNonEmpty(e.Str("script"), e.Str("BeanShellPostProcessor.script"))); ok {
			for prop, v := range copies {
				c.props[prop] = v
			}
		}
	}
	if e.TestClass == "CSVDataSet" {
		c.scanCSV(e)
	}
	for _, k := range e.Children {
		c.scanProps(k)
	}
}

// scanCSV records the first data row of a CSV Data Set whose file is
// readable, by variable name.
func (c *conv) scanCSV(e *Element) {
	names := strings.TrimSpace(e.Str("variableNames"))
	file := c.fold(strings.TrimSpace(e.Str("filename")))
	if strings.Contains(file, "${") {
		return
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(filepath.Dir(c.opt.Source), file)
	}
	data, err := c.opt.ReadFile(file)
	if err != nil {
		return
	}
	delim := e.Str("delimiter")
	if delim == "" {
		delim = ","
	}
	if delim == `\t` {
		delim = "\t"
	}
	lines := strings.SplitN(strings.TrimPrefix(string(data), "\ufeff"), "\n", 3)
	var cols []string
	row := ""
	switch {
	case names == "" && len(lines) >= 2:
		cols, row = strings.Split(strings.TrimRight(lines[0], "\r"), delim), lines[1]
	case names != "" && e.Bool("ignoreFirstLine", false) && len(lines) >= 2:
		cols, row = strings.Split(names, ","), lines[1]
	case names != "":
		cols, row = strings.Split(names, ","), lines[0]
	}
	vals := strings.Split(strings.TrimRight(row, "\r"), delim)
	for i, col := range cols {
		if col = strings.TrimSpace(col); col != "" && i < len(vals) {
			if _, seen := c.csvFirst[col]; !seen {
				c.csvFirst[col] = strings.Trim(strings.TrimSpace(vals[i]), `"`)
			}
		}
	}
}

type conv struct {
	opt    Options
	plan   *convert.Plan
	report *convert.Report
	root   *Element

	// vars maps a JMeter variable name to its plateau reference text
	// ("token", "users.name" for a CSV column).
	vars map[string]string
	// consts holds the values of User Defined Variables, to fold them into
	// places plateau does not template (target, load numbers).
	consts   map[string]string
	envSeen  map[string]bool
	standIns map[string]string

	// props maps a property to the variable a script copied into it
	// (props.put("p", vars.get("v"))); ${__P(p)} then reads ${v}.
	props map[string]string
	// csvFirst holds the first data row of the plan's CSV data sets, by
	// variable: a host or port JMeter reads from a data file is folded
	// into the target from it.
	csvFirst map[string]string
	// pickWeights and pickSwitch are the halves of random picks between
	// controllers (pick.go), by the variable each sets.
	pickWeights map[string][]float64
	pickSwitch  map[string]pickScript
	// inRunSetup is set while converting the run-level setup/teardown.
	inRunSetup bool
	// allVars are variables whose extractor now takes every match (a
	// ForEach Controller loops over them).
	allVars map[string]bool

	workloadName string
	// tput is the throughput timer of the thread group being converted;
	// it becomes the workload's pacing once its requests are known.
	tput        *tputTimer
	endlessSeen bool // the thread group being converted has an endless loop
	inEndless   int  // > 0 while converting an endless loop's body
	// outside are the feeders of data sets outside any endless loop;
	// groups and endlessGroups count the thread groups converted to
	// workloads and those whose iteration is an endless loop.
	outside               []string
	groups, endlessGroups int
	loads                 []GroupLoad // each thread group's load (Loads)
	targetSet             bool
	feeders               int
	depth                 int // module/include nesting, bounded
	// quiet > 0 while inlining a Module Controller's target or an included
	// file: those elements are accounted once, where they stand in the tree.
	quiet int
}

// scope is what elements above a sampler give it: JMeter applies config
// elements, pre/post processors, assertions and timers to every sampler in
// the scope where they stand.
type scope struct {
	headers  []convert.KV
	defaults *httpDefaults
	extract  []convert.Extract
	checks   []convert.Check
	before   []convert.Step // timers (think) and rendezvous before each sampler
	comments []string       // unconverted scoped elements, noted at each sampler
	timeout  time.Duration
}

func (s scope) clone() scope {
	s.headers = append([]convert.KV(nil), s.headers...)
	s.extract = append([]convert.Extract(nil), s.extract...)
	s.before = append([]convert.Step(nil), s.before...)
	s.comments = append([]string(nil), s.comments...)
	s.checks = append([]convert.Check(nil), s.checks...)
	return s
}

type httpDefaults struct {
	protocol, domain, port, path, encoding string
	args                                   []argument
}

func (c *conv) add(path string, e *Element, st convert.Status, note, needs string) {
	if c.quiet > 0 {
		return // a module or include being inlined: accounted where it stands
	}
	c.report.Add(convert.Item{Path: path, Name: e.Name, Type: typeName(e), Status: st, Note: note, Needs: needs})
	if st == convert.NotConverted && !strings.HasPrefix(note, "inside ") {
		c.report.AddBehaviour(notConvertedBehaviour(e, note))
	}
}

// notConvertedBehaviour says what an element that was not converted
// changes on the wire.
func notConvertedBehaviour(e *Element, note string) string {
	name := fmt.Sprintf("%s %q", typeName(e), e.Name)
	tc := e.TestClass
	switch {
	case strings.HasSuffix(tc, "Timer"):
		return name + ": pacing lost — requests in its scope run without this wait"
	case strings.HasSuffix(tc, "PreProcessor"), strings.HasSuffix(tc, "PostProcessor"):
		return name + ": not run — variables it sets keep their previous value (or are sent as ${name} text)"
	case strings.HasSuffix(tc, "Assertion"):
		return name + ": not checked — failures it would flag are not counted"
	case strings.HasPrefix(tc, "HTTPSampler"):
		return name + ": request not sent"
	case strings.HasSuffix(tc, "Sampler"), strings.HasPrefix(tc, "JDBC"), strings.Contains(tc, "JMS"):
		return name + ": not run (" + note + "); variables it sets are not set"
	case strings.HasSuffix(tc, "Controller"), strings.HasSuffix(tc, "ThreadGroup"):
		return name + ": its requests are not sent (" + note + ")"
	case strings.HasSuffix(tc, "Manager"), strings.HasSuffix(tc, "Config"):
		return name + ": not applied (" + note + ")"
	}
	return name + ": not converted (" + note + ")"
}

// behaviour records a difference in the traffic the converted plan sends.
func (c *conv) behaviour(s string) {
	if c.quiet > 0 {
		return
	}
	c.report.AddBehaviour(s)
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + " / " + name
}

// disabled records a disabled element; everything inside it is skipped
// with it (JMeter does not run it).
func (c *conv) disabled(path string, e *Element) {
	n := countAll(e) - 1
	note := ""
	if n > 0 {
		note = fmt.Sprintf("with the %d %s inside it", n, pluralS(n, "element"))
	}
	c.add(path, e, convert.Disabled, note, "")
}

func countAll(e *Element) int {
	n := 1
	for _, k := range e.Children {
		n += countAll(k)
	}
	return n
}

func pluralS(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

func (c *conv) testPlan(tp *Element) {
	path := tp.Name
	c.add("", tp, convert.Converted, "", "")
	for _, a := range tp.props.arguments("TestPlan.user_defined_variables") {
		c.defineVar(a.Name, a.Value)
	}
	// After the plan's variables (scripts' files and parameters read them),
	// before any element that reads what scripts set.
	c.scanProps(tp)
	if tp.Bool("TestPlan.serialize_threadgroups", false) {
		c.report.Notes = append(c.report.Notes, "The test plan runs thread groups one after another; plateau starts workloads together unless load.start_after delays them: set start_after per workload.")
	}
	if tp.Bool("TestPlan.functional_mode", false) {
		c.report.Notes = append(c.report.Notes, "Functional test mode (saving response data) has no plateau equivalent; plateau records timings only.")
	}
	root := scope{}
	// Plan-level config first: it applies to every thread group.
	var groups []*Element
	for _, e := range dataFirst(tp.Children) {
		p := join(path, e.Name)
		if !e.Enabled {
			c.disabled(p, e)
			continue
		}
		if c.scoped(p, e, &root, true) {
			continue
		}
		groups = append(groups, e)
	}
	c.plan.HTTP.Headers = root.headers
	root.headers = nil
	c.plan.Header = append(c.plan.Header, root.comments...)
	root.comments = nil
	if !c.targetSet {
		c.pickTarget(tp)
	}
	// Random picks read the plan-level variables (script files and
	// parameters): found once those are defined.
	c.scanPicks(tp)
	for _, e := range groups {
		c.topLevel(join(path, e.Name), e, root)
	}
	if len(c.plan.Workloads) == 0 {
		c.plan.Workloads = append(c.plan.Workloads, &convert.Workload{
			Name:     "main",
			Comment:  []string{"the JMeter plan has no enabled thread group; this workload is a placeholder"},
			Scenario: nil,
			Load:     convert.Load{Users: "1", Iterations: "1"},
		})
	}
	c.perUserData()
	c.defineUndefined()
}

// perUserData: when every workload's iteration is an endless loop, a data
// set outside the loops advances once per user in JMeter (at the thread
// group's one iteration), so each user keeps one row: order per_user.
func (c *conv) perUserData() {
	if c.groups == 0 || c.endlessGroups != c.groups {
		return
	}
	for _, name := range c.outside {
		for i := range c.plan.Data {
			if f := &c.plan.Data[i]; f.Name == name && f.Order == "each_user" {
				c.behaviour("data " + name + " (share mode current thread) is read outside the endless loop: JMeter gives every user the file's first row for the whole run; plateau gives each user its next row at every iteration")
			} else if f.Name == name && f.Order == "" {
				f.Order = "per_user"
				c.report.Notes = append(c.report.Notes, "Data "+name+" is read outside the endless loop: JMeter gives each user one row for the whole run, as order: per_user does.")
			}
		}
	}
}

// topLevel converts a child of the test plan that is not a config element.
func (c *conv) topLevel(path string, e *Element, sc scope) {
	switch e.TestClass {
	case "ThreadGroup", "SetupThreadGroup", "PostThreadGroup":
		c.threadGroup(path, e, sc)
	case "com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup",
		"kg.apc.jmeter.threads.SteppingThreadGroup",
		"kg.apc.jmeter.threads.UltimateThreadGroup",
		"com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup",
		"com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup":
		c.threadGroup(path, e, sc)
	case "TestFragmentController":
		// Used through Module or Include controllers; converted where used.
		c.add(path, e, convert.Converted, "test fragment: its steps are inlined where a Module Controller uses it", "")
		c.countFragment(path, e, sc)
	default:
		if isListener(e) {
			c.listener(path, e)
			return
		}
		c.add(path, e, convert.NotConverted, "not expected at the top of a test plan", "")
		c.notConvertedBelow(path, e, "inside an element that was not converted")
	}
}

// countFragment accounts for the elements of a test fragment. They are
// converted at each Module Controller that uses them; here they are
// converted once more, and the steps dropped, to give each its status.
func (c *conv) countFragment(path string, e *Element, sc scope) {
	_, _ = c.children(path, e.Children, sc, false)
}

func (c *conv) notConvertedBelow(path string, e *Element, why string) {
	c.notConvertedBelowAs(path, e, convert.NotConverted, why)
}

// threadGroup converts a thread group into a workload.
func (c *conv) threadGroup(path string, e *Element, sc scope) {
	wl := &convert.Workload{Name: c.uniqueWorkload(plainText(e.Name))}
	c.workloadName = e.Name
	status, note, needs := convert.Converted, "", ""
	var notes []string
	switch e.TestClass {
	case "ThreadGroup", "SetupThreadGroup", "PostThreadGroup":
		notes = c.classicLoad(e, &wl.Load)
		if e.TestClass != "ThreadGroup" {
			kind := map[string]string{"SetupThreadGroup": "setUp", "PostThreadGroup": "tearDown"}[e.TestClass]
			if wl.Load.Users == "1" && wl.Load.Iterations == "1" {
				// One pass by one user: the plan's run-level setup or teardown.
				c.add(path, e, convert.Converted, "the plan's run-level "+map[string]string{"setUp": "setup", "tearDown": "teardown"}[kind]+" (once, before/after every workload; variables it extracts reach every workload)", "")
				c.inRunSetup = true
				c.tput = nil
				steps, once := c.children(path, e.Children, sc.clone(), true)
				c.inRunSetup = false
				if c.tput != nil {
					c.add(c.tput.path, c.tput.e, convert.NotConverted, "a throughput timer in a one-pass setUp/tearDown group has nothing to pace", "")
					c.tput = nil
				}
				steps = append(once, steps...)
				// JMeter's setUp group follows its "on sampler error" like any
				// group (default: continue), where a failing run-level setup
				// request stops plateau's run: the requests say continue.
				switch e.Str("ThreadGroup.on_sample_error") {
				case "", "continue":
					setOnFail(steps, "continue")
				case "stoptest", "stoptestnow":
				default:
					c.behaviour("the " + kind + " thread group " + quoteOr(e.Name) + " stops itself after a failed request and JMeter runs the test; plateau stops the run")
				}
				if kind == "setUp" {
					c.plan.Setup = append(c.plan.Setup, steps...)
				} else {
					c.plan.Teardown = append(c.plan.Teardown, steps...)
				}
				return
			}
			status = convert.Partial
			notes = append(notes, "a "+kind+" thread group of several users or passes runs here as a workload, with the others (plateau's run-level setup is one pass by one user)")
			wl.Comment = append(wl.Comment, "JMeter "+kind+" Thread Group: runs with the other workloads here, not before/after them")
		}
	case "com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup":
		notes = c.concurrencyLoad(e, &wl.Load)
	case "kg.apc.jmeter.threads.SteppingThreadGroup":
		notes = c.steppingLoad(e, &wl.Load)
	case "kg.apc.jmeter.threads.UltimateThreadGroup":
		var ok bool
		notes, ok = c.ultimateLoad(e, &wl.Load)
		if !ok {
			status, needs = convert.Partial, "load shape of "+typeName(e)+" with several rows"
		}
	default:
		status, needs = convert.Partial, "load shape of "+typeName(e)
		wl.Load = convert.Load{Users: "1", Duration: "1m"}
		notes = append(notes, "load shape not converted: 1 user for 1m stands in")
	}
	if len(notes) > 0 && status == convert.Converted {
		status = convert.Partial
	}
	switch e.Str("ThreadGroup.on_sample_error") {
	case "", "continue":
		wl.OnFail = "continue"
	case "startnextloop", "startnextloopthread", "startnextloopcurrentloop":
		wl.OnFail = "next_iteration"
	case "stopthread":
		wl.OnFail = "stop_user"
	case "stoptest", "stoptestnow":
		wl.OnFail = "stop_run"
	}
	note = strings.Join(notes, "; ")
	c.add(path, e, status, note, needs)
	sc = sc.clone()
	c.endlessSeen = false
	c.tput = nil
	steps, setup := c.children(path, e.Children, sc, true)
	wl.Scenario = steps
	wl.Setup = setup
	gl := GroupLoad{Name: e.Name, Class: e.TestClass, Load: wl.Load, Notes: notes}
	gl.Load.Steps = append([]convert.LoadStep(nil), wl.Load.Steps...)
	if t := c.tput; t != nil {
		gl.PerMin, gl.PerUser = t.perMin, t.perUser
	}
	if strings.Contains(e.TestClass, ".") { // a JMeter Plugins thread group
		hs, err := c.schedule(e, c.opt.Properties)
		gl.Holds = hs
		if err != nil {
			gl.Holds, gl.HoldsErr = nil, err.Error()
		}
		gl.SamplesPerIteration, _ = SamplesPerIteration(e)
	}
	c.loads = append(c.loads, gl)
	if c.tput != nil {
		c.applyThroughput(wl)
		c.tput = nil
	}
	c.groups++
	if c.endlessSeen {
		c.endlessGroups++
	}
	if c.endlessSeen && len(setup) > 0 && wl.OnFail == "next_iteration" {
		c.behaviour("thread group " + quoteOr(e.Name) + ": after a failed request JMeter starts the thread group over, so the steps before its endless loop (the setup here, e.g. a login) run again; plateau goes on with the next iteration without them")
	}
	c.plan.Workloads = append(c.plan.Workloads, wl)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (c *conv) uniqueWorkload(name string) string {
	if name == "" {
		name = "workload"
	}
	base := name
	for n := 2; ; n++ {
		dup := false
		for _, w := range c.plan.Workloads {
			if w.Name == name {
				dup = true
			}
		}
		if !dup {
			return name
		}
		name = fmt.Sprintf("%s %d", base, n)
	}
}

// classicLoad reads a standard thread group's load.
func (c *conv) classicLoad(e *Element, l *convert.Load) []string {
	var notes []string
	users, ok := c.number(e.Str("ThreadGroup.num_threads"), "1")
	if !ok {
		notes = append(notes, "thread count "+e.Str("ThreadGroup.num_threads")+" is not a number or property; 1 user stands in")
	}
	if strings.HasSuffix(users, ":-0}") {
		users = strings.TrimSuffix(users, "0}") + "1}"
		notes = append(notes, "thread count defaults to 0 (JMeter skips the group unless the property is set); the default here is 1")
	}
	if users == "0" {
		users = "1"
		notes = append(notes, "0 threads: JMeter never runs it; 1 user stands in (remove the workload or set users)")
	}
	l.Users = users
	if r, ok := c.number(e.Str("ThreadGroup.ramp_time"), "0"); ok && r != "0" {
		l.RampUp = seconds(r)
	}
	loops := ""
	forever := false
	if mc := e.sub("ThreadGroup.main_controller"); mc != nil {
		loops = strings.TrimSpace(mc.str("LoopController.loops"))
		forever = mc.str("LoopController.continue_forever") == "true" && loops == "-1"
		if loops == "-1" {
			forever = true
		}
	}
	scheduler := e.Bool("ThreadGroup.scheduler", false)
	if scheduler {
		if d, ok := c.number(e.Str("ThreadGroup.duration"), ""); ok && d != "" && d != "0" {
			l.Duration = seconds(d)
		}
		if d, ok := c.number(e.Str("ThreadGroup.delay"), ""); ok && d != "" && d != "0" {
			l.StartAfter = seconds(d)
		}
	}
	switch {
	case l.Duration != "" && !forever && loops != "":
		if n, ok := c.number(loops, "1"); ok {
			notes = append(notes, "JMeter stops at "+n+" loops or the duration, whichever comes first; plateau keeps the duration")
		}
	case l.Duration != "":
	case forever:
		l.Duration = "10m"
		notes = append(notes, "loops forever in JMeter; a duration of 10m stands in (set load.duration)")
	default:
		n, ok := c.number(loops, "1")
		if !ok {
			notes = append(notes, "loop count "+loops+" is not a number; 1 iteration stands in")
		}
		l.Iterations = n
	}
	if m := envSecRe.FindStringSubmatch(l.Duration); m != nil && l.RampUp != "" && !strings.Contains(l.RampUp, "$") {
		// duration from a property: its default must hold the ramp-up.
		r, _ := time.ParseDuration(l.RampUp)
		if d, err := strconv.Atoi(m[2]); err == nil && time.Duration(d)*time.Second < r {
			l.Duration = "${env." + m[1] + ":-" + strconv.Itoa(int(r/time.Second)) + "}s"
			notes = append(notes, "the duration's default ("+m[2]+"s) is shorter than the ramp-up; it is "+l.RampUp+" here")
		}
	}
	if l.Duration != "" && l.RampUp != "" && !strings.Contains(l.RampUp+l.Duration, "$") {
		r, _ := time.ParseDuration(l.RampUp)
		d, _ := time.ParseDuration(l.Duration)
		if r > d {
			l.Duration = convert.Dur(r)
			notes = append(notes, "ramp-up longer than the duration; duration set to the ramp-up")
		}
	}
	return notes
}

var envSecRe = regexp.MustCompile(`^\$\{env\.([A-Za-z0-9_]+):-(\d+)\}s$`)

// concurrencyLoad reads the Concurrency Thread Group plugin.
func (c *conv) concurrencyLoad(e *Element, l *convert.Load) []string {
	var notes []string
	target, ok1 := c.number(e.Str("TargetLevel"), "1")
	ramp, ok2 := c.number(e.Str("RampUp"), "0")
	hold, ok3 := c.number(e.Str("Hold"), "60")
	steps, ok4 := c.number(e.Str("Steps"), "0")
	unit := e.Str("Unit")
	if !(ok1 && ok2 && ok3 && ok4) {
		notes = append(notes, "a value is not a number or property; defaults stand in")
	}
	mult := time.Second // the plugin: minutes for "M", seconds otherwise
	if unit == "M" {
		mult = time.Minute
	}
	ti, err1 := strconv.Atoi(target)
	ri, err2 := strconv.Atoi(ramp)
	hi, err3 := strconv.Atoi(hold)
	si, err4 := strconv.Atoi(steps)
	if err1 != nil || err2 != nil || err3 != nil || err4 != nil {
		l.Users = target
		notes = append(notes, "values read from properties: closed load without steps")
		l.Duration = "10m"
		return notes
	}
	if si > 1 && ri > 0 {
		stepDur := time.Duration(ri) * mult / time.Duration(si)
		for k := 1; k <= si; k++ {
			u := int(javaRound(float64(ti) / float64(si) * float64(k))) // as the plugin rounds its steps
			d := stepDur
			if k == si {
				d += time.Duration(hi) * mult
			}
			l.Steps = append(l.Steps, convert.LoadStep{Users: strconv.Itoa(max(u, 1)), Duration: convert.Dur(d)})
		}
		return notes
	}
	l.Users = strconv.Itoa(max(ti, 1))
	if ri > 0 {
		l.RampUp = convert.Dur(time.Duration(ri) * mult)
	}
	l.Duration = convert.Dur(time.Duration(ri+hi) * mult)
	if ri+hi == 0 {
		l.Duration = "10m"
		notes = append(notes, "no hold time; 10m stands in")
	}
	return notes
}

// steppingLoad reads the Stepping Thread Group plugin.
func (c *conv) steppingLoad(e *Element, l *convert.Load) []string {
	total, _ := strconv.Atoi(strings.TrimSpace(e.Str("ThreadGroup.num_threads")))
	start, _ := strconv.Atoi(strings.TrimSpace(e.Str("Start users count")))
	incr, _ := strconv.Atoi(strings.TrimSpace(e.Str("Start users period")))
	hold, _ := strconv.Atoi(strings.TrimSpace(e.Str("flighttime")))
	if total <= 0 || start <= 0 || incr <= 0 {
		l.Users = strconv.Itoa(max(total, 1))
		l.Duration = "10m"
		return []string{"stepping parameters not read; a closed load stands in"}
	}
	for u := start; ; u += start {
		if u > total {
			u = total
		}
		d := time.Duration(incr) * time.Second
		if u == total {
			d += time.Duration(hold) * time.Second
		}
		l.Steps = append(l.Steps, convert.LoadStep{Users: strconv.Itoa(u), Duration: convert.Dur(d)})
		if u == total || len(l.Steps) > 1000 {
			break
		}
	}
	return []string{"stop phase (threads leaving) not converted"}
}

// ultimateLoad reads the Ultimate Thread Group plugin: one schedule row
// (threads, initial delay, startup time, hold, shutdown, in seconds) is a
// closed load; several rows become steps when each starts as the previous
// ends its startup, else a stand-in.
func (c *conv) ultimateLoad(e *Element, l *convert.Load) ([]string, bool) {
	data := e.props.prop("ultimatethreadgroupdata")
	var rows [][5]int
	if data != nil {
		for _, r := range data.children {
			var row [5]int
			n := 0
			for i, f := range r.children {
				if i >= 5 {
					break
				}
				v, err := strconv.Atoi(strings.TrimSpace(f.text.String()))
				if err != nil {
					return []string{"schedule values are not numbers"}, false
				}
				row[i] = v
				n++
			}
			if n == 5 {
				rows = append(rows, row)
			}
		}
	}
	sec := func(n int) string { return convert.Dur(time.Duration(n) * time.Second) }
	switch {
	case len(rows) == 1:
		r := rows[0]
		l.Users = strconv.Itoa(max(r[0], 1))
		if r[2] > 0 {
			l.RampUp = sec(r[2])
		}
		l.Duration = sec(max(r[2]+r[3], 1))
		if r[1] > 0 {
			l.StartAfter = sec(r[1])
		}
		var notes []string
		if r[4] > 0 {
			notes = append(notes, "shutdown time "+sec(r[4])+" not converted (users stop together)")
		}
		return notes, true
	case len(rows) > 1:
		// Rows that start one after another, each adding users: steps.
		users := 0
		for i, r := range rows {
			users += r[0]
			end := rows[i][1] + rows[i][2]
			next := end
			if i+1 < len(rows) {
				next = rows[i+1][1]
			}
			if next < end {
				break
			}
			d := next - r[1]
			if i == len(rows)-1 {
				d = r[2] + r[3]
			}
			l.Steps = append(l.Steps, convert.LoadStep{Users: strconv.Itoa(users), RampUp: sec(r[2]), Duration: sec(max(d, 1))})
		}
		if len(l.Steps) == len(rows) {
			return []string{"each row is a step adding its users; shutdown times not converted"}, true
		}
		l.Steps = nil
	}
	l.Users, l.Duration = "1", "1m"
	return []string{"schedule rows overlap: 1 user for 1m stands in"}, false
}

// number reads a count or seconds value: a literal, a property (__P) or a
// User Defined Variable holding one; def when empty.
func (c *conv) number(s, def string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return def, true
	}
	for range 5 {
		if v, ok := c.consts[strings.TrimSuffix(strings.TrimPrefix(s, "${"), "}")]; ok && strings.HasPrefix(s, "${") && strings.HasSuffix(s, "}") {
			s = strings.TrimSpace(v)
			continue
		}
		break
	}
	if _, err := strconv.Atoi(s); err == nil {
		return s, true
	}
	t := c.translate(s)
	if len(t.Needs) == 0 && len(t.Vars) == 0 && strings.HasPrefix(t.T, "${env.") && strings.Count(t.T, "${") == 1 && strings.HasSuffix(t.T, "}") {
		if _, def, _ := strings.Cut(t.T, ":-"); def != "" {
			if _, err := strconv.Atoi(strings.TrimSuffix(def, "}")); err == nil {
				return t.T, true
			}
		}
	}
	return def, false
}

// seconds turns a number of seconds (literal or env template) into a
// duration text.
func seconds(n string) string {
	if i, err := strconv.Atoi(n); err == nil {
		return convert.Dur(time.Duration(i) * time.Second)
	}
	return n + "s"
}

// eachChild calls fn for every enabled child in kids that is not a scoped
// element, in order: disabled children are reported as such, scoped ones
// (defaults, headers, cookies, assertions, ...) are folded into *sc as they
// come, so fn sees the scope of the children before it.
func (c *conv) eachChild(path string, kids []*Element, sc *scope, fn func(p string, k *Element)) {
	for _, k := range dataFirst(kids) {
		p := join(path, k.Name)
		if !k.Enabled {
			c.disabled(p, k)
			continue
		}
		if c.scoped(p, k, sc, false) {
			continue
		}
		fn(p, k)
	}
}

// children converts the children of a controller. At thread-group level
// (top) Once Only Controllers become the workload's setup.
func (c *conv) children(path string, kids []*Element, sc scope, top bool) (steps, setup []convert.Step) {
	sc = sc.clone()
	var ordered []*Element
	c.eachChild(path, kids, &sc, func(_ string, e *Element) { ordered = append(ordered, e) })
	// Unconverted elements of this level stay as a comment where they
	// were, not repeated at every request they applied to.
	if len(sc.comments) > 0 {
		steps = append(steps, convert.CommentStep(sc.comments...))
		sc.comments = nil
	}
	for i := 0; i < len(ordered); i++ {
		e := ordered[i]
		p := join(path, e.Name)
		if s, n := c.pickIfs(path, ordered, i, sc); n > 0 {
			steps = append(steps, s...)
			i += n - 1
			continue
		}
		if top && e.TestClass == "LoopController" && endless(e) {
			// An endless loop in the thread group: JMeter never leaves it,
			// so its body is the iteration; what came before runs once per
			// user (the workload's setup) and what follows never runs.
			c.add(p, e, convert.Converted, "loops forever: its steps are the workload's iteration, the steps before it its setup (once per user)", "")
			c.endlessSeen = true
			c.inEndless++
			defer func() { c.inEndless-- }()
			setup = append(setup, steps...)
			steps, _ = c.children(p, e.Children, sc, false)
			// What follows is reached only through Module Controllers
			// (FOLIO keeps its fragments there): converted for the
			// report, its steps dropped.
			if rest := ordered[i+1:]; len(rest) > 0 {
				for _, k := range rest {
					kp := join(path, k.Name)
					if k.TestClass == "TestFragmentController" {
						c.add(kp, k, convert.Converted, "test fragment: its steps are inlined where a Module Controller uses it", "")
						c.countFragment(kp, k, sc)
						continue
					}
					_ = c.element(kp, k, sc)
				}
				c.report.Notes = append(c.report.Notes, fmt.Sprintf("%d %s after the endless loop %q never run in JMeter except through Module Controllers; they are accounted as converted where they stand and inlined where used.", len(rest), pluralS(len(rest), "element"), e.Name))
			}
			return steps, setup
		}
		if top && e.TestClass == "OnceOnlyController" {
			c.add(p, e, convert.Partial, "runs once per user as the workload's setup, which plateau does not measure", "")
			s, _ := c.children(p, e.Children, sc, false)
			setup = append(setup, s...)
			continue
		}
		steps = append(steps, c.element(p, e, sc)...)
	}
	return steps, setup
}

// element converts one sampler or controller.
func (c *conv) element(path string, e *Element, sc scope) []convert.Step {
	switch e.TestClass {
	case "HTTPSamplerProxy", "HTTPSampler", "HTTPSampler2":
		return c.httpSampler(path, e, sc)
	case "TransactionController":
		return c.transaction(path, e, sc)
	case "GenericController", "RecordingController":
		c.add(path, e, convert.Converted, "its steps are inlined", "")
		s, _ := c.children(path, e.Children, sc, false)
		return s
	case "OnceOnlyController":
		// Inside a controller: its children run in the user's first
		// iteration.
		return c.approximated(path, e, sc, "${__iteration} == 1", "runs its children in each user's first iteration (JMeter: the first time the user reaches it — the same unless an enclosing loop reaches it again in that iteration)")
	case "LoopController":
		return c.loop(path, e, sc)
	case "ModuleController":
		return c.module(path, e, sc)
	case "IncludeController":
		return c.include(path, e, sc)
	case "IfController":
		return c.ifController(path, e, sc)
	case "WhileController":
		return c.whileController(path, e, sc)
	case "ForeachController":
		return c.foreach(path, e, sc)
	case "SwitchController":
		return c.switchController(path, e, sc)
	case "RandomController":
		return c.randomController(path, e, sc)
	case "RandomOrderController":
		return c.approximated(path, e, sc, "", "runs its children in the order written (JMeter shuffles them each time)")
	case "InterleaveControl":
		return c.interleave(path, e, sc)
	case "ThroughputController":
		return c.throughputController(path, e, sc)
	case "RunTime":
		return c.runtime(path, e, sc)
	case "CriticalSectionController":
		return c.approximated(path, e, sc, "", "runs its children without the lock "+strings.TrimSpace(e.Str("CriticalSectionController.lockName"))+" (JMeter lets one user at a time in)")
	case "TestAction":
		return c.testAction(path, e)
	case "JSR223Sampler", "BeanShellSampler":
		if c.pickScriptElement(path, e) {
			return nil
		}
	case "DebugSampler":
		c.add(path, e, convert.NotNeeded, "debug output; plateau's --trace shows variables", "")
		return nil
	}
	if isListener(e) {
		c.listener(path, e)
		return nil
	}
	return c.unconverted(path, e, unconvertedWhy(e), "")
}

// unconverted leaves the element as a comment where it was and lists it and
// everything inside it.
func (c *conv) unconverted(path string, e *Element, why, needs string) []convert.Step {
	c.add(path, e, convert.NotConverted, why, needs)
	c.notConvertedBelow(path, e, "inside "+typeName(e)+" "+e.Name+", which was not converted")
	lines := []string{fmt.Sprintf("not converted: %s %q (jmx line %d): %s", typeName(e), e.Name, e.Line, why)}
	if needs != "" {
		lines[0] += "; needs plateau feature " + needs
	}
	lines = append(lines, scriptExcerpt(e)...)
	return []convert.Step{convert.CommentStep(lines...)}
}

func (c *conv) needsFeature(path string, e *Element, feature, detail string) []convert.Step {
	why := typeName(e)
	if detail != "" {
		why += ": " + detail
	}
	return c.unconverted(path, e, why, feature)
}

// approximated converts a controller plateau has no equal for by keeping
// its children (under cond, when one is given), with the wrapper's meaning
// approximated and said.
func (c *conv) approximated(path string, e *Element, sc scope, cond, note string) []convert.Step {
	c.add(path, e, convert.Partial, note, "")
	c.behaviour(fmt.Sprintf("%s %q %s", typeName(e), e.Name, note))
	s, _ := c.children(path, e.Children, sc, false)
	if cond == "" || len(s) == 0 {
		return s
	}
	return []convert.Step{{If: &convert.Group{Cond: cond, Steps: nonEmpty(s)}}}
}

// interleave converts an Interleave Controller: it runs one child each
// time it is reached, in turn, per user; reached once an iteration, child
// k runs in the iterations k+1, k+1+n, … — a condition on the user's
// iteration.
func (c *conv) interleave(path string, e *Element, sc scope) []convert.Step {
	sc = sc.clone()
	var kids []*Element
	c.eachChild(path, e.Children, &sc, func(_ string, k *Element) { kids = append(kids, k) })
	note := "runs one child per iteration of the user, in turn (JMeter: one each time it is reached, the same when it is reached once an iteration)"
	c.add(path, e, convert.Partial, note, "")
	c.behaviour(fmt.Sprintf("%s %q %s", typeName(e), e.Name, note))
	var out []convert.Step
	if len(sc.comments) > 0 {
		out = append(out, convert.CommentStep(sc.comments...))
		sc.comments = nil
	}
	n := len(kids)
	for i, k := range kids {
		s := c.element(join(path, k.Name), k, sc)
		if len(s) == 0 {
			continue
		}
		cond := fmt.Sprintf("seq(__iteration, 0, 1, %d) == %d", n-1, i)
		if n == 1 {
			out = append(out, s...)
			continue
		}
		out = append(out, convert.Step{If: &convert.Group{Cond: cond, Steps: nonEmpty(s)}})
	}
	return out
}

func (c *conv) unconvertedController(path string, e *Element, why string) []convert.Step {
	c.notConvertedBelow(path, e, "inside "+typeName(e)+" "+e.Name+", which was not converted")
	return []convert.Step{convert.CommentStep(fmt.Sprintf("not converted: %s %q (jmx line %d): %s", typeName(e), e.Name, e.Line, why))}
}

// scriptExcerpt quotes the first lines of a script element so the user sees
// what to rewrite.
func scriptExcerpt(e *Element) []string {
	script := firstNonEmpty(e.Str("script"), firstNonEmpty(e.Str("BeanShellSampler.query"), e.Str("query")))
	if script == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(script), "\n")
	const keep = 8
	out := []string{"  | " + strings.TrimRight(lines[0], "\r")}
	for _, l := range lines[1:min(len(lines), keep)] {
		out = append(out, "  | "+strings.TrimRight(l, "\r"))
	}
	if len(lines) > keep {
		out = append(out, fmt.Sprintf("  | … %d more lines", len(lines)-keep))
	}
	return out
}

func unconvertedWhy(e *Element) string {
	switch {
	case strings.Contains(e.TestClass, "JSR223"), strings.Contains(e.TestClass, "BeanShell"),
		strings.Contains(e.TestClass, "BSF"):
		return "a script (" + firstNonEmpty(e.Str("scriptLanguage"), "beanshell") + "); rewrite it with plan constructs"
	case strings.HasPrefix(e.TestClass, "JDBC"):
		return "a database element; plateau drives HTTP only"
	case strings.HasPrefix(e.TestClass, "JMS"), strings.Contains(e.TestClass, "jms"):
		return "a JMS element; plateau drives HTTP only"
	case strings.Contains(e.TestClass, "."):
		return "a plugin element (" + e.TestClass + ")"
	case strings.HasSuffix(e.TestClass, "Sampler"):
		return "a non-HTTP sampler; plateau drives HTTP only"
	}
	return "no plateau equivalent"
}

// runtime converts a Runtime Controller. JMeter runs its children in turn,
// from the first, again and again until the whole seconds since it was
// reached reach RunTime.seconds — it looks at the clock before each child,
// so the last pass may stop part way —; a value that is not a positive
// whole number (Long.parseLong of the text as written) runs nothing. The
// plan runs the children once each time (approximated, said), or not at
// all for such a value.
func (c *conv) runtime(path string, e *Element, sc scope) []convert.Step {
	raw := e.Str("RunTime.seconds")
	if !strings.Contains(raw, "${") {
		if n, err := strconv.ParseInt(raw, 10, 64); err != nil || n <= 0 {
			c.add(path, e, convert.Converted, fmt.Sprintf("runtime %q s: JMeter never runs its children (only for a positive whole number of seconds), so neither does the plan", raw), "")
			c.notConvertedBelowAs(path, e, convert.Converted, "inside a Runtime Controller that never runs")
			return []convert.Step{convert.CommentStep(fmt.Sprintf("Runtime Controller %q runs for %q s: JMeter never runs its steps", e.Name, raw))}
		}
	}
	return c.approximated(path, e, sc, "", fmt.Sprintf("runs its children once each time it is reached (JMeter repeats them, from the first, until %s s have passed, and may stop part way through the last pass)", strings.TrimSpace(raw)))
}

// loop converts a Loop Controller with a fixed count.
func (c *conv) loop(path string, e *Element, sc scope) []convert.Step {
	loops := strings.TrimSpace(e.Str("LoopController.loops"))
	n, err := strconv.Atoi(loops)
	if err != nil {
		if v, ok := c.number(loops, ""); ok {
			if i, err2 := strconv.Atoi(v); err2 == nil {
				n, err = i, nil
			}
		}
	}
	if err != nil || n < 0 {
		return c.needsFeature(path, e, "loop count from a variable or forever", "loops "+loops)
	}
	if n == 0 {
		c.add(path, e, convert.Converted, "0 loops: JMeter never runs its steps, so neither does the plan", "")
		c.notConvertedBelowAs(path, e, convert.Converted, "inside a loop of 0 iterations (never run)")
		return []convert.Step{convert.CommentStep(fmt.Sprintf("Loop Controller %q has 0 loops: its steps never run", e.Name))}
	}
	c.add(path, e, convert.Converted, "", "")
	s, _ := c.children(path, e.Children, sc, false)
	if n == 1 {
		return s
	}
	return []convert.Step{{Loop: &convert.Group{Count: n, Steps: nonEmpty(s)}}}
}

func (c *conv) notConvertedBelowAs(path string, e *Element, st convert.Status, why string) {
	for _, k := range e.Children {
		p := join(path, k.Name)
		if !k.Enabled {
			c.disabled(p, k)
			continue
		}
		c.add(p, k, st, why, "")
		c.notConvertedBelowAs(p, k, st, why)
	}
}

// transaction converts a Transaction Controller. A transaction inside
// another keeps its requests in the outer one (plateau transactions do not
// nest yet).
func (c *conv) transaction(path string, e *Element, sc scope) []convert.Step {
	s, _ := c.children(path, e.Children, sc, false)
	name := plainText(e.Name)
	if name == "" {
		name = "transaction"
	}
	var notes []string
	st := convert.Converted
	needs := ""
	if e.Bool("TransactionController.includeTimers", false) {
		notes = append(notes, "JMeter counted timers in its time; plateau's transaction time is the sum of its requests")
		st = convert.Partial
	}
	if e.Bool("TransactionController.parent", false) {
		notes = append(notes, "generate parent sample: the requests stay labelled on their own too")
	}
	c.add(path, e, st, strings.Join(notes, "; "), needs)
	return []convert.Step{{Transaction: &convert.Group{Name: name, Steps: nonEmpty(s)}}}
}

// module inlines the controller a Module Controller points at.
func (c *conv) module(path string, e *Element, sc scope) []convert.Step {
	names := e.collection("ModuleController.node_path")
	target := c.find(names)
	if target == nil {
		return c.unconverted(path, e, "its target "+strings.Join(names, " / ")+" was not found", "")
	}
	if c.depth > 20 {
		return c.unconverted(path, e, "modules nested more than 20 deep (a cycle?)", "")
	}
	c.add(path, e, convert.Converted, "the steps of "+strings.Join(names[min(1, len(names)):], " / ")+" are inlined here", "")
	c.depth++
	c.quiet++
	defer func() { c.depth--; c.quiet-- }()
	tp := join(path, target.Name)
	if target.TestClass == "TestFragmentController" || target.TestClass == "GenericController" {
		s, _ := c.children(tp, target.Children, sc, false)
		return s
	}
	return c.element(tp, target, sc)
}

// find walks a Module Controller's node path (names from the test plan
// down; the first entry is the root of the GUI tree).
func (c *conv) find(names []string) *Element {
	if len(names) < 2 {
		return nil
	}
	cur := c.root
	rest := names[1:]
	if len(rest) > 0 && rest[0] == c.root.Name {
		rest = rest[1:]
	}
	for _, n := range rest {
		var next *Element
		for _, k := range cur.Children {
			if k.Name == n {
				next = k
				break
			}
		}
		if next == nil {
			return nil
		}
		cur = next
	}
	if cur == c.root {
		return nil
	}
	return cur
}

// include reads the .jmx an Include Controller names and inlines it.
func (c *conv) include(path string, e *Element, sc scope) []convert.Step {
	file := e.Str("IncludeController.includepath")
	if c.depth > 20 {
		return c.unconverted(path, e, "includes nested more than 20 deep (a cycle?)", "")
	}
	full := file
	if !filepath.IsAbs(full) {
		full = filepath.Join(filepath.Dir(c.opt.Source), file)
	}
	data, err := c.opt.ReadFile(full)
	if err != nil {
		return c.unconverted(path, e, "cannot read the included file "+file, "")
	}
	inc, err := Parse(strings.NewReader(string(data)))
	if err != nil {
		return c.unconverted(path, e, "the included file "+file+" is not a test plan: "+err.Error(), "")
	}
	c.add(path, e, convert.Converted, "the steps of "+file+" are inlined here (its elements are accounted in its own conversion)", "")
	c.depth++
	c.quiet++
	defer func() { c.depth--; c.quiet-- }()
	var out []convert.Step
	for _, k := range inc.Children {
		p := join(join(path, file), k.Name)
		if !k.Enabled {
			c.disabled(p, k)
			continue
		}
		if k.TestClass == "TestFragmentController" || k.TestClass == "GenericController" {
			c.add(p, k, convert.Converted, "inlined", "")
			s, _ := c.children(p, k.Children, sc, false)
			out = append(out, s...)
			continue
		}
		out = append(out, c.element(p, k, sc)...)
	}
	return out
}

// testAction converts a Flow Control Action: a pause becomes a think time.
func (c *conv) testAction(path string, e *Element) []convert.Step {
	action := e.Str("ActionProcessor.action")
	if action == "1" || action == "" { // pause
		ms, err := strconv.Atoi(strings.TrimSpace(e.Str("ActionProcessor.duration")))
		if err == nil {
			c.add(path, e, convert.Converted, "pause becomes think time", "")
			sc := c.samplerScope(path, e, scope{})
			var out []convert.Step
			if len(sc.comments) > 0 {
				out = append(out, convert.CommentStep(sc.comments...))
			}
			if ms == 0 {
				return append(out, convert.CommentStep(fmt.Sprintf("Flow Control Action %q: a pause of 0 ms", e.Name)))
			}
			return append(out, convert.Step{Think: &convert.Think{Fixed: time.Duration(ms) * time.Millisecond}})
		}
	}
	return c.needsFeature(path, e, "flow control (stop, next iteration)", "action "+action)
}

// listener: results collectors have no job in plateau.
func (c *conv) listener(path string, e *Element) {
	switch {
	case e.TestClass == "BackendListener":
		c.add(path, e, convert.NotNeeded, "plateau streams results with its own outputs", "")
	default:
		c.add(path, e, convert.NotNeeded, "plateau records and reports results itself", "")
	}
	c.notConvertedBelowAs(path, e, convert.NotNeeded, "inside a listener")
}

func isListener(e *Element) bool {
	switch e.TestClass {
	case "ResultCollector", "Summariser", "BackendListener", "kg.apc.jmeter.vizualizers.CorrectedResultCollector":
		return true
	}
	return e.Tag == "ResultCollector" || strings.HasSuffix(e.GUIClass, "Visualizer") || strings.Contains(e.TestClass, "vizualizers")
}

// typeName is the element's kind as JMeter's menus name it.
func typeName(e *Element) string {
	if n, ok := typeNames[e.TestClass]; ok {
		if e.TestClass == "ConfigTestElement" && e.GUIClass != "HttpDefaultsGui" {
			return "Config Element"
		}
		return n
	}
	if e.TestClass == "ResultCollector" {
		return "Listener (" + strings.TrimSuffix(e.GUIClass, "Visualizer") + ")"
	}
	if i := strings.LastIndexByte(e.TestClass, '.'); i >= 0 {
		return e.TestClass[i+1:]
	}
	return e.TestClass
}

var typeNames = map[string]string{
	"TestPlan": "Test Plan", "ThreadGroup": "Thread Group", "SetupThreadGroup": "setUp Thread Group",
	"PostThreadGroup": "tearDown Thread Group", "HTTPSamplerProxy": "HTTP Request", "ConfigTestElement": "HTTP Request Defaults",
	"HeaderManager": "HTTP Header Manager", "CookieManager": "HTTP Cookie Manager", "CacheManager": "HTTP Cache Manager",
	"AuthManager": "HTTP Authorization Manager", "CSVDataSet": "CSV Data Set Config", "Arguments": "User Defined Variables",
	"RegexExtractor": "Regular Expression Extractor", "JSONPostProcessor": "JSON Extractor", "BoundaryExtractor": "Boundary Extractor",
	"HtmlExtractor": "CSS Selector Extractor", "XPathExtractor": "XPath Extractor", "XPath2Extractor": "XPath2 Extractor",
	"ResponseAssertion": "Response Assertion", "JSONPathAssertion": "JSON Assertion", "DurationAssertion": "Duration Assertion",
	"SizeAssertion": "Size Assertion", "TransactionController": "Transaction Controller", "LoopController": "Loop Controller",
	"WhileController": "While Controller", "ForeachController": "ForEach Controller", "IfController": "If Controller",
	"SwitchController": "Switch Controller", "ThroughputController": "Throughput Controller", "RandomController": "Random Controller",
	"OnceOnlyController": "Once Only Controller", "ModuleController": "Module Controller", "TestFragmentController": "Test Fragment",
	"IncludeController": "Include Controller", "GenericController": "Simple Controller", "ConstantTimer": "Constant Timer",
	"UniformRandomTimer": "Uniform Random Timer", "GaussianRandomTimer": "Gaussian Random Timer", "PoissonRandomTimer": "Poisson Random Timer",
	"ConstantThroughputTimer": "Constant Throughput Timer", "PreciseThroughputTimer": "Precise Throughput Timer",
	"SyncTimer": "Synchronizing Timer", "JSR223Sampler": "JSR223 Sampler", "JSR223PreProcessor": "JSR223 PreProcessor",
	"JSR223PostProcessor": "JSR223 PostProcessor", "JSR223Assertion": "JSR223 Assertion", "JSR223Timer": "JSR223 Timer",
	"JSR223Listener": "JSR223 Listener", "BeanShellSampler": "BeanShell Sampler", "BeanShellPreProcessor": "BeanShell PreProcessor",
	"BeanShellPostProcessor": "BeanShell PostProcessor", "BeanShellAssertion": "BeanShell Assertion", "JDBCSampler": "JDBC Request",
	"JDBCDataSource": "JDBC Connection Configuration", "TestAction": "Flow Control Action", "DebugSampler": "Debug Sampler",
	"RecordingController": "Recording Controller", "RandomOrderController": "Random Order Controller",
	"InterleaveControl": "Interleave Controller", "RunTime": "Runtime Controller", "Summariser": "Generate Summary Results",
	"BackendListener": "Backend Listener", "DNSCacheManager": "DNS Cache Manager", "RandomVariableConfig": "Random Variable",
	"CounterConfig": "Counter",
	"kg.apc.jmeter.threads.UltimateThreadGroup": "Ultimate Thread Group", "kg.apc.jmeter.threads.SteppingThreadGroup": "Stepping Thread Group",
	"com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup": "Concurrency Thread Group", "KeystoreConfig": "Keystore Configuration", "CriticalSectionController": "Critical Section Controller",
}

// plainText makes a name safe where a plan takes plain text (names,
// labels): JMeter references become {name}.
func plainText(s string) string {
	s = strings.TrimSpace(s)
	s = strings.ReplaceAll(s, "${", "{")
	return s
}

// defineVar records a User Defined Variable.
func (c *conv) defineVar(name, value string) {
	if name == "" {
		return
	}
	c.consts[name] = value
	t := c.translate(value)
	pn := convert.VarName(name)
	c.vars[name] = pn
	// plateau vars may use ${env.…} but not other variables: fold earlier
	// constants in.
	val := t.T
	for _, v := range t.Vars {
		ref := "${" + c.varRef(v) + "}"
		if cv, ok := c.plan.Var(c.varRef(v)); ok && !strings.Contains(cv, "${") || (ok && onlyEnv(cv)) {
			val = strings.ReplaceAll(val, ref, cv)
		}
	}
	if !onlyEnv(val) {
		c.report.Notes = append(c.report.Notes, "Variable "+name+" refers to variables set at run time; its plateau value keeps only the constant parts.")
		val = stripNonEnv(val)
	}
	c.plan.SetVar(pn, val)
}

var refRe = regexp.MustCompile(`\$\{[^}]*\}`)

func onlyEnv(s string) bool {
	for _, r := range convert.Refs(s) {
		if !strings.HasPrefix(r, "env.") {
			return false
		}
	}
	return true
}

func stripNonEnv(s string) string {
	return refRe.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "${env.") {
			return m
		}
		return ""
	})
}

// varRef is the plateau reference text for a JMeter variable.
func (c *conv) varRef(name string) string {
	if r, ok := c.vars[name]; ok {
		return r
	}
	r := convert.VarName(name)
	c.vars[name] = r
	return r
}

// setVar is the plateau name of a variable an extractor sets. A variable
// that was a CSV column until now becomes a plain variable from here on.
func (c *conv) setVar(name string) string {
	r := c.varRef(name)
	if strings.Contains(r, ".") {
		r = convert.VarName(name)
		c.vars[name] = r
	}
	return r
}

// defineUndefined gives every referenced but never defined variable an
// empty value (it was set by an element that was not converted), so the
// plan loads, and says so.
func (c *conv) defineUndefined() {
	defined := map[string]bool{}
	for _, kv := range c.plan.Vars {
		defined[kv.Name] = true
	}
	for _, f := range c.plan.Data {
		for _, col := range f.Columns {
			defined[f.Name+"."+col] = true
		}
	}
	run := append(append([]convert.Step(nil), c.plan.Setup...), c.plan.Teardown...)
	for v := range convert.Defined(run) {
		defined[v] = true
	}
	var missing []string
	seen := map[string]bool{}
	check := func(refs []string, local map[string]bool) {
		for _, r := range refs {
			if defined[r] || local[r] || seen[r] || strings.HasPrefix(r, "env.") || strings.HasPrefix(r, "__") ||
				strings.Contains(r, ".") || strings.Contains(r, ":") {
				continue
			}
			seen[r] = true
			missing = append(missing, r)
		}
	}
	for _, kv := range c.plan.HTTP.Headers {
		check(convert.TemplateVars(kv.Value), nil)
	}
	check(convert.StepVars(run), nil)
	var extracted []string
	for _, wl := range c.plan.Workloads {
		all := append(append(append([]convert.Step(nil), wl.Setup...), wl.Scenario...), wl.Teardown...)
		check(convert.StepVars(all), convert.Defined(all))
		for v := range convert.Defined(all) {
			if !defined[v] && !seen[v] {
				seen[v] = true
				extracted = append(extracted, v)
			}
		}
	}
	// A variable an extractor sets is unset until it runs: JMeter sends a
	// reference to it as written, "${name}", and so does the plan.
	sort.Strings(extracted)
	for _, v := range extracted {
		if _, ok := c.plan.Var(v); !ok && !strings.ContainsAny(v, ".:") {
			c.plan.SetVar(v, convert.EscapeLiteral("${"+v+"}"))
		}
	}
	sort.Strings(missing)
	c.unsetInURLs(missing)
	for _, m := range missing {
		// JMeter sends a reference to a variable that is not set as it is
		// written: "${name}". The plan starts with that text too.
		c.plan.SetVar(m, convert.EscapeLiteral("${"+m+"}"))
		c.report.Notes = append(c.report.Notes, "Variable "+m+" is used but set only by elements that were not converted (or by JMeter itself, or later in the iteration); until it is set the plan sends the text ${"+m+"}, as JMeter sends an unset variable.")
	}
}

// encodeQuery url-encodes the literal parts of a template, leaving
// ${…} references as they are.
func encodeQuery(t string) string {
	var b strings.Builder
	last := 0
	for _, loc := range refRe.FindAllStringIndex(t, -1) {
		b.WriteString(url.QueryEscape(t[last:loc[0]]))
		b.WriteString(t[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(url.QueryEscape(t[last:]))
	return b.String()
}

// endless reports whether a Loop Controller loops forever.
func endless(e *Element) bool {
	loops := strings.TrimSpace(e.Str("LoopController.loops"))
	return loops == "-1" || (loops == "" && e.Bool("LoopController.continue_forever", false))
}

// dataFirst orders a level's children with CSV Data Sets and User Defined
// Variables first (stable): JMeter sets them up before any element of
// their scope runs, so a Header Manager written above a data set still
// reads its columns.
func dataFirst(kids []*Element) []*Element {
	n := 0
	for _, k := range kids {
		if k.TestClass == "CSVDataSet" || k.TestClass == "Arguments" || k.TestClass == "UserParameters" {
			n++
		}
	}
	if n == 0 || n == len(kids) {
		return kids
	}
	out := make([]*Element, 0, len(kids))
	for _, k := range kids {
		if k.TestClass == "CSVDataSet" || k.TestClass == "Arguments" || k.TestClass == "UserParameters" {
			out = append(out, k)
		}
	}
	for _, k := range kids {
		if k.TestClass != "CSVDataSet" && k.TestClass != "Arguments" && k.TestClass != "UserParameters" {
			out = append(out, k)
		}
	}
	return out
}

func (c *conv) scanPicks(e *Element) {
	if !e.Enabled {
		return
	}
	c.scanPick(e)
	for _, k := range e.Children {
		c.scanPicks(k)
	}
}

// unsetInURLs says which requests JMeter cannot send: a URL holding a
// variable nothing sets keeps "${name}", and "{" is not allowed in a URI
// (JMeter fails the sample with URISyntaxException before sending it).
func (c *conv) unsetInURLs(missing []string) {
	var walk func(steps []convert.Step)
	walk = func(steps []convert.Step) {
		for _, s := range steps {
			if r := s.Request; r != nil {
				for _, m := range missing {
					if strings.Contains(r.URL, "${"+m+"}") {
						c.report.AddBehaviour(fmt.Sprintf("request %q: its URL holds ${%s}, which nothing sets; JMeter cannot build that URL and sends nothing, plateau sends the text ${%s} encoded", r.Name, m, m))
					}
				}
			}
			for _, g := range []*convert.Group{s.Transaction, s.Loop, s.If, s.Foreach} {
				if g != nil {
					walk(g.Steps)
					walk(g.Else)
				}
			}
			for _, b := range s.Choose {
				walk(b.Steps)
			}
		}
	}
	walk(c.plan.Setup)
	walk(c.plan.Teardown)
	for _, wl := range c.plan.Workloads {
		walk(wl.Setup)
		walk(wl.Scenario)
		walk(wl.Teardown)
	}
}

// setOnFail sets on_fail on every request in steps that has none.
func setOnFail(steps []convert.Step, v string) {
	for i := range steps {
		st := &steps[i]
		if st.Request != nil && st.Request.OnFail == "" {
			st.Request.OnFail = v
		}
		for _, g := range []*convert.Group{st.Transaction, st.Loop, st.If, st.Foreach} {
			if g != nil {
				setOnFail(g.Steps, v)
				setOnFail(g.Else, v)
			}
		}
		for j := range st.Choose {
			setOnFail(st.Choose[j].Steps, v)
		}
	}
}
