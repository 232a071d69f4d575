package convert

import (
	"encoding/json"
	"net/url"
	"sort"
	"strings"

	"github.com/plateau-perf/plateau/internal/secret"
)

// HideSecrets applies the secret rule (secret.IsName, plus the plan's
// secrets list) to a converted plan before it is written: every literal
// value of a secret header, cookie, query parameter, form field, JSON
// member or variable becomes a variable read from the environment
// (${env.PREFIXNAME}, marked secret), and the value is replaced wherever
// else it appears in the plan — URLs, headers, bodies, forms, checks and
// comments. The report lists each replacement under the environment
// variables, and every text of the report (element paths, notes,
// correlations) is masked with the values found. A converter calls it
// last; values that are already references (${token}) stay. recorded are
// secret values the converter already moved out of the plan itself: they
// are masked in the report too.
func HideSecrets(p *Plan, rep *Report, prefix string, recorded ...string) {
	h := &hider{p: p, rep: rep, prefix: prefix, byValue: map[string]string{}, used: map[string]bool{}}
	for _, kv := range p.Vars {
		h.used[kv.Name] = true
	}
	// Variables named secret whose value is written in the plan.
	for i := range p.Vars {
		kv := &p.Vars[i]
		if h.isName(kv.Name) {
			if lit, ok := literal(kv.Value); ok {
				kv.Value = "${env." + h.env(kv.Name) + "}"
				h.byValue[lit] = kv.Name
				h.report(h.env(kv.Name), "the variable "+kv.Name)
				p.AddSecret(kv.Name)
			}
		}
	}
	h.headers(p.HTTP.Headers)
	for _, steps := range h.allSteps() {
		WalkRequests(steps, h.request)
	}
	if len(h.byValue) > 0 {
		h.replaceAll()
	}
	vals := append([]string(nil), recorded...)
	for v := range h.byValue {
		vals = append(vals, v)
	}
	mask := secret.NewValues(vals...)
	m := func(s string) string { return secret.URL(mask.String(s), h.isName) }
	for i := range rep.Items {
		it := &rep.Items[i]
		it.Path, it.Name, it.Note = m(it.Path), m(it.Name), m(it.Note)
	}
	for i := range rep.Correlations {
		k := &rep.Correlations[i]
		k.From, k.How = m(k.From), m(k.How)
	}
	for i := range rep.Notes {
		rep.Notes[i] = m(rep.Notes[i])
	}
}

type hider struct {
	p       *Plan
	rep     *Report
	prefix  string
	byValue map[string]string // secret literal → the variable that holds it
	used    map[string]bool   // variable names taken
}

func (h *hider) isName(n string) bool {
	if secret.IsName(n) {
		return true
	}
	for _, s := range h.p.Secrets {
		if strings.EqualFold(s, n) {
			return true
		}
	}
	return false
}

func (h *hider) env(name string) string {
	return h.prefix + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_", " ", "_").Replace(VarName(name)))
}

func (h *hider) report(env, what string) {
	for _, e := range h.rep.Env {
		if e.Env == env {
			return
		}
	}
	h.rep.Env = append(h.rep.Env, EnvVar{Env: env, What: what + " (its recorded value was replaced in the plan)"})
}

// literal returns the literal text of a plan template value (its $${
// escapes undone), or false when the value holds a reference.
func literal(v string) (string, bool) {
	if strings.Contains(strings.ReplaceAll(v, "$${", ""), "${") {
		return "", false
	}
	lit := strings.TrimSpace(strings.ReplaceAll(v, "$${", "${"))
	return lit, lit != "" && lit != secret.Mask
}

// hold moves a secret literal found as the value of name (what says where)
// into a variable read from the environment and returns the reference.
func (h *hider) hold(name, lit, what string) string {
	if v, ok := h.byValue[lit]; ok {
		return "${" + v + "}"
	}
	base := VarName(strings.ToLower(name))
	v := base
	for n := 2; h.used[v]; n++ {
		v = base + "_" + itoa(n)
	}
	h.used[v] = true
	env := h.env(v)
	h.p.SetVar(v, "${env."+env+"}")
	h.p.AddSecret(v)
	h.byValue[lit] = v
	h.report(env, what)
	return "${" + v + "}"
}

func (h *hider) headers(hs []KV) {
	for i := range hs {
		kv := &hs[i]
		if !h.isName(kv.Name) {
			continue
		}
		if strings.EqualFold(kv.Name, "Cookie") {
			kv.Value = h.cookies(kv.Value)
			continue
		}
		lit, ok := literal(kv.Value)
		if !ok {
			continue
		}
		scheme := ""
		if s := secret.Schemeless(lit); s != lit {
			scheme, lit = lit[:len(lit)-len(s)], s
		}
		kv.Value = scheme + h.hold(kv.Name, lit, "the recorded "+kv.Name+" header"+map[bool]string{true: " (after \"" + strings.TrimSpace(scheme) + "\")", false: ""}[scheme != ""])
	}
}

