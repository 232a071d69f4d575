package wiretest

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/convert"
	"github.com/plateau-perf/plateau/internal/convert/converttest"
)

// Bounds are the load both sides run: every thread group / workload gets
// Users users ramped over RampUp and runs for Duration (a plan's own loop
// counts are replaced by "loop until the duration ends", so an endless
// plan ends too). Iterations > 0 runs that many iterations instead (with
// Duration as a cap): in a thread group whose iteration is an endless
// Loop Controller (the converted plan's iteration), that loop runs them
// and the thread group once, so both tools are compared by counts, not by
// how much each did in the time a loaded machine gave it.
type Bounds struct {
	Users      int
	RampUp     time.Duration
	Duration   time.Duration
	Iterations int
}

// JMeter locates JMeter 5.6.3 as the install scripts put it ($JMETER_HOME,
// default /tmp/plateau-jmeter). Without it the test skips, and fails under
// CI=true (CI must run internal/convert/jmeter/testdata/install-deps.sh).
func JMeter(t testing.TB) (java, jar string) {
	t.Helper()
	home := os.Getenv("JMETER_HOME")
	if home == "" {
		home = "/tmp/plateau-jmeter"
	}
	jar = filepath.Join(home, "bin", "ApacheJMeter.jar")
	java, err := exec.LookPath("java")
	_, jerr := os.Stat(jar)
	if err != nil || jerr != nil {
		missing(t, fmt.Sprintf("JMeter not installed (java: %v, %s: %v); run internal/convert/jmeter/testdata/install-deps.sh", err, jar, jerr))
	}
	return java, jar
}

// missing ends a test whose tool is not installed: it fails under CI=true,
// where the install scripts must have put the tool, and skips elsewhere.
func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// CopyDir copies the directory holding a plan and its data files into a
// fresh temporary directory and returns it.
func CopyDir(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

var (
	tgOpenRe = regexp.MustCompile(`<(ThreadGroup|SetupThreadGroup|PostThreadGroup)\s[^>]*>`)
	tgPropRe = regexp.MustCompile(`(?s)<(stringProp|intProp|longProp|boolProp) name="ThreadGroup\.(num_threads|ramp_time|scheduler|duration|delay)"\s*(/>|>.*?</(stringProp|intProp|longProp|boolProp)>)\s*`)
	mainRe   = regexp.MustCompile(`(?s)<elementProp name="ThreadGroup\.main_controller".*?</elementProp>\s*`)
	backRe   = regexp.MustCompile(`(<BackendListener\s[^>]*)enabled="true"`)
)

// onceMark marks, between boundEndless and the thread group's rewrite, a
// ThreadGroup whose endless loop runs the iterations.
const onceMark = ` wiretest-once="true"`

var tgOnlyRe = regexp.MustCompile(`<ThreadGroup\s[^>]*>`)

// boundEndless rewrites each endless Loop Controller that is a direct
// child of a ThreadGroup (the plan's iteration: JMeter never leaves it,
// the converted plan iterates its body) to loop n times, and marks its
// thread group to run once.
func boundEndless(s string, n int) string {
	var out strings.Builder
	last := 0
	for _, loc := range tgOnlyRe.FindAllStringIndex(s, -1) {
		if loc[0] < last || strings.HasSuffix(s[loc[0]:loc[1]], "/>") {
			continue
		}
		end := strings.Index(s[loc[1]:], "</ThreadGroup>")
		if end < 0 {
			break
		}
		i := loc[1] + end + len("</ThreadGroup>")
		for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
			i++
		}
		if !strings.HasPrefix(s[i:], "<hashTree>") {
			continue
		}
		i += len("<hashTree>")
		type span struct{ from, to int }
		var loops []span
		for depth := 1; depth > 0 && i < len(s); {
			j := strings.IndexByte(s[i:], '<')
			if j < 0 {
				break
			}
			at := i + j
			rest := s[at:]
			switch {
			case strings.HasPrefix(rest, "<hashTree/>"):
				i = at + len("<hashTree/>")
			case strings.HasPrefix(rest, "<hashTree>"):
				depth++
				i = at + len("<hashTree>")
			case strings.HasPrefix(rest, "</hashTree>"):
				depth--
				i = at + len("</hashTree>")
			case depth == 1 && strings.HasPrefix(rest, "<LoopController "):
				e := strings.Index(rest, "</LoopController>")
				if e < 0 {
					i = at + 1
					break
				}
				el := rest[:e+len("</LoopController>")]
				if isEndless(el) {
					loops = append(loops, span{at, at + len(el)})
				}
				i = at + len(el)
			default:
				i = at + 1
			}
		}
		if len(loops) == 0 {
			continue
		}
		out.WriteString(s[last : loc[1]-1])
		out.WriteString(onceMark + ">")
		last = loc[1]
		for _, sp := range loops {
			// As JMeter's GUI writes a nested loop of n: loops n,
			// continue_forever true (false would leave the loop done
			// after its first pass of the thread group).
			el := loopsRe.ReplaceAllString(s[sp.from:sp.to], "${1}"+fmt.Sprint(n)+"${3}")
			out.WriteString(s[last:sp.from])
			out.WriteString(el)
			last = sp.to
			// What follows the loop never ran (JMeter never left it;
			// the converter leaves it out, said): the thread stops there.
			if end := treeEnd(s, sp.to); end > 0 {
				out.WriteString(s[last:end])
				out.WriteString(stopThread)
				last = end
			}
		}
	}
	out.WriteString(s[last:])
	return out.String()
}

