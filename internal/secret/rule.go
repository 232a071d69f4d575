package secret

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Rule masks secrets in text that came from a run. It knows secrets two
// ways: by name (IsName, or names a plan lists or found secret by use,
// whose values are masked wherever they appear as "name: value",
// "name=value" or a JSON member) and by value (literal values, masked
// wherever they appear at all, also when cut at the edge of a text:
// Values). Labels get the by-value masking only (Label): a label is a
// name the user wrote, not a value. A Rule is immutable and safe for
// concurrent use.
type Rule struct {
	values  *Values
	header  *regexp.Regexp
	param   *regexp.Regexp
	jsonKV  *regexp.Regexp
	bearer  *regexp.Regexp
	isNamed map[string]bool
}

// NewRule builds a rule for the secret names of IsName plus names, and
// the literal values.
func NewRule(names, values []string) *Rule {
	set := map[string]bool{}
	for _, n := range names {
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
	alts = append(alts, wordPattern)
	alt := strings.Join(alts, "|")
	r := &Rule{isNamed: set}
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
	r.values = NewValues(values...)
	return r
}

// Literal masks the literal secret values only.
func (r *Rule) Literal(s string) string { return r.values.String(s) }

// Named reports whether name is a secret header, field or variable.
func (r *Rule) Named(name string) bool {
	return r.isNamed[strings.ToLower(name)] || IsName(name)
}

// Label masks the literal secret values in a label, and nothing else: the
// name patterns and the Bearer rule apply to values, and would rewrite a
// label such as "View a model with basic data".
func (r *Rule) Label(s string) string { return r.values.String(s) }

// String returns s with every secret masked.
func (r *Rule) String(s string) string {
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
		return sub[1] + sub[2] + Mask
	})
	return s
}

// named masks the value group of every match of re whose name group is a
// secret name.
func (r *Rule) named(re *regexp.Regexp, s string, nameGroup, valueGroup int) string {
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
		b.WriteString(Mask)
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
// last line of defence: the pipeline masks every value before it reaches
// a writer, and this catches what slipped through. It reports whether it
// changed anything.
func (r *Rule) Bytes(b []byte) ([]byte, bool) {
	changed := false
	for _, v := range r.values.List() {
		forms := []string{v, html.EscapeString(v)}
		if j, err := json.Marshal(v); err == nil {
			forms = append(forms, string(j[1:len(j)-1]))
		}
		for _, f := range forms {
			if bytes.Contains(b, []byte(f)) {
				b = bytes.ReplaceAll(b, []byte(f), []byte(Mask))
				changed = true
			}
		}
	}
	return b, changed
}

// RedactYAML masks the values of secret headers, cookies and variables in
// a YAML plan and returns the masked text and the literal secret values
// found (for NewRule). Headers may be written as a mapping
// (`Authorization: x`) or as a list of {name, value} mappings; every value
// under a `cookies:` mapping is a cookie's, so secret. A plan that does not
// parse as YAML is masked line by line.
func RedactYAML(src []byte, names []string) (string, []string) {
	probe := NewRule(names, nil)
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
					found = append(found, LiteralParts(c.Value)...)
					c.Value, c.Style = Mask, yaml.SingleQuotedStyle
				}
			}
			return
		}
		found = append(found, LiteralParts(v.Value)...)
		v.Value, v.Style, v.Tag = Mask, yaml.SingleQuotedStyle, "!!str"
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
				if k.Value == "cookies" && v.Kind == yaml.MappingNode {
					for j := 1; j < len(v.Content); j += 2 {
						if v.Content[j].Kind == yaml.ScalarNode && v.Content[j].Value != Mask {
							mark(v.Content[j])
						}
					}
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
	return NewRule(nil, found).Literal(buf.String()), found
}

// Values returns the rule's literal values (encoded forms included),
// longest first. The slice must not be modified.
func (r *Rule) Values() []string { return r.values.List() }
