package plan

import (
	"slices"
	"strings"
	"testing"
)

const secretsPlan = `name: s
target: http://127.0.0.1:1
vars:
  tok: static-token-1234
  page: "2"
  db_password: pg-pass-5678
workloads:
  w:
    setup:
      - request:
          url: /login
          json: {user: bob, password: "pw-literal-9999", profile: {client_secret: "cs-nested-7777"}}
          extract:
            sid: {header: X-Session}
            refresh_token: {json: $.refresh}
            jar: {cookie: SESSION}
    scenario:
      - request:
          url: "/a?access_token=${sid}&page=${page}&api_key=ak-literal-3333"
          headers: {X-Custom-Auth: "${tok}"}
      - request:
          url: /b
          headers: {Authorization: "Bearer lit-bearer-4444"}
          body: "user=bob&passwd=raw-form-5555&x=${page}"
      - if:
          cond: '${page} == 2'
          steps:
            - request:
                url: /c
                form: {user: bob, client_secret: "${tok}"}
                query: {client_id: web, token: "q-literal-6666"}
    load: {users: 1, iterations: 1}
`

func TestSecretSet(t *testing.T) {
	t.Parallel()
	p, err := Parse("plan.yaml", []byte(secretsPlan), t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := p.SecretSet()
	for _, v := range []string{"sid", "tok", "db_password", "refresh_token", "jar"} {
		if !s.Vars[v] {
			t.Errorf("%s is not secret; vars %v", v, s.Names())
		}
	}
	if s.Vars["page"] {
		t.Error("page is secret")
	}
	for _, lit := range []string{"pw-literal-9999", "cs-nested-7777", "ak-literal-3333", "lit-bearer-4444",
		"raw-form-5555", "static-token-1234", "pg-pass-5678", "q-literal-6666"} {
		if !slices.Contains(s.Literals, lit) {
			t.Errorf("literal %s not found; literals %q", lit, s.Literals)
		}
	}
	if slices.Contains(s.Literals, "Bearer lit-bearer-4444") || slices.Contains(s.Literals, "bob") {
		t.Errorf("literals hold a non-secret: %q", s.Literals)
	}
	src := string(p.RedactedSource())
	for _, lit := range s.Literals {
		if strings.Contains(src, lit) {
			t.Errorf("saved plan holds %q:\n%s", lit, src)
		}
	}
	for _, keep := range []string{"access_token=${sid}", "page=${page}", "user=bob", `page: "2"`} {
		if !strings.Contains(src, keep) {
			t.Errorf("saved plan lost %q:\n%s", keep, src)
		}
	}
	if got := p.RedactURL("/a?api_key=x1&page=2&token=${t}"); got != "/a?api_key=***&page=2&token=${t}" {
		t.Errorf("RedactURL = %q", got)
	}
}

// A websocket's Authorization header makes its variable and literal
// secret, as a request's does.
func TestSecretSetWebSocketHeaders(t *testing.T) {
	t.Parallel()
	src := `name: s
target: http://127.0.0.1:1
workloads:
  w:
    scenario:
      - websocket:
          url: /chat
          headers: {Authorization: "Bearer ${tok}", X-Api-Key: literal-key-123}
          steps:
            - receive: {extract: {tok: {json: $.t}}}
    load: {users: 1, iterations: 1}
`
	p, err := Parse("s.yaml", []byte(src), ".", Options{Env: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	set := p.SecretSet()
	if !set.Vars["tok"] || !slices.Contains(set.Literals, "literal-key-123") {
		t.Errorf("secret set %+v: want tok and the literal key", set)
	}
}
