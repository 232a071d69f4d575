package wiretest

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestPostmanUserinfo runs credentials written in request URLs
// (user:password@host) under newman and converted: postman-request sends
// them as "Authorization: Basic base64(user:password)", each part
// percent-decoded (%40 → @, + kept, a ":" in the password kept), a user
// alone as "user:", unless the request's own auth or an Authorization
// header sets one; a URL object's raw text is not read. Neither side
// puts the credentials on the request line, and no password (as written,
// decoded or base64-encoded) is in the converted plan or its report.
func TestPostmanUserinfo(t *testing.T) {
	const password = "pa:ss@w0rd!"
	o := RunPostmanCase(t, PostmanCase{
		Dir: "testdata/postman/userinfo", Collection: "Userinfo.postman_collection.json",
		Environment: "Userinfo.postman_environment.json",
		Vars:        map[string]string{"token": "tok-1"},
		// The environment file's secret is read from APIPASSWORD; the
		// literal URL credentials from BASIC_AUTH (the report says so).
		Env:     map[string]string{"APIPASSWORD": password},
		Compare: Options{Expected: runtimeHeaders, ThinkTolerance: noThink},
	})
	basic := func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(s)) }
	want := map[string]string{
		"/literal":    basic("alice:s3cr@t:pw+1"),
		"/vars":       basic("svc.reporter:" + password),
		"/user-only":  basic("frank:"),
		"/own-auth":   basic("dave:" + password),
		"/own-header": "Bearer tok-1",
		"/raw-only":   "",
	}
	for side, rs := range map[string][]Request{"newman": o.Newman, "plateau": o.Plateau} {
		if len(rs) != len(want) {
			t.Fatalf("%s sent %d requests, want the collection's %d", side, len(rs), len(want))
		}
		for _, q := range rs {
			w, ok := want[q.Path]
			if !ok {
				t.Errorf("%s sent %s %s, not a request of the collection", side, q.Method, q.URI)
				continue
			}
			if got := q.Header.Get("Authorization"); got != w {
				t.Errorf("%s: %s sent Authorization %q, want %q", side, q.Path, got, w)
			}
			if strings.Contains(q.URI, "@") {
				t.Errorf("%s: the request line carries credentials: %s %s", side, q.Method, q.URI)
			}
		}
	}
	var rep strings.Builder
	if _, err := o.Report.WriteTo(&rep); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range o.Report.Env {
		if e.Env == "BASIC_AUTH" && strings.Contains(e.What, "credentials in the URL") && strings.Contains(e.What, `"alice"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("the report does not name BASIC_AUTH for the URL's credentials: %+v", o.Report.Env)
	}
	for _, s := range []string{"s3cr%40t", "s3cr@t", "pw+1", password, "urlpass", "hdrpass",
		strings.TrimPrefix(basic("alice:s3cr@t:pw+1"), "Basic "), strings.TrimPrefix(basic("svc.reporter:"+password), "Basic ")} {
		for name, text := range map[string]string{"plan": o.Plan, "report": rep.String()} {
			if strings.Contains(text, s) {
				t.Errorf("the %s holds the secret %q:\n%s", name, s, text)
			}
		}
	}
}

// TestPostmanUserinfoBase: credentials in the URL of the variable every
// request starts with ({{baseUrl}} = http://ops:t0p%2Fs3cret@host/api):
// newman parses the URL once the variable is in and sends them as Basic
// auth (%2F decoded), unless the request has its own auth; the converted
// plan's target carries none and the password is in no artefact.
func TestPostmanUserinfoBase(t *testing.T) {
	o := RunPostmanCase(t, PostmanCase{
		Dir: "testdata/postman/userinfo", Collection: "Base.postman_collection.json",
		Vars:    map[string]string{"token": "tok-1"},
		Compare: Options{Expected: runtimeHeaders, ThinkTolerance: noThink},
	})
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:t0p/s3cret"))
	want := map[string]string{"/api/status": basic, "/api/items": basic, "/api/me": "Bearer tok-1"}
	for side, rs := range map[string][]Request{"newman": o.Newman, "plateau": o.Plateau} {
		if len(rs) != len(want) {
			t.Fatalf("%s sent %d requests, want the collection's %d", side, len(rs), len(want))
		}
		for _, q := range rs {
			if got, w := q.Header.Get("Authorization"), want[q.Path]; got != w {
				t.Errorf("%s: %s sent Authorization %q, want %q", side, q.Path, got, w)
			}
			if strings.Contains(q.URI, "@") {
				t.Errorf("%s: the request line carries credentials: %s %s", side, q.Method, q.URI)
			}
		}
	}
	var rep strings.Builder
	if _, err := o.Report.WriteTo(&rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"t0p", "s3cret", strings.TrimPrefix(basic, "Basic ")} {
		if strings.Contains(o.Plan, s) || strings.Contains(rep.String(), s) {
			t.Errorf("%q is written in the plan or the report:\n%s\n%s", s, o.Plan, rep.String())
		}
	}
}
