package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plateau check reports plan problems and SLA labels the plan never
// records, and sends nothing (the target is a closed port).
func TestCheckCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := `name: c
target: http://127.0.0.1:9
sla:
  - p95(response_time{label="login"}) < 1s
  - error_rate{label="checkout"} < 1%
  - error_rate < 1%
workloads:
  w:
    scenario:
      - transaction:
          name: checkout
          steps:
            - request: {name: login, url: /login}
            - if: {cond: '${status} == 200', steps: [{request: {url: "/x/${uuid()}"}}]}
    load: {users: 1, iterations: 1}
`
	pf := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(pf, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, "check", pf)
	if code != 0 || !strings.Contains(out, "is sound") {
		t.Fatalf("good plan: exit %d, %q %q", code, out, errOut)
	}
	bad := strings.Replace(good, `label="login"`, `label="logn"`, 1)
	bad = strings.Replace(bad, `'${status} == 200'`, `'${status} = 200'`, 1)
	bf := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bf, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "check", bf)
	if code != 2 || !strings.Contains(errOut, `bad.yaml:14:`) || !strings.Contains(errOut, "compare with ==") {
		t.Errorf("bad condition: exit %d, %q", code, errOut)
	}
	bad = strings.Replace(good, `label="login"`, `label="logn"`, 1)
	if err := os.WriteFile(bf, []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runCLI(t, "check", bf)
	if code != 2 || !strings.Contains(errOut, `bad.yaml:4:5: sla: no label named "logn"`) {
		t.Errorf("bad SLA label: exit %d, %q", code, errOut)
	}
}

// A checks requirement may be judged during one phase; the phase must be
// one the plan has.
func TestCheckChecksDuringPhase(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `name: c
target: http://127.0.0.1:9
sla:
  - checks{name="ok"} > 99% during "step 2"
workloads:
  w:
    scenario:
      - request: {url: /x, check: [{name: ok, status: 200}]}
    load: {steps: [{users: 1, duration: 1s}, {users: 2, duration: 1s}]}
`
	pf := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(pf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "check", pf); code != 0 {
		t.Fatalf("checks during a phase: exit %d, %q %q", code, out, errOut)
	}
	if err := os.WriteFile(pf, []byte(strings.Replace(src, `"step 2"`, `"step 3"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "check", pf); code != 2 || !strings.Contains(errOut, `p.yaml:4:5: sla: `) || !strings.Contains(errOut, "step 3") {
		t.Errorf("checks during an unknown phase: exit %d, %q", code, errOut)
	}
}

// A trend's label is one a requirement may select, known before the run.
func TestCheckTrendLabel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `name: c
target: http://127.0.0.1:9
sla:
  - p95(response_time{label="server time"}) < 200ms
workloads:
  w:
    scenario:
      - request: {url: /x, extract: {took: {json: $.took_ms}}}
      - trend: {name: server time, value: "${took}"}
    load: {users: 1, iterations: 1}
`
	pf := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(pf, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runCLI(t, "check", pf); code != 0 {
		t.Fatalf("an SLA on a trend: exit %d, %q %q", code, out, errOut)
	}
	if err := os.WriteFile(pf, []byte(strings.Replace(src, `label="server time"`, `label="server tme"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCLI(t, "check", pf); code != 2 || !strings.Contains(errOut, `no label named "server tme"`) {
		t.Errorf("an SLA on a misspelled trend: exit %d, %q", code, errOut)
	}
}
