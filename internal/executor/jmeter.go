package executor

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/plateau-perf/plateau/internal/importer"
	"github.com/plateau-perf/plateau/internal/importer/jtl"
)

// jmeter runs a .jmx plan in non-GUI mode (`-n`) with a CSV JTL of every
// sample written to the run directory (its default columns, times in epoch
// ms, field names printed) and JMeter's own log beside it.
//
// Overrides: -J name=value are JMeter properties, as on JMeter's command
// line. users, ramp_up and duration are written into every Thread Group of
// a copy of the plan (num_threads, ramp_time, and the scheduler with
// duration and endless loops), the copy being placed beside the plan so
// that its relative paths (CSV Data Set files) still resolve, and removed
// after the run. rate and target are the plan's own business (a Constant
// Throughput Timer or a host read from ${__P(…)}): pass them with -J.
type jmeter struct{}

func (jmeter) Name() string { return "jmeter" }

var (
	reThreads  = regexp.MustCompile(`(<(?:string|int)Prop name="ThreadGroup\.num_threads">)[^<]*(</(?:string|int)Prop>)`)
	reRamp     = regexp.MustCompile(`(<(?:string|int)Prop name="ThreadGroup\.ramp_time">)[^<]*(</(?:string|int)Prop>)`)
	reSched    = regexp.MustCompile(`(<boolProp name="ThreadGroup\.scheduler">)[^<]*(</boolProp>)`)
	reDuration = regexp.MustCompile(`(<(?:string|long|int)Prop name="ThreadGroup\.duration">)[^<]*(</(?:string|long|int)Prop>)`)
	reLoops    = regexp.MustCompile(`(<(?:string|int)Prop name="LoopController\.loops">)[^<]*(</(?:string|int)Prop>)`)
	reTGOpen   = regexp.MustCompile(`<ThreadGroup [^>]*>`)
	reTGBlock  = regexp.MustCompile(`(?s)<ThreadGroup [^>]*>.*?</ThreadGroup>`)
	reAnyTG    = regexp.MustCompile(`<([\w.]*ThreadGroup)\s[^>]*>`)
	reTGName   = regexp.MustCompile(`testname="([^"]*)"`)
	reEnabled  = regexp.MustCompile(`enabled="false"`)
)

// splitThreads gives segment seg of n its share of every standard Thread
// Group's literal thread count (the remainder to the first segments, as
// plateau's own generators), and of the JMeter Plugins' thread groups
// plateau splits (splitPlugins; props are the -J properties). A standard
// group's count from a property (${__P(threads)}) is refused, with --set
// users=N as the way on; so is a plugin's group plateau does not split.
func splitThreads(src []byte, seg, n int, props map[string]string) ([]byte, error) {
	s := string(src)
	groups := 0
	for _, m := range reAnyTG.FindAllStringSubmatch(s, -1) {
		if reEnabled.MatchString(m[0]) {
			continue
		}
		switch m[1] {
		case "ThreadGroup", pluginConcurrency, pluginArrivals, pluginFreeForm, pluginUltimate:
			groups++
			continue
		case "SetupThreadGroup", "PostThreadGroup":
			continue
		}
		return nil, fmt.Errorf("a %s: plateau splits across generators the standard Thread Groups and the JMeter Plugins' Concurrency, Arrivals, Free-Form Arrivals and Ultimate Thread Groups, not this one; run it on one generator, or in JMeter's own distributed mode (docs/run-foreign.md)", m[1])
	}
	if groups == 0 {
		// Nothing to divide: every generator would run the whole plan,
		// or none of it.
		return nil, fmt.Errorf("the plan has no enabled Thread Group to split across %d generators", n)
	}
	s, err := splitPlugins(s, seg, n, props)
	if err != nil {
		return nil, err
	}
	var bad error
	s = reTGBlock.ReplaceAllStringFunc(s, func(tg string) string {
		m := reThreads.FindStringSubmatchIndex(tg)
		if m == nil || bad != nil {
			return tg
		}
		v := strings.TrimSpace(tg[m[3]:m[4]])
		total, err := strconv.Atoi(v)
		if err != nil || total < 0 {
			name := "a Thread Group"
			if nm := reTGName.FindStringSubmatch(tg); nm != nil {
				name = "Thread Group " + strconv.Quote(nm[1])
			}
			bad = fmt.Errorf("%s has %q threads, which plateau cannot split across %d generators: give --set users=N (split as N ÷ %d)", name, v, n, n)
			return tg
		}
		return tg[:m[3]] + strconv.Itoa(share(total, seg, n)) + tg[m[4]:]
	})
	if bad != nil {
		return nil, bad
	}
	return []byte(s), nil
}

