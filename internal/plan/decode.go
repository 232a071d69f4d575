package plan

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The decoder walks the yaml.Node tree by hand rather than calling
// yaml.Unmarshal: only the node tree knows where each value came from, and a
// strict walk can report every unknown key and wrong type with its position
// instead of stopping at the first. Struct fields are found through their
// `yaml` tags; the plan's special syntaxes (durations, rates, templates,
// name → value mappings) have their own small decoders below.

// pair is one key and value of a YAML mapping.
type pair struct{ key, val *yaml.Node }

// keyset maps the keys present in a mapping to their nodes, so checks can
// tell "users: 0" from a missing users and point at the right place.
type keyset map[string]pair

func (k keyset) has(key string) bool { _, ok := k[key]; return ok }

// varRef is a ${name} found in a template, checked once the whole plan is
// known (feeders may be declared after the workloads that use them).
type varRef struct {
	name string
	pos  Pos
	node *yaml.Node
	wl   *Workload // nil for plan-level templates (http.headers)
}

// aliasBudget bounds the values reached through aliases, so a "billion
// laughs" plan costs a bounded amount of work instead of hanging the loader.
const aliasBudget = 100000

type decoder struct {
	file string
	src  []byte
	dir  string
	opt  Options
	errs Errors

	lines   []string              // src split into lines, for template positions
	origin  map[*yaml.Node]string // nodes that came from --set, with the override text
	aliases int                   // values left to reach through aliases
	sizes   map[*yaml.Node]int    // memo for size

	refs      []varRef
	wl        *Workload // workload being decoded
	extracted map[*Workload]map[string]bool
	runWl     *Workload              // stands for the run-level setup and teardown
	typedOK   bool                   // a typed reference ("${n:int}") is allowed: a whole json: value
	inWS      int                    // > 0 while decoding a websocket's steps
	tlsKey    string                 // "tls" while decoding a request's or websocket's tls (else http.tls)
	badData   map[string]bool        // feeders whose CSV could not be read
	prepare   bool                   // the plan has prepare: commands (data files may not exist yet)
	protos    map[string]protoResult // .proto files compiled, by file list
	demands   []demand               // load sizes to check against Options.Machine

	// failed holds the value nodes already reported, so a bad value is
	// reported once ("users: ten"), not again by the checks that see its
	// zero value ("users must be at least 1").
	failed  map[*yaml.Node]bool
	badType map[*yaml.Node]bool // nodes of the wrong kind: nothing more to say about them
	// unknown holds the mappings that had unknown keys: a typo ("usres")
	// already explains why a key is missing.
	unknown map[*yaml.Node]bool
}

func newDecoder(file string, src []byte, dir string, opt Options) *decoder {
	d := &decoder{
		file:      file,
		src:       src,
		dir:       dir,
		opt:       opt,
		origin:    map[*yaml.Node]string{},
		aliases:   aliasBudget,
		sizes:     map[*yaml.Node]int{},
		extracted: map[*Workload]map[string]bool{},
		runWl:     &Workload{Name: "setup"},
		badData:   map[string]bool{},
		failed:    map[*yaml.Node]bool{},
		badType:   map[*yaml.Node]bool{},
		unknown:   map[*yaml.Node]bool{},
	}
	d.extracted[d.runWl] = map[string]bool{}
	return d
}

// pos is the 1-based position of n (1:1 when unknown).
func (d *decoder) pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{1, 1}
	}
	return Pos{max(n.Line, 1), max(n.Column, 1)}
}

// errorf records a problem at n. A second problem at the same scalar or
// list is dropped: it is a consequence of the first.
func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	if n != nil && d.failed[n] && (n.Kind != yaml.MappingNode || d.badType[n]) {
		return
	}
	d.errAt(d.pos(n), n, fmt.Sprintf(format, args...))
}

