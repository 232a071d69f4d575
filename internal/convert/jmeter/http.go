package jmeter

import (
	"encoding/base64"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/plan/expr"
	"github.com/plateau-perf/plateau/internal/secret"
)

// scoped handles config elements, pre/post processors, assertions, timers
// and listeners: JMeter applies them to every sampler in their scope, so
// they go into sc. It reports whether e was one of them.
func (c *conv) scoped(path string, e *Element, sc *scope, planLevel bool) bool {
	tc := e.TestClass
	switch tc {
	case "ConfigTestElement":
		if e.GUIClass != "HttpDefaultsGui" && e.GUIClass != "" {
			c.add(path, e, convert.NotConverted, "config element "+e.GUIClass, "")
			sc.comments = append(sc.comments, fmt.Sprintf("not converted: %s %q (%s)", typeName(e), e.Name, e.GUIClass))
			return true
		}
		c.httpDefaults(path, e, sc)
		return true
	case "HeaderManager":
		for _, h := range headers(e) {
			t := c.translate(h.Value)
			sc.headers = setHeader(sc.headers, convert.KV{Name: h.Name, Value: t.T})
			if isSecretHeader(h.Name) && !strings.Contains(h.Value, "${") && h.Value != "" {
				c.report.Notes = append(c.report.Notes, "Header "+h.Name+" holds a literal secret in the JMeter plan; it is kept (plateau never writes it to reports) but consider ${env.…}.")
			}
		}
		st, note, needs := c.status(e, nil)
		c.add(path, e, st, note, needs)
		return true
	case "CookieManager":
		t := true
		c.plan.HTTP.Cookies = &t
		st, note, needs := convert.Converted, "plateau keeps a cookie jar per virtual user", ""
		if e.Bool("CookieManager.clearEachIteration", false) {
			c.plan.HTTP.CookiesPerIteration = true
			note = "a cookie jar per virtual user, emptied at each iteration (cookies: per_iteration)"
		}
		if len(e.props.arguments("CookieManager.cookies")) > 0 || hasItems(e, "CookieManager.cookies") {
			st, note, needs = convert.Partial, "predefined cookies not converted", "predefined cookies"
		}
		c.add(path, e, st, note, needs)
		return true
	case "CacheManager":
		c.add(path, e, convert.Partial, "plateau sends every request; responses a browser cache would reuse are fetched again", "HTTP cache")
		return true
	case "DNSCacheManager":
		c.add(path, e, convert.NotNeeded, "plateau resolves names itself", "")
		return true
	case "AuthManager":
		c.authManager(path, e, sc)
		return true
	case "CSVDataSet":
		c.csv(path, e)
		return true
	case "UserParameters":
		if c.userParams(path, e) {
			return true
		}
	case "Arguments":
		for _, a := range e.props.arguments("") {
			c.defineVar(a.Name, a.Value)
		}
		c.add(path, e, convert.Converted, "plan vars", "")
		return true
	case "RegexExtractor", "JSONPostProcessor", "BoundaryExtractor", "HtmlExtractor", "XPathExtractor", "XPath2Extractor",
		"JSONPathExtractor", "com.atlantbh.jmeter.plugins.jsonutils.jsonpathextractor.JSONPathExtractor":
		c.extractor(path, e, sc)
		return true
	case "ResponseAssertion", "JSONPathAssertion", "DurationAssertion", "SizeAssertion":
		c.assertion(path, e, sc)
		return true
	case "ConstantTimer", "UniformRandomTimer", "GaussianRandomTimer", "PoissonRandomTimer":
		c.timer(path, e, sc)
		return true
	case "ConstantThroughputTimer", "PreciseThroughputTimer":
		if c.throughputTimer(path, e) {
			return true
		}
		c.add(path, e, convert.NotConverted, "throughput shaping whose target is not a number; use an open load (rate) or pacing instead", "throughput timer")
		sc.comments = append(sc.comments, fmt.Sprintf("not converted: %s %q: use load.rate or load.pace", typeName(e), e.Name))
		return true
	case "kg.apc.jmeter.timers.VariableThroughputTimer":
		c.add(path, e, convert.NotConverted, "throughput shaping; use an open load (rate) or pacing instead", "throughput timer")
		sc.comments = append(sc.comments, fmt.Sprintf("not converted: %s %q: use load.rate or load.pace", typeName(e), e.Name))
		return true
	case "SyncTimer":
		n, err := strconv.Atoi(strings.TrimSpace(e.Str("groupSize")))
		ms, err2 := strconv.Atoi(strings.TrimSpace(e.Str("timeoutInMs")))
		if err != nil || n <= 0 || err2 != nil {
			c.add(path, e, convert.NotConverted, "group size 0 (all threads) or values from variables", "rendezvous of all users")
			sc.comments = append(sc.comments, fmt.Sprintf("not converted: %s %q: set a rendezvous with the number of users", typeName(e), e.Name))
			return true
		}
		note := "rendezvous before each request in its scope"
		st := convert.Converted
		if ms <= 0 {
			ms = 60000
			st, note = convert.Partial, note+"; JMeter waits forever, plateau at most 60s"
		}
		sc.before = append(sc.before, convert.Step{Rendezvous: &convert.Rendezvous{Name: plainText(e.Name), Users: n, Timeout: time.Duration(ms) * time.Millisecond}})
		c.add(path, e, st, note, "")
		return true
	case "RandomVariableConfig":
		c.randomVariable(path, e)
		return true
	case "CounterConfig":
		c.counterConfig(path, e)
		return true
	}
	if isListener(e) {
		c.listener(path, e)
		return true
	}
	if strings.HasSuffix(tc, "PostProcessor") || strings.HasSuffix(tc, "PreProcessor") {
		if copies, ok := propsScript(firstNonEmpty(e.Str("script"), e.Str("BeanShellPostProcessor.script"))); ok {
			// The plan shares variables itself: ${__P(name)} elsewhere
			// reads the variable.
			var names []string
			for prop, v := range copies {
				c.props[prop] = v
				names = append(names, prop)
			}
			sort.Strings(names)
			st, note := convert.Converted, "copies variables into properties ("+strings.Join(names, ", ")+"): ${__P(…)} of them reads the variables"
			if !c.inRunSetup {
				st, note = convert.Partial, note+"; plateau shares extracted variables across workloads only from the run-level setup"
			}
			c.add(path, e, st, note, "")
			return true
		}
	}
	switch {
	case strings.HasSuffix(tc, "PreProcessor"), strings.HasSuffix(tc, "PostProcessor"), strings.HasSuffix(tc, "Assertion"),
		strings.HasSuffix(tc, "Timer"), strings.HasSuffix(tc, "Listener"), strings.HasSuffix(tc, "Config"),
		strings.HasSuffix(tc, "Manager"), strings.HasSuffix(tc, "DataSource"), strings.HasSuffix(tc, "Modifier"),
		tc == "UserParameters", tc == "RegExUserParameters", strings.HasSuffix(tc, "Extractor"):
		why := unconvertedWhy(e)
		c.add(path, e, convert.NotConverted, why, "")
		lines := []string{fmt.Sprintf("not converted: %s %q (jmx line %d): %s", typeName(e), e.Name, e.Line, why)}
		sc.comments = append(sc.comments, append(lines, scriptExcerpt(e)...)...)
		return true
	}
	return false
}

