package k6

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"

	"github.com/plateau-perf/plateau/internal/convert"
)

// frame is one function being converted: its scope and the step list its
// statements add to.
type frame struct {
	sc       *scope
	steps    *[]convert.Step
	ret      *value
	returned bool
	setup    bool // the setup() function: a failure there ends the run
	depth    int
}

func (c *conv) child(fr *frame, steps *[]convert.Step) *frame {
	return &frame{sc: newScope(fr.sc), steps: steps, setup: fr.setup, depth: fr.depth}
}

func (c *conv) emit(fr *frame, s convert.Step) {
	c.nsteps++
	*fr.steps = append(*fr.steps, s)
}

// stmts converts a statement list.
func (c *conv) stmts(list []ast.Statement, fr *frame) {
	// Function declarations are hoisted.
	for _, st := range list {
		if fd, ok := st.(*ast.FunctionDeclaration); ok && fd.Function.Name != nil {
			fr.sc.vars[string(fd.Function.Name.Name)] = &value{k: kFunc, fn: &fnDef{s: c.s, name: string(fd.Function.Name.Name), params: fd.Function.ParameterList, body: fd.Function.Body, scope: fr.sc}}
		}
	}
	for _, st := range list {
		if fr.returned || c.nsteps > maxSteps {
			return
		}
		c.stmt(st, fr)
	}
}

// maxSteps bounds the steps a conversion makes (a hostile script that
// unrolls or recurses without end).
const maxSteps = 100_000

func (c *conv) stmt(st ast.Statement, fr *frame) {
	switch s := st.(type) {
	case *ast.EmptyStatement, *ast.FunctionDeclaration, *ast.DebuggerStatement:
	case *ast.BlockStatement:
		c.stmts(s.List, fr)
	case *ast.ExpressionStatement:
		c.expr(s.Expression, fr)
	case *ast.VariableStatement:
		c.bindings(s.List, fr, true)
	case *ast.LexicalDeclaration:
		c.bindings(s.List, fr, true)
	case *ast.ReturnStatement:
		if s.Argument != nil {
			fr.ret = c.expr(s.Argument, fr)
		}
		fr.returned = true
	case *ast.IfStatement:
		c.ifStmt(s, fr)
	case *ast.ForStatement:
		c.forStmt(s, fr)
	case *ast.ForOfStatement:
		c.forOf(s, fr)
	case *ast.TryStatement:
		c.stmts(s.Body.List, fr)
		if s.Catch != nil {
			c.item(s.Catch, "catch", convert.Partial, "the try block is converted; its catch block runs only when the try block throws, and is not converted")
		}
		if s.Finally != nil {
			c.stmts(s.Finally.List, fr)
		}
	case *ast.ThrowStatement:
		c.throw(s, fr)
	case *ast.ClassDeclaration:
		c.item(s, "class", convert.NotConverted, "classes are outside the converted subset")
		c.comment(fr, s, "class not converted")
	default:
		c.item(st, stmtType(st), convert.NotConverted, "this statement is outside the converted subset (http, check, sleep, group, if, for with a count, for…of a literal array)")
		c.comment(fr, st, "not converted")
	}
}

func stmtType(st ast.Statement) string {
	t := fmt.Sprintf("%T", st)
	t = strings.TrimPrefix(t, "*ast.")
	return strings.TrimSuffix(t, "Statement") + " statement"
}

// comment leaves a comment step where a construct was not converted.
func (c *conv) comment(fr *frame, n ast.Node, why string) {
	c.emit(fr, convert.CommentStep(fmt.Sprintf("%s: %s: %s", c.s.Pos(start(n)), why, c.s.Text(n, 100))))
}

func (c *conv) bindings(list []*ast.Binding, fr *frame, declare bool) {
	for _, b := range list {
		v := undef
		if b.Initializer != nil {
			v = c.expr(b.Initializer, fr)
		}
		c.bind(b.Target, v, fr)
	}
}

