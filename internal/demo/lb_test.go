package demo

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// The balancer exposes its worker pools: with 2 workers and 3 requests held
// by a slow backend, 2 are served and 1 waits, in a text the Prometheus
// parser reads.
func TestBalancerMetrics(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	back := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
	}))
	defer back.Close()
	b, err := NewBalancer([]string{"lar-1=" + back.URL}, 2) // named: the pool is labelled by its front
	if err != nil {
		t.Fatal(err)
	}
	lb := httptest.NewServer(b)
	defer lb.Close()
	var done sync.WaitGroup
	for range 3 {
		done.Go(func() {
			if resp, err := http.Get(lb.URL + "/x"); err == nil {
				resp.Body.Close()
			}
		})
	}
	arrived.Wait()
	host := "lar-1"
	want := map[string]float64{"lb_connections": 2, "lb_max_connections": 2, "lb_queued": 1}
	var got map[string]float64
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(lb.URL + MetricsPath)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		parser := expfmt.NewTextParser(model.UTF8Validation)
		fams, err := parser.TextToMetricFamilies(strings.NewReader(string(body)))
		if err != nil {
			t.Fatalf("not the Prometheus text format: %v\n%s", err, body)
		}
		got = map[string]float64{}
		for name, f := range fams {
			for _, m := range f.GetMetric() {
				if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != host {
					t.Fatalf("%s labels %v, want backend=%s", name, m.GetLabel(), host)
				}
				got[name] = m.GetGauge().GetValue()
			}
		}
		if got["lb_queued"] == 1 {
			break
		}
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	close(release)
	done.Wait()
}