func hasItems(e *Element, name string) bool {
	p := e.props.prop(name)
	if p == nil {
		return false
	}
	if coll := p.prop("CookieManager.cookies"); coll != nil {
		return len(coll.children) > 0
	}
	for _, k := range p.children {
		if k.name == "elementProp" {
			return true
		}
	}
	return false
}

// status is Converted, or Partial when translation needed features.
func (c *conv) status(e *Element, needs []string) (convert.Status, string, string) {
	if len(needs) > 0 {
		return convert.Partial, "", needs[0]
	}
	return convert.Converted, "", ""
}

type header struct{ Name, Value string }

func headers(e *Element) []header {
	p := e.props.prop("HeaderManager.headers")
	if p == nil {
		return nil
	}
	var out []header
	for _, h := range p.children {
		n := h.str("Header.name")
		if n == "" {
			continue
		}
		out = append(out, header{n, h.str("Header.value")})
	}
	return out
}

// setHeader sets a header, replacing one of the same name (the closer
// header manager wins in JMeter).
func setHeader(list []convert.KV, h convert.KV) []convert.KV {
	for i := range list {
		if strings.EqualFold(list[i].Name, h.Name) {
			list[i] = h
			return list
		}
	}
	return append(list, h)
}

// isSecretHeader is the secret rule (secret.IsName): Authorization,
// Cookie, X-Api-Key, X-Okapi-Token, … are read from the environment.
func isSecretHeader(name string) bool { return secret.IsName(name) }

func (c *conv) httpDefaults(path string, e *Element, sc *scope) {
	d := &httpDefaults{
		protocol: e.Str("HTTPSampler.protocol"),
		domain:   e.Str("HTTPSampler.domain"),
		port:     e.Str("HTTPSampler.port"),
		path:     e.Str("HTTPSampler.path"),
		encoding: e.Str("HTTPSampler.contentEncoding"),
		args:     e.props.arguments("HTTPsampler.Arguments"),
	}
	if sc.defaults != nil {
		// Inner defaults fill what outer ones leave empty, and override.
		merged := *sc.defaults
		for _, kv := range []struct{ dst *string }{{&merged.protocol}, {&merged.domain}, {&merged.port}, {&merged.path}, {&merged.encoding}} {
			_ = kv
		}
		if d.protocol != "" {
			merged.protocol = d.protocol
		}
		if d.domain != "" {
			merged.domain = d.domain
		}
		if d.port != "" {
			merged.port = d.port
		}
		if d.path != "" {
			merged.path = d.path
		}
		merged.args = append(append([]argument(nil), merged.args...), d.args...)
		d = &merged
	}
	sc.defaults = d
	if ms, err := strconv.Atoi(strings.TrimSpace(e.Str("HTTPSampler.response_timeout"))); err == nil && ms > 0 {
		sc.timeout = time.Duration(ms) * time.Millisecond
	}
	if ms, err := strconv.Atoi(strings.TrimSpace(e.Str("HTTPSampler.connect_timeout"))); err == nil && ms > 0 && c.plan.HTTP.ConnectTimeout == 0 {
		c.plan.HTTP.ConnectTimeout = time.Duration(ms) * time.Millisecond
	}
	note := ""
	if !c.targetSet && d.domain != "" {
		c.plan.Target = c.origin(d.protocol, d.domain, d.port)
		c.targetSet = true
		note = "target " + c.plan.Target
	}
	st := convert.Converted
	needs := ""
	if e.Bool("HTTPSampler.image_parser", false) {
		st, needs = convert.Partial, "embedded resources"
	}
	c.add(path, e, st, note, needs)
}

// origin builds "proto://host:port" from JMeter fields, folding User
// Defined Variables and properties in.
func (c *conv) origin(proto, domain, port string) string {
	proto = strings.ToLower(strings.TrimSpace(c.fold(proto)))
	if proto == "" {
		proto = "http"
	}
	if !strings.HasPrefix(proto, "${") && proto != "http" && proto != "https" {
		proto = "http"
	}
	host := c.foldWith(strings.TrimSpace(domain), true)
	host = envDefaultRe.ReplaceAllStringFunc(host, func(m string) string {
		sub := envDefaultRe.FindStringSubmatch(m)
		if hostRe.MatchString(sub[2]) {
			return m
		}
		c.report.Notes = append(c.report.Notes, "The host default "+sub[2]+" is not a host name; localhost stands in (set "+sub[1]+").")
		return "${env." + sub[1] + ":-localhost}"
	})
	p := c.foldWith(strings.TrimSpace(port), true)
	if host == "" || !hostRe.MatchString(envDefaultRe.ReplaceAllString(host, "h")) {
		c.report.Notes = append(c.report.Notes, "The host "+quoteOr(domain)+" is not a host name plateau can use as a target; ${env.TARGET_HOST:-localhost} stands in.")
		host = "${env.TARGET_HOST:-localhost}"
		if !c.envSeen["TARGET_HOST"] {
			c.envSeen["TARGET_HOST"] = true
			c.report.Env = append(c.report.Env, convert.EnvVar{Env: "TARGET_HOST", What: "host of the service under test"})
		}
	}
	out := proto + "://" + host
	if p != "" && !(proto == "http" && p == "80") && !(proto == "https" && p == "443") {
		out += ":" + p
	}
	return out
}

// fold translates text and replaces references to User Defined Variables by
// their values, for places where plateau takes no variables (target).
func (c *conv) fold(s string) string {
	return c.foldWith(s, false)
}

// foldWith is fold; with data it also folds in the first row of CSV data
// sets (for a host or port JMeter reads per user from a file).
func (c *conv) foldWith(s string, data bool) string {
	for range 5 {
		changed := false
		for name, v := range c.consts {
			ref := "${" + name + "}"
			if strings.Contains(s, ref) {
				s = strings.ReplaceAll(s, ref, v)
				changed = true
			}
		}
		if data {
			for name, v := range c.csvFirst {
				ref := "${" + name + "}"
				if strings.Contains(s, ref) {
					s = strings.ReplaceAll(s, ref, v)
					changed = true
					c.behaviour("every request goes to the plan's target; JMeter read ${" + name + "} for the host or port from a data file per user (its first row, " + v + ", is in the target)")
				}
			}
		}
		if !changed {
			break
		}
	}
	t := c.translate(s)
	return stripNonEnv(t.T)
}

var (
	envDefaultRe = regexp.MustCompile(`\$\{env\.([A-Za-z0-9_]+):-([^}]*)\}`)
	hostRe       = regexp.MustCompile(`^[A-Za-z0-9.-]+$`)
)

// pickTarget chooses the target when no HTTP Request Defaults name a host:
// the most used origin of the samplers.
func (c *conv) pickTarget(root *Element) {
	counts := map[string]int{}
	var order []string
	var walk func(e *Element)
	walk = func(e *Element) {
		if !e.Enabled {
			return
		}
		if strings.HasPrefix(e.TestClass, "HTTPSampler") && e.Str("HTTPSampler.domain") != "" {
			o := c.origin(e.Str("HTTPSampler.protocol"), e.Str("HTTPSampler.domain"), e.Str("HTTPSampler.port"))
			if counts[o] == 0 {
				order = append(order, o)
			}
			counts[o]++
		}
		for _, k := range e.Children {
			walk(k)
		}
	}
	walk(root)
	best := ""
	for _, o := range order {
		if best == "" || counts[o] > counts[best] {
			best = o
		}
	}
	if best == "" {
		best = "${env.TARGET:-http://localhost}"
		c.report.Notes = append(c.report.Notes, "No HTTP request names a host; the target reads TARGET from the environment (default http://localhost).")
		c.report.Env = append(c.report.Env, convert.EnvVar{Env: "TARGET", What: "the base URL of the service under test"})
	}
	c.plan.Target = best
	c.targetSet = true
}

