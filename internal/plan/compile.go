package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/plan/expr"
	"gopkg.in/yaml.v3"
)

// Compiling templates: ${env.NAME} substitution, ${var} parts with their
// file positions, and json: bodies.

// expand substitutes ${env.NAME} in a scalar that is not a template and
// turns $${ into ${. Any other ${...} is an error: only templates (URLs,
// headers, bodies) can use run-time variables.
func (d *decoder) expand(n *yaml.Node, key string) (string, bool) {
	if !strings.Contains(n.Value, "${") {
		return n.Value, true
	}
	pieces, off, msg := scanTemplate(n.Value)
	if msg != "" {
		d.errAt(d.refPos(n, off), n, key+": "+msg)
		return "", false
	}
	var b strings.Builder
	ok := true
	for _, pc := range pieces {
		if pc.ref == nil {
			b.WriteString(pc.lit)
			continue
		}
		if v, found := d.env(n, pc.ref); found {
			b.WriteString(v)
			continue
		} else if _, _, _, isEnv := envRef(pc.ref.name); isEnv {
			ok = false
			continue
		}
		d.errAt(d.refPos(n, pc.ref.offset), n, fmt.Sprintf("%s: ${%s} cannot be used here; only ${env.NAME} is substituted in %s (write $${ for a literal ${)", key, pc.ref.name, key))
		ok = false
	}
	return b.String(), ok
}

// env resolves an ${env.NAME} reference; it reports undefined variables and
// returns found=false for them and for references that are not env.
func (d *decoder) env(n *yaml.Node, r *tmplRef) (string, bool) {
	name, def, hasDef, isEnv := envRef(r.name)
	if !isEnv {
		return "", false
	}
	if name == "" {
		d.errAt(d.refPos(n, r.offset), n, fmt.Sprintf("${%s}: missing environment variable name", r.name))
		return "", false
	}
	if d.opt.Env != nil {
		if v, ok := d.opt.Env(name); ok {
			return v, true
		}
	}
	if hasDef {
		return def, true
	}
	d.errAt(d.refPos(n, r.offset), n, fmt.Sprintf("environment variable %s is not set (${env.%s}; give a default with ${env.%s:-value})", name, name, name))
	return "", false
}

// refPos is the file position of byte offset off inside scalar n's value.
// yaml.v3 gives only the scalar's start, so the offset is mapped back onto
// the source line; when the source cannot be matched (escapes, folding,
// --set values) the estimate is kept.
func (d *decoder) refPos(n *yaml.Node, off int) Pos {
	p := d.pos(n)
	if d.origin[n] != "" || off < 0 || off > len(n.Value) {
		return p
	}
	before := n.Value[:off]
	switch n.Style {
	case yaml.LiteralStyle, yaml.FoldedStyle:
		p.Line += 1 + strings.Count(before, "\n")
		p.Col = 1
		if i := strings.LastIndexByte(before, '\n'); i >= 0 {
			before = before[i+1:]
		}
		if line, ok := d.line(p.Line); ok {
			indent := len(line) - len(strings.TrimLeft(line, " "))
			p.Col = indent + 1 + utf8.RuneCountInString(before)
		}
		return p
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		p.Col++
	}
	if strings.Contains(before, "\n") {
		return d.pos(n)
	}
	p.Col += utf8.RuneCountInString(before)
	// Escapes in quoted strings shift columns: when the estimate does not
	// land on a "${" in the source, take the first "${" after the scalar's
	// start instead.
	line, ok := d.line(p.Line)
	if !ok {
		return p
	}
	rs := []rune(line)
	if c := p.Col - 1; c+1 < len(rs) && rs[c] == '$' && rs[c+1] == '{' {
		return p
	}
	if start := n.Column - 1; start >= 0 && start < len(rs) {
		if i := strings.Index(string(rs[start:]), "${"); i >= 0 {
			p.Col = n.Column + utf8.RuneCountInString(string(rs[start:])[:i])
		}
	}
	return p
}