// bind binds a target (identifier, object or array pattern) to a value.
func (c *conv) bind(t ast.Expression, v *value, fr *frame) {
	switch t := t.(type) {
	case *ast.Identifier:
		fr.sc.vars[string(t.Name)] = v
	case *ast.ObjectPattern:
		for _, p := range t.Properties {
			switch p := p.(type) {
			case *ast.PropertyShort:
				x := c.member(v, string(p.Name.Name), p)
				if x.k == kUndef && p.Initializer != nil {
					x = c.expr(p.Initializer, fr)
				}
				fr.sc.vars[string(p.Name.Name)] = x
			case *ast.PropertyKeyed:
				if k, ok := c.key(p.Key, p.Computed, fr); ok {
					c.bind(p.Value, c.member(v, k, p), fr)
				}
			}
		}
	case *ast.ArrayPattern:
		for i, e := range t.Elements {
			if e != nil {
				c.bind(e, c.member(v, strconv.Itoa(i), e), fr)
			}
		}
	case *ast.Binding:
		c.bind(t.Target, v, fr)
	case *ast.AssignExpression:
		if v.k == kUndef {
			v = c.expr(t.Right, fr)
		}
		c.bind(t.Left, v, fr)
	}
}

func (c *conv) key(k ast.Expression, computed bool, fr *frame) (string, bool) {
	if !computed {
		switch k := k.(type) {
		case *ast.Identifier:
			return string(k.Name), true
		case *ast.StringLiteral:
			return string(k.Value), true
		case *ast.NumberLiteral:
			return c.s.Text(k, 64), true
		}
	}
	return c.expr(k, fr).text()
}

