package plan

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/plan/expr"

	"gopkg.in/yaml.v3"
)

// Decoders for the fields whose YAML shape is not a plain struct: think
// times, name → value mappings, statuses, extractions, workloads, SLAs.

// think reads "1s", "uniform(500ms, 1500ms)" or {min: 500ms, max: 1500ms}.
func (d *decoder) think(n *yaml.Node, key string) *Think {
	switch n.Kind {
	case yaml.ScalarNode:
		s, ok := d.expand(n, key)
		if !ok {
			return &Think{}
		}
		t, err := parseThink(s)
		if err != nil {
			d.errorf(n, "%s: %v", key, err)
			return &Think{}
		}
		d.checkThink(n, &t)
		return &t
	case yaml.MappingNode:
		t := &Think{}
		for _, p := range d.pairs(n) {
			switch p.key.Value {
			case "min":
				t.Min, _ = d.duration(d.resolve(p.val), "min")
			case "max":
				t.Max, _ = d.duration(d.resolve(p.val), "max")
			default:
				d.unknownKey(p.key, key, []string{"min", "max"})
			}
		}
		d.checkThink(n, t)
		return t
	}
	d.typeErr(n, key, `a duration such as 1s, "uniform(500ms, 1500ms)" or {min: …, max: …}`)
	return &Think{}
}

func (d *decoder) checkThink(n *yaml.Node, t *Think) {
	if t.Min > t.Max {
		d.errorf(n, "think: min %s is more than max %s", t.Min, t.Max)
	}
	if t.Dist != "" || t.Max == 0 && t.Min == 0 && t.Fixed == 0 {
		return
	}
	if t.Max > 0 && t.Min == t.Max {
		// uniform(a, a) is just a.
		*t = Think{Fixed: t.Min}
	}
}

// strList reads a list of text items.
func (d *decoder) strList(n *yaml.Node, key string) []string {
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, key, "a list")
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for _, item := range n.Content {
		if s, ok := d.str(item, key); ok {
			out = append(out, s)
		}
	}
	return out
}

// vars reads the plan's constant variables.
func (d *decoder) vars(n *yaml.Node, key string) map[string]string {
	ps, ok := d.mapping(n, key, "a mapping of name → value")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(ps))
	for _, p := range ps {
		name := p.key.Value
		switch {
		case !isIdent(name):
			d.errorf(p.key, "bad variable name %q: use letters, digits, _ and -", name)
		case name == "env":
			d.errorf(p.key, "%q is reserved for ${env.NAME}", name)
		case IsBuiltin(name):
			d.errorf(p.key, "%q is a built-in variable", name)
		}
		if s, ok := d.str(p.val, "vars."+name); ok {
			out[name] = s
		}
	}
	return out
}

// headers reads a mapping name → template (headers, form).
func (d *decoder) headers(n *yaml.Node, key string) []Header {
	ps, ok := d.mapping(n, key, "a mapping of name → value")
	if !ok {
		return nil
	}
	out := make([]Header, 0, len(ps))
	for _, p := range ps {
		name := p.key.Value
		var keyT *Template
		switch {
		case key == "form" || key == "query":
			if t, ok := d.template(p.key, key+" key", false); ok && !t.IsConst() {
				keyT = &t
			}
		case strings.Contains(name, "${"):
			d.errorf(p.key, "%s: ${…} in a header name is not substituted; only values are templates", key)
			continue
		case key == "headers" && !isToken(name):
			d.errorf(p.key, "bad header name %q", name)
			continue
		}
		v := d.resolve(p.val)
		if isNull(v) {
			out = append(out, Header{Name: name, Key: keyT})
			continue
		}
		if t, ok := d.template(v, key+"."+name, false); ok {
			out = append(out, Header{Name: name, Value: t, Key: keyT})
		}
	}
	return out
}

