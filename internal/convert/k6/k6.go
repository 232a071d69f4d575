package k6

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"

	"github.com/plateau-perf/plateau/internal/convert"
)

// Options tune a conversion.
type Options struct {
	// Source is the script's path as given (for the report); data files
	// and open() are read relative to its directory.
	Source string
}

type conv struct {
	s          *Script
	dir        string
	plan       *convert.Plan
	rep        *convert.Report
	globals    *scope
	gthis      *scope // globalThis.x, shared by every module
	used       map[string]bool
	feedNames  map[string]bool
	feeders    []*feeder
	opaques    []string
	notes      map[string]bool
	seen       map[string]bool
	reqs       []*convert.Request
	last       *convert.Request
	nsteps     int
	modules    map[string]*scope
	modScripts map[*scope]*Script
	calls      int
	checks     int
}

// Convert converts a parsed script into a plan and its conversion report.
func Convert(s *Script, o Options) (*convert.Plan, *convert.Report) {
	src := o.Source
	if src == "" {
		src = s.Name
	}
	c := &conv{
		s: s, dir: filepath.Dir(src),
		plan:       &convert.Plan{Name: strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))},
		rep:        &convert.Report{Source: src, Kind: "k6"},
		globals:    newScope(nil),
		gthis:      newScope(nil),
		used:       map[string]bool{},
		feedNames:  map[string]bool{},
		notes:      map[string]bool{},
		seen:       map[string]bool{},
		modules:    map[string]*scope{},
		modScripts: map[*scope]*Script{},
	}
	c.plan.Header = []string{"Converted from the k6 script " + filepath.Base(src) + " by plateau convert k6."}
	// Every k6 VU keeps a cookie jar, emptied at each iteration.
	c.plan.HTTP.CookiesPerIteration = true
	// The module: imports, constants, functions, options.
	mf := &frame{sc: c.globals, steps: new([]convert.Step)}
	c.stmts(s.Program.Body, mf)
	for _, st := range *mf.steps {
		if st.Request != nil {
			c.note("an http call in the init context (outside every function) is not sent: k6 refuses it there too")
		}
	}
	fn := func(name string) *fnDef {
		if local, ok := s.Exports[name]; ok {
			name = local
		}
		if name == "default" {
			name = defaultName
		}
		if v, ok := c.globals.get(name); ok && v.k == kFunc {
			return v.fn
		}
		return nil
	}
	// setup() runs once; its return value is the data every function gets.
	data := undef
	if f := fn("setup"); f != nil {
		sf := &frame{sc: newScope(f.scope), steps: &c.plan.Setup, setup: true}
		if v := c.callFn(f, nil, sf); v != nil {
			data = v
		}
		c.rep.Add(convert.Item{Path: src + " / setup()", Name: "setup", Type: "function", Status: convert.Converted, Note: "the plan's run-level setup (once per run, its extracted values shared by every workload)"})
	}
	opts := undef
	if v, ok := c.globals.get("options"); ok {
		opts = v
	}
	c.workloads(opts, fn, data)
	if f := fn("teardown"); f != nil {
		tf := &frame{sc: newScope(f.scope), steps: &c.plan.Teardown}
		c.callFn(f, []*value{data}, tf)
		c.rep.Add(convert.Item{Path: src + " / teardown()", Name: "teardown", Type: "function", Status: convert.Converted, Note: "the plan's run-level teardown"})
	}
	if f := fn("handleSummary"); f != nil {
		c.rep.Add(convert.Item{Path: src + " / handleSummary()", Name: "handleSummary", Type: "function", Status: convert.NotNeeded, Note: "plateau writes its own report and summary.json"})
	}
	c.thresholds(opts)
	c.data()
	c.target()
	if c.checks > 0 {
		c.note("a k6 check only counts; a failed plateau check also counts the request as failed (error_rate), while the traffic stays the same (the workloads go on after a failure: on_fail: continue)")
	}
	convert.HideSecrets(c.plan, c.rep, "K6_")
	return c.plan, c.rep
}

