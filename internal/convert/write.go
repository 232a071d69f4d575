package convert

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// WriteTo writes the plan as a YAML plan file. It is the one writer of the
// three converters: comments left by unconverted elements sit where the
// element was, and every value is quoted as YAML needs (a "${…}" inside a
// flow mapping, a "yes" that must stay text).
func (p *Plan) WriteTo(w io.Writer) (int64, error) { return p.writeTo(w, chunkSteps) }

// chunkSteps is the number of steps of a workload's list encoded as one
// YAML tree. A longer list (a recording of 100,000 requests) is encoded in
// pieces spliced into the document, so the writer never holds a tree of
// millions of nodes: its memory is bounded by a piece plus the text.
const chunkSteps = 256

// stepChunk is a long step list written in pieces where token stands.
type stepChunk struct {
	token string
	list  []Step
}

func (p *Plan) writeTo(w io.Writer, chunk int) (int64, error) {
	var chunks []stepChunk
	doc := &yaml.Node{Kind: yaml.DocumentNode}
	root := mapping()
	doc.Content = []*yaml.Node{root}
	if len(p.Header) > 0 {
		root.HeadComment = comment(p.Header)
	}
	add(root, "name", str(p.Name))
	add(root, "target", str(p.Target))
	if h := p.httpNode(); h != nil {
		add(root, "http", h)
	}
	if len(p.Vars) > 0 {
		add(root, "vars", kvs(p.Vars))
	}
	if len(p.Data) > 0 {
		data := mapping()
		for _, f := range p.Data {
			m := mapping()
			if f.JSON != "" {
				add(m, "json", str(f.JSON))
			} else {
				add(m, "csv", str(f.CSV))
			}
			if f.Headerless && len(f.Columns) > 0 {
				seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
				for _, c := range f.Columns {
					seq.Content = append(seq.Content, str(c))
				}
				add(m, "columns", seq)
			}
			if f.Order != "" {
				add(m, "order", str(f.Order))
			}
			switch f.OnExhausted {
			case "":
			case "stop_user", "stop_run":
				add(m, "on_end", str(f.OnExhausted))
			default:
				add(m, "on_exhausted", str(f.OnExhausted))
			}
			if f.Delimiter != "" && f.Delimiter != "," {
				add(m, "delimiter", str(f.Delimiter))
			}
			add(data, f.Name, m)
		}
		add(root, "data", data)
	}
	if len(p.Secrets) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range p.Secrets {
			seq.Content = append(seq.Content, str(s))
		}
		add(root, "secrets", seq)
	}
	for _, part := range []struct {
		key   string
		steps []Step
	}{{"setup", p.Setup}, {"teardown", p.Teardown}} {
		if len(part.steps) == 0 {
			continue
		}
		seq, foot := steps(part.steps)
		add(root, part.key, seq)
		if foot != "" {
			root.Content[len(root.Content)-1].FootComment = foot
		}
	}
	wls := mapping()
	for _, wl := range p.Workloads {
		m := mapping()
		for _, part := range []struct {
			key   string
			steps []Step
			need  bool
		}{{"setup", wl.Setup, false}, {"scenario", wl.Scenario, true}, {"teardown", wl.Teardown, false}} {
			if len(part.steps) == 0 && !part.need {
				continue
			}
			if countSteps(part.steps) > chunk {
				tok := fmt.Sprintf("__plateau_steps_%d__", len(chunks))
				chunks = append(chunks, stepChunk{tok, part.steps})
				add(m, part.key, str(tok))
				continue
			}
			seq, foot := steps(part.steps)
			add(m, part.key, seq)
			if foot != "" {
				m.Content[len(m.Content)-1].FootComment = foot
			}
		}
		if wl.OnFail != "" {
			add(m, "on_fail", str(wl.OnFail))
		}
		add(m, "load", wl.Load.node())
		k := str(wl.Name)
		if len(wl.Comment) > 0 {
			k.HeadComment = comment(wl.Comment)
		}
		wls.Content = append(wls.Content, k, m)
	}
	add(root, "workloads", wls)
	if len(p.SLA) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, r := range p.SLA {
			if !r.Abort && r.Grace == "" {
				seq.Content = append(seq.Content, str(r.Expr))
				continue
			}
			m := mapping()
			m.Style = yaml.FlowStyle
			add(m, "expr", str(r.Expr))
			if r.Abort {
				add(m, "abort_on_fail", boolean(true))
			}
			if r.Grace != "" {
				add(m, "grace", str(r.Grace))
			}
			seq.Content = append(seq.Content, m)
		}
		add(root, "sla", seq)
	}

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return 0, fmt.Errorf("writing plan: %w", err)
	}
	if err := enc.Close(); err != nil {
		return 0, fmt.Errorf("writing plan: %w", err)
	}
	if len(chunks) == 0 {
		n, err := w.Write(buf.Bytes())
		return int64(n), err
	}
	// Splice each long list in where its token stands.
	var total int64
	rest := buf.Bytes()
	for _, c := range chunks {
		i := bytes.Index(rest, []byte(" "+c.token+"\n"))
		if i < 0 {
			return total, fmt.Errorf("writing plan: lost the place of a step list")
		}
		line := bytes.LastIndexByte(rest[:i], '\n') + 1
		indent := string(rest[line:line+len(rest[line:i])-len(bytes.TrimLeft(rest[line:i], " "))]) + "  "
		n, err := w.Write(rest[:i])
		total += int64(n)
		if err != nil {
			return total, err
		}
		if n, err = io.WriteString(w, "\n"); err != nil {
			return total + int64(n), err
		}
		total += int64(n)
		m, err := writeSteps(w, c.list, indent, chunk)
		total += m
		if err != nil {
			return total, err
		}
		rest = rest[i+len(c.token)+2:]
	}
	n, err := w.Write(rest)
	return total + int64(n), err
}

