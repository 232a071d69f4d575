package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/engine/proto/ws/wstest"
)

// The examples/websocket-chat plan against the WebSocket test server on
// loopback: summary.json's websocket labels agree with the server's own
// counters, and report and compare take them like any other label.
func TestWebSocketChatExample(t *testing.T) {
	t.Parallel()
	srv := wstest.NewChat(t, nil, 0)
	plan := "../../examples/websocket-chat/plan.yaml"
	dir := t.TempDir()
	var outs []string
	for i := range 2 {
		out := filepath.Join(dir, "run"+string(rune('1'+i)))
		code, _, errOut := runCLI(t, "run", plan, "--set", "target="+srv.URL,
			"--set", "workloads.chat.load={users: 2, iterations: 2}",
			// The example's p95 bound is for a machine of its own; the
			// server's counters are this test's subject.
			"--set", "sla=[error_rate < 1%]", "-o", out, "-q")
		if code != 0 {
			t.Fatalf("run: exit %d: %s", code, errOut)
		}
		outs = append(outs, out)
	}
	b, err := os.ReadFile(filepath.Join(outs[0], "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Labels []struct {
			Label  string `json:"label"`
			Count  int64  `json:"samples"`
			Errors int64  `json:"errors"`
			Tx     bool   `json:"transaction"`
		} `json:"labels"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, l := range sum.Labels {
		got[l.Label] = l.Count
		if l.Errors != 0 {
			t.Errorf("%s: %d errors", l.Label, l.Errors)
		}
	}
	// Two runs of 2 users × 2 iterations: each session received a welcome
	// and sent 10 says and a blob, all echoed.
	want := map[string]int64{"chat connect": 4, "welcome": 4, "say": 40, "blob": 4, "blob echo": 4, "chat": 4}
	for label, n := range want {
		if got[label] != n {
			t.Errorf("summary.json %s: %d samples, want %d (labels %v)", label, got[label], n, got)
		}
	}
	if srv.Conns.Load() != 8 || srv.Recv.Load() != 2*44 || srv.Binary.Load() != 8 || srv.BadToken.Load() != 0 {
		t.Errorf("server: %d connections, %d messages received (%d binary), %d without the token; want 8, 88 (8), 0",
			srv.Conns.Load(), srv.Recv.Load(), srv.Binary.Load(), srv.BadToken.Load())
	}
	if code, _, errOut := runCLI(t, "report", outs[0], "--format", "md"); code != 0 {
		t.Fatalf("report: exit %d: %s", code, errOut)
	}
	md, err := os.ReadFile(filepath.Join(outs[0], "report.md"))
	if err != nil || !strings.Contains(string(md), "chat connect") || !strings.Contains(string(md), "blob echo") {
		t.Errorf("report.md lacks the websocket labels (%v)", err)
	}
	// --trace shows the handshake, each message each way and the
	// extraction from the welcome, with the token (a secret by its name)
	// masked everywhere.
	tr := filepath.Join(dir, "trace")
	if code, _, errOut := runCLI(t, "run", plan, "--set", "target="+srv.URL, "-o", tr, "-q", "--trace", "1"); code != 0 {
		t.Fatalf("run --trace: exit %d: %s", code, errOut)
	}
	trace, err := os.ReadFile(filepath.Join(tr, "trace.txt"))
	for _, want := range []string{"> WS connect ws://", "< 101", "[welcome]", `extract token = "***"`,
		"> WS send   [say]", `"type":"say"`, "< message after", "> WS send   [blob]", "[blob echo]"} {
		if err != nil || !strings.Contains(string(trace), want) {
			t.Errorf("trace.txt lacks %q (%v)", want, err)
		}
	}
	if strings.Contains(string(trace), "abc123") {
		t.Error("trace.txt shows the token")
	}
	cmpDir := filepath.Join(dir, "cmp")
	if code, _, errOut := runCLI(t, "compare", outs[0], outs[1], "-o", cmpDir); code != 0 {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	cmd, err := os.ReadFile(filepath.Join(cmpDir, "compare.md"))
	if err != nil || !strings.Contains(string(cmd), "say") || !strings.Contains(string(cmd), "chat connect") {
		t.Errorf("compare.md lacks the websocket labels (%v)", err)
	}
	for _, o := range outs {
		checkRunProse(t, o)
	}
}