// callFn calls a script function with values as its arguments.
func (c *conv) callFn(f *fnDef, args []*value, fr *frame) *value {
	if f.s != nil && f.s != c.s {
		prev := c.s
		c.s = f.s
		defer func() { c.s = prev }()
	}
	if f.params != nil {
		for i, b := range f.params.List {
			v := undef
			if i < len(args) {
				v = args[i]
			}
			c.bind(b.Target, v, fr)
		}
	}
	switch body := f.body.(type) {
	case *ast.BlockStatement:
		c.stmts(body.List, fr)
	case *ast.ExpressionBody:
		fr.ret = c.expr(body.Expression, fr)
	}
	return fr.ret
}

func (c *conv) note(s string) {
	if !c.notes[s] {
		c.notes[s] = true
		c.rep.Notes = append(c.rep.Notes, s)
	}
}

// item records one construct; a function converted for several scenarios
// records its constructs once.
func (c *conv) item(n ast.Node, typ string, st convert.Status, note string) {
	it := convert.Item{Path: c.s.Pos(start(n)), Name: c.s.Text(n, 60), Type: typ, Status: st, Note: note}
	k := it.Path + "\x00" + typ + "\x00" + note
	if c.seen[k] {
		return
	}
	c.seen[k] = true
	c.rep.Add(it)
}

// ifStmt converts an if statement.
func (c *conv) ifStmt(s *ast.IfStatement, fr *frame) {
	t := c.expr(s.Test, fr)
	if b, ok := t.truthy(); ok {
		if b {
			c.stmt(s.Consequent, fr)
		} else if s.Alternate != nil {
			c.stmt(s.Alternate, fr)
		}
		return
	}
	// if (res.status !== 200) { throw … } — a check that ends the iteration.
	if c.last != nil && onlyThrows(s.Consequent) && s.Alternate == nil {
		var ck convert.Check
		pc := &predConv{c: c, fr: fr, req: c.last}
		if txt := c.s.Text(s.Test, 200); strings.Contains(txt, ".status") {
			pc.param = strings.TrimSpace(txt[:strings.Index(txt, ".status")])
			if pc.into(s.Test, &ck, true) && !ck.IsZero() {
				ck.Name = "not: " + c.s.Text(s.Test, 60)
				c.last.Checks = append(c.last.Checks, ck)
				c.last.OnFail = "next_iteration"
				if fr.setup {
					c.last.OnFail = "stop_run"
				}
				c.item(s, "if … throw", convert.Converted, "a check on the request, on_fail: "+c.last.OnFail)
				return
			}
		}
	}
	// if (Math.random() < p) { A } else { B } — a weighted pick.
	if b, ok := s.Test.(*ast.BinaryExpression); ok && (b.Operator == token.LESS || b.Operator == token.LESS_OR_EQUAL) {
		if l := c.expr(b.Left, fr); l.k == kMod && l.name == "random" {
			if p, ok := litNum(c.expr(b.Right, fr)); ok && p > 0 && p < 1 {
				var a, e []convert.Step
				c.stmt(s.Consequent, c.child(fr, &a))
				if s.Alternate != nil {
					c.stmt(s.Alternate, c.child(fr, &e))
				}
				c.emit(fr, convert.Step{Choose: []convert.Branch{{Weight: p, Steps: a}, {Weight: 1 - p, Steps: e}}})
				c.item(s, "if Math.random()", convert.Converted, fmt.Sprintf("a weighted pick: %.3g / %.3g", p, 1-p))
				return
			}
		}
	}
	var a, e []convert.Step
	c.stmt(s.Consequent, c.child(fr, &a))
	if s.Alternate != nil {
		c.stmt(s.Alternate, c.child(fr, &e))
	}
	if !hasWork(a) && !hasWork(e) {
		c.item(s, "if", convert.NotNeeded, "no request or pause inside")
		return
	}
	if cond, ok := c.cond(s.Test, fr); ok {
		c.emit(fr, convert.Step{If: &convert.Group{Cond: cond, Steps: a, Else: e}})
		c.item(s, "if", convert.Converted, "if "+cond)
		return
	}
	c.item(s, "if", convert.Partial, "the condition "+c.s.Text(s.Test, 60)+" is not converted: the first branch's requests run every time")
	c.rep.AddBehaviour(fmt.Sprintf("%s: requests run unconditionally (the condition %s is not converted)", c.s.Pos(start(s)), c.s.Text(s.Test, 60)))
	for _, st := range a {
		c.emit(fr, st)
	}
}

