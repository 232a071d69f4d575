package engine

import (
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/plateau-perf/plateau/internal/engine/httpc"
	"github.com/plateau-perf/plateau/internal/engine/proto/h2"
	"github.com/plateau-perf/plateau/internal/plan"
	"github.com/plateau-perf/plateau/internal/plan/expr"
	"github.com/plateau-perf/plateau/internal/plan/selector"
	"github.com/plateau-perf/plateau/internal/postmanurl"
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
	// clearCookies empties the jar at each iteration (cookies: per_iteration).
	clearCookies bool
	// checks are the outcome counters of the program's checks.
	checks     []*checkStat
	secretLits []string
}

// secretHeader reports whether a header's value must never be logged.
func (p *program) secretHeader(name string) bool {
	return secret.IsName(name) || p.secrets[strings.ToLower(name)]
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
	checks  []check
	timeout time.Duration
	onFail  string // "" : the default by failure kind
	// redirects is httpc.Request.Redirects: 0 inherits http.redirects,
	// −1 follows none, n > 0 follows up to n.
	redirects int
	cookies   []hdrTmpl // put into the jar before sending
	// redactURL is true when the URL contains a secret variable or a secret
	// literal: the sample then records rawURL, the URL template with secret
	// literals masked, not the rendered value.
	redactURL bool
	rawURL    string
	// proto is the HTTP version: protoH1 (httpc), protoH2 or protoAuto
	// (HTTP/2 when a TLS server offers it; http:// URLs stay HTTP/1.1).
	proto uint8
	// bodyFile and multipart are streamed bodies (see package upload).
	bodyFile  string
	multipart *multipartTmpl
	// tr is the request's TLS setting (tlsSettings): 0 for http.tls, else
	// its own tls: merged over it, sent on another transport.
	tr int
	// postman (encode: postman): the rendered URL is encoded as Postman's
	// runtime does and sent verbatim (a constant URL once, here).
	postman bool
}

type multipartTmpl struct {
	fields []hdrTmpl
	files  []fileTmpl
	order  []int // upload.Multipart.Order; nil: fields, then files
}

type fileTmpl struct {
	field, path, ctype string
	name               tmpl
}

// HTTP versions of a request.
const (
	protoH1 uint8 = iota
	protoH2
	protoAuto
)

func protoOf(v string) uint8 {
	switch v {
	case plan.HTTP2:
		return protoH2
	case plan.HTTPAuto:
		return protoAuto
	}
	return protoH1
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
	slot int        // −1 for literal (or expression)
	x    *expr.Expr // an expression such as uuid() or urlencode(name)
	json bool       // escape for a JSON string
	form bool       // escape for a form body (application/x-www-form-urlencoded)
	path bool       // escape for a URL path segment or query value
	typ  string     // json: value sent as int, number, bool or raw json
}

// formEscape and pathEscape are set as the literal of a variable part of a
// form body or a URL, which compile turns into the form and path flags.
const (
	formEscape = "\x00form"
	pathEscape = "\x00path"
)

type extractor struct {
	slot     int
	jsonPath *expr.Path
	re       *regexp.Regexp
	header   string
	cookie   string
	left     string
	right    string
	css      *selector.CSS
	xpath    *selector.XPath
	all      bool
	pick     string
	def      *string
	name     string
	asJSON   bool // json matches kept as JSON text
}

// check is one compiled check; a request passes when all of its checks do.
type check struct {
	name        string
	stat        *checkStat // outcomes, shared by the workload's users
	status      []int
	contains    string
	notContains string
	re, notRe   *regexp.Regexp
	headerEq    []plan.JSONCheck
	headerRe    []headerRe
	headerSet   []string
	minSize     int
	maxSize     int
	json        []jsonCheck
	maxDuration time.Duration
}

