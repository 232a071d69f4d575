package importer

import (
	"strings"

	"github.com/plateau-perf/plateau/internal/secret"
)

// masker applies the secret rule (secret.Rule, the one every writer uses)
// to what an imported tool logged: failure messages hold what a server
// echoed ("Authorization: Bearer …"), URLs hold query parameters
// (?api_key=…). A run's failures repeat a few messages, so messages go
// through a bounded cache; URLs are masked only when they have a query or
// userinfo.
type masker struct {
	rule  *secret.Rule
	cache map[string]string
}

// maskCache bounds the messages remembered per aggregator.
const maskCache = 4096

// newMasker returns a masker of rule with its own cache: one per
// aggregator and per partial, since decoding goroutines fill partials
// concurrently (the rule itself is immutable and shared).
func newMasker(rule *secret.Rule) *masker {
	return &masker{rule: rule, cache: map[string]string{}}
}

func (m *masker) message(s string) string {
	if s == "" {
		return s
	}
	if v, ok := m.cache[s]; ok {
		return v
	}
	v := m.rule.String(s)
	if len(m.cache) < maskCache {
		m.cache[s] = v
	}
	return v
}

func (m *masker) url(s string) string {
	if !strings.ContainsAny(s, "?@") {
		return s
	}
	return secret.URL(s, secret.IsName)
}
