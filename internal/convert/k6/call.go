package k6

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"

	"github.com/plateau-perf/plateau/internal/convert"
)

func (c *conv) call(e *ast.CallExpression, fr *frame) *value {
	callee := c.expr(e.Callee, fr)
	args := e.ArgumentList
	arg := func(i int) *value {
		if i < len(args) {
			return c.expr(args[i], fr)
		}
		return undef
	}
	switch callee.k {
	case kFunc:
		return c.invoke(callee.fn, args, fr, e)
	case kUnknown:
		c.item(e, "call", convert.NotConverted, fmt.Sprintf("%s: %s is outside the converted subset", c.s.Text(e, 80), callee.why))
		c.comment(fr, e, "not converted")
		return unknown(callee.why)
	case kMod:
	default:
		return unknown("a call of a value that is not a function")
	}
	name := callee.name
	switch name {
	case "k6/http.get", "k6/http.head":
		return c.request(e, fr, strings.ToUpper(strings.TrimPrefix(name, "k6/http.")), args, 0, -1, 1)
	case "k6/http.post", "k6/http.put", "k6/http.patch", "k6/http.del", "k6/http.options":
		m := strings.ToUpper(strings.TrimPrefix(name, "k6/http."))
		if m == "DEL" {
			m = "DELETE"
		}
		return c.request(e, fr, m, args, 0, 1, 2)
	case "k6/http.request":
		mv := arg(0)
		m, ok := mv.text()
		if !ok {
			return c.notConverted(e, fr, "the method is known only at run time")
		}
		return c.request(e, fr, strings.ToUpper(m), args, 1, 2, 3)
	case "k6/http.batch":
		return c.batch(e, fr)
	case "k6.check":
		return c.check(e, fr)
	case "k6.sleep":
		c.sleep(e, fr)
		return undef
	case "k6.group":
		return c.group(e, fr)
	case "k6.fail":
		c.item(e, "fail", convert.Partial, "fail() ends the iteration in k6; the plan goes on (a check with on_fail converts it when it follows a request's status test)")
		c.rep.AddBehaviour(fmt.Sprintf("%s: fail() does not end the iteration in the plan", c.s.Pos(e.Idx0())))
		return undef
	case "k6.randomSeed", "k6/execution.test.abort":
		c.item(e, name, convert.NotConverted, "not converted")
		return undef
	case "console.log", "console.info", "console.warn", "console.error", "console.debug":
		c.item(e, name, convert.NotNeeded, "logs only; plateau records every request itself")
		return undef
	case "JSON.stringify":
		v := arg(0)
		if len(args) > 1 {
			if t, ok := arg(1).text(); !ok || t != "null" && t != "undefined" {
				return unknown("JSON.stringify with a replacer or indentation")
			}
		}
		t, ok := c.jsonText(v, 0)
		if !ok {
			return unknown("JSON.stringify of a value known only at run time")
		}
		segs := parseTemplate(t)
		return &value{k: kStr, segs: segs, name: "json", lit: isLit(segs)}
	case "JSON.parse":
		v := arg(0)
		if v.k == kMod && v.name == "resp.body" {
			return &value{k: kJSON, req: v.req}
		}
		if t, ok := v.text(); ok {
			return c.fromJSON(t)
		}
		return unknown("JSON.parse of a value known only at run time")
	case "Math.random":
		return &value{k: kMod, name: "random"}
	case "Math.floor", "Math.round", "Math.ceil", "Math.trunc":
		v := arg(0)
		if v.k == kNum && v.lit {
			switch name {
			case "Math.floor":
				return num(math.Floor(v.f))
			case "Math.round":
				return num(math.Round(v.f))
			case "Math.ceil":
				return num(math.Ceil(v.f))
			default:
				return num(math.Trunc(v.f))
			}
		}
		if r, ok := randomRange(args, c, fr); ok {
			return numRef(fmt.Sprintf("randomInt(%d, %d)", r[0], r[1]))
		}
		return unknown("a number known only at run time")
	case "Math.min", "Math.max":
		var fs []float64
		for i := range args {
			v := arg(i)
			if v.k != kNum || !v.lit {
				return unknown("a number known only at run time")
			}
			fs = append(fs, v.f)
		}
		if len(fs) == 0 {
			return unknown("Math.min/max without arguments")
		}
		out := fs[0]
		for _, f := range fs[1:] {
			if name == "Math.min" {
				out = math.Min(out, f)
			} else {
				out = math.Max(out, f)
			}
		}
		return num(out)
	case "parseInt", "parseFloat", "Number":
		v := arg(0)
		if v.env != "" || v.name == "envdefault" {
			return &value{k: kNum, segs: v.segs, name: v.name}
		}
		n := c.toNum(v)
		if n.k == kNum && n.lit && name == "parseInt" {
			return num(math.Trunc(n.f))
		}
		return n
	case "String", "string.toString", "string.trim":
		v := arg(0)
		if name != "String" {
			v = callee.items[0]
		}
		if segs, ok := c.segsOf(v); ok {
			out := &value{k: kStr, segs: segs}
			out.lit = isLit(segs)
			return out
		}
		return unknown("a string known only at run time")
	case "encodeURIComponent", "encodeURI":
		v := arg(0)
		if t, ok := v.text(); ok {
			return str(encodeURIComponent(t, name == "encodeURI"))
		}
		if segs, ok := c.segsOf(v); ok && len(segs) == 1 && segs[0].ref != "" && !strings.Contains(segs[0].ref, "(") {
			return ref("pathencode(" + segs[0].ref + ")")
		}
		return unknown("encoding of a value known only at run time")
	case "Date.now":
		return numRef("__timestamp_ms")
	case "crypto.randomUUID", "utils.uuidv4":
		return ref("__uuid")
	case "utils.randomIntBetween":
		a, b := c.toNum(arg(0)), c.toNum(arg(1))
		if a.lit && b.lit && a.k == kNum && b.k == kNum {
			return numRef(fmt.Sprintf("randomInt(%s, %s)", fmtNum(a.f), fmtNum(b.f)))
		}
		return unknown("random bounds known only at run time")
	case "utils.randomString":
		n := c.toNum(arg(0))
		if n.lit && n.k == kNum && len(args) == 1 {
			return ref(fmt.Sprintf("randomString(%s)", fmtNum(n.f)))
		}
		return unknown("randomString with a charset or a length known only at run time")
	case "utils.randomItem":
		v := arg(0)
		if v.k == kData {
			v.feed.use("random", "", c.s.Pos(e.Idx0()))
			return &value{k: kRow, feed: v.feed}
		}
		if v.k == kArr {
			var parts []string
			for _, it := range v.items {
				t, ok := it.text()
				if !ok {
					return unknown("randomItem of values known only at run time")
				}
				parts = append(parts, strconv.Quote(t))
			}
			return ref("randomChoice(" + strings.Join(parts, ", ") + ")")
		}
		return unknown("randomItem of a value known only at run time")
	case "open":
		return c.open(e, fr)
	case "resp.json":
		path := []string(nil)
		if len(args) > 0 {
			t, ok := arg(0).text()
			if !ok {
				return unknown("a JSON selector known only at run time")
			}
			path = gjsonPath(t)
		}
		return &value{k: kJSON, req: callee.req, path: path}
	case "papaparse.parse":
		return unknown("papaparse outside a SharedArray")
	}
	if strings.HasPrefix(name, "summary.") || name == "k6/metrics" {
		return undef
	}
	if name == "metric.add" {
		c.item(e, "custom metric", convert.NotConverted, "the value added to a custom metric is not recorded (a trend step would carry it)")
		c.comment(fr, e, "custom metric not recorded")
		return undef
	}
	return c.notConverted(e, fr, name+"() is outside the converted subset")
}