// checkStat counts a named check's outcomes over the run and per phase.
// An outcome belongs to the phase its sample is tagged with when the check
// is judged (core.PhaseOf: the phase of the workload running when the
// request completed; none after the last step ended), so each phase's
// check counts and its samples are the same requests.
type checkStat struct {
	name           string
	passed, failed atomic.Int64
	// byPhase[i] counts phase i's outcomes; grown (copied) under mu, read
	// without a lock.
	byPhase atomic.Pointer[[]*phaseChecks]
	mu      sync.Mutex
}

type phaseChecks struct{ passed, failed atomic.Int64 }

// count records one outcome in the run's total and in phase's (none when
// phase < 0).
func (c *checkStat) count(phase int32, ok bool) {
	if ok {
		c.passed.Add(1)
	} else {
		c.failed.Add(1)
	}
	if phase < 0 {
		return
	}
	pc := c.phase(int(phase), true)
	if ok {
		pc.passed.Add(1)
	} else {
		pc.failed.Add(1)
	}
}

// phase is phase i's counters; nil when none were counted and !grow.
func (c *checkStat) phase(i int, grow bool) *phaseChecks {
	if p := c.byPhase.Load(); p != nil && i < len(*p) && (*p)[i] != nil {
		return (*p)[i]
	}
	if !grow {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	var cur []*phaseChecks
	if p := c.byPhase.Load(); p != nil {
		cur = *p
	}
	if i < len(cur) && cur[i] != nil {
		return cur[i]
	}
	next := make([]*phaseChecks, max(len(cur), i+1))
	copy(next, cur)
	next[i] = &phaseChecks{}
	c.byPhase.Store(&next)
	return next[i]
}

type headerRe struct {
	name string
	re   *regexp.Regexp
}

// jsonCheck is one JSON path condition: op is equals, not, match, exists
// or absent.
type jsonCheck struct {
	path *expr.Path
	op   string
	want string
	re   *regexp.Regexp
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
	// counters are the run's counter() values; onFail the on_fail of the
	// enclosing transaction or workload.
	counters   *expr.Counters
	onFail     string
	checkStats []*checkStat
	// tls collects the distinct TLS settings of requests and websockets.
	tls *tlsSettings
}

func compile(p *plan.Plan, w *plan.Workload, index int, feeders map[string]*feeder, counters *expr.Counters, tls *tlsSettings) (*program, error) {
	base, err := url.Parse(p.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if counters == nil {
		counters = &expr.Counters{}
	}
	if tls == nil {
		tls = &tlsSettings{list: []plan.TLS{p.HTTP.TLS}}
	}
	c := &compiler{p: p, base: base, slots: &slotTable{index: map[string]int{}}, feeders: feeders,
		secrets: map[string]bool{}, secret: p.SecretSet(), counters: counters, onFail: w.OnFail, tls: tls}
	for _, s := range p.Secrets {
		c.secrets[strings.ToLower(s)] = true
	}
	for _, b := range []string{varUser, varIteration, varUUID, varTimeMs} {
		c.slots.slot(b)
	}
	for name := range p.Vars {
		c.slots.slot(name)
	}
	prog := &program{name: w.Name, index: index, slots: c.slots, clearCookies: p.HTTP.CookiesPerIteration}
	c.used = map[string]bool{}
	prog.setup = c.steps(w.Setup)
	prog.setupFds = c.feederUses()
	c.used = map[string]bool{}
	prog.scenario = c.steps(w.Scenario)
	prog.feeders = c.feederUses()
	c.used = map[string]bool{}
	prog.teardown = c.steps(w.Teardown)
	prog.labels = c.labels
	prog.checks = c.checkStats
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
			out = append(out, c.request(s.Request))
		case s.Think != nil:
			out = append(out, &thinkStep{think: *s.Think})
		case s.Transaction != nil:
			c.labels = append(c.labels, s.Transaction.Name)
			prev := c.onFail
			if s.Transaction.OnFail != "" {
				c.onFail = s.Transaction.OnFail
			}
			out = append(out, &txStep{label: s.Transaction.Name, steps: c.steps(s.Transaction.Steps)})
			c.onFail = prev
		case s.Loop != nil:
			l := &loopStep{count: s.Loop.Count, steps: c.steps(s.Loop.Steps)}
			if s.Loop.While.Src != "" {
				l.while, l.count = c.cond(&s.Loop.While), s.Loop.Max
			}
			out = append(out, l)
		case s.If != nil:
			out = append(out, &ifStep{cond: c.cond(&s.If.Cond), then: c.steps(s.If.Steps), els: c.steps(s.If.Else),
				traceLabel: "if " + s.If.Cond.Src})
		case s.Choose != nil:
			ch := &chooseStep{}
			total := 0.0
			for j, b := range s.Choose {
				total += b.Weight
				ch.cum = append(ch.cum, total)
				ch.branches = append(ch.branches, c.steps(b.Steps))
				name := b.Name
				if name == "" {
					name = fmt.Sprintf("choose branch %d (%d:%d)", j+1, b.Pos.Line, b.Pos.Col)
				}
				ch.names = append(ch.names, name)
			}
			out = append(out, ch)
		case s.Foreach != nil:
			f := &foreachStep{items: s.Foreach.Items, as: c.slots.slot(s.Foreach.As), max: s.Foreach.Max}
			if s.Foreach.Var != nil {
				f.items = nil
				f.from = c.slots.slot(s.Foreach.Var.Parts[0].Var)
			} else if f.items == nil {
				f.items = []string{}
			}
			f.steps = c.steps(s.Foreach.Steps)
			out = append(out, f)
		case s.Until != nil:
			u := s.Until
			c.labels = append(c.labels, u.Name)
			out = append(out, &untilStep{label: u.Name, cond: c.cond(&u.Cond), interval: u.Interval,
				timeout: u.Timeout, steps: c.steps(u.Steps), onFail: u.OnFail})
		case s.Rendezvous != nil:
			out = append(out, &rendezvousStep{users: s.Rendezvous.Users, timeout: s.Rendezvous.Timeout})
		case s.WebSocket != nil:
			out = append(out, c.websocket(s.WebSocket))
		case s.Send != nil:
			out = append(out, c.wsSend(s.Send))
		case s.Receive != nil:
			out = append(out, c.wsReceive(s.Receive, s.Receive.Name))
		case s.GRPC != nil:
			out = append(out, c.grpc(s.GRPC))
		case s.Trend != nil:
			c.labels = append(c.labels, s.Trend.Name)
			out = append(out, &trendStep{label: s.Trend.Name, value: c.tmpl(s.Trend.Value)})
		}
	}
	return out
}

