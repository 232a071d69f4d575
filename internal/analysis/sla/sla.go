// Package sla parses and judges requirement expressions.
//
// Grammar (one expression per plan entry):
//
//	expr     = metric op value [ "during" quoted-phase ]
//	metric   = stat "(" "response_time" [ "{" "label" "=" quoted "}" ] ")"
//	         | "error_rate" [ "{" "label" "=" quoted "}" ]
//	         | "throughput" [ "{" "label" "=" quoted "}" ]
//	stat     = "avg" | "mean" | "min" | "max" | "p50" | "p90" | "p95" | "p99" | "median"
//	op       = "<" | "<=" | ">" | ">=" | "==" | "!="
//	value    = number unit       units: ms, s, us (times); % (error_rate); /s, /m (throughput)
//
// Examples: `avg(response_time) < 200ms`, `p95(response_time{label="login"}) <= 1s`,
// `error_rate < 1%`, `throughput >= 10/s during "step 1"`.
package sla

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Metric kinds.
const (
	ResponseTime = "response_time"
	ErrorRate    = "error_rate"
	Throughput   = "throughput"
)

// Expr is a parsed requirement.
type Expr struct {
	Text   string
	Metric string  // response_time | error_rate | throughput
	Stat   string  // avg, min, max, p50, p90, p95, p99 (response_time only)
	Label  string  // "" = all requests
	Op     string  // < <= > >= == !=
	Value  float64 // ms for times, percent for error_rate, per second for throughput
	Phase  string  // "" = whole run (and judged per phase too)
}

// Unit is the unit Value and observed values are in.
func (e *Expr) Unit() string {
	switch e.Metric {
	case ResponseTime:
		return "ms"
	case ErrorRate:
		return "%"
	default:
		return "/s"
	}
}

// Holds reports whether observed satisfies the expression.
func (e *Expr) Holds(observed float64) bool {
	switch e.Op {
	case "<":
		return observed < e.Value
	case "<=":
		return observed <= e.Value
	case ">":
		return observed > e.Value
	case ">=":
		return observed >= e.Value
	case "==":
		return observed == e.Value
	default:
		return observed != e.Value
	}
}

// Describe renders the metric in words for reports ("average response time").
func (e *Expr) Describe() string {
	var s string
	switch e.Metric {
	case ResponseTime:
		names := map[string]string{"avg": "average", "min": "minimum", "max": "maximum", "p50": "median",
			"p90": "90th percentile", "p95": "95th percentile", "p99": "99th percentile"}
		s = names[e.Stat] + " response time"
	case ErrorRate:
		s = "error rate"
	default:
		s = "throughput"
	}
	if e.Label != "" {
		s += " of " + strconv.Quote(e.Label)
	}
	return s
}

// ParseError locates a problem within the expression (1-based column).
type ParseError struct {
	Col int
	Msg string
}