// stopThread is a Flow Control Action that stops the current thread
// (action 0: stop, target 0: this thread).
const stopThread = `
        <TestAction guiclass="TestActionGui" testclass="TestAction" testname="wiretest: the end of the bounded loop" enabled="true">
          <intProp name="ActionProcessor.action">0</intProp>
          <intProp name="ActionProcessor.target">0</intProp>
          <stringProp name="ActionProcessor.duration">0</stringProp>
        </TestAction>
        <hashTree/>`

// treeEnd returns the offset just past the hashTree that follows an
// element ending at i (its children), or -1.
func treeEnd(s string, i int) int {
	for i < len(s) && strings.ContainsRune(" \t\r\n", rune(s[i])) {
		i++
	}
	switch {
	case strings.HasPrefix(s[i:], "<hashTree/>"):
		return i + len("<hashTree/>")
	case !strings.HasPrefix(s[i:], "<hashTree>"):
		return -1
	}
	i += len("<hashTree>")
	for depth := 1; depth > 0; {
		j := strings.Index(s[i:], "hashTree")
		if j < 0 {
			return -1
		}
		at := i + j - 1
		switch {
		case at >= 0 && strings.HasPrefix(s[at:], "<hashTree/>"):
			i = at + len("<hashTree/>")
		case at >= 0 && strings.HasPrefix(s[at:], "<hashTree>"):
			depth++
			i = at + len("<hashTree>")
		case at >= 1 && strings.HasPrefix(s[at-1:], "</hashTree>"):
			depth--
			i = at - 1 + len("</hashTree>")
		default:
			i = i + j + len("hashTree")
		}
	}
	return i
}

var (
	loopsRe   = regexp.MustCompile(`(<(?:intProp|stringProp) name="LoopController\.loops">)([^<]*)(</(?:intProp|stringProp)>)`)
	foreverRe = regexp.MustCompile(`<boolProp name="LoopController\.continue_forever">true</boolProp>`)
)

// isEndless reports whether a Loop Controller element loops forever (as
// the converter reads it: loops -1, or none with continue_forever).
func isEndless(el string) bool {
	if m := loopsRe.FindStringSubmatch(el); m != nil {
		return strings.TrimSpace(m[2]) == "-1"
	}
	return foreverRe.MatchString(el)
}

