package gatling

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/importer"
)

// A gzipped simulation.log cut short is an error naming the file and the
// requests read before the cut (counted as the complete REQUEST lines gzip
// gives back), as a k6 stream's is — not a run of the part before it.
func TestTruncatedGzipIsAnError(t *testing.T) {
	t.Parallel()
	whole, err := os.ReadFile("testdata/apicurio-3.5.1/simulation.log.gz")
	if err != nil {
		t.Fatal(err)
	}
	for _, frac := range []float64{0.3, 0.95} {
		cut := whole[:int(float64(len(whole))*frac)]
		p := filepath.Join(t.TempDir(), "simulation.log.gz")
		if err := os.WriteFile(p, cut, 0o644); err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(cut))
		if err != nil {
			t.Fatal(err)
		}
		plain, rerr := io.ReadAll(zr)
		if !errors.Is(rerr, io.ErrUnexpectedEOF) {
			t.Fatalf("gzip read the cut file with %v", rerr)
		}
		want := 0
		for _, l := range strings.SplitAfter(string(plain), "\n") {
			if strings.HasSuffix(l, "\n") && strings.HasPrefix(l, "REQUEST\t") {
				want++
			}
		}
		if want == 0 {
			t.Fatalf("%.2f: the cut holds no complete REQUEST line", frac)
		}
		_, err = importLog(t, Config{Path: p}, importer.Options{})
		if err == nil {
			t.Fatalf("%.2f: a truncated gzip log imported without an error", frac)
		}
		for _, w := range []string{p, "gzip stream is truncated", fmt.Sprintf("after %d requests (", want), "gzip -dc"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%.2f: error %q lacks %q", frac, err, w)
			}
		}
	}
}