func (c *conv) authManager(path string, e *Element, sc *scope) {
	p := e.props.prop("AuthManager.auth_list")
	n := 0
	if p != nil {
		for _, a := range p.children {
			mech := a.str("Auth.mechanism")
			if mech != "" && mech != "BASIC" && mech != "BASIC_DIGEST" {
				continue
			}
			user := a.str("Auth.username")
			pass := a.str("Auth.password")
			n++
			env := fmt.Sprintf("BASIC_AUTH_%d", n)
			if n == 1 {
				env = "BASIC_AUTH"
			}
			ut, pt := c.translate(user), c.translate(pass)
			if len(ut.Vars)+len(pt.Vars) == 0 && !strings.Contains(ut.T+pt.T, "${") {
				// A literal password is a secret: the plan reads the encoded
				// credentials from the environment instead.
				c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: fmt.Sprintf("Basic credentials for %s, base64 of user:password (user %q)", a.str("Auth.url"), user)})
				sc.headers = setHeader(sc.headers, convert.KV{Name: "Authorization", Value: "Basic ${env." + env + "}"})
				_ = base64.StdEncoding
				continue
			}
			c.report.Env = append(c.report.Env, convert.EnvVar{Env: env, What: fmt.Sprintf("Basic credentials for %s, base64 of user:password (user and password come from variables in JMeter)", a.str("Auth.url"))})
			sc.headers = setHeader(sc.headers, convert.KV{Name: "Authorization", Value: "Basic ${env." + env + "}"})
		}
	}
	if n == 0 {
		c.add(path, e, convert.NotConverted, "only Basic authentication converts (Kerberos/Digest not)", "authentication mechanism")
		return
	}
	note := "Basic credentials read from the environment (never written into the plan)"
	st := convert.Converted
	if n > 1 {
		st, note = convert.Partial, note+"; several URLs: all requests send the last one"
	}
	c.add(path, e, st, note, "")
}

// csv converts a CSV Data Set Config into a feeder whose columns replace
// the JMeter variables.
func (c *conv) csv(path string, e *Element) {
	raw := strings.TrimSpace(e.Str("filename"))
	file := c.fold(raw)
	if strings.HasPrefix(raw, "${") && strings.HasPrefix(file, "/") {
		// "${baseDir}/data.csv" with a base directory computed by a script:
		// the path is relative to the plan instead.
		file = strings.TrimLeft(file, "/")
		c.report.Notes = append(c.report.Notes, "The data file "+raw+" starts with a directory computed at run time; the plan reads "+file+" relative to the plan's directory.")
	}
	names := strings.TrimSpace(e.Str("variableNames"))
	delim := e.Str("delimiter")
	if delim == "" {
		delim = ","
	}
	c.feeders++
	name := convert.VarName(strings.TrimSuffix(lastPathPart(file), extOf(file)))
	if name == "_" || name == "" {
		name = fmt.Sprintf("data%d", c.feeders)
	}
	for _, f := range c.plan.Data {
		if f.CSV == file && f.Delimiter == delim && (names == "" || strings.Join(f.Columns, ",") == csvColumns(names, delim)) {
			// The same data set again (a module inlined): one feeder.
			for _, col := range strings.Split(names, ",") {
				if col = strings.TrimSpace(col); col != "" {
					c.vars[col] = f.Name + "." + convert.VarName(col)
				}
			}
			c.add(path, e, convert.Converted, "same data as feeder "+f.Name, "")
			return
		}
		if f.Name == name {
			name = fmt.Sprintf("%s%d", name, c.feeders)
		}
	}
	f := convert.Feeder{Name: name, CSV: file, Delimiter: delim}
	var notes []string
	needs := ""
	st := convert.Converted
	if names == "" {
		// JMeter reads the names from the file's first row, as plateau
		// does; read them too, to rename the variables.
		full := file
		if !filepath.IsAbs(full) {
			full = filepath.Join(filepath.Dir(c.opt.Source), file)
		}
		data, err := c.opt.ReadFile(full)
		if err != nil {
			st = convert.Partial
			notes = append(notes, "column names come from the file's first row, but "+file+" could not be read here: references to its columns stay plain variables")
		} else {
			first, _, _ := strings.Cut(strings.TrimPrefix(string(data), "\ufeff"), "\n")
			d := delim
			if d == `\t` {
				d = "\t"
			}
			for _, col := range strings.Split(strings.TrimRight(first, "\r"), d) {
				col = strings.Trim(strings.TrimSpace(col), `"`)
				if col == "" {
					continue
				}
				f.Columns = append(f.Columns, col)
				c.vars[col] = name + "." + col
			}
			notes = append(notes, "column names from the file's first row: "+strings.Join(f.Columns, ", "))
		}
	} else {
		// JMeter splits the variable names on commas, whatever the
		// file's delimiter. Without ignoreFirstLine every row is data: the
		// plan declares the columns (a headerless CSV).
		var cols []string
		for _, col := range strings.Split(names, ",") {
			if col = strings.TrimSpace(col); col != "" {
				cols = append(cols, col)
			}
		}
		header := c.csvHeader(file, delim)
		if e.Bool("ignoreFirstLine", false) && len(header) == len(cols) {
			// JMeter skips the first line; plateau reads it as the header:
			// each variable is the file's column at its position.
			for i, col := range cols {
				f.Columns = append(f.Columns, header[i])
				c.vars[col] = name + "." + header[i]
			}
			notes = append(notes, "the first line (skipped by JMeter) names the columns; the variables read them by position")
		} else {
			f.Headerless = true
			for _, col := range cols {
				pc := convert.VarName(col)
				f.Columns = append(f.Columns, pc)
				c.vars[col] = name + "." + pc
			}
			if e.Bool("ignoreFirstLine", false) {
				st = convert.Partial
				notes = append(notes, "JMeter skips the file's first line; plateau reads it as data (its first line could not be read here or has another number of fields)")
			}
		}
	}
	recycle := e.Bool("recycle", true)
	stop := e.Bool("stopThread", false)
	switch {
	case recycle:
		f.OnExhausted = "recycle"
	case stop:
		// JMeter stops the thread that found no row; the others go on.
		f.OnExhausted = "stop_user"
	default:
		f.OnExhausted = "stop"
		notes = append(notes, "JMeter sends <EOF> after the last row; plateau stops the workload")
		st = convert.Partial
	}
	switch e.Str("shareMode") {
	case "", "shareMode.all":
	case "shareMode.group":
		if c.threadGroups() > 1 {
			st = convert.Partial
			needs = firstNonEmpty(needs, "CSV share mode per thread/group")
			notes = append(notes, "share mode per thread group: plateau shares the rows among the users of every workload")
		} else {
			notes = append(notes, "shared by the users of its one thread group")
		}
	case "shareMode.thread":
		// Each thread opens the file for itself and reads it from the
		// first row: every user on its own cursor.
		f.Order = "each_user"
		notes = append(notes, "share mode current thread: each user reads the file from its first row (order: each_user)")
	default:
		st = convert.Partial
		needs = firstNonEmpty(needs, "CSV share mode per thread/group")
		notes = append(notes, "share mode "+e.Str("shareMode")+": plateau shares the rows among all users")
	}
	if e.Bool("quotedData", false) {
		notes = append(notes, "quoted fields are read as CSV quoting")
	}
	c.plan.Data = append(c.plan.Data, f)
	if c.inEndless == 0 {
		c.outside = append(c.outside, f.Name)
	}
	c.add(path, e, st, strings.Join(notes, "; "), needs)
}

