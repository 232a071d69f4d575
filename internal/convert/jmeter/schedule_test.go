package jmeter

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// describeHolds writes holds as "label from–to" in seconds (ms where a
// bound is not whole), joined by "; ".
func describeHolds(hs []Hold) string {
	var parts []string
	sec := func(d time.Duration) string {
		if d%time.Second == 0 {
			return fmt.Sprint(int64(d / time.Second))
		}
		return fmt.Sprintf("%.1f", d.Seconds())
	}
	for _, h := range hs {
		parts = append(parts, fmt.Sprintf("%s %s–%s", h.Label, sec(h.From), sec(h.To)))
	}
	return strings.Join(parts, "; ")
}

func loadsOf(t *testing.T, path string, props map[string]string) map[string]GroupLoad {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	root, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	loads, _ := Loads(root, Options{Source: path, Properties: props})
	out := map[string]GroupLoad{}
	for _, g := range loads {
		out[g.Name] = g
	}
	return out
}

// TestPluginSchedulesOfPublicPlans: the JMeter Plugins thread groups of
// public plans (testdata/corpus/README.md) read as the plugins compute
// their timelines — each expectation worked out by hand from the
// plugin's own formulas (jpgc-casutg 2.10), not from this code.
func TestPluginSchedulesOfPublicPlans(t *testing.T) {
	for _, c := range []struct {
		path, group string
		want        string // holds, or "error: …" (a part of it)
	}{
		// Taurus' test plan of every kind of group.
		// Concurrency: 3 threads in 2 steps over 100 s, Hold empty (0 s):
		// step 1 rounds 1.5 up to 2 (Java's Math.round).
		{"Blazemeter+taurus/threadgroups.jmx", "CTG.02", "2 threads 0–50; 3 threads 50–100"},
		// Stepping with loops 1: its threads end when their loop does.
		{"Blazemeter+taurus/threadgroups.jmx", "STG.03", "error: loops"},
		// Ultimate: 6 threads, no delay, 30 s startup, 60 s hold.
		{"Blazemeter+taurus/threadgroups.jmx", "UTG.04", "6 threads 30–90"},
		// Arrivals: 2 a minute over 3 min in 4 steps, then 5 min.
		{"Blazemeter+taurus/threadgroups.jmx", "ATG.05", "0.5 arrivals/min 0–45; 1 arrivals/min 45–90; 1.5 arrivals/min 90–135; 2 arrivals/min 135–480"},
		// Two Ultimate rows one after the other: 20 threads held 5–25 s,
		// then 100 started at once at 25 s, held 20 s.
		{"Blazemeter+taurus/ultimateGroupTest.jmx", "jp@gc - Ultimate Thread Group", "20 threads 5–25; 100 threads 25–45"},
		// An Ultimate group whose schedule was saved empty under the
		// plugin's other property name.
		{"Blazemeter+taurus/SteppingThreadGroup.jmx", "ultimate_tg", "error: no rows"},
		// Concurrency ramping 30 s with no hold: no level is held.
		{"Blazemeter+taurus/external.jmx", "bzm - Concurrency Thread Group", ""},
		// The plugins' own Stepping example: 5 threads every 5 s, each
		// step's 5 started 400 ms apart over 2 s, up to 50; then 25
		// stopped, and 25 more 5 s later.
		{"undera+jmeter-plugins/SteppingThreadGroupExample.jmx", "jp@gc - Stepping Thread Group 1",
			"5 threads 1.6–7; 10 threads 8.6–14; 15 threads 15.6–21; 20 threads 22.6–28; 25 threads 29.6–35; 30 threads 36.6–42; 35 threads 43.6–49; 40 threads 50.6–56; 45 threads 57.6–63; 50 threads 64.6–65; 25 threads 65–70"},
		// After 15 s, 10 threads every 2 s (over 1 s), the last step 5;
		// held 30 s; then 10 stopped every 5 s.
		{"undera+jmeter-plugins/SteppingThreadGroupExample.jmx", "jp@gc - Stepping Thread Group 2",
			"10 threads 15.9–18; 20 threads 18.9–21; 30 threads 21.9–24; 35 threads 24.4–54.5; 25 threads 54.5–59.5; 15 threads 59.5–64.5; 5 threads 64.5–69.5"},
		// Two Ultimate rows that overlap: the first's 100 threads are
		// held 5–20 s before the second starts adding; from then on a row
		// is always starting or stopping threads.
		{"undera+jmeter-plugins/ActiveThreadsOverTimeExample.jmx", "jp@gc - Ultimate Thread Group", "100 threads 5–20"},
		{"undera+jmeter-plugins/UDPRequestExample.jmx", "jp@gc - Ultimate Thread Group", "10 threads 20–25"},
	} {
		g, ok := loadsOf(t, "testdata/corpus/"+c.path, nil)[c.group]
		if !ok {
			t.Errorf("%s: no group %q", c.path, c.group)
			continue
		}
		got := describeHolds(g.Holds)
		if g.HoldsErr != "" {
			got = "error: " + g.HoldsErr
		}
		if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
			if !strings.Contains(got, want) {
				t.Errorf("%s %q: %s, want an error about %q", c.path, c.group, got, want)
			}
		} else if got != c.want {
			t.Errorf("%s %q:\n got %s\nwant %s", c.path, c.group, got, c.want)
		}
	}
}