// PrepareJMX rewrites a .jmx for the harness: each thread group gets the
// bounds and a Header Manager sending the user key; Backend Listeners
// (which would send metrics off the machine) are disabled.
func PrepareJMX(src []byte, b Bounds) ([]byte, error) {
	s := string(src)
	if b.Iterations > 0 {
		s = boundEndless(s, b.Iterations)
	}
	var out strings.Builder
	last := 0
	n := 0
	for _, loc := range tgOpenRe.FindAllStringSubmatchIndex(s, -1) {
		if loc[0] < last {
			continue
		}
		tag := s[loc[2]:loc[3]]
		end := strings.Index(s[loc[1]:], "</"+tag+">")
		if end < 0 {
			return nil, fmt.Errorf("thread group at byte %d has no end tag", loc[0])
		}
		end += loc[1]
		body := s[loc[1]:end]
		body = tgPropRe.ReplaceAllString(body, "")
		body = mainRe.ReplaceAllString(body, "")
		loops := "-1"
		if b.Iterations > 0 {
			loops = fmt.Sprint(b.Iterations)
			// A thread group whose endless Loop Controller now runs the
			// iterations (boundEndless) runs once.
			if strings.Contains(s[loc[0]:loc[1]], onceMark) {
				loops = "1"
			}
		}
		users := b.Users
		group := "${__threadGroupName}"
		switch tag {
		case "SetupThreadGroup":
			group = "setup"
		case "PostThreadGroup":
			group = "teardown"
		}
		props := fmt.Sprintf(`
        <elementProp name="ThreadGroup.main_controller" elementType="LoopController" guiclass="LoopControlPanel" testclass="LoopController" testname="Loop Controller" enabled="true">
          <boolProp name="LoopController.continue_forever">false</boolProp>
          <stringProp name="LoopController.loops">%s</stringProp>
        </elementProp>
        <stringProp name="ThreadGroup.num_threads">%d</stringProp>
        <stringProp name="ThreadGroup.ramp_time">%d</stringProp>
        <boolProp name="ThreadGroup.scheduler">true</boolProp>
        <stringProp name="ThreadGroup.duration">%d</stringProp>
        <stringProp name="ThreadGroup.delay">0</stringProp>
`, loops, users, int(b.RampUp/time.Second), int((b.Duration+time.Second-1)/time.Second))
		if tag != "ThreadGroup" {
			// setUp/tearDown groups keep their own users and loops: they
			// are the plan's one-off passes.
			props = ""
			body = s[loc[1]:end]
		}
		out.WriteString(strings.Replace(s[last:loc[1]], onceMark, "", 1))
		out.WriteString(props)
		out.WriteString(body)
		out.WriteString("</" + tag + ">")
		rest := s[end+len("</"+tag+">"):]
		trimmed := strings.TrimLeft(rest, " \t\r\n")
		skip := len(rest) - len(trimmed)
		hm := fmt.Sprintf(`
        <HeaderManager guiclass="HeaderPanel" testclass="HeaderManager" testname="wiretest user key" enabled="true">
          <collectionProp name="HeaderManager.headers">
            <elementProp name="" elementType="Header">
              <stringProp name="Header.name">%s</stringProp>
              <stringProp name="Header.value">%s/${__threadNum}</stringProp>
            </elementProp>
          </collectionProp>
        </HeaderManager>
        <hashTree/>
`, UserHeader, group)
		switch {
		case strings.HasPrefix(trimmed, "<hashTree/>"):
			out.WriteString(rest[:skip] + "<hashTree>" + hm + "</hashTree>")
			last = end + len("</"+tag+">") + skip + len("<hashTree/>")
		case strings.HasPrefix(trimmed, "<hashTree>"):
			out.WriteString(rest[:skip] + "<hashTree>" + hm)
			last = end + len("</"+tag+">") + skip + len("<hashTree>")
		default:
			return nil, fmt.Errorf("thread group at byte %d is not followed by its hashTree", loc[0])
		}
		n++
	}
	out.WriteString(s[last:])
	if n == 0 {
		return nil, fmt.Errorf("no ThreadGroup, SetupThreadGroup or PostThreadGroup (plugin thread groups are not bounded by the harness)")
	}
	return backRe.ReplaceAll([]byte(out.String()), []byte(`${1}enabled="false"`)), nil
}

// RunJMeter runs the .jmx at jmx (in a directory of its own: JMeter
// resolves data files against it and writes its log there) under JMeter
// in non-GUI mode through the recorder, with props as -J properties, and
// returns what the recorder saw.
func RunJMeter(t testing.TB, jmx string, rec *Recorder, b Bounds, props map[string]string) []Request {
	t.Helper()
	reqs, _ := StartJMeter(t, jmx, rec, b, props)()
	return reqs
}

