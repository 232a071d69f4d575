package executor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBin makes an executable file standing for a tool, so that the
// command lines can be built without the tool installed.
func fakeBin(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestK6Overrides(t *testing.T) {
	t.Parallel()
	bin := fakeBin(t, "k6")
	env := func(k string) string {
		if k == "K6" {
			return bin
		}
		return ""
	}
	for _, c := range []struct {
		set  map[string]string
		want string
	}{
		{map[string]string{"users": "20", "duration": "2m"}, "--vus 20 --duration 120s"},
		{map[string]string{"users": "20", "ramp_up": "30s", "duration": "1m"}, "--stage 30s:20,60s:20"},
		{map[string]string{"rate": "50"}, "--rps 50"},
	} {
		spec := &Spec{Script: "s.js", Dir: t.TempDir(), Set: c.set, Env: []string{"BASE=http://127.0.0.1:1"}, Getenv: env}
		cmd, err := k6{}.Command(spec, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		line := strings.Join(cmd.Args, " ")
		if !strings.Contains(line, c.want) || !strings.Contains(line, "-e BASE=http://127.0.0.1:1") || !strings.Contains(line, "--summary-export=") {
			t.Errorf("%v: %s", c.set, line)
		}
	}
	for _, bad := range []map[string]string{{"users": "0"}, {"duration": "soon"}, {"ramp_up": "10s"}, {"target": "http://x"}} {
		if _, err := (k6{}).Command(&Spec{Script: "s.js", Set: bad, Getenv: env}, t.TempDir()); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func TestLocustOverrides(t *testing.T) {
	t.Parallel()
	bin := fakeBin(t, "locust")
	env := func(k string) string {
		if k == "LOCUST" {
			return bin
		}
		return ""
	}
	spec := &Spec{Script: "l.py", Set: map[string]string{"users": "100", "ramp_up": "50s", "duration": "10m", "target": "http://127.0.0.1:8080"}, Getenv: env}
	cmd, err := locust{}.Command(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(cmd.Args, " ")
	for _, w := range []string{"--users 100", "--spawn-rate 2", "--run-time 600s", "--host http://127.0.0.1:8080", "--headless", "--csv-full-history"} {
		if !strings.Contains(line, w) {
			t.Errorf("%s lacks %q", line, w)
		}
	}
}

func TestJMeterPlanOverrides(t *testing.T) {
	t.Parallel()
	src := []byte(`<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="a">
  <stringProp name="ThreadGroup.num_threads">${__P(VUSERS,1)}</stringProp>
  <stringProp name="ThreadGroup.ramp_time">1</stringProp>
  <elementProp name="ThreadGroup.main_controller" elementType="LoopController">
    <stringProp name="LoopController.loops">10</stringProp>
  </elementProp>
</ThreadGroup>
<ThreadGroup guiclass="ThreadGroupGui" testclass="ThreadGroup" testname="b">
  <intProp name="ThreadGroup.num_threads">4</intProp>
  <intProp name="ThreadGroup.ramp_time">0</intProp>
  <boolProp name="ThreadGroup.scheduler">false</boolProp>
  <stringProp name="ThreadGroup.duration"></stringProp>
  <elementProp name="ThreadGroup.main_controller" elementType="LoopController">
    <intProp name="LoopController.loops">-1</intProp>
  </elementProp>
</ThreadGroup>`)
	out, err := overridePlan(src, map[string]string{"users": "25", "ramp_up": "1m", "duration": "5m"})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, w := range []string{
		`<stringProp name="ThreadGroup.num_threads">25</stringProp>`, `<intProp name="ThreadGroup.num_threads">25</intProp>`,
		`<stringProp name="ThreadGroup.ramp_time">60</stringProp>`, `<intProp name="ThreadGroup.ramp_time">60</intProp>`,
		`<boolProp name="ThreadGroup.scheduler">true</boolProp>`, `<stringProp name="ThreadGroup.duration">300</stringProp>`,
		`<stringProp name="LoopController.loops">-1</stringProp>`,
	} {
		if !strings.Contains(s, w) {
			t.Errorf("overridden plan lacks %s:\n%s", w, s)
		}
	}
	if strings.Count(s, `name="ThreadGroup.scheduler">true`) != 2 || strings.Count(s, `name="ThreadGroup.duration">300`) != 2 {
		t.Errorf("not every Thread Group got the scheduler and the duration:\n%s", s)
	}
	if _, err := overridePlan([]byte(`<kg.apc.jmeter.threads.UltimateThreadGroup/>`), map[string]string{"users": "2"}); err == nil {
		t.Error("a plan without a standard Thread Group was accepted")
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	got := strings.Join(redact([]string{"k6", "-e", "API_TOKEN=abc", "-Jpassword=pw", "-Jhost=127.0.0.1"}), " ")
	if strings.Contains(got, "abc") || strings.Contains(got, "=pw") || !strings.Contains(got, "host=127.0.0.1") {
		t.Errorf("redacted: %s", got)
	}
}

func TestFor(t *testing.T) {
	t.Parallel()
	for script, want := range map[string]string{"a.jmx": "jmeter", "b.js": "k6", "c.py": "locust", "Sim.java": "gatling", "Sim.scala": "gatling"} {
		tool, err := For(script)
		if err != nil || tool.Name() != want {
			t.Errorf("%s: %v %v", script, tool, err)
		}
	}
	if _, err := For("notes.txt"); err == nil || !strings.Contains(err.Error(), "Gatling .java simulation") {
		t.Errorf("a text file: %v", err)
	}
	if IsScript("plan.yaml") || !IsScript("x.JMX") {
		t.Error("IsScript")
	}
}

func TestSimulationClass(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		path, src, class, root, err string
	}{
		{"/p/src/sim/A.java", "package sim;\npublic class A extends Simulation {}", "sim.A", "/p/src", ""},
		{"/p/src/a/b/B.java", "package a.b;\n\nclass B extends io.gatling.javaapi.core.Simulation {", "a.b.B", "/p/src", ""},
		{"/p/C.java", "public final class C extends Simulation {}", "C", "/p", ""},
		{"/p/x/A.java", "package sim;\npublic class A extends Simulation {}", "", "", "not in a directory"},
		{"/p/A.java", "public class A {}", "", "", "no class extending Simulation"},
	} {
		class, root, err := simulationClass(c.path, []byte(c.src))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %v, want an error with %q", c.path, err, c.err)
			}
			continue
		}
		if err != nil || class != c.class || root != filepath.FromSlash(c.root) {
			t.Errorf("%s: %q %q %v, want %q %q", c.path, class, root, err, c.class, c.root)
		}
	}
}

func TestGatlingRefusals(t *testing.T) {
	t.Parallel()
	sim := filepath.Join(t.TempDir(), "Sim.java")
	if err := os.WriteFile(sim, []byte("public class Sim extends Simulation {{ setUp(s.injectOpen(atOnceUsers(5))); }}"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		spec Spec
		want string
	}{
		{Spec{Script: "Sim.scala"}, "written in Java"},
		{Spec{Script: "Sim.kt"}, "written in Java"},
		{Spec{Script: sim, Set: map[string]string{"users": "5"}}, "only for a simulation that reads them"},
	} {
		if _, err := (gatling{}).Command(&c.spec, t.TempDir()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.spec.Script, c.spec.Set, err, c.want)
		}
	}
}

// pathTool is a tool whose command writes a file into its output
// directory from another working directory, as the real tools run in
// their script's directory.
type pathTool struct{ k6 }

func (pathTool) Command(spec *Spec, out string) (*exec.Cmd, error) {
	cmd := exec.Command("sh", "-c", `echo done > "$0/result"`, out)
	cmd.Dir = os.TempDir()
	return cmd, nil
}

// TestRunRelativeDir: a run directory relative to plateau's working
// directory (plateau run s/peak.js -o run) is where the tool writes, even
// though the tool runs elsewhere.
func TestRunRelativeDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	res, err := Run(context.Background(), pathTool{}, &Spec{Script: "s/x.js", Dir: "run"}, nil)
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "run", "tool", "result")); err != nil || string(b) != "done\n" {
		t.Errorf("result %q %v", b, err)
	}
}

