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
func TestRealFOLIOCheckInCheckOut(t *testing.T) {
	Run(t, Case{
		Dir: "testdata/folio-cico", JMX: "circulation_checkInCheckOut_orchid.jmx",
		Rules:   folio,
		Bounds:  Bounds{Users: 2, Duration: 20 * time.Second},
		Props:   map[string]string{"HOSTNAME": "folio.test"},
		Rewrite: []Replace{{regexp.MustCompile(`(<stringProp name="HTTPSampler.protocol">)https(</stringProp>)`), "${1}http${2}"}},
	})
}
