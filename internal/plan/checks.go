package plan

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/locale"
	"github.com/plateau-perf/plateau/internal/plan/expr"
	"github.com/plateau-perf/plateau/internal/plan/selector"
	"gopkg.in/yaml.v3"
)

// after runs the checks and dependent defaults of one decoded struct. n is
// the struct's mapping (nil or null when empty) and keys what it held.
func (d *decoder) after(ptr any, n *yaml.Node, k keyset) {
	switch v := ptr.(type) {
	case *HTTP:
		d.checkHTTP(v, n, k)
	case *TLS:
		d.checkTLS(v, n, k)
	case *MultipartFile:
		if v.Field == "" {
			d.missing(n, "multipart file: missing field (the form field name)")
		}
		if v.Path == "" {
			d.missing(n, "multipart file: missing path")
		} else {
			v.Path = d.readable(at(n, k, "path"), "multipart file path", v.Path)
		}
		if v.ContentType == "" {
			v.ContentType = "application/octet-stream"
		}
	case *Multipart:
		if len(v.Fields) == 0 && len(v.Files) == 0 {
			d.errorf(n, "multipart: no fields and no files")
		}
		if len(v.Order) > 0 {
			if _, err := v.Sequence(); err != nil {
				d.errorf(at(n, k, "order"), "multipart order: %v", err)
			}
		}
	case *Workload:
		d.checkWorkload(v, n, k)
	case *Step:
		d.checkStep(v, n, k)
	case *Request:
		d.checkRequest(v, n, k)
	case *WebSocket:
		d.checkWebSocket(v, n, k)
	case *Send:
		d.checkOnFail(v.OnFail, at(n, k, "on_fail"))
		var bodies []string
		for _, b := range []string{"text", "binary", "json"} {
			if k.has(b) {
				bodies = append(bodies, b)
			}
		}
		switch {
		case len(bodies) == 0:
			d.missing(n, "send: missing the message (text, binary or json)")
		case len(bodies) > 1:
			d.errorf(at(n, k, bodies[1]), "send has both %s and %s; use one", bodies[0], bodies[1])
		}
		if k.has("name") && strings.TrimSpace(v.Name) == "" {
			d.errorf(at(n, k, "name"), "send: name is empty")
		}
		if v.Reply != nil {
			if v.Reply.Name != "" {
				d.errorf(at(n, k, "reply"), "send: a reply has no name of its own (the round trip is the send's label)")
			}
			if v.Reply.OnFail != "" {
				d.errorf(at(n, k, "reply"), "send: on_fail goes on the send, not its reply")
			}
		}
	case *Receive:
		d.checkOnFail(v.OnFail, at(n, k, "on_fail"))
		if v.Timeout < 0 || k.has("timeout") && v.Timeout == 0 {
			d.errorf(at(n, k, "timeout"), "receive: timeout must be positive")
		}
		if k.has("name") && strings.TrimSpace(v.Name) == "" {
			d.errorf(at(n, k, "name"), "receive: name is empty")
		}
		for _, c := range v.Checks {
			if len(c.Status) > 0 || len(c.Header) > 0 || len(c.HeaderMatch) > 0 || len(c.HeaderSet) > 0 {
				d.errAt(c.Pos, nil, "a message has no status or headers: a websocket check tests its body (body, regex, json, sizes, max_duration)")
			}
		}
		for _, name := range sortedKeys(v.Extract) {
			if e := v.Extract[name]; e.Header != "" || e.Cookie != "" {
				d.errAt(e.Pos, nil, fmt.Sprintf("extract %s: a message has no headers or cookies; extract from its body (json, regex, left+right, css, xpath)", name))
			}
		}
	case *GRPC:
		d.checkGRPC(v, n, k)
	case *Extract:
		d.checkExtract(v, n, k)
	case *Check:
		for _, key := range []string{"regex", "not_regex"} {
			re := v.Regex
			if key == "not_regex" {
				re = v.NotRegex
			}
			if _, err := regexp.Compile(re); k.has(key) && err != nil {
				d.errorf(at(n, k, key), "check.%s: bad regex: %v", key, err)
			}
		}
		for _, key := range []string{"json_exists", "json_absent"} {
			paths := v.JSONExists
			if key == "json_absent" {
				paths = v.JSONAbsent
			}
			for _, p := range paths {
				if _, err := expr.ParsePath(p); err != nil {
					d.errorf(at(n, k, key), "check.%s: %v", key, err)
				}
			}
		}
		for _, h := range v.HeaderSet {
			if !isToken(h) {
				d.errorf(at(n, k, "header_exists"), "check.header_exists: bad header name %q", h)
			}
		}
		if v.MaxSize > 0 && v.MinSize > v.MaxSize {
			d.errorf(at(n, k, "min_size"), "check: min_size %d is more than max_size %d", v.MinSize, v.MaxSize)
		}
	case *Transaction:
		d.checkOnFail(v.OnFail, at(n, k, "on_fail"))
		if strings.TrimSpace(v.Name) == "" {
			d.errorf(at(n, k, "name"), "transaction: missing name (it is the label of the grouped time)")
		}
		if len(v.Steps) == 0 {
			d.errorf(at(n, k, "steps"), "transaction has no steps")
		}
	case *Loop:
		switch {
		case k.has("count") && k.has("while"):
			d.errorf(k["while"].key, "loop: give count or while, not both")
		case k.has("while"):
			if !k.has("max") {
				d.missing(n, "loop: while needs max (the most repetitions, so a condition that never turns false cannot hang a user)")
			} else if v.Max < 1 {
				d.errorf(at(n, k, "max"), "loop: max must be at least 1")
			}
		case v.Count < 1:
			d.errorf(at(n, k, "count"), "loop: count must be at least 1 (or give while: with max:)")
		}
		if k.has("max") && !k.has("while") {
			d.errorf(k["max"].key, "loop: max applies to a while loop; a counted loop runs count times")
		}
		if len(v.Steps) == 0 {
			d.errorf(at(n, k, "steps"), "loop has no steps")
		}
	case *If:
		if !k.has("cond") {
			d.missing(n, "if: missing cond (a condition such as '${status} == 200')")
		}
		if len(v.Steps) == 0 && len(v.Else) == 0 {
			d.errorf(at(n, k, "steps"), "if has no steps")
		}
	case *Branch:
		if !k.has("weight") {
			v.Weight = 1
		} else if v.Weight <= 0 {
			d.errorf(at(n, k, "weight"), "choose: weight must be positive")
		}
		if len(v.Steps) == 0 {
			d.errorf(at(n, k, "steps"), "choose branch has no steps")
		}
		v.Pos = d.pos(n)
	case *Foreach:
		switch {
		case !k.has("as"):
			d.missing(n, "foreach: missing as (the variable that holds each item)")
		case !isIdent(v.As) || v.As == "env" || IsBuiltin(v.As):
			d.errorf(at(n, k, "as"), "foreach: bad variable name %q", v.As)
		case d.wl != nil:
			d.extracted[d.wl][v.As] = true
		}
		if !k.has("in") {
			d.missing(n, "foreach: missing in (a list, or a variable such as \"${ids}\")")
		}
		if v.Max < 0 {
			d.errorf(at(n, k, "max"), "foreach: max must not be negative")
		}
		if len(v.Steps) == 0 {
			d.errorf(at(n, k, "steps"), "foreach has no steps")
		}
	case *Until:
		if strings.TrimSpace(v.Name) == "" {
			d.errorf(at(n, k, "name"), "until: missing name (the label of the whole wait)")
		}
		if !k.has("cond") {
			d.missing(n, "until: missing cond (the condition that ends the wait)")
		}
		if !k.has("timeout") || v.Timeout <= 0 {
			d.errorf(at(n, k, "timeout"), "until: timeout must be positive (the longest wait)")
		}
		if !k.has("interval") {
			v.Interval = time.Second
		} else if v.Interval <= 0 {
			d.errorf(at(n, k, "interval"), "until: interval must be positive")
		}
		if len(v.Steps) == 0 {
			d.errorf(at(n, k, "steps"), "until has no steps (the polling request)")
		}
		d.checkOnFail(v.OnFail, at(n, k, "on_fail"))
	case *Trend:
		if strings.TrimSpace(v.Name) == "" {
			d.errorf(at(n, k, "name"), "trend: missing name (the label its values are recorded under)")
		}
		if !k.has("value") || v.Value == nil || strings.TrimSpace(v.Value.Raw) == "" {
			d.errorf(at(n, k, "value"), "trend: missing value (milliseconds or a duration, e.g. \"${server_ms}\" or \"${t}ms\")")
		}
	case *Rendezvous:
		if v.Name == "" {
			v.Name = "rendezvous"
		}
		if v.Users < 2 {
			d.errorf(at(n, k, "users"), "rendezvous: users must be at least 2")
		}
		if !k.has("timeout") {
			v.Timeout = 30 * time.Second
		} else if v.Timeout <= 0 {
			d.errorf(at(n, k, "timeout"), "rendezvous: timeout must be positive")
		}
	case *Load:
		d.checkLoad(v, n, k)
	case *LoadSearch:
		d.checkSearch(v, n, k)
	case *Stage:
		switch {
		case k.has("rate") && k.has("users"):
			d.errorf(n, "stage has both rate and users; use one")
		case k.has("users"):
			v.ByUsers = true
			if v.Users < 0 {
				d.errorf(at(n, k, "users"), "stage: users must not be negative")
			}
			if v.Hold {
				d.errorf(at(n, k, "hold"), "stage: hold applies to rate stages; a users stage at the previous count holds")
			}
		case !k.has("rate"):
			d.missing(n, "stage: missing rate or users (reached at the end of the stage)")
		}
		if v.Duration <= 0 {
			d.errorf(at(n, k, "duration"), "stage: duration must be positive")
		}
		if v.ByUsers {
			d.demand(at(n, k, "users"), "users", float64(v.Users), true)
		} else {
			d.demand(at(n, k, "rate"), "rate", float64(v.Rate), true)
		}
	case *LoadStep:
		d.checkLoadStep(v, n, k)
	case *Monitor:
		if k.has("interval") && v.Interval <= 0 {
			d.errorf(at(n, k, "interval"), "monitor: interval must be positive")
		}
	case *ServerSide:
		if k.has("settle") && v.Settle < 0 {
			d.errorf(at(n, k, "settle"), "server_side: settle must not be negative")
		}
	case *History:
		if k.has("db") && strings.TrimSpace(v.DB) == "" {
			d.errorf(at(n, k, "db"), "history: db is empty (leave it out for the default file)")
		}
	}
}