// line returns source line l (1-based).
func (d *decoder) line(l int) (string, bool) {
	if d.lines == nil {
		d.lines = strings.Split(string(d.src), "\n")
	}
	if l < 1 || l > len(d.lines) {
		return "", false
	}
	return strings.TrimRight(d.lines[l-1], "\r"), true
}

// template compiles a scalar into a Template: ${env.NAME} is substituted
// now, other references become variable parts checked once the plan is
// complete.
func (d *decoder) template(n *yaml.Node, key string, jsonEsc bool) (Template, bool) {
	n = d.resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		d.typeErr(n, key, "text")
		return Template{}, false
	}
	var b partBuilder
	ok := d.templateParts(n, key, jsonEsc, &b)
	parts := b.done()
	if len(parts) == 0 && n.Value != "" {
		// The whole value was ${env.X:-} with X unset: it is empty, not
		// its raw text (a template without parts is read from Raw).
		parts = []Part{{Lit: ""}}
	}
	return Template{Raw: n.Value, Parts: parts}, ok
}

// partBuilder accumulates template parts, merging adjacent literals in a
// builder so that large JSON bodies compile in linear time.
type partBuilder struct {
	parts []Part
	lit   strings.Builder
}

func (b *partBuilder) literal(s string) { b.lit.WriteString(s) }

func (b *partBuilder) variable(p Part) {
	b.flush()
	b.parts = append(b.parts, p)
}

func (b *partBuilder) flush() {
	if b.lit.Len() > 0 {
		b.parts = append(b.parts, Part{Lit: b.lit.String()})
		b.lit.Reset()
	}
}

func (b *partBuilder) done() []Part {
	b.flush()
	return b.parts
}

// templateParts adds scalar n's text to b. With jsonEsc the literal text is
// escaped for the inside of a JSON string and variable parts are marked
// JSONEscape.
func (d *decoder) templateParts(n *yaml.Node, key string, jsonEsc bool, b *partBuilder) bool {
	pieces, off, msg := scanTemplate(n.Value)
	if msg != "" {
		d.errAt(d.refPos(n, off), n, key+": "+msg)
		return false
	}
	lit := func(s string) {
		if jsonEsc {
			s = string(appendJSONEscaped(nil, s))
		}
		b.literal(s)
	}
	ok := true
	for _, pc := range pieces {
		if pc.ref == nil {
			lit(pc.lit)
			continue
		}
		if _, _, _, isEnv := envRef(pc.ref.name); isEnv {
			v, found := d.env(n, pc.ref)
			ok = ok && found
			lit(v)
			continue
		}
		name := pc.ref.name
		typ := ""
		if base, t, found := cutType(name); found {
			if !d.typedOK {
				d.errAt(d.refPos(n, pc.ref.offset), n, fmt.Sprintf("${%s}: a type (:%s) applies only to a whole json: value such as qty: \"${n:int}\"", name, t))
				ok = false
				continue
			}
			name, typ = base, t
		}
		if isExprRef(name) {
			x, err := expr.Parse(name)
			if err != nil {
				var ee *expr.Error
				off := pc.ref.offset
				if errors.As(err, &ee) {
					off += 2 + ee.Off
				}
				d.errAt(d.refPos(n, off), n, fmt.Sprintf("${%s}: %v", name, err))
				ok = false
				continue
			}
			for _, v := range x.Vars() {
				d.refs = append(d.refs, varRef{name: v, pos: d.refPos(n, pc.ref.offset), node: n, wl: d.wl})
			}
			b.variable(Part{Expr: name, JSONEscape: jsonEsc, Type: typ})
			continue
		}
		feeder, col, dotted := strings.Cut(name, ".")
		if !isIdent(feeder) || (dotted && col == "") {
			d.errAt(d.refPos(n, pc.ref.offset), n, fmt.Sprintf("bad variable name ${%s}: use ${name} or ${data.column}", name))
			ok = false
			continue
		}
		d.refs = append(d.refs, varRef{name: name, pos: d.refPos(n, pc.ref.offset), node: n, wl: d.wl})
		b.variable(Part{Var: name, JSONEscape: jsonEsc, Type: typ})
	}
	return ok
}