// countSteps is the number of list items steps writes (comment-only steps
// join the next item).
func countSteps(list []Step) int {
	n := 0
	for i := range list {
		s := &list[i]
		if !(s.Comment != nil && s.Request == nil && s.Think == nil && s.Transaction == nil && s.Loop == nil) {
			n++
		}
	}
	return n
}

// writeSteps writes a step list as the sequence steps would build, at
// indent, chunk items at a time.
func writeSteps(w io.Writer, list []Step, indent string, chunk int) (int64, error) {
	var total int64
	var buf bytes.Buffer
	flush := func(part []Step) error {
		seq, foot := steps(part)
		buf.Reset()
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(seq); err != nil {
			return fmt.Errorf("writing plan: %w", err)
		}
		if err := enc.Close(); err != nil {
			return fmt.Errorf("writing plan: %w", err)
		}
		text := buf.String()
		if foot != "" {
			text += foot + "\n"
		}
		for _, l := range strings.SplitAfter(text, "\n") {
			if l == "" {
				continue
			}
			if l != "\n" {
				l = indent + l
			}
			n, err := io.WriteString(w, l)
			total += int64(n)
			if err != nil {
				return err
			}
		}
		return nil
	}
	start, items := 0, 0
	for i := range list {
		s := &list[i]
		if s.Comment != nil && s.Request == nil && s.Think == nil && s.Transaction == nil && s.Loop == nil {
			continue
		}
		if items == chunk {
			// Comment-only steps before step i belong to it: cut there.
			cut := i
			for cut > start && list[cut-1].Comment != nil && list[cut-1].Request == nil && list[cut-1].Think == nil && list[cut-1].Transaction == nil && list[cut-1].Loop == nil {
				cut--
			}
			if err := flush(list[start:cut]); err != nil {
				return total, err
			}
			start, items = cut, 0
		}
		items++
	}
	return total, flush(list[start:])
}

// Bytes is WriteTo into memory.
func (p *Plan) Bytes() ([]byte, error) {
	var b bytes.Buffer
	_, err := p.WriteTo(&b)
	return b.Bytes(), err
}

func (p *Plan) httpNode() *yaml.Node {
	h := mapping()
	if p.HTTP.Timeout > 0 {
		add(h, "timeout", str(dur(p.HTTP.Timeout)))
	}
	if p.HTTP.ConnectTimeout > 0 {
		add(h, "connect_timeout", str(dur(p.HTTP.ConnectTimeout)))
	}
	if p.HTTP.Redirects != nil {
		add(h, "redirects", num(*p.HTTP.Redirects))
	}
	if p.HTTP.CookiesPerIteration {
		add(h, "cookies", str("per_iteration"))
	} else if p.HTTP.Cookies != nil {
		add(h, "cookies", boolean(*p.HTTP.Cookies))
	}
	if len(p.HTTP.Headers) > 0 {
		add(h, "headers", kvs(p.HTTP.Headers))
	}
	if len(h.Content) == 0 {
		return nil
	}
	return h
}

