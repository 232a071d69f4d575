// Package monitortest starts the real servers the monitor tests watch —
// Prometheus, its exporters, MariaDB — on loopback, as child processes of
// the test, removed when it ends. A program that is not installed skips the
// test, except under CI=true, where it fails it (scripts/install-test-deps.sh
// installs them).
package monitortest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Need returns the path of a program, skipping the test when it is missing
// (failing it under CI=true).
func Need(t testing.TB, name string) string {
	t.Helper()
	for _, n := range []string{name, "/usr/sbin/" + name, "/usr/bin/" + name} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed under CI; run scripts/install-test-deps.sh", name)
	}
	t.Skipf("%s is not installed; run scripts/install-test-deps.sh", name)
	return ""
}

// FreeAddr returns a free 127.0.0.1:port.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// lockedBuffer keeps a child's output for the failure message.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 1<<16 {
		l.b.Write(p)
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Process is a program Start runs until the test ends.
type Process struct {
	url, name string
	args      []string
	cmd       *exec.Cmd
	done      chan struct{}
	out       *lockedBuffer
}

// Start runs a program until the test ends and waits until url answers
// 200 (when url is not empty).
func Start(t testing.TB, url string, name string, args ...string) *Process {
	t.Helper()
	p := &Process{url: url, name: name, args: args}
	t.Cleanup(p.Stop)
	p.start(t)
	return p
}

// Stop kills the program and waits for it to end; a stopped program is
// left alone.
func (p *Process) Stop() {
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.done
	p.cmd = nil
}

// Restart stops the program and starts it again with the same arguments
// (so on the same address), waiting until it answers again.
func (p *Process) Restart(t testing.TB) {
	t.Helper()
	p.Stop()
	p.start(t)
}

func (p *Process) start(t testing.TB) {
	t.Helper()
	cmd := exec.Command(p.name, p.args...)
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done, p.out = cmd, done, out
	if p.url == "" {
		return
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("%s exited early:\n%s", filepath.Base(p.name), out.String())
		default:
		}
		resp, err := http.Get(p.url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s did not answer on %s:\n%s", filepath.Base(p.name), p.url, out.String())
}

// NodeExporter starts Debian's prometheus-node-exporter and returns its
// host:port.
func NodeExporter(t testing.TB) string {
	t.Helper()
	addr, _ := StartNodeExporter(t)
	return addr
}

// StartNodeExporter starts Debian's prometheus-node-exporter with extra
// flags added to plateau's usual ones, and returns its host:port and its
// process (to stop or restart it).
func StartNodeExporter(t testing.TB, extra ...string) (string, *Process) {
	t.Helper()
	bin := Need(t, "prometheus-node-exporter")
	addr := FreeAddr(t)
	// Collectors that fail or are slow in a VM without dbus.
	args := append([]string{"--web.listen-address=" + addr, "--log.level=error",
		"--no-collector.systemd", "--no-collector.hwmon", "--no-collector.rapl", "--no-collector.zfs",
		"--no-collector.nfs", "--no-collector.nfsd", "--no-collector.diskstats"}, extra...)
	return addr, Start(t, "http://"+addr+"/metrics", bin, args...)
}

// Prometheus starts Debian's prometheus scraping the given jobs (job name
// → host:port targets) every second, and returns its base URL. It waits
// until every target was scraped once.
func Prometheus(t testing.TB, jobs map[string][]string) string {
	t.Helper()
	bin := Need(t, "prometheus")
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
	for job, targets := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %q\n    static_configs:\n      - targets: [", job)
		for i, tg := range targets {
			if i > 0 {
				cfg.WriteString(", ")
			}
			fmt.Fprintf(&cfg, "%q", tg)
		}
		cfg.WriteString("]\n")
	}
	path := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(path, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := FreeAddr(t)
	base := "http://" + addr
	Start(t, base+"/-/ready", bin, "--config.file="+path, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	n := 0
	for _, ts := range jobs {
		n += len(ts)
	}
	// Wait until every target is up once.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		resp, err := http.Get(base + "/api/v1/query?query=count(up%3D%3D1)")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), fmt.Sprintf(`"%d"]`, n)) {
			return base
		}
	}
	t.Fatalf("prometheus on %s did not scrape its %d targets", base, n)
	return ""
}
