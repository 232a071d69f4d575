package har

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/convert"
)

// correlator turns recorded entries into requests, correlating values and
// hiding secrets as it goes.
type correlator struct {
	plan   *convert.Plan
	report *convert.Report

	prev []recorded // entries converted so far, in order
	// known maps a correlated value to its variable.
	known map[string]string
	// inputs are values earlier requests sent before any response held
	// them: typed by the user, not correlated.
	inputs map[string]bool
	// secrets maps a secret value to its variable.
	secrets  map[string]string
	corr     map[string]*convert.Correlation
	corrList []*convert.Correlation
	names    map[string]bool
	setCook  map[string]bool // cookie names set by recorded responses
	all      []*convert.Request
	// held is the size of the response bodies kept for correlation, at
	// most corrBudget: older bodies are forgotten (counted), so a long
	// recording converts in bounded memory.
	held      int
	budget    int
	forgotten int
	// notModified counts recorded 304 answers (checked as 200 or 304).
	notModified int
	// browserDropped counts the browser's own request headers left out
	// (fetch metadata, client hints, cache and conditional headers), by
	// name as recorded.
	browserDropped map[string]int
	// fromCache counts values found only in bodies a browser took from
	// its cache (a 304's), not correlated.
	fromCache int
	oldest    int // index in prev of the oldest body still held
}

// corrBudget bounds the response bodies kept for correlation by default.
const corrBudget = 64 << 20

type recorded struct {
	n    int // entry number, from 1
	req  *convert.Request
	resp *Response
	body string
	// isJSON: the body is a JSON document. It is decoded only when it may
	// hold a value searched for (the text holds it, or has escapes), so a
	// recording's decoded trees are never all held at once.
	isJSON bool
}

// minCorrelate is the shortest value correlated: shorter values (ids like
// "42", words) match by chance.
const minCorrelate = 6

func (c *correlator) init() {
	if c.known == nil {
		c.known = map[string]string{}
		c.inputs = map[string]bool{}
		c.corr = map[string]*convert.Correlation{}
		c.names = map[string]bool{}
		c.setCook = map[string]bool{}
		c.browserDropped = map[string]int{}
	}
}

