package cli

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/plateau-perf/plateau/internal/executor"
	"github.com/plateau-perf/plateau/internal/k8s"
)

// k8sFlags are the flags of `plateau k8s`.
type k8sFlags struct {
	generators   int
	image        string
	namespace    string
	name         string
	startIn      time.Duration
	startAt      string
	deadline     time.Duration
	resultsClaim string
	resultsSize  string
	storageClass string
	cpu, memory  string
	envFrom      []string
	set          []string
	noSamples    bool
	linger       time.Duration
	props, env   []string
}

// newK8sCmd is `plateau k8s PLAN --generators N`: it prints the manifests
// that run the plan as an Indexed Job of N generator pods and merge their
// results. It talks to no cluster.
func newK8sCmd(st *State) *cobra.Command {
	var f k8sFlags
	cmd := &cobra.Command{
		Use:   "k8s PLAN.yaml --generators N",
		Short: "Print Kubernetes manifests that run a plan on N generator pods and merge the results",
		Long: `Print the Kubernetes manifests (YAML, for kubectl apply) that run a plan on N
generator pods: the plan and its data files in ConfigMaps, a results volume
(PersistentVolumeClaim, ReadWriteMany), an Indexed Job whose pod i runs segment
i/N from a common start instant, and a merge Job that waits for the segments,
merges them and writes the reports, then stays up for kubectl cp.

The start instant is fixed now (--start-in ahead, default 2m): apply the
manifests at once. A pod that starts later than that skips the iterations
already due and counts them as dropped. See docs/distributed.md.

A JMeter plan, k6 script or Gatling simulation runs in its tool on each pod
(--image: an image holding it). A locustfile runs in Locust's own
distributed mode: a master pod (plateau run --locust-master, with the
monitors), a Service for its port 5557 and N worker pods; the master starts
the load once all N have connected. See docs/run-foreign.md.`,
		Example: `  plateau k8s plan.yaml -g 4 --image registry.example.com/plateau:0.1.0 | kubectl apply -f -
  kubectl wait --for=condition=Ready pod -l batch.kubernetes.io/job-name=plateau-shop-merge --timeout=30m`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return printK8s(st, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&f.generators, "generators", "g", 0, "number of generator pods (segments); required")
	fl.StringVar(&f.image, "image", "", "generator image (default plateau:<version>, built from deploy/Dockerfile)")
	fl.StringVarP(&f.namespace, "namespace", "n", "", "namespace of the objects (default: kubectl's)")
	fl.StringVar(&f.name, "name", "", "Job name (default plateau-<plan name>)")
	fl.DurationVar(&f.startIn, "start-in", 2*time.Minute, "start the load this long after now: time to apply, schedule and pull the image")
	fl.StringVar(&f.startAt, "start-at", "", "start the load at this RFC 3339 instant instead of --start-in")
	fl.DurationVar(&f.deadline, "deadline", 0, "longest the run may take from apply (default: start-in + the plan's duration + 10m, or 2h)")
	fl.StringVar(&f.resultsClaim, "results-claim", "", "existing PersistentVolumeClaim for the results (default: create <name>-results)")
	fl.StringVar(&f.resultsSize, "results-size", "1Gi", "size of the results claim created")
	fl.StringVar(&f.storageClass, "storage-class", "", "storage class of the results claim (it must offer ReadWriteMany)")
	fl.StringVar(&f.cpu, "cpu", "", "CPU request and limit of each generator, e.g. 2")
	fl.StringVar(&f.memory, "memory", "", "memory request and limit of each generator, e.g. 1Gi")
	fl.StringArrayVar(&f.envFrom, "env-from-secret", nil, "Secret whose keys become environment variables of the generators (repeatable)")
	fl.StringArrayVar(&f.set, "set", nil, "override a plan value in every generator (repeatable)")
	fl.BoolVar(&f.noSamples, "no-samples", false, "generators keep no raw sample log")
	fl.DurationVar(&f.linger, "linger", time.Hour, "how long the merge pod stays up after merging, for kubectl cp")
	fl.StringArrayVarP(&f.props, "jmeter-property", "J", nil, "a JMeter property for a .jmx plan, name=value, passed to every generator (repeatable)")
	fl.StringArrayVarP(&f.env, "env", "e", nil, "an environment variable for a k6, JMeter or Locust script, NAME=value, passed to every generator (a locustfile's: to its master and workers; repeatable)")
	return cmd
}

func printK8s(st *State, planPath string, f k8sFlags) error {
	if f.generators < 1 {
		return errors.New("k8s: --generators N is required")
	}
	if executor.IsScript(planPath) {
		return printK8sScript(st, planPath, f)
	}
	if len(f.props) > 0 || len(f.env) > 0 {
		return errors.New("k8s: -J and -e are for a JMeter or k6 script; a plan gives them in its workload (properties:, env:)")
	}
	// Load the plan as the generators will, so a broken plan fails here
	// and not in N pods.
	p, err := loadPlanWith(st, planPath, f.set, false, nil) // the pods' machines are not this one
	if err != nil {
		return err
	}
	if err := checkSLANames(p); err != nil {
		return err
	}
	src, err := os.ReadFile(planPath)
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	files, sets, err := k8s.DataFiles(p)
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	o := k8s.Options{Plan: src, Files: files, Set: append(sets, f.set...)}
	if e := engineOf(p); e != "" {
		// A plan whose workload runs in a foreign tool: its script and
		// the files beside it go with the plan; the image must hold the
		// tool.
		w := p.Workloads[0]
		tool, err := executor.For(w.Script)
		if err != nil {
			return fmt.Errorf("k8s: %w", err)
		}
		spec := &executor.Spec{Script: filepath.Join(filepath.Dir(planPath), w.Script), Set: engineSet(p, w, tool)}
		for _, k := range sortedKeys(w.Properties) {
			spec.Props = append(spec.Props, k+"="+w.Properties[k])
		}
		if tool.Name() == "locust" {
			// Locust's own distributed mode: the master pod runs the plan
			// (its monitors, SLA …), the worker pods the locustfile.
			if spec.Set["duration"] == "" {
				return fmt.Errorf("k8s: %s: headless Locust runs until it is stopped: give the workload a load.duration", planPath)
			}
			o.Locust, o.LocustFile = true, filepath.ToSlash(filepath.Clean(w.Script))
			for _, k := range sortedKeys(w.Env) {
				o.ScriptEnv = append(o.ScriptEnv, k+"="+w.Env[k])
			}
		} else if err := executor.CheckSegments(tool, spec, f.generators); err != nil {
			return fmt.Errorf("k8s: %s: %w", planPath, err)
		}
		if f.image == "" {
			return fmt.Errorf("k8s: %s runs its workload in %s: give --image, an image with plateau and %s (docs/run-foreign.md)", planPath, e, e)
		}
		rel := filepath.ToSlash(filepath.Clean(w.Script))
		if filepath.IsAbs(w.Script) || rel == ".." || strings.HasPrefix(rel, "../") {
			return fmt.Errorf("k8s: %s: the script %s is not below the plan's directory, so it cannot go beside it in the pods", planPath, w.Script)
		}
		skip := map[string]bool{k8s.PlanKey: true, filepath.ToSlash(filepath.Base(planPath)): true}
		for _, df := range files {
			skip[df.Path] = true
		}
		sf, err := scriptFiles(st, filepath.Join(filepath.Dir(planPath), w.Script), path.Dir(rel), skip)
		if err != nil {
			return fmt.Errorf("k8s: %w", err)
		}
		o.Files, o.Writable = append(o.Files, sf...), true
	}
	d, ok := k8s.Duration(p)
	return writeK8s(st, f, o, p.Name, d, ok)
}

// printK8sScript is `plateau k8s SCRIPT -g N`: each pod runs the script in
// its tool on its share of the load (plateau run SCRIPT --segment i/N),
// and the merge pod reads the union of their raw results.
func printK8sScript(st *State, script string, f k8sFlags) error {
	tool, err := executor.For(script)
	if err != nil {
		return err
	}
	set := map[string]string{}
	for _, kv := range f.set {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("k8s: --set %q: want key=value (users, ramp_up, duration, rate …)", kv)
		}
		set[k] = v
	}
	locust := tool.Name() == "locust"
	if locust {
		// Locust's own distributed mode: a master pod and N worker pods.
		switch {
		case len(f.props) > 0:
			return fmt.Errorf("k8s: %s: -J sets JMeter properties; a locustfile takes -e NAME=value (its environment)", script)
		case set["duration"] == "":
			return fmt.Errorf("k8s: %s: headless Locust runs until it is stopped: give --set duration=…", script)
		}
	} else if err := executor.CheckSegments(tool, &executor.Spec{Script: script, Set: set, Props: f.props}, f.generators); err != nil {
		return fmt.Errorf("k8s: %s: %w", script, err)
	}
	if f.image == "" {
		return fmt.Errorf("k8s: %s runs in %s: give --image, an image with plateau and %s (docs/run-foreign.md says what it needs)", script, tool.Name(), tool.Name())
	}
	src, err := os.ReadFile(script)
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	files, err := scriptFiles(st, script, ".", map[string]bool{filepath.Base(script): true})
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	var args []string
	for _, p := range f.props {
		args = append(args, "-J", p)
	}
	for _, e := range f.env {
		args = append(args, "-e", e)
	}
	var d time.Duration
	ok := false
	for _, s := range f.set {
		if k, v, _ := strings.Cut(s, "="); k == "duration" {
			if x, err := time.ParseDuration(v); err == nil {
				d, ok = x, true
			} else if n, err := strconv.Atoi(v); err == nil {
				d, ok = time.Duration(n)*time.Second, true
			}
		}
	}
	name := strings.TrimSuffix(filepath.Base(script), filepath.Ext(script))
	o := k8s.Options{Plan: src, PlanName: filepath.Base(script), Files: files, Set: f.set, Args: args, Writable: true}
	if locust {
		o.Locust, o.ScriptEnv = true, f.env
	}
	return writeK8s(st, f, o, name, d, ok)
}