func (c *conv) notConverted(e ast.Node, fr *frame, why string) *value {
	c.item(e, "call", convert.NotConverted, why)
	c.comment(fr, e, "not converted")
	return unknown(why)
}

// randomRange reads Math.floor(Math.random() * N) → [0, N-1].
func randomRange(args []ast.Expression, c *conv, fr *frame) ([2]int, bool) {
	if len(args) != 1 {
		return [2]int{}, false
	}
	b, ok := args[0].(*ast.BinaryExpression)
	if !ok || b.Operator != token.MULTIPLY {
		return [2]int{}, false
	}
	l, r := c.expr(b.Left, fr), c.expr(b.Right, fr)
	if r.k == kMod && r.name == "random" {
		l, r = r, l
	}
	if !(l.k == kMod && l.name == "random") || r.k != kNum || !r.lit {
		return [2]int{}, false
	}
	n := int(math.Ceil(r.f))
	if n < 1 {
		return [2]int{}, false
	}
	return [2]int{0, n - 1}, true
}

var uriKeep = regexp.MustCompile(`^[A-Za-z0-9\-_.!~*'()]$`)

func encodeURIComponent(s string, uri bool) string {
	var b strings.Builder
	for _, r := range s {
		ch := string(r)
		if uriKeep.MatchString(ch) || (uri && strings.ContainsRune(";,/?:@&=+$#", r)) {
			b.WriteString(ch)
			continue
		}
		for _, x := range []byte(ch) {
			fmt.Fprintf(&b, "%%%02X", x)
		}
	}
	return b.String()
}

