package jmeter

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/convert"
)

// A random pick between controllers, as FOLIO's plans write it (reference
// 001): one script draws an index with weights from a parameter ("43-57",
// BranchSelectorRandomizerScript.gvy), a second maps the index to a value
// (switch … case 0: result = "checkin" … vars.put("goto_check_io",
// result)), and sibling If Controllers test that value. Together they are
// one weighted choose step.

var (
	// vars.putObject("distribution", Distribution.distrFromString(Parameters)…
	weightsPutRe = regexp.MustCompile(`vars\.put(?:Object)?\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']\s*,\s*Distribution\.distrFromString\(\s*Parameters\s*\)`)
	switchOnRe   = regexp.MustCompile(`(?s)(\w+)\s*=\s*Integer\.parseInt\(\s*vars\.get\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']\s*\)\s*\).*switch\s*\(\s*(\w+)\s*\)`)
	caseRe       = regexp.MustCompile(`case\s+(\d+)\s*:\s*(\w+)\s*=\s*"([^"]*)"`)
	resultPutRe  = regexp.MustCompile(`vars\.put\(\s*["']([A-Za-z_][A-Za-z0-9_]*)["']\s*,\s*(\w+)\s*\)`)
	ifEqRe       = regexp.MustCompile(`^\s*["']?\$\{([A-Za-z_][A-Za-z0-9_]*)\}["']?\s*==\s*["']([^"']*)["']\s*$`)
)

// pickScript is what a recognised script does.
type pickScript struct {
	weightsVar string    // sets this variable to a weighted index
	weights    []float64 // …with these weights
	switchVar  string    // sets this variable from the index in from
	from       string
	values     map[int]string
}

// scriptText is an element's script: inline, or the file it names
// (relative to the plan's directory, as JMeter's base directory).
func (c *conv) scriptText(e *Element) string {
	if s := e.Str("script"); strings.TrimSpace(s) != "" {
		return s
	}
	f := strings.TrimSpace(c.fold(e.Str("filename")))
	if f == "" || strings.Contains(f, "${") {
		return ""
	}
	if !filepath.IsAbs(f) || strings.HasPrefix(e.Str("filename"), "${") {
		f = filepath.Join(filepath.Dir(c.opt.Source), strings.TrimLeft(f, "/"))
	}
	b, err := c.opt.ReadFile(f)
	if err != nil {
		return ""
	}
	return string(b)
}

// recognisePick reads a script element as one half of a random pick.
func (c *conv) recognisePick(e *Element) (pickScript, bool) {
	if !strings.Contains(e.TestClass, "JSR223") && !strings.Contains(e.TestClass, "BeanShell") {
		return pickScript{}, false
	}
	s := c.scriptText(e)
	if m := weightsPutRe.FindStringSubmatch(s); m != nil {
		params := strings.TrimSpace(c.fold(e.Str("parameters")))
		if d := envDefaultRe.FindStringSubmatch(params); d != nil && d[0] == params {
			params = d[2]
		}
		var w []float64
		for _, p := range strings.Split(params, "-") {
			f, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || f < 0 {
				return pickScript{}, false
			}
			w = append(w, f)
		}
		return pickScript{weightsVar: m[1], weights: w}, true
	}
	if m := switchOnRe.FindStringSubmatch(s); m != nil && m[1] == m[3] {
		put := resultPutRe.FindStringSubmatch(s)
		cases := caseRe.FindAllStringSubmatch(s, -1)
		if put == nil || len(cases) == 0 {
			return pickScript{}, false
		}
		vals := map[int]string{}
		for _, k := range cases {
			if k[2] != put[2] {
				return pickScript{}, false
			}
			i, _ := strconv.Atoi(k[1])
			vals[i] = k[3]
		}
		return pickScript{switchVar: put[1], from: m[2], values: vals}, true
	}
	return pickScript{}, false
}

