package engine

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/secret"
)

// A program is a workload compiled for execution: variables become slots in
// a per-user table and templates become lists of literal or slot parts, so
// that running a step does no map lookups and no parsing.
type program struct {
	name     string
	index    int
	setup    []step
	scenario []step
	teardown []step
	slots    *slotTable
	feeders  []feederUse // feeders the scenario reads, advanced once per iteration
	setupFds []feederUse // feeders the setup reads, advanced once per user
	labels   []string    // every request and transaction label, for the live panel
	// secrets are the plan's secret names (lower case); secretSlots the
	// variable slots holding secret values (plan.SecretSet: named secret or
	// feeding a secret header, field or parameter); secretLits the literal
	// secret values written in the plan, longest first.
	secrets     map[string]bool
	secretSlots []int
	secretLits  []string
}

// secretHeader reports whether a header's value must never be logged.
func (p *program) secretHeader(name string) bool {
	return core.IsSecretName(name) || p.secrets[strings.ToLower(name)]
}

type stepKind uint8

const (
	stepRequest stepKind = iota
	stepThink
	stepTx
	stepLoop
)

type step struct {
	kind  stepKind
	req   *request
	think plan.Think
	label string // transaction label
	count int    // loop count
	steps []step // transaction or loop body
}

type request struct {
	label   string
	method  string
	url     tmpl
	headers []hdrTmpl
	body    tmpl
	hasBody bool
	ctype   string
	extract []extractor
	check   check
	timeout time.Duration
	// redactURL is true when the URL contains a secret variable or a secret
	// literal: the sample then records rawURL, the URL template with secret
	// literals masked, not the rendered value.
	redactURL bool
	rawURL    string
}

type hdrTmpl struct {
	name string
	val  tmpl
}

// tmpl is a compiled template: literal parts and variable slots.
type tmpl struct {
	parts []tpart
	konst string // the value when the template has no variables
	isK   bool
}

type tpart struct {
	lit  string
	slot int  // −1 for literal
	json bool // escape for a JSON string
	form bool // escape for a form body (application/x-www-form-urlencoded)
}

// formEscape is set as the literal of a variable part of a form body, which
// compile turns into the form flag.
const formEscape = "\x00form"

type extractor struct {
	slot     int
	jsonPath []plan.PathElem
	re       *regexp.Regexp
	header   string
	def      *string
	name     string
}

type check struct {
	status      []int
	contains    string
	notContains string
	json        []jsonCheck
	maxDuration time.Duration
}

type jsonCheck struct {
	path []plan.PathElem
	want string
	raw  string
}

// slotTable maps variable names to per-user slots.
type slotTable struct {
	names []string
	index map[string]int
}

func (t *slotTable) slot(name string) int {
	if i, ok := t.index[name]; ok {
		return i
	}
	t.index[name] = len(t.names)
	t.names = append(t.names, name)
	return len(t.names) - 1
}

// Built-in variables.
const (
	varUser      = "__user"
	varIteration = "__iteration"
	varUUID      = "__uuid"
	varTimeMs    = "__timestamp_ms"
)

type feederUse struct {
	f     *feeder
	slots []int // slot per column, −1 when the column is unused
}

type compiler struct {
	p       *plan.Plan
	base    *url.URL
	slots   *slotTable
	feeders map[string]*feeder
	used    map[string]bool // feeder names used in the current section
	labels  []string
	secrets map[string]bool
	secret  plan.SecretSet
	errs    []string
}