// expr evaluates an expression; calls add their steps to the frame.
func (c *conv) expr(e ast.Expression, fr *frame) *value {
	if e == nil {
		return undef
	}
	switch e := e.(type) {
	case *ast.StringLiteral:
		return str(string(e.Value))
	case *ast.NumberLiteral:
		switch n := e.Value.(type) {
		case int64:
			return num(float64(n))
		case float64:
			return num(n)
		}
		return unknown("a number")
	case *ast.BooleanLiteral:
		return boolean(e.Value)
	case *ast.NullLiteral:
		return &value{k: kNull, lit: true}
	case *ast.TemplateLiteral:
		if e.Tag != nil {
			if t := c.expr(e.Tag, fr); !(t.k == kMod && t.name == "http.url") {
				return unknown("a tagged template")
			}
		}
		out := &value{k: kStr, lit: true}
		for i, el := range e.Elements {
			if p := string(el.Parsed); p != "" {
				out.segs = append(out.segs, seg{lit: p})
			}
			if i < len(e.Expressions) {
				x := c.expr(e.Expressions[i], fr)
				segs, ok := c.segsOf(x)
				if !ok {
					return c.opaque(e.Expressions[i], x)
				}
				out.segs = append(out.segs, segs...)
			}
		}
		out.lit = isLit(out.segs)
		return out
	case *ast.Identifier:
		return c.ident(string(e.Name), fr)
	case *ast.DotExpression:
		return c.member(c.expr(e.Left, fr), string(e.Identifier.Name), e)
	case *ast.BracketExpression:
		return c.index(e, fr)
	case *ast.Optional:
		return c.expr(e.Expression, fr)
	case *ast.OptionalChain:
		return c.expr(e.Expression, fr)
	case *ast.BinaryExpression:
		return c.binary(e, fr)
	case *ast.ConditionalExpression:
		return c.conditional(e, fr)
	case *ast.CallExpression:
		return c.call(e, fr)
	case *ast.NewExpression:
		return c.newExpr(e, fr)
	case *ast.ObjectLiteral:
		o := &value{k: kObj, m: map[string]*value{}}
		put := func(k string, v *value) {
			if _, ok := o.m[k]; !ok {
				o.keys = append(o.keys, k)
			}
			o.m[k] = v
		}
		for _, p := range e.Value {
			switch p := p.(type) {
			case *ast.PropertyKeyed:
				k, ok := c.key(p.Key, p.Computed, fr)
				if !ok {
					return unknown("an object with a computed key")
				}
				put(k, c.expr(p.Value, fr))
			case *ast.PropertyShort:
				put(string(p.Name.Name), c.ident(string(p.Name.Name), fr))
			case *ast.SpreadElement:
				x := c.expr(p.Expression, fr)
				if x.k != kObj {
					return unknown("a spread of a value known only at run time")
				}
				for _, k := range x.keys {
					put(k, x.m[k])
				}
			}
		}
		return o
	case *ast.ArrayLiteral:
		a := &value{k: kArr}
		for _, it := range e.Value {
			if sp, ok := it.(*ast.SpreadElement); ok {
				x := c.expr(sp.Expression, fr)
				if x.k != kArr {
					return unknown("a spread of a value known only at run time")
				}
				a.items = append(a.items, x.items...)
				continue
			}
			a.items = append(a.items, c.expr(it, fr))
		}
		return a
	case *ast.FunctionLiteral:
		return &value{k: kFunc, fn: &fnDef{s: c.s, params: e.ParameterList, body: e.Body, scope: fr.sc}}
	case *ast.ArrowFunctionLiteral:
		return &value{k: kFunc, fn: &fnDef{s: c.s, params: e.ParameterList, body: e.Body, scope: fr.sc}}
	case *ast.UnaryExpression:
		x := c.expr(e.Operand, fr)
		switch e.Operator {
		case token.MINUS:
			if x.k == kNum && x.lit {
				return num(-x.f)
			}
		case token.PLUS:
			return c.toNum(x)
		case token.NOT:
			if t, ok := x.truthy(); ok {
				return boolean(!t)
			}
		case token.INCREMENT, token.DECREMENT:
			return unknown("a counter updated at run time")
		}
		return unknown("the operator " + e.Operator.String() + " on a value known only at run time")
	case *ast.AssignExpression:
		v := c.expr(e.Right, fr)
		if e.Operator == token.PLUS {
			v = c.plus(c.expr(e.Left, fr), v)
		} else if e.Operator != token.ASSIGN {
			v = unknown("a compound assignment")
		}
		switch l := e.Left.(type) {
		case *ast.Identifier:
			if !fr.sc.set(string(l.Name), v) {
				c.globals.vars[string(l.Name)] = v
			}
		case *ast.DotExpression:
			o := c.expr(l.Left, fr)
			if o.k == kMod && o.name == "globalThis" {
				c.gthis.vars[string(l.Identifier.Name)] = v
				return v
			}
			if o.k == kArr && len(o.items) == 0 {
				o.k, o.m = kObj, map[string]*value{}
			}
			if o.k == kObj {
				if _, ok := o.m[string(l.Identifier.Name)]; !ok {
					o.keys = append(o.keys, string(l.Identifier.Name))
				}
				o.m[string(l.Identifier.Name)] = v
			}
		case *ast.BracketExpression:
			o := c.expr(l.Left, fr)
			if o.k == kArr && len(o.items) == 0 {
				// globalThis.vars = []; vars["x"] = … : used as an object
				o.k, o.m = kObj, map[string]*value{}
			}
			if o.k == kObj {
				if k, ok := c.expr(l.Member, fr).text(); ok {
					if _, ok := o.m[k]; !ok {
						o.keys = append(o.keys, k)
					}
					o.m[k] = v
				}
			}
		}
		return v
	case *ast.SequenceExpression:
		var v *value
		for _, x := range e.Sequence {
			v = c.expr(x, fr)
		}
		return v
	case *ast.AwaitExpression:
		return c.expr(e.Argument, fr)
	}
	return unknown(strings.TrimPrefix(fmt.Sprintf("%T", e), "*ast."))
}

