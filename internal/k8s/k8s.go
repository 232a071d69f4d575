// Package k8s builds the Kubernetes manifests that run one plan on N
// generator pods: the plan and its data files in ConfigMaps, an Indexed Job
// whose pod i runs `plateau run --segment i/N --start-at T`, a volume for the
// results and a merge Job that waits for the segments and writes the merged
// run directory with its reports. The objects are the Kubernetes API's own Go
// types (k8s.io/api), rendered as YAML for kubectl or GitOps; plateau never
// talks to a cluster itself.
//
// Why these Job settings: completions = parallelism = N so that every
// segment starts at once (a segment started later would shift its share of
// the load); one try per index (backoffLimitPerIndex 0, maxFailedIndexes 0,
// podReplacementPolicy Failed) because a retried segment would start late
// and distort the load — a failed generator fails the run, and the merge
// says which segment is missing and for how long.
package k8s

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"
)

// Paths inside the containers.
const (
	PlanMount    = "/plan"    // the ConfigMaps: plan file and data files
	ResultsMount = "/results" // the results volume
	WorkMount    = "/work"    // a writable copy of /plan (Options.Writable)
	PlanKey      = "plan.yaml"
)

// configMapLimit is what one ConfigMap may hold: the API server refuses
// objects over 1 MiB; keep room for metadata.
const configMapLimit = 1000 << 10

// File is one data file the plan reads, by its path relative to the plan
// file (slash-separated, no "..").
type File struct {
	Path string
	Data []byte
}

// Options describes the manifests to build.
type Options struct {
	// Name is the Job name (a DNS-1123 label of at most 40 characters, so
	// that "<name>-merge" and pod host names "<name>-<i>" stay valid).
	Name      string
	Namespace string // "" leaves it to kubectl's context
	Image     string // generator image with /usr/local/bin/plateau and /bin/sh
	// Generators is N, the number of segments and pods.
	Generators int
	Plan       []byte // the plan file as written
	// PlanName is the plan's file name under PlanMount (default
	// plan.yaml); a foreign tool's script keeps its own (plan.jmx,
	// script.js), which says which tool runs it.
	PlanName string
	Files    []File   // data files, placed next to the plan
	Set      []string // --set overrides passed to every generator
	// Args are further arguments to every generator's plateau run (a
	// script's -J name=value and -e NAME=value).
	Args []string
	// Writable has each generator copy the ConfigMaps' files to a
	// writable emptyDir (WorkMount) and run from there: a foreign tool
	// writes beside its script (JMeter's plan with the overrides).
	Writable  bool
	NoSamples bool // pass --no-samples
	// StartAt is the common start instant; it must leave time for the pods
	// to be scheduled, pull the image and load the plan. A pod that starts
	// later skips the iterations already due and counts them as dropped.
	StartAt time.Time
	// Deadline bounds the whole run from the Job's start (activeDeadlineSeconds)
	// and how long the merge waits for segments.
	Deadline time.Duration
	// ResultsClaim names an existing PersistentVolumeClaim for the results;
	// "" creates "<name>-results" (ReadWriteMany, ResultsSize, StorageClass).
	ResultsClaim string
	ResultsSize  string
	StorageClass string
	// CPU and Memory are each generator's requests and limits (equal, so
	// the pods get Guaranteed QoS and are not throttled unpredictably);
	// "" leaves them unset.
	CPU, Memory string
	// EnvFromSecrets are Secrets whose keys become environment variables
	// (the plan's ${env.NAME} references).
	EnvFromSecrets []string
	// Linger is how long the merge pod stays up after merging so that
	// `kubectl cp` can fetch the merged run.
	Linger time.Duration
	// Locust runs a locustfile in Locust's own distributed mode instead
	// of N segments: a master pod (the Merge Job) runs `plateau run
	// locustfile.py --locust-master *:5557 --locust-workers N`, with the
	// monitors, and writes the run where the merge would; N worker pods
	// (the Job) run `locust --worker` against the master's Service.
	// ScriptEnv (NAME=value) is the locustfile's environment in the
	// workers, which run its code too (the master gets it as -e in Args).
	Locust    bool
	ScriptEnv []string
	// LocustFile is the locustfile's path beside the plan (a plan whose
	// workload has engine: locust); "" is PlanName itself.
	LocustFile string
}