func (l *Load) node() *yaml.Node {
	m := mapping()
	set := func(m *yaml.Node, k, v string) {
		if v != "" {
			add(m, k, plain(v))
		}
	}
	if len(l.Stages) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range l.Stages {
			sm := mapping()
			sm.Style = yaml.FlowStyle
			set(sm, "users", s.Users)
			set(sm, "rate", s.Rate)
			set(sm, "duration", s.Duration)
			seq.Content = append(seq.Content, sm)
		}
		add(m, "stages", seq)
		set(m, "max_users", l.MaxUsers)
	} else if l.Rate != "" {
		set(m, "rate", l.Rate)
		set(m, "duration", l.Duration)
		set(m, "max_users", l.MaxUsers)
	} else if len(l.Steps) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range l.Steps {
			sm := mapping()
			set(sm, "users", s.Users)
			set(sm, "ramp_up", s.RampUp)
			set(sm, "duration", s.Duration)
			seq.Content = append(seq.Content, sm)
		}
		add(m, "steps", seq)
	} else {
		set(m, "users", l.Users)
		set(m, "ramp_up", l.RampUp)
		set(m, "duration", l.Duration)
		set(m, "iterations", l.Iterations)
		set(m, "pace", l.Pace)
	}
	set(m, "start_after", l.StartAfter)
	set(m, "graceful_stop", l.GracefulStop)
	return m
}

// plain is a scalar written without quotes (numbers, durations, and
// ${env.…} references the loader substitutes before reading the number).
func plain(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: s}
}

// placeholderThink stands in for a list whose every element was left as a
// comment: a plan's scenario, transaction or loop needs at least one step.
const placeholderThink = "1s"

// steps builds a step list. Comment-only steps become the head comment of
// the next step; trailing ones are returned as a foot comment for the key
// that holds the list.
func steps(list []Step) (*yaml.Node, string) {
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	var pending []string
	for _, s := range list {
		if s.Comment != nil && s.Request == nil && s.Think == nil && s.Transaction == nil && s.Loop == nil {
			pending = append(pending, s.Comment...)
			continue
		}
		n := stepNode(&s)
		if len(pending) > 0 {
			n.HeadComment = joinComments(comment(pending), n.HeadComment)
			pending = nil
		}
		seq.Content = append(seq.Content, n)
	}
	if len(seq.Content) == 0 {
		// Nothing convertible: keep the plan loadable with a pause, and say so.
		n := mapping()
		add(n, "think", str(placeholderThink))
		n.HeadComment = comment(append(pending, "placeholder: no request here (the source had none, or none could be converted)"))
		seq.Content = append(seq.Content, n)
		return seq, ""
	}
	if len(pending) > 0 {
		return seq, comment(pending)
	}
	return seq, ""
}

