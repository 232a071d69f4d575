package executor

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The JMeter Plugins' thread groups (jpgc-casutg) that plateau splits
// across generators, each by the plugin's own semantics: the Concurrency
// Thread Group's TargetLevel (steps, ramp and hold kept), the Arrivals
// Thread Group's TargetLevel (a rate), the Free-Form Arrivals rows' rates
// (and either's ArrivalsLimit, a count of arrivals, as a thread count),
// and each Ultimate Thread Group row's thread count. A thread count is
// split as plateau's own users (the remainder to the first generators), a
// rate ÷ N exactly.
const (
	pluginConcurrency = "com.blazemeter.jmeter.threads.concurrency.ConcurrencyThreadGroup"
	pluginArrivals    = "com.blazemeter.jmeter.threads.arrivals.ArrivalsThreadGroup"
	pluginFreeForm    = "com.blazemeter.jmeter.threads.arrivals.FreeFormArrivalsThreadGroup"
	pluginUltimate    = "kg.apc.jmeter.threads.UltimateThreadGroup"
)

var (
	pluginBlock = map[string]*regexp.Regexp{}
	reTarget    = regexp.MustCompile(`(<stringProp name="TargetLevel">)([^<]*)(</stringProp>)`)
	reArrLimit  = regexp.MustCompile(`(<stringProp name="ArrivalsLimit">)([^<]*)(</stringProp>)`)
	reFFSched   = regexp.MustCompile(`(?s)<collectionProp name="Schedule">.*?</collectionProp>\s*</collectionProp>`)
	reUltData   = regexp.MustCompile(`(?s)<collectionProp name="ultimatethreadgroupdata">.*?</collectionProp>\s*</collectionProp>`)
	reRow       = regexp.MustCompile(`(?s)<collectionProp name="[^"]*">(.*?)</collectionProp>`)
	reCell      = regexp.MustCompile(`(<stringProp name="[^"]*">)([^<]*)(</stringProp>)`)
	reProp      = regexp.MustCompile(`^\$\{__P\(\s*([^,()]+?)\s*(?:,\s*([^,()]*?)\s*)?\)\}$`)
)

func init() {
	for _, c := range []string{pluginConcurrency, pluginArrivals, pluginFreeForm, pluginUltimate} {
		q := regexp.QuoteMeta(c)
		pluginBlock[c] = regexp.MustCompile(`(?s)<` + q + `\s[^>]*>.*?</` + q + `>`)
	}
}

// pluginValue resolves a field of a plugin's thread group to a number: a
// literal, or ${__P(name)} / ${__P(name,default)} with the -J value first,
// as JMeter itself would read it.
func pluginValue(field, v string, props map[string]string) (float64, error) {
	s := resolveProp(v, props)
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e9 {
		return 0, fmt.Errorf("%s %q is not a number plateau can split across generators (a literal, or ${__P(name,default)} with -J name=value)", field, v)
	}
	return f, nil
}

// resolveProp is v with ${__P(name)} or ${__P(name,default)} resolved, -J
// first.
func resolveProp(v string, props map[string]string) string {
	s := strings.TrimSpace(v)
	if m := reProp.FindStringSubmatch(s); m != nil {
		if p, ok := props[m[1]]; ok {
			return strings.TrimSpace(p)
		}
		return m[2]
	}
	return s
}

// splitCount is a plugin's thread count's share for segment seg of n.
func splitCount(what, field, v string, seg, n int, props map[string]string) (string, error) {
	f, err := pluginValue(field, v, props)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	if f != float64(int64(f)) {
		return "", fmt.Errorf("%s: %s %v is not a whole number of threads", what, field, f)
	}
	if int(f) < n {
		return "", fmt.Errorf("%s: %s %d on %d generators leaves a generator without one; use fewer generators", what, field, int(f), n)
	}
	return strconv.Itoa(share(int(f), seg, n)), nil
}

// splitRate is a plugin's arrival rate ÷ n.
func splitRate(what, field, v string, n int, props map[string]string) (string, error) {
	f, err := pluginValue(field, v, props)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return strconv.FormatFloat(f/float64(n), 'g', -1, 64), nil
}