// TestK6SystemTags: k6 is given only the system tags the import reads
// unless the script, a local module it imports or the user may need the
// others.
func TestK6SystemTags(t *testing.T) {
	t.Parallel()
	bin := fakeBin(t, "k6")
	for _, c := range []struct {
		name    string
		files   map[string]string
		userEnv string
		want    bool
	}{
		{"plain", map[string]string{"s.js": "import http from 'k6/http';\nexport const options = { scenarios: { a: { executor: 'shared-iterations' } } };\nexport default function () { http.get(__ENV.BASE); }\n"}, "", true},
		{"module", map[string]string{"s.js": "import { options as o } from './lib/opts.js';\nexport const options = o;\n", "lib/opts.js": "export const options = { thresholds: { 'http_req_duration{scenario:buy}': ['p(95)<500'] } };\n"}, "", false},
		{"nested module", map[string]string{"s.js": "import { o } from './a.js';\n", "a.js": "export * from \"../" + "x/b.js\";\n", "../x/b.js": "export const o = { systemTags: ['url'] };\n"}, "", false},
		{"missing module", map[string]string{"s.js": "import { o } from './gone.js';\n"}, "", false},
		{"user's own", map[string]string{"s.js": "export default function () {}\n"}, "proto,url", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "d")
			for name, text := range c.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := func(k string) string {
				switch k {
				case "K6":
					return bin
				case "K6_SYSTEM_TAGS":
					return c.userEnv
				}
				return ""
			}
			cmd, err := k6{}.Command(&Spec{Script: filepath.Join(dir, "s.js"), Getenv: env}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, e := range cmd.Env {
				if e == "K6_SYSTEM_TAGS="+K6SystemTags {
					got = true
				}
			}
			if got != c.want {
				t.Errorf("K6_SYSTEM_TAGS=%s given: %v, want %v", K6SystemTags, got, c.want)
			}
		})
	}
}