// propMap is -J name=value as a map (the last value of a name wins, as on
// JMeter's command line).
func propMap(props []string) map[string]string {
	m := map[string]string{}
	for _, p := range props {
		if k, v, ok := strings.Cut(p, "="); ok {
			m[k] = v
		}
	}
	return m
}

// jmeterHome finds JMeter: $JMETER_HOME, or where the install script puts
// it.
func jmeterHome(spec *Spec) (java, jar string, err error) {
	home := getenv(spec, "JMETER_HOME")
	if home == "" {
		home = "/tmp/plateau-jmeter"
	}
	jar = filepath.Join(home, "bin", "ApacheJMeter.jar")
	if _, err := os.Stat(jar); err != nil {
		return "", "", fmt.Errorf("JMeter not found (%s): set $JMETER_HOME, or install it with internal/importer/testdata/install-deps.sh jmeter", jar)
	}
	java, err = exec.LookPath("java")
	if err != nil {
		return "", "", fmt.Errorf("JMeter needs java on PATH: %w", err)
	}
	return java, jar, nil
}

// overridePlan writes users, ramp_up and duration into every Thread Group
// of the plan's XML.
func overridePlan(src []byte, set map[string]string) ([]byte, error) {
	s := string(src)
	if len(set) == 0 {
		return src, nil
	}
	if !reTGOpen.MatchString(s) {
		return nil, fmt.Errorf("the plan has no standard Thread Group to apply --set users/ramp_up/duration to; use -J with ${__P(…)} in the plan")
	}
	repl := func(re *regexp.Regexp, v string) {
		s = re.ReplaceAllString(s, "${1}"+v+"${2}")
	}
	if v, ok := set["users"]; ok {
		n, err := positive("users", v)
		if err != nil {
			return nil, err
		}
		repl(reThreads, fmt.Sprint(n))
	}
	if v, ok := set["ramp_up"]; ok {
		n, err := seconds("ramp_up", v)
		if err != nil {
			return nil, err
		}
		repl(reRamp, fmt.Sprint(n))
	}
	if v, ok := set["duration"]; ok {
		n, err := seconds("duration", v)
		if err != nil {
			return nil, err
		}
		// Each Thread Group on its own: one may have the scheduler's
		// properties and another not.
		s = reTGBlock.ReplaceAllStringFunc(s, func(tg string) string {
			if reSched.MatchString(tg) {
				tg = reSched.ReplaceAllString(tg, "${1}true${2}")
			} else {
				tg = reTGOpen.ReplaceAllStringFunc(tg, func(open string) string {
					return open + "\n        <boolProp name=\"ThreadGroup.scheduler\">true</boolProp>"
				})
			}
			if reDuration.MatchString(tg) {
				tg = reDuration.ReplaceAllString(tg, "${1}"+fmt.Sprint(n)+"${2}")
			} else {
				tg = reTGOpen.ReplaceAllStringFunc(tg, func(open string) string {
					return open + "\n        <stringProp name=\"ThreadGroup.duration\">" + fmt.Sprint(n) + "</stringProp>"
				})
			}
			// Loop until the duration ends, as JMeter's own scheduler
			// does with infinite loops.
			return reLoops.ReplaceAllString(tg, "${1}-1${2}")
		})
	}
	return []byte(s), nil
}

