package output_test

import (
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/output"
	"github.com/plateau-perf/plateau/internal/output/live"
	"github.com/plateau-perf/plateau/internal/output/prom"
	"github.com/plateau-perf/plateau/internal/output/remotewrite"
)

// BenchmarkSecondAt5000 is the generator's cost of the live outputs per
// second of a run at 5,000 req/s over 4 labels: building the snapshot from
// the engine's interval, the /metrics exporter applying it plus one scrape,
// the live view updating its tables, SLA status and charts, and remote write encoding and posting it (to a loopback receiver that
// discards). One op = one second of the run, so ns/op ÷ 1e9 is the share of
// one core the outputs take.
func BenchmarkSecondAt5000(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	rec := metrics.NewRecorder(8, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	labels := []string{"home", "search", "item", "checkout"}
	fill := func() *metrics.Interval {
		for i := range 5000 {
			s := core.Sample{Elapsed: time.Duration(200+rng.ExpFloat64()*3000) * time.Microsecond}
			if i%50 == 0 {
				s.Class, s.Status = core.ErrHTTP5xx, 503
			}
			rec.Record(i, metrics.Key{Workload: "shop", Phase: 0, Label: labels[i%4]}, &s)
		}
		return rec.Rotate(nil)
	}
	exp := prom.New("")
	view := live.New(live.Options{Name: "bench", SLA: []string{"p95(response_time) < 500ms"}})
	rw := remotewrite.New(srv.URL, "")
	scrape := exp.Handler()
	users := map[string]int{"shop": 50}
	ivs := make([]*metrics.Interval, 8)
	for i := range ivs {
		ivs[i] = fill()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		s := output.Build(time.Unix(int64(i), 0), ivs[i%len(ivs)], users, nil)
		if err := exp.Add(s); err != nil {
			b.Fatal(err)
		}
		if err := view.Add(s); err != nil {
			b.Fatal(err)
		}
		if err := rw.Add(s); err != nil {
			b.Fatal(err)
		}
		w := httptest.NewRecorder()
		scrape.ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	}
}
