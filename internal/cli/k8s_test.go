package cli

import (
	"strings"
	"testing"
)

// `plateau k8s` prints the manifests for a plan with its data file, warns
// about environment variables the pods will need, and refuses without -g.
func TestK8sCommand(t *testing.T) {
	p := openPlan(t, "http://127.0.0.1:1", 10, 2)
	code, stdout, stderr := runCLI(t, "k8s", p, "-g", "3", "--image", "reg.example/plateau:1", "--start-at", "2027-01-15T08:00:00Z", "-n", "perf")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"kind: ConfigMap", "rows.csv: |", "kind: PersistentVolumeClaim", "completionMode: Indexed",
		"completions: 3", "parallelism: 3", "backoffLimitPerIndex: 0", "maxFailedIndexes: 0", "name: plateau-split-merge",
		"namespace: perf", "value: \"2027-01-15T08:00:00Z\""} {
		if !strings.Contains(stdout, want) {
			t.Errorf("manifests lack %q", want)
		}
	}
	if !strings.Contains(stderr, "/results/plateau-split-20270115-080000") {
		t.Errorf("stderr %q does not say where the results go", stderr)
	}
	code, _, stderr = runCLI(t, "k8s", p)
	if code != ExitError || !strings.Contains(stderr, "--generators N is required") {
		t.Errorf("without -g: exit %d, %q", code, stderr)
	}
}
