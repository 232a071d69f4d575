// Package postman converts a Postman collection (schema v2.1) into a
// plateau plan: folders become transactions, collection variables become
// vars, auth becomes headers whose secrets are read from the environment,
// bodies are kept; test and pre-request scripts are listed as not converted.
package postman

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/postmanurl"
	"github.com/plateau-perf/plateau/internal/secret"
)

// Collection is a Postman collection v2.1 (v2.0 reads the same way).
type Collection struct {
	Info struct {
		Name   string `json:"name"`
		Schema string `json:"schema"`
	} `json:"info"`
	Item     []Item     `json:"item"`
	Variable []Variable `json:"variable"`
	// Variables is the v2.0 spelling some exports use.
	Variables []Variable `json:"variables"`
	Auth      *Auth      `json:"auth"`
	Event     []Event    `json:"event"`
	// ProtocolProfileBehavior is inherited by every item.
	ProtocolProfileBehavior map[string]any `json:"protocolProfileBehavior"`
}

// Item is a folder (Item set) or a request.
type Item struct {
	Name    string   `json:"name"`
	Item    []Item   `json:"item"`
	Request *Request `json:"request"`
	Event   []Event  `json:"event"`
	Auth    *Auth    `json:"auth"`
	// ProtocolProfileBehavior holds the runtime's switches for the item
	// and, on a folder, for the items inside it.
	ProtocolProfileBehavior map[string]any `json:"protocolProfileBehavior"`
}

// rawURLs reports whether a protocolProfileBehavior turns the runtime's
// URL encoding off (disableUrlEncoding), or leaves the inherited setting.
func rawURLs(ppb map[string]any, inherited bool) bool {
	if v, ok := ppb["disableUrlEncoding"].(bool); ok {
		return v
	}
	return inherited
}

// Request is one request. URL may be a string or an object.
type Request struct {
	Method string          `json:"method"`
	URL    json.RawMessage `json:"url"`
	Header []KV            `json:"header"`
	Body   *Body           `json:"body"`
	Auth   *Auth           `json:"auth"`
}

// KV is a key/value with a disabled flag.
type KV struct {
	Key      string `json:"key"`
	Value    any    `json:"value"`
	Disabled bool   `json:"disabled"`
	Type     string `json:"type"`
	// Src is a form-data file part's file: a path, or a list of paths
	// (Postman sends one part per file); ContentType its part's type.
	Src         any    `json:"src"`
	ContentType string `json:"contentType"`
}

// srcs is a file part's paths, "" left out.
func (kv KV) srcs() []string {
	var out []string
	switch v := kv.Src.(type) {
	case string:
		out = append(out, v)
	case []any:
		for _, s := range v {
			if s, ok := s.(string); ok {
				out = append(out, s)
			}
		}
	}
	return slices.DeleteFunc(out, func(s string) bool { return strings.TrimSpace(s) == "" })
}

