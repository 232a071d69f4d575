package postman

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/converttest"
)

// TestCollectionRuns converts testdata/shop.postman_collection.json and runs
// the plan against a loopback server: the server sees the requests the
// Postman runner would send, in order, with the token the login's test
// script stored sent back as the collection's bearer auth, and the
// collection's password read from the environment, never from the plan.
func TestCollectionRuns(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "shop.postman_collection.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	col, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "shop.postman_collection.json"})
	dir := t.TempDir()
	pf, text := converttest.Write(t, dir, p, rep)
	if strings.Contains(text, "s3cr3t-from-collection") {
		t.Errorf("the plan holds the collection's password:\n%s", text)
	}
	c := rep.Count()
	if c.Enabled != 13 || c.Disabled != 1 || c.NotConverted != 1 || c.Partial != 1 {
		t.Errorf("counts %+v; want 13 enabled (1 script not converted, 1 in part), 1 disabled", c)
	}

	var mu sync.Mutex
	var log []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		log = append(log, fmt.Sprintf("%s %s %s auth=%s tenant=%s", r.Method, r.URL.RequestURI(), b, r.Header.Get("Authorization"), r.Header.Get("X-Tenant")))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/login" {
			fmt.Fprint(w, `{"token":"tok-42"}`)
			return
		}
		fmt.Fprint(w, `{}`)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	env := map[string]string{"BASEURL": "http://" + ln.Addr().String(), "APIPASSWORD": "pw-from-env"}
	d, _ := converttest.Run(t, pf, env, 30*time.Second)
	if d.Total.Errors != 0 {
		t.Errorf("%d errors", d.Total.Errors)
	}
	mu.Lock()
	got := strings.Join(log, "\n")
	mu.Unlock()
	// The search body holds a fresh UUID: compare its shape.
	want := []string{
		"POST /login user=perf&password=pw-from-env auth= tenant=",
		"GET /items?page=1&size=20  auth=Bearer tok-42 tenant=acme",
		`POST /search {"q": "lamp", "id": "`,
		"POST /pay amount=10 auth=Bearer tok-42 tenant=",
	}
	lines := strings.Split(got, "\n")
	if len(lines) != len(want) {
		t.Fatalf("server saw %d requests, want %d:\n%s\nplan:\n%s", len(lines), len(want), got, text)
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("request %d: %q, want prefix %q", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[2], "auth=Bearer tok-42") || strings.Contains(lines[2], "{{$guid}}") {
		t.Errorf("search request %q", lines[2])
	}
}

// TestSecretsNeverWritten converts a collection whose bearer token and
// API key are literals: both are read from the environment instead.
func TestSecretsNeverWritten(t *testing.T) {
	src := `{"info":{"name":"x","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"auth":{"type":"bearer","bearer":[{"key":"token","value":"literal-bearer-0xdeadbeef"}]},
"item":[{"name":"a","request":{"method":"GET","url":"https://api.example.test/a",
"auth":{"type":"apikey","apikey":[{"key":"key","value":"X-Key"},{"key":"value","value":"literal-key-77aa"},{"key":"in","value":"header"}]}}},
{"name":"b","request":{"method":"GET","url":"https://api.example.test/b"}}]}`
	col, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "x.json"})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"literal-bearer-0xdeadbeef", "literal-key-77aa"} {
		if strings.Contains(string(b), s) {
			t.Errorf("plan holds %q:\n%s", s, b)
		}
	}
	if len(rep.Env) != 2 {
		t.Errorf("env vars %+v, want the bearer token and the API key", rep.Env)
	}
	if _, err := convert.Verify(p, "plan.yaml", t.TempDir()); err != nil {
		t.Error(err)
	}
}

// TestScriptIdioms: the test-script forms that set a variable from the
// JSON response, each read into the JSONPath the plan extracts, and the
// status tests; a setter from anything else is not taken for one.
func TestScriptIdioms(t *testing.T) {
	for _, c := range []struct {
		script string
		want   string // "name=path …" then "status …"
	}{
		{`pm.environment.set("token", pm.response.json().token);`, "token=$.token"},
		{`var jsonData = pm.response.json(); pm.collectionVariables.set('id', jsonData.data[0].id);`, "id=$.data[0].id"},
		{"var responseJSON = JSON.parse(responseBody);\nvar user = responseJSON.user || {};\nif (tests['ok']) {\n  postman.setEnvironmentVariable('token', user.token);\n}", "token=$.user.token"},
		{"var r = JSON.parse(responseBody);\npostman.setGlobalVariable(\"sid\", r['session id']);", "sid=$['session id']"},
		{`pm.globals.set("a", JSON.parse(responseBody).access_token)`, "a=$.access_token"},
		{"const body = pm.response.json();\narticle = body.articles[0];\npm.variables.set('slug', article.slug);", "slug=$.articles[0].slug"},
		{`tests["Status code is 200"] = responseCode.code === 200;`, "status 200"},
		{`pm.test("s", () => pm.response.to.have.status(201));`, "status 201"},
		// Not from the response: a literal, a header, an unknown object.
		{`pm.environment.set("x", "literal"); pm.environment.set("y", other.value); pm.globals.set("h", pm.response.headers.get("X"));`, ""},
		// An alias reassigned from something else no longer names the response.
		{"var j = pm.response.json();\nj = other;\npm.environment.set('t', j.token);", ""},
	} {
		sets, status, _ := readScript(strings.Split(c.script, "\n"))
		var got []string
		for _, s := range sets {
			got = append(got, s.name+"="+s.path)
		}
		for _, n := range status {
			got = append(got, fmt.Sprint("status ", n))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("%s\n  read %q, want %q", c.script, g, c.want)
		}
	}
}

