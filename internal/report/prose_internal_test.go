package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/plateau-perf/plateau/internal/report/reporttest"
)

func TestSentence(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want string
	}{
		{[]string{"7 errors in 3,200 requests", "most frequent: HTTP 503", ""}, "7 errors in 3,200 requests; most frequent: HTTP 503."},
		{[]string{"", "  ", ";"}, ""},
		{[]string{"web in 1 KiB/s;", "", "db out 2 KiB/s, "}, "Web in 1 KiB/s; db out 2 KiB/s."},
		{[]string{"held.", ""}, "Held."},
		{[]string{"ends with a question?"}, "Ends with a question?"},
	} {
		if got := sentence(c.in...); got != c.want {
			t.Errorf("sentence(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := sentences("each point is one phase", "", "the vertical line marks the knee."); got != "Each point is one phase. The vertical line marks the knee." {
		t.Errorf("sentences = %q", got)
	}
}

func TestSignedMs(t *testing.T) {
	t.Parallel()
	for v, want := range map[float64]string{-0.2: "−0.20 ms", -0.001: "0 ms", 0: "0 ms", 12.4: "+12.4 ms", -150: "−150 ms"} {
		if got := signedMs(v); got != want {
			t.Errorf("signedMs(%v) = %q, want %q", v, got, want)
		}
	}
}

// TestCompletedLineDrawnOverErrors: when every request fails, the errors'
// area covers the same values as the completed line; the line is drawn
// last so it stays visible.
func TestCompletedLineDrawnOverErrors(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	if err := reporttest.Write(dir, reporttest.Options{AllErrors: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, Options{Formats: []string{"md"}}); err != nil {
		t.Fatal(err)
	}
	ms, _ := filepath.Glob(filepath.Join(dir, "charts", "*-throughput.svg"))
	if len(ms) != 1 {
		t.Fatalf("throughput charts: %v", ms)
	}
	b, err := os.ReadFile(ms[0])
	if err != nil {
		t.Fatal(err)
	}
	svg := string(b)
	// The data are polylines and paths; the legend (drawn last) uses
	// <line> and <rect> and is left out.
	at := func(col string) int {
		for i := len(svg); i > 0; {
			i = strings.LastIndex(svg[:i], col)
			if i < 0 {
				return -1
			}
			start := strings.LastIndex(svg[:i], "<")
			if strings.HasPrefix(svg[start:], "<polyline") || strings.HasPrefix(svg[start:], "<path") {
				return start
			}
			i = start
		}
		return -1
	}
	line, area := at(colTput), at(colErr)
	if line < 0 || area < 0 || line < area {
		t.Errorf("completed line at %d, errors area at %d: the line must come after the area", line, area)
	}
}