func stepNode(s *Step) *yaml.Node {
	m := mapping()
	switch {
	case s.Request != nil:
		add(m, "request", s.Request.node())
		if len(s.Request.Comment) > 0 {
			m.HeadComment = comment(s.Request.Comment)
		}
	case s.Think != nil:
		add(m, "think", str(s.Think.String()))
	case s.Transaction != nil:
		g := mapping()
		add(g, "name", str(s.Transaction.Name))
		if s.Transaction.OnFail != "" {
			add(g, "on_fail", str(s.Transaction.OnFail))
		}
		addSteps(g, "steps", s.Transaction.Steps)
		add(m, "transaction", g)
	case s.Loop != nil:
		g := mapping()
		if s.Loop.While != "" {
			add(g, "while", str(s.Loop.While))
			add(g, "max", num(max(s.Loop.Max, 1)))
		} else {
			add(g, "count", num(max(s.Loop.Count, 1)))
		}
		addSteps(g, "steps", s.Loop.Steps)
		add(m, "loop", g)
	case s.If != nil:
		g := mapping()
		add(g, "cond", str(s.If.Cond))
		addSteps(g, "steps", s.If.Steps)
		if len(s.If.Else) > 0 {
			addSteps(g, "else", s.If.Else)
		}
		add(m, "if", g)
	case s.Foreach != nil:
		g := mapping()
		add(g, "in", str(s.Foreach.In))
		add(g, "as", str(s.Foreach.As))
		addSteps(g, "steps", s.Foreach.Steps)
		add(m, "foreach", g)
	case s.Choose != nil:
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for _, b := range s.Choose {
			g := mapping()
			if b.Name != "" {
				add(g, "name", str(b.Name))
			}
			add(g, "weight", plain(strconv.FormatFloat(b.Weight, 'f', -1, 64)))
			addSteps(g, "steps", b.Steps)
			seq.Content = append(seq.Content, g)
		}
		add(m, "choose", seq)
	case s.Rendezvous != nil:
		g := mapping()
		if s.Rendezvous.Name != "" {
			add(g, "name", str(s.Rendezvous.Name))
		}
		add(g, "users", num(max(s.Rendezvous.Users, 1)))
		add(g, "timeout", str(dur(s.Rendezvous.Timeout)))
		add(m, "rendezvous", g)
	}
	if len(s.Comment) > 0 {
		m.HeadComment = joinComments(comment(s.Comment), m.HeadComment)
	}
	return m
}

// addSteps adds a step list under key, with trailing comments kept.
func addSteps(g *yaml.Node, key string, list []Step) {
	seq, foot := steps(list)
	add(g, key, seq)
	if foot != "" {
		g.Content[len(g.Content)-1].FootComment = foot
	}
}

// String formats the think time as a plan writes it.
func (t *Think) String() string {
	switch t.Dist {
	case "gaussian":
		return fmt.Sprintf("gaussian(%s, %s)", dur(t.Mean), dur(t.Spread))
	case "exponential":
		return fmt.Sprintf("exponential(%s)", dur(t.Mean))
	}
	if t.Max > 0 {
		return fmt.Sprintf("uniform(%s, %s)", dur(t.Min), dur(t.Max))
	}
	return dur(t.Fixed)
}