// TestV20AuthAndFiles: a v2.0 collection's auth parameters are an object
// ("bearer": {"token": …}), not a list; an environment file overrides the
// collection's variables, which override the globals; a secret-typed or
// secret-named value is read from the environment, never written.
func TestV20AuthAndFiles(t *testing.T) {
	src := `{"info":{"name":"v20","schema":"https://schema.getpostman.com/json/collection/v2.0.0/collection.json"},
"auth":{"type":"bearer","bearer":{"token":"{{tok}}"}},
"variable":[{"key":"host","value":"http://from-collection.test"},{"key":"tenant","value":"coll"}],
"item":[{"name":"a","request":{"method":"GET","url":"{{host}}/a?t={{tenant}}&r={{region}}",
 "auth":{"type":"basic","basic":{"username":"ann","password":"{{pw}}"}}}},
 {"name":"b","request":{"method":"GET","url":"{{host}}/b","header":[{"key":"X-Key","value":"{{apiKey}}"}]}}]}`
	col, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	env, err := ParseEnvironment(strings.NewReader(`{"name":"e","values":[
{"key":"host","value":"http://from-env.test","enabled":true},
{"key":"apiKey","value":"k-123-secret","type":"secret","enabled":true},
{"key":"off","value":"x","enabled":false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	glob, err := ParseEnvironment(strings.NewReader(`{"values":[{"key":"tenant","value":"glob"},{"key":"region","value":"eu"},{"key":"tok","value":"t0"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "v20.json", Environment: env, Globals: glob, EnvSource: "e.json", GlobalsSource: "g.json"})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{
		`target: "${env.HOST:-http://from-env.test}"`, // the environment wins
		"tenant: coll",  // the collection beats the globals
		"region: eu",    // from the globals
		"Bearer ${tok}", // v2.0 object-form bearer
		`Basic ${base64(concat(\"ann\", \":\", pw))}`, // a password from a variable: encoded when sent, as Postman does
		`apiKey: "${env.APIKEY}"`,                     // a secret-typed value
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "k-123-secret") {
		t.Errorf("the plan holds the environment's secret:\n%s", text)
	}
	c := rep.Count()
	if c.Disabled != 1 {
		t.Errorf("counts %+v, want the disabled environment variable counted", c)
	}
	if _, err := convert.Verify(p, "plan.yaml", t.TempDir()); err != nil {
		t.Error(err)
	}
}

// TestDisableURLEncodingSaid: a folder's protocolProfileBehavior turns
// Postman's URL encoding off for the requests inside it unless one turns it
// on again; the plan encodes every URL as Postman does by default, and the
// report's first section says so for the requests that asked otherwise.
func TestDisableURLEncodingSaid(t *testing.T) {
	col, err := Parse(strings.NewReader(`{"info":{"name":"x"},"item":[
{"name":"f","protocolProfileBehavior":{"disableUrlEncoding":true},"item":[
 {"name":"a","request":{"url":"http://h.test/a b"}},
 {"name":"b","protocolProfileBehavior":{"disableUrlEncoding":false},"request":{"url":"http://h.test/b"}}]},
{"name":"c","request":{"url":"http://h.test/c"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, rep := Convert(col, Options{Source: "x.json"})
	if b := strings.Join(rep.Behaviour, "\n"); !strings.Contains(b, "1 request sets protocolProfileBehavior.disableUrlEncoding") {
		t.Errorf("report: %q", b)
	}
}

// TestNestedVariableSaid: a variable whose value holds another {{variable}}
// is sent without it (plan variables are not templates); the report says
// so, since Postman resolves it.
func TestNestedVariableSaid(t *testing.T) {
	col, err := Parse(strings.NewReader(`{"info":{"name":"x"},"variable":[{"key":"host","value":"h.test"},{"key":"path","value":"/v1/{{tenant}}/items"}],
"item":[{"name":"a","request":{"url":"http://{{host}}{{path}}"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "x.json"})
	if b := strings.Join(rep.Behaviour, "\n"); !strings.Contains(b, "1 variable (path) holds another {{variable}}") {
		t.Errorf("report: %q", b)
	}
	b, _ := p.Bytes()
	if !strings.Contains(string(b), "path: /v1//items") {
		t.Errorf("plan:\n%s", b)
	}
}