func compile(p *plan.Plan, w *plan.Workload, index int, feeders map[string]*feeder) (*program, error) {
	base, err := url.Parse(p.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	c := &compiler{p: p, base: base, slots: &slotTable{index: map[string]int{}}, feeders: feeders,
		secrets: map[string]bool{}, secret: p.SecretSet()}
	for _, s := range p.Secrets {
		c.secrets[strings.ToLower(s)] = true
	}
	for _, b := range []string{varUser, varIteration, varUUID, varTimeMs} {
		c.slots.slot(b)
	}
	for name := range p.Vars {
		c.slots.slot(name)
	}
	prog := &program{name: w.Name, index: index, slots: c.slots}
	c.used = map[string]bool{}
	prog.setup = c.steps(w.Setup)
	prog.setupFds = c.feederUses()
	c.used = map[string]bool{}
	prog.scenario = c.steps(w.Scenario)
	prog.feeders = c.feederUses()
	c.used = map[string]bool{}
	prog.teardown = c.steps(w.Teardown)
	prog.labels = c.labels
	prog.secrets = c.secrets
	for name, slot := range c.slots.index {
		if c.secrets[strings.ToLower(name)] || c.secret.Vars[name] {
			prog.secretSlots = append(prog.secretSlots, slot)
		}
	}
	prog.secretLits = secret.NewValues(c.secret.Literals...).List()
	if len(c.errs) > 0 {
		return nil, fmt.Errorf("workload %s: %s", w.Name, strings.Join(c.errs, "; "))
	}
	return prog, nil
}

func (c *compiler) feederUses() []feederUse {
	var out []feederUse
	for name := range c.used {
		f := c.feeders[name]
		fu := feederUse{f: f, slots: make([]int, len(f.columns))}
		for i, col := range f.columns {
			fu.slots[i] = c.slots.slot(name + "." + col)
		}
		out = append(out, fu)
	}
	return out
}

func (c *compiler) steps(in []plan.Step) []step {
	out := make([]step, 0, len(in))
	for i := range in {
		s := &in[i]
		switch {
		case s.Request != nil:
			out = append(out, step{kind: stepRequest, req: c.request(s.Request)})
		case s.Think != nil:
			out = append(out, step{kind: stepThink, think: *s.Think})
		case s.Transaction != nil:
			c.labels = append(c.labels, s.Transaction.Name)
			out = append(out, step{kind: stepTx, label: s.Transaction.Name, steps: c.steps(s.Transaction.Steps)})
		case s.Loop != nil:
			out = append(out, step{kind: stepLoop, count: s.Loop.Count, steps: c.steps(s.Loop.Steps)})
		}
	}
	return out
}

func (c *compiler) tmpl(t *plan.Template) tmpl {
	if t == nil {
		return tmpl{isK: true}
	}
	if t.IsConst() {
		k := t.Raw
		if len(t.Parts) == 1 {
			k = t.Parts[0].Lit
		}
		return tmpl{isK: true, konst: k}
	}
	allLit := true
	var k strings.Builder
	for _, p := range t.Parts {
		allLit = allLit && p.Var == ""
		k.WriteString(p.Lit)
	}
	if allLit {
		return tmpl{isK: true, konst: k.String()}
	}
	out := tmpl{}
	for _, p := range t.Parts {
		if p.Var == "" {
			out.parts = append(out.parts, tpart{lit: p.Lit, slot: -1})
			continue
		}
		if dot := strings.IndexByte(p.Var, '.'); dot > 0 {
			if _, ok := c.feeders[p.Var[:dot]]; ok {
				c.used[p.Var[:dot]] = true
			}
		}
		out.parts = append(out.parts, tpart{slot: c.slots.slot(p.Var), json: p.JSONEscape, form: p.Lit == formEscape})
	}
	return out
}

func (c *compiler) isSecretTemplate(t *plan.Template) bool {
	for _, p := range t.Parts {
		if p.Var != "" && (c.secrets[strings.ToLower(p.Var)] || c.secret.Vars[p.Var]) {
			return true
		}
	}
	return false
}

func (c *compiler) request(r *plan.Request) *request {
	q := &request{label: r.Name, method: r.Method, timeout: r.Timeout}
	if q.method == "" {
		q.method = "GET"
	}
	c.labels = append(c.labels, q.label)
	u := r.URL
	if len(u.Parts) > 0 && u.Parts[0].Var == "" && strings.HasPrefix(u.Parts[0].Lit, "/") || len(u.Parts) == 0 && strings.HasPrefix(u.Raw, "/") {
		// Relative to the target: prefix the target's scheme, host and path.
		prefix := strings.TrimSuffix(c.base.String(), "/")
		parts := append([]plan.Part{{Lit: prefix}}, u.Parts...)
		u = plan.Template{Raw: prefix + u.Raw, Parts: parts}
	}
	q.url = c.tmpl(&u)
	q.rawURL = c.p.RedactURL(u.Raw)
	q.redactURL = c.isSecretTemplate(&u) || q.rawURL != u.Raw
	for _, h := range c.p.HTTP.Headers {
		h := h
		q.headers = append(q.headers, hdrTmpl{name: h.Name, val: c.tmpl(&h.Value)})
	}
	for _, h := range r.Headers {
		h := h
		q.headers = append(q.headers, hdrTmpl{name: h.Name, val: c.tmpl(&h.Value)})
	}
	switch {
	case r.Body != nil:
		q.body, q.hasBody = c.tmpl(r.Body), true
	case r.JSON != nil:
		q.body, q.hasBody, q.ctype = c.tmpl(r.JSON), true, "application/json"
	case len(r.Form) > 0:
		var parts []plan.Part
		for i, f := range r.Form {
			sep := "&"
			if i == 0 {
				sep = ""
			}
			parts = append(parts, plan.Part{Lit: sep + url.QueryEscape(f.Name) + "="})
			for _, p := range f.Value.Parts {
				if p.Var == "" {
					p.Lit = url.QueryEscape(p.Lit)
				} else {
					p.Lit = formEscape // marks the variable for escaping
				}
				parts = append(parts, p)
			}
		}
		t := plan.Template{Raw: "form", Parts: parts}
		q.body, q.hasBody, q.ctype = c.tmpl(&t), true, "application/x-www-form-urlencoded"
	}
	if q.ctype != "" {
		has := false
		for _, h := range q.headers {
			if strings.EqualFold(h.name, "Content-Type") {
				has = true
			}
		}
		if !has {
			q.headers = append(q.headers, hdrTmpl{name: "Content-Type", val: tmpl{isK: true, konst: q.ctype}})
		}
	}
	for name, e := range r.Extract {
		x := extractor{slot: c.slots.slot(name), def: e.Default, name: name}
		switch {
		case e.JSON != "":
			p, err := plan.ParseJSONPath(e.JSON)
			if err != nil {
				c.errs = append(c.errs, fmt.Sprintf("extract %s: %v", name, err))
			}
			x.jsonPath = p
		case e.Regex != "":
			re, err := regexp.Compile(e.Regex)
			if err != nil {
				c.errs = append(c.errs, fmt.Sprintf("extract %s: %v", name, err))
			}
			x.re = re
		case e.Header != "":
			x.header = e.Header
		}
		q.extract = append(q.extract, x)
	}
	q.check = check{status: r.Check.Status, contains: r.Check.Contains, notContains: r.Check.NotContains,
		maxDuration: r.Check.MaxDuration}
	for _, jc := range r.Check.JSON {
		p, err := plan.ParseJSONPath(jc.Path)
		if err != nil {
			c.errs = append(c.errs, fmt.Sprintf("check json %s: %v", jc.Path, err))
		}
		q.check.json = append(q.check.json, jsonCheck{path: p, want: jc.Value, raw: jc.Path})
	}
	return q
}

// newClientConfig maps the plan's HTTP settings to the client's.
func newClientConfig(h plan.HTTP) httpc.Config {
	cfg := httpc.Config{
		ConnectTimeout:     h.ConnectTimeout,
		Timeout:            h.Timeout,
		InsecureSkipVerify: h.Insecure,
		FollowRedirects:    h.Redirects,
		Compression:        h.Compression,
		DisableKeepAlives:  h.KeepAlive != nil && !*h.KeepAlive,
		MaxBody:            h.MaxBody,
		Cookies:            h.Cookies == nil || *h.Cookies,
		UserAgent:          "plateau",
	}
	return cfg
}
