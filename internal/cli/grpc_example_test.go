package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/plateau-perf/plateau/internal/engine/proto/grpc/grpctest"
)

// The examples/grpc-echo plan against the gRPC test server on loopback
// (with reflection, for the streaming step): summary.json's gRPC labels
// agree with the server's own counters, a status code is an error class
// there, and report and compare take the labels like any other.
func TestGRPCEchoExample(t *testing.T) {
	t.Parallel()
	srv := grpctest.Start(t, grpctest.Options{Reflection: true})
	plan := "../../examples/grpc-echo/plan.yaml"
	dir := t.TempDir()
	var outs []string
	for i := range 2 {
		out := filepath.Join(dir, "run"+string(rune('1'+i)))
		args := []string{"run", plan, "--set", "target=http://" + srv.Addr,
			"--set", "workloads.echo.load={users: 2, iterations: 3}", "-o", out, "-q"}
		if i == 1 {
			// The second run asks for a status the server fails with.
			args = append(args, "--set", "workloads.echo.scenario.0.grpc.message.code=5")
		}
		code, stdout, errOut := runCLI(t, args...)
		if code != 0 && i == 0 && !(code == 1 && onlyTimingBroken(t, out)) {
			t.Fatalf("run: exit %d: %s%s", code, errOut, stdout)
		}
		outs = append(outs, out)
	}
	type label struct {
		Label   string `json:"label"`
		Count   int64  `json:"samples"`
		Errors  int64  `json:"errors"`
		Derived bool   `json:"derived"`
	}
	var sum struct {
		Labels []label `json:"labels"`
		Errors struct {
			ByClass map[string]int64 `json:"by_class"`
		} `json:"errors"`
	}
	read := func(out string) map[string]label {
		b, err := os.ReadFile(filepath.Join(out, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		sum.Labels = nil
		if err := json.Unmarshal(b, &sum); err != nil {
			t.Fatal(err)
		}
		got := map[string]label{}
		for _, l := range sum.Labels {
			got[l.Label] = l
		}
		return got
	}
	got := read(outs[0])
	// 2 users × 3 iterations per run; 5 messages per stream.
	for name, want := range map[string]label{"say": {Count: 6}, "count": {Count: 6},
		"count first message": {Count: 6, Derived: true}, "count message": {Count: 30, Derived: true}} {
		if l := got[name]; l.Count != want.Count || l.Errors != 0 || l.Derived != want.Derived {
			t.Errorf("summary.json %s: %+v, want %d samples, no errors, derived %v", name, l, want.Count, want.Derived)
		}
	}
	got = read(outs[1])
	if l := got["say"]; l.Count != 6 || l.Errors != 6 || sum.Errors.ByClass["grpc_not_found"] != 6 {
		t.Errorf("second run: say %+v, errors by class %v; want 6 of 6 grpc_not_found", l, sum.Errors.ByClass)
	}
	if srv.Say(codes.OK) != 6 || srv.Say(codes.NotFound) != 6 || srv.CountCalls.Load() != 12 || srv.Sent.Load() != 60 {
		t.Errorf("server: Say %d OK, %d NOT_FOUND; %d streams, %d messages; want 6, 6, 12, 60",
			srv.Say(codes.OK), srv.Say(codes.NotFound), srv.CountCalls.Load(), srv.Sent.Load())
	}
	if srv.Metadata("authorization") != "Bearer demo-token-123" {
		t.Errorf("server saw authorization %q", srv.Metadata("authorization"))
	}
	if code, _, errOut := runCLI(t, "report", outs[1], "--format", "md"); code != 0 && code != 1 { // 1: its SLA failed
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	md, err := os.ReadFile(filepath.Join(outs[1], "report.md"))
	if err != nil || !strings.Contains(string(md), "count first message") || !strings.Contains(string(md), "grpc_not_found") {
		t.Errorf("report.md lacks the gRPC labels or class (%v)", err)
	}
	if strings.Contains(string(md), "demo-token-123") {
		t.Error("report.md holds the token")
	}
	cmpDir := filepath.Join(dir, "cmp")
	if code, _, errOut := runCLI(t, "compare", outs[0], outs[1], "-o", cmpDir); code != 0 && code != 1 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	cmd, err := os.ReadFile(filepath.Join(cmpDir, "compare.md"))
	if err != nil || !strings.Contains(string(cmd), "say") || !strings.Contains(string(cmd), "count") {
		t.Errorf("compare.md lacks the gRPC labels (%v)", err)
	}
	// Both runs' reports (one with failing calls) read true, sentence by sentence.
	for _, o := range outs {
		checkRunProse(t, o)
	}
}

// onlyTimingBroken reports whether the run in out failed only on response
// time requirements: the example's p95 < 1s over 6 calls can break when a
// loaded machine stalls the process for a second, which says nothing about
// the gRPC step; its error rate and the counts below are still checked.
func onlyTimingBroken(t *testing.T, out string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		return false
	}
	var sum struct {
		SLA []struct {
			Expr   string `json:"expr"`
			Passed bool   `json:"passed"`
		} `json:"sla"`
	}
	if json.Unmarshal(b, &sum) != nil || len(sum.SLA) == 0 {
		return false
	}
	broken := 0
	for _, r := range sum.SLA {
		if r.Passed {
			continue
		}
		if !strings.Contains(r.Expr, "(response_time") {
			return false
		}
		broken++
		t.Logf("timing requirement broken on this machine: %s", r.Expr)
	}
	return broken > 0
}
