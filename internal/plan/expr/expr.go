package expr

import (
	"bytes"
	"fmt"
	mrand "math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Env is what an expression reads while it runs: the user's variables and
// the last response. The engine's virtual user implements it; it is used by
// one goroutine at a time.
type Env interface {
	// Var returns the value of the variable the compiler resolved to slot.
	Var(slot int) string
	// Status is the last response's HTTP status (0 before any response).
	Status() int
	// Body is the last response's body (bounded by http.max_body).
	Body() []byte
	// Header is a header of the last response ("" when absent).
	Header(name string) string
	// JSON is the last response's body decoded as JSON, nil when it is not
	// JSON. Implementations decode at most once per response.
	JSON() any
	// Rand is the user's random source.
	Rand() *mrand.Rand
}

// Error is a compile error at byte offset Off of the expression.
type Error struct {
	Off int
	Msg string
}

func (e *Error) Error() string { return e.Msg }

// Options bind an expression to the run that evaluates it.
type Options struct {
	// Slot resolves a variable name to the slot Env.Var reads. Nil: every
	// variable is slot 0 (syntax checking only).
	Slot func(name string) int
	// Counters holds the run's named counter() values; nil gives each
	// compiled expression its own.
	Counters *Counters
}

// Counters are the per-run counters of counter("name"), shared by every
// user and workload of a run.
type Counters struct {
	mu sync.Mutex
	m  map[string]*atomic.Int64
}

func (c *Counters) get(name string) *atomic.Int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]*atomic.Int64{}
	}
	if c.m[name] == nil {
		c.m[name] = new(atomic.Int64)
	}
	return c.m[name]
}

// Expr is a compiled expression. It is safe for concurrent use.
type Expr struct {
	src  string
	root node
	vars []string
}

// Source returns the expression as written.
func (e *Expr) Source() string { return e.src }

// Vars lists the variables the expression reads, in order of appearance.
func (e *Expr) Vars() []string { return e.vars }

// Bool evaluates the expression as a condition.
func (e *Expr) Bool(env Env) bool { return e.root(env).truth() }

// Append evaluates the expression and appends its text to dst.
func (e *Expr) Append(dst []byte, env Env) []byte { return e.root(env).appendTo(dst) }

// String evaluates the expression as text.
func (e *Expr) String(env Env) string { return e.root(env).text() }

// Parse checks an expression's syntax and lists its variables.
func Parse(src string) (*Expr, error) { return Compile(src, Options{}) }

// Compile parses src and binds it to opt.
func Compile(src string, opt Options) (*Expr, error) {
	if len(src) > 4096 {
		return nil, &Error{0, "expression longer than 4096 characters"}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks, opt: opt}
	if p.opt.Counters == nil {
		p.opt.Counters = &Counters{}
	}
	if len(toks) == 1 {
		return nil, &Error{0, "empty expression"}
	}
	n, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, &Error{t.off, fmt.Sprintf("unexpected %s", t.describe())}
	}
	return &Expr{src: src, root: n.fn, vars: p.vars}, nil
}

// kind of a value.
type kind uint8

const (
	kStr kind = iota
	kNum
	kBool
	kNull
)

// Value is the result of an expression: text, a number, a boolean or null.
type Value struct {
	s string
	n float64
	k kind
}

func str(s string) Value  { return Value{s: s} }
func num(n float64) Value { return Value{n: n, k: kNum} }
func boolean(b bool) Value {
	if b {
		return Value{n: 1, k: kBool}
	}
	return Value{k: kBool}
}