func hasWork(steps []convert.Step) bool {
	for _, s := range steps {
		if s.Comment == nil || s.Request != nil || s.Think != nil || s.Transaction != nil || s.Loop != nil || s.If != nil || s.Choose != nil {
			return true
		}
	}
	return false
}

// onlyThrows reports whether a statement only throws, fails or logs.
func onlyThrows(st ast.Statement) bool {
	list := []ast.Statement{st}
	if b, ok := st.(*ast.BlockStatement); ok {
		list = b.List
	}
	threw := false
	for _, s := range list {
		switch s := s.(type) {
		case *ast.ThrowStatement:
			threw = true
		case *ast.ExpressionStatement:
			call, ok := s.Expression.(*ast.CallExpression)
			if !ok {
				return false
			}
			switch callee := call.Callee.(type) {
			case *ast.Identifier:
				if callee.Name != "fail" {
					return false
				}
				threw = true
			case *ast.DotExpression:
				if id, ok := callee.Left.(*ast.Identifier); !ok || id.Name != "console" {
					return false
				}
			default:
				return false
			}
		default:
			return false
		}
	}
	return threw
}

// cond converts an if condition into a plan condition.
func (c *conv) cond(e ast.Expression, fr *frame) (string, bool) {
	switch x := e.(type) {
	case *ast.BinaryExpression:
		switch x.Operator {
		case token.LOGICAL_AND, token.LOGICAL_OR:
			l, ok1 := c.cond(x.Left, fr)
			r, ok2 := c.cond(x.Right, fr)
			op := "&&"
			if x.Operator == token.LOGICAL_OR {
				op = "||"
			}
			return "(" + l + ") " + op + " (" + r + ")", ok1 && ok2
		}
		ops := map[token.Token]string{token.STRICT_EQUAL: "==", token.EQUAL: "==", token.STRICT_NOT_EQUAL: "!=", token.NOT_EQUAL: "!=",
			token.LESS: "<", token.LESS_OR_EQUAL: "<=", token.GREATER: ">", token.GREATER_OR_EQUAL: ">="}
		op, ok := ops[x.Operator]
		if !ok {
			return "", false
		}
		l, ok1 := c.condOperand(x.Left, fr)
		r, ok2 := c.condOperand(x.Right, fr)
		return l + " " + op + " " + r, ok1 && ok2
	case *ast.UnaryExpression:
		if x.Operator == token.NOT {
			in, ok := c.cond(x.Operand, fr)
			return "!(" + in + ")", ok
		}
	}
	v, ok := c.condOperand(e, fr)
	return v + ` != ""`, ok
}

func (c *conv) condOperand(e ast.Expression, fr *frame) (string, bool) {
	v := c.expr(e, fr)
	switch {
	case v.k == kMod && v.name == "resp.status" && v.req == c.last:
		return "status", true
	case v.k == kMod && v.name == "resp.body" && v.req == c.last:
		return "body", true
	case v.k == kNum && v.lit:
		return fmtNum(v.f), true
	case v.k == kUndef || v.k == kNull:
		return `""`, true
	}
	if t, ok := v.text(); ok {
		return strconv.Quote(t), true
	}
	segs, ok := c.segsOf(v)
	if !ok {
		return "", false
	}
	if len(segs) == 1 && segs[0].ref != "" && !strings.HasPrefix(segs[0].ref, "env.") {
		return "${" + segs[0].ref + "}", true
	}
	return `"` + strings.ReplaceAll(template(segs), `"`, `\"`) + `"`, true
}

