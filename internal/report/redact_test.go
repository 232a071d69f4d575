package report

import (
	"strings"
	"testing"
)

// Redaction applies to values, not to labels; and a Bearer/Basic rule that
// masks English words ("basic data") masks no credential either.
func TestRedactorLabelsAndWords(t *testing.T) {
	t.Parallel()
	r := NewRedactor(nil, []string{"Zq8xK2mN4pL7rT1vW9yB"})
	for _, tc := range []struct{ name, in, want string }{
		{"label with basic", "View a model with basic data", "View a model with basic data"},
		{"label with a literal secret", "GET /u/Zq8xK2mN4pL7rT1vW9yB", "GET /u/***"},
		{"label cut at a secret", "GET /u/Zq8xK2mN4p…", "GET /u/***…"},
		{"label with token word", "token: refresh", "token: refresh"},
	} {
		if got := r.Label(tc.in); got != tc.want {
			t.Errorf("%s: Label(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct{ name, in, want string }{
		{"english after basic", "Basic authentication required", "Basic authentication required"},
		{"basic credential", "Authorization failed for Basic dXNlcjpwYXNz", "Authorization failed for Basic ***"},
		{"default key in a message", "bad password=hunter22 for bob", "bad password=*** for bob"},
		{"client_secret json", `{"client_secret":"x-1"}`, `{"client_secret":"***"}`},
		{"access_token query", "GET /a?access_token=abc&page=2", "GET /a?access_token=***&page=2"},
		{"not a secret name", "tokens_used=12", "tokens_used=12"},
		{"cut secret", "HTTP 500: echo Zq8xK2mN4pL7…", "HTTP 500: echo ***…"},
	} {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("%s: String(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

// A plan copy that was not masked when it was saved (an older run, an
// import) is masked for the appendix: JSON members, raw bodies and query
// strings with default secret names.
func TestRedactPlanDefaultKeys(t *testing.T) {
	t.Parallel()
	src := `name: x
workloads:
  w:
    scenario:
      - request:
          url: /login?api_key=ak-3333-literal&page=2
          json: {user: bob, password: pw-9999-literal, nested: {client_secret: cs-7777-literal}}
      - request:
          url: /form
          body: "user=bob&passwd=raw-5555-literal"
`
	out, _ := RedactPlan([]byte(src), nil)
	for _, secret := range []string{"ak-3333-literal", "pw-9999-literal", "cs-7777-literal", "raw-5555-literal"} {
		if strings.Contains(out, secret) {
			t.Errorf("appendix plan holds %q:\n%s", secret, out)
		}
	}
	for _, keep := range []string{"page=2", "user: bob", "user=bob"} {
		if !strings.Contains(out, keep) {
			t.Errorf("appendix plan lost %q:\n%s", keep, out)
		}
	}
}
