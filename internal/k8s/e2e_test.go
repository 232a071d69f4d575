//go:build linux

package k8s

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// Versions of the control plane the test starts; the cache directory name
// matches scripts/build-k8s-test-bins.sh's defaults.
const (
	k8sVersion  = "1.36.3"
	etcdVersion = "3.7.3"
	kwokVersion = "0.8.0"
)

// buildBudget is the longest a cold build of the control plane is expected
// to take: 16–20 minutes on 2 dedicated cores, 31 minutes measured on 2
// cores shared with other builds (docs/ci.md).
const buildBudget = 45 * time.Minute

// controlPlaneBins finds the binaries: $PLATEAU_K8S_BINS, or the build
// script's cache directory. With PLATEAU_K8S_TEST=1 a missing cache is
// built, if go test's deadline leaves buildBudget for it (run go test with
// -timeout 60m, or build first with scripts/build-k8s-test-bins.sh as
// .ci/run does); otherwise the test is skipped.
func controlPlaneBins(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PLATEAU_K8S_BINS")
	if dir == "" {
		cache := os.Getenv("PLATEAU_K8S_CACHE")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache", "plateau-k8s")
		}
		dir = filepath.Join(cache, fmt.Sprintf("k8s-%s-etcd-%s-kwok-%s", k8sVersion, etcdVersion, kwokVersion))
	}
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err == nil {
		return dir
	}
	if os.Getenv("PLATEAU_K8S_TEST") != "1" {
		t.Skipf("no Kubernetes test binaries in %s: run scripts/build-k8s-test-bins.sh (≈20 min cold) or set PLATEAU_K8S_TEST=1", dir)
	}
	if d, ok := t.Deadline(); ok && time.Until(d) < buildBudget {
		// Fail now with the fix, rather than be killed by go test's
		// timeout half way through a build, taking the package down.
		t.Fatalf("no control plane binaries in %s, and building them cold takes up to %v but go test's deadline is %v away: run scripts/build-k8s-test-bins.sh first (.ci/run does), or give go test -timeout 60m",
			dir, buildBudget, time.Until(d).Round(time.Minute))
	}
	t.Logf("building the control plane into %s (scripts/build-k8s-test-bins.sh)", dir)
	cmd := exec.Command("bash", "../../scripts/build-k8s-test-bins.sh")
	cmd.Env = append(os.Environ(), "PLATEAU_K8S_CACHE="+filepath.Dir(dir))
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("building the control plane: %v\n%s", err, tail(b, 3000))
	}
	return dir
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startProc starts a control-plane process with its log in dir; Cleanup
// kills it (by its own pid) and waits.
func startProc(t *testing.T, dir, name, bin string, args ...string) {
	t.Helper()
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("--- %s log (tail) ---\n%s", name, tail(b, 4000))
		}
	})
}

// apiClient talks to the test API server with the static admin token.
type apiClient struct {
	base  string
	token string
	http  *http.Client
}

func (c *apiClient) do(method, path string, body any, out any) (int, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if resp.StatusCode >= 300 {
		return resp.StatusCode, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, tail(b, 600))
	}
	if out != nil {
		return resp.StatusCode, json.Unmarshal(b, out)
	}
	return resp.StatusCode, nil
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ok, err := cond()
		if ok {
			return
		}
		last = err
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s (last error: %v)", timeout, what, last)
}

// writeKey writes an RSA key pair for service-account tokens.
func writeKey(t *testing.T, dir string) (string, string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	priv := filepath.Join(dir, "sa.key")
	pub := filepath.Join(dir, "sa.pub")
	pb, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err := os.WriteFile(priv, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pb}), 0o644); err != nil {
		t.Fatal(err)
	}
	return priv, pub
}

