package live

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/plateau-perf/plateau/internal/metrics"
	"github.com/plateau-perf/plateau/internal/output"
	"github.com/plateau-perf/plateau/internal/rundir"
)

// TestLongRunStaysSmall: 700 seconds are drawn downsampled, so the
// state sent every second stays small; SLA status follows the data.
func TestLongRunStaysSmall(t *testing.T) {
	v := New(Options{Name: "soak", SLA: []string{"p95(response_time) < 5ms", "error_rate < 1%", "nonsense <"}})
	start := time.Unix(1_000_000, 0)
	ph := []rundir.PhaseInfo{{Name: "soak", Workload: "w", Start: start, Users: 10}}
	for i := range 700 {
		s := &output.Snapshot{Time: start.Add(time.Duration(i) * time.Second), Start: start, Phases: ph,
			Series: []output.Series{{Workload: "w", Phase: "soak", Label: "get", Count: 10, SumUs: 10 * 2000, MinUs: 2000, MaxUs: 2000,
				Hist: metrics.Sparse{Values: []int64{2000}, High: []int64{2000}, Counts: []int64{10}, Total: 10}}},
			Workloads: []output.Workload{{Name: "w", Users: 10}}}
		if err := v.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	v.mu.Lock()
	if !strings.Contains(string(v.state), `"waiting":true`) {
		t.Error("rendered with nobody watching")
	}
	v.mu.Unlock()
	v.current() // a page connects
	v.mu.Lock()
	b := v.state
	v.mu.Unlock()
	if len(b) > 400_000 {
		t.Errorf("state of a 700-second run is %d bytes", len(b))
	}
	var st State
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Total.Count != 7000 || st.Total.P95Ms != 2 {
		t.Errorf("total %+v", st.Total)
	}
	want := map[string]string{"p95(response_time) < 5ms": "holding", "error_rate < 1%": "holding", "nonsense <": "invalid"}
	for _, r := range st.SLA {
		if want[r.Expr] != r.Status {
			t.Errorf("%s: %s, want %s", r.Expr, r.Status, want[r.Expr])
		}
	}
	if len(st.Charts) != 3 || !strings.Contains(st.Charts[0], "<svg") {
		t.Errorf("charts missing")
	}
}