// cookies holds each literal cookie value of a Cookie header.
func (h *hider) cookies(v string) string {
	parts := strings.Split(v, ";")
	for i, part := range parts {
		name, val, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		if lit, ok := literal(val); ok {
			parts[i] = name + "=" + h.hold("cookie_"+strings.TrimSpace(name), lit, "the recorded cookie "+strings.TrimSpace(name))
		}
	}
	return strings.Join(parts, ";")
}

func (h *hider) request(r *Request) {
	h.headers(r.Headers)
	// Query parameters.
	if i := strings.IndexByte(r.URL, '?'); i >= 0 {
		r.URL = r.URL[:i] + secret.ReplacePairs(r.URL[i:], func(name, raw string) (string, bool) {
			if !h.isName(name) {
				return "", false
			}
			lit, ok := literal(secret.QueryUnescape(raw))
			if !ok {
				return "", false
			}
			return h.hold(name, lit, "the query parameter "+name), true
		})
	}
	for i := range r.Form {
		kv := &r.Form[i]
		if h.isName(kv.Name) {
			if lit, ok := literal(kv.Value); ok {
				kv.Value = h.hold(kv.Name, lit, "the form field "+kv.Name)
			}
		}
	}
	if r.Body == nil {
		return
	}
	body := *r.Body
	if t := strings.TrimSpace(body); strings.HasPrefix(t, "{") || strings.HasPrefix(t, "[") {
		body = secret.ReplaceJSONMembers(body, func(name, val string) (string, bool) {
			if !h.isName(name) {
				return "", false
			}
			lit, ok := literal(val)
			if !ok {
				return "", false
			}
			return h.hold(name, lit, "the JSON member "+name), true
		})
	} else {
		body = secret.ReplacePairs(body, func(name, raw string) (string, bool) {
			if !h.isName(name) {
				return "", false
			}
			lit, ok := literal(secret.QueryUnescape(raw))
			if !ok {
				return "", false
			}
			return h.hold(name, lit, "the form field "+name), true
		})
	}
	r.Body = &body
}

func (h *hider) allSteps() [][]Step {
	out := [][]Step{h.p.Setup, h.p.Teardown}
	for _, w := range h.p.Workloads {
		out = append(out, w.Setup, w.Scenario, w.Teardown)
	}
	return out
}

// replaceAll replaces every secret literal, in the forms it may be written
// in (as is, URL-encoded, JSON-escaped), by its reference in templates and
// by the mask in comments.
func (h *hider) replaceAll() {
	type form struct{ text, v string }
	var forms []form
	for lit, v := range h.byValue {
		if len(lit) < secret.MinLen {
			continue // held where it was found; too short to replace elsewhere
		}
		seen := map[string]bool{}
		add := func(s string) {
			s = EscapeLiteral(s)
			if !seen[s] {
				seen[s] = true
				forms = append(forms, form{s, v})
			}
		}
		add(lit)
		add(url.QueryEscape(lit))
		add(url.PathEscape(lit))
		if j, err := json.Marshal(lit); err == nil {
			add(string(j[1 : len(j)-1]))
		}
	}
	sort.Slice(forms, func(a, b int) bool { return len(forms[a].text) > len(forms[b].text) })
	tmpl := func(s string) string {
		for _, f := range forms {
			if strings.Contains(s, f.text) {
				s = strings.ReplaceAll(s, f.text, "${"+f.v+"}")
			}
		}
		return s
	}
	comment := func(lines []string) {
		for i, l := range lines {
			for _, f := range forms {
				l = strings.ReplaceAll(l, f.text, secret.Mask)
				l = strings.ReplaceAll(l, strings.ReplaceAll(f.text, "$${", "${"), secret.Mask)
			}
			lines[i] = l
		}
	}
	kvs := func(list []KV) {
		for i := range list {
			list[i].Value = tmpl(list[i].Value)
		}
	}
	h.p.Target = tmpl(h.p.Target)
	kvs(h.p.HTTP.Headers)
	for i := range h.p.Vars {
		if !strings.HasPrefix(h.p.Vars[i].Value, "${env.") {
			h.p.Vars[i].Value = tmpl(h.p.Vars[i].Value)
		}
	}
	comment(h.p.Header)
	for _, w := range h.p.Workloads {
		comment(w.Comment)
	}
	for _, steps := range h.allSteps() {
		WalkSteps(steps, func(s *Step) {
			comment(s.Comment)
			r := s.Request
			if r == nil {
				return
			}
			comment(r.Comment)
			r.URL = tmpl(r.URL)
			kvs(r.Headers)
			kvs(r.Form)
			if r.Body != nil {
				b := tmpl(*r.Body)
				r.Body = &b
			}
			c := &r.Check
			c.Body, c.NotBody, c.Regex, c.NotRegex = tmpl(c.Body), tmpl(c.NotBody), tmpl(c.Regex), tmpl(c.NotRegex)
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