// missing reports that mapping n lacks something, unless n had an unknown
// key, which is then the likelier explanation and already reported.
func (d *decoder) missing(n *yaml.Node, format string, args ...any) {
	if d.unknown[n] {
		return
	}
	d.errorf(n, format, args...)
}

// errAt records a problem at pos; n (may be nil) tells whether the value
// came from a --set override, which the message then names.
func (d *decoder) errAt(pos Pos, n *yaml.Node, msg string) {
	if o := d.origin[n]; o != "" {
		msg += " (from --set " + o + ")"
	}
	d.errs = append(d.errs, Error{File: d.file, Pos: pos, Msg: msg})
	if n != nil {
		d.failed[n] = true
	}
}

// resolve follows aliases and unwraps a document node. It returns nil for
// an empty document or once alias expansions exceed the budget.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		if d.aliases < 0 {
			return nil
		}
		d.aliases -= d.size(n.Alias)
		if d.aliases < 0 {
			d.errorf(n, "too many alias (*name) expansions; the plan expands to more than %d values", aliasBudget)
			return nil
		}
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		return d.resolve(n.Content[0])
	}
	return n
}

// size counts the values under n with aliases expanded, memoized and
// capped, so nested aliases cost one walk of the real tree.
func (d *decoder) size(n *yaml.Node) int {
	if n == nil {
		return 0
	}
	if n.Kind == yaml.AliasNode {
		return d.size(n.Alias)
	}
	if s, ok := d.sizes[n]; ok {
		if s < 0 {
			return aliasBudget + 1 // an anchor that contains itself
		}
		return s
	}
	d.sizes[n] = -1
	s := 1
	for _, c := range n.Content {
		s = min(s+d.size(c), aliasBudget+1)
	}
	d.sizes[n] = s
	return s
}

// isNull reports whether n is absent or a YAML null ("", ~, null).
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null")
}

// describe names what a node is, for "expected X, got Y" messages.
func describe(n *yaml.Node) string {
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	v := n.Value
	if utf8.RuneCountInString(v) > 40 {
		v = string([]rune(v)[:40]) + "…"
	}
	return strconv.Quote(v)
}

func (d *decoder) typeErr(n *yaml.Node, key, want string) {
	d.errorf(n, "%s: expected %s, got %s", key, want, describe(n))
	d.badType[n] = true
}

// pairs lists a mapping's keys and values, expanding YAML merge keys (<<)
// and reporting duplicate and non-text keys.
func (d *decoder) pairs(n *yaml.Node) []pair { return d.pairsDepth(n, 0) }

func (d *decoder) pairsDepth(n *yaml.Node, depth int) []pair {
	if depth > 20 {
		d.errorf(n, "merge keys (<<) nested too deeply")
		return nil
	}
	var out, merged []pair
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := d.resolve(n.Content[i]), n.Content[i+1]
		if k == nil {
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "a mapping key must be text, got %s", describe(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			merged = append(merged, d.mergePairs(v, depth)...)
			continue
		}
		if first := seen[k.Value]; first != nil {
			d.errorf(k, "duplicate key %q (first at %d:%d)", k.Value, first.Line, first.Column)
			continue
		}
		seen[k.Value] = k
		out = append(out, pair{k, v})
	}
	// Keys written out take precedence over merged ones, as in YAML 1.1.
	for _, p := range merged {
		if seen[p.key.Value] == nil {
			seen[p.key.Value] = p.key
			out = append(out, p)
		}
	}
	return out
}

func (d *decoder) mergePairs(v *yaml.Node, depth int) []pair {
	v = d.resolve(v)
	switch {
	case v == nil:
		return nil
	case v.Kind == yaml.MappingNode:
		return d.pairsDepth(v, depth+1)
	case v.Kind == yaml.SequenceNode:
		var out []pair
		seen := map[string]bool{}
		for _, item := range v.Content {
			item = d.resolve(item)
			if item == nil || item.Kind != yaml.MappingNode {
				d.typeErr(item, "<<", "a mapping")
				continue
			}
			for _, p := range d.pairsDepth(item, depth+1) {
				if !seen[p.key.Value] {
					seen[p.key.Value] = true
					out = append(out, p)
				}
			}
		}
		return out
	}
	d.typeErr(v, "<<", "a mapping or a list of mappings")
	return nil
}

