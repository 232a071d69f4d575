// Package convert holds what the three converters (convert/jmeter,
// convert/har, convert/postman) share: the plan they build, the one YAML
// writer that turns it into a plan file, and the one conversion report
// (plan.convert.md) that accounts for every element of the source.
//
// The converters build a Plan here rather than a plan.Plan: a converted plan
// carries things a loaded plan never has — comments left where an element
// could not be converted, and the source element each step came from — and it
// must be written as text a user will edit. The written file is then loaded
// with plan.Parse, the same loader `plateau run` uses, so a converted plan is
// only ever handed back once it loads (see Verify).
package convert

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Plan is a converted test plan, in the order its YAML file is written.
type Plan struct {
	Name    string
	Target  string
	HTTP    HTTP
	Vars    []KV // constant variables; values may hold ${env.NAME}
	Data    []Feeder
	Secrets []string // header and variable names never written to reports
	// Setup and Teardown run once per run (plan level), by one user.
	Setup, Teardown []Step
	// Workloads in source order.
	Workloads []*Workload
	// Header is written as a comment at the top of the file.
	Header []string
	// SLA are the plan's requirements (sla:), in order.
	SLA []SLA
	// Files are data files the conversion made (a k6 script's JSON member
	// or array of strings, as a CSV plateau reads), by path relative to the
	// plan; the caller writes them beside the plan.
	Files map[string][]byte
}

// SLA is one requirement: an expression, and k6's abortOnFail /
// delayAbortEval.
type SLA struct {
	Expr  string
	Abort bool
	Grace string
}

// HTTP is the part of the plan's http section a converter can set.
type HTTP struct {
	Timeout        time.Duration
	ConnectTimeout time.Duration
	Redirects      *int
	Cookies        *bool
	// CookiesPerIteration empties each user's jar at every iteration
	// (cookies: per_iteration), as k6 and JMeter's clearEachIteration do.
	CookiesPerIteration bool
	Headers             []KV
}

// KV is one name → value pair kept in order (headers, vars, form fields).
type KV struct {
	Name, Value string
}

// Feeder is one CSV data source.
type Feeder struct {
	Name        string
	CSV         string
	JSON        string // a JSON array of objects instead of CSV
	Order       string // "" = sequential
	OnExhausted string // "" = default
	Delimiter   string // "" = ","
	// Headerless: the file has no header row; Columns name its fields
	// (written as columns:).
	Headerless bool
	// Columns are the columns the converted plan reads; Verify writes a
	// stand-in file with them when the CSV file is not beside the plan.
	Columns []string
}

// Workload is one named workload.
type Workload struct {
	Name     string
	Comment  []string // written above the workload
	Setup    []Step
	Scenario []Step
	Teardown []Step
	Load     Load
	OnFail   string // continue, next_iteration, stop_user, stop_run
}

// Load is the load shape; empty fields are not written. Values are the
// text written in the plan — "10", "30s", or "${env.THREADS:-10}" when the
// source read a property — so they are strings.
type Load struct {
	Users      string
	RampUp     string
	Duration   string
	Iterations string
	Pace       string
	StartAfter string
	Steps      []LoadStep
	// Open model: Rate ("20/1s") with MaxUsers.
	Rate     string
	MaxUsers string
	// Stages of users or of rate (k6's ramping executors).
	Stages       []LoadStage
	GracefulStop string
}

// LoadStage is one stage of a ramping load: Users or Rate, over Duration.
type LoadStage struct {
	Users, Rate, Duration string
}

// LoadStep is one step of a stepped closed load.
type LoadStep struct {
	Users    string
	RampUp   string
	Duration string
}

// Dur formats a duration the way plans write it ("1m30s", "250ms").
func Dur(d time.Duration) string { return dur(d) }

// Step is one of Request, Think, Transaction, Loop — or only a Comment:
// an element that could not be converted, written as a YAML comment where it
// was so the plan still loads.
type Step struct {
	Request     *Request
	Think       *Think
	Transaction *Group
	Loop        *Group
	If          *Group   // Cond, Steps, Else
	Foreach     *Group   // In, As, Steps
	Choose      []Branch // weighted branches
	Rendezvous  *Rendezvous
	Comment     []string
}

// Group is a transaction (Name), a loop (Count, or While with Max), an if
// (Cond, Steps, Else) or a foreach (In, As), with its steps.
type Group struct {
	Name   string
	Count  int
	While  string
	Max    int
	Cond   string
	In     string
	As     string
	OnFail string
	Steps  []Step
	Else   []Step
}

