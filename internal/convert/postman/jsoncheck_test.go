package postman

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert/converttest"
)

// TestJSONChecksOnTheWire: the common JSON assertions of test scripts —
// pm.expect(…).to.eql, the legacy tests[…] = … === …, to.exist,
// to.have.property and pm.response.to.have.jsonBody — become json checks
// that judge the response as Postman's would: the server answers the
// first request as the script expects and the second with another name,
// so exactly one request fails, on its check.
func TestJSONChecksOnTheWire(t *testing.T) {
	t.Parallel()
	script := func(name string) string {
		return fmt.Sprintf(`{"listen":"test","script":{"exec":[
"var body = pm.response.json();",
"pm.test('name', function () { pm.expect(body.user.name).to.eql('%s'); });",
"tests['count'] = body.count === 3;",
"pm.expect(body.user.id).to.exist;",
"pm.expect(body.user).to.have.property('roles');",
"pm.response.to.have.jsonBody('meta.page');"]}}`, name)
	}
	col, err := Parse(strings.NewReader(`{"info":{"name":"checks","schema":"https://schema.getpostman.com/json/collection/v2.1.0/collection.json"},
"item":[
 {"name":"good","event":[` + script("ann") + `],"request":{"method":"GET","url":"http://127.0.0.1:1/good"}},
 {"name":"bad","event":[` + script("ann") + `],"request":{"method":"GET","url":"http://127.0.0.1:1/bad"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, rep := Convert(col, Options{Source: "checks.json"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := "ann"
		if r.URL.Path == "/bad" {
			name = "bob"
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"user":{"name":%q,"id":7,"roles":[]},"count":3,"meta":{"page":1}}`, name)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	pf, text := converttest.Write(t, t.TempDir(), p, rep)
	for _, want := range []string{`$.user.name: ann`, `$.count: "3"`, `$.user.id`, `$.user.roles`, `$.meta.page`} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q", want)
		}
	}
	d, _ := converttest.Run(t, pf, nil, 30*time.Second, "target=http://"+ln.Addr().String())
	var good, bad int64 = -1, -1
	for _, k := range d.Labels() {
		switch k.Label {
		case "good":
			good = d.Run[k].Errors
		case "bad":
			bad = d.Run[k].Errors
		}
	}
	if good != 0 || bad != 1 {
		t.Errorf("errors: good %d, bad %d; want 0 and 1\nplan:\n%s", good, bad, text)
	}
}