func (kv KV) str() string {
	switch v := kv.Value.(type) {
	case nil:
		return ""
	case string:
		return v
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

// Body is a request body; a disabled one is not sent.
type Body struct {
	Mode       string `json:"mode"`
	Disabled   bool   `json:"disabled"`
	Raw        string `json:"raw"`
	URLEncoded []KV   `json:"urlencoded"`
	FormData   []KV   `json:"formdata"`
	File       *struct {
		Src string `json:"src"`
	} `json:"file"`
	GraphQL *struct {
		Query     string `json:"query"`
		Variables string `json:"variables"`
	} `json:"graphql"`
	Options struct {
		Raw struct {
			Language string `json:"language"`
		} `json:"raw"`
	} `json:"options"`
}

// Auth is an auth block: type and its parameters.
type Auth struct {
	Type   string `json:"type"`
	Bearer Params `json:"bearer"`
	Basic  Params `json:"basic"`
	APIKey Params `json:"apikey"`
}

// Params are an auth type's parameters: a list of key/value pairs (v2.1)
// or an object of them (v2.0: "bearer": {"token": "…"}).
type Params []KV

// UnmarshalJSON reads either form.
func (p *Params) UnmarshalJSON(b []byte) error {
	var list []KV
	if err := json.Unmarshal(b, &list); err == nil {
		*p = list
		return nil
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		return errors.New("auth parameters are neither a list nor an object")
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	*p = (*p)[:0]
	for _, k := range keys {
		*p = append(*p, KV{Key: k, Value: obj[k]})
	}
	return nil
}

// Variable is a collection variable.
type Variable struct {
	Key      string `json:"key"`
	Value    any    `json:"value"`
	Disabled bool   `json:"disabled"`
}

// Event is a script (test or prerequest).
type Event struct {
	Listen string `json:"listen"`
	Script struct {
		Exec any `json:"exec"` // a string or a list of lines
	} `json:"script"`
}

func (e Event) lines() []string {
	switch v := e.Script.Exec.(type) {
	case string:
		return strings.Split(v, "\n")
	case []any:
		var out []string
		for _, l := range v {
			if s, ok := l.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// maxCollection bounds the size of a collection read into memory.
const maxCollection = 64 << 20

// Parse reads a collection.
func Parse(r io.Reader) (*Collection, error) {
	var c Collection
	if err := convert.ReadJSON(r, "collection", maxCollection, &c); err != nil {
		return nil, err
	}
	if c.Info.Schema != "" && !strings.Contains(c.Info.Schema, "v2.") {
		return nil, fmt.Errorf("collection schema %s: only v2.0 and v2.1 are read", c.Info.Schema)
	}
	if c.Item == nil {
		return nil, errors.New("not a Postman collection: no item list")
	}
	return &c, nil
}

// Environment is a Postman environment or globals export (the files
// newman reads with --environment and --globals).
type Environment struct {
	Name   string     `json:"name"`
	Values []EnvValue `json:"values"`
}

// EnvValue is one variable of an environment; Enabled is absent in older
// exports (enabled).
type EnvValue struct {
	Key     string `json:"key"`
	Value   any    `json:"value"`
	Enabled *bool  `json:"enabled"`
	Type    string `json:"type"` // default, text, secret
}

// ParseEnvironment reads an environment or globals file.
func ParseEnvironment(r io.Reader) (*Environment, error) {
	var e Environment
	if err := convert.ReadJSON(r, "environment", maxCollection, &e); err != nil {
		return nil, err
	}
	if e.Values == nil {
		return nil, errors.New("not a Postman environment or globals file: no values list")
	}
	return &e, nil
}

// Options change a conversion.
type Options struct {
	Source string
	// WorkingDir is where relative file paths of form-data and file
	// bodies are found, as newman's --working-dir (default: the
	// collection's folder).
	WorkingDir string
	// Environment and Globals are the files newman would be given with
	// --environment and --globals; EnvSource and GlobalsSource name them.
	Environment, Globals     *Environment
	EnvSource, GlobalsSource string
}

// scopeVar is a variable of one of Postman's scopes, in the order it was
// defined; a later scope overrides an earlier one (globals, then the
// collection, then the environment, as Postman resolves them).
type scopeVar struct {
	key, value, from string
	secret           bool
}

type conv struct {
	workDir string // resolves form-data and file bodies' relative paths
	plan    *convert.Plan
	report  *convert.Report
	vars    map[string]string
	from    map[string]string // where each of vars was defined, for the report
	envSeen map[string]bool
	// extracted are variables test scripts set from responses (now
	// extractions), so not read from the environment.
	extracted map[string]bool
	// authSaid are the auth types (digest, oauth1, …) the report's first
	// section has said are not computed.
	authSaid map[string]bool
	base     string // the variable whose value became the target ("baseUrl")
	// basicEnv names the environment variable that holds each literal
	// Basic credential (user and password as written): BASIC_AUTH, then
	// BASIC_AUTH_2 … so two credentials never share one.
	basicEnv map[string]string
	// baseCred are the user and password written in the base variable's
	// URL (http://user:password@host), if any.
	baseCred *[2]string
	// unencoded counts requests whose URL Postman sends unencoded
	// (disableUrlEncoding).
	unencoded int
}

// Convert builds the plan and its report.
func Convert(col *Collection, opt Options) (*convert.Plan, *convert.Report) {
	name := strings.TrimSpace(strings.ReplaceAll(col.Info.Name, "${", "{"))
	if name == "" {
		name = strings.TrimSuffix(path.Base(opt.Source), path.Ext(opt.Source))
	}
	c := &conv{
		plan:      &convert.Plan{Name: name, Header: []string{"Converted from " + path.Base(opt.Source) + " by plateau convert postman."}},
		report:    &convert.Report{Source: opt.Source, Kind: "Postman"},
		vars:      map[string]string{},
		from:      map[string]string{},
		envSeen:   map[string]bool{},
		basicEnv:  map[string]string{},
		extracted: map[string]bool{},
		workDir:   opt.WorkingDir,
	}
	if c.workDir == "" {
		c.workDir = filepath.Dir(opt.Source)
	}
	c.report.Add(convert.Item{Path: col.Info.Name, Name: col.Info.Name, Type: "collection", Status: convert.Converted})
	// Postman's scopes, weakest first: globals, collection, environment.
	var scoped []scopeVar
	index := map[string]int{}
	put := func(v scopeVar) {
		if i, ok := index[v.key]; ok {
			scoped[i] = v
			return
		}
		index[v.key] = len(scoped)
		scoped = append(scoped, v)
	}
	fromFile := func(e *Environment, src, scope string) {
		if e == nil {
			return
		}
		for _, v := range e.Values {
			p := scope + " variable " + v.Key
			if v.Key == "" {
				continue
			}
			if v.Enabled != nil && !*v.Enabled {
				c.report.Add(convert.Item{Path: p, Name: v.Key, Type: scope + " variable", Status: convert.Disabled})
				continue
			}
			put(scopeVar{key: v.Key, value: KV{Value: v.Value}.str(), from: "the " + scope + " variable " + v.Key + " (" + path.Base(src) + ")", secret: v.Type == "secret"})
			c.report.Add(convert.Item{Path: p, Name: v.Key, Type: scope + " variable", Status: convert.Converted})
		}
	}
	fromFile(opt.Globals, opt.GlobalsSource, "globals")
	for _, v := range append(append([]Variable(nil), col.Variable...), col.Variables...) {
		p := "variable " + v.Key
		if v.Disabled {
			c.report.Add(convert.Item{Path: p, Name: v.Key, Type: "variable", Status: convert.Disabled})
			continue
		}
		put(scopeVar{key: v.Key, value: KV{Value: v.Value}.str(), from: "the collection variable " + v.Key})
		c.report.Add(convert.Item{Path: p, Name: v.Key, Type: "variable", Status: convert.Converted})
	}
	fromFile(opt.Environment, opt.EnvSource, "environment")
	for _, v := range scoped {
		c.vars[v.key] = v.value
		c.from[v.key] = v.from
	}
	c.chooseTarget(col)
	var nested []string // variables whose value holds another {{variable}}
	for _, v := range scoped {
		if v.key == c.base {
			continue
		}
		val, _ := c.template(v.value)
		name := convert.VarName(v.key)
		if (v.secret || secretName(v.key)) && val != "" && !strings.Contains(val, "${") {
			// Never written into the plan: read from the environment.
			env := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
			c.plan.SetVar(name, "${env."+env+"}")
			c.plan.AddSecret(name)
			c.envSeen[env] = true
			c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: v.from})
			continue
		}
		if v.secret && val == "" {
			// A secret the file leaves empty (Postman keeps its current
			// value out of exported files): given at run time, as newman
			// is given it with --env-var.
			env := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
			c.plan.SetVar(name, "${env."+env+":-}")
			c.plan.AddSecret(name)
			c.envSeen[env] = true
			c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: v.from + ", a secret the file leaves empty (empty unless set)"})
			continue
		}
		if stripped := stripVars(val); stripped != val {
			nested = append(nested, v.key)
			c.plan.SetVar(name, stripped)
		} else {
			c.plan.SetVar(name, val)
		}
	}
	if len(nested) > 0 {
		c.report.AddBehaviour(fmt.Sprintf("%d %s (%s) %s another {{variable}}: the plan sends %s without it, where Postman puts that variable's value in",
			len(nested), pluralS(len(nested), "variable", "variables"), strings.Join(nested, ", "), pluralS(len(nested), "holds", "hold"), pluralS(len(nested), "its value", "their values")))
	}
	c.events(col.Info.Name, col.Event, nil)
	wl := &convert.Workload{Name: "collection", Load: convert.Load{Users: "1", Iterations: "1"}}
	wl.Scenario = c.items(col.Info.Name, col.Item, col.Auth, 0, rawURLs(col.ProtocolProfileBehavior, false))
	if c.unencoded > 0 {
		c.report.AddBehaviour(fmt.Sprintf("%d %s protocolProfileBehavior.disableUrlEncoding: Postman sends %s URL as written; the plan encodes it as Postman does by default (spaces, quotes and non-ASCII bytes percent-encoded)",
			c.unencoded, pluralS(c.unencoded, "request sets", "requests set"), pluralS(c.unencoded, "its", "their")))
	}
	if len(wl.Scenario) == 0 {
		wl.Scenario = []convert.Step{convert.CommentStep("the collection holds no request")}
	}
	c.plan.Workloads = []*convert.Workload{wl}
	c.defineUndefined()
	c.report.Notes = append(c.report.Notes, "The load is one user running the collection once, as the Postman runner does; set load for a test.")
	c.report.AddBehaviour("Postman's runtime adds Accept: */*, Cache-Control: no-cache and a random Postman-Token header to every request; the plan sends none of them (add them to http.headers where a cache or the service looks at them)")
	// Secret headers, query parameters, form fields and JSON members
	// written as literals: the one secret rule, over the plan and report.
	convert.HideSecrets(c.plan, c.report, "")
	return c.plan, c.report
}

var refRe = regexp.MustCompile(`\$\{[^}]*\}`)

func stripVars(s string) string {
	return refRe.ReplaceAllStringFunc(s, func(m string) string {
		if strings.HasPrefix(m, "${env.") {
			return m
		}
		return ""
	})
}

// chooseTarget takes the origin most requests start with: a {{variable}}
// holding a URL, or a literal origin.
func (c *conv) chooseTarget(col *Collection) {
	counts := map[string]int{}
	best := ""
	var walk func([]Item)
	walk = func(items []Item) {
		for _, it := range items {
			walk(it.Item)
			if it.Request == nil {
				continue
			}
			raw := urlText(it.Request.URL)
			key := ""
			if strings.HasPrefix(raw, "{{") {
				if end := strings.Index(raw, "}}"); end > 0 {
					key = "var:" + raw[2:end]
				}
			} else if u, err := url.Parse(withScheme(raw)); err == nil && u.Host != "" {
				key = u.Scheme + "://" + u.Host
			}
			if key == "" {
				continue
			}
			counts[key]++
			if best == "" || counts[key] > counts[best] {
				best = key
			}
		}
	}
	walk(col.Item)
	switch {
	case strings.HasPrefix(best, "var:"):
		v := best[4:]
		val := c.vars[v]
		if val == "" || strings.Contains(val, "{{") {
			val = "http://localhost"
		}
		val = withScheme(val)
		if rest, user, pass, ok := userinfo(val); ok {
			// Credentials in the variable's URL: sent as the Basic header
			// of every request that starts with it (as Postman parses the
			// URL once the variable is in), never written in the target.
			val = rest
			c.baseCred = &[2]string{user, pass}
		}
		c.base = v
		env := strings.ToUpper(convert.VarName(v))
		c.plan.Target = "${env." + env + ":-" + strings.TrimRight(val, "/") + "}"
		what := c.from[v]
		if what == "" {
			what = "the variable " + v
		}
		c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: what + " (the target)"})
	case best != "":
		c.plan.Target = best
	default:
		c.plan.Target = "http://localhost"
		c.report.Notes = append(c.report.Notes, "No request names a host; the target is http://localhost.")
	}
}

