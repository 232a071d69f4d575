package plan

import (
	"bytes"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/secret"
)

// Redacted is what a secret value is replaced with.
const Redacted = secret.Mask

// RedactedSource returns Source with secret values replaced by "***":
// values of secret headers, form fields, JSON members and query parameters
// (secret.IsName, or named in Secrets), of secret vars (named secret, or
// feeding a secret header, field or parameter: see SecretSet), secret
// key=value pairs and JSON members of raw bodies, and passwords inside URLs
// and DSNs. This is the text to write into a run directory or a report.
// ${env.NAME} references are never substituted in Source, so secrets passed
// through the environment do not appear in either form.
func (p *Plan) RedactedSource() []byte {
	var doc yaml.Node
	if err := yaml.Unmarshal(p.Source, &doc); err != nil || len(doc.Content) == 0 {
		if len(p.Source) == 0 {
			return nil
		}
		// Source came from a successful Load, so this is unreachable in
		// practice; never fall back to the unredacted text.
		return []byte("# plan source could not be re-read for redaction\n")
	}
	vars := p.SecretSet().Vars
	r := redactor{isSecret: p.IsSecret, isSecretVar: func(name string) bool { return vars[name] || p.IsSecret(name) }}
	r.walk(doc.Content[0], true)
	if !r.changed {
		return p.Source
	}
	var buf bytes.Buffer
	if err := encodeYAML(&buf, &doc); err != nil {
		return []byte("# plan source could not be re-encoded for redaction\n")
	}
	return buf.Bytes()
}

type redactor struct {
	isSecret    func(string) bool
	isSecretVar func(string) bool
	changed     bool
	seen        int
}

// walk visits every node once (aliases are not followed; the anchored node
// is visited where it is defined).
func (r *redactor) walk(n *yaml.Node, top bool) {
	r.seen++
	if n == nil || r.seen > 1e6 {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			switch {
			case k.Value == "headers" || k.Value == "form" || k.Value == "query" || k.Value == "metadata":
				r.names(v, r.isSecret)
			case k.Value == "cookies" && !top:
				// A request's cookies: every value is a cookie's.
				r.names(v, func(string) bool { return true })
			case k.Value == "vars" && top:
				r.names(v, r.isSecretVar)
			case (k.Value == "prepare" || k.Value == "cleanup") && top:
				r.commands(v)
			case k.Value == "history" && top && v.Kind == yaml.MappingNode:
				// The store's URL may hold a password; tags may be named
				// like secrets.
				for j := 0; j+1 < len(v.Content); j += 2 {
					switch v.Content[j].Value {
					case "db":
						r.scalar(v.Content[j+1], func(s string) string { return secret.URL(s, r.isSecret) })
					case "tags":
						r.names(v.Content[j+1], r.isSecret)
					}
				}
			case k.Value == "dsn" || k.Value == "url" || k.Value == "target":
				r.scalar(v, func(s string) string { return secret.URL(s, r.isSecret) })
			case (k.Value == "json" || k.Value == "message") && !top:
				r.members(v)
			case k.Value == "body" && !top:
				r.scalar(v, func(s string) string { return secret.Body(s, r.isSecret) })
			}
			r.walk(v, false)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			r.walk(c, false)
		}
	}
}

// names replaces the values of secret entries of a name → value mapping.
func (r *redactor) names(m *yaml.Node, isSecret func(string) bool) {
	if m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if isSecret(m.Content[i].Value) {
			r.scalar(m.Content[i+1], secret.Value)
		}
	}
}

// members masks the values of secret members of a JSON body written as
// YAML, at any depth.
func (r *redactor) members(n *yaml.Node) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if r.isSecret(k.Value) {
				r.all(v)
				continue
			}
			r.members(v)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			r.members(c)
		}
	}
}

// all masks every scalar under n.
func (r *redactor) all(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode || n.Kind == yaml.AliasNode {
		r.scalar(n, secret.Value)
		return
	}
	for _, c := range n.Content {
		r.all(c)
	}
}

// scalar rewrites a scalar value (or the anchored scalar an alias points
// to, since that is where the secret text is).
func (r *redactor) scalar(v *yaml.Node, f func(string) string) {
	if v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	if v.Kind != yaml.ScalarNode || v.Value == "" {
		return
	}
	if nv := f(v.Value); nv != v.Value {
		v.Value, v.Tag, v.Style = nv, "!!str", yaml.DoubleQuotedStyle
		r.changed = true
	}
}

// RedactURL masks the passwords and secret query parameters of a URL with
// the plan's secret names (secret.URL): the URL text a sample may record
// when its template holds a secret.
func (p *Plan) RedactURL(s string) string { return secret.URL(s, p.IsSecret) }
