package k6

import (
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"

	"github.com/plateau-perf/plateau/internal/convert"
)

// request converts one http call; ui, bi, pi are the positions of the URL,
// body and params arguments (bi -1: the method takes no body).
func (c *conv) request(e *ast.CallExpression, fr *frame, method string, args []ast.Expression, ui, bi, pi int) *value {
	if ui >= len(args) {
		return c.notConverted(e, fr, "an http call without a URL")
	}
	r := &convert.Request{Method: method}
	var notes []string
	r.URL = c.render(args[ui], fr)
	if !sendable(r.URL) {
		c.item(e, "http."+strings.ToLower(method), convert.NotConverted, "its URL "+c.s.Text(args[ui], 60)+" is known only at run time")
		c.rep.AddBehaviour(fmt.Sprintf("%s: the request is not sent (its URL is known only at run time)", c.s.Pos(start(e))))
		c.comment(fr, e, "request not converted (URL known only at run time)")
		return unknown("the response of a request that is not converted")
	}
	if bi >= 0 && bi < len(args) {
		c.body(r, args[bi], c.expr(args[bi], fr), &notes)
	}
	if pi < len(args) {
		c.params(r, args[pi], c.expr(args[pi], fr), &notes)
	}
	c.finish(r)
	st, _ := convert.StatusOf(notes, nil)
	c.emit(fr, convert.Step{Request: r})
	c.last = r
	c.item(e, "http."+strings.ToLower(method), st, strings.Join(notes, "; "))
	return &value{k: kResp, req: r}
}

// finish sets what every converted request shares: values in the URL are
// sent as k6 sends them (not percent-encoded by plateau).
func (c *conv) finish(r *convert.Request) {
	if len(convert.Refs(r.URL)) > 0 {
		r.NoEncode = true
	}
	c.reqs = append(c.reqs, r)
}

func (c *conv) body(r *convert.Request, at ast.Node, v *value, notes *[]string) {
	switch v.k {
	case kUndef, kNull:
	case kObj:
		// k6 sends an object as a form, its fields in key order
		// (url.Values.Encode).
		keys := append([]string(nil), v.keys...)
		sort.Strings(keys)
		for _, k := range keys {
			x := v.m[k]
			if x.k == kMod && x.name == "k6/http.file" {
				*notes = append(*notes, "a file upload (multipart) is not converted")
				continue
			}
			r.Form = append(r.Form, convert.KV{Name: k, Value: c.renderValue(at, x)})
		}
	case kMod:
		if v.name == "file" {
			*notes = append(*notes, fmt.Sprintf("the body file %s was not beside the script; the plan sends no body", v.why))
			c.rep.AddBehaviour(fmt.Sprintf("%s: the body read from %s is not sent", c.s.Pos(at.Idx0()), v.why))
			return
		}
		fallthrough
	default:
		b := c.renderValue(at, v)
		r.Body = &b
	}
}

func (c *conv) params(r *convert.Request, at ast.Node, v *value, notes *[]string) {
	if v.k == kUndef || v.k == kNull {
		return
	}
	if v.k != kObj {
		*notes = append(*notes, "params known only at run time are not converted")
		c.rep.AddBehaviour(fmt.Sprintf("%s: the request's params (headers, tags) are not sent", c.s.Pos(at.Idx0())))
		return
	}
	for _, k := range v.keys {
		x := v.m[k]
		switch k {
		case "headers":
			if x.k != kObj {
				*notes = append(*notes, "headers known only at run time are not converted")
				c.rep.AddBehaviour(fmt.Sprintf("%s: the request's headers are not sent", c.s.Pos(at.Idx0())))
				continue
			}
			for _, h := range x.keys {
				hv := x.m[h]
				if hv.k == kUndef {
					continue
				}
				r.Headers = append(r.Headers, convert.KV{Name: h, Value: c.renderValue(at, hv)})
			}
		case "tags":
			if x.k == kObj && x.m["name"] != nil {
				if n, ok := x.m["name"].text(); ok {
					r.Name = n
				}
			}
		case "timeout":
			if d, ok := k6Duration(x); ok {
				r.Timeout = d
			} else {
				*notes = append(*notes, "a timeout known only at run time")
			}
		case "redirects":
			if x.k == kNum && x.lit {
				n := int(x.f)
				r.Redirects = &n
			}
		case "responseType", "responseCallback", "jar":
			// not needed: plateau reads every body; one jar per user
		case "cookies":
			*notes = append(*notes, "request cookies are not converted (the plan's cookie jar keeps the ones the server sets)")
			c.rep.AddBehaviour(fmt.Sprintf("%s: the request's own cookies are not sent", c.s.Pos(at.Idx0())))
		case "auth":
			*notes = append(*notes, "auth (digest / NTLM) is not converted")
			c.rep.AddBehaviour(fmt.Sprintf("%s: the request is sent without its %s authentication", c.s.Pos(at.Idx0()), c.renderValue(at, x)))
		default:
			*notes = append(*notes, "the param "+k+" is not converted")
		}
	}
}