// gjsonPath turns k6's res.json() selector ("data.items.0.id") into path
// segments.
func gjsonPath(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ".")
}

// jsonPath writes path segments as a JSONPath.
func jsonPath(p []string) string {
	var b strings.Builder
	b.WriteString("$")
	for _, s := range p {
		if _, err := strconv.Atoi(s); err == nil {
			b.WriteString("[" + s + "]")
		} else if regexp.MustCompile(`^[A-Za-z_$][\w$-]*$`).MatchString(s) {
			b.WriteString("." + s)
		} else {
			b.WriteString("['" + strings.ReplaceAll(s, "'", `\'`) + "']")
		}
	}
	return b.String()
}

// extractJSON adds (once) an extraction of path from the request's JSON
// response and returns the variable's name.
func (c *conv) extractJSON(r *convert.Request, path []string) string {
	jp := jsonPath(path)
	for _, x := range r.Extract {
		if x.JSON == jp {
			return x.Var
		}
	}
	base := "value"
	for i := len(path) - 1; i >= 0; i-- {
		if _, err := strconv.Atoi(path[i]); err != nil {
			base = path[i]
			break
		}
	}
	v := c.newVar(base)
	r.Extract = append(r.Extract, convert.Extract{Var: v, JSON: jp})
	return v
}

// extractJSONRaw is extractJSON keeping the value as JSON text (as_json),
// for a JSON body that sends it with the type the response gave it.
func (c *conv) extractJSONRaw(r *convert.Request, path []string) string {
	jp := jsonPath(path)
	for _, x := range r.Extract {
		if x.JSON == jp && x.AsJSON {
			return x.Var
		}
	}
	base := "value"
	for i := len(path) - 1; i >= 0; i-- {
		if _, err := strconv.Atoi(path[i]); err != nil {
			base = path[i]
			break
		}
	}
	v := c.newVar(base + "_json")
	r.Extract = append(r.Extract, convert.Extract{Var: v, JSON: jp, AsJSON: true})
	return v
}

