package har

import (
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/convert"
)

const twoPages = `{"log":{"pages":[{"id":"p1","title":"Home"},{"id":"p2","title":"Cart"}],"entries":[
{"pageref":"p1","startedDateTime":"2026-01-01T10:00:00.000Z","time":100,"request":{"method":"GET","url":"http://shop.test/","headers":[{"name":":authority","value":"shop.test"},{"name":"Accept","value":"text/html"}]},"response":{"status":200,"headers":[{"name":"Set-Cookie","value":"sid=abc123xyz; Path=/"}],"content":{"mimeType":"text/html","text":"<input name=\"csrf\" value=\"k9f8e7d6c5\">"}}},
{"pageref":"p1","startedDateTime":"2026-01-01T10:00:00.150Z","time":20,"request":{"method":"GET","url":"http://shop.test/app.css","headers":[]},"response":{"status":200,"headers":[],"content":{"mimeType":"text/css","text":"body{}"}}},
{"pageref":"p2","startedDateTime":"2026-01-01T10:00:03.120Z","time":50,"request":{"method":"POST","url":"http://shop.test/cart?csrf=k9f8e7d6c5","headers":[{"name":"Cookie","value":"sid=abc123xyz"},{"name":"Content-Type","value":"application/json"}],"postData":{"mimeType":"application/json","text":"{\"item\":\"lamp\"}"}},"response":{"status":302,"headers":[{"name":"Location","value":"/cart/77"}],"content":{"text":""}}},
{"pageref":"p2","startedDateTime":"2026-01-01T10:00:03.200Z","time":30,"request":{"method":"GET","url":"https://cdn.test/cart/77","headers":[]},"response":{"status":200,"headers":[],"content":{"mimeType":"application/json","text":"{}"}}}
]}}`

