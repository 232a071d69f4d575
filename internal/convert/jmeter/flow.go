package jmeter

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/plan/expr"
)

// Controllers with a plateau flow construct: If, While, ForEach, Switch,
// Random, Throughput.

var (
	// ${__jexl3(…)}, ${__groovy(…)}, ${__javaScript(…)} around a condition.
	condFnRe = regexp.MustCompile(`(?s)^\$\{__(jexl3|jexl2|groovy|javaScript|jexl)\((.*)\)\}$`)
	// "${name}" or '${name}' or ${name} inside a condition.
	condVarRe = regexp.MustCompile(`["']?\$\{([A-Za-z_][A-Za-z0-9_.\-]*)\}["']?`)
)

// condition translates a JMeter condition (If, While) into a plateau
// condition, and reports whether it could. Simple comparisons of variables
// and literals translate; scripts calling Java or JavaScript methods do not.
func (c *conv) condition(raw string, useExpression bool) (string, bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", false
	}
	if m := condFnRe.FindStringSubmatch(s); m != nil {
		args := splitArgs(m[2])
		s = groovyCond(strings.TrimSpace(args[0]))
	} else if useExpression {
		// The expression is a variable or function yielding true/false.
		if m := condVarRe.FindStringSubmatch(s); m != nil && m[0] == s {
			return "${" + c.varRef(m[1]) + "} == \"true\"", true
		}
		if s == "true" || s == "false" {
			return s, true
		}
		return "", false
	}
	if strings.Contains(s, "${__") || strings.Contains(s, "vars.") || strings.Contains(s, "props.") ||
		strings.Contains(s, "(") && strings.Contains(s, ".") {
		return "", false
	}
	out := condVarRe.ReplaceAllStringFunc(s, func(m string) string {
		name := condVarRe.FindStringSubmatch(m)[1]
		return "${" + c.varRef(name) + "}"
	})
	out = strings.NewReplacer("===", "==", "!==", "!=").Replace(out)
	if _, err := expr.Parse(out); err != nil {
		return "", false
	}
	return out, true
}

var (
	varsGetRe = regexp.MustCompile(`vars\.(?:get|remove)\(\s*["']([A-Za-z_][A-Za-z0-9_.\-]*)["']\s*\)`)
	// OPERAND.equals(ARG), operands a ${var} or a quoted literal.
	equalsRe  = regexp.MustCompile(`(\$\{[^}]+\}|"[^"]*"|'[^']*')\.equals\(\s*(\$\{[^}]+\}|"[^"]*"|'[^']*')\s*\)`)
	toNumRe   = regexp.MustCompile(`\.(?:toInteger|toLong|toDouble|toString|trim)\(\)`)
	nullCmpRe = regexp.MustCompile(`(\$\{[^}]+\})\s*(==|!=)\s*null\b`)
)

// groovyCond rewrites the common Groovy and JEXL idioms of JMeter
// conditions — vars.get("x"), a.equals(b), x != null, .toInteger() — into
// the plan's expression language; what remains is checked by the caller.
func groovyCond(s string) string {
	s = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(s), ";"))
	s = varsGetRe.ReplaceAllString(s, "$${$1}")
	s = toNumRe.ReplaceAllString(s, "")
	for range 4 {
		n := equalsRe.ReplaceAllString(s, "($1 == $2)")
		if n == s {
			break
		}
		s = n
	}
	s = nullCmpRe.ReplaceAllString(s, `$1 $2 ""`)
	return s
}

// ifController converts an If Controller.
func (c *conv) ifController(path string, e *Element, sc scope) []convert.Step {
	raw := e.Str("IfController.condition")
	cond, ok := c.condition(raw, e.Bool("IfController.useExpression", false))
	if !ok {
		return c.needsFeature(path, e, "conditions written as scripts", "condition "+raw)
	}
	st, note := convert.Converted, "condition "+cond
	if e.Bool("IfController.evaluateAll", false) {
		st, note = convert.Partial, note+"; JMeter evaluated it before each child, plateau once"
	}
	c.add(path, e, st, note, "")
	var s []convert.Step
	c.branch(func() { s, _ = c.children(path, e.Children, sc, false) })
	return []convert.Step{{If: &convert.Group{Cond: cond, Steps: nonEmpty(s)}}}
}