// secretName is the secret rule (secret.IsName).
func secretName(k string) bool { return secret.IsName(k) }

func withScheme(s string) string {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return s
	}
	return "http://" + s
}

// urlText is a request's URL as Postman's runtime first writes it
// (postman-collection's Url#toString), before it puts the variables in and
// parses the text again (the plan's encode: postman does that part): a
// string as it is; an object from its parts — its raw text is not read —,
// the protocol, the host, the port, the path with each ":name" segment
// replaced by the URL's variable of that name when that is a non-empty
// string (a suffix after a "." kept), the enabled query parameters (a
// literal & or # in a key or value as %26 %23, an = in a key as %3D; a
// {{variable}} holding one of them left for later; a parameter whose
// value is not a string sent as its key alone), "?" alone when the only
// enabled parameters are empty, and the hash (never sent).
func urlText(m json.RawMessage) string {
	if len(m) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(m, &s) == nil {
		return s
	}
	var o struct {
		Raw      string          `json:"raw"`
		Protocol string          `json:"protocol"`
		Host     any             `json:"host"`
		Port     any             `json:"port"`
		Path     any             `json:"path"`
		Query    []KV            `json:"query"`
		Hash     *string         `json:"hash"`
		Variable []pathVariable  `json:"variable"`
		Auth     json.RawMessage `json:"auth"`
	}
	if json.Unmarshal(m, &o) != nil {
		return ""
	}
	var b strings.Builder
	if o.Protocol != "" {
		b.WriteString(o.Protocol)
		if !strings.HasSuffix(o.Protocol, "://") {
			b.WriteString("://")
		}
	}
	// The credentials of the URL's auth member ("user:password@"), as
	// Url#toString writes them: a user and a password that are strings.
	var au struct {
		User     *string `json:"user"`
		Password *string `json:"password"`
	}
	if len(o.Auth) > 0 && json.Unmarshal(o.Auth, &au) == nil && (au.User != nil || au.Password != nil) {
		if au.User != nil {
			b.WriteString(*au.User)
		}
		if au.Password != nil {
			b.WriteString(":" + *au.Password)
		}
		b.WriteString("@")
	}
	b.WriteString(joinAny(o.Host, "."))
	switch p := o.Port.(type) {
	case string:
		b.WriteString(":" + p)
	case float64:
		b.WriteString(":" + strconv.FormatFloat(p, 'f', -1, 64))
	}
	var segs []string
	hasPath := false
	switch p := o.Path.(type) {
	case string:
		if len(p) > 1 && p[0] == '/' {
			p = p[1:]
		}
		if p != "" {
			hasPath = true
			if p == "/" {
				p = ""
			}
			segs = strings.Split(p, "/")
		}
	case []any:
		hasPath = true
		for _, x := range p {
			segs = append(segs, joinAny([]any{x}, ""))
		}
	}
	if hasPath {
		vals := map[string]string{}
		for _, v := range o.Variable {
			k := v.Key
			if k == "" {
				k = v.ID
			}
			if str, ok := v.Value.(string); ok {
				vals[k] = str
			} else {
				delete(vals, k)
			}
		}
		for i, seg := range segs {
			if !strings.HasPrefix(seg, ":") {
				continue
			}
			key := seg[1:]
			if j := strings.IndexByte(key, '.'); j >= 0 {
				key = key[:j]
			}
			if v := vals[key]; key != "" && v != "" {
				segs[i] = v + seg[1+len(key):]
			}
		}
		b.WriteString("/" + strings.Join(segs, "/"))
	}
	if len(o.Query) > 0 {
		var q []string
		for _, kv := range o.Query {
			if kv.Disabled {
				continue
			}
			p := normalizeParam(kv.Key, true)
			if v, ok := kv.Value.(string); ok {
				p += "=" + normalizeParam(v, false)
			}
			q = append(q, p)
		}
		if len(q) > 0 {
			b.WriteString("?" + strings.Join(q, "&"))
		}
	}
	if o.Hash != nil {
		b.WriteString("#" + *o.Hash)
	}
	if b.Len() == 0 {
		// Only raw: Postman reads no URL from such an object; the raw text
		// is the best guess at what was meant.
		return o.Raw
	}
	return b.String()
}

// pathVariable is a URL's path variable (":id"); older exports name it id.
type pathVariable struct {
	Key   string `json:"key"`
	ID    string `json:"id"`
	Value any    `json:"value"`
}

