// Package sla parses and judges requirement expressions.
//
// Grammar (one expression per plan entry):
//
//	expr     = metric op value [ "during" quoted-phase ]
//	metric   = stat "(" "response_time" [ selector ] ")"
//	         | "error_rate" [ selector ]
//	         | "throughput" [ selector ]
//	         | "checks" [ "{" "name" "=" quoted "}" ]   share of checks passed (run or phase)
//	         | stat "(" ( "server_time" | "server_time_net" ) [ "{" "server" "=" quoted "}" ] ")"
//	selector = "{" key "=" quoted { "," key "=" quoted } "}"   key: label | workload
//	stat     = "avg" | "mean" | "min" | "max" | "median" | "p" number | "p(" number ")"
//
// A percentile is any number in (0, 100): p95, p99.9, p(99.9). A label
// selector matches a request or transaction label as the plan names it
// ("GET /x") or as the report prints it with its workload ("read: GET /x");
// a workload selector matches every label of that workload.
//
//	op       = "<" | "<=" | ">" | ">=" | "==" | "!="
//	value    = number unit       units: ms, s, us (times); % (error_rate, checks); /s, /m (throughput)
//
// server_time is the response time the servers' own access logs record
// (attached to the run with the plan's server_side sources);
// server_time_net the same net of the downstream calls joined from an
// external-call log (reference 000's "without MSB"). A server selector
// names one attached access log; without it every attached access log
// counts.
//
// Examples: `avg(response_time) < 200ms`, `p95(response_time{label="login"}) <= 1s`,
// `error_rate < 1%`, `throughput >= 10/s during "step 1"`, `checks > 99%`,
// `checks{name="cart has items"} >= 99.9%`.
package sla

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Metric kinds.
const (
	ResponseTime = "response_time"
	ErrorRate    = "error_rate"
	Throughput   = "throughput"
	// Checks is the share of the plan's checks that passed (k6's checks
	// rate), in percent; Label is then the check's name.
	Checks = "checks"
	// ServerTime and ServerTimeNet are server-side response times from
	// attached access logs, with and net of downstream calls; Server then
	// names the access log's server ("" = all of them).
	ServerTime    = "server_time"
	ServerTimeNet = "server_time_net"
)

// IsServer reports whether the metric is judged on the server-side data
// attached to the run rather than on the client's samples.
func (e *Expr) IsServer() bool { return e.Metric == ServerTime || e.Metric == ServerTimeNet }

// Expr is a parsed requirement.
type Expr struct {
	Text   string
	Metric string // response_time | error_rate | throughput
	Stat   string // avg, min, max, or a percentile "p95", "p99.9" (response_time only)
	// Percentile is the percentile of a "p…" Stat, in (0, 100).
	Percentile float64
	Label      string  // "" = all requests
	Workload   string  // "" = every workload
	Server     string  // server_time…: the attached access log's server, "" = all
	Op         string  // < <= > >= == !=
	Value      float64 // ms for times, percent for error_rate, per second for throughput
	Phase      string  // "" = whole run (and judged per phase too)
}