// maxWhile bounds a converted While Controller, which JMeter does not.
const maxWhile = 1000

func (c *conv) whileController(path string, e *Element, sc scope) []convert.Step {
	raw := e.Str("WhileController.condition")
	cond, ok := c.condition(raw, true)
	if !ok {
		cond, ok = c.condition(raw, false)
	}
	if !ok {
		return c.needsFeature(path, e, "while conditions written as scripts (or empty: until a sample fails)", "condition "+raw)
	}
	c.add(path, e, convert.Partial, fmt.Sprintf("loop while %s, at most %d times (JMeter sets no bound)", cond, maxWhile), "")
	s, _ := c.children(path, e.Children, sc, false)
	return []convert.Step{{Loop: &convert.Group{While: cond, Max: maxWhile, Steps: nonEmpty(s)}}}
}

// foreach converts a ForEach Controller over the matches of an extractor
// that now extracts them all.
func (c *conv) foreach(path string, e *Element, sc scope) []convert.Step {
	in := strings.TrimSpace(e.Str("ForeachController.inputVal"))
	ret := strings.TrimSpace(e.Str("ForeachController.returnVal"))
	if !c.allVars[in] || ret == "" {
		return c.needsFeature(path, e, "foreach over variables not set by an extractor", "over "+in+"_N into "+ret)
	}
	if e.Str("ForeachController.startIndex") != "" || e.Str("ForeachController.endIndex") != "" {
		return c.needsFeature(path, e, "foreach over part of a list", "")
	}
	as := c.setVar(ret)
	c.add(path, e, convert.Converted, "over every match of "+in, "")
	s, _ := c.children(path, e.Children, sc, false)
	return []convert.Step{{Foreach: &convert.Group{In: "${" + c.varRef(in) + "}", As: as, Steps: nonEmpty(s)}}}
}

// switchController runs the child whose index or name is the value: a
// chain of ifs, one per child.
func (c *conv) switchController(path string, e *Element, sc scope) []convert.Step {
	val := strings.TrimSpace(e.Str("SwitchController.value"))
	if val == "" {
		val = "0"
	}
	t := c.translate(val)
	if len(t.Needs) > 0 || strings.Count(t.T, "${") > 1 {
		return c.needsFeature(path, e, "switch on an expression", "value "+val)
	}
	c.add(path, e, convert.Converted, "one if per child, on the value "+val, "")
	var out []convert.Step
	idx := 0
	c.eachChild(path, e.Children, &sc, func(p string, k *Element) {
		steps := c.element(p, k, sc)
		if !strings.Contains(t.T, "${") {
			// A constant value: the chosen child only.
			if val == strconv.Itoa(idx) || val == k.Name {
				out = append(out, steps...)
			}
			idx++
			return
		}
		v := strings.TrimSuffix(strings.TrimPrefix(t.T, "${"), "}")
		if m := envDefaultRe.FindStringSubmatch(t.T); m != nil && m[0] == t.T {
			// A property: a plan variable read from the environment
			// (conditions take variables, not ${env.…}).
			v = convert.VarName("prop_" + m[1])
			c.plan.SetVar(v, t.T)
		}
		cond := fmt.Sprintf("${%s} == %q || ${%s} == %q", v, strconv.Itoa(idx), v, k.Name)
		out = append(out, convert.Step{If: &convert.Group{Cond: cond, Steps: nonEmpty(steps)}})
		idx++
	})
	return out
}

// randomController picks one child per pass, at random.
func (c *conv) randomController(path string, e *Element, sc scope) []convert.Step {
	c.add(path, e, convert.Converted, "one child at random each time (choose, equal weights)", "")
	var branches []convert.Branch
	c.eachChild(path, e.Children, &sc, func(p string, k *Element) {
		var steps []convert.Step
		c.branch(func() { steps = c.element(p, k, sc) })
		branches = append(branches, convert.Branch{Name: plainText(k.Name), Weight: 1, Steps: nonEmpty(steps)})
	})
	if len(branches) == 0 {
		return nil
	}
	return []convert.Step{{Choose: branches}}
}