// reservedVar is a {{variable}} whose name holds & # or =: postman-
// collection leaves it as it is when it encodes a query parameter.
var reservedVar = regexp.MustCompile(`\{\{[^{}]*[&#=][^{}]*\}\}`)

// normalizeParam is postman-collection's QueryParam normalizeParam: & and
// # (and = in a key) as %26 %23 %3D, outside variables holding them.
func normalizeParam(s string, key bool) string {
	enc := func(t string) string {
		t = strings.ReplaceAll(t, "&", "%26")
		t = strings.ReplaceAll(t, "#", "%23")
		if key {
			t = strings.ReplaceAll(t, "=", "%3D")
		}
		return t
	}
	var b strings.Builder
	last := 0
	for _, m := range reservedVar.FindAllStringIndex(s, -1) {
		b.WriteString(enc(s[last:m[0]]))
		b.WriteString(s[m[0]:m[1]])
		last = m[1]
	}
	b.WriteString(enc(s[last:]))
	return b.String()
}

func joinAny(v any, sep string) string {
	switch t := v.(type) {
	case string:
		return t
	case []any:
		var parts []string
		for _, x := range t {
			switch y := x.(type) {
			case string:
				parts = append(parts, y)
			case map[string]any:
				if s, ok := y["value"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, sep)
	}
	return ""
}

var pmVar = regexp.MustCompile(`\{\{\s*([^{}]+?)\s*\}\}`)

// template turns {{var}} into ${var}; dynamic variables with a plateau
// equivalent are translated, the others named in needs.
func (c *conv) template(s string) (string, []string) {
	var needs []string
	s = convert.EscapeLiteral(s)
	s = pmVar.ReplaceAllStringFunc(s, func(m string) string {
		name := pmVar.FindStringSubmatch(m)[1]
		switch name {
		case "$guid", "$randomUUID":
			return "${__uuid}"
		case "$timestamp":
			needs = append(needs, "template function for Unix seconds ($timestamp)")
			return "${__timestamp_ms}"
		}
		if strings.HasPrefix(name, "$") {
			needs = append(needs, "template function "+name)
			return ""
		}
		return "${" + convert.VarName(name) + "}"
	})
	return s, needs
}

// formPiece is a urlencoded key or value as a template that sends it as
// Postman's runtime does: literal text percent-encoded now (RFC 3986,
// postmanurl.FormEscape), a variable's value through percentencode() when
// it is sent.
func (c *conv) formPiece(s string) (string, []string) {
	var b strings.Builder
	var needs []string
	last := 0
	lit := func(t string) { b.WriteString(convert.EscapeLiteral(postmanurl.FormEscapeString(t))) }
	for _, m := range pmVar.FindAllStringSubmatchIndex(s, -1) {
		lit(s[last:m[0]])
		name := s[m[2]:m[3]]
		if strings.HasPrefix(name, "$") {
			// $guid and the like: letters, digits and -, nothing to encode.
			t, n := c.template(s[m[0]:m[1]])
			needs = append(needs, n...)
			b.WriteString(t)
		} else {
			b.WriteString("${percentencode(" + convert.VarName(name) + ")}")
		}
		last = m[1]
	}
	lit(s[last:])
	return b.String(), needs
}

// urlencoded is a urlencoded body as Postman's runtime sends it: the
// enabled fields reduced into an object (postman-runtime's
// urlEncodedBodyReducer: a repeated key's values go together, at its first
// place) and written by Node's querystring.stringify — whose object keys
// that are array indexes ("0", "12") come first, in numeric order, as
// JavaScript orders an object's keys; a "__proto__" key is not an own key
// and is lost —, every key and value percent-encoded (RFC 3986). A field
// whose name is secret and whose value is literal is read from the
// environment, never written. Keys are grouped as written: two keys that
// become equal only once their variables are in are sent apart.
func (c *conv) urlencoded(p string, fields []KV) (string, []string) {
	type field struct {
		key    string
		values []string
	}
	var order []*field
	byKey := map[string]*field{}
	var needs []string
	for _, kv := range fields {
		if kv.Disabled || kv.Key == "__proto__" {
			continue
		}
		v := kv.str()
		var val string
		if secretName(kv.Key) && v != "" && !strings.Contains(v, "{{") {
			name := convert.VarName(kv.Key)
			env := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
			c.plan.SetVar(name, "${env."+env+"}")
			c.plan.AddSecret(name)
			if !c.envSeen[env] {
				c.envSeen[env] = true
				c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: "the form field " + kv.Key + " of " + p + " (its value is not written into the plan)"})
			}
			if c.report.Secrets == nil {
				c.report.Secrets = map[string]string{}
			}
			c.report.Secrets[env] = v
			val = "${percentencode(" + name + ")}"
		} else {
			var n []string
			val, n = c.formPiece(v)
			needs = append(needs, n...)
		}
		f := byKey[kv.Key]
		if f == nil {
			f = &field{key: kv.Key}
			byKey[kv.Key] = f
			order = append(order, f)
		}
		f.values = append(f.values, val)
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, aok := arrayIndex(order[i].key)
		b, bok := arrayIndex(order[j].key)
		return aok && (!bok || a < b)
	})
	var pieces []string
	for _, f := range order {
		k, n := c.formPiece(f.key)
		needs = append(needs, n...)
		for _, v := range f.values {
			pieces = append(pieces, k+"="+v)
		}
	}
	return strings.Join(pieces, "&"), needs
}

// arrayIndex reports whether k is a JavaScript array index (a canonical
// integer below 2³²−1), which an object lists before its other keys.
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || k != "0" && k[0] == '0' {
		return 0, false
	}
	n, err := strconv.ParseUint(k, 10, 64)
	return n, err == nil && n < 1<<32-1
}

// basicPart is a basic-auth user or password as an expression argument:
// a quoted literal, or one {{variable}} whose name an expression can hold.
func (c *conv) basicPart(s string) (string, bool) {
	if !strings.Contains(s, "{{") {
		if strings.ContainsAny(s, `"\$`) {
			return "", false
		}
		return `"` + s + `"`, true
	}
	m := pmVar.FindStringSubmatch(s)
	if m == nil || m[0] != strings.TrimSpace(s) || !plainName.MatchString(m[1]) {
		return "", false
	}
	return m[1], true
}