// mapping returns n's pairs, or reports a type error and returns ok=false.
func (d *decoder) mapping(n *yaml.Node, key, want string) ([]pair, bool) {
	if n.Kind != yaml.MappingNode {
		d.typeErr(n, key, want)
		return nil, false
	}
	return d.pairs(n), true
}

// contextName names a struct type in "unknown key … in X" messages.
func contextName(v any) string {
	switch v.(type) {
	case *Plan:
		return "plan"
	case *HTTP:
		return "http"
	case *Feeder:
		return "data"
	case *GenerateData:
		return "generate"
	case *Workload:
		return "workload"
	case *LoadSearch:
		return "search"
	case *Step:
		return "step"
	case *Request:
		return "request"
	case *Extract:
		return "extract"
	case *Check:
		return "check"
	case *Transaction:
		return "transaction"
	case *Loop:
		return "loop"
	case *If:
		return "if"
	case *Branch:
		return "choose branch"
	case *Foreach:
		return "foreach"
	case *Until:
		return "until"
	case *Rendezvous:
		return "rendezvous"
	case *Trend:
		return "trend"
	case *WebSocket:
		return "websocket"
	case *Send:
		return "send"
	case *Receive:
		return "receive"
	case *TLS:
		return "tls"
	case *GRPC:
		return "grpc"
	case *Load:
		return "load"
	case *Stage:
		return "stage"
	case *LoadStep:
		return "load step"
	case *Monitor:
		return "monitor"
	case *MonitorTarget:
		return "monitor target"
	case *ServerSide:
		return "server_side"
	case *History:
		return "history"
	}
	return fmt.Sprintf("%T", v)
}

// fieldsOf maps the yaml tag names of a struct type to field indexes.
func fieldsOf(t reflect.Type) (byKey map[string]int, keys []string, posField int) {
	byKey = map[string]int{}
	posField = -1
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if f.Name == "Pos" && f.Type == reflect.TypeOf(Pos{}) {
			posField = i
		}
		if tag == "" || tag == "-" {
			continue
		}
		byKey[tag] = i
		keys = append(keys, tag)
	}
	return byKey, keys, posField
}

// decodeStruct decodes a mapping into the struct ptr points to, reporting
// unknown keys, then runs the type's checks. A null node is an empty mapping.
func (d *decoder) decodeStruct(n *yaml.Node, ptr any) keyset {
	rv := reflect.ValueOf(ptr).Elem()
	byKey, known, posField := fieldsOf(rv.Type())
	ctx := contextName(ptr)
	n = d.resolve(n)
	if posField >= 0 && n != nil {
		rv.Field(posField).Set(reflect.ValueOf(d.pos(n)))
	}
	keys := keyset{}
	if !isNull(n) {
		ps, ok := d.mapping(n, ctx, "a mapping")
		if !ok {
			return keys
		}
		for _, p := range ps {
			name := p.key.Value
			idx, found := byKey[name]
			if _, isPlan := ptr.(*Plan); !found && isPlan && strings.HasPrefix(name, "x-") {
				// Extension keys hold YAML anchors for reuse (as in
				// Compose files); they mean nothing to plateau.
				continue
			}
			if !found {
				d.unknownKey(p.key, ctx, known)
				d.unknown[n] = true
				continue
			}
			keys[name] = p
			if d.special(ptr, name, p.val) {
				continue
			}
			d.decodeValue(p.val, rv.Field(idx), name)
		}
	}
	d.after(ptr, n, keys)
	return keys
}

