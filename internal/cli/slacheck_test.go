package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/analysis"
)

// twoWorkloads is a plan with workloads read and write, so labels print as
// "read: GET /x".
func twoWorkloads(t *testing.T, url string, slas ...string) string {
	return writePlan(t, fmt.Sprintf(`name: selectors
target: %s
workloads:
  read:
    scenario:
      - request: {url: /x}
    load: {users: 1, iterations: 20}
  write:
    scenario:
      - request: {method: POST, url: /y}
    load: {users: 1, iterations: 5}
sla:
%s`, url, "  - "+strings.Join(slas, "\n  - ")+"\n"))
}

// A selector naming a label, workload or phase the plan does not have is a
// plan error before the first request, naming the line and what there is.
func TestSLASelectorsCheckedBeforeTheRun(t *testing.T) {
	srv, seen := testServer(t)
	cases := []struct{ sla, want string }{
		{`throughput{label="read: GET /x"} > 0/s`, `plan.yaml:13:5: sla: quote an expression that contains ": "`},
		{`p95(response_time{label="GET /z"}) < 1s`, `plan.yaml:13:5: sla: no label named "GET /z" (labels: "read: GET /x", "write: POST /y")`},
		{`error_rate{workload="raed"} < 1%`, `no workload named "raed" (workloads: "read", "write")`},
		{`error_rate < 1% during "step 9"`, `no phase named "step 9" (phases: "read", "write")`},
		{`{expr: "error_rate < 1% during \"read\"", abort_on_fail: true}`, "abort_on_fail judges the run so far"},
	}
	for _, c := range cases {
		code, stdout, stderr := runCLI(t, "run", twoWorkloads(t, srv.URL, c.sla), "-o", filepath.Join(t.TempDir(), "run"), "-q")
		if code != ExitError || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and %q\n%s", c.sla, code, stderr, ExitError, c.want, stdout)
		}
	}
	if n := seen.Load(); n != 0 {
		t.Errorf("%d requests sent before the typo was reported", n)
	}
}

// A label as the report prints it, a workload selector and any percentile
// select and judge what they name.
func TestSLASelectorsJudge(t *testing.T) {
	srv, _ := testServer(t)
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI(t, "run", twoWorkloads(t, srv.URL,
		`'throughput{label="read: GET /x"} > 0/s'`,
		`error_rate{workload="write"} < 1%`,
		`p(99.9)(response_time{workload="read", label="GET /x"}) < 10s`,
		`p99.9(response_time) < 10s`), "-o", out, "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readSummary(t, out)
	want := map[string]bool{}
	for _, r := range s.SLA {
		if r.NoData || r.Error != "" || !r.Passed {
			t.Errorf("%s: %+v", r.Expr, r)
		}
		want[r.Expr] = true
	}
	if len(want) != 4 {
		t.Errorf("judged %d requirements", len(want))
	}
}

// abort_on_fail with a grace period: the run stops once the requirement is
// broken after the grace, writes its report and exits 1.
func TestAbortOnFail(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%2 == 0 {
			w.WriteHeader(500)
			return
		}
		w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	p := writePlan(t, fmt.Sprintf(`name: abort
target: %s
workloads:
  w:
    scenario:
      - request: {url: /}
      - think: 20ms
    load: {users: 2, duration: 60s}
sla:
  - {expr: "error_rate < 10%%", abort_on_fail: true, grace: 2s}
`, srv.URL))
	out := filepath.Join(t.TempDir(), "run")
	start := time.Now()
	code, stdout, stderr := runCLI(t, "run", p, "-o", out, "-q")
	el := time.Since(start)
	if code != ExitSLAFailed {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitSLAFailed, stdout, stderr)
	}
	if el < 2*time.Second || el > 8*time.Second {
		t.Errorf("run took %v: want it stopped soon after the 2 s grace, not before", el)
	}
	s := readSummary(t, out)
	if s.Verdict != analysis.VerdictFailed || len(s.VerdictReasons) == 0 || !strings.Contains(s.VerdictReasons[0], "abort_on_fail: error_rate < 10% broken after") {
		t.Errorf("verdict %q, reasons %q", s.Verdict, s.VerdictReasons)
	}
	if !strings.Contains(stderr, "abort_on_fail") || !strings.Contains(stdout, "test status: FAILED") {
		t.Errorf("console:\n%s\n%s", stdout, stderr)
	}
}