// at returns the value node of key, or the mapping itself when the key is
// absent: the best place to point at.
func at(n *yaml.Node, k keyset, key string) *yaml.Node {
	if p, ok := k[key]; ok {
		return p.val
	}
	return n
}

func (d *decoder) checkHTTP(h *HTTP, n *yaml.Node, k keyset) {
	if k.has("timeout") && h.Timeout <= 0 {
		d.errorf(at(n, k, "timeout"), "http.timeout must be positive")
	}
	if k.has("connect_timeout") && h.ConnectTimeout <= 0 {
		d.errorf(at(n, k, "connect_timeout"), "http.connect_timeout must be positive")
	}
	if h.Redirects < 0 {
		d.errorf(at(n, k, "redirects"), "http.redirects must not be negative")
	}
	if h.MaxBody < 0 {
		d.errorf(at(n, k, "max_body"), "http.max_body must not be negative")
	}
	if h.Connections != ConnPerUser && h.Connections != ConnShared {
		d.errorf(at(n, k, "connections"), "http.connections: %q is not per_user or shared", h.Connections)
	}
	if h.Proxy != "" {
		if u, err := url.Parse(h.Proxy); err != nil || u.Scheme != "http" || u.Host == "" {
			d.errorf(at(n, k, "proxy"), "http.proxy: %q is not an http://host:port URL", h.Proxy)
		}
	}
	if !HTTPVersionOK(h.Version) {
		d.errorf(at(n, k, "version"), "http.version: %q is not 1.1, 2 or auto", h.Version)
	}
	if h.MaxConcurrentStreams < 0 {
		d.errorf(at(n, k, "max_concurrent_streams"), "http.max_concurrent_streams must not be negative")
	}
}

// checkOnFail reports an on_fail value that is not one of the four.
func (d *decoder) checkOnFail(v string, n *yaml.Node) {
	switch v {
	case "", OnFailContinue, OnFailNextIteration, OnFailStopUser, OnFailStopRun:
		return
	}
	d.errorf(n, "on_fail: %q is not continue, next_iteration, stop_user or stop_run", v)
}

func (d *decoder) checkWorkload(w *Workload, n *yaml.Node, k keyset) {
	d.checkOnFail(w.OnFail, at(n, k, "on_fail"))
	if k.has("engine") {
		if !slices.Contains(Engines, w.Engine) {
			d.errorf(at(n, k, "engine"), "workload %q: engine %q is not %s", w.Name, w.Engine, strings.Join(Engines, ", "))
		}
		if w.Script == "" {
			d.missing(n, "workload %q: engine %s needs its script (script: plan.jmx, script.js, locustfile.py)", w.Name, w.Engine)
		}
		if len(w.Scenario) > 0 || len(w.Setup) > 0 || len(w.Teardown) > 0 {
			d.errorf(at(n, k, "engine"), "workload %q: an engine workload runs its script; it has no scenario, setup or teardown of plateau's", w.Name)
		}
		return
	}
	if k.has("script") || k.has("properties") || k.has("env") {
		d.errorf(n, "workload %q: script, properties and env are for a workload with engine: jmeter, k6 or locust", w.Name)
	}
	if len(w.Scenario) == 0 {
		if k.has("scenario") {
			d.errorf(at(n, k, "scenario"), "workload %q: scenario has no steps", w.Name)
		} else {
			d.missing(n, "workload %q: missing scenario", w.Name)
		}
	}
	if !k.has("load") {
		d.missing(n, "workload %q: missing load (e.g. load: {users: 10, duration: 1m})", w.Name)
	}
}

var stepKinds = []string{"request", "think", "transaction", "loop", "if", "choose", "foreach", "until", "rendezvous",
	"websocket", "send", "receive", "grpc", "trend"}