// scriptFiles are a foreign tool's script and the files beside it
// (JMeter's CSV Data Set files, k6's modules), placed under dir beside
// the plan in the pods, but for the paths in skip (already there).
// Hidden files and directories are left out; a file too big for a
// ConfigMap is named, not sent.
func scriptFiles(st *State, script, dir string, skip map[string]bool) ([]File, error) {
	ents, err := os.ReadDir(filepath.Dir(script))
	if err != nil {
		return nil, err
	}
	var out []File
	for _, e := range ents {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") || skip[path.Join(dir, e.Name())] {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		if fi.Size() > 1000<<10 {
			fmt.Fprintf(st.Stderr, "plateau k8s: %s is %d bytes, too big for a ConfigMap: not sent; build it into the image if the script reads it\n",
				filepath.Join(filepath.Dir(script), e.Name()), fi.Size())
			continue
		}
		b, err := os.ReadFile(filepath.Join(filepath.Dir(script), e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: path.Join(dir, e.Name()), Data: b})
	}
	return out, nil
}

// File is a file the pods get beside the plan.
type File = k8s.File

// writeK8s fixes the start instant, deadline and names, and prints the
// manifests.
func writeK8s(st *State, f k8sFlags, o k8s.Options, planName string, dur time.Duration, durOK bool) error {
	var err error
	start := time.Now().Add(f.startIn).Truncate(time.Second).Add(time.Second)
	if f.startAt != "" {
		if start, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return fmt.Errorf("k8s: --start-at: %w", err)
		}
	}
	deadline := f.deadline
	if deadline == 0 {
		deadline = 2 * time.Hour
		if durOK {
			deadline = time.Until(start) + dur + 10*time.Minute
		}
	}
	name := f.name
	if name == "" {
		name = k8s.JobName(planName)
	}
	image := f.image
	if image == "" {
		image = "plateau:" + version()
	}
	o.Name, o.Namespace, o.Image, o.Generators, o.NoSamples, o.StartAt = name, f.namespace, image, f.generators, f.noSamples, start
	o.Deadline, o.ResultsClaim, o.ResultsSize, o.StorageClass = deadline.Round(time.Second), f.resultsClaim, f.resultsSize, f.storageClass
	o.CPU, o.Memory, o.EnvFromSecrets, o.Linger = f.cpu, f.memory, f.envFrom, f.linger
	m, err := k8s.Build(o)
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	y, err := m.YAML()
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	if refs := k8s.EnvRefs(o.Plan); len(refs) > 0 && len(f.envFrom) == 0 {
		fmt.Fprintf(st.Stderr, "plateau k8s: the plan reads %s from the environment: give the pods a Secret with --env-from-secret\n",
			strings.Join(refs, ", "))
	}
	if o.Locust {
		fmt.Fprintf(st.Stderr, "plateau k8s: Locust's master starts the load once its %d workers have connected (within %s); apply now. Results: %s/merged on claim %s\n",
			f.generators, o.Deadline, m.RunDir, claimName(m, f.resultsClaim))
	} else {
		fmt.Fprintf(st.Stderr, "plateau k8s: %d generators start at %s; apply now. Results: %s on claim %s\n",
			f.generators, start.UTC().Format(time.RFC3339), m.RunDir, claimName(m, f.resultsClaim))
	}
	_, err = st.Stdout.Write(y)
	return err
}

func claimName(m *k8s.Manifests, given string) string {
	if m.Claim != nil {
		return m.Claim.Name
	}
	return given
}