// unknownKey reports k as unknown in ctx, with the closest known key.
func (d *decoder) unknownKey(k *yaml.Node, ctx string, known []string) {
	msg := fmt.Sprintf("unknown key %q in %s", k.Value, ctx)
	if s := suggest(k.Value, known); s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	} else {
		sorted := append([]string(nil), known...)
		sort.Strings(sorted)
		msg += " (known keys: " + strings.Join(sorted, ", ") + ")"
	}
	d.errorf(k, "%s", msg)
}

// decodeValue decodes one value into the field fv. Null keeps the current
// (default) value.
func (d *decoder) decodeValue(n *yaml.Node, fv reflect.Value, key string) {
	n = d.resolve(n)
	if isNull(n) {
		return
	}
	switch p := fv.Addr().Interface().(type) {
	case *string:
		if s, ok := d.str(n, key); ok {
			*p = s
		}
	case **string:
		if s, ok := d.str(n, key); ok {
			*p = &s
		}
	case *int:
		if v, ok := d.int(n, key); ok {
			*p = v
		}
	case **int:
		if v, ok := d.int(n, key); ok {
			*p = &v
		}
	case *bool:
		if v, ok := d.bool(n, key); ok {
			*p = v
		}
	case *float64:
		if s, ok := d.scalarStr(n, key, "a number"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				d.typeErr(n, key, "a number")
			} else {
				*p = v
			}
		}
	case *Cond:
		*p = d.cond(n, key)
	case **bool:
		if v, ok := d.bool(n, key); ok {
			*p = &v
		}
	case *time.Duration:
		if v, ok := d.duration(n, key); ok {
			*p = v
		}
	case *Rate:
		if s, ok := d.scalarStr(n, key, "a rate such as 200/s"); ok {
			r, err := ParseRate(s)
			if err != nil {
				d.errorf(n, "%s: %v", key, err)
			} else {
				*p = r
			}
		}
	case *Template:
		if t, ok := d.template(n, key, false); ok {
			*p = t
		}
	case **Template:
		if t, ok := d.template(n, key, false); ok {
			*p = &t
		}
	case **Think:
		*p = d.think(n, key)
	case **StopRule:
		if s, ok := d.scalarStr(n, key, `a rule such as "throughput_gain < 5%"`); ok {
			r, err := parseStopRule(s)
			if err != nil {
				d.errorf(n, "%s: %v", key, err)
			} else {
				*p = r
			}
		}
	case *[]string:
		*p = d.strList(n, key)
	case *map[string]string:
		*p = d.vars(n, key)
	case *[]Header:
		*p = d.headers(n, key)
	case *[]JSONCheck:
		*p = d.jsonChecks(n, key)
	case *map[string]*Extract:
		*p = d.extracts(n, key)
	case *[]*Workload:
		*p = d.workloads(n, key)
	case *map[string]*Feeder:
		*p = d.feeders(n, key)
	case *[]SLA:
		*p = d.slas(n, key)
	case *[]MonitorTarget:
		*p = d.monitorTargets(n, key)
	case *[]ServerSource:
		*p = d.serverSources(n, key)
	default:
		switch {
		case fv.Kind() == reflect.Pointer && fv.Type().Elem().Kind() == reflect.Struct:
			nv := reflect.New(fv.Type().Elem())
			d.preset(nv.Interface())
			d.decodeStruct(n, nv.Interface())
			fv.Set(nv)
		case fv.Kind() == reflect.Struct:
			d.decodeStruct(n, fv.Addr().Interface())
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
			if n.Kind != yaml.SequenceNode {
				want := "a list"
				if fv.Type() == reflect.TypeOf([]Step{}) {
					want = "a list of steps (each item starts with -, e.g. - request: …)"
				}
				d.typeErr(n, key, want)
				return
			}
			out := reflect.MakeSlice(fv.Type(), 0, len(n.Content))
			for _, item := range n.Content {
				ev := reflect.New(fv.Type().Elem())
				d.preset(ev.Interface())
				d.decodeStruct(item, ev.Interface())
				out = reflect.Append(out, ev.Elem())
			}
			fv.Set(out)
		default:
			// Unreachable for the plan's own types; reported, not panicked,
			// so a new field without a decoder shows up in tests.
			d.errorf(n, "%s: internal error: no decoder for %s", key, fv.Type())
		}
	}
}

