package postman

import (
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/convert"
)

// TestUserinfo: the credentials of a URL split off as Postman's URL
// parser does (the last @ before the path, the user up to the first ":").
func TestUserinfo(t *testing.T) {
	for _, c := range []struct{ in, rest, user, pass string }{
		{"http://a:b@h/p", "http://h/p", "a", "b"},
		{"http://a:b:c@d@h:8080/p?q=x@y#f", "http://h:8080/p?q=x@y#f", "a", "b:c@d"},
		{"a@h", "h", "a", ""},
		{"{{u}}:{{p}}@{{host}}/x", "{{host}}/x", "{{u}}", "{{p}}"},
		{`http://a:b@h\p`, `http://h\p`, "a", "b"},
	} {
		rest, user, pass, ok := userinfo(c.in)
		if !ok || rest != c.rest || user != c.user || pass != c.pass {
			t.Errorf("userinfo(%q) = %q %q %q %v, want %q %q %q", c.in, rest, user, pass, ok, c.rest, c.user, c.pass)
		}
	}
	for _, in := range []string{"http://h/p@x", "http://h/p?q=a@b", "http://h#a@b", "{{base}}/a"} {
		if rest, _, _, ok := userinfo(in); ok || rest != in {
			t.Errorf("userinfo(%q) found credentials: %q", in, rest)
		}
	}
	for in, want := range map[string]string{"s3cr%40t": "s3cr@t", "a+b": "a+b", "100%": "100%", "%zz%41": "%zzA", "%2f": "/"} {
		if got := pctDecode(in); got != want {
			t.Errorf("pctDecode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestURLCredentials: credentials in request URLs and in the URL of the
// variable that becomes the target are sent as Basic headers; each
// literal credential gets its own environment variable, and no password
// is written into the plan or the report.
func TestURLCredentials(t *testing.T) {
	src := `{"info":{"name":"x","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"variable":[{"key":"baseUrl","value":"http://ops:t0p%2Fs3cret@api.example.test/v1"}],
"item":[{"name":"a","request":{"method":"GET","url":"{{baseUrl}}/a"}},
{"name":"b","request":{"method":"GET","url":"{{baseUrl}}/b"}},
{"name":"c","request":{"method":"GET","url":"http://eve:other-pw-9@api.example.test/c"}},
{"name":"d","request":{"method":"GET","url":"http://eve:other-pw-9@api.example.test/d"}}]}`
	col, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "x.json"})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	var r strings.Builder
	if _, err := rep.WriteTo(&r); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"t0p", "s3cret", "other-pw-9"} {
		if strings.Contains(string(b), s) || strings.Contains(r.String(), s) {
			t.Errorf("%q written:\n%s\n%s", s, b, r.String())
		}
	}
	want := map[string]string{"/a": "Basic ${env.BASIC_AUTH}", "/b": "Basic ${env.BASIC_AUTH}", "http://api.example.test/c": "Basic ${env.BASIC_AUTH_2}", "http://api.example.test/d": "Basic ${env.BASIC_AUTH_2}"}
	convert.WalkRequests(p.Workloads[0].Scenario, func(q *convert.Request) {
		got := ""
		for _, h := range q.Headers {
			if h.Name == "Authorization" {
				got = h.Value
			}
		}
		if got != want[q.URL] {
			t.Errorf("%s: Authorization %q, want %q", q.URL, got, want[q.URL])
		}
	})
	if rep.Secrets["BASIC_AUTH"] != "b3BzOnQwcC9zM2NyZXQ=" || rep.Secrets["BASIC_AUTH_2"] != "ZXZlOm90aGVyLXB3LTk=" {
		t.Errorf("secrets %v, want base64 of ops:t0p/s3cret and eve:other-pw-9", rep.Secrets)
	}
	if !strings.Contains(p.Target, "http://api.example.test/v1") {
		t.Errorf("target %q", p.Target)
	}
	if _, err := convert.Verify(p, "plan.yaml", t.TempDir()); err != nil {
		t.Error(err)
	}
}

// TestBasicPasswordVariable: a basic-auth password from a variable whose
// name does not look secret ({{pw}}), in a URL's credentials and in an
// auth block, is still a secret: the collection's value is read from the
// environment (PW), never written.
func TestBasicPasswordVariable(t *testing.T) {
	src := `{"info":{"name":"x","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"variable":[{"key":"pw","value":"hunter2hunter2"},{"key":"login","value":"bob"}],
"item":[{"name":"a","request":{"method":"GET","url":"http://{{login}}:{{pw}}@h.test/a"}},
{"name":"b","request":{"method":"GET","url":"http://h.test/b","auth":{"type":"basic","basic":[{"key":"username","value":"x"},{"key":"password","value":"{{pw}}"}]}}}]}`
	col, err := Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "x.json"})
	b, err := p.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "hunter2") {
		t.Errorf("the password is written:\n%s", b)
	}
	if !strings.Contains(string(b), `Basic ${base64(concat(login, \":\", pw))}`) || rep.Secrets["PW"] != "hunter2hunter2" {
		t.Errorf("the URL's credentials are not encoded from the variables, or PW is not named (%v):\n%s", rep.Secrets, b)
	}
	if _, err := convert.Verify(p, "plan.yaml", t.TempDir()); err != nil {
		t.Error(err)
	}
}