// k6Duration reads a k6 duration: "30s", "1m30s", or a number of
// milliseconds.
func k6Duration(v *value) (time.Duration, bool) {
	if v.k == kNum && v.lit {
		return time.Duration(v.f * float64(time.Millisecond)), v.f >= 0
	}
	t, ok := v.text()
	if !ok {
		return 0, false
	}
	if f, err := strconv.ParseFloat(t, 64); err == nil {
		return time.Duration(f * float64(time.Millisecond)), f >= 0
	}
	d, err := time.ParseDuration(t)
	return d, err == nil && d >= 0
}

// batch converts http.batch: the requests one after another.
func (c *conv) batch(e *ast.CallExpression, fr *frame) *value {
	if len(e.ArgumentList) == 0 {
		return c.notConverted(e, fr, "http.batch without requests")
	}
	list := c.expr(e.ArgumentList[0], fr)
	one := func(at ast.Node, it *value) *value {
		var method = "GET"
		var url, body, params *value = undef, undef, undef
		switch it.k {
		case kStr:
			url = it
		case kArr:
			if len(it.items) < 2 {
				return unknown("a batch request without a URL")
			}
			m, ok := it.items[0].text()
			if !ok {
				return unknown("a batch method known only at run time")
			}
			method, url = strings.ToUpper(m), it.items[1]
			if len(it.items) > 2 {
				body = it.items[2]
			}
			if len(it.items) > 3 {
				params = it.items[3]
			}
		case kObj:
			if m, ok := it.m["method"]; ok {
				t, ok := m.text()
				if !ok {
					return unknown("a batch method known only at run time")
				}
				method = strings.ToUpper(t)
			}
			url = it.m["url"]
			if url == nil {
				return unknown("a batch request without a URL")
			}
			if b := it.m["body"]; b != nil {
				body = b
			}
			if p := it.m["params"]; p != nil {
				params = p
			}
		default:
			return unknown("a batch request known only at run time")
		}
		r := &convert.Request{Method: method, URL: c.renderValue(at, url)}
		var notes []string
		c.body(r, at, body, &notes)
		c.params(r, at, params, &notes)
		c.finish(r)
		c.emit(fr, convert.Step{Request: r})
		c.last = r
		return &value{k: kResp, req: r}
	}
	var out *value
	n := 0
	switch list.k {
	case kArr:
		out = &value{k: kArr}
		for _, it := range list.items {
			out.items = append(out.items, one(e, it))
			n++
		}
	case kObj:
		out = &value{k: kObj, m: map[string]*value{}}
		for _, k := range list.keys {
			out.keys = append(out.keys, k)
			out.m[k] = one(e, list.m[k])
			n++
		}
	default:
		return c.notConverted(e, fr, "http.batch of requests known only at run time")
	}
	c.item(e, "http.batch", convert.Partial, fmt.Sprintf("%d requests, sent one after another", n))
	c.rep.AddBehaviour(fmt.Sprintf("%s: http.batch sends its %d requests in parallel in k6; the plan sends them one after another", c.s.Pos(e.Idx0()), n))
	return out
}

