//go:build linux

package cli

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// netnsLab is a bridge in the root namespace with one network namespace per
// generator, each attached by a veth pair with its own address — generator
// hosts on one machine. Names carry the test's pid so parallel runs do not
// collide; everything is deleted in Cleanup.
type netnsLab struct {
	bridge  string
	subnet  string // "10.a.b"
	nss     []string
	hostIPs []string
}

func ipCmd(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func newNetnsLab(t *testing.T, n int) *netnsLab {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("no ip command (iproute2)")
	}
	pid := os.Getpid() % 10000
	lab := &netnsLab{bridge: fmt.Sprintf("plbr%d", pid), subnet: fmt.Sprintf("10.%d.%d", 200+pid%50, pid/50%250)}
	if err := ipCmd("link", "add", lab.bridge, "type", "bridge"); err != nil {
		t.Skipf("cannot create a bridge here: %v", err)
	}
	t.Cleanup(func() {
		for _, ns := range lab.nss {
			_ = ipCmd("netns", "del", ns)
		}
		_ = ipCmd("link", "del", lab.bridge)
	})
	steps := [][]string{
		{"addr", "add", lab.subnet + ".1/24", "dev", lab.bridge},
		{"link", "set", lab.bridge, "up"},
	}
	for i := 0; i < n; i++ {
		ns := fmt.Sprintf("plgen%d-%d", pid, i)
		host, peer := fmt.Sprintf("plvh%d-%d", pid, i), fmt.Sprintf("plvp%d-%d", pid, i)
		ip := fmt.Sprintf("%s.%d", lab.subnet, 11+i)
		if err := ipCmd("netns", "add", ns); err != nil {
			t.Fatal(err)
		}
		lab.nss = append(lab.nss, ns)
		lab.hostIPs = append(lab.hostIPs, ip)
		steps = append(steps,
			[]string{"link", "add", host, "type", "veth", "peer", "name", peer},
			[]string{"link", "set", peer, "netns", ns},
			[]string{"link", "set", host, "master", lab.bridge, "up"},
			[]string{"-n", ns, "addr", "add", ip + "/24", "dev", peer},
			[]string{"-n", ns, "link", "set", peer, "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if err := ipCmd(s...); err != nil {
			t.Fatal(err)
		}
	}
	return lab
}

// Generators as separate hosts: each in its own network namespace with its
// own address, one target in the root namespace. The target sees from each
// source exactly its share of the iterations (global iteration k runs on
// segment k mod N) and no feeder row twice; the merge holds them all.
func TestGeneratorsInNetns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs generator processes")
	}
	const n, rate, secs = 4, 31, 3
	lab := newNetnsLab(t, n)
	srv := startRowServer(t, lab.subnet+".1:0")
	plan := openPlan(t, srv.URL, rate, secs)
	exe, _ := os.Executable()
	start := startInstant(1500 * time.Millisecond)
	base := t.TempDir()
	var dirs []string
	var cmds []*exec.Cmd
	for i, ns := range lab.nss {
		d := filepath.Join(base, fmt.Sprintf("segment-%d", i))
		dirs = append(dirs, d)
		c := exec.Command("ip", "netns", "exec", ns, exe, "run", plan, "--segment", fmt.Sprintf("%d/%d", i, n),
			"--start-at", start.Format(time.RFC3339Nano), "-o", d, "-q")
		c.Env = append(os.Environ(), "PLATEAU_TEST_MAIN=1")
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, c)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			b, _ := os.ReadFile(filepath.Join(dirs[i], "run.json"))
			t.Fatalf("generator %d: %v\n%s", i, err, b)
		}
	}
	srv.mu.Lock()
	for i, ip := range lab.hostIPs {
		share := (rate*secs - i + n - 1) / n
		if got := srv.bySrc[ip]; got != share {
			t.Errorf("source %s (segment %d/%d) sent %d requests, want %d", ip, i, n, got, share)
		}
	}
	if len(srv.bySrc) != n {
		t.Errorf("sources %v, want the %d namespaces' addresses", srv.bySrc, n)
	}
	for r, c := range srv.rows {
		if c != 1 {
			t.Errorf("row %s used %d times", r, c)
		}
	}
	if len(srv.rows) != rate*secs {
		t.Errorf("%d distinct rows, want %d", len(srv.rows), rate*secs)
	}
	srv.mu.Unlock()

	out := filepath.Join(base, "merged")
	code, stdout, stderr := runCLI(t, append([]string{"merge", "-o", out, "--format", "json"}, dirs...)...)
	if code != ExitOK {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	counts := perSecond(t, out)
	slack := lateSlack(t, out, rate)
	for s := start.Unix(); s < start.Unix()+secs; s++ {
		if c, tol := counts[s], 1+slack(s); c < rate-tol || c > rate+tol {
			t.Errorf("second %d: %d requests, want %d ± %d", s-start.Unix(), c, rate, tol)
		}
	}
	sum := readSummary(t, out)
	if got := sum.Labels[len(sum.Labels)-1].Samples; got != rate*secs {
		t.Errorf("merged %d samples, want %d", got, rate*secs)
	}
	info := readRunInfo(t, out)
	for i, s := range info.Segments {
		if s.Segment != strconv.Itoa(i)+"/"+strconv.Itoa(n) || s.Status != "completed" {
			t.Errorf("segment %+v", s)
		}
	}
}