// plainName is a variable name an expression can hold as it is.
var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// The test-script idioms read here, in the pm and the legacy forms:
//
//	var json = pm.response.json();            var r = JSON.parse(responseBody);
//	var user = r.user || {};                  (an alias of a part of the response)
//	pm.environment.set("token", json.token);  postman.setEnvironmentVariable('token', user.token);
//	pm.globals.set(…), pm.collectionVariables.set(…), pm.variables.set(…), postman.setGlobalVariable(…)
//	pm.response.to.have.status(200);          tests["…"] = responseCode.code === 200;
var (
	jsIdent  = `[A-Za-z_$][A-Za-z0-9_$]*`
	jsPath   = `(?:\.` + jsIdent + `|\[\d+\]|\[["'][^"'\]]+["']\])*`
	respRoot = `(?:pm\.response\.json\(\)|JSON\.parse\(\s*(?:responseBody|pm\.response\.text\(\))\s*\))`
	// aliasRe: var|let|const NAME = ROOT-OR-ALIAS PATH [|| {}]
	aliasRe = regexp.MustCompile(`(?:^|[;{\s])(?:var|let|const)?\s*(` + jsIdent + `)\s*=\s*(` + respRoot + `|` + jsIdent + `)(` + jsPath + `)\s*(?:\|\|\s*(?:\{\s*\}|\[\s*\]))?\s*(?:;|$)`)
	// setRe: a setter of a variable from ROOT-OR-ALIAS PATH.
	setRe = regexp.MustCompile(`(?:pm\.(?:collectionVariables|environment|globals|variables)\.set|postman\.set(?:Environment|Global)Variable)\(\s*["']([A-Za-z_][A-Za-z0-9_\-]*)["']\s*,\s*(` + respRoot + `|` + jsIdent + `)(` + jsPath + `)\s*\)`)
	// statusRe finds pm.response.to.have.status(N) and the legacy
	// responseCode.code === N.
	statusRe = regexp.MustCompile(`pm\.response\.to\.have\.status\((\d{3})\)|responseCode\.code\s*===?\s*(\d{3})`)
	jsSegRe  = regexp.MustCompile(`\.(` + jsIdent + `)|\[(\d+)\]|\[["']([^"'\]]+)["']\]`)
	identRe  = regexp.MustCompile(`^` + jsIdent + `$`)
	// jsLit is a JSON-able literal a check compares with.
	jsLit = `"[^"\\]*"|'[^'\\]*'|-?\d+(?:\.\d+)?|true|false|null`
	// expectEqRe: pm.expect(ROOT-OR-ALIAS PATH).to[.be|.deep].eql|equal(LITERAL).
	expectEqRe = regexp.MustCompile(`pm\.expect\(\s*(` + respRoot + `|` + jsIdent + `)(` + jsPath + `)\s*\)\.to(?:\.be|\.deep)*\.(?:eql|equal|equals|eq)\(\s*(` + jsLit + `)\s*\)`)
	// legacyEqRe: tests["…"] = ROOT-OR-ALIAS PATH === LITERAL.
	legacyEqRe = regexp.MustCompile(`tests\[[^\]]*\]\s*=\s*(` + respRoot + `|` + jsIdent + `)(` + jsPath + `)\s*===?\s*(` + jsLit + `)\s*;?\s*$`)
	// existRe: pm.expect(ROOT-OR-ALIAS PATH).to.exist | .to.not.be.undefined.
	existRe = regexp.MustCompile(`pm\.expect\(\s*(` + respRoot + `|` + jsIdent + `)(` + jsPath + `)\s*\)\.to\.(?:exist|not\.be\.undefined)\b`)
	// propertyRe: pm.expect(ROOT-OR-ALIAS PATH).to.have.property("name").
	propertyRe = regexp.MustCompile(`pm\.expect\(\s*(` + respRoot + `|` + jsIdent + `)(` + jsPath + `)\s*\)\.to\.have\.(?:own)?property\(\s*["']([^"']+)["']\s*\)`)
	// jsonBodyRe: pm.response.to.have.jsonBody("a.b") — a lodash path.
	jsonBodyRe = regexp.MustCompile(`pm\.response\.to\.have\.jsonBody\(\s*["']([^"']+)["']\s*\)`)
)

// litText is a JavaScript literal as plateau's json check compares it:
// a string by its content, a number, boolean or null as written.
func litText(lit string) string {
	if len(lit) >= 2 && (lit[0] == '"' || lit[0] == '\'') {
		return lit[1 : len(lit)-1]
	}
	return lit
}

// member is ".name" for an identifier, "['name']" otherwise.
func member(name string) string {
	if identRe.MatchString(name) {
		return "." + name
	}
	return "['" + name + "']"
}

// jsonPath turns a JavaScript member path (".user.token", "[0]",
// "['a b']") into plateau's JSONPath suffix.
func jsonPath(js string) string {
	var b strings.Builder
	for _, m := range jsSegRe.FindAllStringSubmatch(js, -1) {
		switch {
		case m[1] != "":
			b.WriteString("." + m[1])
		case m[2] != "":
			b.WriteString("[" + m[2] + "]")
		default:
			b.WriteString("['" + m[3] + "']")
		}
	}
	return b.String()
}

type scriptSet struct{ name, path string }

// scriptChecks are the JSON checks a test script makes: values equal to
// a literal, and paths that must exist.
type scriptChecks struct {
	equal  []convert.KV
	exists []string
}

// readScript finds, in a test script's lines, the variables set from the
// JSON response (each with its JSONPath) and the status codes tested.
// Aliases of the parsed response and of its parts are followed in order
// of the lines; a setter from anything else is not recognised.
func readScript(lines []string) (sets []scriptSet, status []int, checks scriptChecks) {
	alias := map[string]string{} // JS name → JSONPath of what it holds
	resolve := func(root, p string) (string, bool) {
		if strings.HasPrefix(root, "pm.") || strings.HasPrefix(root, "JSON.") {
			return "$" + jsonPath(p), true
		}
		if base, ok := alias[root]; ok {
			return base + jsonPath(p), true
		}
		return "", false
	}
	for _, l := range lines {
		for _, m := range aliasRe.FindAllStringSubmatch(l, -1) {
			if jp, ok := resolve(m[2], m[3]); ok {
				alias[m[1]] = jp
			} else {
				delete(alias, m[1])
			}
		}
		for _, m := range setRe.FindAllStringSubmatch(l, -1) {
			if jp, ok := resolve(m[2], m[3]); ok && jp != "$" {
				sets = append(sets, scriptSet{name: m[1], path: jp})
			}
		}
		for _, re := range []*regexp.Regexp{expectEqRe, legacyEqRe} {
			for _, m := range re.FindAllStringSubmatch(l, -1) {
				// One expected value a path: a second check of the same path
				// keeps the first (a plan's json check is a mapping).
				if jp, ok := resolve(m[1], m[2]); ok && jp != "$" && !slices.ContainsFunc(checks.equal, func(kv convert.KV) bool { return kv.Name == jp }) {
					checks.equal = append(checks.equal, convert.KV{Name: jp, Value: litText(m[3])})
				}
			}
		}
		for _, m := range existRe.FindAllStringSubmatch(l, -1) {
			if jp, ok := resolve(m[1], m[2]); ok && jp != "$" && !slices.Contains(checks.exists, jp) {
				checks.exists = append(checks.exists, jp)
			}
		}
		for _, m := range propertyRe.FindAllStringSubmatch(l, -1) {
			if jp, ok := resolve(m[1], m[2]); ok {
				if jp += member(m[3]); !slices.Contains(checks.exists, jp) {
					checks.exists = append(checks.exists, jp)
				}
			}
		}
		for _, m := range jsonBodyRe.FindAllStringSubmatch(l, -1) {
			jp := "$"
			for _, seg := range strings.Split(m[1], ".") {
				jp += member(seg)
			}
			if !slices.Contains(checks.exists, jp) {
				checks.exists = append(checks.exists, jp)
			}
		}
		for _, m := range statusRe.FindAllStringSubmatch(l, -1) {
			var n int
			fmt.Sscan(m[1]+m[2], &n)
			if !slices.Contains(status, n) {
				status = append(status, n)
			}
		}
	}
	return sets, status, checks
}

