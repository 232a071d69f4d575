package monitortest

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// ExporterValue reads one series' value straight from an exporter's
// /metrics at addr (host:port), as the reference a test checks plateau's
// readings against. series is the exposition's series text up to the
// value: a name, or a name with its labels as the exporter writes them.
func ExporterValue(t testing.TB, addr, series string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("%s not exposed by %s", series, addr)
	return 0
}
