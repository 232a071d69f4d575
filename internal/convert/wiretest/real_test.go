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
		Bounds: Bounds{Users: 3, RampUp: time.Second, Iterations: 4, Duration: 2 * time.Minute},
		Compare: Options{
			// The Random Variable draws 1 or 2.
			Normalize: []Replace{{regexp.MustCompile(`/ancestors/[12]$`), "/ancestors/{1|2}"}},
		},
	})
}

// folio answers like FOLIO's Okapi for the check-in/check-out plan: a
// login that returns a token header and the user, items, loans, users and
// service points with the ids the plan extracts.
var folio = []Rule{
	{Method: "POST", Path: regexp.MustCompile(`^/authn/login$|^/bl-users/login$`), Resp: Response{Status: 201,
		Header: map[string]string{"x-okapi-token": "tok-{{user}}", "Content-Type": "application/json"}, Body: `{"user":{"id":"user-{{user}}"}}`}},
	{Path: regexp.MustCompile(`^/inventory/items$`), Resp: Response{Body: `{"items":[{"id":"item-1"}],"totalRecords":1}`}},
	{Method: "POST", Path: regexp.MustCompile(`^/circulation/check-in-by-barcode$`), Resp: Response{Body: `{"item":{"id":"item-1"},"loan":{"id":"loan-1","lostItemPolicyId":"lip-1","userId":"user-1"}}`}},
	// Okapi's pretty JSON: the plan checks for "id" : with spaces.
	{Method: "POST", Path: regexp.MustCompile(`^/circulation/check-out-by-barcode$`), Resp: Response{Status: 201, Body: "{\n  \"id\" : \"loan-2\",\n  \"userId\" : \"user-1\"\n}"}},
	{Path: regexp.MustCompile(`^/users$`), Resp: Response{Body: `{"users":[{"id":"user-1","username":"u1","patronGroup":"pg-1"}],"totalRecords":1}`}},
	{Path: regexp.MustCompile(`^/service-points$`), Resp: Response{Body: `{"servicepoints":[{"id":"sp-1"}],"totalRecords":1}`}},
	{Path: regexp.MustCompile(`^/groups$`), Resp: Response{Body: `{"usergroups":[{"group":"staff","id":"pg-1"}],"totalRecords":1}`}},
	{Path: regexp.MustCompile(`^/configurations/entries$`), Resp: Response{Body: `{"configs":[],"totalRecords":0}`}},
	{Path: regexp.MustCompile(`^/staff-slips-storage/staff-slips$`), Resp: Response{Body: `{"staffSlips":[{"id":"slip-1"}],"totalRecords":1}`}},
	{Path: regexp.MustCompile(`^/automated-patron-blocks/`), Resp: Response{Body: `{"automatedPatronBlocks":[]}`}},
	{Path: regexp.MustCompile(`^/(accounts|circulation/requests|circulation/loans|manualblocks|proxiesfor|lost-item-fees-policies|note-links/.*)$`), Resp: Response{Body: `{"totalRecords":0}`}},
}

// TestRealFOLIOCheckInCheckOut is FOLIO's check-in/check-out plan
// behind reference 001 (Orchid release): log in once per user, then an
// endless loop that picks check-in or check-out (a Groovy script draws
// 43/57) and runs that page's requests with think times, barcodes from
// headerless CSV files, X-Okapi-Tenant from a CSV column in a plan-level
// Header Manager.
//
// Both tools run 3 passes of the loop per user for 8 users (Bounds.
// Iterations: the endless loop runs 3 times under JMeter, the converted
// plan 3 iterations), so the comparison is by counts: a JVM starved of CPU
// on a loaded machine sends fewer requests in a fixed time, never fewer
// passes. A pass is the plan's think times (each timer's "1000 +
// ${thinktime_offset}" is 0 ms to JMeter, which reads no number there;
// the random ranges, 2–4 s, are literals no property shortens): about
// 10 s a pass, so the run's length is the passes one user makes, and the
// 24 passes are spread over 8 users rather than 6 passes over 4 (104 s
// before, JMeter and plateau one after the other). 24 passes at 43/57
// leave a branch untaken with probability 0.57^24 = 1.4e-6: both must run
// on both sides.
func TestRealFOLIOCheckInCheckOut(t *testing.T) {
	const users, passes = 8, 3
	o := Run(t, Case{
		Dir: "testdata/folio-cico", JMX: "circulation_checkInCheckOut_orchid.jmx",
		Rules: folio,
		// Duration only caps a run that hangs.
		Bounds:  Bounds{Users: users, Iterations: passes, Duration: 3 * time.Minute},
		Props:   map[string]string{"HOSTNAME": "folio.test"},
		Rewrite: httpsToHTTP,
		// 43/57 between check-in and check-out, a few iterations a user.
		Compare: Options{RandomBranches: true},
	})
	for side, rs := range map[string][]Request{"JMeter": o.JMeter, "plateau": o.Plateau} {
		n := map[string]int{}
		for _, q := range rs {
			n[q.Method+" "+q.Path]++
		}
		// Each user logs in once; each pass is a check-in or a check-out,
		// and both branches run.
		logins := n["POST /authn/login"] + n["POST /bl-users/login"]
		in, out := n["POST /circulation/check-in-by-barcode"], n["POST /circulation/check-out-by-barcode"]
		if logins != users || in+out != users*passes || in == 0 || out == 0 {
			t.Errorf("%s: %d logins (want %d), %d check-ins + %d check-outs (want %d passes, both branches): %v", side, logins, users, in, out, users*passes, n)
		}
	}
}