// csvHeader reads the first line of a data file named by the plan,
// split at delim, when the file is there; its fields must be names plateau
// can use as columns, else nil.
func (c *conv) csvHeader(file, delim string) []string {
	full := file
	if !filepath.IsAbs(full) {
		full = filepath.Join(filepath.Dir(c.opt.Source), file)
	}
	data, err := c.opt.ReadFile(full)
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(strings.TrimPrefix(string(data), "\ufeff"), "\n")
	if delim == `\t` {
		delim = "\t"
	}
	var out []string
	for _, col := range strings.Split(strings.TrimRight(first, "\r"), delim) {
		col = strings.Trim(strings.TrimSpace(col), `"`)
		if col == "" || convert.VarName(col) != col {
			return nil
		}
		out = append(out, col)
	}
	return out
}

func csvColumns(names, _ string) string {
	var cols []string
	for _, col := range strings.Split(names, ",") {
		if col = strings.TrimSpace(col); col != "" {
			cols = append(cols, convert.VarName(col))
		}
	}
	return strings.Join(cols, ",")
}

func lastPathPart(p string) string {
	p = strings.ReplaceAll(p, "\\", "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func extOf(p string) string {
	b := lastPathPart(p)
	if i := strings.LastIndexByte(b, '.'); i > 0 {
		return b[i:]
	}
	return ""
}

func (c *conv) extractor(path string, e *Element, sc *scope) {
	st := convert.Converted
	var notes []string
	needs := ""
	var got []convert.Extract
	def := func(v string, emptyFlag bool) *string {
		if v == "" && !emptyFlag {
			return nil
		}
		return &v
	}
	// match applies JMeter's match number: 1 the first, 0 a random one, -1
	// all of them (name_1 … name_N, for a ForEach Controller).
	match := func(ex *convert.Extract, ref, m string) {
		switch strings.TrimSpace(m) {
		case "", "1":
		case "0":
			ex.Pick = "random"
		case "-1":
			ex.All = true
			c.allVars[ref] = true
			notes = append(notes, "all matches, as a list for foreach (JMeter's "+ref+"_N variables)")
		default:
			st, needs = convert.Partial, "extraction of the Nth match"
			notes = append(notes, "match number "+m+": plateau takes the first")
		}
	}
	switch e.TestClass {
	case "RegexExtractor":
		ref := e.Str("RegexExtractor.refname")
		re := e.Str("RegexExtractor.regex")
		tmpl := e.Str("RegexExtractor.template")
		field := e.Str("RegexExtractor.useHeaders")
		if strings.Contains(re, "${") {
			st, needs = convert.NotConverted, "variables in extraction patterns"
			break
		}
		if _, err := regexp.Compile(re); err != nil {
			st, needs = convert.NotConverted, "Perl regex syntax ("+err.Error()+")"
			break
		}
		switch field {
		case "", "false":
		case "true":
			if m := headerRegexRe.FindStringSubmatch(re); m != nil && !strings.EqualFold(m[1], "Set-Cookie") {
				got = append(got, convert.Extract{Var: c.setVar(ref), Header: m[1], Default: def(e.Str("RegexExtractor.default"), e.Bool("RegexExtractor.default_empty_value", false))})
				notes = append(notes, "the whole "+m[1]+" response header: header extraction")
				goto done
			}
			if m := setCookieRe.FindStringSubmatch(re); m != nil {
				got = append(got, convert.Extract{Var: c.setVar(ref), Cookie: m[1], Default: def(e.Str("RegexExtractor.default"), e.Bool("RegexExtractor.default_empty_value", false))})
				notes = append(notes, "a Set-Cookie header: cookie extraction")
				goto done
			}
			st, needs = convert.NotConverted, "regex on response headers"
		default:
			st, needs = convert.NotConverted, "regex on "+field
		}
		if st == convert.NotConverted {
			break
		}
		if tmpl != "" && tmpl != "$1$" && !(tmpl == "$0$" && !strings.Contains(re, "(")) {
			notes = append(notes, "template "+tmpl+": plateau takes the first capture group")
			st = convert.Partial
		}
		ex := convert.Extract{Var: c.setVar(ref), Regex: re, Default: def(e.Str("RegexExtractor.default"), e.Bool("RegexExtractor.default_empty_value", false))}
		match(&ex, ref, e.Str("RegexExtractor.match_number"))
		got = append(got, ex)
	case "JSONPostProcessor":
		refs := strings.Split(e.Str("JSONPostProcessor.referenceNames"), ";")
		paths := strings.Split(e.Str("JSONPostProcessor.jsonPathExprs"), ";")
		defs := strings.Split(e.Str("JSONPostProcessor.defaultValues"), ";")
		matches := strings.Split(e.Str("JSONPostProcessor.match_numbers"), ";")
		for i, r := range refs {
			r = strings.TrimSpace(r)
			if r == "" || i >= len(paths) {
				continue
			}
			jp := jsonPath(paths[i])
			if _, err := expr.ParsePath(jp); err != nil || strings.Contains(jp, "${") {
				st, needs = convert.NotConverted, "this JSONPath ("+jp+")"
				continue
			}
			var d *string
			if i < len(defs) {
				v := defs[i]
				d = &v
			}
			ex := convert.Extract{Var: c.setVar(r), JSON: jp, Default: d}
			if i < len(matches) {
				match(&ex, r, matches[i])
			}
			got = append(got, ex)
		}
		if e.Bool("JSONPostProcessor.compute_concat", false) {
			notes = append(notes, "concatenation of all matches not converted")
			st = convert.Partial
		}
	case "BoundaryExtractor":
		ref := e.Str("BoundaryExtractor.refname")
		l, r := e.Str("BoundaryExtractor.lboundary"), e.Str("BoundaryExtractor.rboundary")
		if strings.Contains(l+r, "${") {
			st, needs = convert.NotConverted, "variables in extraction patterns"
			break
		}
		if field := e.Str("BoundaryExtractor.useHeaders"); field != "" && field != "false" {
			st, needs = convert.NotConverted, "boundary extraction on "+field
			break
		}
		ex := convert.Extract{Var: c.setVar(ref), Left: l, Right: r, Default: def(e.Str("BoundaryExtractor.default"), e.Bool("BoundaryExtractor.default_empty_value", false))}
		if l == "" && r == "" {
			ex = convert.Extract{Var: ex.Var, Regex: "(?s)(.*)", Default: ex.Default}
		}
		match(&ex, ref, e.Str("BoundaryExtractor.match_number"))
		got = append(got, ex)
	case "HtmlExtractor":
		ref := e.Str("HtmlExtractor.refname")
		sel := e.Str("HtmlExtractor.expr")
		if strings.Contains(sel, "${") || sel == "" {
			st, needs = convert.NotConverted, "variables in CSS selectors"
			break
		}
		ex := convert.Extract{Var: c.setVar(ref), CSS: sel, Attr: e.Str("HtmlExtractor.attribute"), Default: def(e.Str("HtmlExtractor.default"), e.Bool("HtmlExtractor.default_empty_value", false))}
		match(&ex, ref, e.Str("HtmlExtractor.match_number"))
		got = append(got, ex)
	case "XPathExtractor", "XPath2Extractor":
		pre := "XPathExtractor."
		if e.TestClass == "XPath2Extractor" {
			pre = "XPathExtractor2."
		}
		ref := e.Str(pre + "refname")
		q := e.Str(pre + "xpathQuery")
		if strings.Contains(q, "${") || q == "" {
			st, needs = convert.NotConverted, "variables in XPath queries"
			break
		}
		ex := convert.Extract{Var: c.setVar(ref), XPath: q, Default: def(e.Str(pre+"default"), false)}
		match(&ex, ref, e.Str(pre+"matchNumber"))
		got = append(got, ex)
	default:
		st, needs = convert.NotConverted, "this JSON extractor plugin"
	}
done:
	if st == convert.NotConverted {
		c.add(path, e, st, strings.Join(notes, "; "), needs)
		sc.comments = append(sc.comments, fmt.Sprintf("not converted: %s %q (jmx line %d) (needs plateau feature %s)", typeName(e), e.Name, e.Line, needs))
		return
	}
	sc.extract = append(sc.extract, got...)
	c.add(path, e, st, strings.Join(notes, "; "), needs)
}

// headerRegexRe recognises a header regex that reads a whole header value:
// "x-okapi-token: (.+)".
var headerRegexRe = regexp.MustCompile(`^(?:\(\?i\))?\^?([A-Za-z0-9_\-]+):\s*\(\.[*+]\??\)\$?$`)

// propsPutRe is a script line that only copies a variable into a property,
// props.put("name", vars.get("name")), JMeter's way of handing a value
// from one thread group to the others.
var propsPutRe = regexp.MustCompile(`^props\.put\(\s*["']([^"']+)["']\s*,\s*vars\.get\(\s*["']([^"']+)["']\s*\)\s*\)\s*;?$`)

// propsScript reports the property → variable copies of a script made only
// of props.put(…, vars.get(…)) lines (and comments).
func propsScript(script string) (map[string]string, bool) {
	out := map[string]string{}
	for _, l := range strings.Split(script, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "//") {
			continue
		}
		m := propsPutRe.FindStringSubmatch(l)
		if m == nil {
			// ${__setProperty(name,${var},)}: the function JMeter
			// evaluates before running the script.
			m = setPropRe.FindStringSubmatch(l)
		}
		if m == nil {
			return nil, false
		}
		out[m[1]] = m[2]
	}
	return out, len(out) > 0
}