// TestPluginSchedules: the plugins' other settings — the minute unit, a
// linear ramp, the threads_schedule property, a shifted ramp-up, an
// arrivals limit, a Free-Form row of fractional minutes (the plugin adds
// row durations up in whole seconds), Ultimate rows with a shutdown.
func TestPluginSchedules(t *testing.T) {
	conc := func(props string) string {
		return `<com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup guiclass="x" testclass="com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup" testname="g">` + props + `</com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup><hashTree/>`
	}
	arr := func(class, props string) string {
		return `<com.blazemeter.jmeter.threads.arrivals.` + class + ` guiclass="x" testclass="com.blazemeter.jmeter.threads.arrivals.` + class + `" testname="g">` + props + `</com.blazemeter.jmeter.threads.arrivals.` + class + `><hashTree>
<HTTPSamplerProxy guiclass="x" testclass="HTTPSamplerProxy" testname="a"/><hashTree/>
<GenericController guiclass="x" testclass="GenericController" testname="s"/><hashTree><HTTPSamplerProxy guiclass="x" testclass="HTTPSamplerProxy" testname="b"/><hashTree/></hashTree>
<TestAction guiclass="x" testclass="TestAction" testname="pause"/><hashTree/>
</hashTree>`
	}
	ult := func(rows string) string {
		return `<kg.apc.jmeter.threads.UltimateThreadGroup guiclass="x" testclass="kg.apc.jmeter.threads.UltimateThreadGroup" testname="g"><collectionProp name="ultimatethreadgroupdata">` + rows + `</collectionProp>
<elementProp name="ThreadGroup.main_controller" elementType="LoopController"><intProp name="LoopController.loops">-1</intProp></elementProp></kg.apc.jmeter.threads.UltimateThreadGroup><hashTree/>`
	}
	row := func(vs ...string) string {
		s := `<collectionProp name="r">`
		for _, v := range vs {
			s += `<stringProp name="0">` + v + `</stringProp>`
		}
		return s + `</collectionProp>`
	}
	sp := func(name, v string) string { return `<stringProp name="` + name + `">` + v + `</stringProp>` }
	for _, c := range []struct {
		name, group string
		props       map[string]string
		want        string
		perIter     int
	}{
		{"concurrency in minutes, linear ramp", conc(sp("TargetLevel", "5") + sp("RampUp", "0.5") + sp("Hold", "1") + sp("Unit", "M")), nil, "5 threads 30–90", 0},
		{"concurrency, no ramp", conc(sp("TargetLevel", "5") + sp("Hold", "7") + sp("Unit", "S")), nil, "5 threads 0–7", 0},
		{"concurrency, Hold absent (the plugin's 1)", conc(sp("TargetLevel", "5") + sp("Unit", "S")), nil, "5 threads 0–1", 0},
		// 10 threads in 3 steps: round(3.33)=3, round(6.67)=7, then 10.
		{"concurrency, uneven steps", conc(sp("TargetLevel", "10") + sp("RampUp", "9") + sp("Steps", "3") + sp("Hold", "3") + sp("Unit", "S")), nil, "3 threads 0–3; 7 threads 3–6; 10 threads 6–12", 0},
		{"concurrency, shifted ramp-up", conc(sp("TargetLevel", "4") + sp("RampUp", "4") + sp("Steps", "2") + sp("Hold", "2") + sp("Unit", "S")), map[string]string{"dynamic_tg.shift_rampup_start": "3"}, "2 threads 0–5; 4 threads 5–9", 0},
		{"concurrency, a variable", conc(sp("TargetLevel", "${users}") + sp("Unit", "S")), nil, "error: TargetLevel \"${users}\"", 0},
		{"concurrency, a fraction", conc(sp("TargetLevel", "2.5") + sp("Unit", "S")), nil, "error: not a whole number", 0},
		{"arrivals per second, each iteration 2 samples", arr("ArrivalsThreadGroup", sp("TargetLevel", "4")+sp("RampUp", "2")+sp("Hold", "8")+sp("Unit", "S")), nil, "4 arrivals/s 2–10", 2},
		{"arrivals with a limit", arr("ArrivalsThreadGroup", sp("TargetLevel", "4")+sp("ArrivalsLimit", "100")+sp("Unit", "S")), nil, "error: after 100 arrivals", 2},
		// 0.1 min = 6 s; 0.05 min is 3.0000000000000004 s, truncated.
		{"free-form in minutes", arr("FreeFormArrivalsThreadGroup", `<collectionProp name="Schedule">`+row("0", "0", "0.1")+row("120", "120", "0.1")+row("120", "240", "0.05")+row("240", "240", "0.1")+`</collectionProp>`+sp("Unit", "M")), nil, "120 arrivals/min 6–12; 240 arrivals/min 15–21", 2},
		{"free-form, no rows", arr("FreeFormArrivalsThreadGroup", sp("Unit", "S")), nil, "error: no rows", 2},
		// 4 threads from 0 to 4 s (one each second), held 10 s, stopped over
		// 4 s; 2 more at once at 6 s for 2 s.
		{"ultimate rows with a shutdown", ult(row("4", "0", "4", "10", "4") + row("2", "6", "0", "2", "0")), nil, "4 threads 4–6; 6 threads 6–8; 4 threads 8–14", 0},
		{"ultimate from threads_schedule", ult(row("4", "0", "4", "10", "4")), map[string]string{"threads_schedule": "spawn(3, 0s, 0s, 1m, 0s) spawn(2, 30s, 0s, 1m30s, 0s)"}, "3 threads 0–30; 5 threads 30–60; 2 threads 60–120", 0},
		{"ultimate, a bad threads_schedule", ult(row("4", "0", "4", "10", "4")), map[string]string{"threads_schedule": "ramp(3, 0s)"}, "error: threads_schedule", 0},
		{"ultimate, a fraction", ult(row("4", "0", "4.5", "10", "4")), nil, "error: not a whole number", 0},
	} {
		plan := `<?xml version="1.0"?><jmeterTestPlan version="1.2"><hashTree><TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="p"/><hashTree>` + c.group + `</hashTree></hashTree></jmeterTestPlan>`
		root, err := Parse(strings.NewReader(plan))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		loads, _ := Loads(root, Options{Properties: c.props})
		if len(loads) != 1 {
			t.Fatalf("%s: %d groups", c.name, len(loads))
		}
		g := loads[0]
		got := describeHolds(g.Holds)
		if g.HoldsErr != "" {
			got = "error: " + g.HoldsErr
		}
		if want, isErr := strings.CutPrefix(c.want, "error: "); isErr {
			if !strings.Contains(got, want) {
				t.Errorf("%s: %s, want an error about %q", c.name, got, want)
			}
		} else if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
		if g.SamplesPerIteration != c.perIter {
			t.Errorf("%s: %d samples an iteration, want %d", c.name, g.SamplesPerIteration, c.perIter)
		}
	}
}