func isLit(segs []seg) bool {
	for _, s := range segs {
		if s.ref != "" {
			return false
		}
	}
	return true
}

// globalNames are the globals a k6 script reads without importing them.
var globalNames = map[string]bool{
	"JSON": true, "Math": true, "console": true, "Date": true, "open": true, "parseInt": true, "parseFloat": true,
	"Number": true, "String": true, "encodeURIComponent": true, "encodeURI": true, "Object": true, "Array": true,
	"crypto": true, "Boolean": true, "isNaN": true,
}

func (c *conv) ident(name string, fr *frame) *value {
	if v, ok := fr.sc.get(name); ok {
		return v
	}
	switch name {
	case "undefined":
		return undef
	case "__ENV":
		return mod("__ENV")
	case "globalThis":
		return mod("globalThis")
	case "__VU":
		return numRef("__user")
	case "__ITER":
		c.note("__ITER counts a user's iterations from 0; the plan's ${__iteration} counts from 1")
		return numRef("__iteration")
	case "NaN":
		return num(math.NaN())
	case "Infinity":
		return num(math.Inf(1))
	}
	if im, ok := c.s.Imports[name]; ok {
		return c.importValue(im)
	}
	if globalNames[name] {
		return mod(name)
	}
	if v, ok := c.gthis.vars[name]; ok {
		return v
	}
	return unknown("the name " + name + " (not defined in the script)")
}

// importValue is what an import binds.
func (c *conv) importValue(im Import) *value {
	m := im.Module
	switch {
	case m == "k6/http" || m == "k6" || m == "k6/data" || m == "k6/metrics" || m == "k6/execution" || m == "k6/crypto" || m == "k6/encoding":
		if im.Name == "default" || im.Name == "*" {
			return mod(m)
		}
		return mod(m + "." + im.Name)
	case strings.Contains(m, "k6-utils"):
		return mod("utils." + im.Name)
	case strings.Contains(m, "papaparse"):
		return mod("papaparse")
	case strings.Contains(m, "k6-summary"):
		return mod("summary." + im.Name)
	case strings.HasPrefix(m, "./") || strings.HasPrefix(m, "../"):
		return c.fromModule(m, im.Name)
	}
	return unknown("an import from " + m)
}

// member is v.name.
func (c *conv) member(v *value, name string, at ast.Node) *value {
	switch v.k {
	case kMod:
		switch v.name {
		case "globalThis":
			if x, ok := c.gthis.vars[name]; ok {
				return x
			}
			if x, ok := c.globals.get(name); ok {
				return x
			}
			return undef
		case "resp.headers":
			return &value{k: kHeader, req: v.req, name: name}
		case "resp.cookies":
			return &value{k: kHeader, req: v.req, name: "cookie:" + name}
		}
		return c.modMember(v.name, name)
	case kHeader:
		// res.cookies.name[0].value
		if strings.HasPrefix(v.name, "cookie:") && (name == "0" || name == "value") {
			return v
		}
		return unknown("the member " + name + " of a response header")
	case kObj:
		if x, ok := v.m[name]; ok {
			return x
		}
		return undef
	case kArr:
		if name == "length" {
			return num(float64(len(v.items)))
		}
		if i, err := strconv.Atoi(name); err == nil && i >= 0 && i < len(v.items) {
			return v.items[i]
		}
		return undef
	case kStr:
		if name == "length" {
			if t, ok := v.text(); ok {
				return num(float64(len([]rune(t))))
			}
		}
		return &value{k: kMod, name: "string." + name, items: []*value{v}}
	case kResp:
		switch name {
		case "url":
			segs := parseTemplate(v.req.URL)
			return &value{k: kStr, segs: segs, lit: isLit(segs)}
		case "status", "body", "timings", "cookies", "status_text", "error", "error_code", "proto":
			return &value{k: kMod, name: "resp." + name, req: v.req}
		case "headers":
			return &value{k: kMod, name: "resp.headers", req: v.req}
		case "json", "html", "clickLink", "submitForm":
			return &value{k: kMod, name: "resp." + name, req: v.req}
		case "request":
			segs := parseTemplate(v.req.URL)
			return &value{k: kObj, keys: []string{"method", "url"}, m: map[string]*value{
				"method": str(v.req.Method), "url": {k: kStr, segs: segs, lit: isLit(segs)}}}
		}
		return unknown("the response field " + name)
	case kJSON:
		if name == "length" {
			return unknown("the length of a response's JSON array")
		}
		p := append(append([]string(nil), v.path...), name)
		return &value{k: kJSON, req: v.req, path: p}
	case kData:
		if name == "length" {
			return &value{k: kMod, name: "data.length", feed: v.feed}
		}
	case kRow:
		return c.rowField(v.feed, name)
	case kUndef, kNull:
		return unknown("a member of undefined")
	}
	return unknown("the member " + name + " of a value known only at run time")
}