func (c *conv) extractHeader(r *convert.Request, name string) string {
	if ck, ok := strings.CutPrefix(name, "cookie:"); ok {
		for _, x := range r.Extract {
			if x.Cookie == ck {
				return x.Var
			}
		}
		v := c.newVar(ck)
		r.Extract = append(r.Extract, convert.Extract{Var: v, Cookie: ck})
		return v
	}
	for _, x := range r.Extract {
		if strings.EqualFold(x.Header, name) {
			return x.Var
		}
	}
	v := c.newVar(name)
	r.Extract = append(r.Extract, convert.Extract{Var: v, Header: name})
	return v
}

func (c *conv) newVar(base string) string {
	base = convert.VarName(strings.ToLower(base))
	v := base
	for n := 2; c.used[v]; n++ {
		v = fmt.Sprintf("%s_%d", base, n)
	}
	c.used[v] = true
	return v
}

// fromJSON turns constant JSON text into a value.
func (c *conv) fromJSON(t string) *value {
	var x any
	if err := json.Unmarshal([]byte(t), &x); err != nil {
		return unknown("JSON.parse of text that is not JSON")
	}
	return goValue(x, 0)
}

func goValue(x any, depth int) *value {
	if depth > 64 {
		return unknown("JSON nested too deep")
	}
	switch x := x.(type) {
	case nil:
		return &value{k: kNull, lit: true}
	case bool:
		return boolean(x)
	case float64:
		return num(x)
	case string:
		return str(x)
	case []any:
		a := &value{k: kArr}
		for _, it := range x {
			a.items = append(a.items, goValue(it, depth+1))
		}
		return a
	case map[string]any:
		o := &value{k: kObj, m: map[string]*value{}}
		for k, v := range x {
			o.keys = append(o.keys, k)
			o.m[k] = goValue(v, depth+1)
		}
		return o
	}
	return unknown("a JSON value")
}

// maxCalls bounds the script function calls one conversion follows (a
// script that recurses twice per call would otherwise take 2^24 calls).
const maxCalls = 10_000

// maxOpen bounds a file open() inlines into the plan.
const maxOpen = 1 << 20

// open reads a file beside the script (k6's open()) as a constant string.
func (c *conv) open(e *ast.CallExpression, fr *frame) *value {
	if len(e.ArgumentList) == 0 {
		return unknown("open() without a file")
	}
	p, ok := c.expr(e.ArgumentList[0], fr).text()
	if !ok {
		return unknown("open() of a path known only at run time")
	}
	if len(e.ArgumentList) > 1 {
		if m, _ := c.expr(e.ArgumentList[1], fr).text(); m == "b" {
			return unknown("open() of a binary file")
		}
	}
	full := c.resolve(p)
	st, err := os.Stat(full)
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxOpen {
		return &value{k: kMod, name: "file", why: p}
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return &value{k: kMod, name: "file", why: p}
	}
	v := str(string(b))
	v.name = "file:" + p
	return v
}

