package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// plateau run --trace N runs N iterations of one user and writes every
// request, response, extraction and branch to trace.txt, secrets masked.
func TestRunTrace(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/token" {
			fmt.Fprint(w, `{"access_token":"tok-abcdef123456","user":"ann"}`)
			return
		}
		w.Header().Set("X-Echo-Auth", r.Header.Get("Authorization"))
		fmt.Fprintf(w, `{"items":[1,2],"auth":%q}`, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	dir := t.TempDir()
	src := `name: traced
target: ` + srv.URL + `
workloads:
  w:
    setup:
      - request: {name: login, method: POST, url: /token, extract: {token: {json: $.access_token}}}
    scenario:
      - request:
          name: items
          url: /items
          headers: {Authorization: "Bearer ${token}"}
          extract: {first: {json: "$.items[0]"}}
      - if: {cond: '${first} == 1', steps: [{request: {name: one, url: /one}}], else: [{request: {name: other, url: /other}}]}
    load: {users: 50, duration: 1h}
`
	pf := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(pf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	code, _, errOut := runCLI(t, "run", pf, "-o", out, "-q", "--trace", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	b, err := os.ReadFile(filepath.Join(out, "trace.txt"))
	if err != nil {
		t.Fatal(err)
	}
	trace := string(b)
	for _, want := range []string{"iteration 1", "iteration 2", "> POST " + srv.URL + "/token   [login]",
		"> GET " + srv.URL + "/items   [items]", "< HTTP/1.1 200", `extract first = "1"`, "--- w 1-1: if ${first} == 1", "[one]", "> Authorization: ***"} {
		if !strings.Contains(trace, want) {
			t.Errorf("trace lacks %q:\n%s", want, trace)
		}
	}
	if strings.Contains(trace, "abcdef123456") {
		t.Errorf("trace holds the token:\n%s", trace)
	}
	// One user, one setup, two iterations of two requests.
	if hits.Load() != 5 {
		t.Errorf("server saw %d requests, want 5", hits.Load())
	}
}
