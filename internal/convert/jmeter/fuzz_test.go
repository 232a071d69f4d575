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
