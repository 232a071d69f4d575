package datagen

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/brianvoe/gofakeit/v7"
	"github.com/plateau-perf/plateau/internal/plan"
	"gopkg.in/yaml.v3"
)

// maxSpecBytes bounds a spec file: it is hand-written text.
const maxSpecBytes = 4 << 20

// Formats are the output formats.
var Formats = []string{"csv", "ndjson", "json"}

// LoadFile reads and parses the spec at path.
func LoadFile(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, Errors{{File: path, Msg: "cannot read spec: " + err.Error()}}
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, maxSpecBytes+1))
	if err != nil {
		return nil, Errors{{File: path, Msg: "cannot read spec: " + err.Error()}}
	}
	if len(src) > maxSpecBytes {
		return nil, Errors{{File: path, Msg: fmt.Sprintf("spec is larger than %d MiB", maxSpecBytes>>20)}}
	}
	return Parse(path, src)
}

// Parse parses and checks a spec; every problem is reported at once, each
// at its file:line:column.
func Parse(name string, src []byte) (spec *Spec, err error) {
	defer func() {
		// yaml.v3 is fed untrusted text; a panic in it is an error here.
		if r := recover(); r != nil {
			spec, err = nil, Errors{{File: name, Pos: Pos{1, 1}, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}}
		}
	}()
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, Errors{{File: name, Pos: Pos{1, 1}, Msg: "spec is empty"}}
		}
		pe := plan.YAMLSyntaxError(name, src, err)
		return nil, Errors{{File: name, Pos: Pos{pe.Pos.Line, pe.Pos.Col}, Msg: pe.Msg}}
	}
	p := &parser{file: name}
	s := p.spec(&doc)
	if len(p.errs) > 0 {
		return nil, p.errs.sorted()
	}
	s.File = name
	return s, nil
}

type parser struct {
	file string
	errs Errors
	// budget bounds the alias expansions, against "billion laughs".
	budget int
}

func (p *parser) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{1, 1}
	}
	return Pos{max(n.Line, 1), max(n.Column, 1)}
}

func (p *parser) errorf(n *yaml.Node, format string, args ...any) {
	p.errs = append(p.errs, Error{File: p.file, Pos: p.pos(n), Msg: fmt.Sprintf(format, args...)})
}

// resolve follows aliases (within a budget) and unwraps documents.
func (p *parser) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && (n.Kind == yaml.AliasNode || n.Kind == yaml.DocumentNode) {
		if n.Kind == yaml.DocumentNode {
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
			continue
		}
		p.budget++
		if p.budget > 10000 {
			p.errorf(n, "too many alias (*name) expansions")
			return nil
		}
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

func describe(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if len([]rune(v)) > 40 {
		v = string([]rune(v)[:40]) + "…"
	}
	return strconv.Quote(v)
}

type kv struct{ k, v *yaml.Node }

// mapping returns the pairs of a mapping, reporting duplicate keys, or
// reports that n is not a mapping.
func (p *parser) mapping(n *yaml.Node, what string) ([]kv, bool) {
	n = p.resolve(n)
	if n == nil || n.Kind != yaml.MappingNode {
		p.errorf(n, "%s: expected a mapping, got %s", what, describe(n))
		return nil, false
	}
	var out []kv
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := p.resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			p.errorf(n.Content[i], "%s: a key must be text", what)
			continue
		}
		if first := seen[k.Value]; first != nil {
			p.errorf(k, "%s: duplicate key %q (first at %d:%d)", what, k.Value, first.Line, first.Column)
			continue
		}
		seen[k.Value] = k
		out = append(out, kv{k, n.Content[i+1]})
	}
	return out, true
}

func (p *parser) unknown(k *yaml.Node, what string, known []string) {
	msg := fmt.Sprintf("unknown key %q in %s", k.Value, what)
	if s := suggest(k.Value, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		msg += " (known keys: " + strings.Join(known, ", ") + ")"
	}
	p.errorf(k, "%s", msg)
}

func (p *parser) str(n *yaml.Node, key string) (string, bool) {
	n = p.resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s: expected text, got %s", key, describe(n))
		return "", false
	}
	return n.Value, true
}

func (p *parser) num(n *yaml.Node, key string) (float64, bool) {
	n = p.resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		p.errorf(n, "%s: expected a number, got %s", key, describe(n))
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.ReplaceAll(strings.TrimSpace(n.Value), "_", ""), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		p.errorf(n, "%s: expected a number, got %s", key, describe(n))
		return 0, false
	}
	return v, true
}