// TestLocustMasterCommand: Locust's master alone (plateau k8s's master
// pod, --locust-master): bound where asked, expecting the workers that
// run elsewhere, waiting for them as long as asked, with no local worker
// and no graceful stop (its workers' requests then would go uncounted);
// an address without a port, or no worker, is refused.
func TestLocustMasterCommand(t *testing.T) {
	env := func(k string) string {
		if k == "LOCUST" {
			return "/opt/x/locust"
		}
		return ""
	}
	spec := &Spec{Script: "l.py", Set: map[string]string{"duration": "10s", "users": "4"}, Master: "*:5557", Workers: 3, MasterWait: 90 * time.Second, Getenv: env}
	cmd, err := locust{}.Command(spec, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(cmd.Args, " ")
	if cmd.Args[0] != "/opt/x/locust" || !strings.Contains(line, "--master --master-bind-host * --master-bind-port 5557 --expect-workers 3 --expect-workers-max-wait 90") ||
		strings.Contains(line, "--stop-timeout") || strings.Contains(line, "--worker") {
		t.Errorf("master: %s", line)
	}
	for _, bad := range []*Spec{
		{Script: "l.py", Set: map[string]string{"duration": "10s"}, Master: "5557", Workers: 3, Getenv: env},
		{Script: "l.py", Set: map[string]string{"duration": "10s"}, Master: "*:x", Workers: 3, Getenv: env},
		{Script: "l.py", Set: map[string]string{"duration": "10s"}, Master: "*:5557", Workers: 0, Getenv: env},
	} {
		if _, err := (locust{}).Command(bad, t.TempDir()); err == nil {
			t.Errorf("master %q with %d workers accepted", bad.Master, bad.Workers)
		}
	}
}