func (d *decoder) checkStep(s *Step, n *yaml.Node, k keyset) {
	var have []string
	for _, kind := range stepKinds {
		if k.has(kind) {
			have = append(have, kind)
		}
	}
	switch {
	case len(have) == 0:
		d.missing(n, "step needs one of %s", strings.Join(stepKinds, ", "))
	case len(have) > 1:
		d.errorf(n, "a step holds one of %s, not both %s and %s; give each its own list item (- …)", strings.Join(stepKinds, ", "), have[0], have[1])
	}
	if len(have) == 1 {
		switch {
		case (have[0] == "send" || have[0] == "receive") && d.inWS == 0:
			d.errorf(k[have[0]].key, "%s: only inside a websocket step's steps (it needs an open connection)", have[0])
		case have[0] == "websocket" && d.inWS > 0:
			d.errorf(k[have[0]].key, "websocket: not inside another websocket (a user holds one connection at a time)")
		}
	}
	// A null "think:" or "request:" left the pointer nil; give it a value so
	// the engine can rely on exactly one being set.
	if len(have) == 1 {
		switch have[0] {
		case "request":
			if s.Request == nil {
				s.Request = &Request{Method: "GET"}
				d.checkRequest(s.Request, k["request"].val, keyset{})
			}
		case "think":
			if s.Think == nil {
				d.errorf(k["think"].val, "think: missing duration, e.g. think: 1s")
				s.Think = &Think{}
			}
		case "loop":
			if s.Loop == nil {
				d.errorf(k["loop"].val, "loop: missing count and steps")
				s.Loop = &Loop{}
			}
		case "choose":
			if len(s.Choose) == 0 {
				d.errorf(k["choose"].val, "choose: no branches; give a list of {weight: N, steps: […]}")
				s.Choose = []Branch{{Weight: 1}}
			}
		default:
			if reflect.ValueOf(s).Elem().FieldByIndex([]int{fieldIndex(have[0])}).IsNil() {
				d.errorf(k[have[0]].val, "%s: missing its fields", have[0])
			}
		}
	}
}

// fieldIndex is the index of the Step field with yaml tag key.
func fieldIndex(key string) int {
	byKey, _, _ := fieldsOf(reflect.TypeOf(Step{}))
	return byKey[key]
}

func (d *decoder) checkRequest(r *Request, n *yaml.Node, k keyset) {
	d.checkOnFail(r.OnFail, at(n, k, "on_fail"))
	if !k.has("url") {
		d.missing(n, "request: missing url")
	} else if !urlStartOK(&r.URL) {
		d.errorf(at(n, k, "url"), "url %q must start with / (relative to target) or http:// or https://", r.URL.Raw)
	}
	r.Method = strings.ToUpper(strings.TrimSpace(r.Method))
	if !isToken(r.Method) {
		d.errorf(at(n, k, "method"), "bad method %q", r.Method)
	}
	var bodies []string
	for _, b := range []string{"body", "json", "form", "body_file", "multipart"} {
		if k.has(b) {
			bodies = append(bodies, b)
		}
	}
	if len(bodies) > 1 {
		d.errorf(at(n, k, bodies[1]), "request has both %s and %s; use one", bodies[0], bodies[1])
	}
	if r.BodyFile != "" {
		r.BodyFile = d.readable(at(n, k, "body_file"), "body_file", r.BodyFile)
	}
	if !HTTPVersionOK(r.HTTPVersion) {
		d.errorf(at(n, k, "http_version"), "http_version: %q is not 1.1, 2 or auto", r.HTTPVersion)
	}
	if r.Timeout < 0 {
		d.errorf(at(n, k, "timeout"), "request timeout must be positive")
	}
	if k.has("name") && strings.TrimSpace(r.Name) == "" {
		d.errorf(at(n, k, "name"), "request name is empty")
	}
	if r.Name == "" {
		r.Name = defaultRequestName(r.Method, r.URL.Raw)
	}
	for _, c := range r.Cookies {
		if !isToken(c.Name) || c.Key != nil {
			d.errorf(at(n, k, "cookies"), "request cookies: bad cookie name %q", c.Name)
		}
	}
	for _, c := range r.Checks {
		if len(c.Code) > 0 || c.MinMessages != 0 || c.MaxMessages != 0 {
			d.errAt(c.Pos, at(n, k, "check"), "check: code, min_messages and max_messages apply to grpc steps; an HTTP check gives status:")
		}
	}
	if r.Redirects != nil && *r.Redirects < 0 {
		d.errorf(at(n, k, "redirects"), "request redirects must not be negative")
	}
}

// checkWebSocket checks a websocket step and names its labels: the
// session Name, "Name connect", and "Name send" / "Name receive" for the
// unnamed send and receive steps inside.
func (d *decoder) checkWebSocket(w *WebSocket, n *yaml.Node, k keyset) {
	d.checkOnFail(w.OnFail, at(n, k, "on_fail"))
	if !k.has("url") {
		d.missing(n, "websocket: missing url")
	} else if !wsURLStartOK(&w.URL) {
		d.errorf(at(n, k, "url"), "websocket url %q must start with / (relative to target), ws:// or wss://", w.URL.Raw)
	}
	if k.has("timeout") && w.Timeout <= 0 {
		d.errorf(at(n, k, "timeout"), "websocket: timeout must be positive")
	}
	if len(w.Steps) == 0 {
		d.errorf(at(n, k, "steps"), "websocket has no steps (send and receive steps)")
	}
	if k.has("name") && strings.TrimSpace(w.Name) == "" {
		d.errorf(at(n, k, "name"), "websocket name is empty")
	}
	if w.Name == "" {
		w.Name = "WS " + strings.TrimPrefix(defaultRequestName("", wsToHTTP(w.URL.Raw)), " ")
	}
	walkSteps(w.Steps, func(s *Step) {
		switch {
		case s.Send != nil && s.Send.Name == "":
			s.Send.Name = w.Name + " send"
		case s.Receive != nil && s.Receive.Name == "":
			s.Receive.Name = w.Name + " receive"
		}
	})
}

// WSConnectLabel is the label of a websocket's opening handshake.
func WSConnectLabel(name string) string { return name + " connect" }

func wsURLStartOK(t *Template) bool {
	if len(t.Parts) == 0 || !t.Parts[0].IsLit() {
		return false
	}
	l := strings.ToLower(t.Parts[0].Lit)
	return strings.HasPrefix(l, "/") || strings.HasPrefix(l, "ws://") || strings.HasPrefix(l, "wss://")
}

// wsToHTTP maps a ws:// or wss:// URL to http:// or https://.
func wsToHTTP(u string) string {
	switch l := strings.ToLower(u); {
	case strings.HasPrefix(l, "ws://"):
		return "http://" + u[5:]
	case strings.HasPrefix(l, "wss://"):
		return "https://" + u[6:]
	}
	return u
}

// urlStartOK reports whether a request URL is a path or an absolute
// http(s) URL once ${env.*} is substituted.
func urlStartOK(t *Template) bool {
	if len(t.Parts) == 0 || !t.Parts[0].IsLit() {
		return false
	}
	lit := t.Parts[0].Lit
	return strings.HasPrefix(lit, "/") || hasHTTPScheme(lit)
}

func hasHTTPScheme(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// defaultRequestName is the label of an unnamed request: the method and
// the URL's path without query, e.g. "GET /allergies".
func defaultRequestName(method, raw string) string {
	p := raw
	if hasHTTPScheme(p) {
		rest := p[strings.Index(p, "//")+2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			p = rest[i:]
		} else {
			p = "/"
		}
	}
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		p = "/"
	}
	return method + " " + p
}

