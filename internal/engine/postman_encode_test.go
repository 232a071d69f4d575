package engine_test

import (
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/engine"
	"github.com/plateau-perf/plateau/internal/plan"
)

// TestPostmanEncodeHTTP1Only: encode: postman is sent over HTTP/1.1, as
// Postman's runtime sends it; asking for HTTP/2 is an error when the plan
// is checked, not a request sent another way.
func TestPostmanEncodeHTTP1Only(t *testing.T) {
	t.Parallel()
	for v, bad := range map[string]bool{"": false, "1.1": false, "2": true, "auto": true} {
		src := "name: p\ntarget: https://127.0.0.1:1\nworkloads:\n  w:\n    load: {users: 1, iterations: 1}\n    scenario:\n      - request: {url: \"/a|b?q=${x}\", encode: postman"
		if v != "" {
			src += ", http_version: \"" + v + "\""
		}
		src += "}\nvars: {x: \"a&b\"}\n"
		p, err := plan.Parse("p.yaml", []byte(src), ".", plan.Options{})
		if err != nil {
			t.Fatalf("http_version %q: %v", v, err)
		}
		err = engine.Check(p)
		if got := err != nil && strings.Contains(err.Error(), "HTTP/1.1 only"); got != bad {
			t.Errorf("http_version %q: check says %v", v, err)
		}
	}
}
