package plan

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"gopkg.in/yaml.v3"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/plan/protofile"
)

// GRPC is one gRPC call: a unary or server-streaming method, described by
// .proto files (compiled when the plan loads) or, without them, by the
// server's reflection service (asked once per connection at the first
// call).
type GRPC struct {
	// Name is the label; default the method ("package.Service/Method").
	Name string `yaml:"name"`
	// Target is host:port (cleartext), or a URL: grpc:// or http://
	// (cleartext, HTTP/2 with prior knowledge), grpcs:// or https:// (TLS
	// with http.tls and http.insecure). Default: the plan's target host.
	Target string `yaml:"target"`
	// Method is "package.Service/Method".
	Method string `yaml:"method"`
	// Proto are .proto files (relative to the plan file) that define the
	// method; ImportPaths where their imports are found (default: each
	// file's directory). No proto: server reflection.
	Proto       []string `yaml:"proto"`
	ImportPaths []string `yaml:"import_paths"`
	// Message is the request message: a YAML (or JSON) mapping in the
	// message's JSON form, field names as in the .proto or lowerCamelCase,
	// with ${…} templates in values (typed references such as ${n:int}
	// send numbers). Default: the empty message.
	Message *Template `yaml:"message"`
	// Metadata are sent with the call (keys lower case; secret ones, such
	// as authorization, are masked like headers).
	Metadata []Header `yaml:"metadata"`
	// TLS overrides http.tls fields for this step's TLS connections.
	TLS *TLS `yaml:"tls"`
	// Timeout is the call's deadline (default http.timeout); a call that
	// passes it ends with DEADLINE_EXCEEDED.
	Timeout time.Duration       `yaml:"timeout"`
	Extract map[string]*Extract `yaml:"extract"`
	// Checks apply to the response: code (accepted status codes, default
	// OK), json*, body, regex, header* (response metadata), sizes,
	// max_duration, min_messages and max_messages.
	Checks []Check `yaml:"check"`
	OnFail string  `yaml:"on_fail"`
	// Desc is the method found in Proto when the plan loaded; nil for
	// reflection.
	Desc protoreflect.MethodDescriptor `yaml:"-"`
	Pos  Pos                           `yaml:"-"`
}

// GRPCStreamLabels are the derived labels a server-streaming grpc step
// records beside its own: the time to the first message, and one sample
// per message (the time since the previous one).
func GRPCStreamLabels(name string) (first, message string) {
	return name + " first message", name + " message"
}

// ParseGRPCTarget reads a grpc step's target: host:port, or a grpc://,
// grpcs://, http:// or https:// URL (port 80 or 443 when absent). It
// returns the address to dial and whether to use TLS.
func ParseGRPCTarget(s string) (addr string, useTLS bool, err error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "://") {
		if h, _, err := net.SplitHostPort(s); err != nil || h == "" {
			return "", false, fmt.Errorf("grpc target %q is not host:port or a grpc://, grpcs://, http:// or https:// URL", s)
		}
		return s, false, nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return "", false, fmt.Errorf("grpc target %q is not host:port or a grpc://, grpcs://, http:// or https:// URL", s)
	}
	port := "80"
	switch strings.ToLower(u.Scheme) {
	case "grpc", "http":
	case "grpcs", "https":
		useTLS, port = true, "443"
	default:
		return "", false, fmt.Errorf("grpc target %q: scheme %s is not grpc, grpcs, http or https", s, u.Scheme)
	}
	if u.Port() != "" {
		port = u.Port()
	}
	return net.JoinHostPort(u.Hostname(), port), useTLS, nil
}