var setPropRe = regexp.MustCompile(`^\$\{__setProperty\(\s*([A-Za-z0-9_.\-]+)\s*,\s*\$\{([A-Za-z0-9_.\-]+)\}\s*(?:,\s*(?:false)?\s*)?\)\};?$`)

// setCookieRe recognises a header regex that reads one cookie.
var setCookieRe = regexp.MustCompile(`^(?:\(\?i\))?Set-Cookie:\s*([A-Za-z0-9_.\-]+)=`)

func (c *conv) assertion(path string, e *Element, sc *scope) {
	st := convert.Converted
	var notes []string
	needs := ""
	var chk convert.Check
	var extra []convert.Check
	switch e.TestClass {
	case "ResponseAssertion":
		field := e.Str("Assertion.test_field")
		typ, _ := strconv.Atoi(strings.TrimSpace(e.Str("Assertion.test_type")))
		var strs []string
		if p := e.props.prop("Asserion.test_strings"); p != nil {
			for _, s := range p.children {
				strs = append(strs, s.text.String())
			}
		}
		not := typ&4 != 0
		or := typ&32 != 0
		kind := typ &^ (4 | 32)
		if e.Bool("Assertion.assume_success", false) {
			notes = append(notes, "ignore status: plateau still counts statuses ≥ 400 as errors unless listed")
			st = convert.Partial
		}
		for _, s := range strs {
			if strings.Contains(s, "${") {
				st, needs = convert.NotConverted, "templates in checks"
			}
		}
		if st == convert.NotConverted {
			break
		}
		switch field {
		case "Assertion.response_code":
			var codes []int
			ok := !not
			for _, s := range strs {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n < 100 || n > 599 {
					ok = false
					break
				}
				codes = append(codes, n)
			}
			if !ok || len(codes) == 0 {
				st, needs = convert.NotConverted, "status checks other than a list of codes"
				break
			}
			if len(codes) > 1 && !or {
				notes = append(notes, "several codes that must all match: plateau accepts any of them")
				st = convert.Partial
			}
			chk.Status = codes
		case "Assertion.response_data", "", "Assertion.response_data_as_document", "Assertion.response_message":
			if field == "Assertion.response_message" {
				st, needs = convert.NotConverted, "checks on the status message"
				break
			}
			var res []string
			for _, s := range strs {
				switch kind {
				case 16: // substring
					res = append(res, regexp.QuoteMeta(s))
				case 8: // equals
					res = append(res, "^"+regexp.QuoteMeta(s)+"$")
				case 1: // matches the whole body
					res = append(res, "^(?:"+s+")$")
				default: // contains (regex)
					res = append(res, s)
				}
			}
			for _, r := range res {
				if _, err := regexp.Compile(r); err != nil {
					st, needs = convert.NotConverted, "Perl regex syntax in checks"
				}
			}
			if st == convert.NotConverted {
				break
			}
			if or && len(res) > 1 {
				res = []string{"(?:" + strings.Join(res, ")|(?:") + ")"}
			}
			for i, r := range res {
				one := convert.Check{}
				lit := kind == 16 && !(or && len(strs) > 1)
				switch {
				case lit && not:
					one.NotBody = strs[i]
				case lit:
					one.Body = strs[i]
				case not:
					one.NotRegex = "(?s)" + r
				default:
					one.Regex = "(?s)" + r
				}
				if i == 0 {
					chk = one
				} else {
					extra = append(extra, one)
				}
			}
		default:
			st, needs = convert.NotConverted, "checks on "+strings.TrimPrefix(field, "Assertion.")
		}
	case "JSONPathAssertion":
		jp := jsonPath(e.Str("JSON_PATH"))
		val := e.Str("EXPECTED_VALUE")
		if _, err := expr.ParsePath(jp); err != nil {
			st, needs = convert.NotConverted, "this JSONPath ("+jp+")"
			break
		}
		if strings.Contains(val, "${") {
			st, needs = convert.NotConverted, "templates in checks"
			break
		}
		invert := e.Bool("INVERT", false)
		switch {
		case e.Bool("EXPECT_NULL", false) && !invert:
			chk.JSON = []convert.KV{{Name: jp, Value: "null"}}
		case e.Bool("EXPECT_NULL", false):
			chk.JSONNot = []convert.KV{{Name: jp, Value: "null"}}
		case !e.Bool("JSONVALIDATION", false) && !invert:
			chk.JSONExists = []string{jp}
		case !e.Bool("JSONVALIDATION", false):
			st, needs = convert.NotConverted, "inverted JSON path exists checks"
		case e.Bool("ISREGEX", false) && !invert:
			chk.JSONMatch = []convert.KV{{Name: jp, Value: "^(?:" + val + ")$"}}
		case e.Bool("ISREGEX", false):
			st, needs = convert.NotConverted, "inverted regex JSON checks"
		case invert:
			chk.JSONNot = []convert.KV{{Name: jp, Value: val}}
		default:
			chk.JSON = []convert.KV{{Name: jp, Value: val}}
		}
	case "DurationAssertion":
		ms, err := strconv.Atoi(strings.TrimSpace(e.Str("DurationAssertion.duration")))
		if err != nil || ms <= 0 {
			st, needs = convert.NotConverted, "duration from a variable"
			break
		}
		chk.MaxDuration = time.Duration(ms) * time.Millisecond
	case "SizeAssertion":
		n, err := strconv.Atoi(strings.TrimSpace(e.Str("SizeAssertion.size")))
		scope := e.Str("Assertion.test_field")
		if err != nil || (scope != "" && scope != "SizeAssertion.response_data" && scope != "Assertion.response_data") {
			st, needs = convert.NotConverted, "size checks on headers or from variables"
			break
		}
		switch e.Str("SizeAssertion.operator") {
		case "1": // =
			chk.MinSize, chk.MaxSize = n, n
		case "3": // >
			chk.MinSize = n + 1
		case "4": // <
			chk.MaxSize = max(n-1, 0)
		case "5": // >=
			chk.MinSize = n
		case "6": // <=
			chk.MaxSize = n
		default:
			st, needs = convert.NotConverted, "size not-equal checks"
		}
		if chk.MinSize == 0 && chk.MaxSize == 0 && st != convert.NotConverted {
			st, needs = convert.NotConverted, "an empty-body size check"
		}
	}
	c.add(path, e, st, strings.Join(notes, "; "), needs)
	if st == convert.NotConverted {
		sc.comments = append(sc.comments, fmt.Sprintf("not converted: %s %q (jmx line %d) (needs plateau feature %s)", typeName(e), e.Name, e.Line, needs))
		return
	}
	for _, k := range append([]convert.Check{chk}, extra...) {
		if !k.IsZero() {
			sc.checks = append(sc.checks, k)
		}
	}
}