func (e *ParseError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

type lexer struct {
	s   string
	pos int
}

func (l *lexer) skip() {
	for l.pos < len(l.s) && unicode.IsSpace(rune(l.s[l.pos])) {
		l.pos++
	}
}

func (l *lexer) errf(format string, a ...any) error {
	return &ParseError{Col: l.pos + 1, Msg: fmt.Sprintf(format, a...)}
}

func (l *lexer) ident() string {
	l.skip()
	st := l.pos
	for l.pos < len(l.s) && (l.s[l.pos] == '_' || unicode.IsLetter(rune(l.s[l.pos])) || unicode.IsDigit(rune(l.s[l.pos]))) {
		l.pos++
	}
	return l.s[st:l.pos]
}

func (l *lexer) accept(tok string) bool {
	l.skip()
	if strings.HasPrefix(l.s[l.pos:], tok) {
		l.pos += len(tok)
		return true
	}
	return false
}

func (l *lexer) quoted() (string, error) {
	l.skip()
	if l.pos >= len(l.s) || (l.s[l.pos] != '"' && l.s[l.pos] != '\'') {
		return "", l.errf("expected a quoted string")
	}
	q := l.s[l.pos]
	end := strings.IndexByte(l.s[l.pos+1:], q)
	if end < 0 {
		return "", l.errf("unterminated string")
	}
	v := l.s[l.pos+1 : l.pos+1+end]
	l.pos += end + 2
	return v, nil
}

func (l *lexer) labelSel() (string, error) {
	if !l.accept("{") {
		return "", nil
	}
	if id := l.ident(); id != "label" {
		return "", l.errf("only label=\"…\" can be selected, not %q", id)
	}
	if !l.accept("=") {
		return "", l.errf("expected =")
	}
	v, err := l.quoted()
	if err != nil {
		return "", err
	}
	if !l.accept("}") {
		return "", l.errf("expected }")
	}
	return v, nil
}

var stats = map[string]string{"avg": "avg", "mean": "avg", "average": "avg", "min": "min", "max": "max",
	"p50": "p50", "median": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}

// Parse parses one expression.
func Parse(text string) (*Expr, error) {
	l := &lexer{s: text}
	e := &Expr{Text: strings.TrimSpace(text)}
	id := l.ident()
	switch {
	case id == ErrorRate || id == Throughput:
		e.Metric = id
		lab, err := l.labelSel()
		if err != nil {
			return nil, err
		}
		e.Label = lab
	case stats[id] != "":
		e.Stat = stats[id]
		e.Metric = ResponseTime
		if !l.accept("(") {
			return nil, l.errf("expected ( after %s", id)
		}
		if m := l.ident(); m != ResponseTime {
			return nil, l.errf("expected response_time, got %q", m)
		}
		lab, err := l.labelSel()
		if err != nil {
			return nil, err
		}
		e.Label = lab
		if !l.accept(")") {
			return nil, l.errf("expected )")
		}
	case id == "":
		return nil, l.errf("expected a metric (avg(response_time), p95(response_time), error_rate, throughput)")
	default:
		return nil, &ParseError{Col: l.pos - len(id) + 1, Msg: fmt.Sprintf("unknown metric %q (want avg|min|max|p50|p90|p95|p99(response_time), error_rate or throughput)", id)}
	}
	for _, op := range []string{"<=", ">=", "==", "!=", "<", ">"} {
		if l.accept(op) {
			e.Op = op
			break
		}
	}
	if e.Op == "" {
		return nil, l.errf("expected a comparison (<, <=, >, >=, ==, !=)")
	}
	l.skip()
	st := l.pos
	for l.pos < len(l.s) && (l.s[l.pos] == '.' || l.s[l.pos] == '-' || l.s[l.pos] == '+' || unicode.IsDigit(rune(l.s[l.pos]))) {
		l.pos++
	}
	num, err := strconv.ParseFloat(l.s[st:l.pos], 64)
	if err != nil {
		return nil, &ParseError{Col: st + 1, Msg: "expected a number"}
	}
	unitStart := l.pos
	for l.pos < len(l.s) && !unicode.IsSpace(rune(l.s[l.pos])) {
		l.pos++
	}
	unit := l.s[unitStart:l.pos]
	switch e.Metric {
	case ResponseTime:
		mult := map[string]float64{"ms": 1, "s": 1000, "us": 0.001, "µs": 0.001, "m": 60000}[unit]
		if mult == 0 {
			return nil, &ParseError{Col: unitStart + 1, Msg: fmt.Sprintf("response time needs a unit (ms, s, us), got %q", unit)}
		}
		e.Value = num * mult
	case ErrorRate:
		if unit != "%" {
			return nil, &ParseError{Col: unitStart + 1, Msg: fmt.Sprintf("error_rate is a percentage: write e.g. 1%%, got %q", unit)}
		}
		e.Value = num
	default:
		mult := map[string]float64{"/s": 1, "/m": 1.0 / 60, "/min": 1.0 / 60}[unit]
		if mult == 0 {
			return nil, &ParseError{Col: unitStart + 1, Msg: fmt.Sprintf("throughput needs a unit (/s or /m), got %q", unit)}
		}
		e.Value = num * mult
	}
	if kw := l.ident(); kw != "" {
		if kw != "during" {
			return nil, &ParseError{Col: l.pos - len(kw) + 1, Msg: fmt.Sprintf("unexpected %q (only `during \"phase\"` may follow)", kw)}
		}
		ph, err := l.quoted()
		if err != nil {
			return nil, err
		}
		e.Phase = ph
	}
	l.skip()
	if l.pos < len(l.s) {
		return nil, l.errf("unexpected %q", l.s[l.pos:])
	}
	return e, nil
}

// Check is the syntax check the plan loader calls.
func Check(text string) error {
	_, err := Parse(text)
	return err
}