// isToken reports whether s is an HTTP token (header names, methods).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// jsonChecks reads check.json: a mapping JSON path → expected value.
func (d *decoder) jsonChecks(n *yaml.Node, key string) []JSONCheck {
	ps, ok := d.mapping(n, key, "a mapping of JSON path → expected value")
	if !ok {
		return nil
	}
	out := make([]JSONCheck, 0, len(ps))
	for _, p := range ps {
		if strings.HasPrefix(key, "json") {
			if _, err := expr.ParsePath(p.key.Value); err != nil {
				d.errorf(p.key, "check.%s: %v", key, err)
				continue
			}
		} else if !isToken(p.key.Value) {
			d.errorf(p.key, "check.%s: bad header name %q", key, p.key.Value)
			continue
		}
		v := d.resolve(p.val)
		if v == nil {
			continue
		}
		val := "null"
		if !isNull(v) {
			s, ok := d.scalarStr(v, "check."+key, "a value (text, number, true/false or null)")
			if !ok {
				continue
			}
			val = s
		}
		if strings.HasSuffix(key, "_match") {
			if _, err := regexp.Compile(val); err != nil {
				d.errorf(v, "check.%s: bad regex: %v", key, err)
				continue
			}
		}
		out = append(out, JSONCheck{Path: p.key.Value, Value: val})
	}
	return out
}

// statuses reads check.status: one code or a list.
func (d *decoder) statuses(n *yaml.Node) []int {
	n = d.resolve(n)
	if isNull(n) {
		return nil
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []int
	for _, item := range items {
		item = d.resolve(item)
		if item == nil {
			continue
		}
		v, ok := d.int(item, "status")
		if !ok {
			continue
		}
		if v < 100 || v > 599 {
			d.errorf(item, "status %d is not an HTTP status (100–599)", v)
			continue
		}
		out = append(out, v)
	}
	return out
}

// extracts reads request.extract: a mapping variable → source.
func (d *decoder) extracts(n *yaml.Node, key string) map[string]*Extract {
	ps, ok := d.mapping(n, key, "a mapping of variable → {json|regex|header: …}")
	if !ok {
		return nil
	}
	out := make(map[string]*Extract, len(ps))
	for _, p := range ps {
		name := p.key.Value
		switch {
		case strings.Contains(name, "${"):
			d.errorf(p.key, "extract: the variable name %q is not a template; write the plain name", name)
			continue
		case !isIdent(name):
			d.errorf(p.key, "bad variable name %q: use letters, digits, _ and -", name)
			continue
		case name == "env" || IsBuiltin(name):
			d.errorf(p.key, "%q is reserved", name)
			continue
		}
		e := &Extract{}
		d.decodeStruct(p.val, e)
		e.Pos = d.pos(p.key)
		out[name] = e
		if d.wl != nil {
			d.extracted[d.wl][name] = true
		}
	}
	return out
}

// workloads reads the mapping name → workload, keeping file order.
func (d *decoder) workloads(n *yaml.Node, key string) []*Workload {
	ps, ok := d.mapping(n, key, "a mapping of name → workload")
	if !ok {
		return nil
	}
	out := make([]*Workload, 0, len(ps))
	for _, p := range ps {
		w := &Workload{Name: p.key.Value}
		if strings.TrimSpace(w.Name) == "" {
			d.errorf(p.key, "workload name is empty")
		} else if strings.Contains(w.Name, "${") {
			d.errorf(p.key, "workload name %q: ${…} is not substituted in a name", w.Name)
		}
		prev := d.wl
		d.wl = w
		d.extracted[w] = map[string]bool{}
		d.decodeStruct(p.val, w)
		d.wl = prev
		w.Pos = d.pos(p.key)
		out = append(out, w)
	}
	return out
}

// slas reads the list of requirement expressions, keeping positions.
func (d *decoder) slas(n *yaml.Node, key string) []SLA {
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, key, "a list of expressions such as \"p95(response_time) < 300ms\"")
		return nil
	}
	out := make([]SLA, 0, len(n.Content))
	for _, item := range n.Content {
		item = d.resolve(item)
		if item == nil {
			continue
		}
		var abort bool
		var grace time.Duration
		var s string
		if item.Kind == yaml.MappingNode {
			// {expr: "…", abort_on_fail: true, grace: 30s}
			exprNode := item
			for _, p := range d.pairs(item) {
				switch p.key.Value {
				case "expr":
					exprNode = d.resolve(p.val)
				case "abort_on_fail":
					abort, _ = d.bool(d.resolve(p.val), "abort_on_fail")
				case "grace":
					grace, _ = d.duration(d.resolve(p.val), "grace")
				default:
					if strings.ContainsAny(p.key.Value, "({<>=") {
						// `- p95(x{label="read: GET /x"}) < 1s` is a YAML
						// mapping: the ": " in the label splits it.
						d.errorf(p.key, "sla: quote an expression that contains \": \" (YAML reads it as a key: value pair)")
						exprNode = nil
						continue
					}
					d.unknownKey(p.key, "sla", []string{"expr", "abort_on_fail", "grace"})
				}
			}
			if exprNode == nil {
				continue
			}
			if exprNode == item {
				d.missing(item, "sla: expr is required")
				continue
			}
			item = exprNode
			if grace < 0 {
				d.errorf(item, "sla: grace must not be negative")
			}
		}
		s, ok := d.scalarStr(item, "sla", "an expression such as \"p95(response_time) < 300ms\"")
		if !ok {
			continue
		}
		s = strings.TrimSpace(s)
		if s == "" {
			d.errorf(item, "sla: empty expression")
			continue
		}
		if d.opt.CheckSLA != nil {
			if err := d.opt.CheckSLA(s); err != nil {
				d.errorf(item, "sla: %v", err)
				continue
			}
		}
		out = append(out, SLA{Expr: s, Pos: d.pos(item), AbortOnFail: abort, Grace: grace})
	}
	return out
}

