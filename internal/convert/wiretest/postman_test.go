package wiretest

import (
	"regexp"
	"strings"
	"testing"
)

// conduit answers like a RealWorld ("Conduit") API server: a login and a
// registration return the user with its token, an article its slug, a
// comment its number.
var conduit = []Rule{
	{Method: "POST", Path: regexp.MustCompile(`/api/users(/login)?$`), Resp: Response{
		Body: `{"user":{"email":"u@mail.com","token":"jwt-{{n}}","username":"u","bio":null,"image":null}}`}},
	{Method: "POST", Path: regexp.MustCompile(`/api/articles$`), Resp: Response{
		Body: `{"article":{"slug":"how-to-train-your-dragon-{{n}}","title":"How to train your dragon","tagList":["dragons"]}}`}},
	{Method: "POST", Path: regexp.MustCompile(`/api/articles/[^/]+/comments$`), Resp: Response{
		Body: `{"comment":{"id":{{n}},"body":"Thank you so much!"}}`}},
}

// conduitNorm: the recorder numbers its answers (tokens, slugs, comment
// ids): the same values in kind on both sides.
var conduitNorm = []Replace{
	{regexp.MustCompile(`jwt-\d+`), "jwt-{n}"},
	{regexp.MustCompile(`how-to-train-your-dragon-\d+`), "how-to-train-your-dragon-{n}"},
	{regexp.MustCompile(`/comments/\d+$`), "/comments/{n}"},
}

// noThink: the collections wait nowhere (newman runs without
// --delay-request), so the gaps between requests are each tool's own
// overhead — newman's 30–75 ms, more on a loaded machine — not a property
// of the plan: not compared.
const noThink = 1000

// runtimeHeaders: Postman's runtime adds Accept: */* and Cache-Control:
// no-cache to every request; the converted plan does not (the conversion
// report says so).
var runtimeHeaders = []Expect{
	{Kind: "header", Subject: regexp.MustCompile(` (Accept|Cache-Control)$`), Why: "Postman's runtime adds Accept: */* and Cache-Control: no-cache (said in the report)"},
}

// checkTokens asserts that every request that sends an Authorization
// header sends a token after "Token " on both sides — the login's test
// script stored it — and that the two sides sent as many.
func checkTokens(t *testing.T, o *PostmanOutcome, want int) {
	t.Helper()
	for side, rs := range map[string][]Request{"newman": o.Newman, "plateau": o.Plateau} {
		n := 0
		for _, q := range rs {
			a := q.Header.Get("Authorization")
			if a == "" {
				continue
			}
			n++
			if !regexp.MustCompile(`^Token jwt-\d+$`).MatchString(a) {
				t.Errorf("%s: %s %s sent Authorization %q, want the login's token", side, q.Method, q.Path, a)
			}
		}
		if n != want {
			t.Errorf("%s sent %d authenticated requests, want %d", side, n, want)
		}
	}
	if !strings.Contains(strings.Join(o.Report.Behaviour, "\n"), "Cache-Control") {
		t.Errorf("the report does not say the runtime's headers are not sent: %q", o.Report.Behaviour)
	}
}

// TestPostmanConduitV20 runs the RealWorld project's Postman collection as
// it was in 2017 (schema v2.0.0) with its own environment file (apiUrl,
// an empty token): the login's legacy test script
// (postman.setEnvironmentVariable('token', user.token) after
// JSON.parse(responseBody)) stores the token every later request sends as
// "Authorization: Token …".
func TestPostmanConduitV20(t *testing.T) {
	o := RunPostmanCase(t, PostmanCase{
		Dir: "testdata/postman/conduit-v2.0", Collection: "Conduit.postman_collection.json",
		Environment: "Conduit.postman_environment.json",
		// The file names the project's public server over https; the
		// recorder stands in for it over http.
		Rewrite: []Replace{{regexp.MustCompile(`https://conduit\.productionready\.io`), "http://conduit.test"}},
		Rules:   conduit,
		// The collection reads EMAIL and PASSWORD, which its environment
		// file does not define: given on the command line to both.
		Vars:    map[string]string{"EMAIL": "jake@jake.jake", "PASSWORD": "jakejake"},
		Compare: Options{Normalize: conduitNorm, Expected: runtimeHeaders, ThinkTolerance: noThink},
	})
	if b := strings.Join(o.Report.Behaviour, "\n"); !strings.Contains(b, "EMAIL, PASSWORD") {
		t.Errorf("the report does not name the variables no file defines: %q", b)
	}
	if len(o.Newman) != 31 || len(o.Plateau) != 31 {
		t.Errorf("newman sent %d requests, plateau %d; want the collection's 31", len(o.Newman), len(o.Plateau))
	}
	checkTokens(t, o, 22)
}

// TestPostmanConduitV21 runs the RealWorld project's current Postman
// collection (schema v2.1.0) with an environment (APIURL) and a globals
// file (USERNAME, EMAIL and a secret PASSWORD), written from the
// variables the project's run-api-tests.sh passes to newman: the login's
// pm.globals.set('token', user.token), the new article's slug and the new
// comment's id reach the later requests' paths and headers.
func TestPostmanConduitV21(t *testing.T) {
	o := RunPostmanCase(t, PostmanCase{
		Dir: "testdata/postman/conduit-v2.1", Collection: "Conduit.postman_collection.json",
		Environment: "Conduit.postman_environment.json", Globals: "Conduit.postman_globals.json",
		Rules:   conduit,
		Env:     map[string]string{"PASSWORD": "password"},
		Compare: Options{Normalize: conduitNorm, Expected: runtimeHeaders, ThinkTolerance: noThink},
	})
	if len(o.Newman) != 32 || len(o.Plateau) != 32 {
		t.Errorf("newman sent %d requests, plateau %d; want the collection's 32", len(o.Newman), len(o.Plateau))
	}
	checkTokens(t, o, 22)
	for side, rs := range map[string][]Request{"newman": o.Newman, "plateau": o.Plateau} {
		for _, q := range rs {
			if strings.Contains(q.Path, "{{") || strings.HasSuffix(q.Path, "/articles/") || strings.Contains(q.Path, "/articles//") {
				t.Errorf("%s: %s %s: a variable the scripts set is missing", side, q.Method, q.Path)
			}
		}
	}
}
