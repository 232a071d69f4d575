package cli

import (
	"errors"
	"fmt"
	"os"
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
already due and counts them as dropped. See docs/distributed.md.`,
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
	return cmd
}

func printK8s(st *State, planPath string, f k8sFlags) error {
	if f.generators < 1 {
		return errors.New("k8s: --generators N is required")
	}
	if executor.IsScript(planPath) {
		tool, err := executor.For(planPath)
		if err != nil {
			return err
		}
		return fmt.Errorf("k8s: %s: %w", planPath, notDistributed(tool.Name(), "plateau k8s"))
	}
	// Load the plan as the generators will, so a broken plan fails here
	// and not in N pods.
	p, err := loadPlanWith(st, planPath, f.set, false, nil) // the pods' machines are not this one
	if err != nil {
		return err
	}
	if e := engineOf(p); e != "" {
		return fmt.Errorf("k8s: %s: %w", planPath, notDistributed(e, "plateau k8s"))
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
	start := time.Now().Add(f.startIn).Truncate(time.Second).Add(time.Second)
	if f.startAt != "" {
		if start, err = time.Parse(time.RFC3339Nano, f.startAt); err != nil {
			return fmt.Errorf("k8s: --start-at: %w", err)
		}
	}
	deadline := f.deadline
	if deadline == 0 {
		deadline = 2 * time.Hour
		if d, ok := k8s.Duration(p); ok {
			deadline = time.Until(start) + d + 10*time.Minute
		}
	}
	name := f.name
	if name == "" {
		name = k8s.JobName(p.Name)
	}
	image := f.image
	if image == "" {
		image = "plateau:" + version()
	}
	m, err := k8s.Build(k8s.Options{Name: name, Namespace: f.namespace, Image: image, Generators: f.generators,
		Plan: src, Files: files, Set: append(sets, f.set...), NoSamples: f.noSamples, StartAt: start,
		Deadline: deadline.Round(time.Second), ResultsClaim: f.resultsClaim, ResultsSize: f.resultsSize,
		StorageClass: f.storageClass, CPU: f.cpu, Memory: f.memory, EnvFromSecrets: f.envFrom, Linger: f.linger})
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	y, err := m.YAML()
	if err != nil {
		return fmt.Errorf("k8s: %w", err)
	}
	if refs := k8s.EnvRefs(src); len(refs) > 0 && len(f.envFrom) == 0 {
		fmt.Fprintf(st.Stderr, "plateau k8s: the plan reads %s from the environment: give the pods a Secret with --env-from-secret\n",
			strings.Join(refs, ", "))
	}
	fmt.Fprintf(st.Stderr, "plateau k8s: %d generators start at %s; apply now. Results: %s on claim %s\n",
		f.generators, start.UTC().Format(time.RFC3339), m.RunDir, claimName(m, f.resultsClaim))
	_, err = st.Stdout.Write(y)
	return err
}

func claimName(m *k8s.Manifests, given string) string {
	if m.Claim != nil {
		return m.Claim.Name
	}
	return given
}