// cond compiles a condition; the plan loader already checked it.
func (c *compiler) cond(pc *plan.Cond) *expr.Expr {
	x, err := expr.Compile(pc.Src, expr.Options{Slot: c.slotOf, Counters: c.counters})
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%d:%d: %v", pc.Pos.Line, pc.Pos.Col, err))
		return &expr.Expr{}
	}
	return x
}

// slotOf is the slot of a variable, noting the feeders it reads.
func (c *compiler) slotOf(name string) int {
	if dot := strings.IndexByte(name, '.'); dot > 0 {
		if _, ok := c.feeders[name[:dot]]; ok {
			c.used[name[:dot]] = true
		}
	}
	return c.slots.slot(name)
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
		allLit = allLit && p.IsLit()
		k.WriteString(p.Lit)
	}
	if allLit {
		return tmpl{isK: true, konst: k.String()}
	}
	out := tmpl{}
	for _, p := range t.Parts {
		switch {
		case p.Expr != "":
			x, err := expr.Compile(p.Expr, expr.Options{Slot: c.slotOf, Counters: c.counters})
			if err != nil {
				c.errs = append(c.errs, fmt.Sprintf("${%s}: %v", p.Expr, err))
				x = &expr.Expr{}
			}
			out.parts = append(out.parts, tpart{slot: -1, x: x, json: p.JSONEscape, form: p.Lit == formEscape,
				path: p.Lit == pathEscape, typ: p.Type})
		case p.Var == "":
			out.parts = append(out.parts, tpart{lit: p.Lit, slot: -1})
		default:
			out.parts = append(out.parts, tpart{slot: c.slotOf(p.Var), json: p.JSONEscape, form: p.Lit == formEscape,
				path: p.Lit == pathEscape, typ: p.Type})
		}
	}
	return out
}