// The manifests run on a real control plane: kube-apiserver and
// kube-controller-manager (built from the Go module proxy) on etcd, with
// kwok playing the kubelet of one node (no containers run: kwok moves pods
// through Running to Succeeded). The API server accepts every rendered
// object as `kubectl apply` would send it, the Job controller creates one
// pod per index with JOB_COMPLETION_INDEX and host name <job>-<i>, and every
// index completes, as does the merge Job.
func TestIndexedJobOnControlPlane(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Kubernetes control plane")
	}
	bins := controlPlaneBins(t)
	bin := func(n string) string { return filepath.Join(bins, "bin", n) }
	began := time.Now()
	dir := t.TempDir()
	etcdPort, peerPort, apiPort := freePort(t), freePort(t), freePort(t)
	startProc(t, dir, "etcd", bin("etcd"), "--data-dir", filepath.Join(dir, "etcd"), "--name", "e2e",
		"--listen-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--advertise-client-urls", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-advertise-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", peerPort),
		"--initial-cluster", fmt.Sprintf("e2e=http://127.0.0.1:%d", peerPort), "--log-level", "warn")

	token := "plateau-e2e-token"
	if err := os.WriteFile(filepath.Join(dir, "tokens.csv"), []byte(token+",admin,admin,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	priv, pub := writeKey(t, dir)
	startProc(t, dir, "kube-apiserver", bin("kube-apiserver"),
		"--etcd-servers", fmt.Sprintf("http://127.0.0.1:%d", etcdPort),
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(apiPort),
		"--cert-dir", filepath.Join(dir, "certs"), "--token-auth-file", filepath.Join(dir, "tokens.csv"),
		"--authorization-mode", "AlwaysAllow", "--service-cluster-ip-range", "10.96.0.0/24",
		"--service-account-key-file", pub, "--service-account-signing-key-file", priv,
		"--service-account-issuer", "https://kubernetes.default.svc", "--enable-priority-and-fairness=false")

	c := &apiClient{base: fmt.Sprintf("https://127.0.0.1:%d", apiPort), token: token,
		http: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}}
	waitFor(t, "the API server", 90*time.Second, func() (bool, error) {
		_, err := c.do("GET", "/readyz", nil, nil)
		return err == nil, err
	})
	ready := time.Since(began)

	kubeconfig := filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "%s", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: %s}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin}}]
