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