func (c *conv) modMember(m, name string) *value {
	switch m {
	case "__ENV":
		return &value{k: kStr, segs: []seg{{ref: "env." + name}}, env: name}
	case "resp.headers":
		// handled by the caller with the request
	case "k6/execution":
		return mod("exec." + name)
	case "exec.vu":
		switch name {
		case "idInTest", "idInInstance":
			return numRef("__user")
		case "iterationInScenario", "iterationInInstance":
			c.note("exec.vu.iterationInScenario counts from 0; the plan's ${__iteration} counts from 1")
			return numRef("__iteration")
		}
	case "exec.scenario":
		switch name {
		case "iterationInTest", "iterationInInstance":
			return &value{k: kMod, name: "exec.scenario.iterationInTest"}
		}
	}
	return mod(m + "." + name)
}

// rowField is a field of the current row of a data set.
func (c *conv) rowField(f *feeder, name string) *value {
	if f.scalar {
		return unknown("a member of a data set of plain values")
	}
	col := f.column(name)
	return ref(f.name + "." + col)
}

func (c *conv) index(e *ast.BracketExpression, fr *frame) *value {
	left := c.expr(e.Left, fr)
	if left.k == kData {
		return c.dataIndex(left.feed, e.Member, fr)
	}
	if left.k == kMod && left.name == "resp.headers" {
		k, ok := c.expr(e.Member, fr).text()
		if !ok {
			return unknown("a header name known only at run time")
		}
		return &value{k: kHeader, req: left.req, name: k}
	}
	if left.k == kMod && left.name == "resp.cookies" {
		k, ok := c.expr(e.Member, fr).text()
		if !ok {
			return unknown("a cookie name known only at run time")
		}
		return &value{k: kHeader, req: left.req, name: "cookie:" + k}
	}
	k, ok := c.expr(e.Member, fr).text()
	if !ok {
		return unknown("an index known only at run time")
	}
	return c.member(left, k, e)
}

// dataIndex reads data[i]: the index tells how k6 hands rows out.
func (c *conv) dataIndex(f *feeder, idx ast.Expression, fr *frame) *value {
	txt := strings.ReplaceAll(c.s.Text(idx, 200), " ", "")
	order, note := "", ""
	switch {
	case strings.Contains(txt, "Math.random()"):
		order = "random"
	case strings.Contains(txt, "__VU") || strings.Contains(txt, "vu.idIn"):
		order, note = "per_user", "one row per user (the index is the user's number)"
	case strings.Contains(txt, "iterationInTest") || strings.Contains(txt, "iterationInInstance"):
		order = "sequential"
	case strings.Contains(txt, "__ITER") || strings.Contains(txt, "iterationInScenario"):
		order, note = "sequential", "k6 walks the rows per user (each user from row 0); plateau hands the rows out in turn across users"
	default:
		if v := c.expr(idx, fr); v.k == kNum && v.lit {
			order, note = "per_user", fmt.Sprintf("k6 reads row %s every time; plateau gives each user a row in turn", fmtNum(v.f))
		} else {
			return unknown("an index into " + f.name + " that is not the user, the iteration or a random pick")
		}
	}
	f.use(order, note, c.s.Pos(idx.Idx0()))
	return &value{k: kRow, feed: f}
}