current-context: e2e
`, c.base, token)
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	startProc(t, dir, "kube-controller-manager", bin("kube-controller-manager"), "--kubeconfig", kubeconfig,
		"--controllers", "job-controller,serviceaccount-controller,serviceaccount-token-controller,garbage-collector-controller",
		"--service-account-private-key-file", priv, "--use-service-account-credentials=false",
		"--leader-elect=false", "--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(freePort(t)))
	stages, _ := filepath.Glob(filepath.Join(bins, "stages", "*.yaml"))
	kwokArgs := []string{"--kubeconfig", kubeconfig, "--manage-all-nodes=true", "--server-address", "127.0.0.1:" + fmt.Sprint(freePort(t))}
	for _, s := range stages {
		kwokArgs = append(kwokArgs, "--config", s)
	}
	startProc(t, dir, "kwok", bin("kwok"), kwokArgs...)

	// One fake node; the Job's pods are bound to it (there is no scheduler).
	node := &corev1.Node{ObjectMeta: objMeta("kwok-node-0", ""), Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: mustQty("32"), corev1.ResourceMemory: mustQty("64Gi"), corev1.ResourcePods: mustQty("110")},
		Capacity:    corev1.ResourceList{corev1.ResourceCPU: mustQty("32"), corev1.ResourceMemory: mustQty("64Gi"), corev1.ResourcePods: mustQty("110")}}}
	node.Annotations = map[string]string{"kwok.x-k8s.io/node": "fake"}
	node.APIVersion, node.Kind = "v1", "Node"
	if _, err := c.do("POST", "/api/v1/nodes", node, nil); err != nil {
		t.Fatal(err)
	}
	const ns = "plateau-e2e"
	if _, err := c.do("POST", "/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]string{"name": ns}}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the namespace's default service account", 60*time.Second, func() (bool, error) {
		_, err := c.do("GET", "/api/v1/namespaces/"+ns+"/serviceaccounts/default", nil, nil)
		return err == nil, err
	})

	const n = 4
	m, err := Build(Options{Name: "plateau-e2e", Namespace: ns, Image: "plateau:test", Generators: n,
		Plan: []byte("name: e2e\n"), Files: []File{{Path: "rows.csv", Data: []byte("id\n1\n2\n")}},
		StartAt: time.Now().Add(time.Minute), Deadline: 10 * time.Minute, CPU: "1", Memory: "256Mi"})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range []*batchv1.Job{m.Job, m.Merge} {
		j.Spec.Template.Spec.NodeName = "kwok-node-0"
	}
	y, err := m.YAML()
	if err != nil {
		t.Fatal(err)
	}
	applied := time.Now()
	for _, doc := range bytes.Split(y, []byte("\n---\n")) {
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		var tm struct{ Kind string }
		if err := json.Unmarshal(j, &tm); err != nil {
			t.Fatal(err)
		}
		path := map[string]string{"ConfigMap": "/api/v1/namespaces/" + ns + "/configmaps",
			"PersistentVolumeClaim": "/api/v1/namespaces/" + ns + "/persistentvolumeclaims",
			"Job":                   "/apis/batch/v1/namespaces/" + ns + "/jobs"}[tm.Kind]
		if _, err := c.do("POST", path, json.RawMessage(j), nil); err != nil {
			t.Fatalf("the API server refused the %s: %v", tm.Kind, err)
		}
	}
	var job batchv1.Job
	waitFor(t, "every index of the Indexed Job to complete", 90*time.Second, func() (bool, error) {
		if _, err := c.do("GET", "/apis/batch/v1/namespaces/"+ns+"/jobs/plateau-e2e", nil, &job); err != nil {
			return false, err
		}
		for _, cond := range job.Status.Conditions {
			if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
				t.Fatalf("job failed: %s", cond.Message)
			}
		}
		return job.Status.CompletedIndexes == fmt.Sprintf("0-%d", n-1) && job.Status.Succeeded == n,
			fmt.Errorf("completed indexes %q, succeeded %d", job.Status.CompletedIndexes, job.Status.Succeeded)
	})
	completed := time.Since(applied)
	if job.Spec.BackoffLimitPerIndex == nil || *job.Spec.BackoffLimitPerIndex != 0 || *job.Spec.MaxFailedIndexes != 0 {
		t.Errorf("stored job spec lost the one-try-per-index settings: %+v", job.Spec)
	}
	var pods corev1.PodList
	if _, err := c.do("GET", "/api/v1/namespaces/"+ns+"/pods?labelSelector=batch.kubernetes.io/job-name%3Dplateau-e2e", nil, &pods); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, p := range pods.Items {
		idx := p.Labels["batch.kubernetes.io/job-completion-index"]
		env := map[string]string{}
		for _, e := range p.Spec.Containers[0].Env {
			env[e.Name] = e.Value
			if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
				env[e.Name] = e.ValueFrom.FieldRef.FieldPath
			}
		}
		if !strings.Contains(env["JOB_COMPLETION_INDEX"], "job-completion-index") {
			t.Errorf("pod %s: JOB_COMPLETION_INDEX not injected (env %v)", p.Name, env)
		}
		if p.Spec.Hostname != "plateau-e2e-"+idx {
			t.Errorf("pod %s: host name %q, want plateau-e2e-%s", p.Name, p.Spec.Hostname, idx)
		}
		if p.Status.Phase != corev1.PodSucceeded {
			t.Errorf("pod %s (index %s): phase %s", p.Name, idx, p.Status.Phase)
		}
		seen[idx] = true
	}
	for i := 0; i < n; i++ {
		if !seen[fmt.Sprint(i)] {
			t.Errorf("no pod for index %d (pods: %d)", i, len(pods.Items))
		}
	}
	if len(pods.Items) != n {
		t.Errorf("%d pods, want %d (one try per index)", len(pods.Items), n)
	}
	var mj batchv1.Job
	waitFor(t, "the merge Job to complete", 60*time.Second, func() (bool, error) {
		if _, err := c.do("GET", "/apis/batch/v1/namespaces/"+ns+"/jobs/plateau-e2e-merge", nil, &mj); err != nil {
			return false, err
		}
		return mj.Status.Succeeded == 1, fmt.Errorf("merge succeeded %d", mj.Status.Succeeded)
	})
	t.Logf("control plane ready %.1f s after start; %d indexes completed %.1f s after apply; whole test %.1f s",
		ready.Seconds(), n, completed.Seconds(), time.Since(began).Seconds())
}

func objMeta(name, ns string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }

func mustQty(s string) resource.Quantity { return resource.MustParse(s) }