func (d *decoder) checkExtract(e *Extract, n *yaml.Node, k keyset) {
	var src []string
	for _, s := range []string{"json", "regex", "header", "cookie", "left", "css", "xpath"} {
		if k.has(s) {
			src = append(src, s)
		}
	}
	switch e.Pick {
	case "", "first", "last", "random":
	default:
		d.errorf(at(n, k, "pick"), "extract: pick %q is not first, last or random", e.Pick)
	}
	if e.All && k.has("pick") {
		d.errorf(k["pick"].key, "extract: give all or pick, not both")
	}
	switch {
	case len(src) == 0:
		d.missing(n, "extract needs one of json, regex, header, cookie, left+right, css, xpath")
		return
	case len(src) > 1:
		d.errorf(at(n, k, src[1]), "extract has both %s and %s; use one", src[0], src[1])
		return
	}
	if k.has("right") && src[0] != "left" {
		d.errorf(k["right"].key, "extract: right goes with left (boundary extraction)")
	}
	if k.has("attr") && src[0] != "css" {
		d.errorf(k["attr"].key, "extract: attr applies to css")
	}
	if e.AsJSON && src[0] != "json" {
		d.errorf(k["as_json"].key, "extract: as_json applies to json")
	}
	if e.AsJSON && e.All {
		d.errorf(k["as_json"].key, "extract: give all or as_json, not both (all is already a JSON list)")
	}
	if (e.All || e.Pick != "") && (src[0] == "header" || src[0] == "cookie") {
		d.errorf(at(n, k, "all"), "extract: all and pick apply to json, regex, left+right, css and xpath")
	}
	switch src[0] {
	case "json":
		if _, err := expr.ParsePath(e.JSON); err != nil {
			d.errorf(at(n, k, "json"), "extract: %v", err)
		}
	case "regex":
		_, err := regexp.Compile(e.Regex)
		switch {
		case e.Regex == "":
			d.errorf(at(n, k, "regex"), "extract: empty regex")
		case err != nil:
			d.errorf(at(n, k, "regex"), "extract: bad regex: %v", err)
		}
	case "header":
		if !isToken(e.Header) {
			d.errorf(at(n, k, "header"), "extract: bad header name %q", e.Header)
		}
	case "cookie":
		if !isToken(e.Cookie) {
			d.errorf(at(n, k, "cookie"), "extract: bad cookie name %q", e.Cookie)
		}
	case "left":
		if e.Left == "" || !k.has("right") || e.Right == "" {
			d.errorf(at(n, k, "left"), "extract: boundary extraction needs a non-empty left and right")
		}
	case "css":
		if _, err := selector.CompileCSS(e.CSS, e.Attr); err != nil {
			d.errorf(at(n, k, "css"), "extract: %v", err)
		}
	case "xpath":
		if _, err := selector.CompileXPath(e.XPath); err != nil {
			d.errorf(at(n, k, "xpath"), "extract: %v", err)
		}
	}
}

// loadKeys lists, per load model, the keys that apply to it.
var loadKeys = map[string][]string{
	"closed":  {"users", "ramp_up", "duration", "iterations", "start_after", "graceful_stop", "ramp_down", "search"},
	"pacing":  {"users", "pace", "duration", "start_after", "graceful_stop", "search"},
	"open":    {"rate", "duration", "max_users", "start_after", "graceful_stop", "ramp_down", "search"},
	"stages":  {"stages", "max_users", "start_after", "graceful_stop", "ramp_down"},
	"stepped": {"steps", "stop_when", "max_users", "start_after", "graceful_stop", "ramp_down"},
}

// loadModel returns the model a load's keys select, the keys that select
// each candidate model, and how many models were selected.
func loadModel(k keyset) (model string, selected []string) {
	add := func(m, key string) {
		selected = append(selected, fmt.Sprintf("%s (%s)", m, key))
		model = m
	}
	if k.has("steps") {
		add("stepped", "steps")
	}
	if k.has("stages") {
		add("stages", "stages")
	}
	if k.has("rate") {
		add("open", "rate")
	}
	if k.has("pace") {
		add("pacing", "pace")
	} else if k.has("users") {
		add("closed", "users")
	}
	return model, selected
}

func (d *decoder) checkLoad(l *Load, n *yaml.Node, k keyset) {
	model, selected := loadModel(k)
	switch {
	case len(selected) == 0:
		d.missing(n, "load: no load model; give users+duration (closed), users+iterations, users+pace+duration (pacing), rate+duration (open), stages, or steps")
		return
	case len(selected) > 1:
		d.errorf(n, "load mixes %d load models: %s; use exactly one", len(selected), strings.Join(selected, " and "))
		return
	}
	allowed := map[string]bool{}
	for _, key := range loadKeys[model] {
		allowed[key] = true
	}
	for key, p := range k {
		if !allowed[key] {
			d.errorf(p.key, "%s does not apply to the %s load model (keys: %s)", key, model, strings.Join(loadKeys[model], ", "))
		}
	}
	positive := func(key string, v int) {
		if v < 1 {
			d.errorf(at(n, k, key), "load: %s must be at least 1", key)
		}
	}
	needDuration := func() {
		if !k.has("duration") && k.has("search") {
			return // the search gives each probe its duration
		}
		if !k.has("duration") {
			d.missing(n, "load: the %s model needs a duration", model)
		} else if l.Duration <= 0 {
			d.errorf(at(n, k, "duration"), "load: duration must be positive")
		}
	}
	if k.has("users") {
		d.demand(at(n, k, "users"), "users", float64(l.Users), true)
	}
	if k.has("rate") {
		d.demand(at(n, k, "rate"), "rate", float64(l.Rate), true)
	}
	switch model {
	case "closed":
		positive("users", l.Users)
		switch {
		case k.has("duration") && k.has("iterations"):
			d.errorf(k["iterations"].key, "load: give duration or iterations, not both")
		case k.has("iterations"):
			positive("iterations", l.Iterations)
		case !k.has("duration") && !k.has("search"):
			d.missing(n, "load: the closed model needs duration or iterations")
		default:
			needDuration()
			if l.RampUp > l.Duration && l.Duration > 0 {
				d.errorf(at(n, k, "ramp_up"), "load: ramp_up %s is longer than duration %s", l.RampUp, l.Duration)
			}
		}
	case "pacing":
		if !k.has("users") {
			d.missing(n, "load: pacing needs users")
		} else {
			positive("users", l.Users)
		}
		if l.Pace <= 0 {
			d.errorf(at(n, k, "pace"), "load: pace must be positive")
		}
		needDuration()
	case "open":
		if l.Rate <= 0 {
			d.errorf(at(n, k, "rate"), "load: rate must be positive")
		}
		needDuration()
	case "stages":
		var peak Rate
		peakUsers := 0
		for _, s := range l.Stages {
			peak = max(peak, s.Rate)
			peakUsers = max(peakUsers, s.Users)
		}
		byUsers := len(l.Stages) > 0 && l.Stages[0].ByUsers
		for i, s := range l.Stages {
			if s.ByUsers != byUsers {
				d.errorf(at(n, k, "stages"), "load: stage %d uses %s while stage 1 uses %s; all stages use users or all use rate",
					i+1, map[bool]string{true: "users", false: "rate"}[s.ByUsers], map[bool]string{true: "users", false: "rate"}[byUsers])
				break
			}
		}
		switch {
		case len(l.Stages) == 0:
			d.errorf(at(n, k, "stages"), "load: stages is empty")
		case byUsers && peakUsers <= 0:
			d.errorf(at(n, k, "stages"), "load: every stage has 0 users")
		case !byUsers && peak <= 0:
			d.errorf(at(n, k, "stages"), "load: every stage has rate 0")
		}
		if byUsers && k.has("max_users") {
			d.errorf(k["max_users"].key, "max_users applies to rate stages (the open model)")
		}
	case "stepped":
		d.checkSteps(l, n, k)
	}
	if !k.has("graceful_stop") {
		l.GracefulStop = DefaultGracefulStop
	}
	if k.has("search") {
		d.checkLoadSearch(l, model, n, k)
	}
	if k.has("ramp_down") && l.RampDown <= 0 {
		d.errorf(at(n, k, "ramp_down"), "load: ramp_down must be positive")
	}
	if model == "stepped" && k.has("ramp_down") && len(l.Steps) > 0 && l.Steps[0].Rate > 0 {
		d.errorf(k["ramp_down"].key, "load: ramp_down applies to steps of users; for steps of rate use stages of rate with ramp_down, or a last step at a low rate")
	}
	userStages := model == "stages" && len(l.Stages) > 0 && l.Stages[0].ByUsers
	if userStages && k.has("ramp_down") {
		d.errorf(k["ramp_down"].key, "load: stages of users ramp down with a last stage to 0 users ({users: 0, duration: 30s}), not ramp_down")
	}
	if model == "open" || (model == "stages" && !userStages) || (model == "stepped" && len(l.Steps) > 0 && l.Steps[0].Rate > 0) {
		if !k.has("max_users") {
			l.MaxUsers = DefaultMaxUsers
		} else {
			positive("max_users", l.MaxUsers)
			d.demand(at(n, k, "max_users"), "max_users", float64(l.MaxUsers), true)
		}
	} else if k.has("max_users") {
		d.errorf(k["max_users"].key, "max_users applies only to the open model (rate)")
	}
}