func (c *conv) plus(a, b *value) *value {
	if a.k == kNum && b.k == kNum && a.lit && b.lit {
		return num(a.f + b.f)
	}
	if a.k == kUnknown {
		return a
	}
	if b.k == kUnknown {
		return b
	}
	as, ok1 := c.segsOf(a)
	bs, ok2 := c.segsOf(b)
	if !ok1 || !ok2 {
		return unknown("a sum of values known only at run time")
	}
	if a.k == kNum && b.k == kNum {
		return unknown("a sum of numbers known only at run time")
	}
	out := &value{k: kStr, segs: append(append([]seg(nil), as...), bs...)}
	out.lit = isLit(out.segs)
	return out
}

func (c *conv) binary(e *ast.BinaryExpression, fr *frame) *value {
	switch e.Operator {
	case token.LOGICAL_OR, token.COALESCE:
		l := c.expr(e.Left, fr)
		if l.env != "" {
			r := c.expr(e.Right, fr)
			if t, ok := r.text(); ok && !strings.ContainsAny(t, "}") {
				return &value{k: kStr, segs: []seg{{ref: "env." + l.env + ":-" + t}}, name: "envdefault"}
			}
			return unknown("an environment default known only at run time")
		}
		if t, ok := l.truthy(); ok {
			if t && e.Operator == token.LOGICAL_OR {
				return l
			}
			if e.Operator == token.COALESCE && l.k != kUndef && l.k != kNull {
				return l
			}
			return c.expr(e.Right, fr)
		}
		return l
	case token.LOGICAL_AND:
		l := c.expr(e.Left, fr)
		if t, ok := l.truthy(); ok {
			if !t {
				return l
			}
			return c.expr(e.Right, fr)
		}
		return unknown("a condition known only at run time")
	}
	l, r := c.expr(e.Left, fr), c.expr(e.Right, fr)
	switch e.Operator {
	case token.PLUS:
		return c.plus(l, r)
	case token.MINUS, token.MULTIPLY, token.SLASH, token.REMAINDER:
		l, r = c.toNum(l), c.toNum(r)
		if l.lit && r.lit && l.k == kNum && r.k == kNum {
			switch e.Operator {
			case token.MINUS:
				return num(l.f - r.f)
			case token.MULTIPLY:
				return num(l.f * r.f)
			case token.SLASH:
				return num(l.f / r.f)
			case token.REMAINDER:
				return num(math.Mod(l.f, r.f))
			}
		}
		return unknown("arithmetic on values known only at run time")
	case token.STRICT_EQUAL, token.EQUAL, token.STRICT_NOT_EQUAL, token.NOT_EQUAL:
		a, ok1 := l.text()
		b, ok2 := r.text()
		if ok1 && ok2 {
			eq := a == b
			if e.Operator == token.STRICT_NOT_EQUAL || e.Operator == token.NOT_EQUAL {
				eq = !eq
			}
			return boolean(eq)
		}
	case token.LESS, token.GREATER, token.LESS_OR_EQUAL, token.GREATER_OR_EQUAL:
		if l.k == kNum && r.k == kNum && l.lit && r.lit {
			switch e.Operator {
			case token.LESS:
				return boolean(l.f < r.f)
			case token.GREATER:
				return boolean(l.f > r.f)
			case token.LESS_OR_EQUAL:
				return boolean(l.f <= r.f)
			default:
				return boolean(l.f >= r.f)
			}
		}
	}
	return unknown("a comparison known only at run time")
}

