package cli

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/output/promtest"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestListenBadAddressLeavesNoRun: a malformed or busy --listen is refused
// before the run directory is created, so no run is left "running".
func TestListenBadAddressLeavesNoRun(t *testing.T) {
	planPath := outputsPlan(t, 2)
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, addr := range []string{"nonsense", "127.0.0.1:99999", busy.Addr().String()} {
		out := filepath.Join(t.TempDir(), "run")
		code, _, stderr := runCLI(t, "run", planPath, "-o", out, "-q", "--listen", addr)
		if code != 2 || !strings.Contains(stderr, "--listen") {
			t.Errorf("--listen %s: exit %d, stderr %q", addr, code, stderr)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			info, _ := rundir.ReadInfo(out)
			t.Errorf("--listen %s left a run directory (%v), run.json %+v", addr, err, info)
		}
	}
	if code, _, stderr := runCLI(t, "run", planPath, "-q", "--listen-token", "abcdefgh"); code != 2 || !strings.Contains(stderr, "needs --listen") {
		t.Errorf("--listen-token alone: exit %d, %q", code, stderr)
	}
}

// get sends GET url with an optional Host header and bearer token.
func get(t *testing.T, url, host, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitListening polls url until the listener answers (any status).
func waitListening(t *testing.T, url string, done <-chan runOutcome) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case o := <-done:
			t.Fatalf("run ended before its listener answered: %d %s", o.code, o.stderr)
		default:
		}
		if code, _ := get(t, url, "", ""); code != 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("listener never answered")
}

// TestListenEveryInterfaceWarnsAndChecksHost: --listen 0.0.0.0:PORT says on
// the console that it binds beyond loopback, and the listener refuses a
// request naming another host (a DNS-rebinding page) while serving the
// same request by address.
func TestListenEveryInterfaceWarnsAndChecksHost(t *testing.T) {
	addr := promtest.FreePort(t)
	_, port, _ := net.SplitHostPort(addr)
	planPath := outputsPlan(t, 3)
	out := filepath.Join(t.TempDir(), "run")
	done := runAsync("run", planPath, "-o", out, "-q", "--listen", "0.0.0.0:"+port)
	state := "http://127.0.0.1:" + port + "/state"
	waitListening(t, state, done)
	if code, body := get(t, state, "rebind.attacker.example:"+port, ""); code != http.StatusMisdirectedRequest {
		t.Errorf("GET /state as another host: %d %s", code, body)
	}
	if code, body := get(t, "http://127.0.0.1:"+port+"/metrics", "rebind.attacker.example:"+port, ""); code != http.StatusMisdirectedRequest {
		t.Errorf("GET /metrics as another host: %d %s", code, body)
	}
	if code, body := get(t, state, "", ""); code != 200 || !strings.Contains(body, `"name":"live"`) {
		t.Errorf("GET /state by address: %d %s", code, body)
	}
	o := <-done
	if !strings.Contains(o.stderr, "warning: --listen 0.0.0.0:"+port+" binds every interface, beyond loopback") {
		t.Errorf("no warning for binding every interface:\n%s", o.stderr)
	}
}

// TestListenToken: with --listen-token nothing is served without the
// token, Prometheus-style bearer requests are, and the token is masked in
// run.json's command line.
func TestListenToken(t *testing.T) {
	const tok = "live-view-token-0123456789"
	addr := promtest.FreePort(t)
	planPath := outputsPlan(t, 3)
	out := filepath.Join(t.TempDir(), "run")
	done := runAsync("run", planPath, "-o", out, "-q", "--listen", addr, "--listen-token", tok)
	base := "http://" + addr
	waitListening(t, base+"/state", done)
	for _, path := range []string{"/state", "/metrics", "/"} {
		if code, _ := get(t, base+path, "", ""); code != http.StatusUnauthorized {
			t.Errorf("GET %s without the token: %d, want 401", path, code)
		}
	}
	if code, body := get(t, base+"/state", "", tok); code != 200 || !strings.Contains(body, `"name":"live"`) {
		t.Errorf("GET /state with the token: %d %s", code, body)
	}
	if code, body := get(t, base+"/metrics", "", tok); code != 200 || !strings.Contains(body, "go_goroutines") {
		t.Errorf("GET /metrics with the token: %d", code)
	}
	o := <-done
	if o.code != ExitOK && o.code != ExitNotHeld { // a busy machine may drop an iteration
		t.Fatalf("run: %d %s", o.code, o.stderr)
	}
	if strings.Contains(o.stderr, "warning") {
		t.Errorf("loopback listener warned:\n%s", o.stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, rundir.InfoFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), tok) {
		t.Errorf("run.json holds the listener token:\n%s", b)
	}
}
