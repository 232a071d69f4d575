package datagen

import (
	"fmt"
	"math"
	"strings"
)

// link resolves parents, ids, refs and template references, once every
// entity is known (an entity may name a parent declared after it).
func (p *parser) link(s *Spec) {
	byName := map[string]*Entity{}
	files := map[string]*Entity{}
	var names []string
	for _, e := range s.Entities {
		byName[e.Name] = e
		names = append(names, e.Name)
		if prev := files[e.File]; prev != nil {
			p.errs = append(p.errs, Error{File: p.file, Pos: e.Pos, Msg: fmt.Sprintf("entity %s writes %s, as entity %s does", e.Name, e.File, prev.Name)})
		}
		files[e.File] = e
	}
	for _, e := range s.Entities {
		if e.Parent == "" {
			continue
		}
		par := byName[e.Parent]
		if par == nil {
			msg := fmt.Sprintf("entity %s: parent %q is not an entity of this spec", e.Name, e.Parent)
			if sg := suggest(e.Parent, names); sg != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", sg)
			}
			p.errs = append(p.errs, Error{File: p.file, Pos: e.Pos, Msg: msg})
			continue
		}
		e.parent = par
	}
	// Cycles: following parents from any entity must reach a root.
	for _, e := range s.Entities {
		seen := map[*Entity]bool{}
		for a := e; a != nil; a = a.parent {
			if seen[a] {
				p.errs = append(p.errs, Error{File: p.file, Pos: e.Pos, Msg: fmt.Sprintf("entity %s: its parents form a cycle", e.Name)})
				e.parent = nil
				break
			}
			seen[a] = true
		}
	}
	for _, e := range s.Entities {
		if e.parent != nil {
			e.parent.children = append(e.parent.children, e)
		}
	}
	for _, e := range s.Entities {
		p.linkID(e)
	}
	for _, e := range s.Entities {
		p.linkFields(s, e, byName)
	}
}

// linkID sets and checks the entity's id field.
func (p *parser) linkID(e *Entity) {
	if e.ID == "" {
		for _, f := range e.Fields {
			if f.Type == "seq" {
				e.ID = f.Name
				return
			}
		}
		return
	}
	f := e.field(e.ID)
	switch {
	case f == nil:
		p.errs = append(p.errs, Error{File: p.file, Pos: e.Pos, Msg: fmt.Sprintf("entity %s: id %q is not one of its fields", e.Name, e.ID)})
	case f.Type != "seq":
		p.errs = append(p.errs, Error{File: p.file, Pos: f.Pos, Msg: fmt.Sprintf("entity %s: its id %s must be a seq field (a ref yields it by row number)", e.Name, e.ID)})
	}
}