// throughputController runs its children in a share of the passes.
func (c *conv) throughputController(path string, e *Element, sc scope) []convert.Step {
	style := e.Str("ThroughputController.style")
	pct := strings.TrimSpace(e.Str("ThroughputController.percentThroughput"))
	if pct == "" {
		if p := e.sub("ThroughputController.percentThroughput"); p != nil {
			pct = strings.TrimSpace(p.str("FloatProperty.value"))
		}
	}
	if pct == "" {
		// <FloatProperty><name>…percentThroughput</name><value>10.0</value></FloatProperty>
		for _, k := range e.props.children {
			var name, value string
			for _, g := range k.children {
				switch g.name {
				case "name":
					name = g.text.String()
				case "value":
					value = g.text.String()
				}
			}
			if name == "ThroughputController.percentThroughput" {
				pct = strings.TrimSpace(value)
			}
		}
	}
	if style != "1" {
		return c.throughputByCount(path, e, sc)
	}
	f, err := strconv.ParseFloat(pct, 64)
	note := ""
	if err != nil {
		// A property with a default: the share read at conversion.
		if t := c.translate(pct); len(t.Needs) == 0 && len(t.Vars) == 0 {
			if m := envDefaultRe.FindStringSubmatch(t.T); m != nil && m[0] == t.T {
				if f, err = strconv.ParseFloat(strings.TrimSpace(m[2]), 64); err == nil {
					note = fmt.Sprintf("; the share %s is property %s's default, read at conversion", pct, m[1])
					c.behaviour(fmt.Sprintf("throughput controller %q: its share is read from property %s at conversion (its default, %s %%); setting the property changes JMeter's share, not the plan's", e.Name, m[1], m[2]))
				}
			}
		}
	}
	if err != nil || f < 0 || f > 100 {
		return c.needsFeature(path, e, "throughput controller with a share known only at run time", "percent "+pct)
	}
	c.add(path, e, convert.Converted, fmt.Sprintf("runs in %.4g %% of the passes (choose: at random, where JMeter alternates deterministically)%s", f, note), "")
	s, _ := c.children(path, e.Children, sc, false)
	if f >= 100 {
		return s
	}
	if f <= 0 {
		return nil
	}
	return []convert.Step{{Choose: []convert.Branch{
		{Name: plainText(e.Name), Weight: f, Steps: nonEmpty(s)},
		{Name: "skip", Weight: 100 - f, Steps: []convert.Step{{Think: &convert.Think{}}}},
	}}}
}

// nonEmpty keeps a construct's step list loadable: a list of only
// comments gets a zero pause after them.
func nonEmpty(s []convert.Step) []convert.Step {
	for _, x := range s {
		if x.Comment == nil || x.Request != nil || x.Think != nil || x.Transaction != nil || x.Loop != nil ||
			x.If != nil || x.Foreach != nil || x.Choose != nil || x.Rendezvous != nil {
			return s
		}
	}
	return append(s, convert.Step{Think: &convert.Think{}})
}

// throughputByCount converts a Throughput Controller by total executions:
// its children run the first N times it is reached — per user
// (perThread: the user's first N iterations, when it is reached once an
// iteration) or over all users (a run-wide counter).
func (c *conv) throughputByCount(path string, e *Element, sc scope) []convert.Step {
	raw := strings.TrimSpace(e.Str("ThroughputController.maxThroughput"))
	if raw == "" {
		raw = beanProp(e, "ThroughputController.maxThroughput")
	}
	n, ok := c.number(raw, "1")
	if m := envDefaultRe.FindStringSubmatch(n); ok && m != nil {
		n = m[2]
		c.behaviour(fmt.Sprintf("throughput controller %q: its count is read from property %s at conversion (its default, %s)", e.Name, m[1], n))
	}
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 0 {
		return c.needsFeature(path, e, "throughput controller with a count known only at run time", "executions "+raw)
	}
	cond := fmt.Sprintf("${__iteration} <= %d", count)
	note := fmt.Sprintf("runs the first %d times each user reaches it (its first %d iterations)", count, count)
	if !e.Bool("ThroughputController.perThread", true) {
		cond = fmt.Sprintf("${counter(%q)} <= %d", "throughput "+e.Name, count)
		note = fmt.Sprintf("runs the first %d times any user reaches it (a run-wide counter)", count)
	}
	c.add(path, e, convert.Converted, note, "")
	s, _ := c.children(path, e.Children, sc, false)
	if count == 0 {
		return nil
	}
	return []convert.Step{{If: &convert.Group{Cond: cond, Steps: nonEmpty(s)}}}
}