// preset sets the defaults of a freshly created element before decoding.
func (d *decoder) preset(ptr any) {
	switch v := ptr.(type) {
	case *Request:
		v.Method = "GET"
	case *Feeder:
		v.Order = OrderSequential
		v.Delimiter = ","
	case *LoadSearch:
		presetSearch(v)
	}
}

// special decodes the fields whose YAML shape differs from their Go type.
func (d *decoder) special(owner any, key string, n *yaml.Node) bool {
	if key == "tls" {
		// A request's or websocket's own tls: its messages say tls.…,
		// not http.tls.….
		var dst **TLS
		switch o := owner.(type) {
		case *Request:
			dst = &o.TLS
		case *WebSocket:
			dst = &o.TLS
		case *GRPC:
			dst = &o.TLS
		}
		if dst != nil {
			d.tlsKey = "tls"
			*dst = &TLS{}
			d.decodeStruct(n, *dst)
			d.tlsKey = ""
			return true
		}
	}
	switch o := owner.(type) {
	case *Request:
		switch key {
		case "json":
			o.JSON = d.jsonTemplate(n)
			return true
		case "check":
			o.Checks = d.checks(n)
			return true
		case "encode":
			// true, false, or postman: values as they are, the whole URL
			// then encoded as Postman's runtime does.
			if isNull(d.resolve(n)) {
				return true
			}
			s, ok := d.scalarStr(n, "encode", "true, false or postman")
			if !ok {
				return true
			}
			switch v := strings.ToLower(strings.TrimSpace(s)); v {
			case "true", "false", "postman":
				on := v == "true"
				o.Encode, o.Postman = &on, v == "postman"
			default:
				d.typeErr(n, "encode", "true, false or postman")
			}
			return true
		}
	case *Receive:
		if key == "check" {
			o.Checks = d.checks(n)
			return true
		}
	case *Send:
		if key == "json" {
			o.JSON = d.jsonTemplate(n)
			return true
		}
	case *WebSocket:
		if key == "steps" {
			// send and receive are steps of a websocket only.
			d.inWS++
			d.decodeValue(n, reflect.ValueOf(&o.Steps).Elem(), key)
			d.inWS--
			return true
		}
	case *GRPC:
		switch key {
		case "message":
			o.Message = d.jsonTemplate(n)
			return true
		case "check":
			o.Checks = d.checks(n)
			return true
		case "proto":
			// One file, or a list of them.
			if r := d.resolve(n); r != nil && r.Kind == yaml.ScalarNode {
				if s, ok := d.str(r, key); ok && s != "" {
					o.Proto = []string{s}
				}
				return true
			}
			return false
		}
	case *Check:
		switch key {
		case "status":
			o.Status = d.statuses(n)
			return true
		case "min_size", "max_size":
			n = d.resolve(n)
			if isNull(n) {
				return true
			}
			if s, ok := d.scalarStr(n, key, "a size such as 10KiB"); ok {
				v, err := parseSize(s)
				switch {
				case err != nil:
					d.errorf(n, "%s: %v", key, err)
				case key == "min_size":
					o.MinSize = v
				default:
					o.MaxSize = v
				}
			}
			return true
		}
	case *HTTP:
		if key == "cookies" {
			n = d.resolve(n)
			if isNull(n) {
				return true
			}
			if s, ok := d.scalarStr(n, key, "true, false, per_user or per_iteration"); ok {
				on, off := true, false
				switch strings.ToLower(strings.TrimSpace(s)) {
				case "true", "per_user":
					o.Cookies = &on
				case "false", "off":
					o.Cookies = &off
				case "per_iteration":
					o.Cookies, o.CookiesPerIteration = &on, true
				default:
					d.typeErr(n, key, "true, false, per_user or per_iteration")
				}
			}
			return true
		}
		if key == "max_body" {
			n = d.resolve(n)
			if isNull(n) {
				return true
			}
			if s, ok := d.scalarStr(n, key, "a size such as 1MiB"); ok {
				v, err := parseSize(s)
				if err != nil {
					d.errorf(n, "max_body: %v", err)
				} else {
					o.MaxBody = v
				}
			}
			return true
		}
	case *Foreach:
		if key == "in" {
			d.foreachIn(o, n)
			return true
		}
	case *Plan:
		switch key {
		case "prepare":
			o.Prepare = d.commands(n, key)
			return true
		case "cleanup":
			o.Cleanup = d.commands(n, key)
			return true
		}
		if key == "setup" || key == "teardown" {
			// Run-level steps: their extractions are visible to every
			// workload.
			prev := d.wl
			d.wl = d.runWl
			var steps []Step
			d.decodeValue(n, reflect.ValueOf(&steps).Elem(), key)
			d.wl = prev
			if key == "setup" {
				o.Setup = steps
			} else {
				o.Teardown = steps
			}
			return true
		}
	}
	return false
}