// TestPagesAssetsThinkCorrelation: pages become transactions, the asset
// is left out (kept with KeepAssets), the 2.8 s gap is a think time, the
// CSRF value in the next page's query is extracted from the HTML with a
// regex, the session cookie is left to the jar, and another origin keeps
// its absolute URL.
func TestPagesAssetsThinkCorrelation(t *testing.T) {
	t.Parallel()
	h, err := Parse(strings.NewReader(twoPages))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(h, Options{Source: "shop.har"})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	plan := string(b)
	for _, want := range []string{
		"name: Home", "name: Cart", "think: 2950ms",
		`url: "/cart?csrf=${value}"`,
		`regex: "name=\"csrf\" value=\"([^\"'&<>\\s]+)"`,
		"url: https://cdn.test/cart/77",
		"status: 302", "redirects: 0",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
	if strings.Contains(plan, "app.css") || strings.Contains(plan, "sid=abc123xyz") || strings.Contains(plan, ":authority") {
		t.Errorf("asset, jar cookie or pseudo-header in the plan:\n%s", plan)
	}
	if c := rep.Count(); c.Enabled != 4 || c.NotNeeded != 1 || c.Converted != 3 {
		t.Errorf("counts %+v", c)
	}
	if len(rep.Correlations) != 1 || rep.Correlations[0].UsedBy[0] != "entry 3" {
		t.Errorf("correlations %+v", rep.Correlations)
	}
	if _, err := convert.Verify(p, "plan.yaml", t.TempDir()); err != nil {
		t.Errorf("%v\n%s", err, plan)
	}
	if t.Failed() {
		t.Log(plan)
	}

	p2, rep2 := Convert(h, Options{Source: "shop.har", KeepAssets: true})
	b2, _ := p2.Bytes()
	if !strings.Contains(string(b2), "app.css") || rep2.Count().NotNeeded != 0 {
		t.Errorf("--keep-assets dropped the asset")
	}
}

// A gap of 105 days between two entries is capped at a minute and said;
// a recorded 304 is checked as 200 or 304 (its conditional headers are not
// sent), and said.
func TestLongGapAndNotModified(t *testing.T) {
	src := `{"log":{"entries":[
 {"startedDateTime":"2026-01-01T10:00:00Z","time":20,"request":{"method":"GET","url":"http://shop.test/a","headers":[{"name":"If-None-Match","value":"\"abc\""}]},"response":{"status":304,"content":{}}},
 {"startedDateTime":"2026-04-16T10:00:00Z","time":20,"request":{"method":"GET","url":"http://shop.test/b","headers":[]},"response":{"status":200,"content":{}}}]}}`
	h, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(h, Options{Source: "x.har"})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	plan := string(b)
	if !strings.Contains(plan, "think: 1m") || strings.Contains(plan, "2520h") {
		t.Errorf("the 105-day gap is not capped at 1m:\n%s", plan)
	}
	if !strings.Contains(plan, "status: [200, 304]") || strings.Contains(plan, "If-None-Match") {
		t.Errorf("the 304 is not normalised:\n%s", plan)
	}
	if !strings.Contains(strings.Join(rep.Behaviour, "\n"), "longest 2520h0m0s") || !strings.Contains(strings.Join(rep.Notes, "\n"), "1 recorded 304") {
		t.Errorf("report: %q %q", rep.Behaviour, rep.Notes)
	}
}

// staticPage: a page whose title and asset names a later request sends
// ("shopfront", "logo-main.png"), a CSRF token in its form, and a 304
// whose body (the browser's cached copy) holds an order id a later
// request sends.
const staticPage = `{"log":{"creator":{"name":"Firefox"},"entries":[
{"startedDateTime":"2026-01-01T10:00:00.000Z","time":10,"request":{"method":"GET","url":"http://shop.test/","headers":[]},"response":{"status":200,"headers":[],"content":{"mimeType":"text/html","text":"<title>shopfront</title><img src=\"./logo-main.png\"><input name=\"csrf\" value=\"k9f8e7d6c5\">"}}},
{"startedDateTime":"2026-01-01T10:00:00.100Z","time":10,"request":{"method":"GET","url":"http://shop.test/logo-main.png?site=shopfront","headers":[]},"response":{"status":200,"headers":[],"content":{"mimeType":"image/png","text":""}}},
{"startedDateTime":"2026-01-01T10:00:00.200Z","time":10,"request":{"method":"GET","url":"http://shop.test/orders","headers":[{"name":"If-None-Match","value":"W/\"1\""},{"name":"Sec-Fetch-Mode","value":"cors"},{"name":"Sec-CH-UA-Arch","value":"arm"}]},"response":{"status":304,"headers":[],"content":{"mimeType":"application/json","text":"{\"last\":\"ord-55123\"}"}}},
{"startedDateTime":"2026-01-01T10:00:00.300Z","time":10,"request":{"method":"POST","url":"http://shop.test/cart?csrf=k9f8e7d6c5&order=ord-55123","headers":[]},"response":{"status":200,"headers":[],"content":{"text":""}}}
]}}`

// TestCorrelateOnlyWhatAResponseMade: the CSRF token is extracted; the
// page's title and an asset's file name are sent as recorded (the page's
// own text, not a value the server made for the session); the order id
// found only in a 304's cached body is not extracted (the 304 sent no
// body) and the report says so; the conditional, fetch-metadata and
// client-hint headers are left out and named in the report.
func TestCorrelateOnlyWhatAResponseMade(t *testing.T) {
	t.Parallel()
	h, err := Parse(strings.NewReader(staticPage))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(h, Options{Source: "static.har", KeepAssets: true})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	plan := string(b)
	for _, want := range []string{
		"url: /logo-main.png?site=shopfront",
		`url: "/cart?csrf=${value}&order=ord-55123"`,
		"status: [200, 304]",
	} {
		if !strings.Contains(plan, want) {
			t.Errorf("plan lacks %q:\n%s", want, plan)
		}
	}
	if len(rep.Correlations) != 1 {
		t.Errorf("correlations %+v, want the CSRF token only", rep.Correlations)
	}
	for _, h := range []string{"If-None-Match", "Sec-Fetch-Mode", "Sec-CH-UA-Arch"} {
		if strings.Contains(plan, h) {
			t.Errorf("plan sends %s:\n%s", h, plan)
		}
	}
	if b := strings.Join(rep.Behaviour, "\n"); !strings.Contains(b, "3 in all: If-None-Match, Sec-CH-UA-Arch, Sec-Fetch-Mode") {
		t.Errorf("behaviour %q does not name the headers left out", b)
	}
	if n := strings.Join(rep.Notes, "\n"); !strings.Contains(n, "1 value sent by later requests appeared only in bodies the browser took from its cache") {
		t.Errorf("notes %q do not say the cached value was not correlated", n)
	}
}