// check converts check(res, {name: predicate, …}) into named checks on
// the response's request.
func (c *conv) check(e *ast.CallExpression, fr *frame) *value {
	if len(e.ArgumentList) < 2 {
		return c.notConverted(e, fr, "check() without conditions")
	}
	subj := c.expr(e.ArgumentList[0], fr)
	if subj.k != kResp {
		c.item(e, "check", convert.NotConverted, "a check of something other than a response ("+c.s.Text(e.ArgumentList[0], 40)+")")
		return undef
	}
	obj, ok := e.ArgumentList[1].(*ast.ObjectLiteral)
	if !ok {
		// An object built before the call: {} then obj[name] = fn.
		v := c.expr(e.ArgumentList[1], fr)
		if v.k != kObj || len(v.keys) == 0 {
			return c.notConverted(e, fr, "check() whose conditions are not an object")
		}
		for _, name := range v.keys {
			fn := v.m[name]
			if fn.k != kFunc {
				c.item(e, "check", convert.NotConverted, fmt.Sprintf("check %q: not a function", name))
				continue
			}
			c.checkOne(e, fr, subj, name, fnPredicate(fn.fn))
		}
		return unknown("the result of check()")
	}
	for _, p := range obj.Value {
		kp, ok := p.(*ast.PropertyKeyed)
		if !ok {
			c.item(p, "check", convert.NotConverted, "a check that is not name: predicate")
			continue
		}
		name, ok := c.key(kp.Key, kp.Computed, fr)
		if !ok {
			c.item(p, "check", convert.NotConverted, "a check name known only at run time")
			continue
		}
		body, param := predicate(kp.Value)
		c.checkOne(p, fr, subj, name, pred{body, param})
	}
	return unknown("the result of check()")
}

type pred struct {
	body  ast.Expression
	param string
}

func fnPredicate(f *fnDef) pred {
	param := ""
	if f.params != nil && len(f.params.List) > 0 {
		if id, ok := f.params.List[0].Target.(*ast.Identifier); ok {
			param = string(id.Name)
		}
	}
	switch b := f.body.(type) {
	case *ast.ExpressionBody:
		return pred{b.Expression, param}
	case *ast.BlockStatement:
		if len(b.List) == 1 {
			if r, ok := b.List[0].(*ast.ReturnStatement); ok {
				return pred{r.Argument, param}
			}
		}
	}
	return pred{}
}

// checkOne adds one named check to the response's request.
func (c *conv) checkOne(p ast.Node, fr *frame, subj *value, name string, pr pred) {
	if pr.body == nil {
		c.item(p, "check", convert.NotConverted, fmt.Sprintf("check %q: the condition is not a function returning an expression", name))
		return
	}
	pc := &predConv{c: c, fr: fr, param: pr.param, req: subj.req}
	ck := convert.Check{Name: name}
	if !pc.into(pr.body, &ck, false) {
		c.item(p, "check", convert.NotConverted, fmt.Sprintf("check %q: %s is outside the converted checks (status, body contains, JSON value, header, duration)", name, c.s.Text(pr.body, 80)))
		c.comment(fr, p, fmt.Sprintf("check %q not converted", name))
		return
	}
	for _, x := range subj.req.Checks {
		if x.Name == ck.Name {
			return // the same check reached again (a helper called twice)
		}
	}
	subj.req.Checks = append(subj.req.Checks, ck)
	c.item(p, "check", convert.Converted, fmt.Sprintf("check %q", name))
	c.checks++
}

// predicate returns the returned expression of a one-parameter function
// and the parameter's name.
func predicate(e ast.Expression) (ast.Expression, string) {
	var params *ast.ParameterList
	var body ast.ConciseBody
	switch f := e.(type) {
	case *ast.ArrowFunctionLiteral:
		params, body = f.ParameterList, f.Body
	case *ast.FunctionLiteral:
		params, body = f.ParameterList, f.Body
	default:
		return nil, ""
	}
	param := ""
	if params != nil && len(params.List) > 0 {
		if id, ok := params.List[0].Target.(*ast.Identifier); ok {
			param = string(id.Name)
		}
	}
	switch b := body.(type) {
	case *ast.ExpressionBody:
		return b.Expression, param
	case *ast.BlockStatement:
		if len(b.List) == 1 {
			if r, ok := b.List[0].(*ast.ReturnStatement); ok {
				return r.Argument, param
			}
		}
	}
	return nil, ""
}

// predConv converts a check predicate over the response parameter.
type predConv struct {
	c     *conv
	fr    *frame
	param string
	req   *convert.Request
}

// operand is what one side of a comparison reads of the response.
type operand struct {
	what  string   // status, body, bodylen, json, header, duration, lit
	path  []string // json
	name  string   // header
	lit   *value
	negOK bool
}

