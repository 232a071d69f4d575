package jmeter

import (
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/plan/expr"
)

// text is JMeter text translated into a plateau template, with what the
// translation could not do.
type text struct {
	T string
	// Needs names what is missing ("template function __Random"); empty
	// when the translation is exact.
	Needs []string
	// Vars are the JMeter variables referenced.
	Vars []string
}

// translate turns JMeter text with ${var} and ${__fn(args)} into a plateau
// template. Variables are renamed through c.varRef; functions with a
// plateau equivalent are translated, others become a plan variable holding
// a fixed stand-in value and are named in Needs.
func (c *conv) translate(s string) text {
	var out text
	var b strings.Builder
	for i := 0; i < len(s); {
		if !strings.HasPrefix(s[i:], "${") {
			b.WriteByte(s[i])
			i++
			continue
		}
		end := matchBrace(s, i+1)
		if end < 0 {
			// Unterminated: JMeter sends it as text.
			b.WriteString(convert.EscapeLiteral(s[i:]))
			break
		}
		inner := s[i+2 : end]
		i = end + 1
		if strings.HasPrefix(inner, "__") {
			b.WriteString(c.function(inner, &out))
			continue
		}
		if inner == "" || strings.ContainsAny(inner, "${}") {
			b.WriteString(convert.EscapeLiteral("${" + inner + "}"))
			continue
		}
		out.Vars = append(out.Vars, inner)
		b.WriteString("${" + c.varRef(inner) + "}")
	}
	out.T = b.String()
	return out
}

// matchBrace returns the index of the "}" closing the "{" at open, minding
// nested ${…} and parentheses; -1 when there is none.
func matchBrace(s string, open int) int {
	depth := 0
	paren := 0
	for j := open; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 && paren <= 0 {
				return j
			}
		case '(':
			paren++
		case ')':
			paren--
		}
	}
	return -1
}

