package wiretest

import (
	"regexp"
	"testing"
	"time"
)

// shop answers like the e2e plan's system: a login returning a token and
// an item list naming the user.
var shop = []Rule{
	{Method: "POST", Path: regexp.MustCompile(`^/login$`), Resp: Response{Body: `{"token":"tok-{{user}}"}`}},
	{Path: regexp.MustCompile(`^/items$`), Resp: Response{Body: `{"items":[{"id":"item-{{q:user}}-1"},{"id":"item-{{q:user}}-2"}]}`}},
}

// TestHarnessE2E runs the converter's end-to-end plan (log in once, CSV
// row per iteration, loop, if, header from an extracted token) through the
// harness: both tools' traffic must match with nothing to explain.
func TestHarnessE2E(t *testing.T) {
	o := Run(t, Case{
		Dir: "../jmeter/testdata/plans", JMX: "e2e.jmx",
		Rules:  shop,
		Bounds: Bounds{Users: 2, Iterations: 2, Duration: 20 * time.Second},
		Props:  map[string]string{"port": "18080"},
	})
	if len(o.JMeter) < 8 {
		t.Fatalf("JMeter sent %d requests", len(o.JMeter))
	}
}