func (p *parser) int(n *yaml.Node, key string) (int64, bool) {
	v, ok := p.num(n, key)
	if !ok {
		return 0, false
	}
	if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
		p.errorf(n, "%s: expected a whole number, got %s", key, describe(p.resolve(n)))
		return 0, false
	}
	return int64(v), true
}

var specKeys = []string{"seed", "scale", "format", "entities"}

func (p *parser) spec(doc *yaml.Node) *Spec {
	s := &Spec{Seed: 1, Scale: 1, Format: "csv"}
	root := p.resolve(doc)
	if isNull(root) {
		p.errorf(root, "spec is empty")
		return s
	}
	pairs, ok := p.mapping(root, "spec")
	if !ok {
		return s
	}
	var entities *yaml.Node
	for _, e := range pairs {
		switch e.k.Value {
		case "seed":
			if v, ok := p.int(e.v, "seed"); ok {
				if v < 0 {
					p.errorf(e.v, "seed must not be negative")
				}
				s.Seed = uint64(v)
			}
		case "scale":
			if v, ok := p.num(e.v, "scale"); ok {
				if v <= 0 {
					p.errorf(e.v, "scale must be positive")
				}
				s.Scale = v
			}
		case "format":
			if v, ok := p.str(e.v, "format"); ok {
				s.Format = v
				if !slices.Contains(Formats, v) {
					p.errorf(e.v, "format %q is not csv, ndjson or json", v)
				}
			}
		case "entities":
			entities = e.v
		default:
			p.unknown(e.k, "spec", specKeys)
		}
	}
	if entities == nil {
		p.errorf(root, "spec: missing entities")
		return s
	}
	eps, ok := p.mapping(entities, "entities")
	if !ok {
		return s
	}
	if len(eps) == 0 {
		p.errorf(entities, "entities is empty")
	}
	for _, e := range eps {
		s.Entities = append(s.Entities, p.entity(s, e.k, e.v))
	}
	p.link(s)
	return s
}

var entityKeys = []string{"count", "scaled", "parent", "per_parent", "fields", "format", "file", "id"}

func (p *parser) entity(s *Spec, k, n *yaml.Node) *Entity {
	e := &Entity{Name: k.Value, Format: s.Format, Pos: p.pos(k)}
	if !isName(e.Name) {
		p.errorf(k, "bad entity name %q: use letters, digits, _ and -", e.Name)
	}
	pairs, ok := p.mapping(n, "entity "+e.Name)
	if !ok {
		return e
	}
	has := map[string]*yaml.Node{}
	for _, f := range pairs {
		has[f.k.Value] = f.k
		switch f.k.Value {
		case "count":
			if v, ok := p.int(f.v, "count"); ok {
				if v < 0 {
					p.errorf(f.v, "count must not be negative")
				}
				e.Count = v
			}
		case "scaled":
			switch v, _ := p.str(f.v, "scaled"); v {
			case "true":
			case "false":
				e.Fixed = true
			default:
				p.errorf(f.v, "scaled: expected true or false, got %s", describe(p.resolve(f.v)))
			}
		case "parent":
			if v, ok := p.str(f.v, "parent"); ok {
				e.Parent = v
			}
		case "per_parent":
			e.PerParent = p.dist(f.v, "per_parent", true)
		case "fields":
			e.Fields = p.fields(f.v)
		case "format":
			if v, ok := p.str(f.v, "format"); ok {
				e.Format = v
				if !slices.Contains(Formats, v) {
					p.errorf(f.v, "format %q is not csv, ndjson or json", v)
				}
			}
		case "file":
			if v, ok := p.str(f.v, "file"); ok {
				e.File = v
				if v == "" || filepath.IsAbs(v) || strings.Contains(filepath.ToSlash(filepath.Clean(v)), "../") || filepath.Clean(v) == ".." {
					p.errorf(f.v, "file %q must be a relative path inside the output directory", v)
				}
			}
		case "id":
			if v, ok := p.str(f.v, "id"); ok {
				e.ID = v
			}
		default:
			p.unknown(f.k, "entity "+e.Name, entityKeys)
		}
	}
	switch {
	case e.Parent == "" && has["per_parent"] != nil:
		p.errorf(has["per_parent"], "entity %s: per_parent needs a parent", e.Name)
	case e.Parent == "" && has["count"] == nil:
		p.errorf(k, "entity %s: missing count (or parent and per_parent)", e.Name)
	case e.Parent != "" && has["scaled"] != nil:
		p.errorf(has["scaled"], "entity %s: scaled applies to an entity without a parent (its count); a child follows its parent", e.Name)
	case e.Parent != "" && has["count"] != nil:
		p.errorf(has["count"], "entity %s has a parent: give per_parent (rows per %s row), not count", e.Name, e.Parent)
	case e.Parent != "" && has["per_parent"] == nil:
		p.errorf(k, "entity %s: missing per_parent (rows per %s row: a number or a distribution)", e.Name, e.Parent)
	}
	if len(e.Fields) == 0 && has["fields"] == nil {
		p.errorf(k, "entity %s: missing fields", e.Name)
	}
	if e.File == "" {
		e.File = e.Name + "." + e.Format
	}
	return e
}