// request converts entry i.
func (c *correlator) request(i int, e *Entry, target string) (*convert.Request, string) {
	c.init()
	n := i + 1
	var notes []string
	u, _ := url.Parse(e.Request.URL)
	r := &convert.Request{Method: strings.ToUpper(e.Request.Method)}
	if r.Method == "" {
		r.Method = "GET"
	}
	origin := u.Scheme + "://" + u.Host
	ru := u.EscapedPath()
	if ru == "" {
		ru = "/"
	}
	if u.RawQuery != "" {
		ru += "?" + u.RawQuery
	}
	if origin != target {
		ru = origin + ru
	}
	r.URL = convert.EscapeLiteral(ru)
	r.Name = r.Method + " " + u.Path
	if u.Path == "" {
		r.Name = r.Method + " /"
	}
	for _, h := range e.Request.Headers {
		ln := strings.ToLower(h.Name)
		if strings.HasPrefix(h.Name, ":") || dropHeaders[ln] {
			if browserHeaders[ln] || strings.HasPrefix(ln, "sec-") {
				c.browserDropped[h.Name]++
			}
			continue
		}
		if strings.HasPrefix(ln, "sec-ch-") || strings.HasPrefix(ln, "sec-fetch-") {
			// Client hints and fetch metadata describe the browser.
			c.browserDropped[h.Name]++
			continue
		}
		if ln == "cookie" {
			if c.cookiesKnown(h.Value) {
				continue // the cookie jar sends them, as the browser did
			}
		}
		r.Headers = append(r.Headers, convert.KV{Name: h.Name, Value: convert.EscapeLiteral(h.Value)})
	}
	if pd := e.Request.PostData; pd != nil {
		body := pd.Text
		if body == "" && len(pd.Params) > 0 {
			var parts []string
			for _, p := range pd.Params {
				parts = append(parts, url.QueryEscape(p.Name)+"="+url.QueryEscape(p.Value))
			}
			body = strings.Join(parts, "&")
		}
		if body != "" {
			b := convert.EscapeLiteral(body)
			r.Body = &b
			if !hasHeader(r.Headers, "Content-Type") && pd.MimeType != "" {
				r.Headers = append(r.Headers, convert.KV{Name: "Content-Type", Value: pd.MimeType})
			}
		}
	}
	if s := e.Response.Status; s == http.StatusNotModified {
		// The conditional headers that made the 304 are not sent (the
		// plan has no browser cache): the server answers 200.
		r.Check.Status = []int{200, 304}
		c.notModified++
	} else if s >= 100 && s < 600 {
		r.Check.Status = []int{s}
	}

	// Correlate: values seen before first, then new ones.
	c.applyKnown(r)
	for _, v := range candidates(r) {
		if _, ok := c.known[v]; ok || c.inputs[v] {
			continue
		}
		if c.correlate(v, n) {
			continue
		}
		c.inputs[v] = true
	}
	c.applyKnown(r)
	for _, k := range c.corrList {
		if usesVar(r, k.Var) {
			k.UsedBy = appendOnce(k.UsedBy, fmt.Sprintf("entry %d", n))
		}
	}
	// Secrets left as literals go to the environment.
	for j := range r.Headers {
		h := &r.Headers[j]
		if !isSecretHeader(h.Name) || strings.Contains(h.Value, "${") && !strings.Contains(h.Value, "$${") {
			continue
		}
		h.Value = c.secret(h.Name, h.Value)
	}
	// Only the status and headers of the response are kept beside its
	// body: the entry itself is not held once converted.
	rec := recorded{n: n, req: r, resp: &Response{Status: e.Response.Status, Headers: e.Response.Headers}, body: responseBody(&e.Response)}
	if strings.Contains(strings.ToLower(e.Response.Content.MimeType), "json") || looksJSON(rec.body) {
		rec.isJSON = json.Valid([]byte(rec.body))
	}
	for _, h := range e.Response.Headers {
		if strings.EqualFold(h.Name, "Set-Cookie") {
			name, _, _ := strings.Cut(h.Value, "=")
			c.setCook[strings.TrimSpace(name)] = true
		}
	}
	c.prev = append(c.prev, rec)
	c.held += len(rec.body)
	for c.held > c.budget && c.oldest < len(c.prev)-1 {
		old := &c.prev[c.oldest]
		if old.body != "" {
			c.held -= len(old.body)
			old.body, old.isJSON = "", false
			c.forgotten++
		}
		old.resp = &Response{Status: old.resp.Status}
		c.oldest++
	}

	c.all = append(c.all, r)
	return r, strings.Join(notes, "; ")
}