// Unit is the unit Value and observed values are in.
func (e *Expr) Unit() string {
	switch e.Metric {
	case ResponseTime, ServerTime, ServerTimeNet:
		return "ms"
	case ErrorRate, Checks:
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

// Quantity is what a requirement judges: a kind, worded by the report
// (report.SubjectText), never by this package.
type Quantity int

// Quantities a requirement judges.
const (
	QResponseTime  Quantity = iota // the client's response time
	QServerTime                    // the servers' logged response time
	QServerTimeNet                 // the same net of downstream calls
	QErrorRate                     // failed requests, in per cent
	QThroughput                    // completed requests per second
	QChecks                        // checks passed, in per cent
)

// Statistic is the statistic of a time a requirement judges.
type Statistic int

// Statistics of a time; StatNone for a rate or a throughput.
const (
	StatNone Statistic = iota
	StatAverage
	StatMinimum
	StatMaximum
	StatMedian
	StatPercentile // Subject.Percentile says which
)

// Subject is what a requirement judges, as kinds and names: the
// quantity, its statistic, and the label, workload or server it is
// narrowed to (names as the plan writes them, "" for all).
type Subject struct {
	Quantity   Quantity
	Stat       Statistic
	Percentile float64 // of StatPercentile, in (0, 100)
	// Label is a request or transaction label, or for QChecks a check's
	// name; Workload a workload's; Server an attached access log's.
	Label, Workload, Server string
}

// Subject is what the expression judges.
func (e *Expr) Subject() Subject {
	s := Subject{Label: e.Label, Workload: e.Workload, Server: e.Server}
	switch e.Metric {
	case ResponseTime:
		s.Quantity = QResponseTime
	case ServerTime:
		s.Quantity = QServerTime
	case ServerTimeNet:
		s.Quantity = QServerTimeNet
	case ErrorRate:
		s.Quantity = QErrorRate
	case Checks:
		s.Quantity = QChecks
	default:
		s.Quantity = QThroughput
	}
	if s.Quantity == QResponseTime || s.Quantity == QServerTime || s.Quantity == QServerTimeNet {
		switch e.Stat {
		case "avg":
			s.Stat = StatAverage
		case "min":
			s.Stat = StatMinimum
		case "max":
			s.Stat = StatMaximum
		case "p50":
			s.Stat = StatMedian
		default:
			s.Stat, s.Percentile = StatPercentile, e.Percentile
		}
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

// selector reads an optional {label="…", workload="…"} into e.
func (l *lexer) selector(e *Expr) error {
	if !l.accept("{") {
		return nil
	}
	for {
		id := l.ident()
		if id != "label" && id != "workload" {
			return l.errf("only label=\"…\" and workload=\"…\" can be selected, not %q", id)
		}
		if !l.accept("=") {
			return l.errf("expected =")
		}
		v, err := l.quoted()
		if err != nil {
			return err
		}
		if id == "label" {
			e.Label = v
		} else {
			e.Workload = v
		}
		if l.accept("}") {
			return nil
		}
		if !l.accept(",") {
			return l.errf("expected , or }")
		}
	}
}

// serverSelector reads an optional {server="…"} into e.
func (l *lexer) serverSelector(e *Expr) error {
	if !l.accept("{") {
		return nil
	}
	if id := l.ident(); id != "server" {
		return l.errf("only server=\"…\" can be selected for %s, not %q", e.Metric, id)
	}
	if !l.accept("=") {
		return l.errf("expected =")
	}
	v, err := l.quoted()
	if err != nil {
		return err
	}
	if !l.accept("}") {
		return l.errf("expected }")
	}
	e.Server = v
	return nil
}

// CheckServers checks a server_time requirement against the access logs
// the run will attach: servers maps each server name to whether its log is
// joined with an external-call log (needed for server_time_net).
func (e *Expr) CheckServers(servers map[string]bool) error {
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(servers) == 0 {
		return fmt.Errorf("%s needs an access log attached to the run (server_side: sources: - accesslog: …, or --attach accesslog:PATH)", e.Metric)
	}
	if e.Server != "" {
		joined, ok := servers[e.Server]
		if !ok {
			return fmt.Errorf("no attached access log of a server named %q (servers: %s)", e.Server, quoteList(names))
		}
		if e.Metric == ServerTimeNet && !joined {
			return fmt.Errorf("server_time_net of %q needs its access log joined with an external-call log (option external)", e.Server)
		}
		return nil
	}
	if e.Metric == ServerTimeNet {
		for _, n := range names {
			if !servers[n] {
				return fmt.Errorf("server_time_net needs every attached access log joined with an external-call log (option external); %q has none — select the servers that have one with {server=\"…\"}", n)
			}
		}
	}
	return nil
}

var stats = map[string]string{"avg": "avg", "mean": "avg", "average": "avg", "min": "min", "max": "max",
	"median": "p50"}

// percentile reads the number of "p99.9" (after the p) or "p(99.9)".
func (l *lexer) percentile(id string) (float64, bool, error) {
	start := l.pos - len(id) + 1
	var num string
	switch {
	case id == "p" && l.accept("("):
		l.skip()
		st := l.pos
		for l.pos < len(l.s) && (l.s[l.pos] == '.' || unicode.IsDigit(rune(l.s[l.pos]))) {
			l.pos++
		}
		num = l.s[st:l.pos]
		if !l.accept(")") {
			return 0, false, l.errf("expected ) after the percentile")
		}
	case len(id) > 1 && id[0] == 'p' && unicode.IsDigit(rune(id[1])):
		num = id[1:]
		// p99.9: the ident stops at the dot.
		if l.pos < len(l.s) && l.s[l.pos] == '.' {
			st := l.pos
			l.pos++
			for l.pos < len(l.s) && unicode.IsDigit(rune(l.s[l.pos])) {
				l.pos++
			}
			num += l.s[st:l.pos]
		}
	default:
		return 0, false, nil
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v >= 100 {
		return 0, false, &ParseError{Col: start, Msg: fmt.Sprintf("percentile %q must be a number between 0 and 100 (exclusive)", num)}
	}
	return v, true, nil
}

// statName is the canonical Stat of percentile v: "p95", "p99.9".
func statName(v float64) string { return "p" + strconv.FormatFloat(v, 'f', -1, 64) }

// Parse parses one expression.
func Parse(text string) (*Expr, error) {
	l := &lexer{s: text}
	e := &Expr{Text: strings.TrimSpace(text)}
	id := l.ident()
	switch {
	case id == ErrorRate || id == Throughput:
		e.Metric = id
		if err := l.selector(e); err != nil {
			return nil, err
		}
	case id == Checks:
		e.Metric = id
		if l.accept("{") {
			if k := l.ident(); k != "name" {
				return nil, l.errf("only name=\"…\" can be selected for checks, not %q", k)
			}
			if !l.accept("=") {
				return nil, l.errf("expected =")
			}
			v, err := l.quoted()
			if err != nil {
				return nil, err
			}
			if !l.accept("}") {
				return nil, l.errf("expected }")
			}
			e.Label = v
		}
	case stats[id] != "" || strings.HasPrefix(id, "p"):
		e.Stat = stats[id]
		if e.Stat == "" {
			pv, ok, err := l.percentile(id)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, &ParseError{Col: l.pos - len(id) + 1, Msg: fmt.Sprintf("unknown metric %q (want avg|min|max|median|pN|p(N)(response_time), error_rate, throughput or checks)", id)}
			}
			e.Stat, e.Percentile = statName(pv), pv
		} else if e.Stat == "p50" {
			e.Percentile = 50
		}
		e.Metric = ResponseTime
		if !l.accept("(") {
			return nil, l.errf("expected ( after %s", id)
		}
		switch m := l.ident(); m {
		case ResponseTime:
			if err := l.selector(e); err != nil {
				return nil, err
			}
		case ServerTime, ServerTimeNet:
			e.Metric = m
			if err := l.serverSelector(e); err != nil {
				return nil, err
			}
		default:
			return nil, l.errf("expected response_time, server_time or server_time_net, got %q", m)
		}
		if !l.accept(")") {
			return nil, l.errf("expected )")
		}
	case id == "":
		return nil, l.errf("expected a metric (avg(response_time), p95(response_time), error_rate, throughput, checks)")
	default:
		return nil, &ParseError{Col: l.pos - len(id) + 1, Msg: fmt.Sprintf("unknown metric %q (want avg|min|max|median|pN|p(N)(response_time), error_rate, throughput or checks)", id)}
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
	case ResponseTime, ServerTime, ServerTimeNet:
		mult := map[string]float64{"ms": 1, "s": 1000, "us": 0.001, "µs": 0.001, "m": 60000}[unit]
		if mult == 0 {
			return nil, &ParseError{Col: unitStart + 1, Msg: fmt.Sprintf("response time needs a unit (ms, s, us), got %q", unit)}
		}
		e.Value = num * mult
	case ErrorRate, Checks:
		if unit != "%" {
			return nil, &ParseError{Col: unitStart + 1, Msg: fmt.Sprintf("%s is a percentage: write e.g. 1%%, got %q", e.Metric, unit)}
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

// CheckNames checks e's selectors and phase against the names a plan will
// record: its workloads, each workload's labels and the phases. A label may
// be given as the plan names it ("GET /x") or as the report prints it
// ("read: GET /x"). The error lists what there is, so a typo is found
// before the first request.
func (e *Expr) CheckNames(workloads []string, labels map[string][]string, phases []string) error {
	if e.Workload != "" && !slices.Contains(workloads, e.Workload) {
		return fmt.Errorf("no workload named %q (workloads: %s)", e.Workload, quoteList(workloads))
	}
	if e.Label != "" {
		var known []string
		found := false
		for _, w := range workloads {
			if e.Workload != "" && w != e.Workload {
				continue
			}
			for _, l := range labels[w] {
				printed := l
				if len(workloads) > 1 {
					printed = w + ": " + l
				}
				if e.Label == l || e.Label == printed {
					found = true
				}
				if !slices.Contains(known, printed) {
					known = append(known, printed)
				}
			}
		}
		if !found {
			return fmt.Errorf("no label named %q (labels: %s)", e.Label, quoteList(known))
		}
	}
	if e.Phase != "" && !slices.Contains(phases, e.Phase) {
		return fmt.Errorf("no phase named %q (phases: %s)", e.Phase, quoteList(phases))
	}
	return nil
}

func quoteList(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return strings.Join(q, ", ")
}
