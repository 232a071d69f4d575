package jmeter

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzConvert: any input is either rejected with an error or converted
// into a plan that can be written; never a panic.
func FuzzConvert(f *testing.F) {
	for _, p := range []string{"plans/e2e.jmx", "corpus/folio-org+perf-testing/edge_rtac_listInstanceIds.jmx"} {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`<jmeterTestPlan><hashTree><TestPlan testname="${__P(x,${y})}"/><hashTree><ThreadGroup/><hashTree><IfController><stringProp name="IfController.condition">${__groovy(vars.get("a").equals("b"))}</stringProp></IfController></hashTree></hashTree></hashTree></jmeterTestPlan>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		root, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		p, rep := Convert(root, Options{Source: "fuzz.jmx", ReadFile: func(string) ([]byte, error) { return nil, os.ErrNotExist }})
		if _, err := p.Bytes(); err != nil {
			t.Fatalf("writing plan: %v", err)
		}
		var b bytes.Buffer
		if _, err := rep.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzSchedules: any plan and any plugin properties give each thread
// group holds that are not empty and do not run backwards, or a reason;
// never a panic, nor a hang on a hostile schedule.
func FuzzSchedules(f *testing.F) {
	for _, p := range []string{"corpus/Blazemeter+taurus/threadgroups.jmx", "corpus/undera+jmeter-plugins/SteppingThreadGroupExample.jmx", "corpus/Blazemeter+taurus/ultimateGroupTest.jmx", "../../../cli/testdata/declared/jpgc-arrivals.jmx"} {
		b, err := os.ReadFile(filepath.Join("testdata", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "spawn(3, 0s, 10s, 1m, 5s) spawn(2, 30s, 0s, 1m30s, 0s)", "2")
	}
	f.Fuzz(func(t *testing.T, data []byte, sched, shift string) {
		root, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		loads, _ := Loads(root, Options{Source: "fuzz.jmx", ReadFile: func(string) ([]byte, error) { return nil, os.ErrNotExist },
			Properties: map[string]string{"threads_schedule": sched, "dynamic_tg.shift_rampup_start": shift}})
		for _, g := range loads {
			for _, h := range g.Holds {
				if h.To <= h.From || h.From < 0 || h.Threads <= 0 && !(h.PerSec > 0) || h.Label == "" {
					t.Fatalf("group %q: hold %+v", g.Name, h)
				}
			}
		}
	})
}
