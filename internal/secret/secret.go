// Package secret masks secret values in text that leaves a run: failure
// messages, URLs, labels' examples, plan copies and report text. It knows
// secrets by value (a token, a password), not by name; which names are
// secret is IsName's rule (names.go).
//
// Two rules make a mask safe against cut text. Callers mask before they
// cut (an error excerpt is cut after masking, never before), and a value
// cut at the edge of a text — the text ends with a prefix of a secret, or
// begins with its suffix, of at least MinEdge bytes — is masked too, so a
// copy cut by another tool (or by a window) never shows its first bytes.
package secret

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Mask replaces every secret value.
const Mask = "***"

// MinLen is the shortest value masked: shorter ones ("1", "on") would mask
// ordinary text and are no credential anyway.
const MinLen = 4

// MinEdge is the shortest part of a secret masked at a cut edge.
const MinEdge = 8

// Values is a set of secret values, longest first, in the forms a writer or
// server may have encoded them to (JSON string, URL query). It is immutable
// and safe for concurrent use once built.
type Values struct {
	v []string
}

// NewValues returns the set of vals (each trimmed; shorter than MinLen
// dropped) and their encoded forms.
func NewValues(vals ...string) *Values {
	var s Values
	for _, v := range vals {
		s.add(v)
	}
	s.sort()
	return &s
}

func (s *Values) add(v string) {
	v = strings.TrimSpace(v)
	if len(v) < MinLen || v == Mask {
		return
	}
	s.v = append(s.v, v)
	if j, err := json.Marshal(v); err == nil && string(j[1:len(j)-1]) != v {
		s.v = append(s.v, string(j[1:len(j)-1]))
	}
	if q := url.QueryEscape(v); q != v {
		s.v = append(s.v, q)
	}
}

func (s *Values) sort() {
	slices.SortFunc(s.v, func(a, b string) int {
		if len(a) != len(b) {
			return len(b) - len(a)
		}
		return strings.Compare(a, b)
	})
	s.v = slices.Compact(s.v)
}

// Len is the number of values (encoded forms included).
func (s *Values) Len() int { return len(s.v) }

// List returns the values, longest first. The slice must not be modified.
func (s *Values) List() []string { return s.v }

// String returns t with every value masked, whole or cut at either end of t.
func (s *Values) String(t string) string { return String(t, s.v) }

// String masks every value of vals in t (longest values first when vals is
// so ordered), then a value cut at either edge of t (see Edges). It
// allocates only when it changes t.
func String(t string, vals []string) string {
	if t == "" {
		return t
	}
	for _, v := range vals {
		if len(v) >= MinLen && strings.Contains(t, v) {
			t = strings.ReplaceAll(t, v, Mask)
		}
	}
	return Edges(t, vals)
}

// ellipses are the marks a cut text may end with.
var ellipses = []string{"…", "...", "[truncated]"}

// Edges masks a secret cut by the end of t (t ends with a prefix of a value,
// before an optional ellipsis) or by its start (t begins with a suffix of a
// value), when at least MinEdge bytes of it remain.
func Edges(t string, vals []string) string {
	if len(t) < MinEdge {
		return t
	}
	body, tail := t, ""
	for _, e := range ellipses {
		if strings.HasSuffix(body, e) {
			body, tail = body[:len(body)-len(e)], e
			break
		}
	}
	// End edge: the longest prefix of a value that ends body.
	best := 0
	for _, v := range vals {
		for n := min(len(v)-1, len(body)); n >= MinEdge && n > best; n-- {
			if body[len(body)-n:] == v[:n] {
				best = n
				break
			}
		}
	}
	if best > 0 {
		body = body[:len(body)-best] + Mask
	}
	// Start edge: the longest suffix of a value that starts body.
	best = 0
	for _, v := range vals {
		for n := min(len(v)-1, len(body)); n >= MinEdge && n > best; n-- {
			if body[:n] == v[len(v)-n:] {
				best = n
				break
			}
		}
	}
	if best > 0 {
		body = Mask + body[best:]
	}
	if tail == "" && len(body) == len(t) && body == t {
		return t
	}
	return body + tail
}

// Cut masks vals in t, then cuts it to at most max bytes (on a rune
// boundary) marked with "…", then masks a secret the cut split. This is
// the order a bounded excerpt must be made in: masking after the cut would
// miss a secret the cut shortened.
func Cut(t string, max int, vals []string) string {
	t = String(t, vals)
	if len(t) <= max {
		return t
	}
	i := max
	for i > 0 && !runeStart(t[i]) {
		i--
	}
	return Edges(t[:i]+"…", vals)
}

func runeStart(b byte) bool { return b&0xC0 != 0x80 }