// LocustPort is the port of Locust's master for its workers (Locust's
// default), on the master pod and its Service.
const LocustPort = 5557

// Manifests are the objects to apply, in apply order.
type Manifests struct {
	ConfigMaps []*corev1.ConfigMap
	Claim      *corev1.PersistentVolumeClaim // nil when Options.ResultsClaim is set
	Job        *batchv1.Job
	Merge      *batchv1.Job
	// Service is Locust's master's, for its workers (Options.Locust).
	Service *corev1.Service
	// RunDir is the results directory of this run on the volume.
	RunDir string
}

var dns1123 = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Build checks the options and builds the manifests.
func Build(o Options) (*Manifests, error) {
	var errs []error
	if len(o.Name) > 40 || !dns1123.MatchString(o.Name) {
		errs = append(errs, fmt.Errorf("name %q: want lowercase letters, digits and '-', at most 40 characters", o.Name))
	}
	if o.Namespace != "" && (len(o.Namespace) > 63 || !dns1123.MatchString(o.Namespace)) {
		errs = append(errs, fmt.Errorf("namespace %q is not a valid namespace name", o.Namespace))
	}
	if o.Image == "" {
		errs = append(errs, errors.New("no image"))
	}
	if o.Generators < 1 {
		errs = append(errs, fmt.Errorf("generators %d: want at least 1", o.Generators))
	}
	if o.StartAt.IsZero() {
		errs = append(errs, errors.New("no start instant"))
	}
	if o.Deadline <= 0 {
		errs = append(errs, errors.New("no deadline"))
	}
	res := corev1.ResourceList{}
	for name, v := range map[corev1.ResourceName]string{corev1.ResourceCPU: o.CPU, corev1.ResourceMemory: o.Memory} {
		if v == "" {
			continue
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", name, v, err))
			continue
		}
		res[name] = q
	}
	var size resource.Quantity
	if o.ResultsClaim == "" {
		s := o.ResultsSize
		if s == "" {
			s = "1Gi"
		}
		q, err := resource.ParseQuantity(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("results size %q: %w", s, err))
		}
		size = q
	}
	if o.PlanName == "" {
		o.PlanName = PlanKey
	}
	cms, items, err := configMaps(o)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	m := &Manifests{ConfigMaps: cms}
	m.RunDir = path.Join(ResultsMount, o.Name+"-"+o.StartAt.UTC().Format("20060102-150405"))
	labels := map[string]string{"app.kubernetes.io/name": "plateau", "app.kubernetes.io/instance": o.Name}
	claim := o.ResultsClaim
	if claim == "" {
		claim = o.Name + "-results"
		m.Claim = &corev1.PersistentVolumeClaim{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
			ObjectMeta: meta(o, claim, labels),
			Spec: corev1.PersistentVolumeClaimSpec{
				// Every generator pod, on whatever node, writes its segment
				// and the merge pod reads them all.
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
				Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: size}},
			},
		}
		if o.StorageClass != "" {
			sc := o.StorageClass
			m.Claim.Spec.StorageClassName = &sc
		}
	}
	var sources []corev1.VolumeProjection
	for i, cm := range cms {
		sources = append(sources, corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, Items: items[i]}})
	}
	volumes := []corev1.Volume{
		{Name: "plan", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}},
		{Name: "results", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}},
	}
	mounts := []corev1.VolumeMount{{Name: "plan", MountPath: PlanMount, ReadOnly: true}, {Name: "results", MountPath: ResultsMount}}
	var envFrom []corev1.EnvFromSource
	for _, s := range o.EnvFromSecrets {
		envFrom = append(envFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s}}})
	}
	env := []corev1.EnvVar{
		{Name: "PLATEAU_START_AT", Value: o.StartAt.UTC().Format(time.RFC3339Nano)},
		{Name: "PLATEAU_SEGMENTS", Value: strconv.Itoa(o.Generators)},
		{Name: "PLATEAU_RUN_DIR", Value: m.RunDir},
	}
	genScript, genMounts, genVolumes := generatorScript, mounts, volumes
	planDir := PlanMount
	if o.Writable {
		planDir = WorkMount
		genScript = copyScript + generatorScript
		genMounts = append(slices.Clone(mounts), corev1.VolumeMount{Name: "work", MountPath: WorkMount})
		genVolumes = append(slices.Clone(volumes), corev1.Volume{Name: "work", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		env = append(env, corev1.EnvVar{Name: "PLATEAU_PLAN_DIR", Value: PlanMount}, corev1.EnvVar{Name: "PLATEAU_WORK_DIR", Value: WorkMount})
	}
	args := []string{"plateau-generator", path.Join(planDir, o.PlanName)}
	args = append(args, o.Args...)
	for _, s := range o.Set {
		args = append(args, "--set", s)
	}
	if o.NoSamples {
		args = append(args, "--no-samples")
	}
	n := int32(o.Generators)
	deadline := int64(o.Deadline / time.Second)
	podLabels := map[string]string{"app.kubernetes.io/component": "generator"}
	for k, v := range labels {
		podLabels[k] = v
	}
	m.Job = &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(o, o.Name, podLabels),
		Spec: batchv1.JobSpec{
			CompletionMode:        ptr(batchv1.IndexedCompletion),
			Completions:           &n,
			Parallelism:           &n,
			BackoffLimitPerIndex:  ptr(int32(0)),
			MaxFailedIndexes:      ptr(int32(0)),
			PodReplacementPolicy:  ptr(batchv1.Failed),
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:             corev1.RestartPolicyNever,
					SecurityContext:           podSecurity(),
					TopologySpreadConstraints: spreadOverNodes(o.Name),
					Containers: []corev1.Container{{
						Name: "generator", Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{"/bin/sh", "-c", genScript}, Args: args,
						Env: env, EnvFrom: envFrom, VolumeMounts: genMounts,
						Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
					}},
					Volumes: genVolumes,
				},
			},
		},
	}
	linger := int64(o.Linger / time.Second)
	if linger <= 0 {
		linger = 3600
	}
	if o.Locust {
		locustPods(o, m, env, envFrom, genMounts, genVolumes, args, res, labels, deadline, linger)
		return m, nil
	}
	mergeLabels := map[string]string{"app.kubernetes.io/component": "merge"}
	for k, v := range labels {
		mergeLabels[k] = v
	}
	m.Merge = &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(o, o.Name+"-merge", mergeLabels),
		Spec: batchv1.JobSpec{
			Completions:  ptr(int32(1)),
			Parallelism:  ptr(int32(1)),
			BackoffLimit: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: mergeLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: podSecurity(),
					Containers: []corev1.Container{{
						Name: "merge", Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{"/bin/sh", "-c", mergeScript},
						Env: append(append([]corev1.EnvVar{}, env...),
							corev1.EnvVar{Name: "PLATEAU_WAIT", Value: (time.Duration(deadline) * time.Second).String()},
							corev1.EnvVar{Name: "PLATEAU_LINGER", Value: strconv.FormatInt(linger, 10)}),
						VolumeMounts: []corev1.VolumeMount{{Name: "results", MountPath: ResultsMount}},
						// Ready once the merged run is on the volume: `kubectl
						// wait --for=condition=Ready` then `kubectl cp`.
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
							Command: []string{"/bin/sh", "-c", `test -f "$PLATEAU_RUN_DIR/merged.exit"`}}},
							PeriodSeconds: 5},
					}},
					Volumes: volumes[1:],
				},
			},
		},
	}
	return m, nil
}