func (d *decoder) checkSteps(l *Load, n *yaml.Node, k keyset) {
	if len(l.Steps) == 0 {
		d.errorf(at(n, k, "steps"), "load: steps is empty")
		return
	}
	seq := d.resolve(k["steps"].val)
	itemPos := func(i int) *yaml.Node {
		if seq != nil && seq.Kind == yaml.SequenceNode && i < len(seq.Content) {
			return seq.Content[i]
		}
		return n
	}
	byRate := l.Steps[0].Rate > 0
	names := map[string]int{}
	for i := range l.Steps {
		s := &l.Steps[i]
		if (s.Rate > 0) != byRate && (s.Rate > 0 || s.Users > 0) {
			d.errorf(itemPos(i), "load step %d uses %s while step 1 uses %s; all steps use users or all use rate",
				i+1, map[bool]string{true: "rate", false: "users"}[s.Rate > 0], map[bool]string{true: "rate", false: "users"}[byRate])
		}
		if s.Name == "" {
			s.Name = "step " + strconv.Itoa(i+1)
		}
		if j, dup := names[s.Name]; dup {
			d.errorf(itemPos(i), "load step %d has the same name as step %d: %q", i+1, j+1, s.Name)
		}
		names[s.Name] = i
	}
}

func (d *decoder) checkLoadStep(s *LoadStep, n *yaml.Node, k keyset) {
	switch {
	case k.has("users") && k.has("rate"):
		d.errorf(n, "load step has both users and rate; use one")
	case k.has("users"):
		if s.Users < 1 {
			d.errorf(at(n, k, "users"), "load step: users must be at least 1")
		}
		d.demand(at(n, k, "users"), "users", float64(s.Users), true)
	case k.has("rate"):
		if s.Rate <= 0 {
			d.errorf(at(n, k, "rate"), "load step: rate must be positive")
		}
		d.demand(at(n, k, "rate"), "rate", float64(s.Rate), true)
		for _, key := range []string{"pace", "ramp_up"} {
			if k.has(key) {
				d.errorf(k[key].key, "load step: %s applies only to steps of users", key)
			}
		}
	default:
		d.missing(n, "load step needs users or rate")
	}
	if !k.has("duration") || s.Duration <= 0 {
		d.errorf(at(n, k, "duration"), "load step: duration must be positive")
	} else if s.RampUp > s.Duration {
		d.errorf(at(n, k, "ramp_up"), "load step: ramp_up %s is longer than duration %s", s.RampUp, s.Duration)
	}
	if k.has("pace") && s.Pace <= 0 {
		d.errorf(at(n, k, "pace"), "load step: pace must be positive")
	}
}

// feeders reads data: a mapping name → feeder ({csv: …} or just the path)
// and loads each CSV file.
func (d *decoder) feeders(n *yaml.Node, key string) map[string]*Feeder {
	ps, ok := d.mapping(n, key, "a mapping of name → {csv: file}")
	if !ok {
		return nil
	}
	out := make(map[string]*Feeder, len(ps))
	for _, p := range ps {
		name := p.key.Value
		if !isIdent(name) || name == "env" {
			d.errorf(p.key, "bad data name %q: use letters, digits, _ and - (it is used as ${%s.column})", name, name)
		}
		f := &Feeder{Name: name}
		d.preset(f)
		v := d.resolve(p.val)
		var k keyset
		if v != nil && v.Kind == yaml.ScalarNode && !isNull(v) {
			// Short form "patients: patients.csv" (or .json, .ndjson).
			file, _ := d.str(v, "data."+name)
			key := "csv"
			switch {
			case strings.HasSuffix(strings.ToLower(file), ".ndjson") || strings.HasSuffix(strings.ToLower(file), ".jsonl"):
				f.NDJSON, key = file, "ndjson"
			case strings.HasSuffix(strings.ToLower(file), ".json"):
				f.JSON, key = file, "json"
			default:
				f.CSV = file
			}
			k = keyset{key: {key: p.key, val: v}}
		} else {
			k = d.decodeStruct(v, f)
		}
		f.Pos = d.pos(p.key)
		out[name] = f
		if !d.checkFeeder(f, v, k) {
			d.badData[name] = true
		}
	}
	return out
}

// checkFeeder validates a feeder's options, sets its dependent defaults
// and reads its CSV file. It reports whether the data is usable.
func (d *decoder) checkFeeder(f *Feeder, n *yaml.Node, k keyset) bool {
	switch f.Order {
	case OrderSequential, OrderRandom, OrderUnique, OrderPerUser, OrderEachUser:
	default:
		d.errorf(at(n, k, "order"), "data %q: order %q is not sequential, random, unique, per_user or each_user", f.Name, f.Order)
	}
	switch {
	case k.has("on_end") && k.has("on_exhausted"):
		d.errorf(k["on_exhausted"].key, "data %q: give on_end or on_exhausted, not both", f.Name)
	case k.has("on_end"):
		switch f.OnEnd {
		case ExhaustedRecycle:
			f.OnExhausted = ExhaustedRecycle
		case EndStopUser, EndStopRun:
			f.OnExhausted = ExhaustedStop
		default:
			d.errorf(at(n, k, "on_end"), "data %q: on_end %q is not recycle, stop_user or stop_run", f.Name, f.OnEnd)
		}
	}
	switch f.OnExhausted {
	case "":
		f.OnExhausted = ExhaustedRecycle
		if f.Order == OrderUnique {
			f.OnExhausted = ExhaustedStop
		}
	case ExhaustedStop, ExhaustedRecycle:
	default:
		d.errorf(at(n, k, "on_exhausted"), "data %q: on_exhausted %q is not stop or recycle", f.Name, f.OnExhausted)
	}
	if f.Delimiter == `\t` || strings.EqualFold(f.Delimiter, "tab") {
		f.Delimiter = "\t"
	}
	if r := []rune(f.Delimiter); len(r) != 1 || r[0] == '"' || r[0] == '\n' || r[0] == '\r' {
		d.errorf(at(n, k, "delimiter"), "data %q: delimiter must be one character other than \" and newline", f.Name)
		return false
	}
	var srcs []string
	for _, s := range []string{"csv", "json", "ndjson", "generate"} {
		if k.has(s) {
			srcs = append(srcs, s)
		}
	}
	switch {
	case len(srcs) == 0:
		d.errorf(at(n, k, "csv"), "data %q: missing csv, json or ndjson (the file), or generate", f.Name)
		return false
	case len(srcs) > 1:
		d.errorf(at(n, k, srcs[1]), "data %q: has both %s and %s; use one", f.Name, srcs[0], srcs[1])
		return false
	}
	if k.has("columns") && srcs[0] != "csv" {
		d.errorf(k["columns"].key, "data %q: columns applies to a headerless csv", f.Name)
	}
	if k.has("delimiter") && srcs[0] != "csv" {
		d.errorf(k["delimiter"].key, "data %q: delimiter applies to csv", f.Name)
	}
	if srcs[0] == "generate" {
		return d.generateFeeder(f, at(n, k, "generate"))
	}
	file := map[string]string{"csv": f.CSV, "json": f.JSON, "ndjson": f.NDJSON}[srcs[0]]
	if file == "" {
		d.errorf(at(n, k, srcs[0]), "data %q: %s: empty file name", f.Name, srcs[0])
		return false
	}
	path := file
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.dir, path)
	}
	if d.prepare {
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			// A prepare: command may write it; the CLI loads the plan
			// again after the prepare commands, and reports it then.
			f.Pending = true
			return false
		}
	}
	var cols []string
	var rows [][]string
	var ferr *Error
	switch srcs[0] {
	case "csv":
		if k.has("columns") {
			if err := checkColumns(f.Declared); err != "" {
				d.errorf(at(n, k, "columns"), "data %q: %s", f.Name, err)
				return false
			}
		}
		cols, rows, f.Index, ferr = readCSV(path, []rune(f.Delimiter)[0], f.Declared, d.opt.FeederInMemory)
	default:
		cols, rows, ferr = readJSONData(path, srcs[0] == "ndjson")
	}
	if ferr != nil {
		if ferr.File == "" {
			// The file could not be opened: point at the csv: line.
			d.errorf(at(n, k, srcs[0]), "data %q: %s", f.Name, ferr.Msg)
		} else {
			ferr.Msg = fmt.Sprintf("%s (data %q)", ferr.Msg, f.Name)
			d.errs = append(d.errs, *ferr)
		}
		return false
	}
	f.Columns, f.Rows = cols, rows
	return true
}