// number reads v as a number.
func (v Value) number() (float64, bool) {
	switch v.k {
	case kNum:
		return v.n, true
	case kStr:
		s := strings.TrimSpace(v.s)
		if !looksNumeric(s) {
			return 0, false // ParseFloat would allocate its error
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}

// looksNumeric reports whether s is a decimal number: [+-]digits[.digits][e[+-]digits].
func looksNumeric(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, exp = i+1, exp+1
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

func (v Value) truth() bool {
	switch v.k {
	case kBool, kNum:
		return v.n != 0
	case kNull:
		return false
	}
	return v.s != "" && v.s != "false" && v.s != "0"
}

func (v Value) appendTo(dst []byte) []byte {
	switch v.k {
	case kNum:
		return strconv.AppendFloat(dst, v.n, 'f', -1, 64)
	case kBool:
		return strconv.AppendBool(dst, v.n != 0)
	case kNull:
		return dst
	}
	return append(dst, v.s...)
}

func (v Value) text() string {
	switch v.k {
	case kStr:
		return v.s
	case kNull:
		return ""
	}
	return string(v.appendTo(nil))
}

// node is a compiled sub-expression.
type node func(Env) Value

// cnode is a node with what the compiler knows about it.
type cnode struct {
	fn     node
	off    int
	lit    *Value // constant value
	isBody bool   // the response body (compared without copying)
}

// ---- lexer ----

type tkind uint8

const (
	tEOF tkind = iota
	tIdent
	tVar
	tStr
	tNum
	tOp
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tkind
	s    string
	off  int
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of expression"
	case tStr:
		return strconv.Quote(t.s)
	}
	return fmt.Sprintf("%q", t.s)
}

func isIdentStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isIdentChar(c byte) bool {
	return isIdentStart(c) || c >= '0' && c <= '9' || c == '-' || c == '.'
}

func lex(src string) ([]token, error) {
	var out []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '$' && i+1 < len(src) && src[i+1] == '{':
			end := strings.IndexByte(src[i:], '}')
			if end < 0 {
				return nil, &Error{i, "unterminated ${"}
			}
			name := strings.TrimSpace(src[i+2 : i+end])
			if name == "" || !validName(name) {
				return nil, &Error{i, fmt.Sprintf("bad variable ${%s}: use ${name} or ${data.column}", name)}
			}
			out = append(out, token{tVar, name, i})
			i += end + 1
		case isIdentStart(c):
			j := i + 1
			for j < len(src) && isIdentChar(src[j]) {
				j++
			}
			out = append(out, token{tIdent, src[i:j], i})
			i = j
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i + 1
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.' || src[j] == 'e' || src[j] == 'E') {
				j++
			}
			if _, err := strconv.ParseFloat(src[i:j], 64); err != nil {
				return nil, &Error{i, fmt.Sprintf("bad number %q", src[i:j])}
			}
			out = append(out, token{tNum, src[i:j], i})
			i = j
		case c == '"' || c == '\'':
			s, n, err := unquote(src[i:])
			if err != nil {
				return nil, &Error{i, err.Error()}
			}
			out = append(out, token{tStr, s, i})
			i += n
		case c == '(':
			out = append(out, token{tLParen, "(", i})
			i++
		case c == ')':
			out = append(out, token{tRParen, ")", i})
			i++
		case c == ',':
			out = append(out, token{tComma, ",", i})
			i++
		default:
			op := ""
			for _, o := range []string{"==", "!=", "<=", ">=", "=~", "!~", "&&", "||", "<", ">", "!"} {
				if strings.HasPrefix(src[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if c == '=' {
					return nil, &Error{i, "unexpected \"=\" (compare with ==)"}
				}
				return nil, &Error{i, fmt.Sprintf("unexpected %q", string(c))}
			}
			out = append(out, token{tOp, op, i})
			i += len(op)
		}
	}
	return append(out, token{tEOF, "", len(src)}), nil
}

func validName(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return !strings.HasSuffix(s, ".")
}

// unquote reads a quoted string at the start of s and returns its value
// and length. Backslash escapes \\ \" \' \n \t \r.
func unquote(s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(s):
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			default:
				b.WriteByte(s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, fmt.Errorf("unterminated string (close it with %c)", q)
}

// ---- parser ----

type parser struct {
	src  string
	toks []token
	pos  int
	opt  Options
	vars []string
	deep int
}

func (p *parser) peek() token { return p.toks[p.pos] }
func (p *parser) next() token {
	t := p.toks[p.pos]
	if t.kind != tEOF {
		p.pos++
	}
	return t
}

func (p *parser) or(depth int) (cnode, error) {
	if depth > 50 {
		return cnode{}, &Error{p.peek().off, "expression nested too deeply"}
	}
	l, err := p.and(depth)
	if err != nil {
		return l, err
	}
	for p.peek().kind == tOp && p.peek().s == "||" {
		p.next()
		r, err := p.and(depth)
		if err != nil {
			return r, err
		}
		a, b := l.fn, r.fn
		l = cnode{off: l.off, fn: func(e Env) Value { return boolean(a(e).truth() || b(e).truth()) }}
	}
	return l, nil
}

func (p *parser) and(depth int) (cnode, error) {
	l, err := p.not(depth)
	if err != nil {
		return l, err
	}
	for p.peek().kind == tOp && p.peek().s == "&&" {
		p.next()
		r, err := p.not(depth)
		if err != nil {
			return r, err
		}
		a, b := l.fn, r.fn
		l = cnode{off: l.off, fn: func(e Env) Value { return boolean(a(e).truth() && b(e).truth()) }}
	}
	return l, nil
}

func (p *parser) not(depth int) (cnode, error) {
	if t := p.peek(); t.kind == tOp && t.s == "!" {
		p.next()
		x, err := p.not(depth + 1)
		if err != nil {
			return x, err
		}
		f := x.fn
		return cnode{off: t.off, fn: func(e Env) Value { return boolean(!f(e).truth()) }}, nil
	}
	return p.cmp(depth)
}

func (p *parser) cmp(depth int) (cnode, error) {
	l, err := p.primary(depth)
	if err != nil {
		return l, err
	}
	t := p.peek()
	if t.kind != tOp || t.s == "&&" || t.s == "||" || t.s == "!" {
		return l, nil
	}
	p.next()
	r, err := p.primary(depth)
	if err != nil {
		return r, err
	}
	a, b := l.fn, r.fn
	switch t.s {
	case "=~", "!~":
		if r.lit == nil || r.lit.k != kStr {
			return cnode{}, &Error{r.off, t.s + " needs a regex in quotes on its right, e.g. ${name} =~ \"^a\""}
		}
		re, err := regexp.Compile(r.lit.s)
		if err != nil {
			return cnode{}, &Error{r.off, fmt.Sprintf("bad regex: %v", err)}
		}
		neg := t.s == "!~"
		if l.isBody {
			return cnode{off: l.off, fn: func(e Env) Value { return boolean(re.Match(e.Body()) != neg) }}, nil
		}
		return cnode{off: l.off, fn: func(e Env) Value { return boolean(re.MatchString(a(e).text()) != neg) }}, nil
	case "==", "!=":
		neg := t.s == "!="
		if l.isBody && r.lit != nil && r.lit.k == kStr {
			want := []byte(r.lit.s)
			return cnode{off: l.off, fn: func(e Env) Value { return boolean(bytes.Equal(e.Body(), want) != neg) }}, nil
		}
		return cnode{off: l.off, fn: func(e Env) Value { return boolean(equal(a(e), b(e)) != neg) }}, nil
	case "<", "<=", ">", ">=":
		op := t.s
		return cnode{off: l.off, fn: func(e Env) Value { return boolean(order(a(e), b(e), op)) }}, nil
	}
	return cnode{}, &Error{t.off, fmt.Sprintf("unexpected %s", t.describe())}
}

func equal(a, b Value) bool {
	if a.k == kNull || b.k == kNull {
		return a.k == b.k || (a.k == kStr && a.s == "") || (b.k == kStr && b.s == "")
	}
	if a.k == kBool || b.k == kBool {
		return a.truth() == b.truth()
	}
	if x, ok := a.number(); ok {
		if y, ok := b.number(); ok {
			return x == y
		}
	}
	if a.k == kStr && b.k == kStr {
		return a.s == b.s
	}
	return a.text() == b.text()
}

func order(a, b Value, op string) bool {
	x, okx := a.number()
	y, oky := b.number()
	var c int
	if okx && oky {
		switch {
		case x < y:
			c = -1
		case x > y:
			c = 1
		}
	} else {
		c = strings.Compare(a.text(), b.text())
	}
	switch op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	}
	return c >= 0
}

func (p *parser) variable(name string, off int) cnode {
	p.vars = append(p.vars, name)
	slot := 0
	if p.opt.Slot != nil {
		slot = p.opt.Slot(name)
	}
	return cnode{off: off, fn: func(e Env) Value { return str(e.Var(slot)) }}
}

func constant(v Value, off int) cnode {
	return cnode{off: off, lit: &v, fn: func(Env) Value { return v }}
}

func (p *parser) primary(depth int) (cnode, error) {
	t := p.next()
	switch t.kind {
	case tStr:
		return constant(str(t.s), t.off), nil
	case tNum:
		f, _ := strconv.ParseFloat(t.s, 64)
		return constant(num(f), t.off), nil
	case tVar:
		if t.s == "status" {
			return cnode{off: t.off, fn: func(e Env) Value { return num(float64(e.Status())) }}, nil
		}
		return p.variable(t.s, t.off), nil
	case tLParen:
		n, err := p.or(depth + 1)
		if err != nil {
			return n, err
		}
		if c := p.next(); c.kind != tRParen {
			return cnode{}, &Error{c.off, fmt.Sprintf("expected ) but found %s", c.describe())}
		}
		return n, nil
	case tIdent:
		if p.peek().kind == tLParen {
			return p.call(t, depth)
		}
		switch t.s {
		case "true":
			return constant(boolean(true), t.off), nil
		case "false":
			return constant(boolean(false), t.off), nil
		case "null":
			return constant(Value{k: kNull}, t.off), nil
		case "status":
			return cnode{off: t.off, fn: func(e Env) Value { return num(float64(e.Status())) }}, nil
		case "body":
			return cnode{off: t.off, isBody: true, fn: func(e Env) Value { return str(string(e.Body())) }}, nil
		}
		if !validName(t.s) {
			return cnode{}, &Error{t.off, fmt.Sprintf("bad name %q", t.s)}
		}
		return p.variable(t.s, t.off), nil
	}
	return cnode{}, &Error{t.off, fmt.Sprintf("unexpected %s", t.describe())}
}

func (p *parser) call(name token, depth int) (cnode, error) {
	p.next() // (
	var args []cnode
	if p.peek().kind != tRParen {
		for {
			a, err := p.or(depth + 1)
			if err != nil {
				return a, err
			}
			args = append(args, a)
			if p.peek().kind != tComma {
				break
			}
			p.next()
		}
	}
	if c := p.next(); c.kind != tRParen {
		return cnode{}, &Error{c.off, fmt.Sprintf("expected , or ) in the arguments of %s but found %s", name.s, c.describe())}
	}
	f, ok := funcs[name.s]
	if !ok {
		msg := fmt.Sprintf("unknown function %s (functions: %s)", name.s, strings.Join(FuncNames(), ", "))
		return cnode{}, &Error{name.off, msg}
	}
	if len(args) < f.min || (f.max >= 0 && len(args) > f.max) {
		return cnode{}, &Error{name.off, fmt.Sprintf("%s takes %s", name.s, f.arity())}
	}
	fn, err := f.build(p, args)
	if err != nil {
		var ee *Error
		if e, ok := err.(*Error); ok {
			ee = e
		} else {
			ee = &Error{name.off, fmt.Sprintf("%s: %v", name.s, err)}
		}
		return cnode{}, ee
	}
	return cnode{off: name.off, fn: fn}, nil
}
