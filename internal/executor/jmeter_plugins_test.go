package executor

import (
	"regexp"
	"strings"
	"testing"
)

// TestJMeterSegmentPlugins: each JMeter Plugins thread group plateau
// splits gets its share on each of 3 generators — a Concurrency target of
// 7 as 3+2+2 (from -J conc), an Arrivals rate of 9 (its property's
// default) as 3 each, each Free-Form row's rates ÷ 3 (durations kept)
// and its ArrivalsLimit of 10 as 4+3+3 (an empty one left as it is),
// each Ultimate row's threads as plateau splits users — and what cannot
// be split is refused with the reason.
func TestJMeterSegmentPlugins(t *testing.T) {
	t.Parallel()
	src := `<com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup guiclass="g" testclass="com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup" testname="c" enabled="true">
  <stringProp name="TargetLevel">${__P(conc,4)}</stringProp>
  <stringProp name="Steps">2</stringProp>
</com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup>
<com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup guiclass="g" testclass="com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup" testname="a" enabled="true">
  <stringProp name="TargetLevel">${__P(rate,9)}</stringProp>
  <stringProp name="ArrivalsLimit">${__P(limit,)}</stringProp>
</com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup>
<com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup guiclass="g" testclass="com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup" testname="f" enabled="true">
  <stringProp name="ArrivalsLimit">10</stringProp>
  <collectionProp name="Schedule">
    <collectionProp name="1">
      <stringProp name="1">0</stringProp>
      <stringProp name="2">6</stringProp>
      <stringProp name="3">30</stringProp>
    </collectionProp>
    <collectionProp name="2">
      <stringProp name="1">1.5</stringProp>
      <stringProp name="2">1.5</stringProp>
      <stringProp name="3">9</stringProp>
    </collectionProp>
  </collectionProp>
</com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup>
<kg.apc.jmeter.threads.UltimateThreadGroup guiclass="g" testclass="kg.apc.jmeter.threads.UltimateThreadGroup" testname="u" enabled="true">
  <collectionProp name="ultimatethreadgroupdata">
    <collectionProp name="1">
      <stringProp name="1">5</stringProp>
      <stringProp name="2">0</stringProp>
      <stringProp name="3">4</stringProp>
      <stringProp name="4">10</stringProp>
      <stringProp name="5">1</stringProp>
    </collectionProp>
    <collectionProp name="2">
      <stringProp name="1">3</stringProp>
      <stringProp name="2">7</stringProp>
      <stringProp name="3">5</stringProp>
      <stringProp name="4">6</stringProp>
      <stringProp name="5">0</stringProp>
    </collectionProp>
  </collectionProp>
</kg.apc.jmeter.threads.UltimateThreadGroup>`
	cells := regexp.MustCompile(`<stringProp name="[^"]*">([^<]*)<`)
	props := map[string]string{"conc": "7"}
	for seg, want := range []string{
		"3 2 3 ${__P(limit,)} 4 0 2 30 0.5 0.5 9 2 0 4 10 1 1 7 5 6 0",
		"2 2 3 ${__P(limit,)} 3 0 2 30 0.5 0.5 9 2 0 4 10 1 1 7 5 6 0",
		"2 2 3 ${__P(limit,)} 3 0 2 30 0.5 0.5 9 1 0 4 10 1 1 7 5 6 0",
	} {
		out, err := splitThreads([]byte(src), seg, 3, props)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range cells.FindAllStringSubmatch(string(out), -1) {
			got = append(got, m[1])
		}
		if strings.Join(got, " ") != want {
			t.Errorf("segment %d/3: %s, want %s", seg, strings.Join(got, " "), want)
		}
	}
	// A disabled plugin group is left as it is.
	off := strings.Replace(src, `testname="c" enabled="true"`, `testname="c" enabled="false"`, 1)
	if out, err := splitThreads([]byte(off), 1, 3, props); err != nil || !strings.Contains(string(out), "${__P(conc,4)}") {
		t.Errorf("disabled group: %v", err)
	}
	for _, c := range []struct {
		props map[string]string
		n     int
		want  string
	}{
		{map[string]string{"conc": "2"}, 3, `Concurrency Thread Group "c": TargetLevel 2 on 3 generators`},
		{map[string]string{"conc": "${x}"}, 3, `TargetLevel "${__P(conc,4)}" is not a number`},
		{map[string]string{"conc": "7", "rate": "lots"}, 3, `Arrivals Thread Group "a": TargetLevel "${__P(rate,9)}" is not a number`},
		{map[string]string{"conc": "7"}, 4, `Ultimate Thread Group "u": a row's threads 3 on 4 generators`},
		{map[string]string{"conc": "7", "threads_schedule": "spawn(1,0s,1s,1s,1s)"}, 3, "threads_schedule"},
	} {
		if _, err := splitThreads([]byte(src), 0, c.n, c.props); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v on %d: %v, want %q", c.props, c.n, err, c.want)
		}
	}
}

// FuzzSplitPlugins: whatever a plan holds, splitting it across
// generators returns a plan or an error, never a panic; and a plan with
// no plugin group is returned as it is.
func FuzzSplitPlugins(f *testing.F) {
	for _, s := range []string{
		`<com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup testname="f"><collectionProp name="Schedule"><collectionProp name="1"><stringProp name="1">4</stringProp></collectionProp></collectionProp></com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup>`,
		`<kg.apc.jmeter.threads.UltimateThreadGroup testname="u"><collectionProp name="ultimatethreadgroupdata"><collectionProp name="1"><stringProp name="1">${__P(n,4)}</stringProp></collectionProp></collectionProp></kg.apc.jmeter.threads.UltimateThreadGroup>`,
		`<com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup testname="c" enabled="true"><stringProp name="TargetLevel">5</stringProp></com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup>`,
		`<ThreadGroup testname="t"><stringProp name="ThreadGroup.num_threads">3</stringProp></ThreadGroup>`,
	} {
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, s string, n uint8) {
		gens := int(n%8) + 1
		for seg := 0; seg < gens; seg++ {
			out, err := splitPlugins(s, seg, gens, map[string]string{"n": "6"})
			if err == nil && !strings.Contains(s, "jmeter.threads.") && out != s {
				t.Fatalf("a plan without a plugin group changed: %q → %q", s, out)
			}
		}
	})
}