// monitorFields lists, per target kind, the fields that apply to it.
var monitorFields = map[string][]string{
	"host":       {"name", "path", "interval", "role"},
	"process":    {"name", "pid", "pid_file", "match", "children", "interval", "role"},
	"jvm":        {"name", "pid", "pid_file", "match", "interval", "role"},
	"cgroup":     {"name", "path", "pid", "interval", "role"},
	"postgres":   {"name", "dsn", "interval", "role"},
	"prometheus": {"name", "url", "targets", "series", "interval", "role"},
}

// optionKinds are the monitor kinds that parse their own fields: the plan
// reads name and interval and hands every other key to the kind as
// MonitorTarget.Options, checked by CheckMonitor.
var optionKinds = map[string]bool{"promql": true, "recipe": true, "mysql": true, "cloudwatch": true}

// monitorTargets reads monitor.targets: a list of single-key mappings
// kind → fields ("- host: {}", "- process: {match: java}"); a bare kind
// ("- host") is a target with no fields.
func (d *decoder) monitorTargets(n *yaml.Node, key string) []MonitorTarget {
	if n.Kind != yaml.SequenceNode {
		d.typeErr(n, key, "a list of targets such as - host: {}")
		return nil
	}
	kinds := make([]string, 0, len(monitorFields)+len(optionKinds))
	for kind := range monitorFields {
		kinds = append(kinds, kind)
	}
	for kind := range optionKinds {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	var out []MonitorTarget
	names := map[string]Pos{}
	for _, item := range n.Content {
		item = d.resolve(item)
		if item == nil {
			continue
		}
		var kindNode, body *yaml.Node
		switch {
		case item.Kind == yaml.ScalarNode && !isNull(item):
			kindNode = item
		case item.Kind == yaml.MappingNode && len(d.pairs(item)) == 1:
			p := d.pairs(item)[0]
			kindNode, body = p.key, p.val
		default:
			d.errorf(item, "monitor target: expected one kind (%s) with its fields, e.g. - process: {match: java}", strings.Join(kinds, ", "))
			continue
		}
		kind := kindNode.Value
		if optionKinds[kind] {
			t, ok := d.optionTarget(kind, kindNode, body)
			if !ok {
				continue
			}
			if prev, dup := names[t.Name]; dup {
				d.errorf(kindNode, "monitor target name %q is used twice (first at %d:%d); set name: to tell them apart", t.Name, prev.Line, prev.Col)
			}
			names[t.Name] = t.Pos
			out = append(out, t)
			continue
		}
		allowedList, known := monitorFields[kind]
		if !known {
			msg := fmt.Sprintf("unknown monitor target kind %q (kinds: %s)", kind, strings.Join(kinds, ", "))
			if s := suggest(kind, kinds); s != "" {
				msg = fmt.Sprintf("unknown monitor target kind %q (did you mean %q?)", kind, s)
			}
			d.errorf(kindNode, "%s", msg)
			continue
		}
		t := MonitorTarget{Kind: kind}
		k := d.decodeStruct(body, &t)
		t.Pos = d.pos(kindNode)
		allowed := map[string]bool{}
		for _, f := range allowedList {
			allowed[f] = true
		}
		for f, p := range k {
			if !allowed[f] {
				d.errorf(p.key, "%s does not apply to a %s target (fields: %s)", f, kind, strings.Join(allowedList, ", "))
			}
		}
		d.checkMonitorTarget(&t, kindNode, k)
		if d.opt.CheckMonitor != nil {
			if err := d.opt.CheckMonitor(&t); err != nil {
				d.errorf(kindNode, "%s target: %v", kind, err)
			}
		}
		if prev, dup := names[t.Name]; dup {
			d.errorf(kindNode, "monitor target name %q is used twice (first at %d:%d); set name: to tell them apart", t.Name, prev.Line, prev.Col)
		}
		names[t.Name] = t.Pos
		out = append(out, t)
	}
	return out
}

// optionTarget reads a target of a kind that parses its own fields: name
// and interval here, everything else into Options for the kind's checks.
func (d *decoder) optionTarget(kind string, kindNode, body *yaml.Node) (MonitorTarget, bool) {
	t := MonitorTarget{Kind: kind, Pos: d.pos(kindNode), Options: map[string]any{}}
	body = d.resolve(body)
	if !isNull(body) {
		if body.Kind != yaml.MappingNode {
			d.errorf(body, "%s target: expected a mapping of fields", kind)
			return t, false
		}
		common := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: body.Line, Column: body.Column}
		for _, p := range d.pairs(body) {
			switch p.key.Value {
			case "name", "interval", "role":
				common.Content = append(common.Content, p.key, p.val)
			default:
				t.Options[p.key.Value] = d.optionValue(p.val, p.key.Value, 0)
			}
		}
		k := d.decodeStruct(common, &t)
		if k.has("interval") && t.Interval <= 0 {
			d.errorf(at(common, k, "interval"), "%s target: interval must be positive", kind)
		}
		d.checkRole(&t, common, k)
	}
	t.Pos = d.pos(kindNode)
	if d.opt.CheckMonitor != nil {
		if err := d.opt.CheckMonitor(&t); err != nil {
			d.errorf(kindNode, "%s target: %v", kind, err)
		}
	}
	if t.Name == "" {
		t.Name = kind
	}
	return t, true
}