// splitArgs splits a function's argument list at unescaped commas outside
// nested ${…}.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	depth := 0
	for j := 0; j < len(s); j++ {
		ch := s[j]
		switch {
		case ch == '\\' && j+1 < len(s):
			cur.WriteByte(s[j+1])
			j++
			continue
		case ch == '{' || ch == '(':
			depth++
		case ch == '}' || ch == ')':
			depth--
		case ch == ',' && depth == 0:
			out = append(out, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteByte(ch)
	}
	out = append(out, cur.String())
	return out
}

// function translates one ${__name(args)} (inner is "__name(args)").
func (c *conv) function(inner string, out *text) string {
	name, args := inner, ""
	if i := strings.IndexByte(inner, '('); i >= 0 && strings.HasSuffix(inner, ")") {
		name, args = inner[:i], inner[i+1:len(inner)-1]
	}
	var a []string
	if args != "" {
		a = splitArgs(args)
	}
	arg := func(i int) string {
		if i < len(a) {
			return strings.TrimSpace(a[i])
		}
		return ""
	}
	switch name {
	case "__P", "__property":
		if v, ok := c.props[arg(0)]; ok {
			out.Vars = append(out.Vars, v)
			return "${" + c.varRef(v) + "}"
		}
		def := arg(1)
		if name == "__property" {
			def = arg(2)
		}
		return c.env(arg(0), def)
	case "__UUID":
		return "${__uuid}"
	case "__threadNum":
		return "${__user}"
	case "__time":
		switch f := arg(0); {
		case f == "" && arg(1) == "":
			return "${__timestamp_ms}"
		case f == "/1000" && arg(1) == "":
			return "${now(\"unix\")}"
		case arg(1) == "" && !strings.ContainsAny(f, "\"${}\\"):
			if _, _, err := expr.Layout(f); err == nil {
				return "${now(\"" + f + "\")}"
			}
		}
	case "__Random":
		if x, y := c.exprArg(arg(0)), c.exprArg(arg(1)); x != "" && y != "" && arg(2) == "" {
			return "${randomInt(" + x + ", " + y + ")}"
		}
	case "__RandomString":
		if n, chars := c.exprArg(arg(0)), c.exprArg(arg(1)); n != "" && arg(2) == "" {
			if arg(1) == "" {
				return "${randomString(" + n + ")}"
			}
			if chars != "" {
				return "${randomString(" + n + ", " + chars + ")}"
			}
		}
	case "__counter":
		if arg(1) == "" {
			return "${counter(\"" + convert.VarName(c.workloadName+"_counter") + "\")}"
		}
	case "__urlencode", "__urldecode", "__base64Encode", "__base64Decode", "__lowercase", "__uppercase":
		fn := map[string]string{"__urlencode": "urlencode", "__urldecode": "urldecode", "__base64Encode": "base64",
			"__base64Decode": "base64decode", "__lowercase": "lower", "__uppercase": "upper"}[name]
		if x := c.exprArg(arg(0)); x != "" && arg(1) == "" {
			return "${" + fn + "(" + x + ")}"
		}
	case "__digest":
		algo := map[string]string{"MD5": "md5", "SHA-1": "sha1", "SHA-256": "sha256", "SHA-512": "sha512"}[strings.ToUpper(arg(0))]
		if x := c.exprArg(arg(1)); algo != "" && x != "" && arg(2) == "" && arg(3) == "" && arg(4) == "" {
			return "${" + algo + "(" + x + ")}"
		}
	case "__threadGroupName":
		return convert.EscapeLiteral(c.workloadName)
	case "__V":
		// __V(name) evaluates a variable name; a constant name is a plain reference.
		if v := arg(0); v != "" && !strings.ContainsAny(v, "${}") {
			out.Vars = append(out.Vars, v)
			return "${" + c.varRef(v) + "}"
		}
	}
	// No plateau equivalent on this version: a plan variable stands in.
	need := "template function " + name
	out.Needs = append(out.Needs, need)
	return "${" + c.standIn(name, a) + "}"
}

// exprArg turns a function argument into an expression operand: a literal
// becomes a quoted string (a number stays a number), a lone ${var} a
// variable name; anything else "" (not translatable).
func (c *conv) exprArg(a string) string {
	a = strings.TrimSpace(a)
	if m := condVarRe.FindStringSubmatch(a); m != nil && m[0] == a && !strings.HasPrefix(a, "\"") {
		return c.varRef(m[1])
	}
	if strings.ContainsAny(a, "${}\"\\") {
		return ""
	}
	if _, err := strconv.ParseFloat(a, 64); err == nil {
		return a
	}
	return strconv.Quote(a)
}

// standIn defines a plan variable holding a fixed value for a function
// plateau cannot evaluate yet, and returns its name.
func (c *conv) standIn(fn string, args []string) string {
	val := ""
	switch fn {
	case "__Random", "__RandomDate":
		if len(args) > 0 {
			val = strings.TrimSpace(args[0])
		}
	case "__counter", "__intSum", "__longSum":
		val = "1"
	}
	if strings.Contains(val, "${") {
		val = ""
	}
	base := convert.VarName("fn" + fn)
	name := base
	for n := 2; ; n++ {
		prev, ok := c.standIns[name]
		if !ok || prev == val {
			break
		}
		name = base + "_" + strconv.Itoa(n)
	}
	if _, ok := c.standIns[name]; !ok {
		c.standIns[name] = val
		c.plan.SetVar(name, val)
		c.report.Notes = append(c.report.Notes,
			"JMeter function "+fn+" has no plateau equivalent yet; the plan variable "+name+" stands in with the fixed value \""+val+"\".")
	}
	return name
}

// env is a JMeter property read as an environment variable with its default.
func (c *conv) env(prop, def string) string {
	name := envName(prop)
	if name == "" {
		return convert.EscapeLiteral(def)
	}
	if _, seen := c.envSeen[name]; !seen {
		c.envSeen[name] = true
		c.report.Env = append(c.report.Env, convert.EnvVar{Env: name, What: "JMeter property " + prop + " (default " + quoteOr(def) + ")"})
	}
	def = strings.ReplaceAll(def, "}", "")
	if strings.Contains(def, "$") {
		def = ""
	}
	return "${env." + name + ":-" + def + "}"
}

func quoteOr(s string) string {
	if s == "" {
		return "empty"
	}
	return "\"" + s + "\""
}

// envName maps a JMeter property name (dots allowed) to an environment
// variable name.
func envName(prop string) string {
	var b strings.Builder
	for _, r := range prop {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
			b.WriteRune(r)
		case r >= '0' && r <= '9':
			if b.Len() == 0 {
				b.WriteByte('_')
			}
			b.WriteRune(r)
		default:
			if b.Len() > 0 {
				b.WriteByte('_')
			}
		}
	}
	return b.String()
}

// EnvName is the environment variable a converted plan reads for the JMeter
// property prop (${__P(prop)} → ${env.NAME}); -Jprop=value on JMeter's
// command line is NAME=value in plateau's environment.
func EnvName(prop string) string { return envName(prop) }