var distKeys = []string{"dist", "value", "mean", "sd", "n", "p", "s", "min", "max"}

// dist reads a distribution: a number (fixed) or a mapping {dist: …}.
// counts says the values are row counts (whole and not negative).
func (p *parser) dist(n *yaml.Node, key string, counts bool) Dist {
	n = p.resolve(n)
	d := Dist{Kind: "fixed"}
	if n != nil && n.Kind == yaml.ScalarNode {
		if v, ok := p.num(n, key); ok {
			d.Value = v
			if counts && (v < 0 || v != math.Trunc(v)) {
				p.errorf(n, "%s: a fixed count must be a whole number ≥ 0, got %v", key, v)
			}
		}
		return d
	}
	pairs, ok := p.mapping(n, key)
	if !ok {
		return d
	}
	has := map[string]*yaml.Node{}
	d.Kind = ""
	for _, f := range pairs {
		has[f.k.Value] = f.v
		var v float64
		if f.k.Value != "dist" && slices.Contains(distKeys, f.k.Value) {
			v, ok = p.num(f.v, key+"."+f.k.Value)
			if !ok {
				continue
			}
		}
		switch f.k.Value {
		case "dist":
			if s, ok := p.str(f.v, key+".dist"); ok {
				d.Kind = s
			}
		case "value":
			d.Value = v
		case "mean":
			d.Mean = v
		case "sd":
			d.SD = v
		case "n":
			d.N = int(v)
			if v != math.Trunc(v) || v < 1 || v > 1e9 {
				p.errorf(f.v, "%s.n: the number of trials must be a whole number from 1 to 10⁹", key)
			}
		case "p":
			d.P = v
		case "s":
			d.S = v
		case "min":
			d.Min, d.HasMin = v, true
		case "max":
			d.Max, d.HasMax = v, true
		default:
			p.unknown(f.k, key, distKeys)
		}
	}
	need := func(keys ...string) {
		for _, k := range keys {
			if has[k] == nil {
				p.errorf(n, "%s: %s distribution needs %s", key, d.Kind, k)
			}
		}
	}
	allowed := map[string][]string{
		"fixed": {"value"}, "uniform": {"min", "max"}, "normal": {"mean", "sd", "min", "max"},
		"poisson": {"mean", "min", "max"}, "binomial": {"n", "p", "min", "max"}, "exponential": {"mean", "min", "max"},
		"lognormal": {"mean", "sd", "min", "max"}, "zipf": {"s", "min", "max"},
	}
	if d.Kind == "" {
		d.Kind = "uniform"
		if has["value"] != nil {
			d.Kind = "fixed"
		}
	}
	keys, known := allowed[d.Kind]
	if !known {
		p.errorf(has["dist"], "%s: unknown distribution %q (uniform, normal, poisson, binomial, exponential, lognormal, zipf, fixed)", key, d.Kind)
		return d
	}
	for _, f := range pairs {
		if k := f.k.Value; k != "dist" && slices.Contains(distKeys, k) && !slices.Contains(keys, k) {
			p.errorf(f.k, "%s: %s does not apply to a %s distribution (it takes %s)", key, k, d.Kind, strings.Join(keys, ", "))
		}
	}
	switch d.Kind {
	case "fixed":
		need("value")
	case "uniform":
		need("min", "max")
	case "normal", "lognormal":
		need("mean", "sd")
		if has["sd"] != nil && d.SD <= 0 {
			p.errorf(has["sd"], "%s.sd must be positive", key)
		}
	case "poisson", "exponential":
		need("mean")
		if has["mean"] != nil && d.Mean <= 0 {
			p.errorf(has["mean"], "%s.mean must be positive", key)
		}
	case "binomial":
		need("n", "p")
		if has["p"] != nil && (d.P < 0 || d.P > 1) {
			p.errorf(has["p"], "%s.p must be between 0 and 1", key)
		}
	case "zipf":
		need("s", "max")
		if has["s"] != nil && d.S <= 1 {
			p.errorf(has["s"], "%s.s must be greater than 1", key)
		}
		if !d.HasMin {
			d.Min = 1
			if counts {
				d.Min = 0
			}
		}
	}
	if d.HasMin && d.HasMax && d.Min > d.Max {
		p.errorf(has["max"], "%s: max %v is less than min %v", key, d.Max, d.Min)
	}
	if counts && d.HasMin && d.Min < 0 {
		p.errorf(has["min"], "%s: a count's min must not be negative", key)
	}
	if d.Kind == "zipf" && d.Max-d.Min > 1e9 {
		p.errorf(has["max"], "%s: zipf range larger than 10⁹", key)
	}
	return d
}