func hasHeader(list []convert.KV, name string) bool {
	for _, h := range list {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

func looksJSON(s string) bool {
	s = strings.TrimSpace(s)
	return strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[")
}

func responseBody(r *Response) string {
	if r.Content.Encoding == "base64" {
		b, err := base64.StdEncoding.DecodeString(r.Content.Text)
		if err != nil {
			return ""
		}
		return string(b)
	}
	return r.Content.Text
}

// cookiesKnown reports whether every cookie in a Cookie header was set by a
// recorded response (so plateau's cookie jar will send it).
func (c *correlator) cookiesKnown(header string) bool {
	for _, part := range strings.Split(header, ";") {
		name, _, _ := strings.Cut(strings.TrimSpace(part), "=")
		if name != "" && !c.setCook[name] {
			return false
		}
	}
	return true
}

// candidates are the literal values of a request that could have come from
// an earlier response: path segments, query values, header values (a
// bearer token without its scheme), JSON strings and form values of the body.
func candidates(r *convert.Request) []string {
	var out []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) < minCorrelate || strings.Contains(v, "${") || !distinct(v) {
			return
		}
		out = append(out, v)
	}
	raw := strings.ReplaceAll(r.URL, "$${", "${")
	if i := strings.Index(raw, "://"); i >= 0 {
		if j := strings.IndexByte(raw[i+3:], '/'); j >= 0 {
			raw = raw[i+3+j:]
		}
	}
	p, q, _ := strings.Cut(raw, "?")
	for _, seg := range strings.Split(p, "/") {
		if s, err := url.PathUnescape(seg); err == nil {
			add(s)
		}
	}
	if vals, err := url.ParseQuery(q); err == nil {
		for _, vs := range vals {
			for _, v := range vs {
				add(v)
			}
		}
	}
	for _, h := range r.Headers {
		v := strings.ReplaceAll(h.Value, "$${", "${")
		if scheme, tok, ok := strings.Cut(v, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Token")) {
			add(tok)
			continue
		}
		if strings.EqualFold(h.Name, "Cookie") {
			for _, part := range strings.Split(v, ";") {
				_, val, _ := strings.Cut(part, "=")
				add(val)
			}
			continue
		}
		add(v)
	}
	if r.Body != nil {
		b := strings.ReplaceAll(*r.Body, "$${", "${")
		var j any
		if json.Unmarshal([]byte(b), &j) == nil {
			walkStrings(j, add)
		} else if vals, err := url.ParseQuery(b); err == nil && strings.Contains(b, "=") {
			for _, vs := range vals {
				for _, v := range vs {
					add(v)
				}
			}
		}
	}
	// Longest first, so a token is replaced before a part of it.
	sort.SliceStable(out, func(a, b int) bool { return len(out[a]) > len(out[b]) })
	return out
}

// distinct rejects values with little information ("000000", "true…").
func distinct(v string) bool {
	seen := map[rune]bool{}
	for _, r := range v {
		seen[r] = true
	}
	return len(seen) >= 3
}

func walkStrings(v any, fn func(string)) {
	switch t := v.(type) {
	case string:
		fn(t)
	case float64:
		fn(strconv.FormatFloat(t, 'f', -1, 64))
	case []any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	case map[string]any:
		for _, x := range t {
			walkStrings(x, fn)
		}
	}
}

// correlate looks for v in earlier responses, the latest first, and makes
// the request that received it extract it.
func (c *correlator) correlate(v string, n int) bool {
	cached := false
	for k := len(c.prev) - 1; k >= 0; k-- {
		rec := &c.prev[k]
		// A JSON value.
		if !onWire(rec) {
			// A 304's body is the browser's cached copy (the response
			// sent none); an aborted entry's (status 0) never arrived:
			// neither produced the value. Its headers did arrive.
			for _, h := range rec.resp.Headers {
				if h.Value == v && !strings.EqualFold(h.Name, "Set-Cookie") {
					return c.made(v, rec, convert.Extract{Header: h.Name}, h.Name, "header "+h.Name)
				}
			}
			if strings.Contains(rec.body, v) {
				cached = true
			}
			continue
		}
		if rec.isJSON && (strings.Contains(rec.body, v) || strings.Contains(rec.body, `\`)) {
			var j any
			if json.Unmarshal([]byte(rec.body), &j) == nil {
				if path, key, ok := findJSON(j, v, "$", ""); ok {
					return c.made(v, rec, convert.Extract{JSON: path}, key, "json "+path)
				}
			}
		}
		// A whole response header.
		for _, h := range rec.resp.Headers {
			if h.Value == v && !strings.EqualFold(h.Name, "Set-Cookie") {
				return c.made(v, rec, convert.Extract{Header: h.Name}, h.Name, "header "+h.Name)
			}
		}
		// Text in the body: a regex with the text around it — only for a
		// value a server makes (an id, a token), not the page's own words
		// and links (a title, an asset's file name), which a replay sends
		// as recorded.
		if i := strings.Index(rec.body, v); i >= 0 && generated(v) {
			if re := boundaryRegex(rec.body, i, v); re != "" {
				return c.made(v, rec, convert.Extract{Regex: re}, "value", "regex "+re)
			}
		}
	}
	if cached {
		c.fromCache++
	}
	return false
}

// onWire reports whether a recorded response's body came over the wire:
// not a 304 (its body in a HAR is the browser's cached copy) nor an entry
// that got no answer (status 0).
func onWire(rec *recorded) bool {
	return rec.resp.Status != http.StatusNotModified && rec.resp.Status != 0
}

// staticExt are the extensions of files a page links to.
var staticExt = []string{".js", ".mjs", ".css", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".avif", ".ico", ".woff", ".woff2", ".ttf", ".otf", ".eot", ".map", ".html", ".htm", ".json", ".xml", ".txt", ".pdf", ".mp4", ".webm", ".mp3"}

// generated reports whether a value found in a page's text looks made by
// the server for this session — an id or a token holds a digit, or is a
// long run of letters and digits without separators — rather than the
// page's own words and the files it links to.
func generated(v string) bool {
	lv := strings.ToLower(v)
	for _, e := range staticExt {
		if strings.HasSuffix(lv, e) {
			return false
		}
	}
	digits, letters, other := 0, 0, 0
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			letters++
		default:
			other++
		}
	}
	return digits > 0 || (len(v) >= 20 && other == 0)
}

func (c *correlator) made(v string, rec *recorded, ex convert.Extract, hint string, how string) bool {
	name := c.uniqueName(convert.VarName(strings.ToLower(hint)))
	ex.Var = name
	rec.req.Extract = append(rec.req.Extract, ex)
	c.known[v] = name
	k := &convert.Correlation{Var: name, From: fmt.Sprintf("entry %d (%s)", rec.n, rec.req.Name), How: how}
	c.corr[name] = k
	c.corrList = append(c.corrList, k)
	return true
}

func (c *correlator) uniqueName(base string) string {
	if base == "" || base == "_" {
		base = "value"
	}
	name := base
	for n := 2; c.names[name] || name == "env"; n++ {
		name = base + "_" + strconv.Itoa(n)
	}
	c.names[name] = true
	return name
}

// findJSON finds the path of a value equal to v (a string, or a number as
// written).
func findJSON(j any, v, path, key string) (string, string, bool) {
	switch t := j.(type) {
	case string:
		if t == v {
			return path, key, true
		}
	case float64:
		if strconv.FormatFloat(t, 'f', -1, 64) == v {
			return path, key, true
		}
	case []any:
		for i, x := range t {
			if p, k, ok := findJSON(x, v, fmt.Sprintf("%s[%d]", path, i), key); ok {
				return p, k, true
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			seg := "." + k
			if !plainKey(k) {
				seg = "['" + k + "']"
			}
			if p, kk, ok := findJSON(t[k], v, path+seg, k); ok {
				return p, kk, true
			}
		}
	}
	return "", "", false
}

func plainKey(k string) bool {
	if k == "" {
		return false
	}
	for _, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return !strings.ContainsAny(k, "'")
}

// boundaryRegex builds a regex that captures the value at body[i:] from the
// text before it, and checks that its first match is that value.
func boundaryRegex(body string, i int, v string) string {
	start := max(0, i-24)
	left := body[start:i]
	if nl := strings.LastIndexAny(left, "\r\n"); nl >= 0 {
		left = left[nl+1:]
	}
	// Start at a word boundary when there is one: name="csrf" value=", not
	// e="csrf" value=".
	if j := strings.IndexAny(left, " <>\t"); j >= 0 && len(left)-j-1 >= 4 {
		left = left[j+1:]
	}
	if left == "" {
		return ""
	}
	for _, capture := range []string{`([^"'&<>\s]+)`, `([^"'<>]+)`} {
		re := regexp.QuoteMeta(left) + capture
		cre, err := regexp.Compile(re)
		if err != nil {
			continue
		}
		if m := cre.FindStringSubmatch(body); m != nil && m[1] == v {
			return re
		}
	}
	return ""
}

// applyKnown replaces correlated values in a request by their variables.
func (c *correlator) applyKnown(r *convert.Request) {
	if len(c.known) == 0 {
		return
	}
	vals := make([]string, 0, len(c.known))
	for v := range c.known {
		vals = append(vals, v)
	}
	sort.Slice(vals, func(a, b int) bool { return len(vals[a]) > len(vals[b]) })
	rep := func(s string) string {
		for _, v := range vals {
			lit := convert.EscapeLiteral(v)
			if strings.Contains(s, lit) {
				s = strings.ReplaceAll(s, lit, "${"+c.known[v]+"}")
			}
			// The value URL-encoded in the URL.
			if enc := url.QueryEscape(v); enc != v && strings.Contains(s, enc) {
				s = strings.ReplaceAll(s, enc, "${"+c.known[v]+"}")
			}
		}
		return s
	}
	r.URL = rep(r.URL)
	for j := range r.Headers {
		r.Headers[j].Value = rep(r.Headers[j].Value)
	}
	if r.Body != nil {
		b := rep(*r.Body)
		r.Body = &b
	}
}

func usesVar(r *convert.Request, name string) bool {
	ref := "${" + name + "}"
	if strings.Contains(r.URL, ref) || (r.Body != nil && strings.Contains(*r.Body, ref)) {
		return true
	}
	for _, h := range r.Headers {
		if strings.Contains(h.Value, ref) {
			return true
		}
	}
	return false
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// secret moves a secret header value into a variable read from the
// environment; the value itself is never written into the plan.
func (c *correlator) secret(header, value string) string {
	raw := strings.ReplaceAll(value, "$${", "${")
	prefix := ""
	if scheme, tok, ok := strings.Cut(raw, " "); ok && (strings.EqualFold(scheme, "Bearer") || strings.EqualFold(scheme, "Basic") || strings.EqualFold(scheme, "Token")) {
		prefix, raw = scheme+" ", tok
	}
	if name, ok := c.secrets[raw]; ok {
		return prefix + "${" + name + "}"
	}
	name := c.uniqueName(convert.VarName(strings.ToLower(strings.ReplaceAll(header, "-", "_"))))
	env := "HAR_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	c.secrets[raw] = name
	c.plan.SetVar(name, "${env."+env+"}")
	c.plan.AddSecret(name)
	c.plan.AddSecret(header)
	what := "the recorded " + header + " header"
	if prefix != "" {
		what += " (the part after \"" + strings.TrimSpace(prefix) + "\")"
	}
	c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: what + "; no response in the recording returned it"})
	// For a caller that replays at once with the recorded values (the
	// differential tests); never written.
	if c.report.Secrets == nil {
		c.report.Secrets = map[string]string{}
	}
	c.report.Secrets[env] = raw
	return prefix + "${" + name + "}"
}

// finish fills the report's correlations and removes every secret value
// that remains anywhere in the plan.
func (c *correlator) finish() {
	c.init()
	c.report.Correlations = c.report.Correlations[:0]
	for _, k := range c.corrList {
		c.report.Correlations = append(c.report.Correlations, *k)
	}
	if len(c.secrets) == 0 {
		return
	}
	for _, r := range c.all {
		for raw, name := range c.secrets {
			lit := convert.EscapeLiteral(raw)
			ref := "${" + name + "}"
			r.URL = strings.ReplaceAll(r.URL, lit, ref)
			if r.Body != nil {
				b := strings.ReplaceAll(*r.Body, lit, ref)
				r.Body = &b
			}
			for j := range r.Headers {
				r.Headers[j].Value = strings.ReplaceAll(r.Headers[j].Value, lit, ref)
			}
		}
	}
}
