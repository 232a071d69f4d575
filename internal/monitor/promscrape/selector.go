package promscrape

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Selector picks series by metric name and label matchers, in the PromQL
// instant-vector notation: `name`, `name{label="v", l2!="x", l3=~"re",
// l4!~"re"}` or `{__name__=~"node_.*"}`. Regular expressions are anchored
// at both ends, as in Prometheus.
type Selector struct {
	Name     string // empty: any name (then a __name__ matcher is required)
	Matchers []Matcher
}

// Matcher is one label condition.
type Matcher struct {
	Label, Op, Value string
	re               *regexp.Regexp
}

// ParseSelector parses one selector.
func ParseSelector(s string) (Selector, error) {
	var sel Selector
	in := strings.TrimSpace(s)
	name := in
	rest := ""
	if i := strings.IndexByte(in, '{'); i >= 0 {
		name, rest = strings.TrimSpace(in[:i]), in[i:]
		if !strings.HasSuffix(rest, "}") {
			return sel, fmt.Errorf("selector %q: missing closing }", s)
		}
		rest = rest[1 : len(rest)-1]
	}
	if name != "" && !validName(name) {
		return sel, fmt.Errorf("selector %q: bad metric name %q", s, name)
	}
	sel.Name = name
	for p := strings.TrimSpace(rest); p != ""; {
		m, tail, err := parseMatcher(p)
		if err != nil {
			return sel, fmt.Errorf("selector %q: %w", s, err)
		}
		sel.Matchers = append(sel.Matchers, m)
		p = strings.TrimSpace(tail)
		if p == "" {
			break
		}
		if p[0] != ',' {
			return sel, fmt.Errorf("selector %q: expected , between matchers at %q", s, p)
		}
		p = strings.TrimSpace(p[1:])
	}
	if sel.Name == "" {
		named := false
		for _, m := range sel.Matchers {
			named = named || m.Label == "__name__"
		}
		if !named {
			return sel, fmt.Errorf("selector %q: needs a metric name or a __name__ matcher", s)
		}
	}
	return sel, nil
}

func parseMatcher(p string) (Matcher, string, error) {
	var m Matcher
	i := 0
	for i < len(p) && (isNameByte(p[i]) || (i > 0 && p[i] >= '0' && p[i] <= '9')) {
		i++
	}
	if i == 0 {
		return m, "", fmt.Errorf("expected a label name at %q", p)
	}
	m.Label = p[:i]
	p = strings.TrimSpace(p[i:])
	for _, op := range []string{"=~", "!~", "!=", "="} {
		if strings.HasPrefix(p, op) {
			m.Op = op
			p = strings.TrimSpace(p[len(op):])
			break
		}
	}
	if m.Op == "" {
		return m, "", fmt.Errorf("expected =, !=, =~ or !~ after %s", m.Label)
	}
	if p == "" || (p[0] != '"' && p[0] != '\'' && p[0] != '`') {
		return m, "", fmt.Errorf("label %s: value must be quoted", m.Label)
	}
	q, err := strconv.QuotedPrefix(p)
	if err != nil {
		return m, "", fmt.Errorf("label %s: %w", m.Label, err)
	}
	if m.Value, err = strconv.Unquote(q); err != nil {
		return m, "", fmt.Errorf("label %s: %w", m.Label, err)
	}
	if m.Op == "=~" || m.Op == "!~" {
		if m.re, err = regexp.Compile("^(?:" + m.Value + ")$"); err != nil {
			return m, "", fmt.Errorf("label %s: %w", m.Label, err)
		}
	}
	return m, p[len(q):], nil
}

func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
}

func validName(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameByte(s[i]) && !(i > 0 && s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return s != ""
}

// Matches tests a series: its metric (family) name and labels. A missing
// label has the empty value, as in Prometheus.
func (s Selector) Matches(name string, label func(string) string) bool {
	if s.Name != "" && s.Name != name {
		return false
	}
	for _, m := range s.Matchers {
		v := name
		if m.Label != "__name__" {
			v = label(m.Label)
		}
		var ok bool
		switch m.Op {
		case "=":
			ok = v == m.Value
		case "!=":
			ok = v != m.Value
		case "=~":
			ok = m.re.MatchString(v)
		case "!~":
			ok = !m.re.MatchString(v)
		}
		if !ok {
			return false
		}
	}
	return true
}