var fieldKeys = []string{"type", "start", "step", "dist", "value", "mean", "sd", "n", "p", "s", "min", "max", "decimals",
	"from", "to", "format", "values", "weights", "template", "field", "entity", "fake", "pattern", "null"}

// shortTypes are the field types that may be written as a bare word.
var shortTypes = []string{"seq", "uuid", "first_name", "last_name", "name", "word", "bool"}

// fieldTypes lists every field type with the keys it takes.
var fieldTypes = map[string][]string{
	"seq": {"start", "step"}, "uuid": nil, "first_name": nil, "last_name": nil, "name": nil, "word": nil,
	"words": {"dist", "value", "mean", "sd", "n", "p", "s", "min", "max"},
	"fake":  {"fake"},
	"int":   {"dist", "value", "mean", "sd", "n", "p", "s", "min", "max"},
	"float": {"dist", "value", "mean", "sd", "n", "p", "s", "min", "max", "decimals"},
	"bool":  {"p"}, "date": {"from", "to", "format"}, "datetime": {"from", "to", "format"},
	"choice": {"values", "weights"}, "template": {"template"}, "parent": {"field"}, "ref": {"entity", "dist", "s"},
	"const": {"value"}, "pattern": {"pattern"},
}

func (p *parser) fields(n *yaml.Node) []*Field {
	pairs, ok := p.mapping(n, "fields")
	if !ok {
		return nil
	}
	if len(pairs) == 0 {
		p.errorf(p.resolve(n), "fields is empty")
	}
	out := make([]*Field, 0, len(pairs))
	for _, f := range pairs {
		out = append(out, p.field(f.k, f.v))
	}
	return out
}