// optionValue decodes a monitor option generically: mappings, lists and
// scalars, with ${env.*} substituted in text as everywhere else in a plan.
func (d *decoder) optionValue(n *yaml.Node, key string, depth int) any {
	n = d.resolve(n)
	if isNull(n) || depth > 20 {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for _, p := range d.pairs(n) {
			m[p.key.Value] = d.optionValue(p.val, key+"."+p.key.Value, depth+1)
		}
		return m
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			l = append(l, d.optionValue(c, key, depth+1))
		}
		return l
	}
	if n.Tag == "!!str" || n.Style != 0 {
		s, _ := d.str(n, key)
		return s
	}
	var v any
	if err := n.Decode(&v); err != nil {
		d.errorf(n, "%s: %v", key, err)
	}
	return v
}

// monitorRoles are the roles a monitor target may state.
var monitorRoles = []string{"system_under_test", "sut", "generator", "database", "balancer"}

// checkRole rejects an unknown role.
func (d *decoder) checkRole(t *MonitorTarget, n *yaml.Node, k keyset) {
	if k.has("role") && !slices.Contains(monitorRoles, t.Role) {
		d.errorf(at(n, k, "role"), "%s target: unknown role %q (roles: %s)", t.Kind, t.Role, strings.Join(monitorRoles, ", "))
	}
}

func (d *decoder) checkMonitorTarget(t *MonitorTarget, n *yaml.Node, k keyset) {
	if k.has("interval") && t.Interval <= 0 {
		d.errorf(at(n, k, "interval"), "%s target: interval must be positive", t.Kind)
	}
	d.checkRole(t, n, k)
	def := t.Kind
	switch t.Kind {
	case "process", "jvm":
		var sel []string
		for _, f := range []string{"pid", "pid_file", "match"} {
			if k.has(f) {
				sel = append(sel, f)
			}
		}
		if len(sel) != 1 {
			d.missing(n, "%s target needs exactly one of pid, pid_file, match", t.Kind)
		}
		switch {
		case t.Match != "":
			def = t.Match
		case t.PidFile != "":
			def = strings.TrimSuffix(filepath.Base(t.PidFile), ".pid")
		case t.Pid > 0:
			def = t.Kind + " " + strconv.Itoa(t.Pid)
		}
		if k.has("pid") && t.Pid < 1 {
			d.errorf(at(n, k, "pid"), "%s target: pid must be positive", t.Kind)
		}
	case "cgroup":
		if t.Path == "" {
			d.missing(n, "cgroup target needs path (e.g. /sys/fs/cgroup/system.slice/app.service)")
		}
		def = filepath.Base(t.Path)
	case "postgres":
		if t.DSN == "" {
			d.missing(n, "postgres target needs dsn (e.g. postgres://user@127.0.0.1:5432/db)")
		}
	case "prometheus":
		u, err := url.Parse(t.URL)
		if t.URL == "" && len(t.Targets) > 0 {
			def = t.Targets[0]
			break // the monitor package checks the endpoints
		}
		if t.URL == "" || err != nil || !hasHTTPScheme(t.URL) || u.Host == "" {
			d.errorf(at(n, k, "url"), "prometheus target needs url, an http(s) URL such as http://127.0.0.1:9100/metrics")
		} else {
			def = u.Host
		}
	}
	if t.Name == "" {
		t.Name = def
	}
}

