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

// newmanOwn is where newman's own integration collections keep their files
// (paths relative to newman's repository, its --working-dir when its tests
// run them).
const newmanOwn = "testdata/postman/newman"

// echoHTTP sends the collections' postman-echo.com requests over http to a
// name that resolves nowhere: the recorder (the proxy of both tools)
// stands in for it, and no request could leave the machine.
var echoHTTP = []Replace{{regexp.MustCompile(`https://postman-echo\.com`), "http://postman-echo.test"}}

// TestPostmanNewmanBodies runs newman's own integration collections for
// request bodies under newman and, converted, under plateau: multipart
// bodies are compared part by part (names, filenames, content types,
// content, order) under each tool's own boundary, urlencoded bodies field
// by field as encoded on the wire.
func TestPostmanNewmanBodies(t *testing.T) {
	for _, tc := range []struct {
		name, collection, env string
		// parts: the multipart requests' part order each side must send.
		parts string
	}{
		// v2.1: a text part and a CSV file part (formdata), a raw JSON
		// body with its content-type header, a disabled body; the method
		// is a custom one (POSTMAN).
		{"custom-method formdata", "test/integration/custom-http-method/custom-http-method.postman_collection.json", "", "dataKey, dataFile"},
		// v2.0: a JSON file as the only part.
		{"file part", "test/integration/tc4/tc4.postman_collection.json", "", "file"},
		// v2.0: urlencoded, a key and a value from the environment file,
		// a backslash kept, the query from the environment too.
		// Before: the plan sent the query value as hello%5Ckworld.
		{"urlencoded", "test/integration/esc-formdata/esc-formdata.postman_collection.json", "test/integration/esc-formdata/esc-formdata.postman_environment.json", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := RunPostmanCase(t, PostmanCase{
				Dir: newmanOwn, Collection: tc.collection, Environment: tc.env, WorkingDir: ".",
				Rewrite: echoHTTP,
				Compare: Options{Expected: runtimeHeaders, ThinkTolerance: noThink},
			})
			if b := strings.Join(o.Report.Behaviour, "\n"); strings.Contains(b, "URL query") || strings.Contains(b, "%20") {
				t.Errorf("the report states an encoding difference the wire does not show: %q", b)
			}
			if len(o.Newman) == 0 || len(o.Newman) != len(o.Plateau) {
				t.Fatalf("newman sent %d requests, plateau %d", len(o.Newman), len(o.Plateau))
			}
			for side, rs := range map[string][]Request{"newman": o.Newman, "plateau": o.Plateau} {
				var got []string
				for _, q := range rs {
					if b := multipartBoundary(q.Header.Get("Content-Type")); b != "" {
						var order []string
						parts(q.Body, b, func(field, v string) {
							if field == "part:order" {
								order = append(order, v)
							}
							if field == "part:malformed" {
								t.Errorf("%s: %s %s: malformed multipart body: %s", side, q.Method, q.Path, v)
							}
						})
						got = append(got, order...)
					}
				}
				if strings.Join(got, "; ") != tc.parts {
					t.Errorf("%s sent multipart bodies with parts %q, want %q", side, got, tc.parts)
				}
			}
		})
	}
}

// docs answers like a document service: a login returns a token.
var docs = []Rule{
	{Method: "POST", Path: regexp.MustCompile(`/auth/login$`), Resp: Response{Body: `{"token":"tok-{{n}}"}`}},
}

