package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
	gatlingimp "github.com/plateau-perf/plateau/internal/importer/gatling"
)

// gatling runs a Gatling simulation written in Java: it is compiled with
// javac against Gatling's jars ($GATLING_HOME/lib, as
// internal/importer/testdata/install-deps.sh gatling assembles Gatling
// 3.9.5 from Maven Central) and run with io.gatling.app.Gatling, its
// results and report written to the run directory. Its simulation.log is
// read by the Gatling importer as Gatling writes it.
//
// Overrides: -J name=value are Java system properties (-Dname=value), which
// a simulation reads with System.getProperty — Gatling's own way to
// parameterise one; -e NAME=value its environment (System.getenv). The
// injection profile is the simulation's own code, so --set is refused.
// Scala and Kotlin simulations need their compilers (Gatling's Maven,
// Gradle or sbt plugin builds them): they are refused with a message.
type gatling struct{}

func (gatling) Name() string { return "gatling" }

// reGatlingProp finds the system properties a simulation reads
// (Integer.getInteger("users", 10), System.getProperty("rate") …).
var reGatlingProp = regexp.MustCompile(`(?:Integer\.getInteger|Long\.getLong|System\.getProperty)\(\s*"(\w+)"`)

// gatlingLoad maps --set users and rate onto the system properties of
// those names (-Dusers=N, -Drate=N), if the simulation reads them, each
// generator's share under --generators; the injection profile is
// otherwise the simulation's own code, so any other --set, and a split
// without users or rate, is refused.
func gatlingLoad(spec *Spec, src []byte) ([]string, error) {
	reads := map[string]bool{}
	for _, m := range reGatlingProp.FindAllSubmatch(src, -1) {
		reads[string(m[1])] = true
	}
	keys := make([]string, 0, len(spec.Set))
	for k := range spec.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var props []string
	for _, k := range keys {
		if (k != "users" && k != "rate") || !reads[k] {
			return nil, fmt.Errorf("Gatling takes --set users and rate only for a simulation that reads them (Integer.getInteger(\"users\", 10)), as -Dusers=…; not --set %s: the injection profile is the simulation's own code; read a value there with System.getProperty(\"%s\") and pass it with -J %s=…", k, k, k)
		}
		n, err := positive(k, spec.Set[k])
		if err != nil {
			return nil, err
		}
		if err := checkShare(k, n, spec.Segments); err != nil {
			return nil, err
		}
		props = append(props, fmt.Sprintf("-D%s=%d", k, share(n, spec.Segment, spec.Segments)))
	}
	if spec.Segments > 1 {
		if len(props) == 0 {
			return nil, fmt.Errorf("Gatling's injection profile is the simulation's own code, which plateau cannot divide among generators: " +
				"read the user count (or rate) from a system property there — Integer.getInteger(\"users\", 10) — and give --set users=N, which each generator gets its share of; " +
				"or run the simulation on each machine with its share and build one report from all simulation.log files with Gatling's reports-only mode (gatling -ro)")
		}
		for _, p := range spec.Props {
			if k, _, _ := strings.Cut(p, "="); k == "users" || k == "rate" {
				return nil, fmt.Errorf("-J %s on several generators gives each the whole value: give --set %s=N, which is divided among them", p, k)
			}
		}
	}
	return props, nil
}

func (gatling) streams() bool    { return true }
func gatlingDefaultHome() string { return "/tmp/plateau-gatling" }

// gatlingHome finds Gatling's jars and java/javac.
func gatlingHome(spec *Spec) (java, javac, lib string, err error) {
	home := getenv(spec, "GATLING_HOME")
	if home == "" {
		home = gatlingDefaultHome()
	}
	lib = filepath.Join(home, "lib")
	if m, _ := filepath.Glob(filepath.Join(lib, "gatling-app-*.jar")); len(m) == 0 {
		return "", "", "", fmt.Errorf("Gatling not found (no gatling-app-*.jar in %s): set $GATLING_HOME, or install it with internal/importer/testdata/install-deps.sh gatling", lib)
	}
	if java, err = exec.LookPath("java"); err != nil {
		return "", "", "", fmt.Errorf("Gatling needs java on PATH: %w", err)
	}
	if javac, err = exec.LookPath("javac"); err != nil {
		return "", "", "", fmt.Errorf("a Java simulation is compiled with javac, not on PATH (a JDK, e.g. Debian's default-jdk-headless): %w", err)
	}
	return java, javac, lib, nil
}

var (
	reJavaPackage = regexp.MustCompile(`(?m)^\s*package\s+([\w.]+)\s*;`)
	reJavaSim     = regexp.MustCompile(`(?m)^\s*(?:public\s+)?(?:final\s+)?class\s+(\w+)\s+extends\s+(?:[\w.]*\.)?Simulation\b`)
)

// simulationClass reads a Java simulation's package and class, and the
// root of its source tree (the directory above its package's).
func simulationClass(path string, src []byte) (class, root string, err error) {
	m := reJavaSim.FindSubmatch(src)
	if m == nil {
		return "", "", fmt.Errorf("%s: no class extending Simulation (Gatling's Java DSL, io.gatling.javaapi.core.Simulation)", path)
	}
	class = string(m[1])
	root = filepath.Dir(path)
	if p := reJavaPackage.FindSubmatch(src); p != nil {
		pkg := string(p[1])
		class = pkg + "." + class
		rel := filepath.FromSlash(strings.ReplaceAll(pkg, ".", "/"))
		if !strings.HasSuffix(filepath.ToSlash(root), "/"+filepath.ToSlash(rel)) {
			return "", "", fmt.Errorf("%s: package %s, but the file is not in a directory %s", path, pkg, rel)
		}
		root = strings.TrimSuffix(root, string(filepath.Separator)+rel)
	}
	return class, root, nil
}

