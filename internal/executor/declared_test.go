package executor

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestGatlingDeclared(t *testing.T) {
	src, err := os.ReadFile("../cli/testdata/declared/gatling/steps/StepSimulation.java")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{nil, "3 users/s 1s–8s 3/s; 8 users/s 10s–17s 8/s"},
		{map[string]string{"low": "5"}, "5 users/s 1s–8s 5/s; 8 users/s 10s–17s 8/s"},
	} {
		d := gatlingDeclared(stripJavaComments(string(src)), c.props)
		if got := describe(d); got != c.want {
			t.Errorf("-J %v: %s (%s), want %s", c.props, got, d.Why, c.want)
		}
		if !d.FirstKnown || d.FirstUser != time.Second {
			t.Errorf("-J %v: first user at %s (known %v), want 1s after nothingFor(1s)", c.props, d.FirstUser, d.FirstKnown)
		}
	}
	// Gatling's own sample: ramps only, so no phase, and the reason.
	cd, err := os.ReadFile("testdata/gatling-computerdatabase/computerdatabase/ComputerDatabaseSimulation.java")
	if err != nil {
		t.Fatal(err)
	}
	if d := gatlingDeclared(stripJavaComments(string(cd)), nil); len(d.Phases) != 0 || !strings.Contains(d.Why, "no hold") {
		t.Errorf("computer database: %s (%s)", describe(d), d.Why)
	}
	// A ramp from zero users a second: its first user is not at its start.
	if d := gatlingDeclared(`{ setUp(s.injectOpen(rampUsersPerSec(0).to(5).during(2), constantUsersPerSec(5).during(10))); }`, nil); len(d.Phases) != 1 || d.FirstKnown {
		t.Errorf("ramp from 0: %s, first user known %v", describe(d), d.FirstKnown)
	}
	for _, c := range []struct{ src, want string }{
		// closed model, a field, a sequence: holds of users
		{`static final int N = 4; { setUp(s.injectClosed(rampConcurrentUsers(0).to(N).during(Duration.ofSeconds(2)), constantConcurrentUsers(N).during(Duration.ofMinutes(1)), rampConcurrentUsers(N).to(N).during(5))); }`,
			"4 users 2s–1m7s"},
		{`{ setUp(s.injectOpen(atOnceUsers(2), nothingFor(3), constantUsersPerSec(1.5).during(10).randomized())); }`, "1.5 users/s 3s–13s 1.5/s"},
		// parallel scenarios with holds at once: no phases
		{`{ setUp(a.injectOpen(constantUsersPerSec(1).during(10)), b.injectOpen(constantUsersPerSec(2).during(10))); }`, "overlap"},
		// a step plateau does not read, a value it cannot resolve, andThen
		{`{ setUp(a.injectOpen(stressPeakUsers(100).during(10))); }`, "not one of the steps"},
		{`{ setUp(a.injectOpen(constantUsersPerSec(rate()).during(10))); }`, "not a value"},
		{`{ setUp(a.injectOpen(constantUsersPerSec(Integer.getInteger("r")).during(10))); }`, "no -J r="},
		{`{ setUp(a.injectOpen(constantUsersPerSec(1).during(10)).andThen(b.injectOpen(atOnceUsers(1)))); }`, "andThen"},
		{`{ setUp(a.injectOpen(constantUsersPerSec(1).during(10); }`, "do not close"},
	} {
		d := gatlingDeclared(c.src, nil)
		got := describe(d)
		if len(d.Phases) == 0 {
			got = d.Why
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s: %s, want %s", c.src, got, c.want)
		}
	}
}