// Branch is one weighted branch of a choose step.
type Branch struct {
	Name   string
	Weight float64
	Steps  []Step
}

// Rendezvous holds users until Users arrived or Timeout passed.
type Rendezvous struct {
	Name    string
	Users   int
	Timeout time.Duration
}

// Think is a pause: Fixed, or uniform between Min and Max when Max > 0,
// or a distribution (Dist gaussian: Mean, Spread = sd; exponential: Mean).
type Think struct {
	Fixed, Min, Max time.Duration
	Dist            string
	Mean, Spread    time.Duration
}

// Request is one HTTP request. Strings are plan templates (${name}).
type Request struct {
	Name    string
	Method  string
	URL     string
	Headers []KV
	Body    *string
	Form    []KV
	// Multipart is a multipart/form-data body; BodyFile a file sent as the
	// whole body. Paths as the plan reads them (relative to the plan file,
	// or absolute).
	Multipart *Multipart
	BodyFile  string
	Extract   []Extract
	Check     Check
	// Checks are further checks, written with Check as a check list.
	Checks    []Check
	Timeout   time.Duration
	Redirects *int
	// NoEncode sends values substituted into the URL as they are
	// (encode: false); the URL text then encodes what it must itself.
	NoEncode bool
	// Postman (encode: postman) sends the URL as Postman's runtime
	// encodes it once its variables are in.
	Postman bool
	OnFail  string
	// Comment is written above the request (partial conversions).
	Comment []string
}

// Multipart is a multipart/form-data body: its fields (templates), sent
// first, then its files, or in Order (the parts' names as sent).
type Multipart struct {
	Fields []KV
	Files  []MultipartFile
	Order  []string
}

// MultipartFile is one file part.
type MultipartFile struct {
	Field, Path, ContentType string
}

// Extract takes one value from the response into Var. One source is set.
type Extract struct {
	Var     string
	JSON    string
	Regex   string
	Header  string
	Cookie  string
	Left    string // boundary: with Right
	Right   string
	CSS     string
	Attr    string // for CSS
	XPath   string
	All     bool   // every match, as a JSON array (for foreach)
	Pick    string // first (default), last, random
	Default *string
	AsJSON  bool // a json match kept as JSON text (as_json)
}

// Check is the request's response check; zero fields are not written.
type Check struct {
	Name        string // k6's check name
	Status      []int
	Body        string
	NotBody     string
	Regex       string
	NotRegex    string
	HeaderMatch []KV
	MinSize     int
	MaxSize     int
	JSON        []KV
	JSONNot     []KV
	JSONMatch   []KV
	JSONExists  []string
	MaxDuration time.Duration
}

// IsZero reports whether the check has no condition.
func (c *Check) IsZero() bool {
	return len(c.Status) == 0 && c.Body == "" && c.NotBody == "" && c.Regex == "" && c.NotRegex == "" &&
		len(c.HeaderMatch) == 0 && c.MinSize == 0 && c.MaxSize == 0 && len(c.JSON) == 0 && len(c.JSONNot) == 0 &&
		len(c.JSONMatch) == 0 && len(c.JSONExists) == 0 && c.MaxDuration == 0
}

// Var returns the value of the plan variable name and whether it is set.
func (p *Plan) Var(name string) (string, bool) {
	for _, kv := range p.Vars {
		if kv.Name == name {
			return kv.Value, true
		}
	}
	return "", false
}

// SetVar sets a plan variable, keeping the first position of its name.
func (p *Plan) SetVar(name, value string) {
	for i := range p.Vars {
		if p.Vars[i].Name == name {
			p.Vars[i].Value = value
			return
		}
	}
	p.Vars = append(p.Vars, KV{name, value})
}

// AddSecret adds name to the plan's secrets once.
func (p *Plan) AddSecret(name string) {
	for _, s := range p.Secrets {
		if strings.EqualFold(s, name) {
			return
		}
	}
	p.Secrets = append(p.Secrets, name)
}