func (e *Entity) field(name string) *Field {
	for _, f := range e.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// fieldIndex is the index of a field among the first n fields, or -1.
func (e *Entity) fieldIndex(name string, n int) int {
	for i, f := range e.Fields[:min(n, len(e.Fields))] {
		if f.Name == name {
			return i
		}
	}
	return -1
}

func (p *parser) errAt(f *Field, format string, args ...any) {
	p.errs = append(p.errs, Error{File: p.file, Pos: f.Pos, Msg: fmt.Sprintf(format, args...)})
}

func (p *parser) linkFields(s *Spec, e *Entity, byName map[string]*Entity) {
	for i, f := range e.Fields {
		switch f.Type {
		case "parent":
			a, name := e, f.Field
			for {
				if a.parent == nil {
					if a.Parent == "" {
						p.errAt(f, "field %s: entity %s has no parent", f.Name, a.Name)
					}
					a = nil
					break
				}
				a = a.parent
				rest, deeper := strings.CutPrefix(name, "parent.")
				if !deeper {
					break
				}
				name = rest
			}
			if a != nil {
				if src := a.field(name); src == nil {
					p.errAt(f, "field %s: %s has no field %q%s", f.Name, a.Name, name, didYouMean(name, a))
				} else {
					f.Decimals = src.Decimals // a copied float keeps its precision
				}
			}
		case "ref":
			t := byName[f.Entity]
			switch {
			case t == nil:
				p.errAt(f, "field %s: ref: %q is not an entity of this spec", f.Name, f.Entity)
			case t.parent != nil || t.Parent != "":
				p.errAt(f, "field %s: ref: %s has a parent, so its row count is only known once made; refer to a root entity (with count)", f.Name, t.Name)
			case t.ID == "":
				p.errAt(f, "field %s: ref: %s has no seq field to refer to (give it one, or id: FIELD)", f.Name, t.Name)
			case t.rows(s.Scale) == 0:
				p.errAt(f, "field %s: ref: %s has no rows", f.Name, t.Name)
			}
		case "template":
			for _, ref := range templateRefs(f.Template) {
				if ref.bad != "" {
					p.errAt(f, "field %s: template: %s", f.Name, ref.bad)
					continue
				}
				p.checkRef(e, i, f, ref.path)
			}
		}
	}
}

// checkRef checks a template reference "field", "parent.field",
// "parent.parent.field" against the entity's earlier fields and its
// ancestors' fields.
func (p *parser) checkRef(e *Entity, idx int, f *Field, path []string) {
	a := e
	for _, step := range path[:len(path)-1] {
		if step != "parent" {
			p.errAt(f, "field %s: template: ${%s}: write ${field} or ${parent.field}", f.Name, strings.Join(path, "."))
			return
		}
		if a.parent == nil {
			if a.Parent == "" {
				p.errAt(f, "field %s: template: ${%s}: entity %s has no parent", f.Name, strings.Join(path, "."), a.Name)
			}
			return
		}
		a = a.parent
	}
	name := path[len(path)-1]
	if a == e {
		switch {
		case e.fieldIndex(name, idx) >= 0:
		case e.field(name) != nil:
			p.errAt(f, "field %s: template: ${%s} is made after this field; list it first", f.Name, name)
		default:
			p.errAt(f, "field %s: template: ${%s}: no earlier field %q in %s%s", f.Name, name, name, e.Name, didYouMean(name, e))
		}
		return
	}
	if a.field(name) == nil {
		p.errAt(f, "field %s: template: ${%s}: %s has no field %q%s", f.Name, strings.Join(path, "."), a.Name, name, didYouMean(name, a))
	}
}

func didYouMean(name string, e *Entity) string {
	var names []string
	for _, f := range e.Fields {
		names = append(names, f.Name)
	}
	if s := suggest(name, names); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	return ""
}

// tmplRef is one ${…} of a template: its dotted path, or why it is bad.
type tmplRef struct {
	path       []string
	bad        string
	start, end int // byte offsets of "${" and after "}"
}

// templateRefs finds the ${…} references of a template; $${ is a literal ${.
func templateRefs(t string) []tmplRef {
	var out []tmplRef
	for i := 0; i < len(t); i++ {
		if t[i] != '$' || i+1 >= len(t) {
			continue
		}
		if t[i+1] == '$' && i+2 < len(t) && t[i+2] == '{' {
			i += 2
			continue
		}
		if t[i+1] != '{' {
			continue
		}
		end := strings.IndexByte(t[i:], '}')
		if end < 0 {
			out = append(out, tmplRef{bad: "unclosed ${", start: i, end: len(t)})
			return out
		}
		inner := strings.TrimSpace(t[i+2 : i+end])
		r := tmplRef{start: i, end: i + end + 1, path: strings.Split(inner, ".")}
		for _, s := range r.path {
			if !isName(s) {
				r.bad = fmt.Sprintf("${%s} is not a field name or parent.field", inner)
			}
		}
		out = append(out, r)
		i += end
	}
	return out
}

// mean is the distribution's mean before rounding and clamping, for the
// expected row counts shown before generating.
func (d Dist) mean() float64 {
	switch d.Kind {
	case "fixed":
		return d.Value
	case "uniform":
		return (d.Min + d.Max) / 2
	case "normal", "poisson", "exponential":
		return d.Mean
	case "binomial":
		return float64(d.N) * d.P
	case "lognormal":
		return math.Exp(d.Mean + d.SD*d.SD/2)
	case "zipf":
		// Σ k·k^-s / Σ k^-s over the range, offset by min.
		lo, hi := 0.0, d.Max-d.Min
		var num, den float64
		for k := lo; k <= hi && k-lo < 1e6; k++ {
			w := math.Pow(k+1, -d.S)
			num += k * w
			den += w
		}
		return d.Min + num/den
	}
	return 0
}
