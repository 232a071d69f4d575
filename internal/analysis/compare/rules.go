package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/plateau-perf/plateau/internal/core"
)

// Metric is what a fail-on rule watches. Its value is the canonical name.
type Metric string

// Metrics a rule can watch, read from core.LabelStats.
const (
	Mean       Metric = "mean"
	P50        Metric = "p50"
	P90        Metric = "p90"
	P95        Metric = "p95"
	P99        Metric = "p99"
	Max        Metric = "max"
	ErrorRate  Metric = "error_rate"
	Throughput Metric = "throughput"
)

var metricNames = map[string]Metric{
	"mean": Mean, "avg": Mean, "average": Mean,
	"p50": P50, "median": P50, "p90": P90, "p95": P95, "p99": P99, "max": Max,
	"error_rate": ErrorRate, "errors": ErrorRate, "error_pct": ErrorRate,
	"throughput": Throughput, "rps": Throughput,
}

func (m Metric) latency() bool { return m != ErrorRate && m != Throughput }

// value reads the metric from a stats row.
func (m Metric) value(s core.LabelStats) float64 {
	switch m {
	case Mean:
		return s.MeanMs
	case P50:
		return s.P50Ms
	case P90:
		return s.P90Ms
	case P95:
		return s.P95Ms
	case P99:
		return s.P99Ms
	case Max:
		return s.MaxMs
	case ErrorRate:
		return s.ErrorPct
	default:
		return s.ThroughputRPS
	}
}

// Rule is one parsed --fail-on condition: it fires when the change of
// Metric from the baseline to the candidate satisfies Op Change.
type Rule struct {
	Metric Metric
	Op     string // ">", ">=", "<" or "<="
	// Change is the signed threshold: percent of the baseline when
	// Relative, otherwise milliseconds (latency), percentage points (error
	// rate) or requests per second (throughput).
	Change   float64
	Relative bool
	// Col is the 1-based column (in characters) where the rule starts in
	// the parsed text, for messages.
	Col int
}

// String renders the rule canonically; ParseRules(r.String()) gives r back
// (Col aside).
func (r Rule) String() string {
	v := strconv.FormatFloat(r.Change, 'f', -1, 64) // 'g' wrote 1e+06, which the parser reads as a unit
	if r.Change >= 0 {
		v = "+" + v
	}
	unit := "%"
	switch {
	case r.Metric == ErrorRate || r.Relative:
	case r.Metric == Throughput:
		unit = "rps"
	default:
		unit = "ms"
	}
	return fmt.Sprintf("%s %s %s%s", r.Metric, r.Op, v, unit)
}

// ParseError is a fail-on syntax error at a column of the input.
type ParseError struct {
	Input string
	Col   int // 1-based, in characters
	Msg   string
}

// Error renders the error with the input and column, e.g.
// `fail-on "p95 > +10": column 10: missing unit after 10 (…)`.
func (e *ParseError) Error() string {
	return fmt.Sprintf("fail-on %q: column %d: %s", e.Input, e.Col, e.Msg)
}

// ParseRules parses a --fail-on expression: one or more rules on the change
// from the baseline to the candidate. Grammar (EBNF; blanks may separate
// tokens, except inside a number):
//
//	rules  = rule { ( "," | ";" ) rule } .
//	rule   = metric op change .
//	metric = "mean" | "avg" | "average" | "p50" | "median" | "p90" | "p95"
//	       | "p99" | "max" | "error_rate" | "errors" | "error_pct"
//	       | "throughput" | "rps" .
//	op     = ">" | ">=" | "<" | "<=" .
//	change = [ "+" | "-" ] digits [ "." digits ] unit .
//	unit   = "%" | "ms" | "s" | "us" | "µs" | "pp" | "rps" | "req/s" .
//
// Every threshold is a change, never an absolute level (absolute limits are
// SLAs); a missing sign means "+". Latency metrics take "%" (relative to the
// baseline) or a time unit (absolute change, stored in ms). error_rate is
// already a percentage, so "%" and "pp" both mean percentage points:
// "error_rate > +1%" fires when errors go from 0.2 % to 1.3 %. throughput
// takes "%" or "rps"/"req/s". Metric names and units are case-insensitive.
//
// Examples: "p95 > +10%", "mean > +20ms", "error_rate > +1%",
// "throughput < -5%, p99 >= +250ms".
func ParseRules(s string) ([]Rule, error) {
	p := &parser{in: s}
	var rules []Rule
	for {
		r, err := p.rule()
		if err != nil {
			return nil, err
		}
		rules = append(rules, r)
		p.blank()
		if p.eof() {
			return rules, nil
		}
		if c := p.in[p.pos]; c != ',' && c != ';' {
			return nil, p.errorf(p.pos, "unexpected %q after a rule (separate rules with ',')", p.rest())
		}
		p.pos++
	}
}

type parser struct {
	in  string
	pos int // byte offset
}

func (p *parser) eof() bool { return p.pos >= len(p.in) }

func (p *parser) blank() {
	for !p.eof() && (p.in[p.pos] == ' ' || p.in[p.pos] == '\t') {
		p.pos++
	}
}

// rest returns the next few characters, for messages.
func (p *parser) rest() string {
	r := p.in[p.pos:]
	if utf8.RuneCountInString(r) > 12 {
		n := 0
		for i := range r {
			if n == 12 {
				return r[:i] + "…"
			}
			n++
		}
	}
	return r
}