// forStmt converts for (let i = 0; i < N; i++) into a loop of N.
func (c *conv) forStmt(s *ast.ForStatement, fr *frame) {
	n, ok := c.forCount(s, fr)
	if !ok {
		c.item(s, "for", convert.NotConverted, "a for loop whose count is not a constant (for (let i = 0; i < N; i++))")
		c.rep.AddBehaviour(fmt.Sprintf("%s: the loop's requests are not sent", c.s.Pos(start(s))))
		c.comment(fr, s, "loop not converted")
		return
	}
	var steps []convert.Step
	sub := c.child(fr, &steps)
	if lex, ok := s.Initializer.(*ast.ForLoopInitializerLexicalDecl); ok {
		for _, b := range lex.LexicalDeclaration.List {
			c.bind(b.Target, unknown("the loop counter"), sub)
		}
	}
	c.stmt(s.Body, sub)
	c.emit(fr, convert.Step{Loop: &convert.Group{Count: n, Steps: steps}})
	c.item(s, "for", convert.Converted, fmt.Sprintf("loop %d times", n))
}

func (c *conv) forCount(s *ast.ForStatement, fr *frame) (int, bool) {
	b, ok := s.Test.(*ast.BinaryExpression)
	if !ok {
		return 0, false
	}
	var start float64
	switch in := s.Initializer.(type) {
	case *ast.ForLoopInitializerLexicalDecl:
		if len(in.LexicalDeclaration.List) != 1 {
			return 0, false
		}
		v, ok := litNum(c.expr(in.LexicalDeclaration.List[0].Initializer, fr))
		if !ok {
			return 0, false
		}
		start = v
	case *ast.ForLoopInitializerVarDeclList:
		if len(in.List) != 1 {
			return 0, false
		}
		v, ok := litNum(c.expr(in.List[0].Initializer, fr))
		if !ok {
			return 0, false
		}
		start = v
	default:
		return 0, false
	}
	end, ok := litNum(c.expr(b.Right, fr))
	if !ok {
		return 0, false
	}
	if u, ok := s.Update.(*ast.UnaryExpression); !ok || u.Operator != token.INCREMENT {
		return 0, false
	}
	n := end - start
	if b.Operator == token.LESS_OR_EQUAL {
		n++
	} else if b.Operator != token.LESS {
		return 0, false
	}
	if n < 1 || n > 1e6 {
		return 0, false
	}
	return int(n), true
}

// forOf unrolls for (const x of [literal array]).
func (c *conv) forOf(s *ast.ForOfStatement, fr *frame) {
	src := c.expr(s.Source, fr)
	if src.k != kArr || len(src.items) > 100 {
		c.item(s, "for…of", convert.NotConverted, "a for…of over values known only at run time (or over 100 of them)")
		c.rep.AddBehaviour(fmt.Sprintf("%s: the loop's requests are not sent", c.s.Pos(start(s))))
		c.comment(fr, s, "loop not converted")
		return
	}
	var target ast.Expression
	switch in := s.Into.(type) {
	case *ast.ForDeclaration:
		target = in.Target
	case *ast.ForIntoVar:
		target = in.Binding.Target
	case *ast.ForIntoExpression:
		target = in.Expression
	}
	for _, it := range src.items {
		sub := &frame{sc: newScope(fr.sc), steps: fr.steps, setup: fr.setup, depth: fr.depth}
		c.bind(target, it, sub)
		c.stmt(s.Body, sub)
	}
	c.item(s, "for…of", convert.Converted, fmt.Sprintf("unrolled over its %d values", len(src.items)))
}

