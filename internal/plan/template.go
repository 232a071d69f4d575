package plan

import (
	"strings"

	"github.com/plateau-perf/plateau/internal/jsonesc"
)

// Built-in variables, defined in every template without declaring them. The
// engine supplies their values per virtual user and iteration.
const (
	VarUser        = "__user"         // virtual user number, 1-based within its workload
	VarIteration   = "__iteration"    // iteration number of this user, 1-based (0 in setup)
	VarUUID        = "__uuid"         // a fresh random UUID v4 per reference
	VarTimestampMs = "__timestamp_ms" // Unix time in milliseconds when the request is built
)

// IsBuiltin reports whether name is a built-in variable.
func IsBuiltin(name string) bool {
	switch name {
	case VarUser, VarIteration, VarUUID, VarTimestampMs:
		return true
	}
	return false
}

func builtins() []string { return []string{VarUser, VarIteration, VarUUID, VarTimestampMs} }

// Append appends the template rendered with lookup to dst and returns the
// extended slice. Parts with JSONEscape get their value escaped for the
// inside of a JSON string. It is a plain reference renderer; the engine may
// use its own.
func (t *Template) Append(dst []byte, lookup func(name string) string) []byte {
	for _, p := range t.Parts {
		switch {
		case p.Expr != "":
			dst = append(dst, "${"+p.Expr+"}"...) // evaluated by the engine only
		case p.Var == "":
			dst = append(dst, p.Lit...)
		case p.JSONEscape:
			dst = appendJSONEscaped(dst, lookup(p.Var))
		default:
			dst = append(dst, lookup(p.Var)...)
		}
	}
	return dst
}

// String returns the template as written.
func (t *Template) String() string { return t.Raw }

// Vars lists the variables the template references, in order, with repeats.
func (t *Template) Vars() []string {
	var out []string
	for _, p := range t.Parts {
		if p.Var != "" {
			out = append(out, p.Var)
		}
	}
	return out
}

// appendJSONEscaped appends s escaped for use between the quotes of a JSON
// string (the same escapes encoding/json uses, without HTML escaping).
func appendJSONEscaped(dst []byte, s string) []byte { return jsonesc.Append(dst, s, false) }

// tmplRef is one ${...} found while scanning a template: its name and its
// byte offset in the scanned text (for positions).
type tmplRef struct {
	name   string
	offset int
}

// tmplPiece is a scanned piece: literal text, or a reference.
type tmplPiece struct {
	lit string
	ref *tmplRef
}

// scanTemplate splits s into literals and ${...} references. "$${" is a
// literal "${". An unterminated or empty reference is an error whose offset
// is returned with it.
func scanTemplate(s string) ([]tmplPiece, int, string) {
	var out []tmplPiece
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, tmplPiece{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			lit.WriteString("${")
			i += 3
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			lit.WriteByte(s[i])
			i++
			continue
		}
		end := refEnd(s[i+2:])
		if end < 0 {
			return nil, i, "unterminated ${ (close it with }, or write $${ for a literal ${)"
		}
		name := strings.TrimSpace(s[i+2 : i+2+end])
		if name == "" {
			return nil, i, "empty ${} (write $${ for a literal ${)"
		}
		flush()
		out = append(out, tmplPiece{ref: &tmplRef{name: name, offset: i}})
		i += 2 + end + 1
	}
	flush()
	return out, 0, ""
}

// refEnd returns the index of the } that closes a reference whose text
// starts at s, skipping quoted strings and nested ${…} (an expression such
// as ${lower("}")} or ${urlencode(${name})}); −1 when there is none.
func refEnd(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\'':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return -1
			}
			i = j
		case '{':
			depth++
		case '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

// envRef splits "env.NAME" or "env.NAME:-default".
func envRef(name string) (key, def string, hasDef, ok bool) {
	rest, ok := strings.CutPrefix(name, "env.")
	if !ok {
		return "", "", false, false
	}
	key, def, hasDef = strings.Cut(rest, ":-")
	return strings.TrimSpace(key), def, hasDef, true
}

// isIdent reports whether s is a variable or feeder name: a letter or
// underscore, then letters, digits, underscores or hyphens.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}