func (gatling) Command(spec *Spec, out string) (*exec.Cmd, error) {
	if ext := strings.ToLower(filepath.Ext(spec.Script)); ext != ".java" {
		return nil, fmt.Errorf("%s: plateau runs Gatling simulations written in Java; a %s simulation needs its compiler (build it with Gatling's Maven, Gradle or sbt plugin, run it there, and `plateau import gatling simulation.log`)", spec.Script, ext)
	}
	script, err := filepath.Abs(spec.Script)
	if err != nil {
		return nil, err
	}
	src, err := os.ReadFile(script)
	if err != nil {
		return nil, err
	}
	load, err := gatlingLoad(spec, src)
	if err != nil {
		return nil, err
	}
	java, javac, lib, err := gatlingHome(spec)
	if err != nil {
		return nil, err
	}
	class, root, err := simulationClass(spec.Script, src)
	if err != nil {
		return nil, err
	}
	var props []string
	for _, p := range spec.Props {
		k, _, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("-J %q: want name=value", p)
		}
		props = append(props, "-D"+p)
	}
	env, err := envList(spec.Env)
	if err != nil {
		return nil, err
	}
	// Compiled into the run directory; other classes of the source tree
	// the simulation uses are found through -sourcepath.
	classes := filepath.Join(out, "classes")
	cp := filepath.Join(lib, "*")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var cout bytes.Buffer
	cc := exec.CommandContext(ctx, javac, "-nowarn", "-encoding", "UTF-8", "-cp", cp, "-sourcepath", root, "-d", classes, script)
	cc.Stdout, cc.Stderr = &cout, &cout
	if err := cc.Run(); err != nil {
		msg := strings.TrimSpace(cout.String())
		if len(msg) > 4000 {
			msg = msg[:4000] + " …"
		}
		return nil, fmt.Errorf("compiling %s with javac: %w\n%s", spec.Script, err, msg)
	}
	props = append(props, load...) // after -J: plateau's share wins
	args := append(props, "-cp", strings.Join([]string{cp, classes, root}, string(os.PathListSeparator)),
		"io.gatling.app.Gatling", "-s", class, "-rf", filepath.Join(out, "results"))
	cmd := exec.Command(java, args...)
	cmd.Dir = root
	cmd.Env = env
	return cmd, nil
}

// gatlingLog is the simulation.log Gatling wrote under out, or "".
func gatlingLog(out string) string {
	m, _ := filepath.Glob(filepath.Join(out, "results", "*", "simulation.log"))
	if len(m) == 0 {
		return ""
	}
	sort.Strings(m)
	return m[len(m)-1]
}

// gatlingSource finds the log Gatling writes in a directory named after
// the simulation and the time, then imports it.
type gatlingSource struct {
	out    string
	follow <-chan struct{}
}

func (g gatlingSource) Import(ctx context.Context, run *importer.Run) error {
	path := gatlingLog(g.out)
	for path == "" && g.follow != nil {
		select {
		case <-g.follow:
			path = gatlingLog(g.out)
			if path == "" {
				return errors.New("Gatling wrote no simulation.log")
			}
		case <-time.After(importer.FollowPoll):
			path = gatlingLog(g.out)
		}
	}
	if path == "" {
		return fmt.Errorf("no simulation.log under %s", filepath.Join(g.out, "results"))
	}
	return gatlingimp.New(gatlingimp.Config{Path: path, Workload: "gatling", Follow: g.follow}).Import(ctx, run)
}

func (gatling) Source(spec *Spec, out string, follow <-chan struct{}) importer.Source {
	return gatlingSource{out: out, follow: follow}
}

// Notes lists the simulation's own assertions from the report Gatling
// wrote (js/assertions.json) and what its exit code says.
func (gatling) Notes(spec *Spec, out string, exit int) Notes {
	var notes Notes
	if log := gatlingLog(out); log != "" {
		if b, err := os.ReadFile(filepath.Join(filepath.Dir(log), "js", "assertions.json")); err == nil {
			var a struct {
				Assertions []struct {
					Message string `json:"message"`
					Result  bool   `json:"result"`
				} `json:"assertions"`
			}
			if json.Unmarshal(b, &a) == nil && len(a.Assertions) > 0 {
				var list []string
				for _, x := range a.Assertions {
					state := "held"
					if !x.Result {
						state = "failed"
					}
					msg := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(x.Message, ": true"), ": false"))
					list = append(list, msg+": "+state)
				}
				notes.Note("Gatling's own assertions (beside plateau's SLA): %s", strings.Join(list, "; "))
			}
		}
	}
	switch exit {
	case 0:
	case 2:
		notes.Note("Gatling exited with code 2: one of the simulation's assertions failed")
	default:
		notes.Note("Gatling exited with code %d (its output is in tool/gatling.out.log)", exit)
	}
	return notes
}