func (c *conv) throw(s *ast.ThrowStatement, fr *frame) {
	if fr.setup {
		c.item(s, "throw", convert.Partial, "a throw in setup() aborts the k6 test; the plan goes on")
	} else {
		c.item(s, "throw", convert.Converted, "ends the iteration")
	}
	fr.returned = true
}

// workloads makes one workload per scenario (or one for the shortcut
// options), running its exec function.
func (c *conv) workloads(opts *value, fn func(string) *fnDef, data *value) {
	mk := func(name, exec string, sc *value, at string) {
		f := fn(exec)
		if f == nil {
			c.rep.Add(convert.Item{Path: at, Name: name, Type: "scenario", Status: convert.NotConverted, Note: "its function " + exec + " is not in the script"})
			return
		}
		if sc.k == kObj {
			if o := sc.m["options"]; o != nil && o.k == kObj && o.m["browser"] != nil {
				c.rep.Add(convert.Item{Path: at, Name: name, Type: "scenario", Status: convert.NotConverted, Note: "a k6 browser scenario (it drives a real browser); plateau sends HTTP requests, not page loads"})
				c.rep.AddBehaviour("the browser scenario " + name + " is not run")
				return
			}
		}
		wl := &convert.Workload{Name: convert.VarName(name), OnFail: "continue"}
		fr := &frame{sc: newScope(f.scope), steps: &wl.Scenario}
		c.last = nil
		c.callFn(f, []*value{data}, fr)
		notes := c.load(&wl.Load, sc)
		st, _ := convert.StatusOf(notes, nil)
		c.rep.Add(convert.Item{Path: at, Name: name, Type: "scenario", Status: st, Note: strings.Join(notes, "; ")})
		c.plan.Workloads = append(c.plan.Workloads, wl)
	}
	src := c.rep.Source
	if opts.k == kObj {
		if scs := opts.m["scenarios"]; scs != nil && scs.k == kObj && len(scs.keys) > 0 {
			for _, name := range scs.keys {
				sc := scs.m[name]
				exec := "default"
				if sc.k == kObj && sc.m["exec"] != nil {
					if t, ok := sc.m["exec"].text(); ok {
						exec = t
					}
				}
				mk(name, exec, sc, src+" / options.scenarios."+name)
			}
			return
		}
	}
	mk("default", "default", opts, src+" / options")
}