// checkPlan runs the checks that need the whole plan: required top-level
// keys and every ${variable} against what is defined.
func (d *decoder) checkPlan(p *Plan, n *yaml.Node, k keyset) {
	if strings.TrimSpace(p.Name) == "" {
		d.errorf(at(n, k, "name"), "plan: missing name")
	} else if strings.ContainsAny(p.Name, `/\`) {
		d.errorf(at(n, k, "name"), "plan name %q must not contain / or \\ (it names the run directory)", p.Name)
	}
	d.checkTarget(p, n, k)
	if err := locale.Check(p.Lang); err != nil {
		d.errorf(at(n, k, "lang"), "lang: %v", err)
	}
	switch {
	case len(p.Workloads) > 0:
	case !k.has("workloads"):
		d.missing(n, "plan: missing workloads")
	default:
		d.errorf(at(n, k, "workloads"), "plan: workloads is empty")
	}
	d.checkRefs(p)
	d.checkMachine(p)
}

func (d *decoder) checkTarget(p *Plan, n *yaml.Node, k keyset) {
	if !k.has("target") || p.Target == "" {
		d.errorf(at(n, k, "target"), "plan: missing target (the base URL, e.g. http://127.0.0.1:8080)")
		return
	}
	u, err := url.Parse(p.Target)
	switch {
	case err != nil || !hasHTTPScheme(p.Target):
		d.errorf(at(n, k, "target"), "target %q must be an http:// or https:// URL", p.Target)
	case u.Host == "":
		d.errorf(at(n, k, "target"), "target %q has no host", p.Target)
	case u.RawQuery != "" || u.Fragment != "":
		d.errorf(at(n, k, "target"), "target %q must not have a query or fragment", p.Target)
	default:
		p.Target = strings.TrimRight(p.Target, "/")
	}
}

// walkSteps calls fn for every step of steps and then for the steps
// nested in it (transactions, loops, if/else, choose branches, foreach,
// until), in plan order.
func walkSteps(steps []Step, fn func(*Step)) {
	for i := range steps {
		s := &steps[i]
		fn(s)
		switch {
		case s.Request != nil, s.GRPC != nil: // a leaf
		case s.Transaction != nil:
			walkSteps(s.Transaction.Steps, fn)
		case s.Loop != nil:
			walkSteps(s.Loop.Steps, fn)
		case s.If != nil:
			walkSteps(s.If.Steps, fn)
			walkSteps(s.If.Else, fn)
		case s.Choose != nil:
			for _, b := range s.Choose {
				walkSteps(b.Steps, fn)
			}
		case s.Foreach != nil:
			walkSteps(s.Foreach.Steps, fn)
		case s.Until != nil:
			walkSteps(s.Until.Steps, fn)
		case s.WebSocket != nil:
			walkSteps(s.WebSocket.Steps, fn)
		}
	}
}

// walkRequests calls fn for every request of a workload, in setup,
// scenario and teardown, inside transactions and loops.
func walkRequests(w *Workload, fn func(*Request)) {
	visit := func(s *Step) {
		if s.Request != nil {
			fn(s.Request)
		}
	}
	walkSteps(w.Setup, visit)
	walkSteps(w.Scenario, visit)
	walkSteps(w.Teardown, visit)
}

// checkRefs reports every ${name} that nothing defines. Defined are: the
// plan's vars, data columns as data.column, built-ins, and variables
// extracted by any request of the same workload. Plan-level templates
// (http.headers) may use an extracted variable only if every workload
// extracts it.
func (d *decoder) checkRefs(p *Plan) {
	for _, r := range d.refs {
		if IsBuiltin(r.name) {
			continue
		}
		if _, ok := p.Vars[r.name]; ok {
			continue
		}
		if feeder, col, dotted := strings.Cut(r.name, "."); dotted {
			f := p.Data[feeder]
			switch {
			case f == nil:
				msg := fmt.Sprintf("undefined variable ${%s}: no data named %q", r.name, feeder)
				if s := suggest(feeder, sortedKeys(p.Data)); s != "" {
					msg += fmt.Sprintf(" (did you mean ${%s.%s}?)", s, col)
				}
				d.errAt(r.pos, r.node, msg)
			case d.badData[feeder]:
				// Its CSV failed to load; that error is enough.
			case !contains(f.Columns, col):
				msg := fmt.Sprintf("undefined variable ${%s}: data %q has no column %q (columns: %s)", r.name, feeder, col, strings.Join(f.Columns, ", "))
				d.errAt(r.pos, r.node, msg)
			}
			continue
		}
		if r.wl != nil && d.extracted[r.wl][r.name] || d.extracted[d.runWl][r.name] {
			continue
		}
		if r.wl == nil && len(p.Workloads) > 0 && d.extractedByAll(p, r.name) {
			continue
		}
		msg := fmt.Sprintf("undefined variable ${%s}", r.name)
		if s := suggest(r.name, d.definedNames(p, r.wl)); s != "" {
			msg += fmt.Sprintf(" (did you mean ${%s}?)", s)
		}
		if r.wl == nil && d.extractedByAny(p, r.name) {
			msg += "; http.headers may only use a variable that every workload extracts"
		} else if r.wl != nil {
			for _, w := range p.Workloads {
				if d.extracted[w][r.name] {
					msg += fmt.Sprintf("; workload %q extracts it, but variables do not cross workloads", w.Name)
					break
				}
			}
		}
		d.errAt(r.pos, r.node, msg)
	}
}

func (d *decoder) extractedByAll(p *Plan, name string) bool {
	for _, w := range p.Workloads {
		if !d.extracted[w][name] {
			return false
		}
	}
	return true
}

func (d *decoder) extractedByAny(p *Plan, name string) bool {
	for _, w := range p.Workloads {
		if d.extracted[w][name] {
			return true
		}
	}
	return false
}

// definedNames lists the variables a template in workload w may use, for
// "did you mean" suggestions.
func (d *decoder) definedNames(p *Plan, w *Workload) []string {
	names := builtins()
	for v := range p.Vars {
		names = append(names, v)
	}
	for v := range d.extracted[w] {
		names = append(names, v)
	}
	for _, f := range p.Data {
		for _, c := range f.Columns {
			names = append(names, f.Name+"."+c)
		}
	}
	sort.Strings(names)
	return names
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Labels lists every label a run of the plan can record, in plan order
// without repeats: request names, transactions and until waits.
func (p *Plan) Labels() []string {
	var out []string
	seen := map[string]bool{}
	add := func(l string) {
		if l != "" && !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	for _, w := range p.Workloads {
		walkSteps(w.Scenario, func(s *Step) {
			switch {
			case s.Request != nil:
				add(s.Request.Name)
			case s.Transaction != nil:
				add(s.Transaction.Name)
			case s.Until != nil:
				add(s.Until.Name)
			case s.WebSocket != nil:
				add(WSConnectLabel(s.WebSocket.Name))
				add(s.WebSocket.Name)
			case s.Send != nil:
				add(s.Send.Name)
			case s.Receive != nil:
				add(s.Receive.Name)
			case s.GRPC != nil:
				add(s.GRPC.Name)
				if s.GRPC.Desc == nil || s.GRPC.Desc.IsStreamingServer() {
					// A server stream's derived labels (reflection: it may be one).
					first, msg := GRPCStreamLabels(s.GRPC.Name)
					add(first)
					add(msg)
				}
			case s.Trend != nil:
				add(s.Trend.Name)
			}
		})
	}
	return out
}

// CheckNames lists the names the plan's checks are counted under: a
// check's name:, else its request's label (with " #N" when the request
// has several checks).
func (p *Plan) CheckNames() []string {
	var out []string
	seen := map[string]bool{}
	add := func(label string, checks []Check) {
		for i, c := range checks {
			name := c.Name
			if name == "" {
				name = CheckName(label, i, len(checks))
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	visit := func(s *Step) {
		switch {
		case s.Request != nil:
			add(s.Request.Name, s.Request.Checks)
		case s.Receive != nil:
			add(s.Receive.Name, s.Receive.Checks)
		case s.Send != nil && s.Send.Reply != nil:
			add(s.Send.Name, s.Send.Reply.Checks)
		case s.GRPC != nil:
			add(s.GRPC.Name, s.GRPC.Checks)
		}
	}
	for _, w := range p.Workloads {
		walkSteps(w.Setup, visit)
		walkSteps(w.Scenario, visit)
		walkSteps(w.Teardown, visit)
	}
	return out
}

// CheckName is the name an unnamed check is counted under: the label of
// its request (or websocket step), with " #i" when it has several.
func CheckName(label string, i, n int) string {
	if n > 1 {
		return label + " #" + strconv.Itoa(i+1)
	}
	return label
}

// HTTPVersionOK reports whether v is an http.version value ("" is the
// default, 1.1).
func HTTPVersionOK(v string) bool {
	switch v {
	case "", HTTP11, HTTP2, HTTPAuto:
		return true
	}
	return false
}

// HTTP versions (http.version, http_version).
const (
	HTTP11   = "1.1"
	HTTP2    = "2"
	HTTPAuto = "auto"
)

// checkTLS resolves http.tls's files relative to the plan and checks that
// they are what they claim, so a wrong path fails at load time, not as
// TLS errors in every sample.
func (d *decoder) checkTLS(t *TLS, n *yaml.Node, k keyset) {
	abs := func(p string) string {
		if p != "" && !filepath.IsAbs(p) {
			return filepath.Join(d.dir, p)
		}
		return p
	}
	t.CA, t.Cert, t.Key = abs(t.CA), abs(t.Cert), abs(t.Key)
	key := "http.tls"
	if d.tlsKey != "" {
		key = d.tlsKey
	}
	if t.CA != "" {
		if b, err := os.ReadFile(t.CA); err != nil {
			d.errorf(at(n, k, "ca"), "%s.ca: %v", key, err)
		} else if !x509.NewCertPool().AppendCertsFromPEM(b) {
			d.errorf(at(n, k, "ca"), "%s.ca: %s holds no PEM certificate", key, t.CA)
		}
	}
	switch {
	case t.Cert != "" && t.Key == "":
		d.errorf(at(n, k, "cert"), "%s.cert needs %s.key (the certificate's private key)", key, key)
	case t.Key != "" && t.Cert == "":
		d.errorf(at(n, k, "key"), "%s.key needs %s.cert", key, key)
	case t.Cert != "":
		if _, err := tls.LoadX509KeyPair(t.Cert, t.Key); err != nil {
			d.errorf(at(n, k, "cert"), "%s.cert/key: %v", key, err)
		}
	}
}

// TLSConfig builds the client TLS configuration of http.tls (nil when
// nothing is set).
func (t TLS) TLSConfig() (*tls.Config, error) {
	if t == (TLS{}) {
		return nil, nil
	}
	c := &tls.Config{ServerName: t.ServerName}
	if t.CA != "" {
		b, err := os.ReadFile(t.CA)
		if err != nil {
			return nil, err
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("http.tls.ca: %s holds no PEM certificate", t.CA)
		}
	}
	if t.Cert != "" {
		cert, err := tls.LoadX509KeyPair(t.Cert, t.Key)
		if err != nil {
			return nil, fmt.Errorf("http.tls: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// readable resolves a file path relative to the plan and reports a file
// that cannot be opened or is not a regular file.
func (d *decoder) readable(n *yaml.Node, what, path string) string {
	if !filepath.IsAbs(path) {
		path = filepath.Join(d.dir, path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		d.errorf(n, "%s: %v", what, err)
	case !fi.Mode().IsRegular():
		d.errorf(n, "%s: %s is not a regular file", what, path)
	default:
		if f, err := os.Open(path); err != nil {
			d.errorf(n, "%s: %v", what, err)
		} else {
			f.Close()
		}
	}
	return path
}