// events lists scripts. Test scripts of a request (r set) that set a
// variable from the JSON response or test the status are converted in
// part: the extraction and the status check go on the request.
func (c *conv) events(p string, evs []Event, r *convert.Request) {
	for _, e := range evs {
		lines := e.lines()
		text := strings.Join(lines, "\n")
		if strings.TrimSpace(text) == "" {
			continue
		}
		var got []string
		if r != nil && e.Listen == "test" {
			sets, status, checks := readScript(lines)
			for _, kv := range checks.equal {
				r.Check.JSON = append(r.Check.JSON, kv)
				got = append(got, fmt.Sprintf("check %s equals %s", kv.Name, kv.Value))
			}
			for _, jp := range checks.exists {
				r.Check.JSONExists = append(r.Check.JSONExists, jp)
				got = append(got, "check "+jp+" exists")
			}
			for _, st := range sets {
				r.Extract = append(r.Extract, convert.Extract{Var: convert.VarName(st.name), JSON: st.path})
				c.extracted[convert.VarName(st.name)] = true
				got = append(got, "extract "+st.name+" from "+st.path)
			}
			for _, n := range status {
				r.Check.Status = append(r.Check.Status, n)
				got = append(got, fmt.Sprint("check status ", n))
			}
		}
		it := convert.Item{Path: p + " / " + e.Listen + " script", Name: e.Listen, Type: e.Listen + " script",
			Status: convert.NotConverted, Note: fmt.Sprintf("%d lines of JavaScript; write them as extract/check/if steps", len(lines))}
		if len(got) > 0 {
			it.Status, it.Note = convert.Partial, strings.Join(got, "; ")+"; the rest of the script is not converted"
		}
		c.report.Add(it)
	}
}

func scriptComment(p string, evs []Event) []string {
	var out []string
	for _, e := range evs {
		lines := e.lines()
		if strings.TrimSpace(strings.Join(lines, "")) == "" {
			continue
		}
		out = append(out, fmt.Sprintf("not converted: %s script of %s:", e.Listen, p))
		for i, l := range lines {
			if i == 6 {
				out = append(out, fmt.Sprintf("  | … %d more lines", len(lines)-6))
				break
			}
			out = append(out, "  | "+l)
		}
	}
	return out
}

// items converts a list of items; folders become transactions. A folder
// inside a folder's transaction is flattened into it (plateau transactions
// do not nest yet).
func (c *conv) items(parent string, items []Item, auth *Auth, depth int, raw bool) []convert.Step {
	var out []convert.Step
	for _, it := range items {
		p := parent + " / " + it.Name
		a := auth
		if it.Auth != nil {
			a = it.Auth
		}
		if it.Request == nil {
			c.report.Add(convert.Item{Path: p, Name: it.Name, Type: "folder", Status: convert.Converted, Note: "transaction"})
			c.events(p, it.Event, nil)
			steps := c.items(p, it.Item, a, depth+1, rawURLs(it.ProtocolProfileBehavior, raw))
			if cm := scriptComment(p, it.Event); len(cm) > 0 {
				steps = append([]convert.Step{convert.CommentStep(cm...)}, steps...)
			}
			if len(steps) == 0 {
				continue
			}
			out = append(out, convert.Step{Transaction: &convert.Group{Name: plain(it.Name), Steps: steps}})
			continue
		}
		if rawURLs(it.ProtocolProfileBehavior, raw) {
			c.unencoded++
		}
		out = append(out, c.request(p, it, a)...)
	}
	return out
}

func plain(s string) string {
	s = strings.TrimSpace(strings.ReplaceAll(s, "${", "{"))
	if s == "" {
		return "folder"
	}
	return s
}