// scanPick records the scripts of random picks (called for every enabled
// element before conversion).
func (c *conv) scanPick(e *Element) {
	p, ok := c.recognisePick(e)
	if !ok {
		return
	}
	if p.weightsVar != "" {
		c.pickWeights[p.weightsVar] = p.weights
	} else {
		c.pickSwitch[p.switchVar] = p
	}
}

// pickOf returns the weight of each value of a picked variable, when
// both halves were found.
func (c *conv) pickOf(v string) (map[string]float64, bool) {
	sw, ok := c.pickSwitch[v]
	if !ok {
		return nil, false
	}
	w, ok := c.pickWeights[sw.from]
	if !ok {
		return nil, false
	}
	out := map[string]float64{}
	for i, val := range sw.values {
		if i < len(w) {
			out[val] += w[i]
		}
	}
	return out, true
}

// pickScriptElement converts a script that is half of a random pick.
func (c *conv) pickScriptElement(path string, e *Element) bool {
	p, ok := c.recognisePick(e)
	if !ok {
		return false
	}
	v := p.weightsVar
	if v == "" {
		v = p.from
	}
	var used bool
	for sv, sw := range c.pickSwitch {
		if sw.from == v || sv == p.switchVar {
			if _, ok := c.pickOf(sv); ok {
				used = true
			}
		}
	}
	if !used {
		return false
	}
	c.add(path, e, convert.Converted, "half of a random pick between the If Controllers that test its result: they are one choose step", "")
	c.notConvertedBelowAs(path, e, convert.NotNeeded, "checks a pick script, which the choose step replaces")
	return true
}

// pickIfs converts the If Controllers at ordered[i:] that test one picked
// variable ("${v}" == "value") into a choose step; n is how many it took.
func (c *conv) pickIfs(path string, ordered []*Element, i int, sc scope) (steps []convert.Step, n int) {
	m := ifEqRe.FindStringSubmatch(ordered[i].Str("IfController.condition"))
	if ordered[i].TestClass != "IfController" || m == nil {
		return nil, 0
	}
	v := m[1]
	weights, ok := c.pickOf(v)
	if !ok {
		return nil, 0
	}
	var branches []convert.Branch
	var total, all float64
	for _, w := range weights {
		all += w
	}
	for j := i; j < len(ordered); j++ {
		e := ordered[j]
		mm := ifEqRe.FindStringSubmatch(e.Str("IfController.condition"))
		if e.TestClass != "IfController" || mm == nil || mm[1] != v {
			break
		}
		w := weights[mm[2]]
		p := join(path, e.Name)
		c.add(p, e, convert.Converted, fmt.Sprintf("branch %q of a random pick on %s: weight %g of %g", mm[2], v, w, all), "")
		var s []convert.Step
		c.branch(func() { s, _ = c.children(p, e.Children, sc, false) })
		branches = append(branches, convert.Branch{Name: plainText(e.Name), Weight: w, Steps: nonEmpty(s)})
		total += w
		n++
	}
	if rest := all - total; rest > 0 {
		branches = append(branches, convert.Branch{Name: "none", Weight: rest, Steps: nonEmpty(nil)})
	}
	if d := c.pickSwitch[v].from; d != "" {
		c.behaviour(fmt.Sprintf("the random pick on %s uses the weights of %s read at conversion (%s); JMeter reads them when it runs", v, d, weightsText(c.pickWeights[d])))
	}
	return []convert.Step{{Choose: branches}}, n
}

func weightsText(w []float64) string {
	var s []string
	for _, x := range w {
		s = append(s, strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strings.Join(s, "-")
}

// branch converts one branch of a condition or choice: a variable that
// was a data column and that the branch extracts is the extracted value
// only inside the branch; after it (and in the other branches) it is the
// data column again — JMeter's data set sets it at every iteration, and
// the extractor only where its branch ran.
func (c *conv) branch(fn func()) {
	saved := make(map[string]string, len(c.vars))
	for k, v := range c.vars {
		saved[k] = v
	}
	fn()
	for k, v := range saved {
		if strings.Contains(v, ".") && c.vars[k] != v {
			c.vars[k] = v
		}
	}
}