// generatorScript runs one segment. Exit status 1 means this segment's share
// broke a requirement; requirements are judged once, on the merged run, so
// the pod must not fail for it (a failed index fails the whole Job).
const generatorScript = `i="${JOB_COMPLETION_INDEX:?not run by an Indexed Job}"
plateau run "$@" --segment "$i/$PLATEAU_SEGMENTS" --start-at "$PLATEAU_START_AT" -o "$PLATEAU_RUN_DIR/segment-$i" -q
rc=$?
if [ "$rc" -eq 1 ]; then exit 0; fi
exit "$rc"
`

// copyScript copies the ConfigMaps' files to the writable directory
// (Options.Writable), following the projected volume's links.
const copyScript = `cp -RL "$PLATEAU_PLAN_DIR"/. "$PLATEAU_WORK_DIR"/ || exit 2
`

// mergeScript waits for every segment (or the deadline), merges and writes
// the reports, then stays up for collection.
const mergeScript = `set --
i=0
while [ "$i" -lt "$PLATEAU_SEGMENTS" ]; do set -- "$@" "$PLATEAU_RUN_DIR/segment-$i"; i=$((i+1)); done
plateau merge --segments "$PLATEAU_SEGMENTS" --wait "$PLATEAU_WAIT" -o "$PLATEAU_RUN_DIR/merged" "$@"
rc=$?
echo "$rc" > "$PLATEAU_RUN_DIR/merged.exit"
echo "plateau: merged run in $PLATEAU_RUN_DIR/merged (exit $rc); staying up $PLATEAU_LINGER s for kubectl cp"
sleep "$PLATEAU_LINGER"
exit "$rc"
`