func describe(d Declared) string {
	var parts []string
	for _, p := range d.Phases {
		s := p.Name + " " + p.From.String() + "–" + p.To.String()
		if p.Rate > 0 {
			s += " " + strconv.FormatFloat(p.Rate, 'f', -1, 64) + "/s"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func TestJMeterDeclared(t *testing.T) {
	for _, c := range []struct {
		props []string
		set   map[string]string
		want  string
	}{
		{nil, nil, "600 samples/min 1s–9s 10/s; 1200 samples/min 11s–19s 20/s"},
		{[]string{"rate=480"}, nil, "480 samples/min 1s–9s 8/s; 1200 samples/min 11s–19s 20/s"},
		// --set duration makes every group run from the start: at once.
		{nil, map[string]string{"duration": "30s"}, "run at once"},
	} {
		d := jmeter{}.Declare(&Spec{Script: "../cli/testdata/declared/steps.jmx", Props: c.props, Set: c.set})
		got := describe(d)
		if len(d.Phases) == 0 {
			got = d.Why
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("-J %v --set %v: %s, want %s", c.props, c.set, got, c.want)
		}
	}
	// JMeter's own thread groups without a scheduler run loops: no time.
	d := jmeter{}.Declare(&Spec{Script: "../importer/jtl/testdata/plan.jmx"})
	if len(d.Phases) != 0 || !strings.Contains(d.Why, "loops") {
		t.Errorf("a looped plan: %s (%s)", describe(d), d.Why)
	}
	if got := string(jmeterProps([]byte(`${__P(a)} ${__P(b,7)} ${__property(c,,x)} ${__P(d,&)}`), map[string]string{"b": "<9>"})); got != "1 &lt;9&gt; x &amp;" {
		t.Errorf("properties: %s", got)
	}
}

// FuzzGatlingDeclared: any simulation text gives phases that are in
// order and do not overlap, or a reason — never a panic.
func FuzzGatlingDeclared(f *testing.F) {
	if src, err := os.ReadFile("../cli/testdata/declared/gatling/steps/StepSimulation.java"); err == nil {
		f.Add(string(src))
	}
	f.Add(`{ setUp(s.injectClosed(constantConcurrentUsers(Integer.parseInt(System.getProperty("u", "3"))).during(N))); } int N = 5;`)
	f.Add(`x.injectOpen(System.getProperty())`)
	f.Add(`x.injectOpen(constantUsersPerSec(Integer.parseInt(System.getProperty())).during(1))`)
	f.Fuzz(func(t *testing.T, src string) {
		d := gatlingDeclared(stripJavaComments(src), map[string]string{"u": "2"})
		if len(d.Phases) == 0 && d.Why == "" {
			t.Fatal("no phases and no reason")
		}
		for i, p := range d.Phases {
			if p.To <= p.From || i > 0 && p.From < d.Phases[i-1].To {
				t.Fatalf("phases %+v", d.Phases)
			}
		}
	})
}

// TestGatlingStartByArrivals: an injection profile is placed by the users
// Gatling started, the median of their lateness: users a busy JVM started
// late and in a burst do not move it.
func TestGatlingStartByArrivals(t *testing.T) {
	d := gatlingDeclared(`{ setUp(s.injectOpen(nothingFor(1), constantUsersPerSec(4).during(10), rampUsersPerSec(4).to(8).during(2))); }`, nil)
	if len(d.Arrivals) != 40+12 || d.Arrivals[0] != time.Second || d.Arrivals[1] != 1250*time.Millisecond || d.Arrivals[40] != 11*time.Second {
		t.Fatalf("arrivals %v", d.Arrivals)
	}
	// The ramp's 12 users: count(t) = 4t + t² reaches i at t = (−4 + √(16+4i))/2.
	if got, want := d.Arrivals[41], 11*time.Second+time.Duration((-4+math.Sqrt(20))/2*float64(time.Second)); got < want-time.Microsecond || got > want+time.Microsecond {
		t.Errorf("the ramp's second user at %s, want %s", got, want)
	}
	start := time.UnixMilli(1_800_000_000_000)
	var b strings.Builder
	b.WriteString("RUN\tsim.S\ts\t1799999997000\t \t3.9.5\n") // 3 s early
	for i, at := range d.Arrivals {
		t := start.Add(at)
		if i < 6 {
			t = start.Add(2500 * time.Millisecond) // late, in a burst
		}
		fmt.Fprintf(&b, "USER\ts\tSTART\t%d\n", t.UnixMilli())
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "results", "s-1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "results", "s-1", "simulation.log"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, ok := gatling{}.Started(dir, d)
	if !ok || got.Sub(start).Abs() > time.Millisecond {
		t.Errorf("start %s (%v), want %s", got, ok, start)
	}
	// Fewer than 20 users started: not yet known.
	if err := os.WriteFile(filepath.Join(dir, "results", "s-1", "simulation.log"), []byte(strings.Join(strings.SplitAfter(b.String(), "\n")[:10], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := (gatling{}).Started(dir, d); ok {
		t.Error("placed by 9 users")
	}
}

// TestJMeterDeclaredConcurrency: the Concurrency Thread Group (jpgc), its
// steps read by the converter, each a hold; its target from -J.
func TestJMeterDeclaredConcurrency(t *testing.T) {
	plan := `<?xml version="1.0" encoding="UTF-8"?>
<jmeterTestPlan version="1.2" properties="5.0" jmeter="5.6.3"><hashTree>
<TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="c"/><hashTree>
<com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup guiclass="com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroupGui" testclass="com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup" testname="steps">
  <elementProp name="ThreadGroup.main_controller" elementType="com.blazemeter.jmeter.control.VirtualUserController"/>
  <stringProp name="TargetLevel">${__P(target,6)}</stringProp>
  <stringProp name="RampUp">3</stringProp>
  <stringProp name="Steps">3</stringProp>
  <stringProp name="Hold">5</stringProp>
  <stringProp name="Unit">S</stringProp>
</com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup><hashTree>
<HTTPSamplerProxy guiclass="HttpTestSampleGui" testclass="HTTPSamplerProxy" testname="GET /"><stringProp name="HTTPSampler.domain">127.0.0.1</stringProp><stringProp name="HTTPSampler.path">/</stringProp><stringProp name="HTTPSampler.method">GET</stringProp></HTTPSamplerProxy><hashTree/>
</hashTree></hashTree></hashTree></jmeterTestPlan>`
	path := filepath.Join(t.TempDir(), "c.jmx")
	if err := os.WriteFile(path, []byte(plan), 0o644); err != nil {
		t.Fatal(err)
	}
	for props, want := range map[string]string{
		"":          "2 threads 0s–1s; 4 threads 1s–2s; 6 threads 2s–8s",
		"target=12": "4 threads 0s–1s; 8 threads 1s–2s; 12 threads 2s–8s",
	} {
		var ps []string
		if props != "" {
			ps = []string{props}
		}
		d := jmeter{}.Declare(&Spec{Script: path, Props: ps})
		if got := describe(d); got != want {
			t.Errorf("-J %q: %s (%s), want %s", props, got, d.Why, want)
		}
	}
}

// TestK6Started: k6's start is its first vus reading less a second, in
// the CSV's microseconds (the executor's) or nanoseconds.
func TestK6Started(t *testing.T) {
	t.Parallel()
	want := time.Unix(1795933287, 240668000).Add(-time.Second)
	for _, ts := range []string{"1795933287240668", "1795933287240668000"} {
		dir := t.TempDir()
		body := "metric_name,timestamp,metric_value\nhttp_reqs," + ts + ",1.000000\nvus," + ts + ",8.000000\n"
		if err := os.WriteFile(filepath.Join(dir, K6Results), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		got, ok := k6{}.Started(dir, Declared{})
		if !ok || !got.Equal(want) {
			t.Errorf("%s: %v %v, want %v", ts, got, ok, want)
		}
	}
}

// TestK6StartedWaitsForTheWholeRow: a vus row k6 is still writing (no line
// break yet) is not read — its time cut short would place every phase in
// 1970 — and is read once complete; a line longer than the reader's buffer
// before it is skipped, not taken for rows.
func TestK6StartedWaitsForTheWholeRow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, K6Results)
	head := "metric_name,timestamp,metric_value\nhttp_reqs,1795933287240668," + strings.Repeat("x", 100<<10) + "\nvus,1795933"
	if err := os.WriteFile(path, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := (k6{}).Started(dir, Declared{}); ok {
		t.Fatalf("a row without its line break was read: %v", got)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("287240668,8.000000\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	want := time.Unix(1795933287, 240668000).Add(-time.Second)
	if got, ok := (k6{}).Started(dir, Declared{}); !ok || !got.Equal(want) {
		t.Errorf("complete row: %v %v, want %v", got, ok, want)
	}
}

// TestJMeterDeclaredPlugins: the JMeter Plugins' thread groups give the
// holds their plugins schedule (as the converter reads them), named by
// their level, an Arrivals group's checked as samples a second (its
// iterations' samples times its rate), -J reaching a __P; a group that
// cannot be read is named with the reason, and so is another plugin's.
func TestJMeterDeclaredPlugins(t *testing.T) {
	for _, c := range []struct {
		script string
		props  []string
		want   string
	}{
		{"../cli/testdata/declared/jpgc-threads.jmx", nil,
			"2 threads (1) 0s–4s; 4 threads (1) 4s–14s; 2 threads (2) 18s–20s; 4 threads (2) 20s–24s; 2 threads (3) 28s–31s; 4 threads (3) 31s–35s; 2 threads (4) 35s–37s"},
		{"../cli/testdata/declared/jpgc-threads.jmx", []string{"conc=6"},
			"3 threads 0s–4s; 6 threads 4s–14s; 2 threads (1) 18s–20s; 4 threads (1) 20s–24s; 2 threads (2) 28s–31s; 4 threads (2) 31s–35s; 2 threads (3) 35s–37s"},
		// Two samples an arrival: 3 and 6 arrivals/s are 6 and 12 samples/s.
		{"../cli/testdata/declared/jpgc-arrivals.jmx", nil,
			"3 arrivals/s 0s–4s 6/s; 6 arrivals/s 4s–14s 12/s; 240 arrivals/min 18s–24s 4/s; 480 arrivals/min 27s–33s 8/s"},
		{"../cli/testdata/declared/jpgc-arrivals.jmx", []string{"rate=10"},
			"5 arrivals/s 0s–4s 10/s; 10 arrivals/s 4s–14s 20/s; 240 arrivals/min 18s–24s 4/s; 480 arrivals/min 27s–33s 8/s"},
		// Public plans: Taurus' groups run at once, its Stepping group
		// runs one loop; the plugins' examples' groups overlap.
		{"../convert/jmeter/testdata/corpus/Blazemeter+taurus/threadgroups.jmx", nil, `thread group "STG.03": its threads run a number of loops`},
		{"../convert/jmeter/testdata/corpus/undera+jmeter-plugins/SteppingThreadGroupExample.jmx", nil, "thread groups run at once: 15 threads (15.6s–21s) and 10 threads (15.9s–18s) overlap"},
		{"../convert/jmeter/testdata/corpus/Blazemeter+taurus/ultimateGroupTest.jmx", nil, "20 threads 5s–25s; 100 threads 25s–45s"},
		{"../convert/jmeter/testdata/corpus/Blazemeter+taurus/external.jmx", nil, "declare no hold"},
	} {
		d := jmeter{}.Declare(&Spec{Script: c.script, Props: c.props})
		got := describe(d)
		if len(d.Phases) == 0 {
			got = d.Why
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s -J %v:\n got %s\nwant %s", c.script, c.props, got, c.want)
		}
	}
	dir := t.TempDir()
	write := func(name, group string) string {
		p := filepath.Join(dir, name)
		plan := `<?xml version="1.0"?><jmeterTestPlan version="1.2"><hashTree><TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="p"/><hashTree>` + group + `</hashTree></hashTree></jmeterTestPlan>`
		if err := os.WriteFile(p, []byte(plan), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	conc := `<com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup guiclass="x" testclass="com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup" testname="c">
<stringProp name="TargetLevel">4</stringProp><stringProp name="RampUp">4</stringProp><stringProp name="Steps">2</stringProp><stringProp name="Hold">6</stringProp><stringProp name="Unit">S</stringProp>
</com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup><hashTree>
<HTTPSamplerProxy guiclass="x" testclass="HTTPSamplerProxy" testname="a"/><hashTree/>
<ConstantThroughputTimer guiclass="TestBeanGUI" testclass="ConstantThroughputTimer" testname="t"><intProp name="calcMode">%s</intProp><stringProp name="throughput">120</stringProp></ConstantThroughputTimer><hashTree/>
</hashTree>`
	for _, c := range []struct{ name, group, want string }{
		// A throughput timer over stepped threads: its rate per thread
		// times each step's threads, or shared by them all.
		{"per-thread.jmx", strings.Replace(conc, "%s", "0", 1), "240 samples/min 0s–2s 4/s; 480 samples/min 2s–10s 8/s"},
		{"shared.jmx", strings.Replace(conc, "%s", "2", 1), "120 samples/min 0s–10s 2/s"},
		{"other.jmx", `<com.example.SpikeThreadGroup guiclass="x" testclass="com.example.SpikeThreadGroup" testname="spike"/><hashTree/>`,
			`thread group "spike" (com.example.SpikeThreadGroup, line 1) is not one whose schedule plateau reads`},
		{"arrivals-if.jmx", `<com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup guiclass="x" testclass="com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup" testname="a"><stringProp name="TargetLevel">4</stringProp><stringProp name="Unit">S</stringProp></com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup><hashTree>
<IfController guiclass="x" testclass="IfController" testname="if"/><hashTree><HTTPSamplerProxy guiclass="x" testclass="HTTPSamplerProxy" testname="a"/><hashTree/></hashTree></hashTree>`,
			"the samples an arrival writes are not fixed"},
	} {
		d := jmeter{}.Declare(&Spec{Script: write(c.name, c.group)})
		got := describe(d)
		if len(d.Phases) == 0 {
			got = d.Why
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}