var typeNames = func() []string {
	var out []string
	for k := range fieldTypes {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}()

func (p *parser) field(k, n *yaml.Node) *Field {
	f := &Field{Name: k.Value, Pos: p.pos(k), Step: 1, Start: 1, Decimals: 2, P: 0.5}
	if !isName(f.Name) {
		p.errorf(k, "bad field name %q: use letters, digits, _ and -", f.Name)
	}
	n = p.resolve(n)
	if n != nil && n.Kind == yaml.ScalarNode {
		// Shorthands: "seq", "uuid", "name", …; "parent.FIELD".
		v := n.Value
		switch {
		case slices.Contains(shortTypes, v):
			f.Type = v
		case strings.HasPrefix(v, "parent."):
			f.Type, f.Field = "parent", strings.TrimPrefix(v, "parent.")
		default:
			msg := fmt.Sprintf("field %s: %q is not a field type written alone (%s, parent.FIELD); write {type: …}", f.Name, v, strings.Join(shortTypes, ", "))
			if s := suggest(v, typeNames); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.errorf(n, "%s", msg)
		}
		return f
	}
	pairs, ok := p.mapping(n, "field "+f.Name)
	if !ok {
		return f
	}
	has := map[string]*yaml.Node{}
	for _, e := range pairs {
		has[e.k.Value] = e.v
		if e.k.Value == "type" {
			if s, ok := p.str(e.v, "type"); ok {
				f.Type = s
			}
		}
	}
	if f.Type == "" {
		p.errorf(n, "field %s: missing type (%s)", f.Name, strings.Join(typeNames, ", "))
		return f
	}
	keys, known := fieldTypes[f.Type]
	if !known {
		msg := fmt.Sprintf("field %s: unknown type %q", f.Name, f.Type)
		if s := suggest(f.Type, typeNames); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += " (" + strings.Join(typeNames, ", ") + ")"
		}
		p.errorf(has["type"], "%s", msg)
		return f
	}
	distSeen := false
	for _, e := range pairs {
		key := e.k.Value
		switch {
		case key == "type":
			continue
		case key == "null":
			if v, ok := p.num(e.v, "null"); ok {
				if v < 0 || v > 1 {
					p.errorf(e.v, "field %s: null is a probability between 0 and 1", f.Name)
				}
				f.NullP = v
			}
			continue
		case !slices.Contains(fieldKeys, key):
			p.unknown(e.k, "field "+f.Name, fieldKeys)
			continue
		case !slices.Contains(keys, key):
			takes := "no other key"
			if len(keys) > 0 {
				takes = strings.Join(keys, ", ")
			}
			p.errorf(e.k, "field %s: %s does not apply to type %s (it takes %s, and null)", f.Name, key, f.Type, takes)
			continue
		}
		switch key {
		case "start", "step":
			if v, ok := p.int(e.v, key); ok {
				if key == "start" {
					f.Start = v
				} else {
					if v == 0 {
						p.errorf(e.v, "field %s: step must not be 0", f.Name)
					}
					f.Step = v
				}
			}
		case "dist", "value", "mean", "sd", "n", "s", "min", "max":
			if f.Type == "const" && key == "value" {
				if s, ok := p.str(e.v, "value"); ok {
					f.Value = s
				}
				continue
			}
			distSeen = true
		case "p":
			if f.Type == "bool" {
				if v, ok := p.num(e.v, "p"); ok {
					if v < 0 || v > 1 {
						p.errorf(e.v, "field %s: p must be between 0 and 1", f.Name)
					}
					f.P = v
				}
			} else {
				distSeen = true
			}
		case "decimals":
			if v, ok := p.int(e.v, key); ok {
				if v < 0 || v > 15 {
					p.errorf(e.v, "field %s: decimals must be from 0 to 15", f.Name)
				}
				f.Decimals = int(v)
			}
		case "from", "to":
			if s, ok := p.str(e.v, key); ok {
				t, err := parseTime(s)
				if err != nil {
					p.errorf(e.v, "field %s: %s: %v", f.Name, key, err)
				}
				if key == "from" {
					f.From = t.Unix()
				} else {
					f.To = t.Unix()
				}
			}
		case "format":
			if s, ok := p.str(e.v, key); ok {
				f.Layout = s
			}
		case "values":
			f.Values = p.strList(e.v, "values")
		case "weights":
			f.Weights = p.numList(e.v, "weights")
		case "template":
			if s, ok := p.str(e.v, key); ok {
				f.Template = s
			}
		case "field":
			if s, ok := p.str(e.v, key); ok {
				f.Field = s
			}
		case "entity":
			if s, ok := p.str(e.v, key); ok {
				f.Entity = s
			}
		case "fake":
			if s, ok := p.str(e.v, key); ok {
				f.Fake = s
			}
		case "pattern":
			if s, ok := p.str(e.v, key); ok {
				f.Pattern = s
			}
		}
	}
	// The distribution keys of int, float, words and ref are read as one
	// distribution, from the same mapping.
	switch f.Type {
	case "int", "float", "words":
		if !distSeen {
			p.errorf(n, "field %s: %s needs a distribution (min and max for uniform, or dist: …)", f.Name, f.Type)
		} else {
			f.Dist = p.dist(distOnly(n, "type", "decimals", "null"), "field "+f.Name, f.Type == "words")
		}
	case "ref":
		f.Dist = Dist{Kind: "uniform"}
		if has["dist"] != nil {
			if s, _ := p.str(has["dist"], "dist"); s == "zipf" {
				f.Dist = Dist{Kind: "zipf"}
				if v, ok := p.num(has["s"], "s"); ok && v > 1 {
					f.Dist.S = v
				} else {
					p.errorf(n, "field %s: a zipf ref needs s greater than 1", f.Name)
				}
			} else if s != "uniform" {
				p.errorf(has["dist"], "field %s: a ref's dist is uniform or zipf", f.Name)
			}
		}
		if f.Entity == "" {
			p.errorf(n, "field %s: ref needs entity", f.Name)
		}
	}
	p.checkField(f, n, has)
	return f
}