func (jmeter) Command(spec *Spec, out string) (*exec.Cmd, error) {
	if err := checkSet("JMeter", spec.Set, "users", "ramp_up", "duration"); err != nil {
		return nil, fmt.Errorf("%w; a rate or a target is the plan's own (a Constant Throughput Timer, a host from ${__P(host)}): pass it with -J", err)
	}
	java, jar, err := jmeterHome(spec)
	if err != nil {
		return nil, err
	}
	script, err := filepath.Abs(spec.Script)
	if err != nil {
		return nil, err
	}
	plan := script
	if len(spec.Set) > 0 || spec.Segments > 1 {
		b, err := os.ReadFile(script)
		if err != nil {
			return nil, err
		}
		set := spec.Set
		if spec.Segments > 1 {
			// This generator's share: users ÷ N, or each Thread Group's
			// own count ÷ N.
			if v, ok := set["users"]; ok {
				u, err := positive("users", v)
				if err != nil {
					return nil, err
				}
				if err := checkShare("users", u, spec.Segments); err != nil {
					return nil, err
				}
				set = maps.Clone(set)
				set["users"] = strconv.Itoa(share(u, spec.Segment, spec.Segments))
			} else if b, err = splitThreads(b, spec.Segment, spec.Segments, propMap(spec.Props)); err != nil {
				return nil, fmt.Errorf("%s: %w", spec.Script, err)
			}
		}
		nb, err := overridePlan(b, set)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", spec.Script, err)
		}
		// Beside the plan, so that its relative file paths resolve (a
		// name of its own: two runs of one plan may go at once); kept in
		// the run directory too, as run.
		f, err := os.CreateTemp(filepath.Dir(script), ".plateau-*-"+filepath.Base(script))
		if err != nil {
			return nil, fmt.Errorf("writing the plan with the overrides beside %s: %w", script, err)
		}
		plan = f.Name()
		spec.temp = append(spec.temp, plan)
		_, werr := f.Write(nb)
		if err := errors.Join(werr, f.Close()); err != nil {
			return nil, fmt.Errorf("writing the plan with the overrides beside %s: %w", script, err)
		}
		if err := os.WriteFile(filepath.Join(out, "plan-as-run.jmx"), nb, 0o644); err != nil {
			return nil, err
		}
	}
	args := []string{"-jar", jar, "-n", "-t", plan, "-l", filepath.Join(out, "results.jtl"), "-j", filepath.Join(out, "jmeter.log"),
		// A CSV JTL in the form the importer reads best: JMeter's defaults,
		// made explicit so that a user.properties cannot change them.
		"-Jjmeter.save.saveservice.output_format=csv", "-Jjmeter.save.saveservice.print_field_names=true",
		"-Jjmeter.save.saveservice.timestamp_format=ms", "-Jjmeter.save.saveservice.thread_counts=true",
		"-Jsummariser.interval=5",
		// Each sample reaches the file as it completes, so plateau reads
		// it within its poll (the live outputs, docs/run-foreign.md).
		"-Jjmeter.save.saveservice.autoflush=true"}
	for _, p := range spec.Props {
		k, _, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-J %q: want name=value", p)
		}
		args = append(args, "-J"+p)
	}
	cmd := exec.Command(java, args...)
	cmd.Dir = filepath.Dir(script)
	if cmd.Env, err = envList(spec.Env); err != nil {
		return nil, err
	}
	return cmd, nil
}

func (jmeter) Source(spec *Spec, out string, follow <-chan struct{}) importer.Source {
	return jtl.New(jtl.Config{Path: filepath.Join(out, "results.jtl"), Workload: "jmeter", Follow: follow})
}

// Notes reports JMeter's exit code.
// Assertions are in the samples: a sample whose assertion failed is a
// failed sample of class check, as JMeter's own dashboard counts it.
func (jmeter) Notes(spec *Spec, out string, exit int) Notes {
	var ns Notes
	if exit != 0 {
		ns.Note("JMeter exited with code %d (its log is tool/jmeter.log)", exit)
	}
	return ns
}