// locustPods makes the Job N Locust worker pods and the Merge Job the
// master pod, with the master's Service: Locust's own distributed mode,
// whose master computes the whole-run statistics from its workers'
// reports (so nothing is merged afterwards).
func locustPods(o Options, m *Manifests, env []corev1.EnvVar, envFrom []corev1.EnvFromSource, mounts []corev1.VolumeMount,
	volumes []corev1.Volume, args []string, res corev1.ResourceList, labels map[string]string, deadline, linger int64) {
	with := func(component string) map[string]string {
		l := map[string]string{"app.kubernetes.io/component": component}
		for k, v := range labels {
			l[k] = v
		}
		return l
	}
	master := o.Name + "-master"
	masterLabels, workerLabels := with("locust-master"), with("locust-worker")
	m.Service = &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(o, master, masterLabels),
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app.kubernetes.io/instance": o.Name, "app.kubernetes.io/component": "locust-master"},
			Ports:    []corev1.ServicePort{{Name: "locust", Port: LocustPort, TargetPort: intstr.FromInt32(LocustPort), Protocol: corev1.ProtocolTCP}},
		},
	}
	workerEnv := []corev1.EnvVar{
		{Name: "PLATEAU_LOCUST_MASTER", Value: master},
		{Name: "PLATEAU_LOCUST_PORT", Value: strconv.Itoa(LocustPort)},
		{Name: "PLATEAU_LOCUSTFILE", Value: path.Join(WorkMount, cmp.Or(o.LocustFile, o.PlanName))},
	}
	for _, kv := range o.ScriptEnv {
		k, v, _ := strings.Cut(kv, "=")
		workerEnv = append(workerEnv, corev1.EnvVar{Name: k, Value: v})
	}
	for _, e := range env {
		if e.Name == "PLATEAU_PLAN_DIR" || e.Name == "PLATEAU_WORK_DIR" {
			workerEnv = append(workerEnv, e)
		}
	}
	// The workers need the locustfile and the files beside it, not the
	// results volume.
	var wm []corev1.VolumeMount
	var wv []corev1.Volume
	for _, v := range volumes {
		if v.Name != "results" {
			wv = append(wv, v)
		}
	}
	for _, mt := range mounts {
		if mt.Name != "results" {
			wm = append(wm, mt)
		}
	}
	n := int32(o.Generators)
	m.Job = &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(o, o.Name, workerLabels),
		Spec: batchv1.JobSpec{
			Completions:           &n,
			Parallelism:           &n,
			BackoffLimit:          ptr(int32(0)),
			ActiveDeadlineSeconds: &deadline,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: workerLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:             corev1.RestartPolicyNever,
					SecurityContext:           podSecurity(),
					TopologySpreadConstraints: spreadOverNodes(o.Name),
					Containers: []corev1.Container{{
						Name: "locust-worker", Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{"/bin/sh", "-c", copyScript + locustWorkerScript},
						Env:     workerEnv, EnvFrom: envFrom, VolumeMounts: wm,
						Resources: corev1.ResourceRequirements{Requests: res, Limits: res},
					}},
					Volumes: wv,
				},
			},
		},
	}
	masterArgs := append([]string{"plateau-locust-master"}, args[1:]...)
	m.Merge = &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: meta(o, master, masterLabels),
		Spec: batchv1.JobSpec{
			Completions:  ptr(int32(1)),
			Parallelism:  ptr(int32(1)),
			BackoffLimit: ptr(int32(0)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: masterLabels},
				Spec: corev1.PodSpec{
					RestartPolicy:   corev1.RestartPolicyNever,
					SecurityContext: podSecurity(),
					Containers: []corev1.Container{{
						Name: "locust-master", Image: o.Image, ImagePullPolicy: corev1.PullIfNotPresent,
						Command: []string{"/bin/sh", "-c", copyScript + locustMasterScript}, Args: masterArgs,
						Ports: []corev1.ContainerPort{{Name: "locust", ContainerPort: LocustPort, Protocol: corev1.ProtocolTCP}},
						Env: append(append([]corev1.EnvVar{}, env...),
							corev1.EnvVar{Name: "PLATEAU_LOCUST_BIND", Value: "*:" + strconv.Itoa(LocustPort)},
							corev1.EnvVar{Name: "PLATEAU_WAIT", Value: (time.Duration(deadline) * time.Second).String()},
							corev1.EnvVar{Name: "PLATEAU_LINGER", Value: strconv.FormatInt(linger, 10)}),
						EnvFrom:      envFrom,
						VolumeMounts: mounts,
						Resources:    corev1.ResourceRequirements{Requests: res, Limits: res},
						ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{Exec: &corev1.ExecAction{
							Command: []string{"/bin/sh", "-c", `test -f "$PLATEAU_RUN_DIR/merged.exit"`}}},
							PeriodSeconds: 5},
					}},
					Volumes: volumes,
				},
			},
		},
	}
}