// VarName turns any source variable name into a plan variable name:
// letters, digits, _ and -, starting with a letter or _.
func VarName(s string) string {
	var b strings.Builder
	for i, r := range s {
		ok := r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
		if !ok {
			r = '_'
		}
		if i == 0 && (r == '-' || (r >= '0' && r <= '9')) {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "_"
	}
	out := b.String()
	switch out {
	case "env", "__user", "__iteration", "__uuid", "__timestamp_ms":
		out = "v_" + out
	}
	return out
}

// EscapeLiteral makes literal text safe inside a plan template: a "${" that
// is not a reference is written "$${".
func EscapeLiteral(s string) string {
	return strings.ReplaceAll(s, "${", "$${")
}

// Refs returns the ${name} references of a plan template, in order; "$${"
// escapes are skipped.
func Refs(t string) []string {
	var out []string
	for i := 0; i < len(t); i++ {
		if t[i] != '$' || i+1 >= len(t) {
			continue
		}
		if t[i+1] == '$' && i+2 < len(t) && t[i+2] == '{' {
			i += 2
			continue
		}
		if t[i+1] != '{' {
			continue
		}
		end := strings.IndexByte(t[i+2:], '}')
		if end < 0 {
			return out
		}
		out = append(out, t[i+2:i+2+end])
		i += 2 + end
	}
	return out
}

// WalkRequests calls fn for every request in steps, depth first.
func WalkRequests(steps []Step, fn func(*Request)) {
	for i := range steps {
		s := &steps[i]
		switch {
		case s.Request != nil:
			fn(s.Request)
		case s.Transaction != nil:
			WalkRequests(s.Transaction.Steps, fn)
		case s.Loop != nil:
			WalkRequests(s.Loop.Steps, fn)
		case s.If != nil:
			WalkRequests(s.If.Steps, fn)
			WalkRequests(s.If.Else, fn)
		case s.Foreach != nil:
			WalkRequests(s.Foreach.Steps, fn)
		case s.Choose != nil:
			for _, b := range s.Choose {
				WalkRequests(b.Steps, fn)
			}
		}
	}
}

// WalkSteps calls fn for every step, depth first, inside every construct.
func WalkSteps(steps []Step, fn func(*Step)) {
	for i := range steps {
		s := &steps[i]
		fn(s)
		for _, g := range []*Group{s.Transaction, s.Loop, s.If, s.Foreach} {
			if g != nil {
				WalkSteps(g.Steps, fn)
				WalkSteps(g.Else, fn)
			}
		}
		for _, b := range s.Choose {
			WalkSteps(b.Steps, fn)
		}
	}
}

// Defined returns the variables steps define: extracted, or foreach items.
func Defined(steps []Step) map[string]bool {
	out := map[string]bool{}
	WalkSteps(steps, func(s *Step) {
		if s.Request != nil {
			for _, e := range s.Request.Extract {
				out[e.Var] = true
			}
		}
		if s.Foreach != nil {
			out[s.Foreach.As] = true
		}
	})
	return out
}

// StepVars returns the variables the templates and conditions of steps
// read.
func StepVars(steps []Step) []string {
	var out []string
	WalkSteps(steps, func(s *Step) {
		if r := s.Request; r != nil {
			out = append(out, TemplateVars(r.URL)...)
			for _, h := range r.Headers {
				out = append(out, TemplateVars(h.Value)...)
			}
			for _, f := range r.Form {
				out = append(out, TemplateVars(f.Value)...)
			}
			if r.Body != nil {
				out = append(out, TemplateVars(*r.Body)...)
			}
		}
		if s.If != nil {
			out = append(out, TemplateVars(s.If.Cond)...)
		}
		if s.Loop != nil && s.Loop.While != "" {
			out = append(out, TemplateVars(s.Loop.While)...)
		}
		if s.Foreach != nil {
			out = append(out, TemplateVars(s.Foreach.In)...)
		}
	})
	return out
}

// TemplateVars returns the variable names a template or condition reads:
// ${name} references, and bare names inside function calls
// ${urlencode(name)}.
func TemplateVars(t string) []string {
	var out []string
	for _, r := range Refs(t) {
		open := strings.IndexByte(r, '(')
		if open < 0 {
			out = append(out, strings.TrimSpace(r))
			continue
		}
		args := quotedRe.ReplaceAllString(r[open+1:], "")
		for _, id := range identRe.FindAllString(args, -1) {
			switch id {
			case "true", "false", "null", "status":
				continue
			}
			out = append(out, id)
		}
	}
	return out
}

var (
	quotedRe = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	identRe  = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.\-]*`)
)

// CommentStep is a step that is only a comment.
func CommentStep(lines ...string) Step { return Step{Comment: lines} }

// dur formats a duration the way plans are written: "1m30s", "250ms", "2m".
func dur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	if d < time.Minute && d%time.Millisecond == 0 && d%time.Second != 0 {
		return fmt.Sprintf("%dms", d/time.Millisecond)
	}
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
