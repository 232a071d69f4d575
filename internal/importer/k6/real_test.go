package k6

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

// k6Binary finds k6: $K6, then PATH, then /tmp/k6bin/k6 (where
// `GOBIN=/tmp/k6bin go install go.k6.io/k6@v1.8.1` puts it).
func k6Binary() string {
	if p := os.Getenv("K6"); p != "" {
		return p
	}
	if p, err := exec.LookPath("k6"); err == nil {
		return p
	}
	if _, err := os.Stat("/tmp/k6bin/k6"); err == nil {
		return "/tmp/k6bin/k6"
	}
	return ""
}

// testServer answers the fixture script's requests.
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

// TestRealK6 runs k6 for a few seconds against a loopback server and checks
// the import of its stream against its own summary, as the committed
// fixture is checked. It skips when k6 is not installed.
func TestRealK6(t *testing.T) {
	bin := k6Binary()
	if bin == "" {
		importertest.MissingTool(t, "k6 not installed (set $K6, or: internal/importer/testdata/install-deps.sh k6)")
	}
	t.Parallel()
	srv := testServer()
	defer srv.Close()
	dir := t.TempDir()
	out, sum := filepath.Join(dir, "out.json.gz"), filepath.Join(dir, "summary.json")
	outCSV, outNano := filepath.Join(dir, "out.csv"), filepath.Join(dir, "nano.csv")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	script, err := filepath.Abs("testdata/script.js")
	if err != nil {
		t.Fatal(err)
	}
	// The same points written thrice: as the JSON stream, as CSV in k6's
	// default time format (whole seconds) and as CSV with nanoseconds (the
	// executor's).
	cmd := exec.CommandContext(ctx, bin, "run", "--quiet", "--no-usage-report", "--out", "json="+out,
		"--out", "csv="+outCSV, "--out", "csv=fileName="+outNano+",timeFormat=unix_nano", "--summary-export="+sum, script)
	cmd.Env = append(os.Environ(), "BASE="+srv.URL, "SECONDS=4", "K6_NO_COLOR=1")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("k6: %v\n%s", err, b)
	}
	d, err := importStream(t, Config{Path: out, Summary: sum}, importer.Options{DerivePhases: true, MinPhase: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadSummary(sum)
	if err != nil {
		t.Fatal(err)
	}
	lines := readLines(t, out)
	checkAgainstSummary(t, d, s, lines)
	// The CSV of the same run: k6's own figures, and every label's figures
	// equal to the JSON import's (rates within 1 %: the CSV's times are
	// whole seconds).
	c, err := importStream(t, Config{Path: outCSV, Summary: sum}, importer.Options{DerivePhases: true, MinPhase: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstSummary(t, c, s, lines)
	sameFigures(t, c, d, 0.01)
	// With nanosecond times the CSV holds all the stream does: the rates
	// are equal too.
	n, err := importStream(t, Config{Path: outNano, Summary: sum}, importer.Options{DerivePhases: true, MinPhase: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	checkAgainstSummary(t, n, s, lines)
	sameFigures(t, n, d, 0)
}
