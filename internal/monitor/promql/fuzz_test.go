package promql

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/monitor"
)

// FuzzConfig: any target body either validates or is an error; a valid one
// has queries with names that are safe metric names. Never a panic.
func FuzzConfig(f *testing.F) {
	f.Add("url: http://127.0.0.1:9090\nrecipe: node\n")
	f.Add("url: http://x:1\nqueries: {a: up, b: {query: 'sum(x)', unit: cores}}\nbefore: 1m\n")
	f.Add("url: http://x:1\nrecipes: [kubernetes, jvm]\nfilter: '{namespace=\"a\"}'\nwindow: 30s\n")
	f.Add("queries: [1, 2]\n")
	f.Fuzz(func(t *testing.T, body string) {
		var opts map[string]any
		if yaml.Unmarshal([]byte(body), &opts) != nil {
			return
		}
		s, err := parse(monitor.TargetConfig{Kind: monitor.KindPromQL, Options: opts})
		if err != nil {
			return
		}
		for _, n := range s.names {
			if !queryName.MatchString(n) {
				t.Fatalf("query name %q accepted", n)
			}
			if s.Queries[n].Expr == "" {
				t.Fatalf("empty expression for %q", n)
			}
		}
	})
}