func (c *conv) request(p string, it Item, auth *Auth) []convert.Step {
	rq := it.Request
	r := &convert.Request{Name: plain(it.Name), Method: strings.ToUpper(rq.Method)}
	if r.Method == "" {
		r.Method = "GET"
	}
	var needs, notes []string
	// The URL as Postman's runtime writes it; the variables go in as they
	// are and the whole URL is encoded as the runtime does (encode:
	// postman), so a value holding & starts a parameter there as in Postman.
	text, user, pass, cred := userinfo(urlText(rq.URL))
	credWhere := "the credentials in the URL"
	if !cred && c.baseCred != nil && c.startsWithBase(text) {
		user, pass, cred = c.baseCred[0], c.baseCred[1], true
		credWhere = "the credentials in the URL of " + c.base
	}
	u, n := c.url(text)
	needs = append(needs, n...)
	r.URL, r.Postman = u, true
	for _, h := range rq.Header {
		if h.Disabled {
			continue
		}
		v, n := c.template(h.str())
		needs = append(needs, n...)
		r.Headers = append(r.Headers, convert.KV{Name: h.Key, Value: v})
	}
	if rq.Auth != nil {
		auth = rq.Auth
	}
	if auth != nil {
		n := c.auth(auth, r)
		needs = append(needs, n...)
	}
	if cred && !hasHeader(r.Headers, "Authorization") {
		// Credentials in the URL: postman-request sends them as Basic
		// auth, each part percent-decoded, when nothing else set an
		// Authorization header; the URL on the wire carries none.
		r.Headers = append(r.Headers, convert.KV{Name: "Authorization", Value: c.basic(pctDecode(user), pctDecode(pass), credWhere)})
	}
	// A disabled body is not sent, as Postman does.
	if b := rq.Body; b != nil && !b.Disabled {
		switch b.Mode {
		case "raw":
			if b.Raw != "" {
				v, n := c.template(b.Raw)
				needs = append(needs, n...)
				r.Body = &v
				if b.Options.Raw.Language == "json" && !hasHeader(r.Headers, "Content-Type") {
					r.Headers = append(r.Headers, convert.KV{Name: "Content-Type", Value: "application/json"})
				}
			}
		case "urlencoded":
			if body, n := c.urlencoded(p, b.URLEncoded); body != "" {
				needs = append(needs, n...)
				r.Body = &body
				if !hasHeader(r.Headers, "Content-Type") {
					r.Headers = append(r.Headers, convert.KV{Name: "Content-Type", Value: "application/x-www-form-urlencoded"})
				}
			}
		case "graphql":
			if b.GraphQL != nil {
				body := map[string]any{"query": b.GraphQL.Query}
				if strings.TrimSpace(b.GraphQL.Variables) != "" {
					body["variables"] = json.RawMessage(b.GraphQL.Variables)
				}
				j, err := json.Marshal(body)
				if err == nil {
					v, n := c.template(string(j))
					needs = append(needs, n...)
					r.Body = &v
					if !hasHeader(r.Headers, "Content-Type") {
						r.Headers = append(r.Headers, convert.KV{Name: "Content-Type", Value: "application/json"})
					}
				}
			}
		case "formdata":
			mp := &convert.Multipart{}
			fileFirst := false
			var order []string
			for _, kv := range b.FormData {
				if kv.Disabled {
					continue
				}
				if kv.Type != "file" {
					if len(mp.Files) > 0 {
						fileFirst = true
					}
					v, n := c.template(kv.str())
					needs = append(needs, n...)
					mp.Fields = append(mp.Fields, convert.KV{Name: kv.Key, Value: v})
					order = append(order, kv.Key)
					continue
				}
				srcs := kv.srcs()
				if len(srcs) == 0 {
					notes = append(notes, fmt.Sprintf("file part %q names no file: not sent", kv.Key))
					needs = append(needs, "a file for "+kv.Key)
				}
				for _, s := range srcs {
					ct := kv.ContentType
					if ct == "" {
						var known bool
						if ct, known = fileType(s); !known {
							notes = append(notes, fmt.Sprintf("file part %q: %s sent as %s (Postman looks the extension up in the mime-db list; give the part a contentType to be sure)", kv.Key, filepath.Base(s), ct))
						}
					}
					mp.Files = append(mp.Files, convert.MultipartFile{Field: kv.Key, Path: c.filePath(s), ContentType: ct})
					order = append(order, kv.Key)
				}
			}
			if fileFirst {
				// A file before a field: the parts in the collection's
				// order, as Postman sends them.
				mp.Order = order
			}
			if len(mp.Fields)+len(mp.Files) > 0 {
				r.Multipart = mp
			}
		case "file":
			if b.File == nil || strings.TrimSpace(b.File.Src) == "" {
				notes = append(notes, "file body names no file: sent without a body")
				needs = append(needs, "a file for the body")
			} else {
				r.BodyFile = c.filePath(b.File.Src)
			}
		}
	}
	st, need := convert.StatusOf(notes, needs)
	c.report.Add(convert.Item{Path: p, Name: it.Name, Type: "request", Status: st, Note: strings.Join(notes, "; "), Needs: need})
	c.events(p, it.Event, r)
	r.Comment = scriptComment(it.Name, it.Event)
	return []convert.Step{{Request: r}}
}

func hasHeader(list []convert.KV, name string) bool {
	for _, h := range list {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// startsWithBase reports whether a request URL starts with the base
// variable (the one whose value became the target).
func (c *conv) startsWithBase(raw string) bool {
	return c.base != "" && (strings.HasPrefix(raw, "{{"+c.base+"}}") || strings.HasPrefix(raw, "{{ "+c.base+" }}"))
}

// url makes a request URL relative to the target where it starts with the
// target's variable or origin.
func (c *conv) url(raw string) (string, []string) {
	if c.base != "" {
		for _, pre := range []string{"{{" + c.base + "}}", "{{ " + c.base + " }}"} {
			if strings.HasPrefix(raw, pre) {
				rest := strings.TrimPrefix(raw, pre)
				if !strings.HasPrefix(rest, "/") {
					rest = "/" + rest
				}
				return c.template(rest)
			}
		}
	}
	if !strings.HasPrefix(raw, "{{") {
		full := withScheme(raw)
		if u, err := url.Parse(full); err == nil && u.Host != "" && c.plan.Target == u.Scheme+"://"+u.Host {
			rest := strings.TrimPrefix(full, c.plan.Target)
			if !strings.HasPrefix(rest, "/") {
				rest = "/" + rest
			}
			return c.template(rest)
		}
		return c.template(full)
	}
	// Starts with another variable: plateau needs a literal start.
	t, needs := c.template(raw)
	return "/" + t, append(needs, "URLs that start with a variable")
}

// auth turns a Postman auth block into a header; literal secrets are read
// from the environment.
func (c *conv) auth(a *Auth, r *convert.Request) []string {
	get := func(list []KV, key string) string {
		for _, kv := range list {
			if kv.Key == key {
				return kv.str()
			}
		}
		return ""
	}
	switch a.Type {
	case "", "noauth", "inherit":
		return nil
	case "bearer":
		tok := get(a.Bearer, "token")
		v := c.secretValue(tok, "BEARER_TOKEN", "the bearer token")
		r.Headers = append(r.Headers, convert.KV{Name: "Authorization", Value: "Bearer " + v})
	case "basic":
		user, pass := get(a.Basic, "username"), get(a.Basic, "password")
		r.Headers = append(r.Headers, convert.KV{Name: "Authorization", Value: c.basic(user, pass, "Basic auth")})
	case "apikey":
		key, val, in := get(a.APIKey, "key"), get(a.APIKey, "value"), get(a.APIKey, "in")
		v := c.secretValue(val, "API_KEY", "the API key "+key)
		if in == "query" {
			// The runtime adds the key to the URL's parameters after the
			// variables are in: its & and # go as %26 %23, the rest as it
			// is (encode: postman).
			sep := "?"
			if strings.Contains(r.URL, "?") {
				sep = "&"
			}
			ref := strings.TrimSuffix(strings.TrimPrefix(v, "${"), "}")
			if strings.HasPrefix(ref, "env.") {
				name := convert.VarName("apikey_" + key)
				c.plan.SetVar(name, v)
				c.plan.AddSecret(name)
				ref = name
			}
			r.URL += sep + convert.EscapeLiteral(normalizeParam(key, true)) + `=${replace(replace(` + ref + `, "&", "%26"), "#", "%23")}`
		} else {
			if key == "" {
				key = "X-Api-Key"
			}
			r.Headers = append(r.Headers, convert.KV{Name: key, Value: v})
			c.plan.AddSecret(key)
		}
	default:
		if !c.authSaid[a.Type] {
			if c.authSaid == nil {
				c.authSaid = map[string]bool{}
			}
			c.authSaid[a.Type] = true
			c.report.AddBehaviour(fmt.Sprintf("Postman's %s auth is not computed: its requests are sent without it (no Authorization header); add the header the service expects", a.Type))
		}
		return []string{"auth type " + a.Type}
	}
	return nil
}

// basic is the value of an Authorization header for Basic credentials
// (what says where they were written): encoded when the request is sent
// when the password is a variable (read from the environment when it is
// a secret), as Postman does; otherwise read whole from an environment
// variable the report names (BASIC_AUTH, BASIC_AUTH_2 … one per
// credential), so a literal password is never written into the plan.
func (c *conv) basic(user, pass, what string) string {
	if arg, ok := c.basicPart(user); ok && strings.Contains(pass, "{{") {
		if parg, ok := c.basicPart(pass); ok {
			// The password variable is a secret whatever its name: a
			// value the collection holds is read from the environment.
			c.secretValue(pass, "", "the password for "+what)
			return "Basic ${base64(concat(" + arg + `, ":", ` + parg + "))}"
		}
	}
	key := user + "\x00" + pass
	env, ok := c.basicEnv[key]
	if !ok {
		env = "BASIC_AUTH"
		for n := 2; c.envSeen[env]; n++ {
			env = "BASIC_AUTH_" + strconv.Itoa(n)
		}
		c.basicEnv[key] = env
		c.envSeen[env] = true
		varPass := strings.Contains(pass, "{{")
		c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: fmt.Sprintf("base64 of user:password for %s (user %q%s)", what, user, map[bool]string{true: ", password from a variable", false: ""}[varPass])})
		if !varPass && !strings.Contains(user, "{{") {
			// The source's value, for a caller that runs the plan at
			// once (never written).
			if c.report.Secrets == nil {
				c.report.Secrets = map[string]string{}
			}
			c.report.Secrets[env] = base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		}
	}
	return "Basic ${env." + env + "}"
}