// JSON value types a json: reference may carry ("${n:int}").
var jsonTypes = map[string]bool{"int": true, "number": true, "bool": true, "json": true}

// cutType splits "n:int" into "n" and "int" when the suffix is a JSON type.
func cutType(name string) (string, string, bool) {
	i := strings.LastIndexByte(name, ':')
	if i < 0 || !jsonTypes[strings.TrimSpace(name[i+1:])] {
		return name, "", false
	}
	return strings.TrimSpace(name[:i]), strings.TrimSpace(name[i+1:]), true
}

// isExprRef reports whether a reference is an expression (a function call
// or anything but a plain name or data.column).
func isExprRef(name string) bool {
	return strings.ContainsAny(name, "()\"' ")
}

// maxJSONBody bounds a json: body after alias expansion.
const maxJSONBody = 16 << 20

// jsonTemplate encodes any YAML value as a JSON template: mappings become
// objects (key order kept), lists arrays, strings JSON strings whose
// ${var}s are rendered JSON-escaped; numbers, booleans and null keep their
// type.
func (d *decoder) jsonTemplate(n *yaml.Node) *Template {
	var b partBuilder
	d.jsonValue(n, &b, 0)
	parts := b.done()
	var raw strings.Builder
	for _, p := range parts {
		switch {
		case p.Var != "" || p.Expr != "":
			ref := p.Var + p.Expr
			if p.Type != "" {
				ref += ":" + p.Type
			}
			raw.WriteString("${" + ref + "}")
		default:
			raw.WriteString(p.Lit)
		}
	}
	return &Template{Raw: raw.String(), Parts: parts}
}

func (d *decoder) jsonValue(n *yaml.Node, b *partBuilder, depth int) {
	n = d.resolve(n)
	if depth > 100 {
		d.errorf(n, "json: nested too deeply")
		return
	}
	if b.lit.Len() > maxJSONBody {
		d.errorf(n, "json: body larger than %d MiB", maxJSONBody>>20)
		return
	}
	switch {
	case n == nil || isNull(n):
		b.literal("null")
		return
	case n.Kind == yaml.MappingNode:
		b.literal("{")
		for i, p := range d.pairs(n) {
			if i > 0 {
				b.literal(",")
			}
			b.literal(`"`)
			d.templateParts(p.key, "json", true, b)
			b.literal(`":`)
			d.jsonValue(p.val, b, depth+1)
		}
		b.literal("}")
		return
	case n.Kind == yaml.SequenceNode:
		b.literal("[")
		for i, item := range n.Content {
			if i > 0 {
				b.literal(",")
			}
			d.jsonValue(item, b, depth+1)
		}
		b.literal("]")
		return
	}
	switch n.ShortTag() {
	case "!!bool", "!!int", "!!float":
		var v any
		if err := n.Decode(&v); err != nil {
			d.errorf(n, "json: cannot read %s: %v", describe(n), err)
			return
		}
		out, err := json.Marshal(v)
		if err != nil {
			d.errorf(n, "json: %s cannot be written as JSON", describe(n))
			return
		}
		b.literal(string(out))
		return
	}
	if typed := typedRef(n.Value); typed {
		// "${n:int}": the value is sent as a number, boolean or raw JSON.
		d.typedOK = true
		d.templateParts(n, "json", true, b)
		d.typedOK = false
		return
	}
	b.literal(`"`)
	d.templateParts(n, "json", true, b)
	b.literal(`"`)
}

// typedRef reports whether s is exactly one reference with a JSON type,
// such as "${qty:int}".
func typedRef(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "${") || refEnd(s[2:]) != len(s)-3 {
		return false
	}
	_, _, ok := cutType(strings.TrimSpace(s[2 : len(s)-1]))
	return ok
}