func (r *Request) node() *yaml.Node {
	m := mapping()
	if r.Name != "" {
		add(m, "name", str(r.Name))
	}
	if r.Method != "" && r.Method != "GET" {
		add(m, "method", str(r.Method))
	}
	add(m, "url", str(r.URL))
	if len(r.Headers) > 0 {
		add(m, "headers", kvs(r.Headers))
	}
	switch {
	case r.Body != nil:
		add(m, "body", str(*r.Body))
	case len(r.Form) > 0:
		add(m, "form", kvs(r.Form))
	case r.Multipart != nil:
		mp := mapping()
		if len(r.Multipart.Fields) > 0 {
			add(mp, "fields", kvs(r.Multipart.Fields))
		}
		if len(r.Multipart.Files) > 0 {
			files := &yaml.Node{Kind: yaml.SequenceNode}
			for _, f := range r.Multipart.Files {
				fm := mapping()
				add(fm, "field", str(f.Field))
				add(fm, "path", str(f.Path))
				if f.ContentType != "" {
					add(fm, "content_type", str(f.ContentType))
				}
				files.Content = append(files.Content, fm)
			}
			add(mp, "files", files)
		}
		if len(r.Multipart.Order) > 0 {
			order := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
			for _, n := range r.Multipart.Order {
				order.Content = append(order.Content, str(n))
			}
			add(mp, "order", order)
		}
		add(m, "multipart", mp)
	case r.BodyFile != "":
		add(m, "body_file", str(r.BodyFile))
	}
	if r.Timeout > 0 {
		add(m, "timeout", str(dur(r.Timeout)))
	}
	if r.Redirects != nil {
		add(m, "redirects", num(*r.Redirects))
	}
	switch {
	case r.Postman:
		add(m, "encode", str("postman"))
	case r.NoEncode:
		add(m, "encode", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"})
	}
	if r.OnFail != "" {
		add(m, "on_fail", str(r.OnFail))
	}
	if len(r.Extract) > 0 {
		ex := mapping()
		for _, e := range r.Extract {
			em := mapping()
			em.Style = yaml.FlowStyle
			switch {
			case e.JSON != "":
				add(em, "json", str(e.JSON))
			case e.Regex != "":
				add(em, "regex", str(e.Regex))
			case e.Cookie != "":
				add(em, "cookie", str(e.Cookie))
			case e.Left != "" || e.Right != "":
				add(em, "left", str(e.Left))
				add(em, "right", str(e.Right))
			case e.CSS != "":
				add(em, "css", str(e.CSS))
				if e.Attr != "" {
					add(em, "attr", str(e.Attr))
				}
			case e.XPath != "":
				add(em, "xpath", str(e.XPath))
			default:
				add(em, "header", str(e.Header))
			}
			if e.All {
				add(em, "all", boolean(true))
			}
			if e.Pick != "" {
				add(em, "pick", str(e.Pick))
			}
			if e.AsJSON {
				add(em, "as_json", boolean(true))
			}
			if e.Default != nil {
				add(em, "default", str(*e.Default))
			}
			add(ex, e.Var, em)
		}
		add(m, "extract", ex)
	}
	checks := r.Checks
	if !r.Check.IsZero() {
		checks = append([]Check{r.Check}, checks...)
	}
	switch len(checks) {
	case 0:
	case 1:
		add(m, "check", checks[0].node())
	default:
		seq := &yaml.Node{Kind: yaml.SequenceNode}
		for i := range checks {
			seq.Content = append(seq.Content, checks[i].node())
		}
		add(m, "check", seq)
	}
	return m
}

func (c *Check) node() *yaml.Node {
	n := mapping()
	if c.Name != "" {
		add(n, "name", str(c.Name))
	}
	if len(c.Status) == 1 {
		add(n, "status", num(c.Status[0]))
	} else if len(c.Status) > 1 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, s := range c.Status {
			seq.Content = append(seq.Content, num(s))
		}
		add(n, "status", seq)
	}
	for _, kv := range []struct{ k, v string }{{"body", c.Body}, {"not_body", c.NotBody}, {"regex", c.Regex}, {"not_regex", c.NotRegex}} {
		if kv.v != "" {
			add(n, kv.k, str(kv.v))
		}
	}
	if len(c.HeaderMatch) > 0 {
		add(n, "header_match", kvs(c.HeaderMatch))
	}
	if c.MinSize > 0 {
		add(n, "min_size", num(c.MinSize))
	}
	if c.MaxSize > 0 {
		add(n, "max_size", num(c.MaxSize))
	}
	if len(c.JSON) > 0 {
		add(n, "json", kvs(c.JSON))
	}
	if len(c.JSONNot) > 0 {
		add(n, "json_not", kvs(c.JSONNot))
	}
	if len(c.JSONMatch) > 0 {
		add(n, "json_match", kvs(c.JSONMatch))
	}
	if len(c.JSONExists) > 0 {
		seq := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, p := range c.JSONExists {
			seq.Content = append(seq.Content, str(p))
		}
		add(n, "json_exists", seq)
	}
	if c.MaxDuration > 0 {
		add(n, "max_duration", str(dur(c.MaxDuration)))
	}
	return n
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, str(key), v)
}

// str is a string scalar; the encoder quotes it whenever plain style would
// read back as something else (a number, a bool, a flow indicator).
func str(s string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
		if strings.HasSuffix(s, " ") || strings.HasSuffix(s, "\t") || strings.Contains(s, " \n") || strings.HasPrefix(s, " ") {
			n.Style = yaml.DoubleQuotedStyle
		}
	} else if strings.Contains(s, "${") || strings.ContainsAny(s, "{}[]") {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

func num(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func kvs(list []KV) *yaml.Node {
	m := mapping()
	for _, kv := range list {
		add(m, kv.Name, str(kv.Value))
	}
	return m
}

// comment turns lines into a YAML comment block; newlines inside a line
// become separate comment lines, so source text can never end the comment.
func comment(lines []string) string {
	var out []string
	for _, l := range lines {
		for _, part := range strings.Split(l, "\n") {
			part = strings.TrimRight(strings.ReplaceAll(part, "\r", ""), " \t")
			if part == "" {
				out = append(out, "#")
				continue
			}
			out = append(out, "# "+part)
		}
	}
	return strings.Join(out, "\n")
}

func joinComments(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n" + b
}