// locustWorkerScript runs one Locust worker against the master's Service,
// with the Locust plateau would run ($LOCUST, PATH, its virtualenv).
const locustWorkerScript = `bin="${LOCUST:-}"
[ -n "$bin" ] || bin="$(command -v locust)" || bin=/opt/plateau-locust/bin/locust
cd "$PLATEAU_WORK_DIR" || exit 2
exec "$bin" -f "$PLATEAU_LOCUSTFILE" --worker --master-host "$PLATEAU_LOCUST_MASTER" --master-port "$PLATEAU_LOCUST_PORT"
`

// locustMasterScript runs Locust's master under plateau run — its monitors
// beside it — writing the run where a merge would (merged), then stays up
// for collection.
const locustMasterScript = `plateau run "$@" --locust-master "$PLATEAU_LOCUST_BIND" --locust-workers "$PLATEAU_SEGMENTS" --locust-wait "$PLATEAU_WAIT" -o "$PLATEAU_RUN_DIR/merged" -q
rc=$?
echo "$rc" > "$PLATEAU_RUN_DIR/merged.exit"
echo "plateau: Locust's run in $PLATEAU_RUN_DIR/merged (exit $rc); staying up $PLATEAU_LINGER s for kubectl cp"
sleep "$PLATEAU_LINGER"
exit "$rc"
`

func meta(o Options, name string, labels map[string]string) metav1.ObjectMeta {
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v
	}
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: l}
}

func ptr[T any](v T) *T { return &v }

// imageUID is the unprivileged user of deploy/Dockerfile's image.
const imageUID = 10001

// podSecurity runs the pods as the image's user, with the results volume
// group-writable for it (fsGroup), as most volume plugins honour.
func podSecurity() *corev1.PodSecurityContext {
	return &corev1.PodSecurityContext{RunAsUser: ptr(int64(imageUID)), RunAsGroup: ptr(int64(imageUID)),
		FSGroup: ptr(int64(imageUID)), RunAsNonRoot: ptr(true)}
}

var keyUnsafe = regexp.MustCompile(`[^-._a-zA-Z0-9]`)