// load converts a scenario (or the shortcut options) into a load.
func (c *conv) load(l *convert.Load, sc *value) []string {
	var notes []string
	get := func(k string) (string, bool) {
		if sc.k != kObj || sc.m[k] == nil {
			return "", false
		}
		v := sc.m[k]
		if t, ok := v.text(); ok {
			return t, true
		}
		if segs, ok := c.segsOf(v); ok {
			return template(segs), true
		}
		notes = append(notes, k+" is known only at run time")
		return "", false
	}
	dur := func(k string) (string, bool) {
		t, ok := get(k)
		if !ok {
			return "", false
		}
		if f, err := strconv.ParseFloat(t, 64); err == nil {
			return fmt.Sprintf("%gms", f), true
		}
		return t, true
	}
	executor, _ := get("executor")
	if executor == "" {
		switch {
		case sc.k == kObj && sc.m["stages"] != nil:
			executor = "ramping-vus"
		case sc.k == kObj && sc.m["iterations"] != nil:
			// iterations with a duration: k6 shares the iterations, the
			// duration is their limit.
			executor = "shared-iterations"
			if d, ok := dur("duration"); ok {
				notes = append(notes, "the duration "+d+" is k6's limit on the shared iterations; the plan runs the iterations")
			}
		case sc.k == kObj && sc.m["duration"] != nil:
			executor = "constant-vus"
		default:
			executor = "shared-iterations"
		}
	}
	vus, hasVUs := get("vus")
	if !hasVUs {
		vus = "1"
	}
	if d, ok := dur("startTime"); ok {
		l.StartAfter = d
	}
	if d, ok := dur("gracefulStop"); ok {
		l.GracefulStop = d
	}
	stages := func(key string) bool {
		st := sc.m["stages"]
		if st == nil || st.k != kArr || len(st.items) == 0 {
			notes = append(notes, "no stages")
			return false
		}
		for _, s := range st.items {
			if s.k != kObj {
				notes = append(notes, "a stage known only at run time")
				return false
			}
			d, _ := c.textOf(s.m["duration"])
			tgt, _ := c.textOf(s.m["target"])
			if d == "" || tgt == "" {
				notes = append(notes, "a stage without duration or target")
				return false
			}
			ls := convert.LoadStage{Duration: d}
			if key == "users" {
				ls.Users = tgt
			} else {
				ls.Rate = tgt + "/" + timeUnit(sc, c)
			}
			l.Stages = append(l.Stages, ls)
		}
		return true
	}
	switch executor {
	case "constant-vus":
		l.Users = vus
		l.Duration, _ = dur("duration")
		if l.Duration == "" {
			notes = append(notes, "no duration")
		}
	case "ramping-vus":
		if !stages("users") {
			l.Users, l.Duration = "1", "1m"
			notes = append(notes, "ran 1 user for 1m instead")
			break
		}
		start := "0"
		if s, ok := get("startVUs"); ok {
			start = s
		} else if hasVUs {
			start = vus
		} else if sc.m["executor"] == nil {
			start = "1"
		}
		if start != "0" {
			notes = append(notes, fmt.Sprintf("k6 starts the stages from %s users; the plan from 0", start))
		}
	case "per-vu-iterations":
		l.Users = vus
		l.Iterations, _ = get("iterations")
		if l.Iterations == "" {
			l.Iterations = "1"
		}
		if d, ok := dur("maxDuration"); ok && d != "10m" {
			notes = append(notes, "maxDuration "+d+" is not a limit in the plan")
		}
	case "shared-iterations":
		it, ok := get("iterations")
		if !ok {
			it = "1"
		}
		l.Users = vus
		n, err1 := strconv.Atoi(it)
		u, err2 := strconv.Atoi(vus)
		switch {
		case err1 == nil && err2 == nil && u > 0:
			per := (n + u - 1) / u
			l.Iterations = strconv.Itoa(max(per, 1))
			if n%u != 0 {
				notes = append(notes, fmt.Sprintf("k6 shares %d iterations among %d users; the plan runs %d per user (%d in all)", n, u, per, per*u))
			} else if u > 1 {
				notes = append(notes, fmt.Sprintf("k6 shares %d iterations among %d users (a fast user takes more); the plan runs %d per user", n, u, per))
			}
		default:
			l.Iterations = it
			notes = append(notes, "k6 shares the iterations among the users; the plan runs that many per user")
		}
	case "constant-arrival-rate":
		r, ok := get("rate")
		if !ok {
			notes = append(notes, "no rate")
			r = "1"
		}
		l.Rate = r + "/" + timeUnit(sc, c)
		l.Duration, _ = dur("duration")
		l.MaxUsers = maxVUs(sc, c)
	case "ramping-arrival-rate":
		if !stages("rate") {
			l.Rate, l.Duration = "1/s", "1m"
			notes = append(notes, "ran 1/s for 1m instead")
			break
		}
		if s, ok := get("startRate"); ok && s != "0" {
			notes = append(notes, "k6 starts the stages at "+s+" per time unit; the plan from 0")
		}
		l.MaxUsers = maxVUs(sc, c)
	case "externally-controlled":
		l.Users, l.Duration = vus, "10m"
		if d, ok := dur("duration"); ok {
			l.Duration = d
		}
		notes = append(notes, "externally controlled in k6 (its VUs changed from outside during the run); the plan holds "+vus+" users")
	default:
		l.Users, l.Iterations = "1", "1"
		notes = append(notes, "the executor "+executor+" is not known; 1 user, 1 iteration")
	}
	if l.Users != "" && l.Duration == "" && l.Iterations == "" && len(l.Stages) == 0 {
		l.Iterations = "1"
	}
	return notes
}

