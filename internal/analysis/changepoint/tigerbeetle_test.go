package changepoint

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
)

func tigerBeetle(t *testing.T) []float64 {
	t.Helper()
	b, err := os.ReadFile("testdata/tigerbeetle/series.json")
	if err != nil {
		t.Fatal(err)
	}
	var s []float64
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("testdata/tigerbeetle/series.json: %v", err)
	}
	if len(s) != 365 {
		t.Fatalf("testdata/tigerbeetle/series.json: %d runs, want 365", len(s))
	}
	return s
}

// TestTigerBeetle runs a real benchmark history (testdata/tigerbeetle,
// from Apache Otava's tests). With a 5 % minimum effect plateau gives what
// Otava's tests expect of Otava's default detector at 5 %: 15 and 71. With
// no minimum effect, every change point is one of the features the
// dataset's authors marked (within one run) or a shift under 3 % they did
// not mark (148, the end of the six-run rise marked at 142, −2.7 %; 260,
// +1.0 % over the last 105 runs); the lone anomalous run 10 is not a
// change point.
func TestTigerBeetle(t *testing.T) {
	t.Parallel()
	s := tigerBeetle(t)
	res, err := Detect(s, Options{MinChangePct: 5}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if got := indices(res); !slices.Equal(got, []int{15, 71}) {
		t.Errorf("min change 5 %%: change points %v, Otava's tests expect [15 71]", got)
	}
	marked := []int{10, 15, 60, 71, 95, 131, 142, 192, 212}
	res, err = Detect(s, Options{}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := indices(res)
	for _, p := range res.Points {
		g := p.Index
		if !slices.ContainsFunc(marked, func(m int) bool { return g >= m-1 && g <= m+1 }) && p.MagnitudePct >= 3 {
			t.Errorf("change point %d (%.1f %%) is none of the marked features %v", g, p.ChangePct, marked)
		}
		if g >= 9 && g <= 12 {
			t.Errorf("the lone anomalous run 10 made a change point at %d", g)
		}
	}
	if len(got) < 5 {
		t.Errorf("change points %v: fewer than the 5 large features (15, 71, 95, 131, 192)", got)
	}
	t.Logf("change points %v", got)
}

// TestTigerBeetleAgainstOtava: every change point Otava's E-Divisive finds
// on the TigerBeetle history at alpha 0.01, plateau finds too (within one
// run).
func TestTigerBeetleAgainstOtava(t *testing.T) {
	t.Parallel()
	s := tigerBeetle(t)
	ans := runOtava(t, [][]float64{s}, DefaultAlpha)
	ref := ans.EDivisive[0]
	res, err := Detect(s, Options{}, rand.New(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	got := indices(res)
	for _, r := range ref {
		if !slices.ContainsFunc(got, func(g int) bool { return g >= r-1 && g <= r+1 }) {
			t.Errorf("Otava %s finds %d, plateau's change points %v do not", ans.Version, r, got)
		}
	}
	if len(ref) < 3 {
		t.Errorf("Otava found only %v", ref)
	}
	t.Logf("Otava %s: %v; plateau: %v", ans.Version, ref, got)
}
