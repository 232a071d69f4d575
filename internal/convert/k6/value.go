package k6

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"

	"github.com/plateau-perf/plateau/internal/convert"
)

// kind is what the converter knows of a JavaScript value.
type kind int

const (
	kUndef   kind = iota
	kNull         // null
	kStr          // a string: segs (literal text and plan references)
	kNum          // a number: f when lit, else segs
	kBool         // a boolean: b when lit
	kObj          // an object literal
	kArr          // an array literal
	kResp         // an http response (req)
	kJSON         // a value inside a response's JSON (req, path)
	kHeader       // a response header (req, name)
	kData         // a SharedArray (feed)
	kRow          // one element of a SharedArray (feed)
	kFunc         // a function (fn, closure)
	kMod          // a module, a global or one of their members (name)
	kUnknown      // not convertible (why)
)

// seg is one piece of a string: literal text, or a plan reference (the
// text inside ${…}).
type seg struct {
	lit string
	ref string
}

type value struct {
	k     kind
	segs  []seg
	f     float64
	b     bool
	lit   bool // the value is a constant (f, b or literal segs)
	keys  []string
	m     map[string]*value
	items []*value
	req   *convert.Request
	path  []string
	name  string
	feed  *feeder
	fn    *fnDef
	why   string
	env   string // kStr: the value is exactly ${env.<env>} (no default yet)
}

type fnDef struct {
	s      *Script // the file it is written in
	name   string
	params *ast.ParameterList
	body   ast.ConciseBody
	scope  *scope
}

type scope struct {
	vars   map[string]*value
	parent *scope
}

func newScope(parent *scope) *scope { return &scope{vars: map[string]*value{}, parent: parent} }

func (s *scope) get(name string) (*value, bool) {
	for ; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v, true
		}
	}
	return nil, false
}

func (s *scope) set(name string, v *value) bool {
	for x := s; x != nil; x = x.parent {
		if _, ok := x.vars[name]; ok {
			x.vars[name] = v
			return true
		}
	}
	return false
}

var undef = &value{k: kUndef, lit: true}

func str(s string) *value    { return &value{k: kStr, segs: []seg{{lit: s}}, lit: true} }
func num(f float64) *value   { return &value{k: kNum, f: f, lit: true} }
func boolean(b bool) *value  { return &value{k: kBool, b: b, lit: true} }
func ref(r string) *value    { return &value{k: kStr, segs: []seg{{ref: r}}} }
func numRef(r string) *value { return &value{k: kNum, segs: []seg{{ref: r}}} }
func mod(name string) *value { return &value{k: kMod, name: name} }
func unknown(why string) *value {
	return &value{k: kUnknown, why: why}
}

// text is the literal text of a constant value.
func (v *value) text() (string, bool) {
	switch v.k {
	case kStr:
		var b strings.Builder
		for _, s := range v.segs {
			if s.ref != "" {
				return "", false
			}
			b.WriteString(s.lit)
		}
		return b.String(), true
	case kNum:
		if !v.lit {
			return "", false
		}
		return fmtNum(v.f), true
	case kBool:
		if !v.lit {
			return "", false
		}
		return strconv.FormatBool(v.b), true
	case kNull:
		return "null", true
	case kUndef:
		return "undefined", true
	}
	return "", false
}

// fmtNum formats a number as JavaScript's String(n) does for the values
// scripts write.
func fmtNum(f float64) string {
	if math.IsInf(f, 1) {
		return "Infinity"
	}
	if math.IsInf(f, -1) {
		return "-Infinity"
	}
	if math.IsNaN(f) {
		return "NaN"
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// template renders segments as a plan template.
func template(segs []seg) string {
	var b strings.Builder
	for _, s := range segs {
		if s.ref != "" {
			b.WriteString("${" + s.ref + "}")
		} else {
			b.WriteString(convert.EscapeLiteral(s.lit))
		}
	}
	return b.String()
}

// jsonText renders a value as JSON.stringify would, with plan references
// where the value is only known at run time.
func (c *conv) jsonText(v *value, depth int) (string, bool) {
	if depth > 32 {
		return "", false
	}
	switch v.k {
	case kNull:
		return "null", true
	case kBool:
		if v.lit {
			return strconv.FormatBool(v.b), true
		}
		return template(v.segs), true
	case kNum:
		if v.lit {
			if math.IsInf(v.f, 0) || math.IsNaN(v.f) {
				return "null", true
			}
			return fmtNum(v.f), true
		}
		return template(v.segs), true
	case kJSON:
		// The value as the response held it — a number stays a number, a
		// string keeps its quotes — as k6's JSON.stringify sends it.
		return "${" + c.extractJSONRaw(v.req, v.path) + "}", true
	case kStr, kRow, kHeader:
		segs, ok := c.segsOf(v)
		if !ok {
			return "", false
		}
		var b strings.Builder
		b.WriteByte('"')
		for _, s := range segs {
			if s.ref != "" {
				b.WriteString("${" + s.ref + "}")
				continue
			}
			q := jsonQuote(s.lit)
			b.WriteString(convert.EscapeLiteral(q[1 : len(q)-1]))
		}
		b.WriteByte('"')
		return b.String(), true
	case kArr:
		parts := make([]string, 0, len(v.items))
		for _, it := range v.items {
			if it.k == kUndef || it.k == kFunc {
				parts = append(parts, "null")
				continue
			}
			t, ok := c.jsonText(it, depth+1)
			if !ok {
				return "", false
			}
			parts = append(parts, t)
		}
		return "[" + strings.Join(parts, ",") + "]", true
	case kObj:
		parts := make([]string, 0, len(v.keys))
		for _, k := range v.keys {
			it := v.m[k]
			if it.k == kUndef || it.k == kFunc {
				continue
			}
			t, ok := c.jsonText(it, depth+1)
			if !ok {
				return "", false
			}
			q := jsonQuote(k)
			parts = append(parts, convert.EscapeLiteral(q)+":"+t)
		}
		return "{" + strings.Join(parts, ",") + "}", true
	}
	return "", false
}

func jsonQuote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// truthy is the constant truth of a value, when known.
func (v *value) truthy() (bool, bool) {
	switch v.k {
	case kUndef, kNull:
		return false, true
	case kBool:
		return v.b, v.lit
	case kNum:
		return v.f != 0 && !math.IsNaN(v.f), v.lit
	case kStr:
		if t, ok := v.text(); ok {
			return t != "", true
		}
	case kObj, kArr, kFunc:
		return true, true
	}
	return false, false
}

// parseTemplate splits a plan template back into segments.
func parseTemplate(t string) []seg {
	var out []seg
	var lit strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '$' && strings.HasPrefix(t[i:], "$${") {
			lit.WriteString("${")
			i += 2
			continue
		}
		if t[i] == '$' && strings.HasPrefix(t[i:], "${") {
			end := strings.IndexByte(t[i:], '}')
			if end > 0 {
				if lit.Len() > 0 {
					out = append(out, seg{lit: lit.String()})
					lit.Reset()
				}
				out = append(out, seg{ref: t[i+2 : i+end]})
				i += end
				continue
			}
		}
		lit.WriteByte(t[i])
	}
	if lit.Len() > 0 || len(out) == 0 {
		out = append(out, seg{lit: lit.String()})
	}
	return out
}