func (c *conv) toNum(v *value) *value {
	switch v.k {
	case kNum:
		return v
	case kStr:
		if t, ok := v.text(); ok {
			if f, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err == nil {
				return num(f)
			}
			return num(math.NaN())
		}
		return &value{k: kNum, segs: v.segs}
	case kBool:
		if v.lit {
			if v.b {
				return num(1)
			}
			return num(0)
		}
	case kNull:
		return num(0)
	case kJSON, kRow:
		if segs, ok := c.segsOf(v); ok {
			return &value{k: kNum, segs: segs}
		}
	}
	return unknown("a number known only at run time")
}

func (c *conv) conditional(e *ast.ConditionalExpression, fr *frame) *value {
	t := c.expr(e.Test, fr)
	if t.env != "" {
		// __ENV.X ? f(__ENV.X) : fallback — the variable or the fallback.
		alt := c.expr(e.Alternate, fr)
		if s, ok := alt.text(); ok {
			v := &value{k: kStr, segs: []seg{{ref: "env." + t.env + ":-" + s}}, name: "envdefault"}
			if alt.k == kNum {
				v.k = kNum
			}
			return v
		}
		return unknown("an environment default known only at run time")
	}
	if b, ok := t.truthy(); ok {
		if b {
			return c.expr(e.Consequent, fr)
		}
		return c.expr(e.Alternate, fr)
	}
	return unknown("a choice known only at run time")
}

// segsOf renders a value for a string context: a response value becomes
// an extraction into a variable, a data row its column.
func (c *conv) segsOf(v *value) ([]seg, bool) {
	switch v.k {
	case kStr:
		return v.segs, true
	case kNum, kBool:
		if v.lit {
			t, _ := v.text()
			return []seg{{lit: t}}, true
		}
		return v.segs, true
	case kNull:
		return []seg{{lit: "null"}}, true
	case kUndef:
		return []seg{{lit: "undefined"}}, true
	case kJSON:
		return []seg{{ref: c.extractJSON(v.req, v.path)}}, true
	case kHeader:
		return []seg{{ref: c.extractHeader(v.req, v.name)}}, true
	case kRow:
		if v.feed.scalar {
			return []seg{{ref: v.feed.name + "." + v.feed.column("value")}}, true
		}
		return nil, false
	case kMod:
		switch v.name {
		case "exec.scenario.iterationInTest":
			c.note("exec.scenario.iterationInTest (from 0, shared by the scenario's users) is written as a run-wide counter from 1: ${counter()}")
			return []seg{{ref: "counter()"}}, true
		}
	}
	return nil, false
}

// opaque stands in for a value the converter cannot render: a plan
// variable, empty, that the report names with the expression's position.
func (c *conv) opaque(e ast.Node, v *value) *value {
	why := v.why
	if why == "" {
		why = "a value known only at run time"
	}
	name := fmt.Sprintf("unconverted_%d", len(c.opaques)+1)
	c.opaques = append(c.opaques, name)
	c.plan.SetVar(name, "")
	c.item(e, "expression", convert.NotConverted, fmt.Sprintf("%s is %s; the plan sends the variable ${%s} (empty) in its place — set it in vars", c.s.Text(e, 80), why, name))
	c.rep.AddBehaviour(fmt.Sprintf("%s: the value of %s is sent empty (${%s})", c.s.Pos(e.Idx0()), c.s.Text(e, 60), name))
	return ref(name)
}

// render evaluates an expression for a template (URL, header, body).
func (c *conv) render(e ast.Expression, fr *frame) string {
	v := c.expr(e, fr)
	segs, ok := c.segsOf(v)
	if !ok {
		segs, _ = c.segsOf(c.opaque(e, v))
	}
	return template(segs)
}

func (c *conv) renderValue(e ast.Node, v *value) string {
	segs, ok := c.segsOf(v)
	if !ok {
		segs, _ = c.segsOf(c.opaque(e, v))
	}
	return template(segs)
}