func (c *conv) textOf(v *value) (string, bool) {
	if v == nil {
		return "", false
	}
	if t, ok := v.text(); ok {
		return t, true
	}
	if segs, ok := c.segsOf(v); ok {
		return template(segs), true
	}
	return "", false
}

func timeUnit(sc *value, c *conv) string {
	if sc.k == kObj {
		if t, ok := c.textOf(sc.m["timeUnit"]); ok {
			return t
		}
	}
	return "1s"
}

func maxVUs(sc *value, c *conv) string {
	if sc.k == kObj {
		if t, ok := c.textOf(sc.m["maxVUs"]); ok {
			return t
		}
		if t, ok := c.textOf(sc.m["preAllocatedVUs"]); ok {
			return t
		}
	}
	return ""
}

var thresholdRe = regexp.MustCompile(`^\s*(avg|min|max|med|p\(\s*[\d.]+\s*\)|rate|count)\s*(<=|>=|==|!=|<|>|===)\s*([\d.]+)\s*$`)

// thresholds converts options.thresholds into the plan's sla.
func (c *conv) thresholds(opts *value) {
	if opts.k != kObj || opts.m["thresholds"] == nil || opts.m["thresholds"].k != kObj {
		return
	}
	th := opts.m["thresholds"]
	for _, key := range th.keys {
		list := th.m[key]
		items := []*value{list}
		if list.k == kArr {
			items = list.items
		}
		at := c.rep.Source + " / options.thresholds." + key
		for _, it := range items {
			expr, abort, grace := "", false, ""
			if it.k == kObj {
				expr, _ = c.textOf(it.m["threshold"])
				if a := it.m["abortOnFail"]; a != nil {
					abort, _ = a.truthy()
				}
				if d := it.m["delayAbortEval"]; d != nil {
					grace, _ = c.textOf(d)
				}
			} else {
				expr, _ = c.textOf(it)
			}
			out, why := c.threshold(key, expr)
			if why != "" {
				c.rep.Add(convert.Item{Path: at + " " + strconv.Quote(expr), Name: key + ": " + expr, Type: "threshold", Status: convert.NotConverted, Note: why})
				continue
			}
			c.plan.SLA = append(c.plan.SLA, convert.SLA{Expr: out, Abort: abort, Grace: grace})
			c.rep.Add(convert.Item{Path: at + " " + strconv.Quote(expr), Name: key + ": " + expr, Type: "threshold", Status: convert.Converted, Note: "sla: " + out})
		}
	}
}

var selectorRe = regexp.MustCompile(`^([\w.]+)(?:\{([^}]*)\})?$`)