// distOnly is a copy of mapping n without the given keys.
func distOnly(n *yaml.Node, drop ...string) *yaml.Node {
	c := *n
	c.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		if !slices.Contains(drop, n.Content[i].Value) {
			c.Content = append(c.Content, n.Content[i], n.Content[i+1])
		}
	}
	return &c
}

func (p *parser) checkField(f *Field, n *yaml.Node, has map[string]*yaml.Node) {
	switch f.Type {
	case "date", "datetime":
		if has["from"] == nil || has["to"] == nil {
			p.errorf(n, "field %s: %s needs from and to", f.Name, f.Type)
		} else if f.To < f.From {
			p.errorf(has["to"], "field %s: to is before from", f.Name)
		}
		if f.Layout == "" {
			f.Layout = "2006-01-02"
			if f.Type == "datetime" {
				f.Layout = time.RFC3339
			}
		}
	case "choice":
		if len(f.Values) == 0 {
			p.errorf(n, "field %s: choice needs values", f.Name)
		}
		if has["weights"] != nil {
			if len(f.Weights) != len(f.Values) {
				p.errorf(has["weights"], "field %s: %d weights for %d values", f.Name, len(f.Weights), len(f.Values))
			}
			sum := 0.0
			for _, w := range f.Weights {
				if w < 0 {
					p.errorf(has["weights"], "field %s: a weight must not be negative", f.Name)
				}
				sum += w
			}
			if sum <= 0 && len(f.Weights) > 0 {
				p.errorf(has["weights"], "field %s: the weights sum to 0", f.Name)
			}
		}
	case "template":
		if has["template"] == nil {
			p.errorf(n, "field %s: template needs template", f.Name)
		}
	case "parent":
		if f.Field == "" {
			p.errorf(n, "field %s: parent needs field (the parent's field to copy)", f.Name)
		}
	case "fake":
		switch {
		case f.Fake == "":
			p.errorf(n, "field %s: fake needs fake (a gofakeit function name such as city, email, company)", f.Name)
		case gofakeit.GetFuncLookup(f.Fake) == nil:
			msg := fmt.Sprintf("field %s: unknown fake function %q", f.Name, f.Fake)
			if s := suggest(f.Fake, fakeNames()); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			p.errorf(has["fake"], "%s", msg)
		default:
			if _, err := fakeValue(fakeProbe(), f.Fake); err != nil {
				p.errorf(has["fake"], "field %s: fake %q cannot be used without parameters: %v", f.Name, f.Fake, err)
			}
		}
	case "pattern":
		if f.Pattern == "" {
			p.errorf(n, "field %s: pattern needs pattern (# a digit, ? a letter, * a letter or digit)", f.Name)
		}
	case "const":
		if has["value"] == nil {
			p.errorf(n, "field %s: const needs value", f.Name)
		}
	}
}

func (p *parser) strList(n *yaml.Node, key string) []string {
	n = p.resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list, got %s", key, describe(n))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		if s, ok := p.str(c, key); ok {
			out = append(out, s)
		}
	}
	return out
}

func (p *parser) numList(n *yaml.Node, key string) []float64 {
	n = p.resolve(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		p.errorf(n, "%s: expected a list of numbers, got %s", key, describe(n))
		return nil
	}
	out := make([]float64, 0, len(n.Content))
	for _, c := range n.Content {
		if v, ok := p.num(c, key); ok {
			out = append(out, v)
		}
	}
	return out
}

// parseTime reads a date (2006-01-02) or an RFC 3339 time, in UTC.
func parseTime(s string) (time.Time, error) {
	for _, l := range []string{"2006-01-02", time.RFC3339, "2006-01-02 15:04:05", "2006-01-02T15:04:05"} {
		if t, err := time.ParseInLocation(l, strings.TrimSpace(s), time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date (2006-01-02) or a time (2006-01-02T15:04:05Z)", s)
}

func isName(s string) bool {
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

// suggest returns the candidate closest to word, if close enough.
func suggest(word string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(word), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD >= 0 && bestD <= max(1, len(word)/3) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			c := 1
			if ra[i-1] == rb[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