func (p *predConv) operand(e ast.Expression) (operand, bool) {
	t := strings.ReplaceAll(p.c.s.Text(e, 300), " ", "")
	r := p.param
	if r == "" {
		r = "\x00"
	}
	switch t {
	case r + ".status":
		return operand{what: "status"}, true
	case r + ".body":
		return operand{what: "body"}, true
	case r + ".body.length":
		return operand{what: "bodylen"}, true
	case r + ".timings.duration", r + ".timings.waiting":
		return operand{what: "duration"}, true
	}
	if strings.HasPrefix(t, r+".json(") || strings.HasPrefix(t, "JSON.parse("+r+".body)") {
		path, ok := jsonSelector(t, r)
		if ok {
			return operand{what: "json", path: path}, true
		}
		return operand{}, false
	}
	if m := headerRe.FindStringSubmatch(t); m != nil && m[1] == r {
		return operand{what: "header", name: m[2] + m[3]}, true
	}
	if strings.Contains(t, r+".") || t == r {
		return operand{}, false
	}
	v := p.c.expr(e, p.fr)
	if _, ok := v.text(); ok || v.k == kUndef || v.k == kNull {
		return operand{what: "lit", lit: v}, true
	}
	if segs, ok := p.c.segsOf(v); ok {
		return operand{what: "lit", lit: &value{k: kStr, segs: segs}}, true
	}
	return operand{}, false
}

var headerRe = regexp.MustCompile(`^(\w+)\.headers(?:\[['"]([^'"]+)['"]\]|\.([A-Za-z_][\w]*))$`)

// jsonSelector reads r.json("a.b").c[0] and JSON.parse(r.body).a.b.
func jsonSelector(t, r string) ([]string, bool) {
	var rest string
	var path []string
	if s, ok := strings.CutPrefix(t, r+".json("); ok {
		end := strings.IndexByte(s, ')')
		if end < 0 {
			return nil, false
		}
		arg := s[:end]
		if arg != "" {
			if len(arg) < 2 || (arg[0] != '"' && arg[0] != '\'') || arg[len(arg)-1] != arg[0] {
				return nil, false
			}
			path = gjsonPath(arg[1 : len(arg)-1])
		}
		rest = s[end+1:]
	} else if s, ok := strings.CutPrefix(t, "JSON.parse("+r+".body)"); ok {
		rest = s
	}
	for rest != "" {
		switch {
		case strings.HasPrefix(rest, "."):
			m := regexp.MustCompile(`^\.([A-Za-z_$][\w$]*)`).FindStringSubmatch(rest)
			if m == nil {
				return nil, false
			}
			path = append(path, m[1])
			rest = rest[len(m[0]):]
		case strings.HasPrefix(rest, "["):
			m := regexp.MustCompile(`^\[(?:(\d+)|'([^']*)'|"([^"]*)")\]`).FindStringSubmatch(rest)
			if m == nil {
				return nil, false
			}
			path = append(path, m[1]+m[2]+m[3])
			rest = rest[len(m[0]):]
		default:
			return nil, false
		}
	}
	return path, true
}

// into adds the predicate's condition to ck; neg says it is negated.
func (p *predConv) into(e ast.Expression, ck *convert.Check, neg bool) bool {
	switch x := e.(type) {
	case *ast.BinaryExpression:
		switch x.Operator {
		case token.LOGICAL_AND:
			if neg {
				return false
			}
			return p.into(x.Left, ck, false) && p.into(x.Right, ck, false)
		case token.LOGICAL_OR:
			// r.status === 200 || r.status === 201
			if neg {
				return false
			}
			var a, b convert.Check
			if p.into(x.Left, &a, false) && p.into(x.Right, &b, false) && len(a.Status) > 0 && len(b.Status) > 0 && a.IsZero() == false {
				onlyStatus := func(k convert.Check) bool { s := k.Status; k.Status = nil; return k.IsZero() && len(s) > 0 }
				if onlyStatus(a) && onlyStatus(b) {
					ck.Status = append(ck.Status, a.Status...)
					ck.Status = append(ck.Status, b.Status...)
					return true
				}
			}
			return false
		case token.STRICT_EQUAL, token.EQUAL, token.STRICT_NOT_EQUAL, token.NOT_EQUAL,
			token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL:
			return p.compare(x, ck, neg)
		}
	case *ast.UnaryExpression:
		if x.Operator == token.NOT {
			return p.into(x.Operand, ck, !neg)
		}
	case *ast.CallExpression:
		return p.method(x, ck, neg)
	default:
		// A bare value: truthy.
		o, ok := p.operand(e)
		if !ok {
			return false
		}
		switch o.what {
		case "json":
			if neg {
				return false
			}
			ck.JSONExists = append(ck.JSONExists, jsonPath(o.path))
			return true
		case "body":
			if neg {
				return false
			}
			ck.MinSize = max(ck.MinSize, 1)
			return true
		}
	}
	return false
}

