package wiretest

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// The three browsers' exports of mitmproxy.org that the mitmproxy project
// keeps as its HAR importer's test data (provenance in testdata/README.md),
// each converted with its assets and replayed once through a recorder that
// answers each endpoint as the site did; plateau's requests are compared
// with the HAR's own entries.

// toHTTP sends a recording's https URLs (and the Referer and Origin that
// name them) over http: the recorder does not intercept TLS.
var toHTTP = []Replace{{regexp.MustCompile(`https://`), "http://"}}

// browserOwn are the differences the converter makes on purpose and says
// in the report: the browser's own headers (fetch metadata, client hints,
// Upgrade-Insecure-Requests, cache and conditional headers) are not sent.
var browserOwn = Expect{Kind: "header", Subject: regexp.MustCompile(` (Sec-Fetch-[A-Za-z]+|Sec-Ch-[A-Za-z0-9-]+|Upgrade-Insecure-Requests|Cache-Control|Pragma|If-None-Match|If-Modified-Since|Priority)$`),
	Why: "the browser's own headers are not sent (said in the report)"}

// browserWork: every gap of the Firefox and Safari recordings is under
// 200 ms, the browser's own work, which the converter does not replay as a
// think time; plateau's gaps are its own speed (slower on a loaded
// machine): not compared.
const browserWork = 1000

// thinkCap is the harness's cap on think times: a browser recording's
// pauses of months replay in seconds (the converter's default cap is a
// minute; the rule is the same).
const thinkCap = 2 * time.Second

// TestHARChrome: Chrome's export ("WebInspector"): three entries recorded
// months apart — a 304 for the home page, a request to another site that
// got no answer (status 0), an image — so two pauses of 2532 h and 288 h,
// capped and said.
func TestHARChrome(t *testing.T) {
	o := RunHARRewritten(t, "testdata/har/mitmproxy-chrome.har", toHTTP, thinkCap, Options{Expected: []Expect{browserOwn,
		// The HAR's gaps are months (not compared, over a minute); the
		// replay's are the cap.
		{Kind: "think", Why: "pauses of months capped at 2 s (said in the report)"}}})
	checkBrowserReplay(t, o, "WebInspector", 3)
	if b := strings.Join(o.Report.Behaviour, "\n"); !strings.Contains(b, "2 pauses between entries longer than 2s (the longest 2532h") {
		t.Errorf("the report does not say the pauses were capped: %q", b)
	}
}

// TestHARFirefox: Firefox's export: the home page, two GitHub buttons and
// a JSON file answered 304 to the browser's If-None-Match /
// If-Modified-Since (their bodies are the browser's cached copies), ten
// other assets. Nothing is correlated: the asset names and the page's
// title sent later are the page's own text, and the 304 bodies came from
// the cache, not from a response.
func TestHARFirefox(t *testing.T) {
	o := RunHARRewritten(t, "testdata/har/mitmproxy-firefox.har", toHTTP, thinkCap, Options{Expected: []Expect{browserOwn}, ThinkTolerance: browserWork})
	checkBrowserReplay(t, o, "Firefox", 14)
	if n := strings.Count(o.Plan, "status: [200, 304]"); n != 4 {
		t.Errorf("%d requests checked as 200 or 304, want the 4 recorded 304s", n)
	}
}

// TestHARSafari: Safari's export ("WebKit Web Inspector"): 19 entries,
// each GitHub button twice; Safari records no fetch metadata or cache
// headers, so every header it recorded is sent.
func TestHARSafari(t *testing.T) {
	o := RunHARRewritten(t, "testdata/har/mitmproxy-safari.har", toHTTP, thinkCap, Options{ThinkTolerance: browserWork})
	checkBrowserReplay(t, o, "WebKit Web Inspector", 19)
}

// checkBrowserReplay: every entry is replayed (in order: Compare checks the
// transitions) and answered with its recorded status; nothing is
// correlated from page text (these pages have no session values); no
// conditional header is sent; the report names the browser's headers it
// left out.
func checkBrowserReplay(t *testing.T, o *HAROutcome, creator string, n int) {
	t.Helper()
	if len(o.HAR) != n || len(o.Plateau) != n {
		t.Errorf("HAR %d entries, plateau %d requests; want %d and %d", len(o.HAR), len(o.Plateau), n, n)
	}
	if o.Errors != 0 {
		t.Errorf("%d of the replay's requests failed, want none", o.Errors)
	}
	if len(o.Report.Correlations) != 0 || strings.Contains(o.Plan, "extract:") {
		t.Errorf("values correlated from static page text: %+v", o.Report.Correlations)
	}
	for _, q := range o.Plateau {
		if q.Header.Get("If-None-Match") != "" || q.Header.Get("If-Modified-Since") != "" {
			t.Errorf("%s %s sent a conditional header", q.Method, q.Path)
		}
	}
	// Headers left out are said; a HAR with none (Safari's) says nothing.
	dropped := false
	for _, q := range o.HAR {
		for k := range q.Header {
			dropped = dropped || browserOwn.Subject.MatchString(" "+k)
		}
	}
	if said := strings.Contains(strings.Join(o.Report.Behaviour, "\n"), "browser's own request headers are not sent"); said != dropped {
		t.Errorf("browser headers recorded: %v; the report says they are left out: %v (%q)", dropped, said, o.Report.Behaviour)
	}
	if o.Creator != creator {
		t.Errorf("the HAR's creator is %q, want %q", o.Creator, creator)
	}
	t.Logf("%s: %d of %d entries replayed", creator, len(o.Plateau), len(o.HAR))
}
