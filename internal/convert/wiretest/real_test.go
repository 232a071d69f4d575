package wiretest

import (
	"regexp"
	"testing"
	"time"
)

// The real public plans of testdata (provenance in testdata/README.md),
// each with its own data files, through the harness.

// TestRealServiceCombWorkshop is the ServiceComb Company workshop plan
// behind reference 003: a login once per user (Once Only) whose
// Authorization response header a script copies into a property that a
// plan-level Header Manager sends, then three queries with a Random
// Variable, to host and port from a headerless CSV.
func TestRealServiceCombWorkshop(t *testing.T) {
	Run(t, Case{
		Dir: "testdata/servicecomb-workshop", JMX: "workshop.jmx",
		Rules: []Rule{
			{Method: "POST", Path: regexp.MustCompile(`/rest/login$`), Resp: Response{
				Header: map[string]string{"Authorization": "Bearer tok-{{user}}", "Content-Type": "text/plain"}, Body: "Welcome, jordan"}},
			{Path: regexp.MustCompile(`fibonacci`), Resp: Response{Body: "1"}},
		},
		Bounds: Bounds{Users: 3, RampUp: time.Second, Duration: 6 * time.Second},
		Compare: Options{
			// The Random Variable draws 1 or 2.
			Normalize: []Replace{{regexp.MustCompile(`/ancestors/[12]$`), "/ancestors/{1|2}"}},
		},
	})
}
