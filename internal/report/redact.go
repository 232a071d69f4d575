package report

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// mask replaces every secret value.
const mask = "***"

// defaultSecretNames are redacted in every run, whatever the plan says; the
// list matches core.IsSecretHeader (a test keeps them in step).
var defaultSecretNames = []string{"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token"}

// Redactor removes secrets from text that came from a run. It knows secrets
// two ways: by name (headers and variables marked secret, whose values are
// masked wherever they appear as "name: value", "name=value" or a JSON
// member) and by value (literal values of those names found in the plan
// copy, masked wherever they appear at all). A Redactor is immutable and
// safe for concurrent use.
type Redactor struct {
	values  []string // longest first, so a value containing another is masked whole
	header  *regexp.Regexp
	param   *regexp.Regexp
	jsonKV  *regexp.Regexp
	bearer  *regexp.Regexp
	isNamed map[string]bool
}

// NewRedactor builds a redactor for the default secret headers plus names,
// and the literal values.
func NewRedactor(names, values []string) *Redactor {
	set := map[string]bool{}
	for _, n := range append(append([]string{}, defaultSecretNames...), names...) {
		n = strings.ToLower(strings.TrimSpace(n))
		if n != "" {
			set[n] = true
		}
	}
	alts := make([]string, 0, len(set))
	for n := range set {
		alts = append(alts, regexp.QuoteMeta(n))
	}
	// Longer names first so "set-cookie" wins over "cookie".
	sort.Slice(alts, func(i, j int) bool {
		if len(alts[i]) != len(alts[j]) {
			return len(alts[i]) > len(alts[j])
		}
		return alts[i] < alts[j]
	})
	alt := strings.Join(alts, "|")
	r := &Redactor{isNamed: set}
	// "Authorization: Bearer x" up to the end of the line or a quote.
	r.header = regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_-])(` + alt + `)(\s*:\s*)([^\s"'<>*][^\r\n"'<>]*)`)
	// "?token=x&…", "token=x" in a form or message.
	r.param = regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_-])(` + alt + `)(=)([^&\s"'<>;#*][^&\s"'<>;#]*)`)
	// {"token": "x"}
	r.jsonKV = regexp.MustCompile(`(?i)("(?:` + alt + `)"\s*:\s*")((?:[^"\\]|\\.)*)(")`)
	// Bearer and Basic credentials wherever they appear.
	r.bearer = regexp.MustCompile(`(?i)\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{4,}`)
	seen := map[string]bool{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		// Very short values ("1", "on") would mask ordinary text and
		// are no credential anyway.
		if len(v) < 4 || seen[v] || v == mask {
			continue
		}
		seen[v] = true
		r.values = append(r.values, v)
	}
	sort.Slice(r.values, func(i, j int) bool { return len(r.values[i]) > len(r.values[j]) })
	return r
}

// literal masks the literal secret values only.
func (r *Redactor) literal(s string) string {
	for _, v := range r.values {
		s = strings.ReplaceAll(s, v, mask)
	}
	return s
}

// Named reports whether name is a secret header or variable.
func (r *Redactor) Named(name string) bool { return r.isNamed[strings.ToLower(name)] }

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, mask)
		}
	}
	s = r.jsonKV.ReplaceAllString(s, "${1}"+mask+"${3}")
	s = r.header.ReplaceAllString(s, "${1}${2}${3}"+mask)
	s = r.param.ReplaceAllString(s, "${1}${2}${3}"+mask)
	s = r.bearer.ReplaceAllString(s, "${1} "+mask)
	return s
}

// Bytes masks the literal secret values in an output file's bytes, in the
// forms the writers may have escaped them to (HTML, JSON, XML). It is the
// last line of defence: the pipeline redacts every value before it reaches
// a writer, and this catches what slipped through. It reports whether it
// changed anything.
func (r *Redactor) Bytes(b []byte) ([]byte, bool) {
	changed := false
	for _, v := range r.values {
		forms := []string{v, html.EscapeString(v)}
		if j, err := json.Marshal(v); err == nil {
			forms = append(forms, string(j[1:len(j)-1]))
		}
		for _, f := range forms {
			if bytes.Contains(b, []byte(f)) {
				b = bytes.ReplaceAll(b, []byte(f), []byte(mask))
				changed = true
			}
		}
	}
	return b, changed
}

// RedactPlan masks the values of secret headers and variables in a YAML
// plan and returns the masked text and the literal secret values found (for
// NewRedactor). Headers may be written as a mapping (`Authorization: x`) or
// as a list of {name, value} mappings. A plan that does not parse as YAML
// is masked line by line.
func RedactPlan(src []byte, names []string) (string, []string) {
	probe := NewRedactor(names, nil)
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil || len(root.Content) == 0 {
		return probe.String(string(src)), nil
	}
	var found []string
	var walk func(n *yaml.Node)
	mark := func(v *yaml.Node) {
		if v.Kind != yaml.ScalarNode {
			// A structured secret value: mask every scalar inside.
			for _, c := range v.Content {
				if c.Kind == yaml.ScalarNode {
					found = append(found, literalParts(c.Value)...)
					c.Value, c.Style = mask, yaml.SingleQuotedStyle
				}
			}
			return
		}
		found = append(found, literalParts(v.Value)...)
		v.Value, v.Style, v.Tag = mask, yaml.SingleQuotedStyle, "!!str"
	}
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			// {name: Authorization, value: x}
			var nameV, valueV *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				switch strings.ToLower(n.Content[i].Value) {
				case "name":
					nameV = n.Content[i+1]
				case "value":
					valueV = n.Content[i+1]
				}
			}
			if nameV != nil && valueV != nil && nameV.Kind == yaml.ScalarNode && probe.Named(nameV.Value) {
				mark(valueV)
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind == yaml.ScalarNode && probe.Named(k.Value) && v.Kind == yaml.ScalarNode {
					mark(v)
					continue
				}
				walk(v)
			}
			return
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(&root)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(&root); err != nil {
		return probe.String(string(src)), found
	}
	_ = enc.Close()
	// The values are masked in the tree; only literal secrets that appear
	// elsewhere (a token pasted into a URL) remain to be masked.
	return NewRedactor(nil, found).literal(buf.String()), found
}

// literalParts returns the literal text of a secret value, split at
// ${…} template references (whose text is a variable name, not a secret)
// and without the scheme word of an Authorization value.
func literalParts(v string) []string {
	var out []string
	for v != "" {
		i := strings.Index(v, "${")
		if i < 0 {
			out = append(out, v)
			break
		}
		out = append(out, v[:i])
		j := strings.Index(v[i:], "}")
		if j < 0 {
			break
		}
		v = v[i+j+1:]
	}
	res := out[:0]
	for _, p := range out {
		p = strings.TrimSpace(p)
		for _, scheme := range []string{"Bearer ", "Basic ", "bearer ", "basic "} {
			p = strings.TrimPrefix(p, scheme)
		}
		if len(p) >= 4 {
			res = append(res, p)
		}
	}
	return res
}