// userinfo splits the credentials off a request URL as Postman's URL
// parser does: the authority runs from after "://" to the first / (the
// query and hash cut first, backslashes read as /); the credentials end
// at its last @, the user at their first ":". cred is false when the URL
// has no @ there.
func userinfo(raw string) (rest, user, pass string, cred bool) {
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	}
	end := len(raw)
	if i := strings.IndexAny(raw[start:], "/\\?#"); i >= 0 {
		end = start + i
	}
	at := strings.LastIndexByte(raw[start:end], '@')
	if at < 0 {
		return raw, "", "", false
	}
	info := raw[start : start+at]
	user, pass, _ = strings.Cut(info, ":")
	return raw[:start] + raw[start+at+1:], user, pass, true
}

// pctDecode undoes percent-encoding as Node's querystring.unescape does
// (postman-request decodes each credential with it): every valid %XX,
// an invalid one left as it is, + kept.
func pctDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(v))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// secretValue returns a template for a secret: a {{variable}} stays a
// variable (marked secret); a literal is read from the environment.
func (c *conv) secretValue(v, env, what string) string {
	if m := pmVar.FindStringSubmatch(v); m != nil && strings.TrimSpace(v) == m[0] {
		name := convert.VarName(m[1])
		c.plan.AddSecret(name)
		if val, ok := c.vars[m[1]]; ok && val != "" && !strings.Contains(val, "{{") {
			// The collection holds the secret's value: read it from the
			// environment instead of writing it into the plan.
			e := strings.ToUpper(name)
			c.plan.SetVar(name, "${env."+e+"}")
			if !c.envSeen[e] {
				c.envSeen[e] = true
				c.report.Env = append(c.report.Env, convert.EnvVar{Env: e, What: what + " (collection variable " + m[1] + ")"})
				// The source's value, for a caller that runs the plan at
				// once (never written).
				if c.report.Secrets == nil {
					c.report.Secrets = map[string]string{}
				}
				c.report.Secrets[e] = val
			}
		}
		return "${" + name + "}"
	}
	if !c.envSeen[env] {
		c.envSeen[env] = true
		c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: what})
	}
	return "${env." + env + "}"
}

// defineUndefined defines variables the collection uses but never sets
// (Postman environments, scripts) as empty vars so the plan loads, and
// lists them.
// callRefs replaces each reference that is a call the converter wrote
// (urlencode(name), base64(concat(user, ":", password))) by the
// variables it reads.
func callRefs(refs []string) []string {
	var out []string
	for _, ref := range refs {
		if !strings.Contains(ref, "(") {
			out = append(out, ref)
			continue
		}
		for _, m := range argIdent.FindAllStringSubmatch(quoted.ReplaceAllString(ref, `""`), -1) {
			out = append(out, m[1])
		}
	}
	return out
}

var (
	quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	// argIdent is a name not followed by "(" (a variable, not a call).
	argIdent = regexp.MustCompile(`(?:^|[(,\s])([A-Za-z_][A-Za-z0-9_]*)\s*(?:[),]|$)`)
)

func (c *conv) defineUndefined() {
	defined := map[string]bool{}
	for _, kv := range c.plan.Vars {
		defined[kv.Name] = true
	}
	var missing []string
	for _, wl := range c.plan.Workloads {
		convert.WalkRequests(wl.Scenario, func(r *convert.Request) {
			ts := []string{r.URL}
			for _, h := range r.Headers {
				ts = append(ts, h.Value)
			}
			for _, f := range r.Form {
				ts = append(ts, f.Value)
			}
			if r.Multipart != nil {
				for _, f := range r.Multipart.Fields {
					ts = append(ts, f.Value)
				}
			}
			if r.Body != nil {
				ts = append(ts, *r.Body)
			}
			for _, t := range ts {
				for _, ref := range callRefs(convert.Refs(t)) {
					if strings.HasPrefix(ref, "env.") || strings.HasPrefix(ref, "__") || defined[ref] || c.extracted[ref] {
						continue
					}
					defined[ref] = true
					missing = append(missing, ref)
				}
			}
		})
	}
	var envs []string
	for _, m := range missing {
		env := strings.ToUpper(strings.ReplaceAll(m, "-", "_"))
		c.plan.SetVar(m, "${env."+env+":-}")
		c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: "variable " + m + " (from a Postman environment or a script; empty by default)"})
		envs = append(envs, env)
	}
	if len(missing) > 0 {
		c.report.AddBehaviour(fmt.Sprintf("%d %s the collection uses %s defined by no collection, environment or globals file given (%s): the plan sends %s empty unless %s set in the environment (%s); Postman sends an undefined {{variable}} as that text, unchanged",
			len(missing), pluralS(len(missing), "variable", "variables"), pluralS(len(missing), "is", "are"), strings.Join(missing, ", "),
			pluralS(len(missing), "it", "them"), pluralS(len(missing), "it is", "they are"), strings.Join(envs, ", ")))
	}
}

func pluralS(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// filePath is a form-data or file body's file as the plan reads it:
// absolute, resolved from the working directory as newman resolves it, so
// the plan finds the file wherever it is written.
func (c *conv) filePath(src string) string {
	if filepath.IsAbs(src) {
		return filepath.Clean(src)
	}
	if abs, err := filepath.Abs(filepath.Join(c.workDir, src)); err == nil {
		return abs
	}
	return src
}
