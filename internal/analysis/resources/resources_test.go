package resources

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"testing/quick"
	"time"

	"github.com/plateau-perf/plateau/internal/core"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

func TestSummarizePhasesAndGaps(t *testing.T) {
	t.Parallel()
	cpu := core.Series{Target: "back", Kind: "process", Metric: "cpu_pct", Unit: "%"}
	for s, v := range []float64{10, 20, 30, math.NaN(), 50, 60} {
		cpu.Points = append(cpu.Points, core.Point{T: at(s), V: v})
	}
	rss := core.Series{Target: "back", Kind: "process", Metric: "rss_bytes", Unit: "bytes",
		Points: []core.Point{{T: at(4), V: 200}, {T: at(0), V: 100}}} // unsorted on purpose
	load := core.Series{Target: "gen", Kind: "host", Metric: "load1", Points: []core.Point{{T: at(1), V: 0.5}}}
	phases := []core.Phase{
		{Name: "warm", Start: at(0), End: at(2)},
		{Name: "step 2", Start: at(2), End: at(10)},
		{Name: "empty", Start: at(100), End: at(200)},
	}
	got := Summarize([]core.Series{cpu, rss, load}, phases)
	if len(got) != 8 {
		t.Fatalf("%d entries, want 2 targets × (1 + 3)", len(got))
	}
	if got[0].Phase != nil || got[0].Target != "back" || got[4].Target != "gen" {
		t.Errorf("order: %+v", got)
	}
	whole := got[0].Metrics["cpu_pct"]
	if whole != (Stat{Min: 10, Mean: 34, Max: 60, First: 10, Last: 60}) {
		t.Errorf("whole-run cpu %+v (the NaN gap must be ignored)", whole)
	}
	if st, _ := Find(got, "back", "warm", "cpu_pct"); st != (Stat{Min: 10, Mean: 15, Max: 20, First: 10, Last: 20}) {
		t.Errorf("warm cpu %+v", st)
	}
	if st, _ := Find(got, "back", "step 2", "cpu_pct"); st != (Stat{Min: 30, Mean: 140.0 / 3, Max: 60, First: 30, Last: 60}) {
		t.Errorf("step 2 cpu %+v", st)
	}
	if st, _ := Find(got, "back", "", "rss_bytes"); st.First != 100 || st.Last != 200 {
		t.Errorf("rss first/last by time: %+v", st)
	}
	if e := got[3]; *e.Phase != "empty" || e.Metrics == nil || len(e.Metrics) != 0 {
		t.Errorf("empty phase entry %+v", e)
	}
	if _, ok := Find(got, "gen", "step 2", "load1"); ok {
		t.Error("load1 has no point in step 2")
	}
}

// TestJSONShape pins the summary.json shape the issue asks for.
func TestJSONShape(t *testing.T) {
	t.Parallel()
	series := []core.Series{{Target: "db", Kind: "postgres", Metric: "connections_total",
		Points: []core.Point{{T: at(0), V: 4}, {T: at(1), V: 6}}}}
	b, err := json.Marshal(Summarize(series, []core.Phase{{Name: "p1", Start: at(1), End: at(2)}}))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"target":"db","kind":"postgres","phase":null,"metrics":{"connections_total":{"min":4,"mean":5,"max":6,"first":4,"last":6}}},` +
		`{"target":"db","kind":"postgres","phase":"p1","metrics":{"connections_total":{"min":6,"mean":6,"max":6,"first":6,"last":6}}}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

// TestStatProperty: for any finite values, min ≤ mean ≤ max, first and
// last are the values at the earliest and latest times, and the whole-run
// statistics never depend on the order of the points.
func TestStatProperty(t *testing.T) {
	t.Parallel()
	f := func(vals []float64, seed uint64) bool {
		var pts []core.Point
		for i, v := range vals {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			// quick draws from the whole float64 range; fold into the
			// magnitudes monitors produce so sums stay finite.
			pts = append(pts, core.Point{T: at(i), V: math.Mod(v, 1e12)})
		}
		st, ok := summarize(pts, nil)
		if len(pts) == 0 {
			return !ok
		}
		if !(st.Min <= st.Mean && st.Mean <= st.Max) || st.First != pts[0].V || st.Last != pts[len(pts)-1].V {
			return false
		}
		r := rand.New(rand.NewPCG(seed, 1))
		r.Shuffle(len(pts), func(i, j int) { pts[i], pts[j] = pts[j], pts[i] })
		st2, _ := summarize(pts, nil)
		return st2.Min == st.Min && st2.Max == st.Max && st2.First == st.First && st2.Last == st.Last &&
			math.Abs(st2.Mean-st.Mean) <= 1e-9*math.Max(1, math.Abs(st.Mean))
	}
	if err := quick.Check(f, nil); err != nil {
		t.Error(err)
	}
}