func (p *predConv) compare(x *ast.BinaryExpression, ck *convert.Check, neg bool) bool {
	l, ok1 := p.operand(x.Left)
	r, ok2 := p.operand(x.Right)
	if !ok1 || !ok2 {
		// r.body.indexOf("x") !== -1
		return p.indexOf(x, ck, neg)
	}
	op := x.Operator
	if l.what == "lit" && r.what != "lit" {
		l, r = r, l
		op = flip(op)
	}
	if r.what != "lit" {
		return false
	}
	if neg {
		op = negate(op)
	}
	lit := r.lit
	switch l.what {
	case "status":
		n, ok := litNum(lit)
		if !ok {
			return false
		}
		switch op {
		case token.STRICT_EQUAL, token.EQUAL:
			ck.Status = append(ck.Status, int(n))
			return true
		case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL:
			// a range: written as the status codes it admits, when few
			lo, hi := 100.0, 599.0
			switch op {
			case token.LESS:
				hi = n - 1
			case token.LESS_OR_EQUAL:
				hi = n
			case token.GREATER:
				lo = n + 1
			default:
				lo = n
			}
			return p.statusRange(ck, int(lo), int(hi))
		}
		return false
	case "duration":
		n, ok := litNum(lit)
		if !ok || !(op == token.LESS || op == token.LESS_OR_EQUAL) || n <= 0 {
			return false
		}
		ck.MaxDuration = time.Duration(n * float64(time.Millisecond))
		return true
	case "bodylen":
		n, ok := litNum(lit)
		if !ok {
			return false
		}
		switch op {
		case token.GREATER:
			ck.MinSize = max(ck.MinSize, int(n)+1)
		case token.GREATER_OR_EQUAL:
			ck.MinSize = max(ck.MinSize, int(n))
		case token.LESS:
			ck.MaxSize = int(n) - 1
		case token.LESS_OR_EQUAL:
			ck.MaxSize = int(n)
		default:
			return false
		}
		return true
	case "json":
		jp := jsonPath(l.path)
		switch op {
		case token.STRICT_EQUAL, token.EQUAL:
			if lit.k == kUndef {
				return false
			}
			ck.JSON = append(ck.JSON, convert.KV{Name: jp, Value: p.c.renderValue(x, lit)})
			return true
		case token.STRICT_NOT_EQUAL, token.NOT_EQUAL:
			if lit.k == kUndef || lit.k == kNull {
				ck.JSONExists = append(ck.JSONExists, jp)
				return true
			}
			if t, ok := lit.text(); ok && t == "" {
				ck.JSONMatch = append(ck.JSONMatch, convert.KV{Name: jp, Value: "."})
				return true
			}
			ck.JSONNot = append(ck.JSONNot, convert.KV{Name: jp, Value: p.c.renderValue(x, lit)})
			return true
		}
	case "header":
		t, ok := lit.text()
		if !ok || !(op == token.STRICT_EQUAL || op == token.EQUAL) {
			return false
		}
		ck.HeaderMatch = append(ck.HeaderMatch, convert.KV{Name: l.name, Value: "^" + regexp.QuoteMeta(t) + "$"})
		return true
	case "body":
		t, ok := lit.text()
		if !ok {
			return false
		}
		switch op {
		case token.STRICT_EQUAL, token.EQUAL:
			ck.Regex = "^" + regexp.QuoteMeta(t) + "$"
		case token.STRICT_NOT_EQUAL, token.NOT_EQUAL:
			if t != "" {
				return false
			}
			ck.MinSize = max(ck.MinSize, 1)
		default:
			return false
		}
		return true
	}
	return false
}

// statusRange writes a status range as its codes (a range of at most 100).
func (p *predConv) statusRange(ck *convert.Check, lo, hi int) bool {
	if hi < lo || hi-lo >= 100 {
		return false
	}
	for s := lo; s <= hi; s++ {
		ck.Status = append(ck.Status, s)
	}
	return true
}

