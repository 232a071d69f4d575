package locust

import (
	"context"
	"fmt"
	"github.com/plateau-perf/plateau/internal/importer/importertest"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/importer"
)

// locustBinary finds locust: $LOCUST, then PATH, then /tmp/locust-venv
// (`python3 -m venv /tmp/locust-venv && /tmp/locust-venv/bin/pip install
// locust==2.47.0`).
func locustBinary() string {
	if p := os.Getenv("LOCUST"); p != "" {
		return p
	}
	if p, err := exec.LookPath("locust"); err == nil {
		return p
	}
	if _, err := os.Stat("/tmp/locust-venv/bin/locust"); err == nil {
		return "/tmp/locust-venv/bin/locust"
	}
	return ""
}

// testServer answers the fixture locustfile's requests.
func testServer() *httptest.Server {
	var n atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/cart", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(3 * time.Millisecond)
		fmt.Fprint(w, "cart ok")
	})
	mux.HandleFunc("/pay", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(w, "paid ok")
	})
	mux.HandleFunc("/flaky", func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1)%5 == 0 {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		fmt.Fprint(w, "ok")
	})
	mux.HandleFunc("/items/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		fmt.Fprint(w, "item")
	})
	return httptest.NewServer(mux)
}

// TestRealLocust runs Locust headless for a few seconds against a loopback
// server and checks the import of its --csv files against its stats CSV,
// as the committed fixture is checked. It skips when Locust is missing.
func TestRealLocust(t *testing.T) {
	bin := locustBinary()
	if bin == "" {
		importertest.MissingTool(t, "locust not installed (set $LOCUST, or: internal/importer/testdata/install-deps.sh locust)")
	}
	t.Parallel()
	srv := testServer()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	file, err := filepath.Abs("testdata/locustfile.py")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	for _, full := range []bool{true, false} {
		t.Run(fmt.Sprintf("full-history-%v", full), func(t *testing.T) {
			t.Parallel()
			prefix := filepath.Join(dir, fmt.Sprintf("full-%v", full))
			args := []string{"-f", file, "--headless", "-H", srv.URL, "--csv", prefix, "--only-summary", "--loglevel", "WARNING"}
			if full {
				args = append(args, "--csv-full-history")
			}
			cmd := exec.CommandContext(ctx, bin, args...)
			cmd.Env = append(os.Environ(), "STEP_SECONDS=2")
			cmd.Dir = dir
			// Locust exits 1 when requests failed, which the locustfile makes sure of.
			if b, err := cmd.CombinedOutput(); err != nil && cmd.ProcessState.ExitCode() != 1 {
				t.Fatalf("locust: %v\n%s", err, b)
			}
			d, err := importSet(t, Config{Path: prefix}, importer.Options{DerivePhases: true, MinPhase: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstStats(t, d, prefix+"_stats.csv", 1)
			checkHistorySeconds(t, d, prefix+"_stats_history.csv", full)
		})
	}
}