// TestConvertConcurrencySteps: a converted Concurrency Thread Group steps
// as the plugin does — 10 threads in 3 steps are 3, 7 and 10 (Java's
// rounding, not 4, 7, 10), and a Unit other than M is seconds.
func TestConvertConcurrencySteps(t *testing.T) {
	plan := `<?xml version="1.0"?><jmeterTestPlan version="1.2"><hashTree><TestPlan guiclass="TestPlanGui" testclass="TestPlan" testname="p"/><hashTree>
<com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup guiclass="x" testclass="com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup" testname="g">
<stringProp name="TargetLevel">10</stringProp><stringProp name="RampUp">9</stringProp><stringProp name="Steps">3</stringProp><stringProp name="Hold">3</stringProp><stringProp name="Unit"></stringProp>
</com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup><hashTree><HTTPSamplerProxy guiclass="x" testclass="HTTPSamplerProxy" testname="a"/><hashTree/></hashTree>
</hashTree></hashTree></jmeterTestPlan>`
	root, err := Parse(strings.NewReader(plan))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := Convert(root, Options{})
	var got []string
	for _, s := range p.Workloads[0].Load.Steps {
		got = append(got, s.Users+" for "+s.Duration)
	}
	if want := "3 for 3s; 7 for 3s; 10 for 6s"; strings.Join(got, "; ") != want {
		t.Errorf("steps %s, want %s", strings.Join(got, "; "), want)
	}
}