// checks reads a check: one mapping, or a list of them.
func (d *decoder) checks(n *yaml.Node) []Check {
	n = d.resolve(n)
	if isNull(n) {
		return nil
	}
	items := []*yaml.Node{n}
	if n.Kind == yaml.SequenceNode {
		items = n.Content
	}
	var out []Check
	for _, item := range items {
		c := Check{}
		d.decodeStruct(item, &c)
		c.Pos = d.pos(d.resolve(item))
		out = append(out, c)
	}
	return out
}

// scalarStr returns a scalar's text with ${env.NAME} substituted, or reports
// a type error naming what was wanted.
func (d *decoder) scalarStr(n *yaml.Node, key, want string) (string, bool) {
	if n == nil || n.Kind != yaml.ScalarNode {
		d.typeErr(n, key, want)
		return "", false
	}
	return d.expand(n, key)
}

// str reads a scalar as text. Numbers and booleans are accepted as their
// text, since "zip: 02100" and "version: 1.10" mean text to a user.
func (d *decoder) str(n *yaml.Node, key string) (string, bool) {
	n = d.resolve(n)
	if isNull(n) {
		return "", n != nil
	}
	return d.scalarStr(n, key, "text")
}

func (d *decoder) int(n *yaml.Node, key string) (int, bool) {
	s, ok := d.scalarStr(n, key, "a whole number")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		d.typeErr(n, key, "a whole number")
		return 0, false
	}
	return v, true
}

func (d *decoder) bool(n *yaml.Node, key string) (bool, bool) {
	s, ok := d.scalarStr(n, key, "true or false")
	if !ok {
		return false, false
	}
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	d.typeErr(n, key, "true or false")
	return false, false
}

func (d *decoder) duration(n *yaml.Node, key string) (time.Duration, bool) {
	s, ok := d.scalarStr(n, key, "a duration such as 5s")
	if !ok {
		return 0, false
	}
	v, err := ParseDuration(s)
	if err != nil {
		d.errorf(n, "%s: %v", key, err)
		return 0, false
	}
	return v, true
}

// decodePlan decodes and checks the whole plan.
func (d *decoder) decodePlan(root *yaml.Node) *Plan {
	p := defaultPlan()
	n := d.resolve(root)
	if isNull(n) {
		d.errorf(n, "plan is empty")
		return p
	}
	d.prepare = d.hasPrepare(n) && !d.opt.Prepared
	k := d.decodeStruct(n, p)
	if n.Kind == yaml.MappingNode {
		d.checkPlan(p, n, k)
	}
	return p
}