func (c *conv) timer(path string, e *Element, sc *scope) {
	ms := func(name string) (time.Duration, bool) {
		v := strings.TrimSpace(e.Str(name))
		if v == "" {
			return 0, true
		}
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return time.Duration(f * float64(time.Millisecond)), true
		}
		// A variable or property holding a number: its value (a
		// property's default) is the delay.
		if n, ok := c.number(v, ""); ok && n != "" {
			if i, err := strconv.Atoi(n); err == nil {
				return time.Duration(i) * time.Millisecond, true
			}
			if m := envDefaultRe.FindStringSubmatch(n); m != nil {
				if i, err := strconv.Atoi(m[2]); err == nil {
					c.behaviour(fmt.Sprintf("think time %q: the delay %s is read from property %s at conversion (its default, %d ms); set it in the plan to change it", e.Name, v, m[1], i))
					return time.Duration(i) * time.Millisecond, true
				}
			}
		}
		if strings.ContainsAny(v, "+-*/ ") && !strings.HasPrefix(v, "${__") {
			// JMeter substitutes the variables and parses a whole number:
			// "1000 + ${offset}" is not one, and JMeter waits 0 ms for it
			// (measured with the wiretest harness). So does the plan.
			c.behaviour(fmt.Sprintf("think time %q: JMeter reads the delay %q as 0 ms (an expression, not a number; only the random part waits), and so does this plan", e.Name, v))
			return 0, true
		}
		return 0, false
	}
	st := convert.Converted
	note, needs := "think time before each request in its scope", ""
	d, ok1 := ms("ConstantTimer.delay")
	r, ok2 := ms("RandomTimer.range")
	if !ok1 || !ok2 {
		c.add(path, e, convert.NotConverted, "a delay from a variable", "think time from a variable")
		sc.comments = append(sc.comments, fmt.Sprintf("not converted: %s %q: its delay comes from a variable", typeName(e), e.Name))
		return
	}
	var t convert.Think
	switch e.TestClass {
	case "ConstantTimer":
		t = convert.Think{Fixed: d}
	case "UniformRandomTimer":
		t = convert.Think{Min: d, Max: d + r}
	case "GaussianRandomTimer":
		t = convert.Think{Dist: "gaussian", Mean: d, Spread: r}
		if r == 0 {
			t = convert.Think{Fixed: d}
		}
	case "PoissonRandomTimer":
		// offset + Poisson(λ) ms: an exponential with the same mean.
		t = convert.Think{Dist: "exponential", Mean: d + r}
		st, note = convert.Partial, "an exponential think time with the same mean (JMeter adds a Poisson-distributed delay to a constant)"
		if d+r == 0 {
			t = convert.Think{}
		}
	}
	sc.before = append(sc.before, convert.Step{Think: &t})
	c.add(path, e, st, note, needs)
}

// mergeChecks folds checks into as few as possible: a condition joins the
// first check that has none of its kind.
func mergeChecks(list []convert.Check) []convert.Check {
	var out []convert.Check
	for _, k := range list {
		merged := false
		for i := range out {
			o := &out[i]
			if (len(k.Status) == 0 || len(o.Status) == 0) && (k.Body == "" || o.Body == "") && (k.NotBody == "" || o.NotBody == "") &&
				(k.Regex == "" || o.Regex == "") && (k.NotRegex == "" || o.NotRegex == "") && (k.MinSize == 0 || o.MinSize == 0) &&
				(k.MaxSize == 0 || o.MaxSize == 0) && (k.MaxDuration == 0 || o.MaxDuration == 0) {
				o.Status = append(o.Status, k.Status...)
				o.Body += k.Body
				o.NotBody += k.NotBody
				o.Regex += k.Regex
				o.NotRegex += k.NotRegex
				o.MinSize += k.MinSize
				o.MaxSize += k.MaxSize
				o.MaxDuration += k.MaxDuration
				o.JSON = append(o.JSON, k.JSON...)
				o.JSONNot = append(o.JSONNot, k.JSONNot...)
				o.JSONMatch = append(o.JSONMatch, k.JSONMatch...)
				o.JSONExists = append(o.JSONExists, k.JSONExists...)
				o.HeaderMatch = append(o.HeaderMatch, k.HeaderMatch...)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, k)
		}
	}
	return out
}

// samplerScope adds the elements inside a sampler to its scope; anything
// else inside it is listed as not converted.
func (c *conv) samplerScope(path string, e *Element, sc scope) scope {
	sc = sc.clone()
	c.eachChild(path, e.Children, &sc, func(p string, k *Element) {
		st := c.unconverted(p, k, "not expected inside a sampler", "")
		sc.comments = append(sc.comments, st[0].Comment...)
	})
	return sc
}

// jsonPath normalises JMeter's JSONPath spellings to plateau's: "$.a.[0]"
// is "$.a[0]", ".id" and "id" are "$.id".
func jsonPath(p string) string {
	p = strings.TrimSpace(p)
	p = strings.ReplaceAll(p, ".[", "[")
	switch {
	case p == "$" || strings.HasPrefix(p, "$.") || strings.HasPrefix(p, "$["):
	case strings.HasPrefix(p, "."):
		p = "$" + p
	case strings.HasPrefix(p, "["):
		p = "$" + p
	default:
		p = "$." + p
	}
	return p
}

