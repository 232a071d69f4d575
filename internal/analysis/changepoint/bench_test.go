package changepoint

import (
	"math/rand/v2"
	"testing"
)

// historySeries is a store's worth of series: 100 series of 1,000 runs.
// Like a real history most series are flat, some have a regression, some
// a regression fixed later: 60 flat, 30 with one step, 10 with two.
func historySeries() [][]float64 {
	out := make([][]float64, 100)
	for i := range out {
		seed := uint64(i)
		switch {
		case i < 60:
			out[i] = planted(seed, level{1000, 100, 5})
		case i < 90:
			out[i] = planted(seed, level{400 + 5*i, 100, 5}, level{600 - 5*i, 108, 5})
		default:
			out[i] = planted(seed, level{300, 100, 5}, level{200, 115, 5}, level{500, 100, 5})
		}
	}
	return out
}

// BenchmarkHistory is issue 35's budget: change points over 1,000 runs ×
// 100 series in at most 1 s (one op = all 100 series, one goroutine).
func BenchmarkHistory(b *testing.B) {
	series := historySeries()
	b.ReportAllocs()
	found := 0
	for b.Loop() {
		found = 0
		for i, s := range series {
			res, err := Detect(s, Options{}, rand.New(rand.NewPCG(uint64(i), 0)))
			if err != nil {
				b.Fatal(err)
			}
			found += len(res.Points)
		}
	}
	b.ReportMetric(float64(found), "changepoints")
}

// BenchmarkOneSeries is one series of 1,000 runs with one step.
func BenchmarkOneSeries(b *testing.B) {
	s := planted(1, level{500, 100, 5}, level{500, 108, 5})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Detect(s, Options{}, rand.New(rand.NewPCG(1, 0))); err != nil {
			b.Fatal(err)
		}
	}
}
