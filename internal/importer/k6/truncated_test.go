package k6

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

// A gzip stream cut short (k6 killed before it closed out.json.gz) is an
// error naming the file and the cut, with the requests read before it —
// counted as the complete http_req_duration lines gzip itself gives back
// from the cut file — never a run of that part passed off as the whole.
// Every chunk size, so the cut falls inside and at the end of chunks.
func TestTruncatedGzipIsAnError(t *testing.T) {
	t.Parallel()
	whole, err := os.ReadFile(filepath.Join(fixtures, "out.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for _, frac := range []float64{0.1, 0.5, 0.9, 0.999} {
		for _, chunk := range []int{0, 4096} {
			t.Run(fmt.Sprintf("%.3f-chunk%d", frac, chunk), func(t *testing.T) {
				t.Parallel()
				cut := whole[:int(float64(len(whole))*frac)]
				p := filepath.Join(t.TempDir(), "out.json.gz")
				if err := os.WriteFile(p, cut, 0o644); err != nil {
					t.Fatal(err)
				}
				// The oracle: what gzip gives back before its error.
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
					if strings.HasSuffix(l, "\n") && strings.Contains(l, `"type":"Point"`) && strings.Contains(l, `"metric":"http_req_duration"`) {
						want++
					}
				}
				_, err = importStream(t, Config{Path: p, ChunkSize: chunk}, importer.Options{})
				if err == nil {
					t.Fatal("a truncated gzip stream imported without an error")
				}
				msg := err.Error()
				for _, w := range []string{p, "gzip stream is truncated", fmt.Sprintf(" lines, %d requests (", want), "gzip -dc"} {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q lacks %q", msg, w)
					}
				}
			})
		}
	}
}