// TestPostmanUploads runs a collection written for the harness
// (testdata/postman/uploads: the body forms a document service's API
// sends, as the Postman app saves them) with its environment file: a
// urlencoded login (a secret from the environment, a value holding ?, &,
// a space and +, a disabled field) whose script stores the token, then
// form-data bodies — text parts from a variable and with quotes, a .csv
// file part typed by its extension, a .json one with its own content type,
// one part with two files, disabled parts — compared part by part with
// newman's; a raw file body under basic auth, and an API key in a header
// and in the query, from a secret of the environment file. One upload puts
// its file before its text field: the plan keeps that order.
func TestPostmanUploads(t *testing.T) {
	o := RunPostmanCase(t, PostmanCase{
		Dir: "testdata/postman/uploads", Collection: "Uploads.postman_collection.json",
		Environment: "Uploads.postman_environment.json",
		Rules:       docs,
		Vars:        map[string]string{"password": "s3cret pw+1"},
		// The environment file's secret API key is never written into
		// the plan: plateau reads it from APIKEY (the report says so).
		Env: map[string]string{"APIKEY": "k-7f3a9c"},
		Compare: Options{
			Normalize:      []Replace{{regexp.MustCompile(`tok-\d+`), "tok-{n}"}},
			Expected:       runtimeHeaders,
			ThinkTolerance: noThink,
		},
	})
	if len(o.Newman) != 7 || len(o.Plateau) != 7 {
		t.Fatalf("newman sent %d requests, plateau %d; want the collection's 7", len(o.Newman), len(o.Plateau))
	}
	want := map[string]string{
		"/api/documents":             "title, tags, file, meta",
		"/api/documents/scans":       "folder, scan, scan#2",
		"/api/documents/attachments": "attachment, comment", // the file first, as the collection puts it
	}
	for side, rs := range map[string][]Request{"newman": o.Newman, "plateau": o.Plateau} {
		for _, q := range rs {
			if q.Path == "/api/auth/login" {
				// A space as %20, as Postman sends it (before: the plan sent +).
				if q.Header.Get("Authorization") != "" || !strings.Contains(q.Body, "password=s3cret%20pw%2B1") {
					t.Errorf("%s: login %q", side, q.Body)
				}
				continue
			}
			switch q.Path {
			case "/api/documents/ledger.csv":
				// Basic auth from the environment's user and secret
				// password, the raw file as the body.
				if a := q.Header.Get("Authorization"); a != "Basic Y2xlcmtAZG9jcy50ZXN0OnMzY3JldCBwdysx" || q.Body != "id,amount,currency\n1,12.50,EUR\n2,7.00,DKK\n" {
					t.Errorf("%s: PUT %s: Authorization %q, body %q", side, q.Path, a, q.Body)
				}
				continue
			case "/api/documents":
				if q.Method == "GET" {
					if q.Header.Get("X-Api-Key") != "k-7f3a9c" || q.Query != "q=ledger&limit=10" {
						t.Errorf("%s: GET %s?%s: X-Api-Key %q", side, q.Path, q.Query, q.Header.Get("X-Api-Key"))
					}
					continue
				}
			case "/api/documents/export":
				if q.Query != "format=csv&api_key=k-7f3a9c" {
					t.Errorf("%s: GET %s?%s, want the API key last in the query", side, q.Path, q.Query)
				}
				continue
			}
			if a := q.Header.Get("Authorization"); !regexp.MustCompile(`^Bearer tok-\d+$`).MatchString(a) {
				t.Errorf("%s: %s %s sent Authorization %q, want the login's token", side, q.Method, q.Path, a)
			}
			var order string
			parts(q.Body, multipartBoundary(q.Header.Get("Content-Type")), func(field, v string) {
				if field == "part:order" {
					order = v
				}
			})
			w := want[q.Path]
			if order != w {
				t.Errorf("%s: %s sent parts %q, want %q", side, q.Path, order, w)
			}
		}
	}
	if b := strings.Join(o.Report.Behaviour, "\n"); strings.Contains(b, "%20") {
		t.Errorf("the report states a form encoding difference the wire does not show: %q", b)
	}
	if !strings.Contains(o.Plan, "order: [attachment, comment]") {
		t.Errorf("the plan does not keep the collection's part order:\n%s", o.Plan)
	}
}

// TestPostmanEncoding runs a collection written for the harness
// (testdata/postman/encoding), one encoding case a request, with its
// environment file, and requires each request target and urlencoded body
// to be newman's byte for byte (sameBytes): a form with spaces, + & = %,
// a pre-encoded %20, ! ' ( ) *, unicode, a variable key and value, a
// disabled, an empty and a valueless field; repeated and numeric keys
// (newman groups a repeated key's values at its first place and puts
// array-index keys first); a query variable holding \ + & = % and a space;
// literal & # = in a query key or value, a parameter without value, an
// empty one, disabled and repeated ones, quotes, < > ` { } | ^ [ ]; a query
// whose parameters are all disabled; a variable holding # (the rest of
// the URL is dropped); path variables (:userId from a variable, :file.json,
// one without a value, one whose value is a number); a path with unicode,
// %20 and %2F, | ^ [ ] and a variable holding \; a path variable holding ?;
// the host from a variable in upper case; a URL written as a string.
func TestPostmanEncoding(t *testing.T) {
	o := RunPostmanCase(t, PostmanCase{
		Dir: "testdata/postman/encoding", Collection: "Encoding.postman_collection.json",
		Environment: "Encoding.postman_environment.json",
		Compare:     Options{Expected: runtimeHeaders, ThinkTolerance: noThink},
	})
	if len(o.Newman) != 11 || len(o.Plateau) != 11 {
		t.Fatalf("newman sent %d requests, plateau %d; want the collection's 11", len(o.Newman), len(o.Plateau))
	}
	for i, q := range o.Newman {
		t.Logf("newman  %2d %s %s %s", i+1, q.Method, q.URI, q.Body)
		t.Logf("plateau %2d %s %s %s", i+1, o.Plateau[i].Method, o.Plateau[i].URI, o.Plateau[i].Body)
	}
	if b := strings.Join(o.Report.Behaviour, "\n"); strings.Contains(b, "%20") || strings.Contains(b, "URL query") {
		t.Errorf("the report states an encoding difference the wire does not show: %q", b)
	}
	if !strings.Contains(o.Plan, "encode: postman") {
		t.Errorf("the plan does not encode its URLs as Postman does:\n%s", o.Plan)
	}
}
