package chart

import (
	"math"
	"math/rand/v2"
	"testing"
)

// denseCounts is the slow version ReduceCounts replaces, kept as its oracle:
// one zero-filled value per second of the span, then Reduce.
func denseCounts(x, y []float64, from, to, w float64) Reduced {
	secs := int(math.Ceil(to - from))
	tx, ty := make([]float64, 0, secs), make([]float64, 0, secs)
	j := 0
	for s := 0; s < secs; s++ {
		sec := math.Floor(from) + float64(s)
		v := 0.0
		for j < len(x) && x[j] < sec {
			j++
		}
		for j < len(x) && x[j] == sec {
			v += y[j]
			j++
		}
		tx, ty = append(tx, sec), append(ty, v)
	}
	return Reduce(tx, ty, nil, from, to, w)
}

func sameFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.IsNaN(a[i]) != math.IsNaN(b[i]) || (!math.IsNaN(a[i]) && math.Abs(a[i]-b[i]) > 1e-9*math.Max(1, math.Abs(a[i]))) {
			return false
		}
	}
	return true
}

func TestReduceCountsMatchesDense(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 31))
	for trial := range 2000 {
		from := 1.7e9 + float64(rng.IntN(50))
		if trial%3 == 0 {
			from += rng.Float64() // a run starting mid-second
		}
		to := from + float64(1+rng.IntN(3000)) + rng.Float64()*float64(trial%2)
		w := BucketWidth(to-from, 1, 1+rng.IntN(400))
		var x, y []float64
		for s := math.Floor(from) - 3; s < to+3; s++ {
			if rng.IntN(4) == 0 {
				for range 1 + rng.IntN(2) { // equal seconds are summed
					x, y = append(x, s), append(y, float64(rng.IntN(100)))
				}
			}
		}
		got, want := ReduceCounts(x, y, from, to, w), denseCounts(x, y, from, to, w)
		if got.Reduced != want.Reduced || got.Bucket != want.Bucket || !sameFloats(got.X, want.X) ||
			!sameFloats(got.Mean, want.Mean) || !sameFloats(got.Lo, want.Lo) || !sameFloats(got.Hi, want.Hi) {
			t.Fatalf("trial %d from %v to %v w %v:\n got %+v\nwant %+v", trial, from, to, w, got, want)
		}
	}
}

// A span of 130 years with two points builds at most maxBuckets buckets:
// the dense version would need 4·10⁹ seconds.
func TestReduceCountsBoundedBySpanNotSeconds(t *testing.T) {
	t.Parallel()
	from, to := 0.0, 4102444800.0 // 1970 to 2100
	w := BucketWidth(to-from, 1, 400)
	r := ReduceCounts([]float64{0, 1.7e9}, []float64{1, 800}, from, to, w)
	if len(r.X) > 400 || len(r.Mean) != len(r.X) {
		t.Fatalf("%d buckets for a 130-year span, want ≤ 400", len(r.X))
	}
	var total float64
	for _, m := range r.Mean {
		total += m * w
	}
	if math.Abs(total-801) > 1e-6*801 {
		t.Fatalf("the buckets hold %v requests, want 801", total)
	}
}