func (c *conv) threshold(key, expr string) (string, string) {
	m := selectorRe.FindStringSubmatch(strings.TrimSpace(key))
	if m == nil {
		return "", "a metric name that is not read"
	}
	metric, sel := m[1], ""
	if m[2] != "" {
		k, v, ok := strings.Cut(m[2], ":")
		if !ok {
			return "", "a tag selector that is not name:value"
		}
		k, v = strings.TrimSpace(k), strings.Trim(strings.TrimSpace(v), `"'`)
		switch k {
		case "name":
			sel = `{label="` + v + `"}`
		case "group":
			sel = `{label="` + strings.TrimPrefix(v, "::") + `"}`
		case "scenario":
			sel = `{workload="` + convert.VarName(v) + `"}`
		case "expected_response":
			if v != "true" {
				return "", "a selector of failed responses"
			}
		default:
			return "", "the tag " + k + " has no plateau selector"
		}
	}
	e := thresholdRe.FindStringSubmatch(expr)
	if e == nil {
		return "", "the expression " + strconv.Quote(expr) + " is not read"
	}
	agg, op, val := e[1], e[2], e[3]
	if op == "===" {
		op = "=="
	}
	f, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return "", "not a number: " + val
	}
	pct := func(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }
	switch metric {
	case "http_req_duration", "http_req_waiting":
		stat := agg
		switch {
		case agg == "med":
			stat = "median"
		case strings.HasPrefix(agg, "p("):
			n := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(agg, "p("), ")"))
			if strings.Contains(n, ".") {
				stat = "p(" + n + ")"
			} else {
				stat = "p" + n
			}
		case agg == "rate" || agg == "count":
			return "", "rate/count of a duration"
		}
		return fmt.Sprintf("%s(response_time%s) %s %sms", stat, sel, op, fmtNum(f)), ""
	case "http_req_failed":
		if agg != "rate" {
			return "", "only rate of http_req_failed is read"
		}
		return fmt.Sprintf("error_rate%s %s %s", sel, op, pct(f)), ""
	case "checks":
		if agg != "rate" || (sel != "" && !strings.HasPrefix(sel, "{label")) {
			return "", "only rate of checks is read"
		}
		if sel != "" {
			sel = strings.Replace(sel, "label", "name", 1)
		}
		return fmt.Sprintf("checks%s %s %s", sel, op, pct(f)), ""
	case "http_reqs", "iterations":
		if agg != "rate" {
			return "", "a count over the run has no plateau requirement (throughput is per second)"
		}
		if metric == "iterations" {
			return "", "iterations per second: plateau's throughput counts requests"
		}
		return fmt.Sprintf("throughput%s %s %s/s", sel, op, fmtNum(f)), ""
	}
	return "", "the metric " + metric + " has no plateau requirement (custom metrics need a trend step)"
}

// data adds the data sets the workloads read.
func (c *conv) data() {
	for _, f := range c.feederList() {
		order := ""
		seen := map[string]bool{}
		for _, o := range f.orders {
			seen[o] = true
			order = o
		}
		if len(seen) > 1 {
			c.note(fmt.Sprintf("the data set %s is read in several ways (%s); the plan reads it %s", f.name, strings.Join(keys(seen), ", "), order))
		}
		for _, n := range f.notes {
			c.note(n)
		}
		fd := convert.Feeder{Name: f.name, Order: order, Columns: f.cols}
		if order == "sequential" || order == "" {
			fd.Order = ""
		}
		if f.json {
			fd.JSON = f.file
		} else {
			fd.CSV = f.file
			if f.delim != "" {
				fd.Delimiter = f.delim
			}
		}
		fd.OnExhausted = "recycle"
		c.plan.Data = append(c.plan.Data, fd)
	}
}

func (c *conv) feederList() []*feeder {
	var out []*feeder
	for _, f := range c.feeders {
		if len(f.orders) > 0 {
			out = append(out, f)
		}
	}
	return out
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var originRe = regexp.MustCompile(`^(https?://[^/?#$]+|\$\{env\.[^}]+\})`)

// target makes the most common origin of the requests the plan's target
// and their URLs relative to it.
func (c *conv) target() {
	count := map[string]int{}
	best := ""
	for _, r := range c.reqs {
		o := originRe.FindString(r.URL)
		if o == "" {
			continue
		}
		count[o]++
		if count[o] > count[best] || (count[o] == count[best] && o < best) {
			best = o
		}
	}
	if best == "" {
		c.plan.Target = "http://127.0.0.1"
		return
	}
	c.plan.Target = best
	for _, r := range c.reqs {
		if strings.HasPrefix(r.URL, best) {
			rest := r.URL[len(best):]
			if rest == "" || rest[0] != '/' {
				rest = "/" + rest
			}
			r.URL = rest
			if len(convert.Refs(r.URL)) == 0 {
				r.NoEncode = false
			}
		}
	}
}
