package report

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/secret"
)

// mask replaces every secret value.
const mask = "***"

// defaultSecretNames are named in every run's patterns, whatever the plan
// says; core.IsSecretName decides for every other name (a test keeps them
// in step).
var defaultSecretNames = []string{"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "x-auth-token"}

// secretWordRe matches names core.IsSecretName may call secret (a superset:
// each match is checked against the rule).
const secretWordRe = `[A-Za-z0-9_.-]*(?:password|passwd|passphrase|secret|api[_.-]?key|private[_.-]?key|credential|token|authorization|cookie|pwd|session[_.-]?id)[A-Za-z0-9_.-]*`

// Redactor removes secrets from text that came from a run. It knows secrets
// two ways: by name (headers, fields and variables that are secret by
// default, core.IsSecretName, or named by the plan or found secret by use,
// whose values are masked wherever they appear as "name: value",
// "name=value" or a JSON member) and by value (literal values of those
// names found in the plan copy, masked wherever they appear at all, also
// when cut at the edge of a text: secret.Values). Labels get the by-value
// masking only (Label): a label is a name the user wrote, not a value. A
// Redactor is immutable and safe for concurrent use.
type Redactor struct {
	values  *secret.Values
	header  *regexp.Regexp
	param   *regexp.Regexp
	jsonKV  *regexp.Regexp
	bearer  *regexp.Regexp
	isNamed map[string]bool
}

// NewRedactor builds a redactor for the default secret names plus names,
// and the literal values.
func NewRedactor(names, values []string) *Redactor {
	set := map[string]bool{}
	for _, n := range append(append([]string{}, defaultSecretNames...), names...) {
		n = strings.ToLower(strings.TrimSpace(n))
		if n != "" {
			set[n] = true
		}
	}
	alts := make([]string, 0, len(set)+1)
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
	alts = append(alts, secretWordRe)
	alt := strings.Join(alts, "|")
	r := &Redactor{isNamed: set}
	// "Authorization: Bearer x" up to the end of the line or a quote.
	r.header = regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_.-])(` + alt + `)(\s*:\s*)([^\s"'<>*][^\r\n"'<>]*)`)
	// "?token=x&…", "token=x" in a form or message.
	r.param = regexp.MustCompile(`(?i)(^|[^A-Za-z0-9_.-])(` + alt + `)(=)([^&\s"'<>;#*][^&\s"'<>;#]*)`)
	// {"token": "x"}
	r.jsonKV = regexp.MustCompile(`(?i)(")(` + alt + `)("\s*:\s*")((?:[^"\\]|\\.)*)(")`)
	// Bearer and Basic credentials wherever they appear: a word of 8 or
	// more credential characters that looks like one (a digit, a symbol or
	// an upper-case letter after the first), so "basic data" stays.
	r.bearer = regexp.MustCompile(`(?i)\b(Bearer|Basic)(\s+)([A-Za-z0-9._~+/=-]{8,})`)
	r.values = secret.NewValues(values...)
	return r
}

// literal masks the literal secret values only.
func (r *Redactor) literal(s string) string { return r.values.String(s) }

// Named reports whether name is a secret header, field or variable.
func (r *Redactor) Named(name string) bool {
	return r.isNamed[strings.ToLower(name)] || core.IsSecretName(name)
}

// Label masks the literal secret values in a label, and nothing else: the
// name patterns and the Bearer rule apply to values, and would rewrite a
// label such as "View a model with basic data".
func (r *Redactor) Label(s string) string { return r.values.String(s) }

// String returns s with every secret masked.
func (r *Redactor) String(s string) string {
	if s == "" {
		return s
	}
	s = r.values.String(s)
	s = r.named(r.jsonKV, s, 2, 4)
	s = r.named(r.header, s, 2, 4)
	s = r.named(r.param, s, 2, 4)
	s = r.bearer.ReplaceAllStringFunc(s, func(m string) string {
		sub := r.bearer.FindStringSubmatch(m)
		if !credentialLike(sub[3]) {
			return m
		}
		return sub[1] + sub[2] + mask
	})
	return s
}

// named masks the value group of every match of re whose name group is a
// secret name.
func (r *Redactor) named(re *regexp.Regexp, s string, nameGroup, valueGroup int) string {
	idx := re.FindAllStringSubmatchIndex(s, -1)
	if len(idx) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range idx {
		name := s[m[2*nameGroup]:m[2*nameGroup+1]]
		vs, ve := m[2*valueGroup], m[2*valueGroup+1]
		if !r.Named(name) || vs < 0 {
			continue
		}
		b.WriteString(s[last:vs])
		b.WriteString(mask)
		last = ve
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// credentialLike reports whether a word after "Bearer"/"Basic" looks like a
// credential rather than an English word.
func credentialLike(w string) bool {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if c >= '0' && c <= '9' || strings.IndexByte("._~+/=-", c) >= 0 || i > 0 && c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

// Bytes masks the literal secret values in an output file's bytes, in the
// forms the writers may have escaped them to (HTML, JSON, XML). It is the
// last line of defence: the pipeline redacts every value before it reaches
// a writer, and this catches what slipped through. It reports whether it
// changed anything.
func (r *Redactor) Bytes(b []byte) ([]byte, bool) {
	changed := false
	for _, v := range r.values.List() {
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
				if v.Kind == yaml.ScalarNode && (k.Value == "body" || k.Value == "url" || k.Value == "target") {
					// "user=bob&password=x", "/a?api_key=x": secret
					// pairs inside a value.
					if m := probe.String(v.Value); m != v.Value {
						v.Value, v.Style = m, yaml.SingleQuotedStyle
					}
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