// indexOf reads r.body.indexOf("x") !== -1 (and === -1, > -1, >= 0).
func (p *predConv) indexOf(x *ast.BinaryExpression, ck *convert.Check, neg bool) bool {
	call, ok := x.Left.(*ast.CallExpression)
	if !ok {
		return false
	}
	d, ok := call.Callee.(*ast.DotExpression)
	if !ok || d.Identifier.Name != "indexOf" || len(call.ArgumentList) != 1 {
		return false
	}
	o, ok := p.operand(d.Left)
	if !ok || o.what != "body" {
		return false
	}
	sub, ok := p.c.expr(call.ArgumentList[0], p.fr).text()
	if !ok {
		return false
	}
	n, ok := litNum(p.c.expr(x.Right, p.fr))
	if !ok {
		return false
	}
	found := false
	switch {
	case (x.Operator == token.STRICT_NOT_EQUAL || x.Operator == token.NOT_EQUAL) && n == -1,
		x.Operator == token.GREATER && n == -1, x.Operator == token.GREATER_OR_EQUAL && n == 0:
		found = true
	case (x.Operator == token.STRICT_EQUAL || x.Operator == token.EQUAL) && n == -1,
		x.Operator == token.LESS && n == 0:
		found = false
	default:
		return false
	}
	if neg {
		found = !found
	}
	if found {
		ck.Body = sub
	} else {
		ck.NotBody = sub
	}
	return true
}

// method reads r.body.includes("x"), r.headers[…].includes("x"),
// /re/.test(r.body), r.json("a").length-free forms.
func (p *predConv) method(x *ast.CallExpression, ck *convert.Check, neg bool) bool {
	d, ok := x.Callee.(*ast.DotExpression)
	if !ok || len(x.ArgumentList) != 1 {
		return false
	}
	switch d.Identifier.Name {
	case "includes", "startsWith", "endsWith":
		o, ok := p.operand(d.Left)
		if !ok {
			return false
		}
		sub, ok := p.c.expr(x.ArgumentList[0], p.fr).text()
		if !ok {
			return false
		}
		re := regexp.QuoteMeta(sub)
		if d.Identifier.Name == "startsWith" {
			re = "^" + re
		} else if d.Identifier.Name == "endsWith" {
			re += "$"
		}
		switch o.what {
		case "body":
			switch {
			case d.Identifier.Name == "includes" && !neg:
				ck.Body = sub
			case d.Identifier.Name == "includes" && neg:
				ck.NotBody = sub
			case !neg:
				ck.Regex = re
			default:
				ck.NotRegex = re
			}
			return true
		case "header":
			if neg {
				return false
			}
			ck.HeaderMatch = append(ck.HeaderMatch, convert.KV{Name: o.name, Value: re})
			return true
		case "json":
			if neg || d.Identifier.Name != "includes" {
				return false
			}
			ck.JSONMatch = append(ck.JSONMatch, convert.KV{Name: jsonPath(o.path), Value: re})
			return true
		}
	case "test":
		re, ok := d.Left.(*ast.RegExpLiteral)
		if !ok {
			return false
		}
		o, ok := p.operand(x.ArgumentList[0])
		if !ok || o.what != "body" {
			return false
		}
		if strings.Contains(re.Flags, "i") {
			re.Pattern = "(?i)" + re.Pattern
		}
		if neg {
			ck.NotRegex = re.Pattern
		} else {
			ck.Regex = re.Pattern
		}
		return true
	}
	return false
}

func litNum(v *value) (float64, bool) {
	if v == nil {
		return 0, false
	}
	if v.k == kNum && v.lit {
		return v.f, true
	}
	if t, ok := v.text(); ok {
		f, err := strconv.ParseFloat(t, 64)
		return f, err == nil && !math.IsNaN(f)
	}
	return 0, false
}

func flip(op token.Token) token.Token {
	switch op {
	case token.LESS:
		return token.GREATER
	case token.GREATER:
		return token.LESS
	case token.LESS_OR_EQUAL:
		return token.GREATER_OR_EQUAL
	case token.GREATER_OR_EQUAL:
		return token.LESS_OR_EQUAL
	}
	return op
}

func negate(op token.Token) token.Token {
	switch op {
	case token.STRICT_EQUAL:
		return token.STRICT_NOT_EQUAL
	case token.EQUAL:
		return token.NOT_EQUAL
	case token.STRICT_NOT_EQUAL:
		return token.STRICT_EQUAL
	case token.NOT_EQUAL:
		return token.EQUAL
	case token.LESS:
		return token.GREATER_OR_EQUAL
	case token.GREATER:
		return token.LESS_OR_EQUAL
	case token.LESS_OR_EQUAL:
		return token.GREATER
	case token.GREATER_OR_EQUAL:
		return token.LESS
	}
	return op
}

// sendable reports whether a URL template names where it goes: an
// absolute URL, a path, or a base URL from the environment.
func sendable(u string) bool {
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "/") || strings.HasPrefix(u, "${env.")
}