func (c *compiler) isSecretTemplate(t *plan.Template) bool {
	for _, p := range t.Parts {
		if p.Var != "" && (c.secrets[strings.ToLower(p.Var)] || c.secret.Vars[p.Var]) {
			return true
		}
		if p.Expr != "" {
			if x, err := expr.Parse(p.Expr); err == nil {
				for _, v := range x.Vars() {
					if c.secrets[strings.ToLower(v)] || c.secret.Vars[v] {
						return true
					}
				}
			}
		}
	}
	return false
}

func (c *compiler) request(r *plan.Request) *request {
	q := &request{label: r.Name, method: r.Method, timeout: r.Timeout, onFail: r.OnFail}
	if q.onFail == "" {
		q.onFail = c.onFail
	}
	q.tr = c.tls.index(r.TLS)
	q.proto = protoOf(c.p.HTTP.Version)
	if r.HTTPVersion != "" {
		q.proto = protoOf(r.HTTPVersion)
	}
	if r.Redirects != nil {
		q.redirects = *r.Redirects
		if q.redirects == 0 {
			q.redirects = -1
		}
	}
	if q.method == "" {
		q.method = "GET"
	}
	c.labels = append(c.labels, q.label)
	u := r.URL
	if len(u.Parts) > 0 && u.Parts[0].IsLit() && strings.HasPrefix(u.Parts[0].Lit, "/") || len(u.Parts) == 0 && strings.HasPrefix(u.Raw, "/") {
		// Relative to the target: prefix the target's scheme, host and path.
		prefix := strings.TrimSuffix(c.base.String(), "/")
		parts := append([]plan.Part{{Lit: prefix}}, u.Parts...)
		u = plan.Template{Raw: prefix + u.Raw, Parts: parts}
	}
	if r.Postman {
		u = postmanTemplate(u, r.Query)
	} else {
		u = urlTemplate(u, r.Query, r.Encode == nil || *r.Encode)
	}
	q.url = c.tmpl(&u)
	if r.Postman {
		q.postman = true
		if q.url.isK {
			q.url.konst = string(postmanurl.AppendURL(nil, []byte(q.url.konst)))
		}
		if q.proto != protoH1 {
			c.errs = append(c.errs, fmt.Sprintf("request %q: encode: postman is sent over HTTP/1.1 only, as Postman's runtime sends it (http_version: 1.1)", q.label))
		}
	}
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
	for _, ck := range r.Cookies {
		q.cookies = append(q.cookies, hdrTmpl{name: ck.Name, val: c.tmpl(&ck.Value)})
	}
	switch {
	case r.Body != nil:
		q.body, q.hasBody = c.tmpl(r.Body), true
	case r.JSON != nil:
		q.body, q.hasBody, q.ctype = c.tmpl(r.JSON), true, "application/json"
	case len(r.Form) > 0:
		t := plan.Template{Raw: "form", Parts: formParts(nil, r.Form, formEscape)}
		q.body, q.hasBody, q.ctype = c.tmpl(&t), true, "application/x-www-form-urlencoded"
	case r.BodyFile != "":
		q.bodyFile = r.BodyFile
	case r.Multipart != nil:
		m := &multipartTmpl{}
		for _, f := range r.Multipart.Fields {
			m.fields = append(m.fields, hdrTmpl{name: f.Name, val: c.tmpl(&f.Value)})
		}
		for _, f := range r.Multipart.Files {
			ft := fileTmpl{field: f.Field, path: f.Path, ctype: f.ContentType}
			if f.FileName.Raw == "" && len(f.FileName.Parts) == 0 {
				ft.name = tmpl{isK: true, konst: filepath.Base(f.Path)}
			} else {
				ft.name = c.tmpl(&f.FileName)
			}
			m.files = append(m.files, ft)
		}
		// Checked when the plan loaded.
		m.order, _ = r.Multipart.Sequence()
		q.multipart = m
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
	q.extract = c.extractors(r.Extract)
	for i, pc := range r.Checks {
		k := c.check(&pc)
		name := pc.Name
		if name == "" {
			name = q.label
			if len(r.Checks) > 1 {
				name += " #" + strconv.Itoa(i+1)
			}
		}
		k.stat = &checkStat{name: name}
		c.checkStats = append(c.checkStats, k.stat)
		q.checks = append(q.checks, k)
	}
	return q
}

func (c *compiler) extractors(m map[string]*plan.Extract) []extractor {
	var out []extractor
	for _, name := range sortedNames(m) {
		e := m[name]
		x := extractor{slot: c.slots.slot(name), def: e.Default, name: name, all: e.All, pick: e.Pick,
			header: e.Header, cookie: e.Cookie, left: e.Left, right: e.Right, asJSON: e.AsJSON}
		var err error
		switch {
		case e.JSON != "":
			x.jsonPath, err = expr.ParsePath(e.JSON)
		case e.Regex != "":
			x.re, err = regexp.Compile(e.Regex)
		case e.CSS != "":
			x.css, err = selector.CompileCSS(e.CSS, e.Attr)
		case e.XPath != "":
			x.xpath, err = selector.CompileXPath(e.XPath)
		}
		if err != nil {
			c.errs = append(c.errs, fmt.Sprintf("extract %s: %v", name, err))
		}
		out = append(out, x)
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// check compiles one check; the plan loader validated its regexes and
// paths.
func (c *compiler) check(pc *plan.Check) check {
	k := check{name: pc.Name, status: pc.Status, contains: pc.Contains, notContains: pc.NotContains,
		headerEq: pc.Header, headerSet: pc.HeaderSet, minSize: pc.MinSize, maxSize: pc.MaxSize,
		maxDuration: pc.MaxDuration}
	re := func(s string) *regexp.Regexp {
		r, err := regexp.Compile(s)
		if err != nil {
			c.errs = append(c.errs, fmt.Sprintf("check: %v", err))
		}
		return r
	}
	if pc.Regex != "" {
		k.re = re(pc.Regex)
	}
	if pc.NotRegex != "" {
		k.notRe = re(pc.NotRegex)
	}
	for _, h := range pc.HeaderMatch {
		k.headerRe = append(k.headerRe, headerRe{name: h.Path, re: re(h.Value)})
	}
	path := func(raw string) *expr.Path {
		p, err := expr.ParsePath(raw)
		if err != nil {
			c.errs = append(c.errs, fmt.Sprintf("check: %v", err))
		}
		return p
	}
	for _, j := range pc.JSON {
		k.json = append(k.json, jsonCheck{path: path(j.Path), op: "equals", want: j.Value, raw: j.Path})
	}
	for _, j := range pc.JSONNot {
		k.json = append(k.json, jsonCheck{path: path(j.Path), op: "not", want: j.Value, raw: j.Path})
	}
	for _, j := range pc.JSONMatch {
		k.json = append(k.json, jsonCheck{path: path(j.Path), op: "match", re: re(j.Value), raw: j.Path})
	}
	for _, p := range pc.JSONExists {
		k.json = append(k.json, jsonCheck{path: path(p), op: "exists", raw: p})
	}
	for _, p := range pc.JSONAbsent {
		k.json = append(k.json, jsonCheck{path: path(p), op: "absent", raw: p})
	}
	return k
}

// formParts appends k=v&k=v parts for a form body or a query string:
// literal text is escaped now, variables and expressions are marked (mark)
// for escaping when rendered.
func formParts(parts []plan.Part, kvs []plan.Header, mark string) []plan.Part {
	add := func(t *plan.Template) {
		for _, p := range t.Parts {
			if p.IsLit() {
				p.Lit = url.QueryEscape(p.Lit)
			} else {
				p.Lit = mark
			}
			parts = append(parts, p)
		}
	}
	for i, f := range kvs {
		if i > 0 {
			parts = append(parts, plan.Part{Lit: "&"})
		}
		if f.Key != nil {
			add(f.Key)
		} else {
			parts = append(parts, plan.Part{Lit: url.QueryEscape(f.Name)})
		}
		parts = append(parts, plan.Part{Lit: "="})
		add(&f.Value)
	}
	return parts
}

// urlTemplate marks the variables of a URL for percent-encoding (a value
// with a space or & must not break the request line or the query): in the
// path, a value keeps its / (it may be several segments); after the ?, it
// is encoded as a query value. A variable that starts the URL is the base
// URL itself and is left alone. The query: map is appended, encoded.
func urlTemplate(u plan.Template, query []plan.Header, encode bool) plan.Template {
	out := plan.Template{Raw: u.Raw}
	inQuery := false
	for i, p := range u.Parts {
		switch {
		case p.IsLit():
			inQuery = inQuery || strings.Contains(p.Lit, "?")
		case i > 0 && encode && inQuery:
			p.Lit = formEscape
		case i > 0 && encode:
			p.Lit = pathEscape
		}
		out.Parts = append(out.Parts, p)
	}
	if len(query) > 0 {
		sep := "?"
		if inQuery {
			sep = "&"
		}
		out.Parts = append(out.Parts, plan.Part{Lit: sep})
		out.Parts = formParts(out.Parts, query, formEscape)
		out.Raw += " + query"
	}
	return out
}

// postmanTemplate is a URL for encode: postman: values inserted as they
// are (the whole URL is encoded when it is sent), the query: map appended
// as key=value text, as a Postman URL's query is written.
func postmanTemplate(u plan.Template, query []plan.Header) plan.Template {
	if len(query) == 0 {
		return u
	}
	out := plan.Template{Raw: u.Raw + " + query", Parts: append([]plan.Part(nil), u.Parts...)}
	if len(out.Parts) == 0 {
		out.Parts = append(out.Parts, plan.Part{Lit: u.Raw})
	}
	sep := "?"
	for _, p := range out.Parts {
		if p.IsLit() && strings.Contains(p.Lit, "?") {
			sep = "&"
		}
	}
	for i, f := range query {
		if i > 0 {
			sep = "&"
		}
		out.Parts = append(out.Parts, plan.Part{Lit: sep})
		if f.Key != nil {
			out.Parts = append(out.Parts, f.Key.Parts...)
		} else {
			out.Parts = append(out.Parts, plan.Part{Lit: f.Name})
		}
		out.Parts = append(out.Parts, plan.Part{Lit: "="})
		out.Parts = append(out.Parts, f.Value.Parts...)
	}
	return out
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
	if h.Proxy != "" {
		cfg.Proxy, _ = url.Parse(h.Proxy) // checked when the plan loaded
	}
	return cfg
}

// newH2Config maps the plan's HTTP settings to the HTTP/2 client's.
func newH2Config(h plan.HTTP, c httpc.Config) h2.Config {
	return h2.Config{Auto: h.Version == plan.HTTPAuto, MaxConcurrentStreams: h.MaxConcurrentStreams,
		ConnectTimeout: c.ConnectTimeout, Timeout: c.Timeout, InsecureSkipVerify: c.InsecureSkipVerify,
		TLSConfig: c.TLSConfig, Proxy: c.Proxy, FollowRedirects: c.FollowRedirects, MaxBody: c.MaxBody, UserAgent: c.UserAgent}
}