func (p *parser) errorf(at int, format string, args ...any) error {
	return &ParseError{Input: p.in, Col: utf8.RuneCountInString(p.in[:at]) + 1, Msg: fmt.Sprintf(format, args...)}
}

// span advances over bytes accepted by ok and returns them.
func (p *parser) span(ok func(byte) bool) string {
	start := p.pos
	for !p.eof() && ok(p.in[p.pos]) {
		p.pos++
	}
	return p.in[start:p.pos]
}

func isIdent(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (p *parser) rule() (Rule, error) {
	p.blank()
	r := Rule{Col: utf8.RuneCountInString(p.in[:p.pos]) + 1}
	at := p.pos
	name := p.span(isIdent)
	if name == "" {
		if p.eof() {
			return r, p.errorf(at, "expected a metric (mean, p95, error_rate, throughput, …), found the end")
		}
		return r, p.errorf(at, "expected a metric (mean, p95, error_rate, throughput, …), found %q", p.rest())
	}
	m, ok := metricNames[strings.ToLower(name)]
	if !ok {
		return r, p.errorf(at, "unknown metric %q (want mean, p50, p90, p95, p99, max, error_rate or throughput)", name)
	}
	r.Metric = m

	p.blank()
	at = p.pos
	switch {
	case strings.HasPrefix(p.in[p.pos:], ">="), strings.HasPrefix(p.in[p.pos:], "<="):
		r.Op = p.in[p.pos : p.pos+2]
		p.pos += 2
	case strings.HasPrefix(p.in[p.pos:], ">"), strings.HasPrefix(p.in[p.pos:], "<"):
		r.Op = p.in[p.pos : p.pos+1]
		p.pos++
	default:
		return r, p.errorf(at, "expected an operator (>, >=, <, <=) after %s", name)
	}

	p.blank()
	at = p.pos
	sign := 1.0
	if !p.eof() && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
		if p.in[p.pos] == '-' {
			sign = -1
		}
		p.pos++
	}
	numAt := p.pos
	num := p.span(isDigit)
	if !p.eof() && p.in[p.pos] == '.' {
		p.pos++
		frac := p.span(isDigit)
		if num == "" && frac == "" {
			return r, p.errorf(numAt, "expected a number")
		}
		num += "." + frac
	}
	if num == "" {
		return r, p.errorf(at, "expected a signed number such as +10%% after %s", r.Op)
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(v, 0) {
		return r, p.errorf(numAt, "number %q out of range", num)
	}
	r.Change = sign * v
	if r.Change == 0 {
		r.Change = 0 // no negative zero: "-0%" prints and compares as "+0%"
	}

	p.blank()
	at = p.pos
	unit := p.span(func(c byte) bool { return c != ' ' && c != '\t' && c != ',' && c != ';' })
	if unit == "" {
		return r, p.errorf(at, "missing unit after %s (%s)", num, unitsFor(r.Metric))
	}
	scale, rel, ok := unitScale(r.Metric, strings.ToLower(unit))
	if !ok {
		return r, p.errorf(at, "unit %q does not apply to %s (%s)", unit, r.Metric, unitsFor(r.Metric))
	}
	r.Change *= scale
	r.Relative = rel
	return r, nil
}

func unitsFor(m Metric) string {
	switch m {
	case ErrorRate:
		return "want % or pp"
	case Throughput:
		return "want %, rps or req/s"
	default:
		return "want %, ms, s, us or µs"
	}
}

// unitScale maps a unit to the factor that converts the number to the rule's
// stored unit, and whether the rule is relative.
func unitScale(m Metric, unit string) (scale float64, relative, ok bool) {
	switch {
	case m == ErrorRate:
		return 1, false, unit == "%" || unit == "pp"
	case m == Throughput:
		switch unit {
		case "%":
			return 1, true, true
		case "rps", "req/s":
			return 1, false, true
		}
	default:
		switch unit {
		case "%":
			return 1, true, true
		case "ms":
			return 1, false, true
		case "s":
			return 1000, false, true
		case "us", "µs":
			return 0.001, false, true
		}
	}
	return 0, false, false
}

// Outcome is one rule checked against one comparison; the report words
// it (report.RuleOutcomeText).
type Outcome struct {
	Rule Rule
	// Observed is the change in the rule's unit (percent when relative).
	// A relative change from a zero baseline is ±Inf.
	Observed float64
	Base     float64
	New      float64
	Failed   bool
}

// Check evaluates the rule on a baseline and a candidate stats row (the
// same label and phase).
func (r Rule) Check(base, cand core.LabelStats) Outcome {
	o := Outcome{Rule: r, Base: r.Metric.value(base), New: r.Metric.value(cand)}
	d := o.New - o.Base
	if r.Relative {
		o.Observed = pct(d, o.Base)
	} else {
		o.Observed = d
	}
	switch r.Op {
	case ">":
		o.Failed = o.Observed > r.Change
	case ">=":
		o.Failed = o.Observed >= r.Change
	case "<":
		o.Failed = o.Observed < r.Change
	case "<=":
		o.Failed = o.Observed <= r.Change
	}
	return o
}

// CheckAll evaluates every rule and reports whether any failed.
func CheckAll(rules []Rule, base, cand core.LabelStats) ([]Outcome, bool) {
	out := make([]Outcome, len(rules))
	failed := false
	for i, r := range rules {
		out[i] = r.Check(base, cand)
		failed = failed || out[i].Failed
	}
	return out, failed
}