// httpSampler converts an HTTP Request and the elements inside it.
func (c *conv) httpSampler(path string, e *Element, sc scope) []convert.Step {
	sc = c.samplerScope(path, e, sc)
	r := &convert.Request{Name: plainText(e.Name)}
	var notes, needs []string
	d := sc.defaults
	if d == nil {
		d = &httpDefaults{}
	}
	proto := firstNonEmpty(e.Str("HTTPSampler.protocol"), d.protocol)
	domain := firstNonEmpty(e.Str("HTTPSampler.domain"), d.domain)
	port := firstNonEmpty(e.Str("HTTPSampler.port"), d.port)
	p := e.Str("HTTPSampler.path")
	if p == "" {
		p = d.path
	}
	method := strings.ToUpper(strings.TrimSpace(e.Str("HTTPSampler.method")))
	if method == "" {
		method = "GET"
	}
	r.Method = method
	pt := c.translate(strings.TrimSpace(p))
	needs = append(needs, pt.Needs...)
	u := pt.T
	lower := strings.ToLower(u)
	switch {
	case strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://"):
	case domain != "":
		o := c.origin(proto, domain, port)
		u = c.leadSlash(u)
		if o != c.plan.Target {
			u = o + u
		}
	default:
		u = c.leadSlash(u)
	}
	// Arguments: query for methods without a body, form or raw body otherwise.
	args := append(append([]argument(nil), d.args...), e.props.arguments("HTTPsampler.Arguments")...)
	raw := e.Bool("HTTPSampler.postBodyRaw", false)
	hasBody := method == "POST" || method == "PUT" || method == "PATCH" || (method == "DELETE" && raw)
	if raw {
		var body strings.Builder
		for _, a := range args {
			body.WriteString(a.Value)
		}
		t := c.translate(body.String())
		needs = append(needs, t.Needs...)
		s := t.T
		r.Body = &s
	} else if len(args) > 0 {
		if hasBody && !e.Bool("HTTPSampler.DO_MULTIPART_POST", false) {
			raw := false
			for _, a := range args {
				raw = raw || !a.Encode
			}
			if raw {
				// JMeter sends a field without "always encode" as it is
				// written ("1234+Test+St." stays so); plateau's form:
				// would encode it: the body is written out instead, each
				// encoded field encoded as JMeter does.
				var parts []string
				for _, a := range args {
					n, v := c.translate(a.Name), c.translate(a.Value)
					needs = append(needs, n.Needs...)
					needs = append(needs, v.Needs...)
					nt, vt := n.T, v.T
					if a.Encode {
						nt, vt = encodeValue(nt), encodeValue(vt)
					}
					if a.UseEquals || vt != "" {
						parts = append(parts, nt+"="+vt)
					} else {
						parts = append(parts, nt)
					}
				}
				body := strings.Join(parts, "&")
				r.Body = &body
			} else {
				for _, a := range args {
					t := c.translate(a.Value)
					needs = append(needs, t.Needs...)
					r.Form = append(r.Form, convert.KV{Name: plainText(a.Name), Value: t.T})
				}
			}
		} else {
			var q []string
			for _, a := range args {
				name := c.translate(a.Name)
				val := c.translate(a.Value)
				needs = append(needs, name.Needs...)
				needs = append(needs, val.Needs...)
				n, v := name.T, val.T
				if a.Encode {
					n, v = encodeValue(n), encodeValue(v)
				}
				if a.UseEquals || v != "" {
					q = append(q, n+"="+v)
				} else {
					q = append(q, n)
				}
			}
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			u += sep + strings.Join(q, "&")
			if hasBody {
				notes = append(notes, "multipart form sent as query parameters")
				needs = append(needs, "multipart bodies")
			}
		}
	}
	r.URL = u
	if strings.Contains(strings.TrimPrefix(r.URL, leadRef(r.URL)), "${") {
		// JMeter puts values into the path and into unencoded query
		// arguments as they are; encoded arguments are wrapped in
		// urlencode() above.
		r.NoEncode = true
	}
	if files := e.props.prop("HTTPsampler.Files"); files != nil && len(files.children) > 0 {
		if coll := files.prop("HTTPFileArgs.files"); coll != nil && len(coll.children) > 0 {
			notes = append(notes, "file upload not converted")
			needs = append(needs, "file upload bodies")
		}
	}
	r.Headers = append(r.Headers, sc.headers...)
	if ct := jmeterContentType(e, d, method, raw, r, args); ct != "" && !hasHeader(r.Headers, "Content-Type") && !hasHeader(c.plan.HTTP.Headers, "Content-Type") {
		// JMeter's HTTP client labels bodies itself when no Header
		// Manager does: the server sees that label.
		r.Headers = append(r.Headers, convert.KV{Name: "Content-Type", Value: ct})
	}
	r.Extract = sc.extract
	r.Checks = mergeChecks(sc.checks)
	if ms, err := strconv.Atoi(strings.TrimSpace(e.Str("HTTPSampler.response_timeout"))); err == nil && ms > 0 {
		r.Timeout = time.Duration(ms) * time.Millisecond
	} else if sc.timeout > 0 {
		r.Timeout = sc.timeout
	}
	if !e.Bool("HTTPSampler.follow_redirects", true) && !e.Bool("HTTPSampler.auto_redirects", false) {
		zero := 0
		r.Redirects = &zero
	}
	if e.Bool("HTTPSampler.image_parser", false) {
		notes = append(notes, "embedded resources not downloaded")
		needs = append(needs, "embedded resources")
	}
	r.Comment = append(r.Comment, sc.comments...)
	st, need := convert.StatusOf(notes, needs)
	c.add(path, e, st, strings.Join(notes, "; "), need)
	out := append([]convert.Step(nil), sc.before...)
	return append(out, convert.Step{Request: r})
}

func hasHeader(list []convert.KV, name string) bool {
	for _, h := range list {
		if strings.EqualFold(h.Name, name) {
			return true
		}
	}
	return false
}

// jmeterContentType is the Content-Type JMeter 5.6's HttpClient 4 sampler
// sends when no Header Manager sets one (measured on the wire by the
// wiretest harness): a raw body is text/plain, a POST without a raw body
// (form fields or none) is form-urlencoded, both with the sampler's content
// encoding as charset (UTF-8 when empty).
func jmeterContentType(e *Element, d *httpDefaults, method string, raw bool, r *convert.Request, args []argument) string {
	cs := strings.TrimSpace(firstNonEmpty(e.Str("HTTPSampler.contentEncoding"), d.encoding))
	if cs == "" || strings.Contains(cs, "${") {
		cs = "UTF-8"
	}
	switch {
	case e.Bool("HTTPSampler.DO_MULTIPART_POST", false):
		return ""
	case raw && r.Body != nil && *r.Body != "":
		return "text/plain; charset=" + cs
	case method == "POST" && !raw:
		return "application/x-www-form-urlencoded; charset=" + cs
	}
	return ""
}

// numArg is a function argument for a number JMeter reads from text: a
// literal, or a property (an environment variable with its default, put
// in quotes: plateau substitutes it when the plan loads); "" otherwise.
func (c *conv) numArg(v string) string {
	v = strings.TrimSpace(v)
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return v
	}
	if n, ok := c.number(v, ""); ok && n != "" {
		if _, err := strconv.ParseInt(n, 10, 64); err == nil {
			return n
		}
		return n
	}
	return ""
}

