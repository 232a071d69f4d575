package cli

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/plateau-perf/plateau/internal/demo/sut"
)

// demoFront starts the demo service (external, back, front) in this
// process on loopback and returns the front's URL.
func demoFront(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() { cancel(); wg.Wait() })
	run := func(serve func(context.Context, net.Listener) error) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = serve(ctx, ln) })
		return "http://" + ln.Addr().String()
	}
	ext, err := sut.NewExternal(sut.ExternalConfig{})
	if err != nil {
		t.Fatal(err)
	}
	extURL := run(ext.Serve)
	back, err := sut.NewBack(ctx, sut.BackConfig{DBPath: filepath.Join(dir, "cave.db"), Seed: sut.DefaultSeed,
		Patients: 200, AccessLog: filepath.Join(dir, "back.log")})
	if err != nil {
		t.Fatal(err)
	}
	backURL := run(back.Serve)
	front, err := sut.NewFront(sut.FrontConfig{Secret: "example", BackURLs: []string{backURL}, ExternalURL: extURL,
		AccessLog: filepath.Join(dir, "front.log"), ExternalLog: filepath.Join(dir, "front-external.log")})
	if err != nil {
		t.Fatal(err)
	}
	return run(front.Serve)
}

// The examples/plan-constructs plan, which uses every plan construct the
// demo service can answer, checks and runs against the demo stack, with
// every request and check passing and every construct leaving its trace.
func TestPlanConstructsExample(t *testing.T) {
	t.Parallel()
	url := demoFront(t)
	plan := "../../examples/plan-constructs/plan.yaml"
	if code, _, errOut := runCLI(t, "check", plan); code != 0 {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	out := filepath.Join(t.TempDir(), "run")
	code, _, errOut := runCLI(t, "run", plan, "--set", "target="+url, "-o", out, "-q", "--trace", "3")
	if code != 0 {
		sum, _ := os.ReadFile(filepath.Join(out, "summary.json"))
		tr, _ := os.ReadFile(filepath.Join(out, "trace.txt"))
		t.Fatalf("run: exit %d: %s\n%s\n%s", code, errOut, sum, tr)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Labels []struct {
			Label  string `json:"label"`
			Count  int64  `json:"samples"`
			Errors int64  `json:"errors"`
		} `json:"labels"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int64{}
	for _, l := range sum.Labels {
		counts[l.Label] = l.Count
		if l.Errors != 0 {
			t.Errorf("label %q: %d errors", l.Label, l.Errors)
		}
	}
	for _, l := range []string{"list allergies", "patient view", "first read", "service healthy", "health poll",
		"health in loop", "unknown patient"} {
		if counts[l] == 0 {
			t.Errorf("label %q never ran (labels: %v)", l, counts)
		}
	}
	if counts["list allergies"] != 3 || counts["health in loop"] != 2 {
		t.Errorf("one user, 3 iterations: list allergies %d (want 3), while loop %d (want 2)", counts["list allergies"], counts["health in loop"])
	}
	tr, err := os.ReadFile(filepath.Join(out, "trace.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[run login]", "[user login]", "extract active = ", "--- read 1-1: if ", "X-Request-Id: read-1",
		"Authorization: ***", "--- read 1-1: reread", "cpr="} {
		if !strings.Contains(string(tr), want) && !(want == "--- read 1-1: reread" && strings.Contains(string(tr), "--- read 1-1: health")) {
			t.Errorf("trace lacks %q", want)
		}
	}
	checkRunProse(t, out)
}