// cond reads a condition: the expression is parsed now, its variables are
// checked with the plan's other references, and an error points at the
// character where it is.
func (d *decoder) cond(n *yaml.Node, key string) Cond {
	if n.Kind != yaml.ScalarNode {
		d.typeErr(n, key, `a condition such as '${status} == 200'`)
		return Cond{}
	}
	c := Cond{Src: n.Value, Pos: d.pos(n)}
	x, err := expr.Parse(n.Value)
	if err != nil {
		var ee *expr.Error
		off := 0
		if errors.As(err, &ee) {
			off = ee.Off
		}
		d.errAt(d.refPos(n, off), n, fmt.Sprintf("%s: %v", key, err))
		return c
	}
	for _, v := range x.Vars() {
		if strings.HasPrefix(v, "env.") {
			d.errAt(d.pos(n), n, fmt.Sprintf("%s: ${%s}: environment variables are not read in conditions; set a var (vars: {x: ${%s}}) and compare ${x}", key, v, v))
			continue
		}
		d.refs = append(d.refs, varRef{name: v, pos: d.pos(n), node: n, wl: d.wl})
	}
	return c
}

// foreachIn reads foreach.in: a literal list, or one variable holding a list.
func (d *decoder) foreachIn(f *Foreach, n *yaml.Node) {
	n = d.resolve(n)
	switch {
	case n == nil || isNull(n):
		d.errorf(n, "foreach: in is empty")
	case n.Kind == yaml.SequenceNode:
		f.Items = d.strList(n, "in")
		f.In = "a list"
	case n.Kind == yaml.ScalarNode:
		t, ok := d.template(n, "in", false)
		if ok && (len(t.Parts) != 1 || t.Parts[0].Var == "") {
			d.errorf(n, "foreach: in must be a list or one variable such as \"${ids}\", got %s", describe(n))
			return
		}
		f.Var, f.In = &t, n.Value
	default:
		d.typeErr(n, "in", "a list or a variable such as \"${ids}\"")
	}
}