// checkGRPC checks a grpc step and, when it names .proto files, compiles
// them and finds its method, so that every problem shows at load.
func (d *decoder) checkGRPC(g *GRPC, n *yaml.Node, k keyset) {
	d.checkOnFail(g.OnFail, at(n, k, "on_fail"))
	if g.Target != "" {
		if _, _, err := ParseGRPCTarget(g.Target); err != nil {
			d.errorf(at(n, k, "target"), "%v", err)
		}
	}
	if g.Timeout < 0 || k.has("timeout") && g.Timeout == 0 {
		d.errorf(at(n, k, "timeout"), "grpc timeout must be positive")
	}
	if !k.has("method") {
		d.missing(n, "grpc: missing method (package.Service/Method)")
	} else if svc, meth, err := protofile.SplitMethod(g.Method); err != nil {
		d.errorf(at(n, k, "method"), "grpc: %v", err)
	} else {
		g.Method = svc + "/" + meth
	}
	if k.has("name") && strings.TrimSpace(g.Name) == "" {
		d.errorf(at(n, k, "name"), "grpc name is empty")
	}
	if g.Name == "" {
		g.Name = g.Method
	}
	for _, m := range g.Metadata {
		if m.Name != strings.ToLower(m.Name) || !isToken(m.Name) || strings.HasPrefix(m.Name, "grpc-") {
			d.errorf(at(n, k, "metadata"), "grpc metadata: bad key %q (lower case, not grpc-…)", m.Name)
		}
	}
	for name, e := range g.Extract {
		if e.Cookie != "" || e.CSS != "" || e.XPath != "" {
			d.errorf(at(n, k, "extract"), "extract %s: a grpc step extracts with json, regex, left+right or header (response metadata)", name)
		}
	}
	for i := range g.Checks {
		c := &g.Checks[i]
		if len(c.Status) > 0 {
			d.errAt(c.Pos, at(n, k, "check"), "check: status applies to HTTP; a grpc check gives code: (e.g. [OK, NOT_FOUND])")
		}
		for _, s := range c.Code {
			if _, ok := core.ParseGRPCCode(s); !ok {
				d.errAt(c.Pos, at(n, k, "check"), fmt.Sprintf("check: code %q is not a gRPC status code (OK, NOT_FOUND, UNAVAILABLE, … or 0–16)", s))
			}
		}
	}
	for i, ip := range g.ImportPaths {
		if !filepath.IsAbs(ip) {
			g.ImportPaths[i] = filepath.Join(d.dir, ip)
		}
	}
	if len(g.Proto) == 0 {
		if k.has("import_paths") {
			d.errorf(k["import_paths"].key, "grpc: import_paths apply to proto files")
		}
		return // reflection
	}
	for i, p := range g.Proto {
		g.Proto[i] = d.readable(at(n, k, "proto"), "grpc proto", p)
	}
	if d.failed[at(n, k, "proto")] || g.Method == "" || d.failed[at(n, k, "method")] {
		return
	}
	set, err := d.protoSet(g.Proto, g.ImportPaths)
	if err != nil {
		d.protoErrors(at(n, k, "proto"), err)
		return
	}
	md, err := set.Method(g.Method)
	switch {
	case err != nil:
		d.errorf(at(n, k, "method"), "grpc: %v", err)
		return
	case md.IsStreamingClient():
		d.errorf(at(n, k, "method"), "grpc: %s is client streaming; grpc steps call unary and server-streaming methods", g.Method)
		return
	}
	g.Desc = md
	if p, ok := k["message"]; ok {
		d.checkMessage(p.val, md.Input(), 0)
	}
}

// protoSet compiles a list of .proto files once per plan.
func (d *decoder) protoSet(files, importPaths []string) (*protofile.Set, error) {
	key := strings.Join(files, "\x00") + "\x01" + strings.Join(importPaths, "\x00")
	if d.protos == nil {
		d.protos = map[string]protoResult{}
	}
	r, ok := d.protos[key]
	if !ok {
		r.set, r.err = protofile.Compile(files, importPaths)
		d.protos[key] = r
	} else if r.err != nil {
		return nil, errReported
	}
	return r.set, r.err
}

type protoResult struct {
	set *protofile.Set
	err error
}

// errReported stands for a .proto compile error already reported (by the
// first step that named the same files).
var errReported = fmt.Errorf("reported")

// protoErrors reports each problem of a .proto file at its own file,
// line and column, and once more at the step that named it.
func (d *decoder) protoErrors(n *yaml.Node, err error) {
	if err == errReported {
		return
	}
	errs, ok := err.(protofile.Errors)
	if !ok {
		d.errorf(n, "grpc proto: %v", err)
		return
	}
	for _, e := range errs {
		d.errs = append(d.errs, Error{File: e.File, Pos: Pos{max(e.Line, 1), max(e.Col, 1)}, Msg: e.Msg})
	}
	d.errorf(n, "grpc proto: %d problem(s) in the .proto files (listed above)", len(errs))
}

// checkMessage checks a request message's keys against the input type:
// an unknown field is reported at its key, nested messages are walked.
// Keys with ${…} and values of well-known types (Timestamp, Struct, …,
// whose JSON forms are not objects of their fields) are left to the call.
func (d *decoder) checkMessage(n *yaml.Node, md protoreflect.MessageDescriptor, depth int) {
	n = d.resolve(n)
	if n == nil || isNull(n) || depth > 32 || strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return
	}
	if n.Kind != yaml.MappingNode {
		if depth == 0 {
			d.typeErr(n, "grpc message", "a mapping of the message's fields")
		}
		return
	}
	for _, p := range d.pairs(n) {
		key := p.key.Value
		if strings.Contains(key, "${") {
			continue
		}
		f := md.Fields().ByName(protoreflect.Name(key))
		if f == nil {
			f = md.Fields().ByJSONName(key)
		}
		if f == nil {
			var names []string
			for i := 0; i < md.Fields().Len(); i++ {
				names = append(names, string(md.Fields().Get(i).Name()))
			}
			msg := fmt.Sprintf("grpc message: %s has no field %q", md.FullName(), key)
			if s := suggest(key, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				msg += " (fields: " + strings.Join(names, ", ") + ")"
			}
			d.errorf(p.key, "%s", msg)
			continue
		}
		if f.Message() == nil || f.IsMap() {
			continue
		}
		v := d.resolve(p.val)
		if f.IsList() && v != nil && v.Kind == yaml.SequenceNode {
			for _, item := range v.Content {
				d.checkMessage(item, f.Message(), depth+1)
			}
			continue
		}
		d.checkMessage(v, f.Message(), depth+1)
	}
}

// walkGRPC calls fn for every grpc step of a workload.
func walkGRPC(w *Workload, fn func(*GRPC)) {
	visit := func(s *Step) {
		if s.GRPC != nil {
			fn(s.GRPC)
		}
	}
	walkSteps(w.Setup, visit)
	walkSteps(w.Scenario, visit)
	walkSteps(w.Teardown, visit)
}