// StartJMeter starts what RunJMeter runs and returns at once; the function
// it returns waits for JMeter's end (it must be called from the test's
// goroutine) and returns what the recorder saw and how long JMeter ran. A
// test that ends before it is called stops JMeter.
func StartJMeter(t testing.TB, jmx string, rec *Recorder, b Bounds, props map[string]string) func() ([]Request, time.Duration) {
	t.Helper()
	java, jar := JMeter(t)
	src, err := os.ReadFile(jmx)
	if err != nil {
		t.Fatal(err)
	}
	prepared, err := PrepareJMX(src, b)
	if err != nil {
		t.Fatalf("%s: %v", jmx, err)
	}
	dir := filepath.Dir(jmx)
	run := filepath.Join(dir, "wiretest-"+filepath.Base(jmx))
	if err := os.WriteFile(run, prepared, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", jar, "-n", "-t", run,
		"-l", filepath.Join(dir, "jmeter.jtl"), "-j", filepath.Join(dir, "jmeter.log"),
		"-H", "127.0.0.1", "-P", rec.Port, "-Jsummariser.out=false"}
	for _, k := range sortedKeys(props, props) {
		args = append(args, "-J"+k+"="+props[k])
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.Duration+2*time.Minute)
	cmd := exec.CommandContext(ctx, java, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("jmeter: %v", err)
	}
	done := make(chan struct{})
	var runErr error
	var took time.Duration
	go func() {
		runErr = cmd.Wait()
		took = time.Since(start)
		close(done)
	}()
	// A test that fails before waiting stops JMeter before its directory
	// and recorder go.
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return func() ([]Request, time.Duration) {
		t.Helper()
		<-done
		if runErr != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "jmeter.log"))
			t.Fatalf("jmeter: %v\n%s\n%s", runErr, out.String(), tail(string(log), 4000))
		}
		reqs, dropped := rec.Requests()
		if dropped > 0 {
			t.Fatalf("recorder dropped %d JMeter requests (bound %d)", dropped, maxRecorded)
		}
		for _, f := range jtlFailures(filepath.Join(dir, "jmeter.jtl"), 10) {
			t.Logf("JMeter sample failed: %s", f)
		}
		return reqs, took
	}
}

// jtlFailures lists up to n distinct failed samples of a CSV JTL (label,
// code and message), to tell why JMeter took another path.
func jtlFailures(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return nil
	}
	col := map[string]int{}
	for i, h := range head {
		col[h] = i
	}
	get := func(rec []string, k string) string {
		if i, ok := col[k]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		rec, err := r.Read()
		if err != nil {
			break
		}
		if get(rec, "success") != "false" {
			continue
		}
		s := fmt.Sprintf("%s: %s %s", get(rec, "label"), get(rec, "responseCode"), get(rec, "failureMessage"))
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// PreparePlan applies the bounds to a converted plan and adds the user key
// header to every request: "<workload>/${__user}", "setup/1" and
// "teardown/1" for the run-level setup and teardown.
func PreparePlan(p *convert.Plan, b Bounds) {
	for _, wl := range p.Workloads {
		pace := wl.Load.Pace
		wl.Load = convert.Load{Users: fmt.Sprint(b.Users), Duration: convert.Dur(b.Duration)}
		if pace != "" && b.Iterations == 0 {
			// A throughput timer's pacing stays: it is the plan's rate.
			wl.Load.Pace = pace
		}
		if b.RampUp > 0 {
			wl.Load.RampUp = convert.Dur(b.RampUp)
		}
		if b.Iterations > 0 {
			wl.Load.Duration = ""
			wl.Load.Iterations = fmt.Sprint(b.Iterations)
		}
		key := wl.Name + "/${__user}"
		tag(wl.Setup, key)
		tag(wl.Scenario, key)
		tag(wl.Teardown, key)
	}
	tag(p.Setup, "setup/1")
	tag(p.Teardown, "teardown/1")
}

func tag(steps []convert.Step, key string) {
	for i := range steps {
		s := &steps[i]
		if s.Request != nil {
			s.Request.Headers = append(s.Request.Headers, convert.KV{Name: UserHeader, Value: key})
		}
		for _, g := range []*convert.Group{s.Transaction, s.Loop, s.If, s.Foreach} {
			if g != nil {
				tag(g.Steps, key)
				tag(g.Else, key)
			}
		}
		for j := range s.Choose {
			tag(s.Choose[j].Steps, key)
		}
	}
}

// RunPlateau writes the converted plan (bounded and keyed with PreparePlan)
// into dir, runs it with plateau's engine through the recorder, with env as
// the environment, and returns what the recorder saw and the plan text.
func RunPlateau(t testing.TB, dir string, p *convert.Plan, rep *convert.Report, rec *Recorder, b Bounds, env map[string]string) ([]Request, string) {
	t.Helper()
	PreparePlan(p, b)
	// Data files the conversion made (User Parameters' values) go beside
	// the plan, as plateau convert writes them.
	for name, data := range p.Files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pf, text := converttest.Write(t, dir, p, rep)
	converttest.Run(t, pf, env, b.Duration+time.Minute, "http.proxy="+rec.URL)
	reqs, dropped := rec.Requests()
	if dropped > 0 {
		t.Fatalf("recorder dropped %d plateau requests (bound %d)", dropped, maxRecorded)
	}
	return reqs, text
}