// splitPlugins gives segment seg of n its share of every enabled JMeter
// Plugins thread group plateau can split (see above); props are the -J
// properties. The Stepping Thread Group and any other plugin's group are
// refused, as is an Ultimate Thread Group whose schedule comes from the
// threads_schedule property.
func splitPlugins(s string, seg, n int, props map[string]string) (string, error) {
	var bad error
	fail := func(err error) {
		if bad == nil {
			bad = err
		}
	}
	name := func(block, kind string) string {
		if m := reTGName.FindStringSubmatch(block); m != nil {
			return kind + " " + strconv.Quote(m[1])
		}
		return "a " + kind
	}
	replaceCells := func(block string, re *regexp.Regexp, f func(i int, v string) (string, error)) string {
		i := 0
		return re.ReplaceAllStringFunc(block, func(c string) string {
			m := re.FindStringSubmatch(c)
			v, err := f(i, m[2])
			i++
			if err != nil {
				fail(err)
				return c
			}
			return m[1] + v + m[3]
		})
	}
	// An Arrivals group's ArrivalsLimit (the arrivals it stops after, all
	// its threads together) is split as a thread count; empty is none.
	limit := func(b, what string) string {
		return replaceCells(b, reArrLimit, func(_ int, v string) (string, error) {
			if r := resolveProp(v, props); r == "" || r == "0" {
				return v, nil // no limit
			}
			return splitCount(what, "ArrivalsLimit", v, seg, n, props)
		})
	}
	s = pluginBlock[pluginConcurrency].ReplaceAllStringFunc(s, func(b string) string {
		if reEnabled.MatchString(reAnyTG.FindString(b)) {
			return b
		}
		what := name(b, "Concurrency Thread Group")
		if !reTarget.MatchString(b) {
			fail(fmt.Errorf("%s: no TargetLevel to split", what))
			return b
		}
		return replaceCells(b, reTarget, func(_ int, v string) (string, error) {
			return splitCount(what, "TargetLevel", v, seg, n, props)
		})
	})
	s = pluginBlock[pluginArrivals].ReplaceAllStringFunc(s, func(b string) string {
		if reEnabled.MatchString(reAnyTG.FindString(b)) {
			return b
		}
		what := name(b, "Arrivals Thread Group")
		if !reTarget.MatchString(b) {
			fail(fmt.Errorf("%s: no TargetLevel to split", what))
			return b
		}
		b = replaceCells(b, reTarget, func(_ int, v string) (string, error) {
			return splitRate(what, "TargetLevel", v, n, props)
		})
		return limit(b, what)
	})
	s = pluginBlock[pluginFreeForm].ReplaceAllStringFunc(s, func(b string) string {
		if reEnabled.MatchString(reAnyTG.FindString(b)) {
			return b
		}
		what := name(b, "Free-Form Arrivals Thread Group")
		sched := reFFSched.FindStringIndex(b)
		if sched == nil {
			fail(fmt.Errorf("%s: no Schedule rows to split", what))
			return b
		}
		rows := reRow.ReplaceAllStringFunc(b[sched[0]+len(`<collectionProp name="Schedule">`):sched[1]], func(row string) string {
			// A row is start rate, end rate, duration: the rates ÷ n.
			return replaceCells(row, reCell, func(i int, v string) (string, error) {
				if i >= 2 {
					return v, nil
				}
				return splitRate(what, "a row's rate", v, n, props)
			})
		})
		return limit(b[:sched[0]]+`<collectionProp name="Schedule">`+rows+b[sched[1]:], what)
	})
	s = pluginBlock[pluginUltimate].ReplaceAllStringFunc(s, func(b string) string {
		if reEnabled.MatchString(reAnyTG.FindString(b)) {
			return b
		}
		what := name(b, "Ultimate Thread Group")
		if v := strings.TrimSpace(props["threads_schedule"]); v != "" {
			fail(fmt.Errorf("%s: its schedule comes from -J threads_schedule, which plateau does not split across generators; write the rows into the plan, or run it on one generator", what))
			return b
		}
		data := reUltData.FindStringIndex(b)
		if data == nil {
			fail(fmt.Errorf("%s: no rows to split", what))
			return b
		}
		head := `<collectionProp name="ultimatethreadgroupdata">`
		rows := reRow.ReplaceAllStringFunc(b[data[0]+len(head):data[1]], func(row string) string {
			// A row is threads, initial delay, startup, hold, shutdown:
			// its threads split.
			return replaceCells(row, reCell, func(i int, v string) (string, error) {
				if i > 0 {
					return v, nil
				}
				return splitCount(what, "a row's threads", v, seg, n, props)
			})
		})
		return b[:data[0]] + head + rows + b[data[1]:]
	})
	if bad != nil {
		return "", bad
	}
	return s, nil
}