// randomVariable converts a Random Variable: every reference to it draws
// randomInt(min, max).
func (c *conv) randomVariable(path string, e *Element) {
	name := strings.TrimSpace(e.Str("variableName"))
	lo, hi := c.numArg(e.Str("minimumValue")), c.numArg(e.Str("maximumValue"))
	if name == "" || lo == "" || hi == "" {
		c.add(path, e, convert.NotConverted, "random variable "+name+": minimum or maximum is not a number or property", "template function __Random")
		if name != "" {
			c.plan.SetVar(c.varRef(name), "")
		}
		return
	}
	// A bound read from a property goes through a plan variable: function
	// arguments take variables, not ${env.…}.
	for _, b := range []struct {
		v      *string
		suffix string
	}{{&lo, "_min"}, {&hi, "_max"}} {
		if _, err := strconv.ParseInt(*b.v, 10, 64); err != nil {
			vn := convert.VarName(name + b.suffix)
			c.plan.SetVar(vn, *b.v)
			*b.v = vn
		}
	}
	c.vars[name] = "randomInt(" + lo + ", " + hi + ")"
	notes := []string{"each use draws randomInt(" + lo + ", " + hi + ")"}
	st := convert.Partial
	c.behaviour("Random Variable " + name + ": each use draws a new number; JMeter draws one per iteration" +
		map[bool]string{true: " per user", false: " shared by all users"}[e.Bool("perThread", false)] + ", so two uses in one iteration may differ")
	if f := strings.TrimSpace(e.Str("outputFormat")); f != "" {
		notes = append(notes, "output format "+f+" not applied")
		c.behaviour("Random Variable " + name + ": sent without its output format " + f)
	}
	if strings.TrimSpace(e.Str("randomSeed")) != "" {
		notes = append(notes, "seed not kept")
	}
	c.add(path, e, st, strings.Join(notes, "; "), "")
}

// counterConfig converts a Counter that counts 1, 2, 3… for all users
// into counter("name"), one with a numeric start, step and end into seq()
// of the user's iteration (per user) or of counter("name") (shared); one
// with a format or values from variables keeps its start value.
func (c *conv) counterConfig(path string, e *Element) {
	name := strings.TrimSpace(e.Str("CounterConfig.name"))
	start, incr := strings.TrimSpace(e.Str("CounterConfig.start")), strings.TrimSpace(e.Str("CounterConfig.incr"))
	end := strings.TrimSpace(e.Str("CounterConfig.end"))
	perUser := e.Bool("CounterConfig.per_user", false)
	if name == "" {
		c.add(path, e, convert.NotConverted, "a counter without a variable name", "")
		return
	}
	if (start == "1" || start == "") && (incr == "1" || incr == "") && end == "" && !perUser && strings.TrimSpace(e.Str("CounterConfig.format")) == "" {
		c.vars[name] = "counter(\"" + convert.VarName(name) + "\")"
		c.add(path, e, convert.Partial, "counter(\""+convert.VarName(name)+"\"): 1, 2, 3… for all users, one step per use (JMeter: per iteration)", "")
		c.behaviour("Counter " + name + ": counts one step per use; JMeter counts one per iteration")
		return
	}
	if isNum(start) && isNum(incr) && (end == "" || isNum(end)) && strings.TrimSpace(e.Str("CounterConfig.format")) == "" {
		args := start + ", " + incr
		if end != "" {
			args += ", " + end
		}
		if perUser {
			// Each user counts its own iterations, as JMeter does.
			c.vars[name] = "seq(__iteration, " + args + ")"
			c.add(path, e, convert.Converted, "seq(__iteration, "+args+"): per user, one step per iteration", "")
			return
		}
		c.vars[name] = "seq(counter(\"" + convert.VarName(name) + "\"), " + args + ")"
		c.add(path, e, convert.Partial, "seq(counter(\""+convert.VarName(name)+"\"), "+args+"): for all users, one step per use (JMeter: per iteration)", "")
		c.behaviour("Counter " + name + ": counts one step per use; JMeter counts one per iteration")
		return
	}
	c.add(path, e, convert.NotConverted, "counter "+name+" (start "+start+", step "+incr+map[bool]string{true: ", per user", false: ""}[perUser]+"): its variable keeps the start value", "template function __counter")
	c.plan.SetVar(c.varRef(name), start)
	c.behaviour("Counter " + name + ": never counts; every use sends " + quoteOr(start))
}

// leadSlash gives a path its leading "/" as JMeter does: JMeter adds one
// only when the path, its variables substituted, does not start with "/"
// (it keeps a "//" the plan writes: "/${ctx}" with ctx "/api" is sent as
// "//api"). A path starting with a constant that holds "/…" (a User
// Defined Variable) gets the constant folded in, since a plan URL must
// start with "/".
func (c *conv) leadSlash(u string) string {
	if strings.HasPrefix(u, "/") {
		return u
	}
	if m := leadVarRe.FindStringSubmatch(u); m != nil {
		if v, ok := c.constValue(m[1]); ok && strings.HasPrefix(v, "/") {
			return v + u[len(m[0]):]
		}
		c.behaviour(fmt.Sprintf("a path starting with ${%s} gets a leading \"/\" here; JMeter adds it only when the value does not start with one", m[1]))
	}
	return "/" + u
}

var leadVarRe = regexp.MustCompile(`^\$\{([A-Za-z0-9_]+)\}`)

// constValue is the constant value of a plan variable (a User Defined
// Variable, in its plateau name).
func (c *conv) constValue(pn string) (string, bool) {
	v, ok := c.plan.Var(pn)
	if !ok || strings.Contains(v, "${") {
		return "", false
	}
	return v, true
}

// leadRef is a reference that starts a URL ("${base}"), which plateau
// leaves alone anyway.
func leadRef(u string) string {
	if strings.HasPrefix(u, "${") {
		if i := strings.IndexByte(u, '}'); i > 0 {
			return u[:i+1]
		}
	}
	return ""
}

// encodeValue encodes a template as JMeter's "always encode" does
// (java.net.URLEncoder: space → +): literal parts now, references through
// urlencode() when the request is sent. ${env.…} is left as it is.
func encodeValue(t string) string {
	var b strings.Builder
	last := 0
	for _, loc := range refRe.FindAllStringIndex(t, -1) {
		b.WriteString(javaURLEncode(t[last:loc[0]]))
		ref := t[loc[0]:loc[1]]
		inner := ref[2 : len(ref)-1]
		if strings.HasPrefix(inner, "env.") || strings.Contains(inner, ":") {
			b.WriteString(ref)
		} else {
			b.WriteString("${urlencode(" + inner + ")}")
		}
		last = loc[1]
	}
	b.WriteString(javaURLEncode(t[last:]))
	return b.String()
}

// javaURLEncode is java.net.URLEncoder.encode(s, UTF-8): letters, digits
// and .-*_ stay, space is +, everything else %XX.
func javaURLEncode(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '.', ch == '-', ch == '*', ch == '_':
			b.WriteByte(ch)
		case ch == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[ch>>4])
			b.WriteByte(hex[ch&15])
		}
	}
	return b.String()
}

// threadGroups counts the plan's enabled thread groups that become
// workloads (setUp/tearDown groups aside).
func (c *conv) threadGroups() int {
	n := 0
	var walk func(e *Element)
	walk = func(e *Element) {
		if !e.Enabled {
			return
		}
		if strings.HasSuffix(e.TestClass, "ThreadGroup") && e.TestClass != "SetupThreadGroup" && e.TestClass != "PostThreadGroup" {
			n++
			return
		}
		for _, k := range e.Children {
			walk(k)
		}
	}
	walk(c.root)
	return n
}

// isNum reports whether s is a plain (possibly negative) integer.
func isNum(s string) bool {
	_, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	return err == nil
}