func (c *conv) resolve(p string) string {
	p = strings.TrimPrefix(p, "file://")
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

// invoke converts a call of a script function: its steps go where it was
// called, its return value is the call's value.
func (c *conv) invoke(fn *fnDef, args []ast.Expression, fr *frame, at ast.Node) *value {
	if fr.depth >= 24 {
		return c.notConverted(at, fr, "calls nested deeper than 24 (recursion) are not converted")
	}
	if c.calls++; c.calls > maxCalls {
		return c.notConverted(at, fr, fmt.Sprintf("more than %d function calls: the rest is not converted", maxCalls))
	}
	nf := &frame{sc: newScope(fn.scope), steps: fr.steps, setup: fr.setup, depth: fr.depth + 1}
	if fn.s != nil && fn.s != c.s {
		prev := c.s
		defer func() { c.s = prev }()
	}
	if fn.params != nil {
		for i, b := range fn.params.List {
			v := undef
			if i < len(args) {
				v = c.expr(args[i], fr)
			} else if b.Initializer != nil {
				v = c.expr(b.Initializer, nf)
			}
			c.bind(b.Target, v, nf)
		}
	}
	if fn.s != nil {
		c.s = fn.s
	}
	switch body := fn.body.(type) {
	case *ast.BlockStatement:
		c.stmts(body.List, nf)
	case *ast.ExpressionBody:
		nf.ret = c.expr(body.Expression, nf)
	}
	if nf.ret == nil {
		return undef
	}
	return nf.ret
}

func (c *conv) newExpr(e *ast.NewExpression, fr *frame) *value {
	callee := c.expr(e.Callee, fr)
	if callee.k != kMod {
		return unknown("new of a value that is not a known constructor")
	}
	switch callee.name {
	case "k6/data.SharedArray":
		return c.sharedArray(e, fr)
	case "k6/metrics.Trend", "k6/metrics.Counter", "k6/metrics.Rate", "k6/metrics.Gauge":
		n := ""
		if len(e.ArgumentList) > 0 {
			n, _ = c.expr(e.ArgumentList[0], fr).text()
		}
		c.item(e, "custom metric", convert.NotConverted, fmt.Sprintf("the custom metric %q is not recorded (a trend step or a transaction would carry it)", n))
		return &value{k: kMod, name: "metric"}
	case "Date":
		return &value{k: kMod, name: "date"}
	}
	return unknown("new " + callee.name)
}

// sharedArray reads new SharedArray(name, fn): fn's return names a JSON
// file (optionally a member of it) or a CSV file through papaparse.
func (c *conv) sharedArray(e *ast.NewExpression, fr *frame) *value {
	if len(e.ArgumentList) < 2 {
		return unknown("a SharedArray without its function")
	}
	label, _ := c.expr(e.ArgumentList[0], fr).text()
	fnv := c.expr(e.ArgumentList[1], fr)
	if fnv.k != kFunc {
		return unknown("a SharedArray whose data is not a function")
	}
	ret := c.returnExpr(fnv.fn)
	if ret == nil {
		return unknown("a SharedArray function without a return")
	}
	f, why := c.dataSource(ret, fnv.fn, label)
	if f == nil {
		c.item(e, "SharedArray", convert.NotConverted, why)
		return unknown(why)
	}
	c.feeders = append(c.feeders, f)
	c.item(e, "SharedArray", convert.Converted, "data set "+f.name+" from "+f.file)
	return &value{k: kData, feed: f}
}

// returnExpr is the expression a data function returns (its last return).
func (c *conv) returnExpr(fn *fnDef) ast.Expression {
	switch b := fn.body.(type) {
	case *ast.ExpressionBody:
		return b.Expression
	case *ast.BlockStatement:
		for i := len(b.List) - 1; i >= 0; i-- {
			if r, ok := b.List[i].(*ast.ReturnStatement); ok {
				return r.Argument
			}
		}
	}
	return nil
}

// dataSource recognises JSON.parse(open(f))[.member…] and
// papaparse.parse(open(f), {header: true}).data.
func (c *conv) dataSource(e ast.Expression, fn *fnDef, label string) (*feeder, string) {
	var members []string
	for {
		d, ok := e.(*ast.DotExpression)
		if !ok {
			break
		}
		members = append([]string{string(d.Identifier.Name)}, members...)
		e = d.Left
	}
	call, ok := e.(*ast.CallExpression)
	if !ok {
		return nil, "the SharedArray's data is not JSON.parse(open(…)) or papaparse.parse(open(…))"
	}
	fr := &frame{sc: newScope(fn.scope), steps: new([]convert.Step)}
	callee := c.expr(call.Callee, fr)
	if callee.k != kMod || len(call.ArgumentList) == 0 {
		return nil, "the SharedArray's data is not JSON.parse(open(…)) or papaparse.parse(open(…))"
	}
	oc, ok := call.ArgumentList[0].(*ast.CallExpression)
	if !ok {
		return nil, "the SharedArray's data does not come from open(file)"
	}
	if o := c.expr(oc.Callee, fr); o.k != kMod || o.name != "open" || len(oc.ArgumentList) == 0 {
		return nil, "the SharedArray's data does not come from open(file)"
	}
	path, ok := c.expr(oc.ArgumentList[0], fr).text()
	if !ok {
		return nil, "the data file's path is known only at run time"
	}
	name := convert.VarName(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
	if label != "" {
		name = convert.VarName(label)
	}
	for c.feedNames[name] {
		name += "_2"
	}
	c.feedNames[name] = true
	f := &feeder{name: name, file: path, pos: c.s.Pos(call.Idx0())}
	switch callee.name {
	case "JSON.parse":
		return c.jsonFeeder(f, members)
	case "papaparse.parse":
		header := false
		if len(call.ArgumentList) > 1 {
			if o := c.expr(call.ArgumentList[1], fr); o.k == kObj && o.m["header"] != nil {
				header, _ = o.m["header"].truthy()
			}
			if o := c.expr(call.ArgumentList[1], fr); o.k == kObj && o.m["delimiter"] != nil {
				f.delim, _ = o.m["delimiter"].text()
			}
		}
		if len(members) != 1 || members[0] != "data" {
			return nil, "papaparse.parse(…) without .data"
		}
		return c.csvFeeder(f, header)
	}
	return nil, "the SharedArray's data is not JSON.parse(open(…)) or papaparse.parse(open(…))"
}

// feeder is one data set.
type feeder struct {
	name, file string
	pos        string
	scalar     bool     // an array of plain values: one column "value"
	header     bool     // CSV with a header row
	delim      string   // CSV delimiter
	cols       []string // columns the plan reads
	all        []string // columns the file has, when read
	json       bool
	made       bool // the plan reads a CSV the conversion made
	order      string
	orders     []string
	notes      []string
}

func (f *feeder) column(name string) string {
	for _, c := range f.cols {
		if c == name {
			return c
		}
	}
	f.cols = append(f.cols, name)
	return name
}

func (f *feeder) use(order, note, pos string) {
	f.orders = append(f.orders, order)
	if note != "" {
		f.notes = append(f.notes, pos+": "+note)
	}
}

func (c *conv) jsonFeeder(f *feeder, members []string) (*feeder, string) {
	b, err := os.ReadFile(c.resolve(f.file))
	if err != nil {
		if len(members) == 0 {
			// Not beside the script: read as it will be, an array of objects.
			f.json = true
			return f, ""
		}
		return nil, fmt.Sprintf("the data file %s is not beside the script (a member of it cannot be converted unread)", f.file)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		return nil, fmt.Sprintf("%s is not JSON: %v", f.file, err)
	}
	for _, m := range members {
		o, ok := x.(map[string]any)
		if !ok {
			return nil, fmt.Sprintf("%s has no member %s", f.file, m)
		}
		x = o[m]
	}
	arr, ok := x.([]any)
	if !ok || len(arr) == 0 {
		return nil, fmt.Sprintf("%s (%s) is not a non-empty array", f.file, strings.Join(members, "."))
	}
	objects := true
	for _, it := range arr {
		if _, ok := it.(map[string]any); !ok {
			objects = false
		}
	}
	if objects && len(members) == 0 {
		f.json = true
		return f, ""
	}
	// A member of the file, or plain values: the conversion writes the
	// rows as a CSV beside the plan.
	var rows [][]string
	if objects {
		seen := map[string]bool{}
		for _, it := range arr {
			for k := range it.(map[string]any) {
				if !seen[k] {
					seen[k] = true
					f.all = append(f.all, k)
				}
			}
		}
		sortStrings(f.all)
		rows = append(rows, f.all)
		for _, it := range arr {
			o := it.(map[string]any)
			row := make([]string, len(f.all))
			for i, k := range f.all {
				row[i] = jsonCell(o[k])
			}
			rows = append(rows, row)
		}
	} else {
		f.scalar = true
		rows = append(rows, []string{"value"})
		for _, it := range arr {
			row := []string{jsonCell(it)}
			rows = append(rows, row)
		}
	}
	var sb strings.Builder
	w := csv.NewWriter(&sb)
	_ = w.WriteAll(rows)
	out := strings.TrimSuffix(filepath.Base(f.file), filepath.Ext(f.file))
	if len(members) > 0 {
		out += "." + strings.Join(members, ".")
	}
	out += ".csv"
	if c.plan.Files == nil {
		c.plan.Files = map[string][]byte{}
	}
	c.plan.Files[out] = []byte(sb.String())
	what := f.file
	if len(members) > 0 {
		what += "'s member " + strings.Join(members, ".")
	}
	c.note(fmt.Sprintf("the data set %s is written as %s beside the plan: the rows of %s, which plateau's JSON reader (an array of objects) does not take as they are", f.name, out, what))
	f.file, f.made, f.header = out, true, true
	return f, ""
}

func jsonCell(x any) string {
	switch x := x.(type) {
	case string:
		return x
	case nil:
		return ""
	case float64:
		return fmtNum(x)
	case bool:
		return strconv.FormatBool(x)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

func (c *conv) csvFeeder(f *feeder, header bool) (*feeder, string) {
	f.header = header
	if !header {
		return nil, "papaparse without header: true (rows read by index) is not converted"
	}
	return f, ""
}

// sleep converts sleep(seconds).
func (c *conv) sleep(e *ast.CallExpression, fr *frame) {
	if len(e.ArgumentList) == 0 {
		return
	}
	a := e.ArgumentList[0]
	v := c.expr(a, fr)
	secs := func(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }
	if v.k == kNum && v.lit {
		if v.f <= 0 || math.IsNaN(v.f) || v.f > 24*3600 {
			c.item(e, "sleep", convert.NotConverted, "a pause that is not between 0 and 24 hours")
			return
		}
		c.emit(fr, convert.Step{Think: &convert.Think{Fixed: secs(v.f)}})
		c.item(e, "sleep", convert.Converted, "")
		return
	}
	if v.k == kNum && len(v.segs) == 1 {
		var lo, hi float64
		if _, err := fmt.Sscanf(v.segs[0].ref, "randomInt(%g, %g)", &lo, &hi); err == nil && hi >= lo && lo >= 0 {
			c.emit(fr, convert.Step{Think: &convert.Think{Min: secs(lo), Max: secs(hi)}})
			c.item(e, "sleep", convert.Partial, fmt.Sprintf("k6 sleeps a whole number of seconds from %s to %s; the plan draws uniformly between them", fmtNum(lo), fmtNum(hi)))
			return
		}
		if d, ok := strings.CutPrefix(v.segs[0].ref, "env."); ok {
			if _, def, ok := strings.Cut(d, ":-"); ok {
				if f, err := strconv.ParseFloat(def, 64); err == nil && f > 0 {
					c.emit(fr, convert.Step{Think: &convert.Think{Fixed: secs(f)}})
					c.item(e, "sleep", convert.Partial, fmt.Sprintf("the pause is read from the environment in k6; the plan waits its default, %ss", def))
					return
				}
			}
		}
	}
	// Math.random() * N [+ M]
	if lo, hi, ok := c.randomSpan(a, fr); ok {
		c.emit(fr, convert.Step{Think: &convert.Think{Min: secs(lo), Max: secs(hi)}})
		c.item(e, "sleep", convert.Converted, "")
		return
	}
	c.item(e, "sleep", convert.NotConverted, "the pause is known only at run time")
	c.rep.AddBehaviour(fmt.Sprintf("%s: the pause %s is not made", c.s.Pos(e.Idx0()), c.s.Text(e, 60)))
	c.comment(fr, e, "pause not converted")
}

// randomSpan reads Math.random() * N + M (either order) as [M, M+N].
func (c *conv) randomSpan(a ast.Expression, fr *frame) (float64, float64, bool) {
	add := 0.0
	if b, ok := a.(*ast.BinaryExpression); ok && b.Operator == token.PLUS {
		l, r := c.expr(b.Left, fr), c.expr(b.Right, fr)
		switch {
		case r.k == kNum && r.lit:
			add, a = r.f, b.Left
		case l.k == kNum && l.lit:
			add, a = l.f, b.Right
		default:
			return 0, 0, false
		}
	}
	if v := c.expr(a, fr); v.k == kMod && v.name == "random" {
		return add, add + 1, true
	}
	b, ok := a.(*ast.BinaryExpression)
	if !ok || b.Operator != token.MULTIPLY {
		return 0, 0, false
	}
	l, r := c.expr(b.Left, fr), c.expr(b.Right, fr)
	if r.k == kMod && r.name == "random" {
		l, r = r, l
	}
	if !(l.k == kMod && l.name == "random") || r.k != kNum || !r.lit || r.f < 0 {
		return 0, 0, false
	}
	return add, add + r.f, add >= 0
}

func (c *conv) group(e *ast.CallExpression, fr *frame) *value {
	if len(e.ArgumentList) < 2 {
		return c.notConverted(e, fr, "group() without a function")
	}
	name, ok := c.expr(e.ArgumentList[0], fr).text()
	if !ok {
		return c.notConverted(e, fr, "a group name known only at run time")
	}
	fn := c.expr(e.ArgumentList[1], fr)
	if fn.k != kFunc {
		return c.notConverted(e, fr, "group() whose second argument is not a function")
	}
	var steps []convert.Step
	sub := &frame{sc: fr.sc, steps: &steps, setup: fr.setup, depth: fr.depth}
	ret := c.invoke(fn.fn, nil, sub, e)
	c.emit(fr, convert.Step{Transaction: &convert.Group{Name: name, Steps: steps}})
	c.item(e, "group", convert.Converted, "transaction "+strconv.Quote(name))
	return ret
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// fromModule is a name imported from a script file beside the script
// (import { a } from './lib.js'): the file is parsed and its top level
// converted once, as k6 evaluates it once.
func (c *conv) fromModule(path, name string) *value {
	sc := c.module(path)
	if sc == nil {
		return unknown("an import from " + path + " (not readable beside the script)")
	}
	ms := c.modScripts[sc]
	switch name {
	case "*":
		o := &value{k: kObj, m: map[string]*value{}}
		for k, v := range sc.vars {
			o.keys = append(o.keys, k)
			o.m[k] = v
		}
		sortStrings(o.keys)
		return o
	case "default":
		name = defaultName
	}
	if local, ok := ms.Exports[name]; ok {
		name = local
	}
	if v, ok := sc.vars[name]; ok {
		return v
	}
	return unknown("the name " + name + " (not in " + path + ")")
}

// maxModules bounds the script files one conversion reads.
const maxModules = 64

func (c *conv) module(path string) *scope {
	base := filepath.Dir(c.s.Name)
	full := filepath.Clean(filepath.Join(base, path))
	if sc, ok := c.modules[full]; ok {
		return sc // nil while it is being read: an import cycle
	}
	if len(c.modules) >= maxModules {
		return nil
	}
	c.modules[full] = nil
	b, err := os.ReadFile(full)
	if err != nil || len(b) > maxSource {
		return nil
	}
	ms, err := Parse(full, b)
	if err != nil {
		c.note("the module " + path + " does not parse: " + err.Error())
		return nil
	}
	prev := c.s
	c.s = ms
	fr := &frame{sc: newScope(nil), steps: new([]convert.Step)}
	c.stmts(ms.Program.Body, fr)
	c.s = prev
	c.modules[full] = fr.sc
	c.modScripts[fr.sc] = ms
	return fr.sc
}
