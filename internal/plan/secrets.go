package plan

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/secret"
)

// IsSecret reports whether a header, form field, JSON member, query
// parameter or variable called name holds a secret in this plan: by
// default (secret.IsName) or because the plan lists it under secrets.
func (p *Plan) IsSecret(name string) bool {
	if secret.IsName(name) {
		return true
	}
	for _, s := range p.Secrets {
		if strings.EqualFold(s, name) {
			return true
		}
	}
	return false
}

// SecretSet is what a plan holds secret, found once before the run.
type SecretSet struct {
	// Vars are the variables (as referenced: "tok", "users.password")
	// whose values are secret: named secret (IsSecret on the whole name or
	// on a feeder column), or feeding a secret header, cookie, form field,
	// JSON member or query parameter anywhere in the plan. Such a value is
	// secret wherever else it appears (a URL, a body, a message).
	Vars map[string]bool
	// Literals are secret values written in the plan itself: values of
	// secret headers (without the "Bearer"/"Basic" word), of secret form
	// fields, JSON members and query parameters, and of secret vars. Split
	// at ${…} references, whose text is a name, not a secret.
	Literals []string
}

// Names returns the secret variable names sorted, for run.json's secrets.
func (s SecretSet) Names() []string {
	out := make([]string, 0, len(s.Vars))
	for n := range s.Vars {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Secrets finds the plan's secret variables and literal values.
func (p *Plan) SecretSet() SecretSet {
	f := secretFinder{p: p, set: SecretSet{Vars: map[string]bool{}}}
	for name := range p.Vars {
		f.varName(name)
	}
	for name, fd := range p.Data {
		for _, col := range fd.Columns {
			f.varName(name + "." + col)
		}
	}
	for _, h := range p.HTTP.Headers {
		f.header(h)
	}
	// Run-level setup and teardown, then every workload.
	walkRequests(&Workload{Setup: p.Setup, Teardown: p.Teardown}, f.request)
	walkGRPC(&Workload{Setup: p.Setup, Teardown: p.Teardown}, f.grpc)
	for _, w := range p.Workloads {
		walkRequests(w, f.request)
		walkGRPC(w, f.grpc)
	}
	// A websocket's handshake headers and what its receives extract.
	ws := func(s *Step) {
		switch {
		case s.WebSocket != nil:
			for _, h := range s.WebSocket.Headers {
				f.header(h)
			}
		case s.Receive != nil:
			for name := range s.Receive.Extract {
				f.varName(name)
			}
		case s.Send != nil && s.Send.Reply != nil:
			for name := range s.Send.Reply.Extract {
				f.varName(name)
			}
		}
	}
	for _, steps := range [][]Step{p.Setup, p.Teardown} {
		walkSteps(steps, ws)
	}
	for _, w := range p.Workloads {
		walkSteps(w.Setup, ws)
		walkSteps(w.Scenario, ws)
		walkSteps(w.Teardown, ws)
	}
	for name := range f.set.Vars {
		if v, ok := p.Vars[name]; ok {
			f.literal(v)
		}
	}
	slices.Sort(f.set.Literals)
	f.set.Literals = slices.Compact(f.set.Literals)
	return f.set
}

type secretFinder struct {
	p   *Plan
	set SecretSet
}

// varName marks a variable secret by its own name; for "feeder.column" the
// column decides.
func (f *secretFinder) varName(name string) {
	col := name
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		col = name[i+1:]
	}
	if f.p.IsSecret(name) || f.p.IsSecret(col) {
		f.set.Vars[name] = true
	}
}

func (f *secretFinder) request(r *Request) {
	for name, e := range r.Extract {
		f.varName(name)
		// A cookie, or a secret header of the response (Set-Cookie,
		// Authorization), holds a credential.
		if e.Cookie != "" || e.Header != "" && f.p.IsSecret(e.Header) {
			f.set.Vars[name] = true
		}
	}
	for _, h := range r.Query {
		if f.p.IsSecret(h.Name) {
			f.template(&h.Value, false)
		}
	}
	for _, h := range r.Headers {
		f.header(h)
	}
	// A cookie's value is a credential whatever its name.
	for _, c := range r.Cookies {
		f.template(&c.Value, false)
	}
	for _, h := range r.Form {
		if f.p.IsSecret(h.Name) {
			f.template(&h.Value, false)
		}
	}
	f.query(&r.URL)
	if r.JSON != nil {
		f.text(r.JSON)
	}
	if r.Body != nil {
		f.text(r.Body)
	}
}

// grpc marks a grpc step's secrets as a request's: extracted variables,
// secret metadata (authorization, …) and secret members of the message.
func (f *secretFinder) grpc(g *GRPC) {
	f.request(&Request{Extract: g.Extract, Headers: g.Metadata, JSON: g.Message})
}

// header marks a secret header's value: its variables, and its literal
// text without the authentication scheme word.
func (f *secretFinder) header(h Header) {
	if !f.p.IsSecret(h.Name) {
		return
	}
	f.template(&h.Value, true)
}

// template marks every variable of a secret value and its literal parts.
func (f *secretFinder) template(t *Template, scheme bool) {
	if len(t.Parts) == 0 {
		f.literal(schemeless(t.Raw, scheme))
		return
	}
	for i, p := range t.Parts {
		if p.Var != "" {
			f.set.Vars[p.Var] = true
			continue
		}
		lit := p.Lit
		if i == 0 {
			lit = schemeless(lit, scheme)
		}
		f.literal(lit)
	}
}

func (f *secretFinder) literal(s string) {
	s = strings.TrimSpace(s)
	if len(s) >= 4 {
		f.set.Literals = append(f.set.Literals, s)
	}
}

// schemeless drops "Bearer " or "Basic " from an Authorization value
// (secret.Schemeless) when scheme is set.
func schemeless(s string, scheme bool) string {
	if !scheme {
		return s
	}
	return secret.Schemeless(s)
}

// placeholder stands for the variable of part i in a template's flat text.
func placeholder(i int) string { return "\x00" + strconv.Itoa(i) + "\x00" }

var placeholderRe = regexp.MustCompile("\x00([0-9]+)\x00")

// flat is a template's text with placeholders for its variables.
func flat(t *Template) string {
	if len(t.Parts) == 0 {
		return t.Raw
	}
	var b strings.Builder
	for i, p := range t.Parts {
		if p.Var != "" {
			b.WriteString(placeholder(i))
		} else {
			b.WriteString(p.Lit)
		}
	}
	return b.String()
}

// value marks a secret value found in a flat text: its variables and its
// literal pieces, decoded by unescape.
func (f *secretFinder) value(t *Template, v string, unescape func(string) string) {
	last := 0
	for _, m := range placeholderRe.FindAllStringSubmatchIndex(v, -1) {
		f.literal(unescape(v[last:m[0]]))
		if i, err := strconv.Atoi(v[m[2]:m[3]]); err == nil && i < len(t.Parts) {
			f.set.Vars[t.Parts[i].Var] = true
		}
		last = m[1]
	}
	f.literal(unescape(v[last:]))
}

// text finds secret members of a JSON or form body.
func (f *secretFinder) text(t *Template) {
	s := flat(t)
	for _, m := range secret.JSONMembers(s) {
		if f.p.IsSecret(secret.JSONUnquote(`"` + m[0] + `"`)) {
			v := m[1]
			if len(v) >= 2 && v[0] == '"' {
				v = v[1 : len(v)-1]
			}
			f.value(t, v, jsonPiece)
		}
	}
	if !strings.HasPrefix(strings.TrimSpace(s), "{") && !strings.HasPrefix(strings.TrimSpace(s), "[") {
		f.pairs(t, s)
	}
}

// query finds secret parameters of a URL's query string.
func (f *secretFinder) query(t *Template) {
	s := flat(t)
	i := strings.IndexByte(s, '?')
	if i < 0 {
		return
	}
	if j := strings.IndexByte(s, '#'); j > i {
		s = s[:j]
	}
	f.pairs(t, s[i:])
}

func (f *secretFinder) pairs(t *Template, s string) {
	for _, m := range secret.FormPairs(s) {
		if f.p.IsSecret(secret.QueryUnescape(m[0])) {
			f.value(t, m[1], secret.QueryUnescape)
		}
	}
}

// jsonPiece decodes a piece of JSON string content.
func jsonPiece(s string) string { return secret.JSONUnquote(`"` + s + `"`) }