// configMaps packs the plan and data files into as few ConfigMaps as fit the
// API server's size limit, and returns for each the items mapping its keys
// to paths under PlanMount. A single file over the limit cannot go into a
// ConfigMap at all.
func configMaps(o Options) ([]*corev1.ConfigMap, [][]corev1.KeyToPath, error) {
	files := append([]File{{Path: o.PlanName, Data: o.Plan}}, o.Files...)
	used := map[string]bool{}
	var cms []*corev1.ConfigMap
	var items [][]corev1.KeyToPath
	sizes := []int{}
	for _, f := range files {
		p := path.Clean(f.Path)
		if path.IsAbs(p) || p == "." || strings.HasPrefix(p, "../") || p == ".." {
			return nil, nil, fmt.Errorf("data file %q: want a path below the plan's directory", f.Path)
		}
		if len(f.Data) > configMapLimit {
			return nil, nil, fmt.Errorf("data file %s is %d bytes; a ConfigMap holds at most about 1 MiB: build it into the image or put it on a volume",
				f.Path, len(f.Data))
		}
		key := keyUnsafe.ReplaceAllString(strings.ReplaceAll(p, "/", "__"), "_")
		for k, i := key, 2; used[key]; i++ {
			key = fmt.Sprintf("%s.%d", k, i)
		}
		used[key] = true
		at := -1
		for i, s := range sizes {
			if s+len(f.Data) <= configMapLimit {
				at = i
				break
			}
		}
		if at < 0 {
			name := o.Name + "-plan"
			if len(cms) > 0 {
				name = fmt.Sprintf("%s-plan-%d", o.Name, len(cms))
			}
			cms = append(cms, &corev1.ConfigMap{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: meta(o, name, map[string]string{"app.kubernetes.io/name": "plateau", "app.kubernetes.io/instance": o.Name})})
			items = append(items, nil)
			sizes = append(sizes, 0)
			at = len(cms) - 1
		}
		cm := cms[at]
		if utf8.Valid(f.Data) {
			if cm.Data == nil {
				cm.Data = map[string]string{}
			}
			cm.Data[key] = string(f.Data)
		} else {
			if cm.BinaryData == nil {
				cm.BinaryData = map[string][]byte{}
			}
			cm.BinaryData[key] = f.Data
		}
		sizes[at] += len(f.Data)
		items[at] = append(items[at], corev1.KeyToPath{Key: key, Path: p})
	}
	for _, it := range items {
		sort.Slice(it, func(i, j int) bool { return it[i].Key < it[j].Key })
	}
	return cms, items, nil
}

// YAML renders the manifests as one multi-document YAML stream in apply
// order.
func (m *Manifests) YAML() ([]byte, error) {
	var objs []any
	for _, cm := range m.ConfigMaps {
		objs = append(objs, cm)
	}
	if m.Claim != nil {
		objs = append(objs, m.Claim)
	}
	if m.Service != nil {
		objs = append(objs, m.Service)
	}
	objs = append(objs, m.Job, m.Merge)
	var buf bytes.Buffer
	for i, obj := range objs {
		b, err := yaml.Marshal(obj)
		if err != nil {
			return nil, fmt.Errorf("rendering manifests: %w", err)
		}
		if i > 0 {
			buf.WriteString("---\n")
		}
		buf.Write(dropEmpty(b))
	}
	return buf.Bytes(), nil
}

// dropEmpty removes the "creationTimestamp: null" and top-level "status: {}"
// lines that zero values render, which kubectl ignores but which look like
// mistakes in a manifest meant to be read.
func dropEmpty(b []byte) []byte {
	var out bytes.Buffer
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if bytes.Equal(bytes.TrimSpace(l), []byte("creationTimestamp: null")) || string(l) == "status: {}\n" {
			continue
		}
		out.Write(l)
	}
	return out.Bytes()
}

// spreadOverNodes spreads a Job's pods over nodes: two generators on one
// node share its CPU and network, which is what N generators are meant to
// avoid.
func spreadOverNodes(job string) []corev1.TopologySpreadConstraint {
	return []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"batch.kubernetes.io/job-name": job}},
	}}
}
