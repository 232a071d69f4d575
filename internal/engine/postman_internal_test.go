package engine

import (
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/plan"
)

// TestPostmanTemplate: under encode: postman the query: entries follow the
// URL as key=value text, the values left as they are (the whole URL is
// encoded when it is sent), after "&" when the URL has a query already.
func TestPostmanTemplate(t *testing.T) {
	t.Parallel()
	text := func(tp plan.Template) string {
		var b strings.Builder
		for _, p := range tp.Parts {
			if p.Var != "" {
				b.WriteString("{" + p.Var + "}")
				continue
			}
			b.WriteString(p.Lit)
		}
		return b.String()
	}
	q := []plan.Header{{Name: "q", Value: plan.Template{Raw: "${x}", Parts: []plan.Part{{Var: "x"}}}}, {Name: "n", Value: plan.Template{Raw: "1", Parts: []plan.Part{{Lit: "1"}}}}}
	for url, want := range map[string]string{"/a": "/a?q={x}&n=1", "/a?b=2": "/a?b=2&q={x}&n=1"} {
		u := plan.Template{Raw: url, Parts: []plan.Part{{Lit: url}}}
		if got := text(postmanTemplate(u, q)); got != want {
			t.Errorf("%s + query = %q, want %q", url, got, want)
		}
		if got := text(postmanTemplate(u, nil)); got != url {
			t.Errorf("%s without query = %q", url, got)
		}
	}
}