// httpsToHTTP runs a plan over http: the recorder does not intercept TLS.
var httpsToHTTP = []Replace{{regexp.MustCompile(`(<stringProp name="HTTPSampler.protocol">)https(</stringProp>)`), "${1}http${2}"}}

// TestRealFOLIORTAC: FOLIO's RTAC plans (edge and module APIs): a login,
// then holdings lookups for instance ids.
func TestRealFOLIORTAC(t *testing.T) {
	for _, jmx := range []string{"edge_rtac_listInstanceIds.jmx", "mod_rtac_listInstanceIds.jmx"} {
		t.Run(jmx, func(t *testing.T) {
			Run(t, Case{
				Dir: "testdata/folio-rtac", JMX: jmx,
				Rules:   folio,
				Bounds:  Bounds{Users: 2, Iterations: 4, Duration: 2 * time.Minute},
				Props:   map[string]string{"HOST": "folio.test"},
				Rewrite: httpsToHTTP,
			})
		})
	}
}

// TestRealFOLIOTemplate: FOLIO's script template (the skeleton its team
// starts every workflow from): a setUp login whose token a script copies
// into a property, then requests with ids from a data file.
func TestRealFOLIOTemplate(t *testing.T) {
	Run(t, Case{
		Dir: "testdata/folio-template", JMX: "appName_workflowName.jmx",
		Rules:   folio,
		Bounds:  Bounds{Users: 2, Iterations: 4, Duration: 2 * time.Minute},
		Props:   map[string]string{"HOSTNAME": "folio.test"},
		Rewrite: httpsToHTTP,
	})
}

// TestRealServiceCombHouserush: ServiceComb's house-sale rush plan: users
// from a CSV log in (a While loop until a token comes), look up the sale,
// pick a house with a script and order it.
//
// Bounded by iterations (3 per user) and compared by counts: the plan
// waits only when a login fails (500 ms in its retry loop), so the gaps
// are each tool's own speed: on a loaded machine JMeter's first login and
// its next request were 6.9 s apart, and in an 8 s bound it sent 4
// requests to plateau's 7,558. Gaps are not compared.
func TestRealServiceCombHouserush(t *testing.T) {
	const users, iterations = 2, 3
	o := Run(t, Case{
		Dir: "testdata/servicecomb-houserush", JMX: "houserush.jmx",
		Rules: []Rule{
			{Path: regexp.MustCompile(`signin`), Resp: Response{
				Header: map[string]string{"Authorization": "tok-{{user}}"}, Body: `{"token":"tok-{{user}}","id":7}`}},
		},
		Bounds:  Bounds{Users: users, Iterations: iterations, Duration: 2 * time.Minute},
		Compare: Options{ThinkTolerance: 1000},
		// The plan's data file is an absolute path on its author's
		// machine; the harness points it at the file beside the plan
		// (generated with the project's generateUser.sh 100 199).
		Rewrite: []Replace{{regexp.MustCompile(`/usr/jmeter/users\.csv`), "users.csv"}},
	})
	for side, rs := range map[string][]Request{"JMeter": o.JMeter, "plateau": o.Plateau} {
		n := map[string]int{}
		for _, q := range rs {
			n[q.Method+" "+q.Path]++
		}
		if n["PUT /login/users/signin"] != users*iterations || n["GET /house-order/sales"] != users*iterations {
			t.Errorf("%s: %v; want %d logins and %d sales looked up", side, n, users*iterations, users*iterations)
		}
	}
}

// TestRealFOLIOTemplateLoginFails: the template's setUp login answers
// 500. JMeter's setUp group carries on (on sampler error: continue) and the
// test runs; the converted plan's run-level setup must not stop the run
// (Run fails the test when the plateau run ends in an error).
func TestRealFOLIOTemplateLoginFails(t *testing.T) {
	Run(t, Case{
		Dir: "testdata/folio-template", JMX: "appName_workflowName.jmx",
		Rules:   append([]Rule{{Method: "POST", Path: regexp.MustCompile(`^/authn/login$`), Resp: Response{Status: 500, Body: "down"}}}, folio...),
		Bounds:  Bounds{Users: 2, Iterations: 4, Duration: 2 * time.Minute},
		Props:   map[string]string{"HOSTNAME": "folio.test"},
		Rewrite: httpsToHTTP,
	})
}
